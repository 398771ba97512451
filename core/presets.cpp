#include "core/presets.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/embedded_configs.h"
#include "core/errors.h"

namespace tessel {

std::vector<std::string> preset_names(const std::string& kind) {
    std::vector<std::string> names;
    const std::string prefix = kind + "/";
    for (const auto& c : embedded_configs()) {
        std::string p = c.path;
        if (p.rfind(prefix, 0) == 0 && p.size() > 5 && p.substr(p.size() - 5) == ".json" &&
            p.find('/', prefix.size()) == std::string::npos)
            names.push_back(p.substr(prefix.size(), p.size() - prefix.size() - 5));
    }
    std::sort(names.begin(), names.end());
    return names;
}

const char* preset_text(const std::string& kind, const std::string& name) {
    const std::string want = kind + "/" + name + ".json";
    for (const auto& c : embedded_configs())
        if (want == c.path) return c.content;
    return nullptr;
}

namespace {
// "models" -> "model"; folders that are not plural nouns keep their name.
std::string singular(const std::string& kind) {
    if (kind == "models" || kind == "clusters" || kind == "plans") return kind.substr(0, kind.size() - 1);
    return kind;
}
}  // namespace

json load_json(const std::string& kind, const std::string& name_or_path, std::string* origin) {
    std::error_code ec;
    if (std::filesystem::exists(name_or_path, ec)) {
        if (origin) *origin = name_or_path;
        return read_json_file(name_or_path);
    }
    if (const char* text = preset_text(kind, name_or_path)) {
        std::string o = fmt::format("preset {} '{}'", singular(kind), name_or_path);
        if (origin) *origin = o;
        return parse_json_text(text, o);
    }
    const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                                 name_or_path.find(".json") != std::string::npos;
    if (looks_like_path) throw InputError(fmt::format("{}: no such file", name_or_path));
    auto names = preset_names(kind);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    std::string suggestion = nearest(name_or_path, names);
    throw InputError(fmt::format("unknown {} preset '{}'{}; presets: {}", singular(kind), name_or_path,
                                 suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion), list));
}

ModelSpec load_model(const std::string& name_or_path) {
    // A downloaded Hugging Face model is a folder: its shape is the config.json inside.
    std::error_code ec;
    if (std::filesystem::is_directory(name_or_path, ec)) {
        const std::filesystem::path config = std::filesystem::path(name_or_path) / "config.json";
        if (!std::filesystem::is_regular_file(config, ec))
            throw InputError(fmt::format("{}: a folder without a config.json; expected a model JSON file, a Hugging "
                                         "Face model folder or a preset name", name_or_path));
        return load_model(config.string());
    }
    std::string origin;
    json j = load_json("models", name_or_path, &origin);
    return parse_model(j, origin);
}

ClusterSpec load_cluster(const std::string& name_or_path) {
    std::string origin;
    json j = load_json("clusters", name_or_path, &origin);
    return parse_cluster(j, origin);
}

Plan load_plan(const std::string& name_or_path) {
    std::string origin;
    json j = load_json("plans", name_or_path, &origin);
    return parse_plan(j, origin);
}

}  // namespace tessel
