#include "tests/temporary_folder.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace tessel::test {
namespace {
struct FoldersMade {
    std::vector<std::filesystem::path> paths;
    ~FoldersMade() {
        for (const auto& dir : paths) {
            std::error_code ignored;
            std::filesystem::remove_all(dir, ignored);
        }
    }
};
FoldersMade& folders_made() {
    static FoldersMade made;
    return made;
}
}  // namespace

std::string fresh_temporary_folder(const std::string& prefix, const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    folders_made().paths.push_back(dir);
    return dir.string();
}
}  // namespace tessel::test
