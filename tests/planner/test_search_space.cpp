// The search space: default batch and request, placements.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/errors.h"
#include "core/presets.h"
#include "core/rank_groups.h"
#include "planner/search_space.h"

using namespace tessel;

TEST(SearchSpace, DefaultGlobalBatch) {
    // 2^21 / 2048 = 1024 sequences; 384 = 3 * 2^7, so the smallest 3 * 2^k >= 1024 is 1536
    // (the batch Narayanan et al. 2021 used for GPT-3 on 384 GPUs).
    EXPECT_EQ(default_global_batch(2048, 384), 1536);
    // 2^21 / 8192 = 256 sequences on 64 GPUs (a power of two: no odd factor).
    EXPECT_EQ(default_global_batch(8192, 64), 256);
    // At least one sequence per 8 GPUs: 16384 GPUs at 8192 tokens -> 2048.
    EXPECT_EQ(default_global_batch(8192, 16384), 2048);
    // 3072 = 3 * 2^10 at 2048 tokens: 3 * 2^9 = 1536.
    EXPECT_EQ(default_global_batch(2048, 3072), 1536);
}

TEST(SearchSpace, CompleteRequestFillsDefaults) {
    const ModelSpec m = load_model("llama3-70b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 64);
    const PlanRequest r = complete_request(m, c, 0, 0);
    EXPECT_EQ(r.num_gpus, 64);
    EXPECT_EQ(r.seq_length, 8192);
    EXPECT_EQ(r.global_batch_size, 256);
    EXPECT_EQ(r.precision, Precision::bf16);
    const PlanRequest given = complete_request(m, c, 512, 4096);
    EXPECT_EQ(given.global_batch_size, 512);
    EXPECT_EQ(given.seq_length, 4096);
}

TEST(SearchSpace, PlacementStrideMatchesCoreRankGroups) {
    const ParallelSizes sizes{2, 3, 4, 5};
    for (const char* order : {"tp-cp-dp-pp", "tp-pp-dp-cp", "tp-dp-cp-pp"})
        for (const char* dim : {"tp", "cp", "dp", "pp"}) {
            const auto group = group_of(0, order, sizes, dim);
            const int stride = placement_stride(order, sizes, dim);
            ASSERT_GE(group.size(), 2u);
            EXPECT_EQ(group[1] - group[0], stride) << order << " " << dim;
        }
}

TEST(SearchSpace, PlacementsCollapseWhenOrderCannotMatter) {
    // Inside one node every order is the same.
    EXPECT_EQ(distinct_placements({8, 1, 1, 1}, 8).size(), 1u);
    // Only TP and one other dimension larger than 1: the order of the size-1 ones is irrelevant.
    EXPECT_EQ(distinct_placements({8, 1, 16, 1}, 8).size(), 1u);
    // TP 8 fills a node; DP and PP across nodes: DP-first and PP-first differ only in which
    // ranks share... nothing inside a node, so they collapse too.
    EXPECT_EQ(distinct_placements({8, 1, 4, 4}, 8).size(), 1u);
    // TP 2 leaves room for 4 more ranks per node: DP-inside and PP-inside differ.
    const auto orders = distinct_placements({2, 1, 4, 4}, 8);
    EXPECT_GE(orders.size(), 2u);
    EXPECT_EQ(orders.front(), "tp-cp-dp-pp");  // Megatron's default first
    for (const auto& o : orders) EXPECT_EQ(o.substr(0, 2), "tp");
}

TEST(SearchSpace, GroupsSitAlikeOnlyWhenEachSpanFitsTheNodes) {
    // TP 3 on 8-GPU nodes: groups {6, 7, 8} and {15, 16, 17} cross a node boundary, {0, 1, 2} does not.
    EXPECT_FALSE(groups_sit_alike("tp-cp-dp-pp", {3, 1, 8, 16}, 8));
    EXPECT_TRUE(groups_sit_alike("tp-cp-dp-pp", {4, 1, 12, 8}, 8));
    EXPECT_TRUE(groups_sit_alike("tp-cp-dp-pp", {16, 1, 2, 2}, 8));  // whole nodes
    // TP 2 then DP 3: DP groups {0, 2, 4} in one node, {6, 8, 10} across two.
    EXPECT_FALSE(groups_sit_alike("tp-dp-cp-pp", {2, 1, 3, 8}, 8));
    EXPECT_TRUE(groups_sit_alike("tp-pp-dp-cp", {2, 1, 3, 4}, 8));  // TP 2 x PP 4 fills a node
    EXPECT_TRUE(groups_sit_alike("tp-cp-dp-pp", {3, 1, 2, 1}, 8));  // one node: nothing crosses
}

TEST(SearchSpace, FrameworkLimits) {
    EXPECT_EQ(limits_for(Framework::megatron).zero_stages, (std::vector<int>{0, 1}));
    EXPECT_FALSE(limits_for(Framework::deepspeed).interleaving);
    EXPECT_FALSE(limits_for(Framework::deepspeed).context_parallel);
    const SpaceLimits tt = limits_for(Framework::torchtitan);
    EXPECT_EQ(tt.zero_stages, (std::vector<int>{0, 1, 2, 3}));  // 1: its FSDP under pipelining
    EXPECT_TRUE(tt.ddp_only_1d && tt.pipeline_fsdp_gathers_once);
    // Every export target splits the KV heads over TP: none replicates them.
    for (Framework f : {Framework::megatron, Framework::deepspeed, Framework::torchtitan})
        EXPECT_TRUE(limits_for(f).kv_heads_split_by_tp) << to_string(f);
    EXPECT_FALSE(limits_for(Framework::any).kv_heads_split_by_tp);
    EXPECT_EQ(parse_framework("torchtitan"), Framework::torchtitan);
    EXPECT_THROW(parse_framework("jax"), InputError);
}

TEST(SearchSpace, DefaultPrecisionIsOneTheGpuHas) {
    // bf16 where the GPU has it, fp16 on a V100-like GPU, fp32 on a calibrated CPU cluster.
    auto gpu = [](std::map<Precision, double> peaks) {
        GpuSpec g;
        g.peak_tflops = std::move(peaks);
        return g;
    };
    EXPECT_EQ(default_precision(gpu({{Precision::bf16, 312}, {Precision::fp32, 19.5}})), Precision::bf16);
    EXPECT_EQ(default_precision(gpu({{Precision::fp16, 125}, {Precision::fp32, 15.7}})), Precision::fp16);
    EXPECT_EQ(default_precision(gpu({{Precision::fp32, 1.5}})), Precision::fp32);
    ClusterSpec c = load_cluster("dgx-a100");
    c.gpu = gpu({{Precision::fp32, 1.5}});
    const ModelSpec m = load_model("tiny-gpt");
    EXPECT_EQ(complete_request(m, c, 0, 0).precision, Precision::fp32);
}
