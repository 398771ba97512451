// Errors every rank of a job knows about at once (after a collective agreed on them): the job
// then ends normally on every rank with the same exit code, and one rank prints the message.
// Errors seen by a single rank are ordinary exceptions, and the job is aborted (mpi_job.h).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "executor/communicator.h"

namespace tessel {

struct JobWideError : std::runtime_error {
    JobWideError(int code, const std::string& message, bool print_here)
        : std::runtime_error(message), exit_code(code), print_on_this_rank(print_here) {}
    int exit_code;            // 1 runtime failure, 2 bad input
    bool print_on_this_rank;  // exactly one rank prints
};

// Runs `check` on every rank, then agrees over `world`: if any rank threw InputError (exit 2) or
// another exception (exit 1), every rank throws JobWideError with the worst code, and the lowest
// failing rank prints its message. `check` must not use `world`.
void agree_on_errors(Communicator& world, const std::function<void()>& check);

// Agrees that every rank of `world` was started with the same inputs (`inputs`: a canonical text
// of what the rank read, `names`: what it covers, for the message). mpirun can start each rank
// with its own command line, and ranks that disagree on the layout or the batch would otherwise
// hang in a collective or combine unlike data; on any difference every rank throws
// JobWideError(2), printed by rank 0.
void agree_on_inputs(Communicator& world, const std::string& inputs, const std::string& names);

}  // namespace tessel
