// ZeRO bookkeeping of one parameter buffer, seen from rank 1 of a 2-rank data-parallel group
// whose peer holds the same data as this rank (so every collective's result is known here): what
// each stage stores (stage 1 shards the AdamW moments, stage 2 also the gradients, stage 3 also
// the parameters), and that the owned shard's update equals the same slice of an unsharded one.
#include <gtest/gtest.h>

#include <cstring>

#include "core/presets.h"
#include "executor/layers/transformer_layer.h"
#include "kernels/cpu/cpu_backend.h"

namespace tessel {

namespace {

class MirrorGroup final : public Communicator {
public:
    MirrorGroup(int rank, int size) : rank_(rank), size_(size) {}
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int max_tag() const override { return 1 << 20; }
    void all_reduce(float* data, std::size_t n, ReduceOp op) override {
        if (op == ReduceOp::sum)
            for (std::size_t i = 0; i < n; ++i) data[i] *= float(size_);
    }
    void all_gather(const float* shard, float* full, std::size_t n) override {
        std::vector<float> mine(shard, shard + n);
        for (int r = 0; r < size_; ++r) std::memcpy(full + r * n, mine.data(), n * sizeof(float));
    }
    void reduce_scatter(const float* full, float* shard, std::size_t n) override {
        for (std::size_t i = 0; i < n; ++i) shard[i] = float(size_) * full[rank_ * n + i];
    }
    void broadcast(float*, std::size_t, int) override {}
    void barrier() override {}
    void all_reduce_host(double* v, std::size_t n, ReduceOp op) override {
        if (op == ReduceOp::sum)
            for (std::size_t i = 0; i < n; ++i) v[i] *= size_;
    }
    P2PRequest isend(const float*, std::size_t, int, int) override { return {}; }
    P2PRequest irecv(float*, std::size_t, int, int) override { return {}; }
    void wait(P2PRequest) override {}
    bool test(P2PRequest) override { return true; }
    std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>&) override { return nullptr; }

private:
    int rank_, size_;
};

struct Fixture {
    ModelSpec m = load_model("tiny-llama");
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    MemoryTracker tracker;
    MirrorGroup dp{1, 2};
    ParamBuffer buf{"layers.0"};
    explicit Fixture(int zero) {
        add_transformer_layer(buf, m, 0, 1, 0, false);
        buf.materialize({backend.get(), &tracker}, zero, &dp, 5);
    }
    // One backward's gradient (a fixed pattern), the data-parallel reduction and an AdamW step on
    // what this rank owns. Returns the owned parameters afterwards.
    std::vector<float> step() {
        buf.acquire_params();
        buf.begin_grads();
        float* g = buf.grad(TensorSlot{0, buf.count()});
        for (std::size_t i = 0; i < buf.count(); ++i) g[i] = 1e-3f * float(int(i % 17) - 8);
        buf.end_grads();
        buf.release_params();
        buf.reduce_grads();
        const Range own = buf.owned();
        const std::size_t n = std::min(own.end, buf.count()) - std::min(own.begin, buf.count());
        backend->adamw_update(buf.owned_params(), buf.owned_grads(), buf.moment1(), buf.moment2(), n, 1e-2f, 0.9f,
                              0.95f, 1e-8f, 0.0f, 1);
        return std::vector<float>(buf.owned_params(), buf.owned_params() + n);
    }
};

}  // namespace

TEST(ZeroSharding, EachStageShardsWhatItShould) {
    Fixture z0(0), z1(1), z2(2), z3(3);
    const std::size_t n = z0.buf.count(), shard = (n + 1) / 2, padded = 2 * shard, f = sizeof(float);
    EXPECT_EQ(z0.buf.owned(), (Range{0, n}));
    EXPECT_EQ(z1.buf.owned(), (Range{shard, padded}));  // rank 1: the second half
    auto bytes = [](Fixture& z, MemoryKind k) { return z.buf.state_bytes(k); };
    EXPECT_EQ(bytes(z0, MemoryKind::optimizer), 2 * n * f);
    EXPECT_EQ(bytes(z1, MemoryKind::optimizer), 2 * shard * f);
    EXPECT_EQ(bytes(z1, MemoryKind::gradients), padded * f);
    EXPECT_EQ(bytes(z2, MemoryKind::gradients), shard * f);
    EXPECT_EQ(bytes(z2, MemoryKind::weights), padded * f);
    EXPECT_EQ(bytes(z3, MemoryKind::weights), shard * f);
    EXPECT_EQ(bytes(z3, MemoryKind::gradients), shard * f);
    EXPECT_EQ(bytes(z3, MemoryKind::optimizer), 2 * shard * f);
}

TEST(ZeroSharding, OwnedShardUpdatesLikeTheUnshardedBuffer) {
    Fixture z0(0);
    const std::vector<float> full = z0.step();
    for (int zero : {1, 2, 3}) {
        Fixture z(zero);
        const std::vector<float> mine = z.step();
        const std::size_t begin = z.buf.owned().begin;
        ASSERT_FALSE(mine.empty());
        for (std::size_t i = 0; i < mine.size(); ++i) ASSERT_EQ(mine[i], full[begin + i]) << "zero " << zero << " " << i;
    }
}

}  // namespace tessel
