// nccl_communicator: the executor's Communicator (executor/communicator.h) over NCCL, for the CUDA
// backend. Every operation is queued on the backend's stream, so it is ordered with the kernels
// and never blocks the host, except barrier and all_reduce_host (which return host results).
// Bootstrapping: one rank calls nccl_unique_id() and the job broadcasts the 128 bytes (e.g.
// MPI_Bcast of MPI_BYTE); then every rank calls make_nccl_communicator with its rank.
// Point-to-point: NCCL has no tags. Sends and receives are queued and launched together as one
// NCCL group at the next wait/test (or collective, or barrier) on this communicator, like
// Megatron's batched isend/irecv, so two peers that each send before they receive do not
// deadlock; messages between one pair of ranks are matched in the order they were posted (the tag
// is only range-checked), so each receiver must post its receives in its peer's send order.
#pragma once

#include <array>
#include <memory>

#include "executor/communicator.h"
#include "kernels/backend.h"

namespace tessel {

struct NcclUniqueId {
  std::array<char, 128> bytes{};  // NCCL_UNIQUE_ID_BYTES
};

// A fresh id for a new NCCL clique; generated on one rank, then given to all.
NcclUniqueId nccl_unique_id();

// The communicator of rank `rank` among `nranks`, on the CUDA backend's device and stream.
// Collective: every rank of the clique calls it. RuntimeError if `backend` is not the CUDA backend.
std::unique_ptr<Communicator> make_nccl_communicator(const NcclUniqueId& id, int nranks, int rank,
                                                     Backend& backend);

}  // namespace tessel
