#include "executor/timed_communicator.h"

#include <chrono>

namespace tessel {

namespace {

class TimedCommunicator final : public Communicator {
public:
    TimedCommunicator(std::unique_ptr<Communicator> inner, double* seconds, Backend* queue)
        : inner_(std::move(inner)), seconds_(seconds), queue_(queue) {}

    int rank() const override { return inner_->rank(); }
    int size() const override { return inner_->size(); }
    int max_tag() const override { return inner_->max_tag(); }

    void all_reduce(float* data, std::size_t n, ReduceOp op) override {
        timed([&] { inner_->all_reduce(data, n, op); });
    }
    void all_gather(const float* shard, float* full, std::size_t shard_n) override {
        timed([&] { inner_->all_gather(shard, full, shard_n); });
    }
    void reduce_scatter(const float* full, float* shard, std::size_t shard_n) override {
        timed([&] { inner_->reduce_scatter(full, shard, shard_n); });
    }
    void broadcast(float* data, std::size_t n, int root) override { timed([&] { inner_->broadcast(data, n, root); }); }
    void barrier() override { timed([&] { inner_->barrier(); }); }
    void all_reduce_host(double* values, std::size_t n, ReduceOp op) override {
        timed([&] { inner_->all_reduce_host(values, n, op); });
    }
    // Posting and polling do not wait for the transfer, so they do not synchronize either: a
    // poll that blocked could hold a send back from a peer that needs this rank to go on first.
    P2PRequest isend(const float* data, std::size_t n, int peer, int tag) override {
        P2PRequest r;
        timed([&] { r = inner_->isend(data, n, peer, tag); }, false);
        return r;
    }
    P2PRequest irecv(float* data, std::size_t n, int peer, int tag) override {
        P2PRequest r;
        timed([&] { r = inner_->irecv(data, n, peer, tag); }, false);
        return r;
    }
    void wait(P2PRequest request) override { timed([&] { inner_->wait(request); }); }
    bool test(P2PRequest request) override {
        bool done = false;
        timed([&] { done = inner_->test(request); }, false);
        return done;
    }
    std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>& groups) override {
        return inner_->split(groups);
    }
    void prepare_neighbour_transfers() override { inner_->prepare_neighbour_transfers(); }

private:
    template <typename F>
    void timed(F&& f, bool synchronize = true) {
        Backend* queue = synchronize ? queue_ : nullptr;
        if (queue) queue->synchronize();
        const auto t0 = std::chrono::steady_clock::now();
        f();
        if (queue) queue->synchronize();
        *seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    std::unique_ptr<Communicator> inner_;
    double* seconds_;
    Backend* queue_;
};

}  // namespace

std::unique_ptr<Communicator> make_timed_communicator(std::unique_ptr<Communicator> inner, double* seconds,
                                                      Backend* queue) {
    if (!inner) return nullptr;
    return std::make_unique<TimedCommunicator>(std::move(inner), seconds, queue);
}

}  // namespace tessel
