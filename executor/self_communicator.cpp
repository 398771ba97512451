// The one-rank group: collectives copy, point-to-point has no peer. Lets the model run in one
// process without MPI (unit tests) with the same code path as a group of one under MPI.
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "core/errors.h"
#include "executor/communicator.h"

namespace tessel {
namespace {

class SelfCommunicator final : public Communicator {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    int max_tag() const override { return 1 << 30; }
    void all_reduce(float*, std::size_t, ReduceOp) override {}
    void all_gather(const float* shard, float* full, std::size_t n) override {
        if (shard != full && n) std::memcpy(full, shard, n * sizeof(float));
    }
    void reduce_scatter(const float* full, float* shard, std::size_t n) override {
        if (shard != full && n) std::memcpy(shard, full, n * sizeof(float));
    }
    void broadcast(float*, std::size_t, int) override {}
    void barrier() override {}
    void all_reduce_host(double*, std::size_t, ReduceOp) override {}
    P2PRequest isend(const float*, std::size_t, int peer, int) override { no_peer(peer); }
    P2PRequest irecv(float*, std::size_t, int peer, int) override { no_peer(peer); }
    void wait(P2PRequest) override {}
    bool test(P2PRequest) override { return true; }
    std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>& groups) override {
        for (const auto& g : groups)
            if (g.size() == 1 && g[0] == 0) return std::make_unique<SelfCommunicator>();
        return nullptr;
    }

private:
    [[noreturn]] static void no_peer(int peer) {
        throw RuntimeError(fmt::format("point-to-point transfer with rank {} in a one-rank group", peer));
    }
};

}  // namespace

std::unique_ptr<Communicator> make_self_communicator() { return std::make_unique<SelfCommunicator>(); }

}  // namespace tessel
