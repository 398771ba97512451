// nccl_communicator: the executor's Communicator (executor/communicator.h) over NCCL, for the CUDA
// backend. Collectives are queued on the backend's stream, so they are ordered with the kernels
// and never block the host, except barrier and all_reduce_host (which return host results).
// Bootstrapping: one rank calls nccl_unique_id() and the job broadcasts the 128 bytes (e.g.
// MPI_Bcast of MPI_BYTE); then every rank calls make_nccl_communicator with its rank.
// Point-to-point: an NCCL send holds its stream until the peer posts the matching receive, so
// sends and receives queued on one stream (or one communicator) can wait on each other in a
// cycle: in 1F1B, stage 0 queues send(a1) before recv(g0) while stage 1 queues send(g0) before
// recv(a1). Communicator's contract is MPI's (a send never waits for its receive), so each
// direction between ring neighbours gets its own two-rank NCCL communicator and stream,
// made by prepare_neighbour_transfers: on the channel from A to B, A only sends and B only
// receives, in the same order (NCCL has no tags: the k-th send meets the k-th receive; the tag is
// only range-checked), so a send waits for nothing but its own receive being posted. A receive
// starts after the work queued on the compute stream before it (its buffer's allocation); wait
// orders the compute stream after the transfer. Transfers to any other peer are refused.
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
