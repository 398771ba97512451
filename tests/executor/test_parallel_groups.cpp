// Process groups against Megatron-LM's initialize_model_parallel docstring (16 GPUs, TP=2, PP=4,
// so DP=2): its tensor-, pipeline- and data-parallel groups, and its embedding groups (the first
// and last rank of each pipeline).
#include <gtest/gtest.h>

#include "executor/parallel_groups.h"

namespace tessel {

using Groups = std::vector<std::vector<int>>;

TEST(ParallelGroups, MegatronSixteenGpuExample) {
    Plan p;
    p.tp = 2;
    p.pp = 4;
    p.dp = 2;
    p.placement = "tp-cp-dp-pp";
    const GroupLists g = group_lists(p);
    EXPECT_EQ(g.tp, (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
    EXPECT_EQ(g.pp, (Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
    EXPECT_EQ(g.dp, (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
    EXPECT_EQ(g.embedding, (Groups{{0, 12}, {1, 13}, {2, 14}, {3, 15}}));
}

TEST(ParallelGroups, NoEmbeddingGroupWithoutAPipeline) {
    Plan p;
    p.tp = 2;
    p.dp = 2;
    EXPECT_TRUE(group_lists(p).embedding.empty());
}

TEST(ParallelGroups, OneRankWorldWithTheSelfCommunicator) {
    Plan p;
    ParallelGroups g = make_parallel_groups(p, make_self_communicator());
    ASSERT_TRUE(g.tp && g.pp && g.dp_cp && g.world);
    EXPECT_EQ(g.tp->size(), 1);
    EXPECT_FALSE(g.embedding);
}

}  // namespace tessel
