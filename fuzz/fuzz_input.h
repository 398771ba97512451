// Shared by the parser fuzzers: tessel's own error types are the expected answer to bad input;
// anything else escaping (or a sanitizer report) is a bug.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "core/json_io.h"

namespace tessel::fuzz {

inline void silence_warnings() {
    static bool done = false;
    if (!done) set_warning_sink([](const std::string&) {}), done = true;
}

template <typename F>
int guard(F&& f) {
    try {
        f();
    } catch (const InputError&) {
    } catch (const RuntimeError&) {
    } catch (const NoPlanFits&) {
    }
    return 0;
}

inline std::string as_text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

}  // namespace tessel::fuzz
