#include "executor/host_staged_communicator.h"

#include <map>
#include <vector>

namespace tessel {

namespace {

class HostStagedCommunicator final : public Communicator {
public:
    HostStagedCommunicator(std::unique_ptr<Communicator> host, Backend& backend)
        : host_(std::move(host)), be_(backend) {}

    int rank() const override { return host_->rank(); }
    int size() const override { return host_->size(); }
    int max_tag() const override { return host_->max_tag(); }

    void all_reduce(float* data, std::size_t n, ReduceOp op) override {
        std::vector<float> h = to_host(data, n);
        host_->all_reduce(h.data(), n, op);
        be_.upload(data, h.data(), n * sizeof(float));
    }
    void all_gather(const float* shard, float* full, std::size_t shard_n) override {
        // The host side is never in place (the device shard may alias full + rank·shard_n; the
        // copy below reads it before the upload overwrites it).
        std::vector<float> s = to_host(shard, shard_n), f(shard_n * std::size_t(size()));
        host_->all_gather(s.data(), f.data(), shard_n);
        be_.upload(full, f.data(), f.size() * sizeof(float));
    }
    void reduce_scatter(const float* full, float* shard, std::size_t shard_n) override {
        std::vector<float> f = to_host(full, shard_n * std::size_t(size())), s(shard_n);
        host_->reduce_scatter(f.data(), s.data(), shard_n);
        be_.upload(shard, s.data(), shard_n * sizeof(float));
    }
    void broadcast(float* data, std::size_t n, int root) override {
        std::vector<float> h = to_host(data, n);
        host_->broadcast(h.data(), n, root);
        be_.upload(data, h.data(), n * sizeof(float));
    }
    void barrier() override {
        be_.synchronize();
        host_->barrier();
    }
    void all_reduce_host(double* values, std::size_t n, ReduceOp op) override { host_->all_reduce_host(values, n, op); }

    // A send takes its data now (the device buffer may be reused as soon as isend returns, as
    // with MPI's buffered semantics the executor relies on only until wait); a receive lands in a
    // host buffer and is copied to the device when it completes.
    P2PRequest isend(const float* data, std::size_t n, int peer, int tag) override {
        Pending p;
        p.host = to_host(data, n);
        p.inner = host_->isend(p.host.data(), n, peer, tag);
        return remember(std::move(p));
    }
    P2PRequest irecv(float* data, std::size_t n, int peer, int tag) override {
        Pending p;
        p.host.resize(n);
        p.device_dst = data;
        p.inner = host_->irecv(p.host.data(), n, peer, tag);
        return remember(std::move(p));
    }
    void wait(P2PRequest request) override {
        auto it = pending_.find(request.id);
        if (it == pending_.end()) return;
        host_->wait(it->second.inner);
        finish(it);
    }
    bool test(P2PRequest request) override {
        auto it = pending_.find(request.id);
        if (it == pending_.end()) return true;
        if (!host_->test(it->second.inner)) return false;
        finish(it);
        return true;
    }
    std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>& groups) override {
        auto sub = host_->split(groups);
        return sub ? std::make_unique<HostStagedCommunicator>(std::move(sub), be_) : nullptr;
    }

private:
    struct Pending {
        P2PRequest inner;
        std::vector<float> host;  // must stay put until the host transfer completes
        float* device_dst = nullptr;
    };

    std::vector<float> to_host(const float* device, std::size_t n) {
        std::vector<float> h(n);
        if (n) be_.download(h.data(), device, n * sizeof(float));  // waits for the kernels that wrote it
        return h;
    }
    P2PRequest remember(Pending p) {
        const std::uint64_t id = ++next_id_;
        pending_.emplace(id, std::move(p));
        return P2PRequest{id};
    }
    void finish(std::map<std::uint64_t, Pending>::iterator it) {
        if (it->second.device_dst && !it->second.host.empty())
            be_.upload(it->second.device_dst, it->second.host.data(), it->second.host.size() * sizeof(float));
        pending_.erase(it);
    }

    std::unique_ptr<Communicator> host_;
    Backend& be_;
    std::map<std::uint64_t, Pending> pending_;
    std::uint64_t next_id_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> make_host_staged_communicator(std::unique_ptr<Communicator> host, Backend& backend) {
    return std::make_unique<HostStagedCommunicator>(std::move(host), backend);
}

}  // namespace tessel
