#pragma once
#include <functional>
#include <string>

#include "core/errors.h"

namespace tessel::test {
// What f says when it throws InputError, to assert on the message's words; "(no InputError)"
// when it returns.
inline std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no InputError)";
}
}  // namespace tessel::test
