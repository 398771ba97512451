// MPI implementation of Communicator: one MPI communicator per group (MPI_Comm_split of a parent).
#pragma once

#include <mpi.h>

#include <memory>

#include "executor/communicator.h"

namespace tessel {

// A communicator over a duplicate of `comm` (MPI_COMM_WORLD for a job, MPI_COMM_SELF for a
// one-rank reference run inside a larger job).
std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm comm);

}  // namespace tessel
