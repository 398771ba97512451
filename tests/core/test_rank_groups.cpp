// Rank groups against Megatron-LM's docstring examples (parallel_state.py).
#include <gtest/gtest.h>

#include "core/rank_groups.h"

using namespace tessel;
using Groups = std::vector<std::vector<int>>;

TEST(RankGroups, MegatronEightGpuExample) {
    // generate_masked_orthogonal_rank_groups docstring: order tp-pp-dp, sizes 2-2-2.
    // Our order string lists the same dims innermost first; cp = 1 is placed anywhere.
    ParallelSizes s{2, 1, 2, 2};
    EXPECT_EQ(rank_groups("tp-pp-dp-cp", s, "dp"), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
    EXPECT_EQ(rank_groups("tp-pp-dp-cp", s, "tp"), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
    EXPECT_EQ(rank_groups("tp-pp-dp-cp", s, "pp"), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
}

TEST(RankGroups, MegatronSixteenGpuExample) {
    // initialize_model_parallel docstring: 16 GPUs, TP 2, PP 4 (so DP 2), order tp-dp-pp:
    // 8 TP groups [g0,g1]..., 4 PP groups [g0,g4,g8,g12]..., 8 DP groups [g0,g2]...
    ParallelSizes s{2, 1, 2, 4};
    auto tp = rank_groups("tp-cp-dp-pp", s, "tp");
    auto pp = rank_groups("tp-cp-dp-pp", s, "pp");
    auto dp = rank_groups("tp-cp-dp-pp", s, "dp");
    ASSERT_EQ(tp.size(), 8u);
    EXPECT_EQ(tp[0], (std::vector<int>{0, 1}));
    EXPECT_EQ(tp[7], (std::vector<int>{14, 15}));
    EXPECT_EQ(pp, (Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
    EXPECT_EQ(dp[0], (std::vector<int>{0, 2}));
    EXPECT_EQ(dp[1], (std::vector<int>{1, 3}));
}

TEST(RankGroups, CoordsRoundTripAndGroupsPartitionTheWorld) {
    for (std::string order : {"tp-cp-dp-pp", "dp-tp-cp-pp", "pp-dp-cp-tp"}) {
        ParallelSizes s{2, 2, 3, 2};
        for (int r = 0; r < s.world(); ++r) EXPECT_EQ(rank_of(coords_of(r, order, s), order, s), r);
        for (std::string dims : {"tp", "cp", "dp", "pp", "tp-cp", "dp-cp"}) {
            std::vector<int> seen(s.world(), 0);
            for (auto& g : rank_groups(order, s, dims))
                for (int r : g) seen[r]++;
            for (int c : seen) EXPECT_EQ(c, 1) << order << " " << dims;
            for (int r = 0; r < s.world(); ++r) {
                auto g = group_of(r, order, s, dims);
                EXPECT_NE(std::find(g.begin(), g.end(), r), g.end());
            }
        }
    }
}
