// The values a plan's knobs can take: divisors, microbatch sizes, virtual-stage counts.
#include <gtest/gtest.h>

#include "core/plan_choices.h"

using namespace tessel;

TEST(PlanChoices, DivisorsAscending) {
    EXPECT_EQ(divisors(1), (std::vector<int>{1}));
    EXPECT_EQ(divisors(12), (std::vector<int>{1, 2, 3, 4, 6, 12}));
    EXPECT_EQ(divisors(384).size(), 16u);  // 2^7 * 3: 8 x 2 divisors
}

TEST(PlanChoices, MicrobatchSizesDivideThePerReplicaBatch) {
    EXPECT_EQ(microbatch_sizes(1536, 4), (std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}));
    EXPECT_TRUE(microbatch_sizes(100, 3).empty());  // 3 does not divide 100
    for (int mb : microbatch_sizes(1536, 12)) EXPECT_EQ(1536 % (12 * mb), 0);
}

TEST(PlanChoices, VirtualStagesDivideTheLayersPerStage) {
    EXPECT_EQ(virtual_stage_counts(96, 12), (std::vector<int>{1, 2, 4, 8}));  // 8 layers per stage
    EXPECT_EQ(virtual_stage_counts(96, 1), (std::vector<int>{1}));            // no pipeline
    // 126 layers on 16 ranks: 32 chunks of 4 but 3 at the ends (2 x 3 + 30 x 4), 64 of 2 but 1 at the
    // ends (2 + 62 x 2); 48 chunks would leave 2s and 3s in the middle (126 = 48 x 2 + 30).
    EXPECT_EQ(virtual_stage_counts(126, 16), (std::vector<int>{1, 2, 4}));
}

TEST(PlanChoices, FewestBlockRecomputeLayersMatchesAScan) {
    // Against a scan of every count: with fits(N) = N >= need, the fewest count in [1, most - 1].
    for (int most = 1; most <= 9; ++most)
        for (int need = 0; need <= most + 1; ++need) {
            const int got = fewest_block_recompute_layers(most, [&](int n) { return n >= need; });
            int want = 0;
            for (int n = 1; n <= most - 1 && want == 0; ++n)
                if (n >= need) want = n;
            EXPECT_EQ(got, want) << "most " << most << " need " << need;
        }
}
