// Plan parsing and the divisibility rules Megatron enforces.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/plan.h"
#include "core/presets.h"
#include "tests/planner/plan_fixtures.h"

using namespace tessel;

TEST(Plan, RoundTripsThroughJson) {
    Plan p;
    p.tp = 8, p.pp = 8, p.dp = 16, p.zero_stage = 1, p.global_batch_size = 1536, p.virtual_stages = 2;
    p.schedule = Schedule::interleaved, p.sequence_parallel = true, p.recompute = Recompute::selective;
    p.tp_comm_overlap = true;
    Plan q = parse_plan(to_json(p), "p.json");
    EXPECT_EQ(to_json(q), to_json(p));
    EXPECT_TRUE(q.tp_comm_overlap);
    EXPECT_EQ(q.num_microbatches(), 1536 / 16);
}

TEST(Plan, InterleavingNeedsChunksAndOverlapNeedsSequenceParallelism) {
    // Megatron interleaves only with virtual pipeline stages, asserts --sequence-parallel under
    // --tp-comm-overlap, and recomputes at most a chunk's layers.
    const auto m = load_model("llama3-8b");
    auto message = [&](const Plan& p) {
        try {
            validate_plan(p, m, 0, "p.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    Plan p;
    p.tp = 2, p.pp = 2, p.global_batch_size = 4;
    p.schedule = Schedule::interleaved;
    EXPECT_NE(message(p).find("key 'schedule'"), std::string::npos) << message(p);
    p.virtual_stages = 2;
    EXPECT_EQ(message(p), "");
    p.tp_comm_overlap = true;
    EXPECT_NE(message(p).find("key 'tp_comm_overlap'"), std::string::npos) << message(p);
    p.sequence_parallel = true;
    EXPECT_EQ(message(p), "");
    p.recompute = Recompute::full;
    p.recompute_layers = 8;  // 32 layers on 2 x 2 chunks of 8
    EXPECT_EQ(message(p), "");
    p.recompute_layers = 9;
    EXPECT_NE(message(p).find("key 'recompute_layers'"), std::string::npos) << message(p);
}

TEST(Plan, RulesNameTheKey) {
    auto m = load_model("llama3-8b");
    Plan p;
    p.tp = 3;
    try {
        validate_plan(p, m, 0, "p.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("key 'tp'"), std::string::npos) << e.what();
    }
    p.tp = 2, p.dp = 4, p.microbatch_size = 3, p.global_batch_size = 16;
    EXPECT_THROW(validate_plan(p, m, 8, "p.json"), InputError);  // 16 % 12 != 0
    p.microbatch_size = 2;
    EXPECT_NO_THROW(validate_plan(p, m, 8, "p.json"));
    EXPECT_THROW(validate_plan(p, m, 16, "p.json"), InputError);  // world size mismatch
    EXPECT_THROW(parse_plan(json::parse(R"({"virtual_stages": 2, "schedule": "1f1b"})"), "p"), InputError);
    EXPECT_THROW(parse_plan(json::parse(R"({"placement": "tp-dp-pp"})"), "p"), InputError);
    EXPECT_THROW(parse_plan(json::parse(R"({"tp": 0})"), "p"), InputError);
}

TEST(Plan, BlockRecomputeCountsLayersPerChunk) {
    // Megatron's --recompute-method block --recompute-num-layers N: N layers of each model chunk.
    Plan p;
    p.recompute = Recompute::full;
    p.recompute_layers = 5;
    EXPECT_EQ(parse_plan(to_json(p), "p.json").recompute_layers, 5);
    EXPECT_DOUBLE_EQ(recomputed_layer_fraction(p, 32), 5.0 / 32);  // one chunk of 32
    p.pp = 4;  // four chunks of 8: 5 of each
    EXPECT_DOUBLE_EQ(recomputed_layer_fraction(p, 32), 20.0 / 32);
    p.pp = 8;  // eight chunks of 4: all of each
    EXPECT_DOUBLE_EQ(recomputed_layer_fraction(p, 32), 1.0);
    p.recompute_layers = 0;  // every layer
    EXPECT_DOUBLE_EQ(recomputed_layer_fraction(p, 32), 1.0);
    EXPECT_FALSE(to_json(p).contains("recompute_layers"));  // written only where it counts
    // A count without full recompute is a contradiction, named by its key.
    try {
        parse_plan(json::parse(R"({"recompute": "selective", "recompute_layers": 4})"), "p.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("recompute_layers"), std::string::npos) << e.what();
    }
    EXPECT_THROW(parse_plan(json::parse(R"({"recompute": "full", "recompute_layers": -1})"), "p"), InputError);
}

// Each size is in range alone; their products are not: 4096 x 2^20 sequences per microbatch round
// is 2^32, which an int wraps to 0 (a division by it ended the process).
TEST(Plan, ProductsOfTheSizesAreCheckedIn64Bits) {
    const auto m = load_model("tiny-gpt");
    const Plan p = parse_plan(json{{"dp", 4096}, {"microbatch_size", 1 << 20}, {"global_batch_size", 1}, {"seq_length", 128}},
                              "p.json");
    try {
        validate_plan(p, m, 4096, "p.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("global_batch_size"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("4294967296"), std::string::npos) << e.what();
    }
    // Without the key the default (one microbatch per replica) is held to the same rule.
    EXPECT_THROW(validate_plan(parse_plan(json{{"dp", 4096}, {"microbatch_size", 1 << 20}}, "p.json"), m, 0, "p.json"),
                 InputError);
    Plan wide;
    wide.tp = 1 << 16, wide.pp = 1 << 16, wide.global_batch_size = 1;  // 2^32 GPUs
    EXPECT_THROW(validate_plan(wide, m, 0, "p.json"), InputError);
}

TEST(Plan, MicrobatchesPerStepAreBounded) {
    // A billion sequences on 8 GPUs would be 125 million microbatches, each laid out as events:
    // the simulation ran out of 24 GiB. At most 65536 per step; a larger microbatch takes fewer.
    auto m = load_model("llama3-8b");
    Plan p;
    p.dp = 8;
    p.global_batch_size = 8 * 65536;
    EXPECT_NO_THROW(validate_plan(p, m, 8, "p.json"));
    p.global_batch_size = 8 * 65537;
    try {
        validate_plan(p, m, 8, "p.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("at most 65536 microbatches"), std::string::npos) << e.what();
    }
    p.microbatch_size = 65537;
    EXPECT_NO_THROW(validate_plan(p, m, 8, "p.json"));
}

TEST(Plan, UnevenInterleavedChunksShortenOnlyTheEnds) {
    const ModelSpec m = load_model("llama3-405b");  // 126 layers
    Plan p = tessel::test::make_plan(8, 16, 1, 1, 1, 32, 8192, 2);
    EXPECT_NO_THROW(validate_plan(p, m, 128, "p.json"));
    const auto l = layers_per_chunk(126, 16, 2);  // 2 x 3 + 30 x 4 = 126
    ASSERT_EQ(l.size(), 32u);
    EXPECT_EQ(l.front(), 3);
    EXPECT_EQ(l.back(), 3);
    for (std::size_t c = 1; c + 1 < l.size(); ++c) EXPECT_EQ(l[c], 4) << c;
    p.virtual_stages = 3;  // 48 chunks: 126 = 48 x 2 + 30 leaves 2s among 3s
    try {
        validate_plan(p, m, 128, "p.json");
        ADD_FAILURE() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("virtual_stages"), std::string::npos) << e.what();
    }
}

// 81 layers on 4 stages: the middle-first remainder gives 20 20 21 20, whose middle stages differ
// (no framework writes that, and the planner found no plan for a model it had sized itself). The
// middle stages take 21 each and the ends the other 39: Megatron's --decoder-first-pipeline-num-layers
// 20 --decoder-last-pipeline-num-layers 19.
TEST(Plan, MiddleStagesThatWouldDifferTakeTheLargerShare) {
    EXPECT_EQ(layers_per_chunk(81, 4, 1), (std::vector<int>{20, 21, 21, 19}));
    EXPECT_TRUE(pipeline_split_supported(81, 4, 1));
    EXPECT_EQ(layers_per_chunk(81, 8, 1), (std::vector<int>{8, 11, 11, 11, 11, 11, 11, 7}));
    EXPECT_EQ(layers_per_chunk(50, 4, 2), (std::vector<int>{4, 7, 7, 7, 7, 7, 7, 4}));
    for (int layers : {30, 48, 80, 81, 95, 126})
        for (int chunks : {4, 6, 8, 16}) {
            const auto l = layers_per_chunk(layers, chunks, 1);
            int sum = 0;
            for (int x : l) sum += x;
            EXPECT_EQ(sum, layers) << layers << " on " << chunks;
            if (!pipeline_split_supported(layers, chunks, 1)) continue;
            for (std::size_t c = 2; c + 1 < l.size(); ++c) EXPECT_EQ(l[c], l[1]) << layers << " on " << chunks;
            EXPECT_LE(l.front(), l[1]);
            EXPECT_LE(l.back(), l[1]);
            EXPECT_GE(l.back(), 1);
        }
}

TEST(Plan, UnevenLayersGoToMiddleStages) {
    auto l = layers_per_chunk(30, 4, 1);
    int sum = 0;
    for (int x : l) sum += x;
    EXPECT_EQ(sum, 30);
    EXPECT_EQ(l.front(), 7);
    EXPECT_EQ(l.back(), 7);
}

TEST(Plan, TheLmHeadCountsAsLayersOfTheLastChunk) {
    // 32 layers with the head counted as 2: 34 split over 2 stages is 17 + 17, the last giving up 2.
    EXPECT_EQ(layers_per_chunk(32, 2, 1, 2), (std::vector<int>{17, 15}));
    // Interleaved, 2 x 3 chunks: 34 = 5 + 4 x 6 + 5 (the spare layers in the middle), the last 5 - 2.
    EXPECT_EQ(layers_per_chunk(32, 2, 3, 2), (std::vector<int>{5, 6, 6, 6, 6, 3}));
    EXPECT_TRUE(pipeline_split_supported(32, 2, 3, 2));
    // 4 layers on 2 stages with the head as 3: 7 = 3 + 4 leaves the last stage 1; as 4, 8 = 4 + 4
    // leaves it none.
    EXPECT_EQ(layers_per_chunk(4, 2, 1, 3), (std::vector<int>{3, 1}));
    EXPECT_TRUE(pipeline_split_supported(4, 2, 1, 3));
    EXPECT_FALSE(pipeline_split_supported(4, 2, 1, 4));
    EXPECT_FALSE(pipeline_split_supported(32, 1, 1, 1));  // no pipeline, no last stage to spare

    const auto m = load_model("llama3-8b");
    Plan p;
    p.pp = 2;
    p.lm_head_layers = 2;
    p.global_batch_size = 8;
    EXPECT_NO_THROW(validate_plan(p, m, 2, "p.json"));
    Plan q = parse_plan(to_json(p), "p.json");
    EXPECT_EQ(q.lm_head_layers, 2);
    EXPECT_NE(p.describe().find("head2"), std::string::npos);
    p.pp = 1;
    try {
        validate_plan(p, m, 1, "p.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("lm_head_layers"), std::string::npos) << e.what();
    }
    EXPECT_THROW(parse_plan(json::parse(R"({"lm_head_layers": -1})"), "p"), InputError);
}
