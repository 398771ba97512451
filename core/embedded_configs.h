// The JSON files under configs/, compiled into the binary (cmake/WriteEmbeddedConfigs.cmake).
#pragma once
#include <string>
#include <vector>

namespace tessel {

struct EmbeddedConfig {
    const char* path;     // relative to configs/, e.g. "models/llama3-8b.json"
    const char* content;
};

const std::vector<EmbeddedConfig>& embedded_configs();

}  // namespace tessel
