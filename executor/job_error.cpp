#include "executor/job_error.h"

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

}  // namespace tessel
