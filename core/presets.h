// Resolving `--model M` / `--cluster C`: a file path, or the name of a preset in configs/.
#pragma once
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace tessel {

// Names of the presets of one kind ("models", "clusters", "plans"), sorted.
std::vector<std::string> preset_names(const std::string& kind);
// The text of configs/<kind>/<name>.json, or nullptr.
const char* preset_text(const std::string& kind, const std::string& name);

// A path that exists is read as a file; otherwise the name must be a preset. InputError lists
// the presets for an unknown name.
ModelSpec load_model(const std::string& name_or_path);
ClusterSpec load_cluster(const std::string& name_or_path);
Plan load_plan(const std::string& name_or_path);
json load_json(const std::string& kind, const std::string& name_or_path, std::string* origin = nullptr);

}  // namespace tessel
