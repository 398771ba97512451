// ZeRO-3/FSDP's layer-by-layer gathers and reduce-scatters beside a pass, against timelines laid
// out by hand.
#include <gtest/gtest.h>

#include "simulator/sharded_pass.h"

using namespace tessel;

namespace {
// Two ranks on a 1 GB/s link with no latency: an all-gather of 2 bytes per weight takes
// (n-1)/n x 2P / bw = 1 ms for P = 1e6 weights, a reduce-scatter of 4 bytes per weight 2 ms.
CommGroup pair_link() {
    CommGroup g;
    g.size = 2;
    g.bandwidth_Bps = 1e9;
    g.hop_latency_s = 0;
    g.call_latency_s = 0;
    return g;
}

std::vector<BlockCost> blocks(int n, double backward_s) {
    std::vector<BlockCost> b(n);
    for (auto& x : b) {
        x.parameters = 1e6;
        x.forward.compute_s = backward_s / 2;
        x.backward.compute_s = backward_s;
    }
    return b;
}

std::vector<const BlockCost*> pointers(const std::vector<BlockCost>& b) {
    std::vector<const BlockCost*> p;
    for (const auto& x : b) p.push_back(&x);
    return p;
}

constexpr double G = 1e-3, R = 2e-3;  // one block's gather and reduce-scatter
}  // namespace

TEST(ShardedPass, SerializedBackwardWaitsForEveryGatherAndScatter) {
    const auto b = blocks(3, 10e-3);
    const CommGroup g = pair_link();
    // Each block: its gather, its compute, its reduce-scatter, one after another.
    const ActionParts a = time_pass(pointers(b), false, &g, 2.0, 4.0, 0.0, true, false);
    EXPECT_NEAR(a.compute, 3 * 10e-3, 1e-12);
    EXPECT_NEAR(a.dp_comm, 3 * (G + R), 1e-12);
}

TEST(ShardedPass, PrefetchedBackwardHidesTheCommunicationUnderLongBlocks) {
    const auto b = blocks(3, 10e-3);
    const CommGroup g = pair_link();
    // Only the first gather and the last reduce-scatter stay exposed (G + R < one block).
    const ActionParts a = time_pass(pointers(b), false, &g, 2.0, 4.0, 0.0, true, true);
    EXPECT_NEAR(a.dp_comm, G + R, 1e-12);
}

TEST(ShardedPass, PrefetchedBackwardIsBoundByTheStreamUnderShortBlocks) {
    const auto b = blocks(3, 1e-3);
    const CommGroup g = pair_link();
    // The stream runs G0 G1 R0 G2 R1 R2 back to back (9 ms) while compute needs 3 ms.
    const ActionParts a = time_pass(pointers(b), false, &g, 2.0, 4.0, 0.0, true, true);
    EXPECT_NEAR(a.compute + a.dp_comm, 3 * (G + R), 1e-12);
    // Serialized: 3 x (G + 1 ms + R).
    const ActionParts s = time_pass(pointers(b), false, &g, 2.0, 4.0, 0.0, true, false);
    EXPECT_NEAR(s.compute + s.dp_comm, 3 * (G + 1e-3 + R), 1e-12);
}

TEST(ShardedPass, OverlappedCollectivesSlowTheComputeTheyRunBeside) {
    const auto b = blocks(3, 10e-3);
    const CommGroup g = pair_link();
    // 10% interference: blocks 0 and 1 each run beside the next gather and their own
    // reduce-scatter (3 ms), block 2 beside its reduce-scatter (2 ms).
    const ActionParts a = time_pass(pointers(b), false, &g, 2.0, 4.0, 0.1, true, true);
    EXPECT_NEAR(a.compute, 30e-3 + 0.1 * (3e-3 + 3e-3 + 2e-3), 1e-12);
}

TEST(ShardedPass, ForwardPrefetchesTheNextBlocksGather) {
    const auto b = blocks(3, 10e-3);  // 5 ms forwards
    const CommGroup g = pair_link();
    // Only the first gather is exposed; no reduce-scatter in the forward.
    const ActionParts a = time_pass(pointers(b), true, &g, 2.0, 4.0, 0.0);
    EXPECT_NEAR(a.dp_comm, G, 1e-12);
}

TEST(ShardedPass, BackwardWithoutGathersLetsReduceScattersTrailTheCompute) {
    // FSDP's SHARD_GRAD_OP: the weights are still gathered from the forward, so each block starts
    // as soon as the previous one ends and only the last reduce-scatter is exposed.
    const auto b = blocks(3, 10e-3);
    const CommGroup g = pair_link();
    const ActionParts a = time_pass(pointers(b), false, &g, 2.0, 4.0, 0.0, false, false);
    EXPECT_NEAR(a.dp_comm, R, 1e-12);
}

TEST(ShardedPass, SpansLayTheStreamOutAsIssued) {
    std::vector<BlockCost> b = blocks(2, 10e-3);
    b[0].name = b[1].name = "layer";
    const CommGroup g = pair_link();
    auto expect_spans = [&](bool prefetch, const std::vector<std::pair<std::string, double>>& want) {
        std::vector<CommSpan> s;
        time_pass(pointers(b), false, &g, 2.0, 4.0, 0.0, true, prefetch, &s);
        ASSERT_EQ(s.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            EXPECT_EQ(s[i].name, want[i].first);
            EXPECT_NEAR(s[i].offset_s, want[i].second, 1e-12);
            EXPECT_NEAR(s[i].duration_s, s[i].name[0] == 'a' ? G : R, 1e-12);
            // One stream: no span starts before the previous one ends.
            if (i > 0) {
                EXPECT_GE(s[i].offset_s + 1e-15, s[i - 1].offset_s + s[i - 1].duration_s);
            }
        }
    };
    // Serialized backward, blocks run last first: G(layer 1) [0, 1], compute [1, 11],
    // R(layer 1) [11, 13], G(layer 0) [13, 14], compute [14, 24], R(layer 0) [24, 26] (ms).
    expect_spans(false, {{"all-gather layer 1", 0}, {"reduce-scatter layer 1", 11e-3}, {"all-gather layer 0", 13e-3},
                         {"reduce-scatter layer 0", 24e-3}});
    // Prefetched: G(layer 1) [0, 1], compute [1, 11] with G(layer 0) issued at its start [1, 2],
    // R(layer 1) [11, 13], compute [11, 21], R(layer 0) [21, 23].
    expect_spans(true, {{"all-gather layer 1", 0}, {"all-gather layer 0", 1e-3}, {"reduce-scatter layer 1", 11e-3},
                        {"reduce-scatter layer 0", 21e-3}});
}
