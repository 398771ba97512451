// Initialisation: the full model is the same whatever the layout — tensor-parallel slices of a
// weight put back together equal the one-rank tensor, and ZeRO-3 shards equal the full buffer's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/presets.h"
#include "executor/layers/transformer_layer.h"
#include "kernels/cpu/cpu_backend.h"

namespace tessel {

namespace {
std::vector<float> values(const TensorSpec& t, std::uint64_t seed = 7) {
    std::vector<float> v(t.count());
    fill_initial_values(t, seed, {0, t.count()}, v.data());
    return v;
}
}  // namespace

TEST(Init, DeterministicAndNormalWithTheRequestedSpread) {
    TensorSpec t = replicated_tensor("w", 256, 256, InitRule::normal(0.02f));
    auto a = values(t), b = values(t);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, values(t, 8));                                                // another seed
    EXPECT_NE(a, values(replicated_tensor("w2", 256, 256, InitRule::normal(0.02f))));  // another name
    double sum = 0, sq = 0;
    for (float x : a) {
        sum += x;
        sq += double(x) * x;
    }
    const double mean = sum / a.size(), sd = std::sqrt(sq / a.size() - mean * mean);
    EXPECT_NEAR(mean, 0.0, 0.02 * 4 / 256);  // 4 standard errors
    EXPECT_NEAR(sd, 0.02, 0.02 * 0.02);
}

TEST(Init, RowAndColumnShardsReassembleTheFullTensor) {
    const std::size_t rows = 12, cols = 10;
    auto full = values(replicated_tensor("w", rows, cols, InitRule::normal(1.0f)));
    for (int parts : {2, 3, 4}) {
        std::vector<float> by_rows, by_cols(rows * cols);
        for (int r = 0; r < parts; ++r) {
            auto part = values(row_shard("w", rows, cols, parts, r, InitRule::normal(1.0f)));
            by_rows.insert(by_rows.end(), part.begin(), part.end());
            auto colpart = values(column_shard("w", rows, cols, parts, r, InitRule::normal(1.0f)));
            const Range c = split_range(cols, parts, r);
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t j = 0; j < c.size(); ++j) by_cols[i * cols + c.begin + j] = colpart[i * c.size() + j];
        }
        EXPECT_EQ(by_rows, full) << parts;
        EXPECT_EQ(by_cols, full) << parts;
    }
}

TEST(Init, FusedGateUpShardIsTheGateShardThenTheUpShard) {
    ModelSpec m = load_model("tiny-llama");
    const std::size_t F = m.ffn_hidden_size, C = m.hidden_size;
    for (int r = 0; r < 2; ++r) {
        ParamBuffer buf("layer");
        MlpWeights w = add_mlp(buf, m, 1, 2, r, false);
        const auto& tensors = buf.tensors();
        auto it = std::find_if(tensors.begin(), tensors.end(),
                               [](const TensorSpec& t) { return t.name == "layers.1.mlp.gate_up.weight"; });
        ASSERT_NE(it, tensors.end());
        const TensorSpec& spec = *it;
        ASSERT_EQ(w.w_up.count, 2 * F / 2 * C);
        auto local = values(spec, 1234);
        auto gate_seeded = values(replicated_tensor("layers.1.mlp.gate.weight", F, C, InitRule::normal(0.02f)), 1234);
        auto up_seeded = values(replicated_tensor("layers.1.mlp.up.weight", F, C, InitRule::normal(0.02f)), 1234);
        const std::size_t half = F / 2 * C;
        for (std::size_t i = 0; i < half; ++i) {
            ASSERT_EQ(local[i], gate_seeded[r * half + i]);
            ASSERT_EQ(local[half + i], up_seeded[r * half + i]);
        }
    }
}

TEST(Init, AnyShardOfABufferHoldsTheFullBuffersSlice) {
    ModelSpec m = load_model("tiny-gpt");
    auto backend = make_cpu_backend(1);
    MemoryTracker tracker;
    DeviceMemory mem{backend.get(), &tracker};
    ParamBuffer full("layer");
    add_transformer_layer(full, m, 0, 1, 0, false);
    full.materialize(mem, 0, nullptr, 99);
    const std::vector<float> all = full.download_params();
    // What a ZeRO-3 rank initialises (ParamBuffer::materialize fills only its shard): each shard
    // of a 3-way split of the padded buffer is the same slice of the full values, padding zero.
    for (int i = 0; i < 3; ++i) {
        ParamBuffer part("layer");
        add_transformer_layer(part, m, 0, 1, 0, false);
        const Range shard = padded_shard(part.count(), 3, i);
        std::vector<float> got(shard.size(), 0.0f);
        std::size_t offset = 0;
        for (std::size_t t = 0; t < part.tensors().size(); ++t) {
            const std::size_t n = part.tensors()[t].count();
            const Range r = intersect(shard, {offset, offset + n});
            if (!r.empty())
                fill_initial_values(part.tensors()[t], 99, {r.begin - offset, r.end - offset},
                                    got.data() + (r.begin - shard.begin));
            offset += n;
        }
        for (std::size_t k = 0; k < shard.size(); ++k)
            ASSERT_EQ(got[k], shard.begin + k < all.size() ? all[shard.begin + k] : 0.0f) << k;
    }
    EXPECT_GT(tracker.peak(), 0u);
}

}  // namespace tessel
