// Communicator: collectives and point-to-point transfers over one group of ranks (a tensor-,
// pipeline- or data-parallel group, or the world). Buffers are the backend's device pointers.
// Implementations: MPI (mpi_communicator.cpp), the one-rank group (self_communicator.cpp), NCCL
// (nccl_communicator.cpp) and MPI through host copies. Every rank of a group calls each collective
// in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tessel {

enum class ReduceOp { sum, max };

// A pending point-to-point transfer, completed by Communicator::wait.
struct P2PRequest {
    std::uint64_t id = 0;
};

class Communicator {
public:
    virtual ~Communicator() = default;

    virtual int rank() const = 0;  // 0 .. size-1 inside this group
    virtual int size() const = 0;

    // In place over n floats.
    virtual void all_reduce(float* data, std::size_t n, ReduceOp op) = 0;
    // full (size·shard_n) = every rank's shard, in rank order. shard may point at
    // full + rank·shard_n (in place).
    virtual void all_gather(const float* shard, float* full, std::size_t shard_n) = 0;
    // shard (shard_n) = this rank's slice of the sum over ranks of full (size·shard_n).
    virtual void reduce_scatter(const float* full, float* shard, std::size_t shard_n) = 0;
    virtual void broadcast(float* data, std::size_t n, int root) = 0;
    virtual void barrier() = 0;
    // Small host-side values (metrics, flags), in place.
    virtual void all_reduce_host(double* values, std::size_t n, ReduceOp op) = 0;

    // Point-to-point with a peer of this group. Tags tell apart messages between one pair; a
    // send never waits for its receive, so any order of sends is deadlock-free.
    virtual P2PRequest isend(const float* data, std::size_t n, int peer, int tag) = 0;
    virtual P2PRequest irecv(float* data, std::size_t n, int peer, int tag) = 0;
    virtual void wait(P2PRequest request) = 0;
    virtual bool test(P2PRequest request) = 0;  // true (and done with) once it has completed
    virtual int max_tag() const = 0;
    // Collective over this group, once, before the first isend/irecv between ring neighbours
    // (rank ± 1 mod size: the pipeline's stages and calibrate's sendrecv). NCCL needs it to give
    // each direction of each neighbour pair its own communicator and stream (see
    // nccl_communicator.h); MPI needs nothing.
    virtual void prepare_neighbour_transfers() {}

    // Collective over this group: every rank passes the same list of disjoint groups (of ranks
    // of this group) and gets the communicator of the one that holds it, or nullptr.
    virtual std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>& groups) = 0;
};

// The group of one rank: every collective is a copy. Used for single-process runs and tests.
std::unique_ptr<Communicator> make_self_communicator();

}  // namespace tessel
