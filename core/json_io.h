// Reading and writing JSON with messages that name the file, the key and what was expected.
// ObjectReader walks one JSON object: each getter checks type and range, remembers the key,
// and finish() warns about keys nobody asked for, suggesting the nearest known one.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessel {

using json = nlohmann::json;

// Parses a file; InputError (naming the file and the byte offset) for a missing or unreadable
// file, empty or malformed JSON, nesting deeper than max_depth, NaN/Infinity, or numbers that
// overflow a double.
json read_json_file(const std::string& path, int max_depth = 64);
json parse_json_text(const std::string& text, const std::string& origin, int max_depth = 64);

// Writes to PATH.tmp-<pid> then renames into place, so a reader never sees a partial file.
// InputError if the folder does not exist or cannot be written.
void write_file_atomically(const std::string& path, const std::string& content);
// The checks write_file_atomically makes, made before a command does its work so that bad output
// paths fail first and no output is written beside a failed one: the folder exists and takes a
// new file (created and removed), and the path is not a folder. InputError naming the path.
void check_file_writable(const std::string& path);

// Where warnings go (stderr by default); tests capture them.
void set_warning_sink(std::function<void(const std::string&)> sink);
void warn(const std::string& message);

// Edit distance, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

class ObjectReader {
public:
    // `where` prefixes keys in messages, e.g. "gpu" gives "gpu.memory_GiB".
    ObjectReader(const json& object, std::string file, std::string where = "");

    bool has(const std::string& key) const;
    const json& raw(const std::string& key) const;  // marks the key as known

    std::int64_t integer(const std::string& key, std::optional<std::int64_t> fallback = std::nullopt,
                         std::int64_t min = 1, std::int64_t max = (std::int64_t(1) << 53));
    double number(const std::string& key, std::optional<double> fallback = std::nullopt,
                  double min = 0.0, double max = 1e300, bool min_exclusive = true);
    bool boolean(const std::string& key, std::optional<bool> fallback = std::nullopt);
    std::string string(const std::string& key, std::optional<std::string> fallback = std::nullopt);
    std::string choice(const std::string& key, const std::vector<std::string>& choices,
                       std::optional<std::string> fallback = std::nullopt);
    ObjectReader object(const std::string& key);
    std::optional<ObjectReader> optional_object(const std::string& key);

    // Keys that are read elsewhere (or deliberately ignored) and must not be warned about.
    void ignore(std::initializer_list<const char*> keys);
    // Warns once per unknown key, suggesting the nearest known one.
    void finish() const;

    const std::string& file() const { return file_; }
    std::string path(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }

private:
    const json* object_;
    std::string file_;
    std::string where_;
    std::set<std::string> known_;
    [[noreturn]] void fail(const std::string& key, const std::string& expected, const json* got) const;
    const json* find(const std::string& key) const;
};

std::string describe_json_value(const json& value);

}  // namespace tessel
