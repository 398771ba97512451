#pragma once
#include <string>

namespace tessel::test {
// A fresh, empty folder under the system's temporary folder, named by the prefix, this process and
// the name (ctest runs test cases as separate processes, in parallel). Every folder made this way is
// removed when the process exits, a failed assertion included.
std::string fresh_temporary_folder(const std::string& prefix, const std::string& name);
}  // namespace tessel::test
