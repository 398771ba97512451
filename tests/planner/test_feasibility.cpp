// The feasibility rules, one by one, their agreement with core's validate_plan, and the memory
// lower bound against the simulator's estimate.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/presets.h"
#include "planner/feasibility.h"
#include "planner/search_space.h"
#include "plan_fixtures.h"
#include "simulator/simulate.h"
#include "simulator/software_stack.h"

using namespace tessel;
using tessel::test::make_plan;
using tessel::test::toy_model;

TEST(Feasibility, TensorParallelMustDivideHeads) {
    const ModelSpec m = toy_model(12, 12, 24);
    EXPECT_EQ(check_rules(m, make_plan(4, 1, 2, 1, 1, 8, 2048)), Rule::ok);
    EXPECT_EQ(check_rules(m, make_plan(8, 1, 1, 1, 1, 8, 2048)), Rule::heads_tp);  // 12 % 8
}

TEST(Feasibility, KvHeadsDivideTpOrTpDividesThem) {
    const ModelSpec gqa = toy_model(64, 8, 80);  // Llama-3-70B's heads
    EXPECT_EQ(check_rules(gqa, make_plan(8, 1, 1, 1, 1, 8, 2048)), Rule::ok);
    EXPECT_EQ(check_rules(gqa, make_plan(16, 1, 1, 1, 1, 8, 2048)), Rule::ok);  // 2 ranks per replicated KV head
    const ModelSpec odd = toy_model(48, 6, 24);
    EXPECT_EQ(check_rules(odd, make_plan(4, 1, 1, 1, 1, 8, 2048)), Rule::kv_heads_tp);  // 6 % 4 and 4 % 6
    EXPECT_EQ(check_rules(odd, make_plan(3, 1, 1, 1, 1, 8, 2048)), Rule::ok);
}

TEST(Feasibility, FfnMustSplitOverTp) {
    ModelSpec m = toy_model(16, 16, 8);
    m.ffn_hidden_size = 1000;  // not a multiple of 16
    EXPECT_EQ(check_rules(m, make_plan(16, 1, 1, 1, 1, 8, 2048)), Rule::ffn_tp);
}

TEST(Feasibility, PipelineSplits) {
    // Even splits, with or without interleaving.
    EXPECT_TRUE(pipeline_split_supported(96, 12, 1));
    EXPECT_TRUE(pipeline_split_supported(96, 12, 2));
    EXPECT_FALSE(pipeline_split_supported(96, 12, 3));  // 96 / 36
    // Llama-3-405B: 126 layers on 16 stages = 7 on the first and last, 8 on the 14 between
    // (Megatron's --decoder-first/last-pipeline-num-layers 7).
    EXPECT_TRUE(pipeline_split_supported(126, 16, 1));
    // 32 layers on 7 stages: 4 5 5 5 5 5 3, the middle stages alike and the ends shorter.
    EXPECT_TRUE(pipeline_split_supported(32, 7, 1));
    // 8 layers on 7 stages: middle stages of 2 leave nothing for the ends, of 1 too many for them.
    EXPECT_FALSE(pipeline_split_supported(8, 7, 1));
    EXPECT_FALSE(pipeline_split_supported(8, 16, 1));  // more stages than layers
    // Interleaved, the same rule over the pp x v chunks: 126 on 16 x 2 = 3, 30 x 4, 3 (torchtitan's
    // default split of Llama 3.1 405B); 20 on 4 x 2 = 1, 6 x 3, 1; 126 on 16 x 3 cannot (46 middle
    // chunks of 3 exceed 126, and of 2 leave 34 for the two ends).
    EXPECT_TRUE(pipeline_split_supported(126, 16, 2));
    EXPECT_TRUE(pipeline_split_supported(20, 4, 2));
    EXPECT_FALSE(pipeline_split_supported(126, 16, 3));
    const ModelSpec m = toy_model(8, 8, 96);
    EXPECT_EQ(check_rules(m, make_plan(1, 12, 1, 1, 1, 12, 2048, 3)), Rule::layers_pp);
    EXPECT_EQ(check_rules(m, make_plan(1, 1, 1, 1, 1, 12, 2048, 2)), Rule::layers_pp);  // interleaving without PP
}

TEST(Feasibility, PipelineSplitRuleAgreesWithTheSplitItself) {
    // The rule is a closed form (it is asked for every v of every depth); the reference is the
    // split layers_per_chunk builds: supported when its middle chunks are alike and none is empty.
    for (int layers = 1; layers <= 200; ++layers)
        for (int pp = 1; pp <= 16; ++pp)
            for (int v = 1; v <= 8; ++v) {
                bool built = pp * v <= layers;
                if (built) {
                    const std::vector<int> split = layers_per_chunk(layers, pp, v);
                    for (std::size_t c = 2; c + 1 < split.size(); ++c) built = built && split[c] == split[1];
                    for (int n : split) built = built && n >= 1;
                }
                EXPECT_EQ(pipeline_split_supported(layers, pp, v), built) << layers << " layers, pp " << pp << ", v " << v;
            }
}

TEST(Feasibility, ContextParallelNeedsTwoChunksPerRank) {
    const ModelSpec m = toy_model(8, 8, 8, 64, 4096);
    EXPECT_EQ(check_rules(m, make_plan(1, 1, 1, 4, 1, 8, 4096)), Rule::ok);
    EXPECT_EQ(check_rules(m, make_plan(1, 1, 1, 3, 1, 8, 4096)), Rule::cp_seq);  // 4096 % 6
}

TEST(Feasibility, GlobalBatchMustSplitOverDpAndMicrobatch) {
    const ModelSpec m = toy_model(8, 8, 8);
    EXPECT_EQ(check_rules(m, make_plan(1, 1, 4, 1, 2, 64, 2048)), Rule::ok);
    EXPECT_EQ(check_rules(m, make_plan(1, 1, 4, 1, 2, 60, 2048)), Rule::batch_dp);  // 60 % 8
}

TEST(Feasibility, InterleavingNeedsMicrobatchesMultipleOfPp) {
    const ModelSpec m = toy_model(8, 8, 16);
    EXPECT_EQ(check_rules(m, make_plan(1, 4, 1, 1, 1, 8, 2048, 2)), Rule::ok);                      // 8 % 4
    EXPECT_EQ(check_rules(m, make_plan(1, 4, 1, 1, 1, 6, 2048, 2)), Rule::interleave_microbatches);  // 6 % 4
    EXPECT_EQ(check_rules(m, make_plan(1, 4, 1, 1, 1, 6, 2048, 1)), Rule::ok);  // plain 1F1B has no such rule
}

TEST(Feasibility, SequenceParallelNeedsTp) {
    const ModelSpec m = toy_model(8, 8, 8);
    EXPECT_EQ(check_rules(m, make_plan(1, 1, 1, 1, 1, 8, 2048, 1, 0, Recompute::none, true)), Rule::sp_seq);
    EXPECT_EQ(check_rules(m, make_plan(2, 1, 1, 1, 1, 8, 2048, 1, 0, Recompute::none, true)), Rule::ok);
}

TEST(Feasibility, LearnedPositionsLimitTheSequence) {
    const ModelSpec m = load_model("gpt3-175b");
    EXPECT_EQ(check_rules(m, make_plan(8, 1, 1, 1, 1, 8, 4096)), Rule::positions);
}

TEST(Feasibility, RulesAgreeWithCoreValidatePlan) {
    // Whatever the planner accepts, core (which `simulate` and `run` use) accepts too.
    const ModelSpec m = toy_model(24, 8, 30, 64, 4096);
    int accepted = 0;
    for (int tp : {1, 2, 3, 4, 8, 12, 24})
        for (int pp : {1, 2, 3, 4, 5, 6, 8})
            for (int cp : {1, 2, 3})
                for (int v : {1, 2, 3, 5})
                    for (bool sp : {false, true}) {
                        const Plan p = make_plan(tp, pp, 2, cp, 2, 48, 4096, v, 1, Recompute::selective, sp);
                        if (check_rules(m, p) != Rule::ok) continue;
                        ++accepted;
                        EXPECT_NO_THROW(validate_plan(p, m, p.world_size(), "test")) << p.describe();
                    }
    EXPECT_GT(accepted, 20);
}

TEST(Feasibility, MemoryLowerBoundNeverExceedsTheEstimate) {
    const ModelSpec m = load_model("gpt3-175b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 384);
    // Under each stack's options: GPT-3 keeps dropout's masks by default and drops them under
    // torchtitan; Megatron-LM before November 2024 ran all forwards first at m = pp.
    SimulateOptions old_megatron = stack_defaults(kMegatronLM, Precision::bf16);
    old_megatron.all_forwards_first_at_m_equal_pp = true;
    const std::vector<SimulateOptions> stacks = {SimulateOptions{}, stack_defaults(kTorchtitan, Precision::bf16), old_megatron};
    for (const SimulateOptions& o : stacks)
    for (int tp : {1, 4, 8})
        for (int pp : {1, 6, 12, 24})
            for (int v : {1, 2})
                for (int zero : {0, 1, 3})
                    for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full})
                        for (int mb : {1, 4}) {
                            const int dp = 384 / (tp * pp);
                            // Either many microbatches or as many as pipeline ranks.
                            for (int batch : {1536, dp * mb * pp}) {
                            Plan p = make_plan(tp, pp, dp, 1, mb, batch, 2048, v, zero, rc, tp > 1);
                            if (check_rules(m, p) != Rule::ok) continue;
                            const double bound = memory_lower_bound_GiB(m, p, activation_options(m, o));
                            const double exact = estimate_memory(m, c, p, o).peak;
                            EXPECT_LE(bound, exact * (1 + 1e-9)) << p.describe();
                            // and it is not vacuous (the simulator's defaults, many microbatches)
                            if (&o == &stacks[0] && batch == 1536) {
                                EXPECT_GT(bound, 0.3 * exact) << p.describe();
                            }
                            }
                        }
}

TEST(Feasibility, UsableMemoryKeepsTheHeadroom) {
    const ClusterSpec c = load_cluster("dgx-a100");
    EXPECT_DOUBLE_EQ(usable_memory_GiB(c, 0.10), 72.0);
    EXPECT_DOUBLE_EQ(usable_memory_GiB(c, 0.0), 80.0);
}
