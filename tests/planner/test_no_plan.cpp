// When nothing fits: NoPlanFits (exit 3) with the reason — the rule that rejected everything, or
// the nearest misses by memory with their peak against the usable memory.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/presets.h"
#include "planner/search.h"
#include "plan_fixtures.h"

using namespace tessel;
using tessel::test::toy_model;

namespace {
std::string no_plan_message(const ModelSpec& m, const ClusterSpec& c, int gbs, int seq) {
    try {
        search_plans(m, c, complete_request(m, c, gbs, seq), SearchOptions{});
    } catch (const NoPlanFits& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected NoPlanFits";
    return "";
}
}  // namespace

TEST(NoPlan, HeadsNoTensorParallelSizeDivides) {
    // 3 heads on 4 GPUs: TP 2 and 4 break the heads rule, 3 layers cap PP at 2 ... and a global
    // batch of 3 leaves DP 1, so no split reaches 4 GPUs.
    const ModelSpec m = toy_model(3, 3, 3, 64, 6);
    const std::string msg = no_plan_message(m, resize_cluster(load_cluster("dgx-a100"), 4), 3, 6);
    EXPECT_NE(msg.find("break a rule"), std::string::npos) << msg;
    EXPECT_NE(msg.find("TP must divide the attention heads"), std::string::npos) << msg;
    EXPECT_NE(msg.find("3 attention heads"), std::string::npos) << msg;
}

TEST(NoPlan, GpuCountNoPlanUses) {
    // 13 GPUs: TP 13 does not divide 32 heads, PP 13 cannot split 32 layers Megatron's way (11
    // middle stages of 3 are more than 32, of 2 leave 10 for the ends), CP 13 does not divide the
    // sequence into 26 chunks, and DP 13 does not divide a batch of 64.
    const ModelSpec m = load_model("llama2-7b");
    // One GPU of each node, thirteen nodes: a count no node size of the presets divides.
    const ClusterSpec c = resize_cluster(with_gpus_per_node(load_cluster("dgx-a100"), 1), 13);
    const std::string msg = no_plan_message(m, c, 64, 4096);
    EXPECT_NE(msg.find("break a rule"), std::string::npos) << msg;
    EXPECT_NE(msg.find("on 13 GPUs"), std::string::npos) << msg;
    EXPECT_NE(msg.find("global batch must be a multiple of DP x microbatch"), std::string::npos) << msg;
}

TEST(NoPlan, BatchNoDataParallelSizeDivides) {
    // GPT-2 124M fits anywhere, so only the rules can stop it: 16 GPUs, a batch of 3 sequences.
    // DP must then be 1 (3 is odd and 16 is not), and TP x PP x CP = 16 needs TP <= 4 (12 heads),
    // PP <= 12 layers with an expressible split and CP dividing 1024 / 2.
    const ModelSpec m = load_model("gpt2-124m");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 16);
    SearchOptions o;
    o.top_k = 1;
    // Some TP x PP x CP = 16 does pass (tp 4, pp 4 or cp 4), so a plan exists: DP 1 is a plan.
    const SearchResult r = search_plans(m, c, complete_request(m, c, 3, 1024), o);
    EXPECT_EQ(r.best.front().plan.dp, 1);
    // On 11 GPUs nothing does: TP 11 does not divide 12 heads, 12 layers on 11 stages leave the
    // middle uneven (nine middle stages of 2 are more than 12), CP 11 does not divide 1024 into 22
    // chunks, and DP 11 does not divide 3.
    const std::string msg = no_plan_message(m, resize_cluster(with_gpus_per_node(load_cluster("dgx-a100"), 1), 11), 3, 1024);
    EXPECT_NE(msg.find("global batch must be a multiple of DP x microbatch"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--global-batch"), std::string::npos) << msg;
}

TEST(NoPlan, TooBigForMemoryNamesTheClosestPlans) {
    // GPT-3 175B on one 8-GPU node: 2.8 TB of model state cannot fit in 8 x 80 GiB.
    const ModelSpec m = load_model("gpt3-175b");
    const std::string msg = no_plan_message(m, resize_cluster(load_cluster("dgx-a100"), 8), 64, 2048);
    EXPECT_NE(msg.find("none fits in 72.0 GiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the closest"), std::string::npos) << msg;
    // Three nearest misses, each with its peak against the usable memory.
    std::size_t lines = 0, pos = 0;
    while ((pos = msg.find("GiB (weights", pos)) != std::string::npos) ++lines, ++pos;
    EXPECT_EQ(lines, 3u) << msg;
}
