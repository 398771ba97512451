#include "core/json_io.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

namespace {

std::function<void(const std::string&)>& warning_sink() {
    static std::function<void(const std::string&)> sink = [](const std::string& m) {
        std::cerr << "warning: " << m << "\n";
    };
    return sink;
}

// Rejects deep nesting before the parser sees it: nlohmann's recursive destructor and our
// readers should never face 100,000 levels.
void check_depth(const std::string& text, const std::string& origin, int max_depth) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                throw InputError(fmt::format("{}: JSON nested deeper than {} levels (at byte {})", origin,
                                             max_depth, i));
        } else if (c == ']' || c == '}') --depth;
    }
}

// The key path ("gpu.peak_tflops.bf16", "layers[3]") of the value at byte `at`, for messages
// about JSON the parser rejected: a light scan of the text before it (strings, keys, nesting).
std::string key_path_at(const std::string& text, std::size_t at) {
    struct Level {
        bool object;
        std::string key;
        long index;
    };
    std::vector<Level> stack;
    std::string last_string;
    bool have_string = false;
    at = std::min(at, text.size());
    for (std::size_t i = 0; i < at; ++i) {
        const char c = text[i];
        if (c == '"') {
            std::string s;
            for (++i; i < at && text[i] != '"'; ++i) {
                if (text[i] == '\\' && i + 1 < at) ++i;
                s += text[i];
            }
            last_string = std::move(s), have_string = true;
            continue;
        }
        if (c == '{') stack.push_back({true, "", -1}), have_string = false;
        else if (c == '[') stack.push_back({false, "", 0}), have_string = false;
        else if ((c == '}' || c == ']') && !stack.empty()) stack.pop_back(), have_string = false;
        else if (c == ':' && !stack.empty() && stack.back().object && have_string) stack.back().key = last_string, have_string = false;
        else if (c == ',' && !stack.empty()) {
            if (stack.back().object) stack.back().key.clear();
            else ++stack.back().index;
            have_string = false;
        }
    }
    std::string path;
    for (const Level& l : stack) {
        if (l.object) {
            if (l.key.empty()) break;
            if (!path.empty()) path += '.';
            path += l.key;
        } else {
            path += '[';
            path += std::to_string(l.index);
            path += ']';
        }
    }
    return path;
}

// What the parser met at byte `at`, when it is a number JSON cannot hold.
std::string expectation_at(const std::string& text, std::size_t at, const std::string& what) {
    if (what.find("number overflow") != std::string::npos)
        return "; expected a finite number (this one overflows a double)";
    std::size_t b = std::min(at, text.size());
    while (b > 0 && std::string_view("+-.0123456789eEaAnNiIfFtTyY").find(text[b - 1]) != std::string_view::npos) --b;
    const std::string token = text.substr(b, 9);
    for (const char* bad : {"NaN", "nan", "-NaN", "Infinity", "-Infinity", "+Infinity", "inf", "-inf"})
        if (token.rfind(bad, 0) == 0)
            return "; expected a finite number (JSON has no NaN or Infinity)";
    return "";
}

}  // namespace

void set_warning_sink(std::function<void(const std::string&)> sink) { warning_sink() = std::move(sink); }
void warn(const std::string& message) { warning_sink()(message); }

json parse_json_text(const std::string& text, const std::string& origin, int max_depth) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        throw InputError(fmt::format("{}: empty file; expected a JSON object", origin));
    check_depth(text, origin, max_depth);
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
        std::string what = e.what();
        auto pos = what.find("] ");
        if (pos != std::string::npos) what = what.substr(pos + 2);
        const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
        const std::string key = key_path_at(text, at);
        throw InputError(fmt::format("{}: malformed JSON{}: {}{}", origin, key.empty() ? "" : fmt::format(" at key '{}'", key),
                                     what, expectation_at(text, at, what)));
    } catch (const json::exception& e) {
        std::string what = e.what();
        auto pos = what.find("] ");
        if (pos != std::string::npos) what = what.substr(pos + 2);
        // "number overflow parsing '1e999'": find the number to name its key.
        std::string key;
        const auto q1 = what.find('\''), q2 = what.rfind('\'');
        if (q1 != std::string::npos && q2 > q1 + 1) {
            const auto at = text.find(what.substr(q1 + 1, q2 - q1 - 1));
            if (at != std::string::npos) key = key_path_at(text, at);
        }
        throw InputError(fmt::format("{}: invalid JSON{}: {}{}", origin, key.empty() ? "" : fmt::format(" at key '{}'", key),
                                     what, expectation_at(text, 0, what)));
    }
}

json read_json_file(const std::string& path, int max_depth) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw InputError(fmt::format("{}: no such file", path));
    if (std::filesystem::is_directory(path, ec))
        throw InputError(fmt::format("{}: is a directory; expected a JSON file", path));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot be read (permission denied?)", path));
    std::stringstream buffer;
    buffer << in.rdbuf();
    return parse_json_text(buffer.str(), path, max_depth);
}

namespace {
// The folder an output file goes in, checked to exist, with the path checked not to be a folder.
std::filesystem::path checked_output_folder(const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
        throw InputError(fmt::format("{}: output folder '{}' does not exist", path, folder.string()));
    if (fs::is_directory(target, ec)) throw InputError(fmt::format("{}: is a directory; expected a file to write", path));
    return folder;
}

// The file a write goes to before it is renamed into place.
std::string temporary_path(const std::string& path) { return path + ".tmp-" + std::to_string(::getpid()); }

// A device or pipe (/dev/null, /dev/stdout, a FIFO) is written in place: renaming a file over it
// would replace the device node itself.
bool written_in_place(const std::string& path) {
    std::error_code ec;
    return std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec);
}
}  // namespace

void check_file_writable(const std::string& path) {
    const std::filesystem::path folder = checked_output_folder(path);
    if (written_in_place(path)) return;
    // Permissions alone do not say (root, read-only mounts, /proc): try the file the write will use.
    const std::string probe = temporary_path(path);
    {
        std::ofstream out(probe, std::ios::binary | std::ios::trunc);
        if (!out) throw InputError(fmt::format("{}: cannot write to folder '{}'", path, folder.string()));
    }
    std::error_code ec;
    std::filesystem::remove(probe, ec);
}

void write_file_atomically(const std::string& path, const std::string& content) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path folder = checked_output_folder(path);
    std::error_code ec;
    if (written_in_place(path)) {
        std::ofstream out(path, std::ios::binary);
        if (!out) throw InputError(fmt::format("{}: cannot be opened for writing", path));
        out << content;
        out.flush();
        if (!out) throw RuntimeError(fmt::format("{}: write failed", path));
        return;
    }
    const std::string tmp = temporary_path(path);
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw InputError(fmt::format("{}: cannot write to folder '{}'", path, folder.string()));
        out << content;
        out.flush();
        if (!out) {
            out.close();
            fs::remove(tmp, ec);
            throw RuntimeError(fmt::format("{}: write failed (disk full?)", path));
        }
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw RuntimeError(fmt::format("{}: cannot rename into place: {}", path, ec.message()));
    }
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t sub = prev[j - 1] + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_d = std::string::npos;
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(word, c);
        if (d < best_d) best_d = d, best = c;
    }
    // Only suggest what is plausibly a typo.
    if (best_d == std::string::npos || best_d > std::max<std::size_t>(3, word.size() / 2)) return "";
    return best;
}

std::string describe_json_value(const json& value) {
    std::string dump = value.dump();
    if (dump.size() > 40) dump = dump.substr(0, 37) + "...";
    return fmt::format("{} {}", value.type_name(), dump);
}

ObjectReader::ObjectReader(const json& object, std::string file, std::string where)
    : object_(&object), file_(std::move(file)), where_(std::move(where)) {
    if (!object.is_object())
        throw input_error(file_, where_.empty() ? "(top level)" : where_, "a JSON object",
                          describe_json_value(object));
}

const json* ObjectReader::find(const std::string& key) const {
    auto it = object_->find(key);
    if (it == object_->end() || it->is_null()) return nullptr;
    return &*it;
}

bool ObjectReader::has(const std::string& key) const { return find(key) != nullptr; }

const json& ObjectReader::raw(const std::string& key) const {
    const_cast<ObjectReader*>(this)->known_.insert(key);
    const json* v = find(key);
    if (!v) fail(key, "a value", nullptr);
    return *v;
}

void ObjectReader::fail(const std::string& key, const std::string& expected, const json* got) const {
    // find() reads a null as absent (defaults apply), but a required key written as null is there:
    // "missing" would send the user looking for a key that is in the file.
    const bool null = !got && object_->contains(key) && object_->at(key).is_null();
    throw input_error(file_, path(key), expected,
                      got ? describe_json_value(*got) : null ? "null" : "nothing (missing)");
}

std::int64_t ObjectReader::integer(const std::string& key, std::optional<std::int64_t> fallback, std::int64_t min,
                                   std::int64_t max) {
    known_.insert(key);
    const json* v = find(key);
    std::string expected = max >= (std::int64_t(1) << 53) ? fmt::format("an integer >= {}", min)
                                                          : fmt::format("an integer in [{}, {}]", min, max);
    if (!v) {
        if (fallback) return *fallback;
        fail(key, expected, nullptr);
    }
    double d;
    if (v->is_number_integer()) {
        if (v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t(max)) fail(key, expected, v);
        std::int64_t i = v->get<std::int64_t>();
        if (i < min || i > max) fail(key, expected, v);
        return i;
    }
    if (!v->is_number_float()) fail(key, expected, v);
    d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < double(min) || d > double(max)) fail(key, expected, v);
    return static_cast<std::int64_t>(d);
}

double ObjectReader::number(const std::string& key, std::optional<double> fallback, double min, double max,
                            bool min_exclusive) {
    known_.insert(key);
    const json* v = find(key);
    std::string expected = min_exclusive ? fmt::format("a number > {}", min) : fmt::format("a number >= {}", min);
    if (max < 1e300) expected += fmt::format(" and <= {}", max);
    if (!v) {
        if (fallback) return *fallback;
        fail(key, expected, nullptr);
    }
    if (!v->is_number()) fail(key, expected, v);
    double d = v->get<double>();
    if (!std::isfinite(d) || d > max || (min_exclusive ? d <= min : d < min)) fail(key, expected, v);
    return d;
}

bool ObjectReader::boolean(const std::string& key, std::optional<bool> fallback) {
    known_.insert(key);
    const json* v = find(key);
    if (!v) {
        if (fallback) return *fallback;
        fail(key, "true or false", nullptr);
    }
    if (!v->is_boolean()) fail(key, "true or false", v);
    return v->get<bool>();
}

std::string ObjectReader::string(const std::string& key, std::optional<std::string> fallback) {
    known_.insert(key);
    const json* v = find(key);
    if (!v) {
        if (fallback) return *fallback;
        fail(key, "a string", nullptr);
    }
    if (!v->is_string()) fail(key, "a string", v);
    return v->get<std::string>();
}

std::string ObjectReader::choice(const std::string& key, const std::vector<std::string>& choices,
                                 std::optional<std::string> fallback) {
    std::string expected = "one of";
    for (std::size_t i = 0; i < choices.size(); ++i) expected += (i ? " | " : " ") + choices[i];
    known_.insert(key);
    const json* v = find(key);
    if (!v) {
        if (fallback) return *fallback;
        fail(key, expected, nullptr);
    }
    if (!v->is_string()) fail(key, expected, v);
    std::string s = v->get<std::string>();
    if (std::find(choices.begin(), choices.end(), s) == choices.end()) fail(key, expected, v);
    return s;
}

ObjectReader ObjectReader::object(const std::string& key) {
    known_.insert(key);
    const json* v = find(key);
    if (!v) fail(key, "a JSON object", nullptr);
    if (!v->is_object()) fail(key, "a JSON object", v);
    return ObjectReader(*v, file_, path(key));
}

std::optional<ObjectReader> ObjectReader::optional_object(const std::string& key) {
    known_.insert(key);
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_object()) fail(key, "a JSON object", v);
    return ObjectReader(*v, file_, path(key));
}

void ObjectReader::ignore(std::initializer_list<const char*> keys) {
    for (const char* k : keys) known_.insert(k);
}

void ObjectReader::finish() const {
    std::vector<std::string> known(known_.begin(), known_.end());
    for (auto it = object_->begin(); it != object_->end(); ++it) {
        if (known_.count(it.key())) continue;
        std::string suggestion = nearest(it.key(), known);
        warn(fmt::format("{}: unknown key '{}' ignored{}", file_, path(it.key()),
                         suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", path(suggestion))));
    }
}

}  // namespace tessel
