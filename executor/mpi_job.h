// Running a command as an MPI job with tessel's failure rules:
//   - JobWideError (every rank knows): each rank finalizes MPI and returns its code; one prints.
//   - any other exception on one rank: it prints the error with its rank and calls MPI_Abort, so
//     the whole job ends within seconds with a non-zero exit instead of hanging in a collective.
// With one rank there is nothing to abort: the exception goes up to the CLI's exit-code mapping.
#pragma once

#include <functional>
#include <memory>

#include "executor/communicator.h"

namespace tessel {

// Initialises MPI if needed (and then finalizes it), runs body with a world communicator, and
// returns the process's exit code (0 on success).
int run_mpi_job(const char* program, const std::function<void(std::unique_ptr<Communicator> world)>& body);

}  // namespace tessel
