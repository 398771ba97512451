#include "core/errors.h"

namespace tessel {

InputError input_error(const std::string& file, const std::string& key, const std::string& expected,
                       const std::string& got) {
    std::string msg = file.empty() ? std::string("input") : file;
    if (!key.empty()) msg += ": key '" + key + "'";
    msg += ": expected " + expected;
    if (!got.empty()) msg += ", got " + got;
    return InputError(msg);
}

}  // namespace tessel
