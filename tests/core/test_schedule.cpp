// Pipeline schedules: the invariants of Megatron's test_get_pipeline_parallel_order.
#include <gtest/gtest.h>

#include <map>

#include "core/schedule.h"

using namespace tessel;

namespace {
void check_invariants(Schedule sched, int pp, int m, int v) {
    auto all = pipeline_schedule(sched, pp, m, v);
    ASSERT_EQ(int(all.size()), pp);
    for (int r = 0; r < pp; ++r) {
        const auto& s = all[r];
        SCOPED_TRACE(testing::Message() << to_string(sched) << " pp" << pp << " m" << m << " v" << v << " rank " << r << ": " << to_string(s));
        ASSERT_EQ(int(s.size()), 2 * m * v);
        std::map<std::pair<int, int>, int> done;  // (mb, chunk) -> 1 after F, 2 after B
        int live = 0;
        for (const auto& a : s) {
            auto key = std::make_pair(a.microbatch, a.chunk);
            if (a.op == PipelineOp::forward) {
                EXPECT_EQ(done[key], 0);
                done[key] = 1;
                ++live;
            } else {
                EXPECT_EQ(done[key], 1) << "backward before its forward";
                done[key] = 2;
                --live;
            }
            EXPECT_GE(live, 0);
        }
        EXPECT_EQ(live, 0);
        EXPECT_EQ(int(done.size()), m * v);
        // Forwards before the first backward match Megatron's warm-up count.
        int before = 0;
        for (const auto& a : s) {
            if (a.op == PipelineOp::backward) break;
            ++before;
        }
        int warm = warmup_forwards(sched, pp, r, m, v);
        EXPECT_EQ(before, std::min(sched == Schedule::gpipe ? m : warm + 1, m * v));
    }
}
}  // namespace

TEST(Schedule, InvariantsHold) {
    for (int pp : {1, 2, 4})
        for (int m : {1, 4, 8}) {
            check_invariants(Schedule::gpipe, pp, m, 1);
            check_invariants(Schedule::one_f_one_b, pp, m, 1);
        }
    for (int pp : {2, 4})
        for (int m : {pp, 2 * pp, 4 * pp})
            for (int v : {2, 3}) check_invariants(Schedule::interleaved, pp, m, v);
}

TEST(Schedule, OneFOneBWarmupAndMemory) {
    auto s = pipeline_schedule(Schedule::one_f_one_b, 4, 8);
    EXPECT_EQ(to_string(s[3]), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
    EXPECT_EQ(to_string(s[0]).substr(0, 14), "F0 F1 F2 F3 B0");
    EXPECT_EQ(max_in_flight(s[0]), 4);  // 1F1B holds at most pp microbatches on the first stage
    EXPECT_EQ(max_in_flight(pipeline_schedule(Schedule::gpipe, 4, 8)[0]), 8);
}

TEST(Schedule, InterleavedWarmupFormula) {
    // Megatron: (pp - rank - 1) * 2 + (v - 1) * pp.
    EXPECT_EQ(warmup_forwards(Schedule::interleaved, 4, 0, 8, 2), 3 * 2 + 4);
    EXPECT_EQ(warmup_forwards(Schedule::interleaved, 4, 3, 8, 2), 4);
    auto s = pipeline_schedule(Schedule::interleaved, 2, 4, 2);
    EXPECT_EQ(to_string(s[0]).substr(0, 18), "F0 F1 F0.1 F1.1 F2");
}

TEST(Schedule, InterleavedWithAsManyMicrobatchesAsRanks) {
    // m = pp = 4, v = 2. Megatron-LM before November 2024 ran all 8 forwards first on every rank;
    // Megatron-Core since and PyTorch's ScheduleInterleaved1F1B keep (v - 1) pp + 2 (pp - rank - 1)
    // = 4 on the last rank, capped at 8 on the first, so the last rank's second chunk (the loss)
    // alternates forward and backward. The default is today's order.
    EXPECT_EQ(warmup_forwards(Schedule::interleaved, 4, 3, 4, 2, true), 8);
    EXPECT_EQ(warmup_forwards(Schedule::interleaved, 4, 3, 4, 2), 4);
    EXPECT_EQ(warmup_forwards(Schedule::interleaved, 4, 0, 4, 2), 8);
    const auto megatron = pipeline_schedule(Schedule::interleaved, 4, 4, 2, true);
    const auto torch = pipeline_schedule(Schedule::interleaved, 4, 4, 2);
    EXPECT_EQ(to_string(megatron[3]), "F0 F1 F2 F3 F0.1 F1.1 F2.1 F3.1 B0.1 B1.1 B2.1 B3.1 B0 B1 B2 B3");
    EXPECT_EQ(to_string(torch[3]), "F0 F1 F2 F3 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.1 B3.1 B0 B1 B2 B3");
    EXPECT_EQ(max_in_flight(megatron[3]), 8);
    EXPECT_EQ(max_in_flight(torch[3]), 5);
    EXPECT_EQ(torch[0], megatron[0]);
}
