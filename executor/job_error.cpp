#include "executor/job_error.h"

#include <cstdint>

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

void agree_on_errors(Communicator& world, const std::function<void()>& check) {
    int code = 0;
    std::string message;
    try {
        check();
    } catch (const InputError& e) {
        code = 2;
        message = e.what();
    } catch (const std::exception& e) {
        code = 1;
        message = e.what();
    }
    // [worst code, -(lowest failing rank)] under one MAX reduction.
    double agreed[2] = {double(code), code ? -double(world.rank()) : -1e9};
    world.all_reduce_host(agreed, 2, ReduceOp::max);
    if (agreed[0] == 0) return;
    const bool print_here = code != 0 && -agreed[1] == double(world.rank());
    throw JobWideError(int(agreed[0]), print_here ? message : std::string("failed on another rank"), print_here);
}

void agree_on_inputs(Communicator& world, const std::string& inputs, const std::string& names) {
    std::uint64_t hash = 14695981039346656037ull;  // 64-bit FNV-1a
    for (unsigned char ch : inputs) hash = (hash ^ ch) * 1099511628211ull;
    // Each 32-bit half is exact in a double; MAX of h and of -h gives the largest and the smallest.
    const double high = double(hash >> 32), low = double(hash & 0xffffffffull);
    double extremes[4] = {high, low, -high, -low};
    world.all_reduce_host(extremes, 4, ReduceOp::max);
    if (extremes[0] == -extremes[2] && extremes[1] == -extremes[3]) return;
    throw JobWideError(2,
                       fmt::format("the {} ranks were started with different inputs ({}): give every rank the same "
                                   "command line",
                                   world.size(), names),
                       world.rank() == 0);
}

}  // namespace tessel
