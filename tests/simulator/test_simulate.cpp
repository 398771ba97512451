// The end-to-end simulator: its accounting identities and the bounds it promises the planner.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/accounting.h"
#include "core/errors.h"
#include "core/presets.h"
#include "core/units.h"
#include "simulator/compute_cost.h"
#include "simulator/hardware_efficiency.h"
#include "simulator/memory_model.h"
#include "simulator/simulate.h"
#include "test_clusters.h"
#include "tests/planner/plan_fixtures.h"

using namespace tessel;

namespace {
Plan gpt3_plan() {
    Plan p;
    p.tp = 8;
    p.pp = 8;
    p.dp = 2;
    p.microbatch_size = 1;
    p.global_batch_size = 64;
    p.seq_length = 2048;
    p.virtual_stages = 2;
    p.schedule = Schedule::interleaved;
    p.sequence_parallel = true;
    p.recompute = Recompute::selective;
    p.zero_stage = 1;
    return p;
}
}  // namespace

TEST(Simulate, BreakdownAddsUpToTheStep) {
    const ModelSpec m = load_model("gpt3-175b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 128);
    const auto r = simulate(m, c, gpt3_plan());
    const auto& t = r.time_s;
    const double sum = t.compute + t.recompute + t.bubble + t.tp_comm_exposed + t.cp_comm_exposed + t.pp_comm_exposed +
                       t.dp_comm_exposed + t.optimizer;
    EXPECT_NEAR(sum, r.step_time_s, 1e-9 * r.step_time_s);
    EXPECT_GT(t.compute, 0.5 * r.step_time_s);
    EXPECT_GT(t.bubble, 0.0);
    EXPECT_GT(t.tp_comm_exposed, 0.0);
}

TEST(Simulate, UtilizationFollowsTheFlopCount) {
    const ModelSpec m = load_model("gpt3-175b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 128);
    const Plan p = gpt3_plan();
    const auto r = simulate(m, c, p);
    const auto f = flops_per_token(m, p.seq_length, p.recompute);
    const double tokens = 64.0 * 2048;
    EXPECT_NEAR(r.tokens_per_s, tokens / r.step_time_s, 1e-6 * r.tokens_per_s);
    EXPECT_NEAR(r.mfu, f.model * tokens / (r.step_time_s * 128 * 312e12), 1e-9);
    EXPECT_NEAR(r.hfu / r.mfu, f.hardware / f.model, 1e-9);
    EXPECT_GT(r.mfu, 0.2);
    EXPECT_LT(r.mfu, 0.8);
}

TEST(Simulate, LowerBoundNeverExceedsTheSimulation) {
    const ModelSpec m = load_model("llama3-70b");
    const ClusterSpec c = load_cluster("dgx-h100");
    for (int tp : {4, 8})
        for (int pp : {1, 4, 8}) {
            Plan p;
            p.tp = tp;
            p.pp = pp;
            p.dp = 64 / (tp * pp) > 0 ? 64 / (tp * pp) : 1;
            p.microbatch_size = 1;
            p.global_batch_size = 32 * p.dp;
            p.seq_length = 8192;
            p.sequence_parallel = true;
            p.recompute = Recompute::full;
            const auto cl = resize_cluster(c, p.world_size());
            EXPECT_LE(step_time_lower_bound(m, cl, p), simulate(m, cl, p).step_time_s) << p.describe();
        }
}

// Long sequences make attention most of the step, where the bound's count (the whole square, a
// backward of twice the forward) exceeds what the causal kernels run: the bound must still be lower.
TEST(Simulate, LowerBoundHoldsWhereAttentionDominates) {
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 8);
    for (int seq : {131072, 262144, 524288})
        for (int cp : {1, 8}) {
            Plan p;
            p.tp = 8 / cp;
            p.cp = cp;
            p.global_batch_size = 1;
            p.seq_length = seq;
            p.recompute = Recompute::full;
            EXPECT_LE(step_time_lower_bound(m, c, p), simulate(m, c, p).step_time_s) << p.describe() << " seq " << seq;
        }
}

namespace {
// DGX H100 nodes cut to `per_node` GPUs, one NIC each.
ClusterSpec h100_nodes(int nodes, int per_node) {
    ClusterSpec c = load_cluster("dgx-h100");
    c.num_nodes = nodes;
    c.gpus_per_node = per_node;
    c.inter_node.nics_per_node = per_node;
    return c;
}
}  // namespace

// Where tp does not divide the node, some TP groups straddle two nodes although rank 0's does not,
// and every replica waits for the slowest at the data-parallel reduction. Nodes of 6 GPUs, tp 4:
// groups {4..7} and {16..19} put two GPUs on each of two nodes. Nodes of 2 GPUs put every group
// that way; with one NIC per GPU in both clusters the two plans' TP groups are alike.
TEST(Simulate, TheSlowestTensorParallelGroupPacesTheStep) {
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec six = h100_nodes(4, 6), two = h100_nodes(12, 2);
    const ClusterSpec eight = h100_nodes(3, 8);  // tp 4 inside a node
    Plan p;
    p.tp = 4;
    p.dp = 6;
    p.global_batch_size = 24;
    p.seq_length = 4096;
    const auto straddling = simulate(m, six, p), all_across = simulate(m, two, p), inside = simulate(m, eight, p);
    EXPECT_NEAR(straddling.time_s.tp_comm_exposed, all_across.time_s.tp_comm_exposed,
                1e-9 * all_across.time_s.tp_comm_exposed);
    EXPECT_GT(straddling.time_s.tp_comm_exposed, 2.0 * inside.time_s.tp_comm_exposed);
}

// The same for the pipeline's sends: on nodes of 6 GPUs, tp 4 x pp 3 puts stage 1 on ranks 4-7, so
// rank 0 sends to rank 4 inside node 0 while rank 2 sends to rank 6 across to node 1.
TEST(Simulate, TheSlowestPipelineSendPacesTheStep) {
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec six = h100_nodes(2, 6);
    const ClusterSpec twelve = h100_nodes(1, 12);  // one node: every send on NVLink
    const Plan p = tessel::test::make_plan(4, 3, 1, 1, 1, 12, 4096);
    auto longest_send = [&](const ClusterSpec& c) {
        SimulateOptions o;
        o.record_trace = true;
        double longest = 0;
        for (const auto& e : simulate(m, c, p, o).trace)
            if (e.track.find("p2p forward") != std::string::npos) longest = std::max(longest, e.duration_s);
        return longest;
    };
    // A 50 GB/s NIC against 450 GB/s of NVLink, less the latencies both pay.
    EXPECT_GT(longest_send(six), 3.0 * longest_send(twelve));
    // With the latencies zeroed (links and the collective call), a send is S / bw alone: the same
    // S on both clusters (tp 4 without sequence parallelism: each TP rank sends the whole
    // boundary), bw the NIC's 50 GB/s at NCCL's 0.9 across nodes (one NIC per GPU here, so rank
    // 2's send to rank 6 shares it with no one) against NVLink's 450 GB/s at 0.8 inside one:
    //   ratio = (450 x 0.8) / (50 x 0.9) = 360 / 45 = 8.
    auto zero_latency = [](ClusterSpec c) {
        c.intra_node.latency_us = 0;
        c.inter_node.latency_us = 0;
        c.profile = json{{"collective", {{"latency_us", 0}}}};
        return c;
    };
    EXPECT_NEAR(longest_send(zero_latency(six)) / longest_send(zero_latency(twelve)), 8.0, 1e-9);
}

// DeepSpeed's pipeline engine reduces after the flush and takes only ZeRO-0/1; ZeRO-2 keeps only
// its shard of each microbatch's gradients, so it cannot wait for the flush.
TEST(Simulate, ReducingAfterTheFlushWithZero2BucketsIsRefused) {
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 16);
    Plan p = tessel::test::make_plan(2, 2, 4, 1, 1, 64, 2048);
    p.zero_stage = 2;
    SimulateOptions o;
    o.reduce_after_pipeline_flush = true;
    EXPECT_THROW(simulate(m, c, p, o), InputError);
    p.zero_stage = 1;
    EXPECT_NO_THROW(simulate(m, c, p, o));
    p.zero_stage = 2;
    o.zero2_layerwise_gather = true;  // FSDP's SHARD_GRAD_OP reduces layer by layer: no buckets
    EXPECT_NO_THROW(simulate(m, c, p, o));
}

TEST(Simulate, TensorParallelismAcrossNodesIsBoundByTheNics) {
    // tp 16 crosses the node boundary: on nodes with a single 25 GB/s NIC its collectives run
    // at a twelfth of NVLink's 300 GB/s.
    const ModelSpec m = load_model("llama3-70b");
    ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 16);
    c.inter_node.nics_per_node = 1;
    Plan p;
    p.tp = 8;
    p.dp = 2;
    p.global_batch_size = 16;
    p.seq_length = 4096;
    p.sequence_parallel = true;
    p.recompute = Recompute::full;
    p.zero_stage = 3;
    const auto in_node = simulate(m, c, p);
    p.tp = 16;
    p.dp = 1;
    const auto across = simulate(m, c, p);
    EXPECT_GT(across.time_s.tp_comm_exposed, 5.0 * in_node.time_s.tp_comm_exposed);
    // Exactly, with the latencies zeroed (links and collective calls), each TP collective takes
    // factor x S / bw, and S (one microbatch's gathered [s, b, h]) is the same at tp 8 and 16:
    //   tp 8 in a node: (7/8) S / (300 GB/s x 0.8 NCCL intra-node)     = 0.875 S / 240e9
    //   tp 16 over two nodes: the ring crosses each node boundary through the node's one 25 GB/s
    //   NIC, (15/16) S / (25 GB/s x 0.9 NCCL inter-node)                = 0.9375 S / 22.5e9
    // per collective 11.43x; and at dp 1 each GPU runs all 16 microbatches instead of 8: 22.86x.
    ClusterSpec quiet = c;
    quiet.intra_node.latency_us = 0;
    quiet.inter_node.latency_us = 0;
    quiet.profile = json{{"collective", {{"latency_us", 0}}}};
    // Every collective waited for: none beside a GEMM, which would hide more of the faster ring.
    SimulateOptions waiting;
    waiting.tp_backward_overlap = false;
    p.tp = 8;
    p.dp = 2;
    const double in_node_quiet = simulate(m, quiet, p, waiting).time_s.tp_comm_exposed;
    p.tp = 16;
    p.dp = 1;
    const double across_quiet = simulate(m, quiet, p, waiting).time_s.tp_comm_exposed;
    const double hand = 2.0 * (0.9375 / 22.5e9) / (0.875 / 240e9);
    EXPECT_NEAR(across_quiet / in_node_quiet, hand, 1e-6 * hand);
}

// A pipeline send carries the boundary [s, b, h] from every TP rank (Megatron-Core), or 1/tp of it
// under sequence parallelism or the older stacks' scatter/gather: 2 x 4 x 4096 x 1600 bytes =
// 52 MB against 26 MB, each far above the link's latency, so the send takes twice as long.
TEST(Simulate, PipelineSendsSplitOverTensorParallelismOnlyWhenTheStackDoes) {
    const ModelSpec m = load_model("gpt2-1.5b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 16);
    const Plan p = tessel::test::make_plan(2, 4, 2, 1, 4, 64, 4096);
    auto longest_send = [&](bool sp, bool scatter) {
        Plan q = p;
        q.sequence_parallel = sp;
        SimulateOptions o;
        o.record_trace = true;
        o.p2p_scatter_gather = scatter;
        double longest = 0;
        for (const auto& e : simulate(m, c, q, o).trace)
            if (e.track.find("p2p forward") != std::string::npos) longest = std::max(longest, e.duration_s);
        return longest;
    };
    const double whole = longest_send(false, false), split = longest_send(false, true);
    ASSERT_GT(split, 0);
    EXPECT_NEAR(whole / split, 2.0, 0.02);
    EXPECT_DOUBLE_EQ(longest_send(true, false), split);  // sequence parallelism sends 1/tp anyway
}

TEST(Simulate, ZeroThreeGathersEveryLayer) {
    const ModelSpec m = load_model("llama2-7b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 16);
    Plan p;
    p.dp = 16;
    p.microbatch_size = 1;
    p.global_batch_size = 64;
    p.seq_length = 4096;
    p.zero_stage = 1;
    const auto z1 = simulate(m, c, p);
    p.zero_stage = 3;
    const auto z3 = simulate(m, c, p);
    // ZeRO-3 shards the 16-bit weights over the 16 data-parallel ranks (Rajbhandari et al. 2020,
    // sec. 5.3): exactly 1/16 of ZeRO-1's whole copy, which is 2 B x llama2-7b's 6,738,415,616
    // parameters (32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 2 x 32000 x 4096 + 4096).
    const double GiB = 1024.0 * 1024.0 * 1024.0;
    EXPECT_NEAR(z1.memory_GiB.weights * GiB, 2.0 * 6738415616.0, 1.0);
    EXPECT_NEAR(z3.memory_GiB.weights, z1.memory_GiB.weights / 16, 1e-9 * z1.memory_GiB.weights);
    EXPECT_GE(z3.step_time_s, z1.step_time_s * 0.99);
}

TEST(Simulate, BlockRecomputeRepeatsOnlyItsLayers) {
    // On one GPU the recompute time is that of the recomputed layers: with k of L layers
    // recomputed it is k/L of full recompute's, and the hardware FLOPs count k/L of a forward.
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 1);
    Plan p;
    p.microbatch_size = 1;
    p.global_batch_size = 2;
    p.seq_length = 4096;
    p.recompute = Recompute::full;
    const auto full = simulate(m, c, p);
    p.recompute_layers = 8;
    const auto block = simulate(m, c, p);
    EXPECT_NEAR(block.time_s.recompute, 8.0 / m.num_layers * full.time_s.recompute, 1e-9 * full.time_s.recompute);
    EXPECT_NEAR(block.time_s.compute, full.time_s.compute, 1e-9 * full.time_s.compute);
    const auto f = flops_per_token(m, p.seq_length);
    EXPECT_NEAR(block.hfu / block.mfu, (f.model + 8.0 / m.num_layers * f.forward_layers) / f.model, 1e-9);
    Plan none = p;
    none.recompute = Recompute::none;
    none.recompute_layers = 0;
    EXPECT_LT(block.memory_GiB.activations, simulate(m, c, none).memory_GiB.activations);
    EXPECT_GT(block.memory_GiB.activations, full.memory_GiB.activations);
}

TEST(Simulate, JsonHasTheDesignKeys) {
    const ModelSpec m = load_model("tiny-gpt");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 2);
    Plan p;
    p.dp = 2;
    p.global_batch_size = 4;
    p.seq_length = 128;
    const auto r = simulate(m, c, p);
    const json j = to_json(r, m, c);
    for (const char* key : {"fits", "step_time_s", "mfu", "hfu", "model_tflops_per_gpu", "hardware_tflops_per_gpu",
                            "tokens_per_s", "memory_GiB", "time_s", "plan", "model", "cluster"})
        EXPECT_TRUE(j.contains(key)) << key;
    for (const char* key : {"weights", "gradients", "optimizer", "activations", "buffers", "peak"})
        EXPECT_TRUE(j["memory_GiB"].contains(key)) << key;
    for (const char* key : {"compute", "recompute", "bubble", "tp_comm_exposed", "pp_comm_exposed", "dp_comm_exposed",
                            "cp_comm_exposed", "optimizer"})
        EXPECT_TRUE(j["time_s"].contains(key)) << key;
    for (const char* key : {"gemm", "attention", "memory_bound"}) EXPECT_TRUE(j["kernel_time_s"].contains(key)) << key;
}

TEST(Simulate, KernelTimeOnOneGpuIsTheWholeStep) {
    // One GPU has no communication and no bubble: every second of its step is a kernel, and the
    // kinds must cover the recomputed forward and the separate gradient accumulation too.
    const ModelSpec m = load_model("gpt2-124m");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 1);
    const Plan p = tessel::test::make_plan(1, 1, 1, 1, 2, 6, 1024, 1, 0, Recompute::full);
    SimulateOptions o;
    o.gradient_accumulation_fusion = false;
    const auto r = simulate(m, c, p, o);
    const auto& k = r.kernel_time_s;
    EXPECT_GT(k.gemm, 0.0);
    EXPECT_GT(k.attention, 0.0);
    EXPECT_GT(k.memory_bound, r.time_s.optimizer);
    EXPECT_NEAR(k.gemm + k.attention + k.memory_bound, r.step_time_s, 1e-9 * r.step_time_s);
}

TEST(Simulate, GemmTimeIsTheLayersLinearsAndTheHead) {
    // By hand: each linear of tokens x in -> out runs a forward GEMM (tokens, out, in), and in the
    // backward a data gradient (tokens, in, out) and a weight gradient (in, out, tokens); a GPT
    // layer has four (QKV, projection, MLP up and down), the head one (hidden -> GPT-2's 50257
    // tokens, padded as Megatron-LM pads them by default: ceil(50257 / 128) x 128 = 50304 at TP 1;
    // build_tokenizer.py, vocab_size_with_padding). Three microbatches, no recompute.
    const ModelSpec m = load_model("gpt2-124m");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 1);
    const Plan p = tessel::test::make_plan(1, 1, 1, 1, 4, 12, 1024);
    const auto r = simulate(m, c, p);
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    const double tokens = 4.0 * 1024, h = 768;
    auto linear = [&](double in, double out) {
        return gpu.gemm_time({tokens, out, in}) + gpu.gemm_time({tokens, in, out}) + gpu.gemm_time({in, out, tokens});
    };
    const double layer = linear(h, 3 * h) + linear(h, h) + linear(h, 4 * h) + linear(4 * h, h);
    const double head = linear(h, 50304);
    EXPECT_NEAR(r.kernel_time_s.gemm, 3 * (12 * layer + head), 1e-9 * r.kernel_time_s.gemm);
    // A trainer that keeps the vocabulary as it is (torchtitan): the head over 50257.
    SimulateOptions unpadded;
    unpadded.vocab_padding_multiple = 1;
    const auto u = simulate(m, c, p, unpadded);
    EXPECT_NEAR(u.kernel_time_s.gemm, 3 * (12 * layer + linear(h, 50257)), 1e-9 * u.kernel_time_s.gemm);
    // The model FLOPs behind MFU count the model's own vocabulary either way.
    EXPECT_DOUBLE_EQ(r.model_tflops_per_gpu * r.step_time_s, u.model_tflops_per_gpu * u.step_time_s);
}

TEST(Simulate, VocabularyPaddedToAMultipleOf128TimesTp) {
    // Megatron-LM's vocab_size_with_padding: ceil(V / (128 tp)) x 128 tp. Llama 3's 128256 is
    // 1002 x 128: unpadded at TP 1, 128512 at TP 4 (251 x 512), 129024 at TP 8 (126 x 1024).
    const ModelSpec m = load_model("llama3-8b");
    EXPECT_EQ(with_padded_vocabulary(m, 1, 128).vocab_size, 128256);
    EXPECT_EQ(with_padded_vocabulary(m, 4, 128).vocab_size, 128512);
    EXPECT_EQ(with_padded_vocabulary(m, 8, 128).vocab_size, 129024);
    EXPECT_EQ(with_padded_vocabulary(m, 8, 1).vocab_size, 128256);
    // Memory: the embedding and head on a TP-8 rank hold 129024 x 4096 / 8 parameters each, 18
    // bytes apiece with fp32 gradients (Megatron's bf16 run without the distributed optimizer).
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 8);
    const Plan p = tessel::test::make_plan(8, 1, 1, 1, 1, 8, 8192);
    SimulateOptions o;
    o.grad_reduce_in_fp32 = true;
    SimulateOptions u = o;
    u.vocab_padding_multiple = 1;
    const double added = 2.0 * (129024 - 128256) * 4096 / 8 * 18 / units::GiB;
    EXPECT_NEAR(estimate_memory(m, c, p, o).weights + estimate_memory(m, c, p, o).gradients +
                    estimate_memory(m, c, p, o).optimizer -
                    (estimate_memory(m, c, p, u).weights + estimate_memory(m, c, p, u).gradients +
                     estimate_memory(m, c, p, u).optimizer),
                added, 1e-9);
}

TEST(Simulate, ContextParallelismSplitsEachSequence) {
    // 16 sequences on 16 GPUs, one per GPU, against the same 16 split over pairs of GPUs (two
    // half-sequence microbatches per GPU): the same tokens and the same causal attention work per
    // GPU, so about the same compute; the split also pays for the K/V ring.
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 16);
    Plan whole;
    whole.dp = 16;
    whole.global_batch_size = 16;
    whole.seq_length = 16384;
    whole.recompute = Recompute::full;
    whole.zero_stage = 1;
    Plan split = whole;
    split.cp = 2;
    split.dp = 8;
    const auto a = simulate(m, c, whole);
    const auto b = simulate(m, c, split);
    EXPECT_NEAR(b.time_s.compute, a.time_s.compute, 0.1 * a.time_s.compute);
    // The K/V ring hides behind attention here, by hand: cp 2 (ranks 0 and 1, NVLink 450 GB/s at
    // NCCL's 0.8) sends each step 2 (K, V) x 8192 tokens x 8 KV heads x 128 x 2 B = 33,554,432 B,
    // 93 us + 3 us hop + 10 us call, beside a step of attention between 8192 queries and 4096 keys
    // of the other chunk, 4 x 32 heads x 8192 x 4096 x 128 = 5.5e11 FLOPs: at least 0.62 ms even
    // at the H100's whole 989 TFLOP/s x 0.9 sustained clock. Nothing of it is exposed.
    EXPECT_EQ(b.time_s.cp_comm_exposed, 0.0);
    EXPECT_EQ(a.time_s.cp_comm_exposed, 0.0);  // no ring without cp
    // On a 1 GB/s link the ring shows. Per layer and microbatch it sends once in the forward, once
    // in the recomputed forward (full recompute) and twice in the backward (K/V with dK/dV):
    // 32 layers x 2 microbatches a GPU (16 sequences over dp 8) x 4 = 256 sends of
    // 33,554,432 B / (1 GB/s x 0.8) + 13 us = 41.956 ms: 10.741 s. Exposed is at most that, and
    // at least that less the kernel time it can hide behind (compute and recompute).
    ClusterSpec slow = c;
    slow.intra_node.bandwidth_GBps = 1;
    const auto s = simulate(m, slow, split);
    const double ring = 256 * (33554432.0 / 0.8e9 + 3e-6 + 10e-6);
    EXPECT_LE(s.time_s.cp_comm_exposed, ring * (1 + 1e-9));
    EXPECT_GE(s.time_s.cp_comm_exposed, ring - (s.time_s.compute + s.time_s.recompute));
    // Each microbatch in flight holds half a sequence.
    EXPECT_LT(b.memory_GiB.activations, 0.6 * a.memory_GiB.activations);
}

namespace {
// A calibrated CPU cluster's shape: the GPU entry has only an fp32 peak.
ClusterSpec fp32_only_cluster() {
    json j = {{"name", "cpu-like"},
              {"num_nodes", 1},
              {"gpus_per_node", 4},
              {"gpu", {{"name", "cpu"}, {"memory_GiB", 16}, {"memory_bandwidth_GBps", 20}, {"peak_tflops", {{"fp32", 1.5}}}}},
              {"intra_node", {{"kind", "pcie"}, {"bandwidth_GBps", 10}, {"latency_us", 5}}},
              {"inter_node", {{"kind", "ethernet"}, {"nics_per_node", 1}, {"nic_bandwidth_GBps", 1}, {"latency_us", 50}}}};
    return parse_cluster(j, "cpu-cluster.json");
}
}  // namespace

TEST(Simulate, PrecisionWithoutAPeakIsBadInputNamingTheKey) {
    const ModelSpec m = load_model("tiny-gpt");
    const ClusterSpec c = fp32_only_cluster();
    Plan p;
    p.pp = 2;
    p.dp = 2;
    p.global_batch_size = 2;
    p.seq_length = m.seq_length;
    p.precision = Precision::bf16;
    try {
        simulate(m, c, p);
        FAIL() << "a bf16 plan on a cluster without a bf16 peak must be rejected";
    } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("gpu.peak_tflops.bf16"), std::string::npos) << what;
        EXPECT_NE(what.find("cpu-like"), std::string::npos) << what;
        EXPECT_NE(what.find("fp32"), std::string::npos) << what;  // what the cluster has
    }
    EXPECT_THROW(check_precision_peak(c, Precision::fp16, "cpu-cluster.json"), InputError);
    // In the precision the cluster has, every figure is finite.
    p.precision = Precision::fp32;
    const auto r = simulate(m, c, p);
    EXPECT_TRUE(std::isfinite(r.step_time_s));
    EXPECT_GT(r.step_time_s, 0.0);
    EXPECT_TRUE(std::isfinite(r.mfu));
    EXPECT_GT(r.mfu, 0.0);
    EXPECT_LT(r.mfu, 1.0);
}

// An A100 has no fp8 tensor cores (A100 datasheet: BF16/FP16 312 dense TFLOP/s, no FP8 row), and
// Transformer Engine and torchao run fp8 GEMMs only from compute capability 8.9: an fp8 plan there
// trains in bf16 (every export says so), so it simulates exactly as bf16, and the result says why;
// an H100 (FP8 1979 dense) gets no such note.
TEST(Simulate, Fp8WithoutFp8TensorCoresSaysSoAndRunsAsBf16) {
    const ModelSpec m = load_model("llama3-8b");
    Plan p = tessel::test::make_plan(1, 1, 8, 1, 1, 64, 8192, 1, 3, Recompute::full);
    auto has_note = [](const SimulationResult& r) {
        return std::any_of(r.notes.begin(), r.notes.end(),
                           [](const std::string& n) { return n.find("no fp8 tensor cores") != std::string::npos; });
    };
    const ClusterSpec a100 = resize_cluster(load_cluster("dgx-a100"), 8);
    const SimulationResult bf16 = simulate(m, a100, p);
    p.precision = Precision::fp8;
    const SimulationResult fp8 = simulate(m, a100, p);
    EXPECT_TRUE(has_note(fp8));
    EXPECT_FALSE(has_note(bf16));
    EXPECT_DOUBLE_EQ(fp8.step_time_s, bf16.step_time_s);
    EXPECT_DOUBLE_EQ(fp8.memory_GiB.peak, bf16.memory_GiB.peak);
    EXPECT_EQ(fp8.plan.precision, Precision::fp8);  // the plan as asked
    EXPECT_FALSE(has_note(simulate(m, resize_cluster(load_cluster("dgx-h100"), 8), p)));
}

namespace {
// One 8-GPU node with free communication, half the HBM bandwidth for streaming kernels and a
// 5 us fixed cost per kernel: round numbers for hand-derived kernel times.
ClusterSpec streaming_node() {
    return test::free_communication_cluster(
        8, 1, {{"kernel_launch_us", 5}, {"memory_bandwidth_efficiency", 0.5}, {"collective", {{"latency_us", 0}}}});
}
}  // namespace

TEST(Simulate, UnfusedGradientAccumulationStreamsTheGradientsEveryMicrobatch) {
    ModelSpec m = load_model("gpt2-124m");
    m.linear_bias = true;  // GPT-2 has a bias on every linear
    const ClusterSpec c = streaming_node();
    Plan p;
    p.microbatch_size = 2;
    p.global_batch_size = 8;  // four microbatches on one GPU
    p.seq_length = m.seq_length;
    SimulateOptions fused, unfused;
    unfused.gradient_accumulation_fusion = false;
    const double h = m.hidden_size, L = m.num_layers;
    // GPT layer: QKV 3h^2+3h, projection h^2+h, MLP 8h^2+5h, two LayerNorms 4h; the tied
    // embedding's one gradient (V x h, V = 50257 padded to 50304, a multiple of 128; the position
    // table is not a GEMM weight).
    const double params = L * (12 * h * h + 13 * h) + 50304.0 * h;
    // One add per tensor: a layer's four weights, four biases and two LayerNorms' scale and shift;
    // two for the embedding block and two for the head block.
    const double kernels = 12 * L + 4;
    const double bw = 2000e9 * 0.5, launch = 5e-6;
    {
        // bf16 accumulator: read the fresh gradient (2 bytes), read and write the accumulator (2 + 2).
        const double per_microbatch = params * 6 / bw + kernels * launch;
        const double delta = simulate(m, c, p, unfused).step_time_s - simulate(m, c, p, fused).step_time_s;
        EXPECT_NEAR(delta, 4 * per_microbatch, 1e-9 * delta);
    }
    {
        // fp32 accumulator (Megatron's main_grad for bf16): 2 + 4 + 4 bytes.
        fused.grad_reduce_in_fp32 = unfused.grad_reduce_in_fp32 = true;
        const double per_microbatch = params * 10 / bw + kernels * launch;
        const double delta = simulate(m, c, p, unfused).step_time_s - simulate(m, c, p, fused).step_time_s;
        EXPECT_NEAR(delta, 4 * per_microbatch, 1e-9 * delta);
    }
    {
        // ZeRO-3 over 8 GPUs: each microbatch adds the reduce-scattered fp32 shard, 4 + 4 + 4 bytes.
        p.dp = 8;
        p.global_batch_size = 64;
        p.zero_stage = 3;
        const double per_microbatch = params / 8 * 12 / bw + kernels * launch;
        const double delta = simulate(m, c, p, unfused).step_time_s - simulate(m, c, p, fused).step_time_s;
        EXPECT_NEAR(delta, 4 * per_microbatch, 1e-6 * delta);
    }
}

namespace {
// Two GPUs joined by a link so slow that a step is its sharded-data-parallel traffic.
ClusterSpec slow_link_pair() {
    json j = {{"name", "slow-link"},
              {"num_nodes", 1},
              {"gpus_per_node", 2},
              {"gpu", {{"name", "test-gpu"}, {"memory_GiB", 80}, {"memory_bandwidth_GBps", 2000}, {"peak_tflops", {{"bf16", 312}, {"fp8", 624}}}}},
              {"intra_node", {{"kind", "nvlink"}, {"bandwidth_GBps", 0.01}, {"latency_us", 0}}},
              {"inter_node", {{"kind", "infiniband"}, {"nics_per_node", 1}, {"nic_bandwidth_GBps", 0.01}, {"latency_us", 0}}},
              {"profile",
               {{"kernel_launch_us", 0},
                {"collective", {{"intra_node_bandwidth_efficiency", 1.0}, {"latency_us", 0}, {"sm_interference", 0}}}}}};
    return parse_cluster(j, "slow link");
}

// Three microbatches per data-parallel rank of a model's own sequence, one sequence each.
Plan three_microbatches(const ModelSpec& m, int dp) {
    Plan p;
    p.dp = dp;
    p.microbatch_size = 1;
    p.global_batch_size = 3 * dp;
    p.seq_length = m.seq_length;
    return p;
}
}  // namespace

TEST(Simulate, LayerwiseZeroTwoGathersOnlyInTheForward) {
    const ModelSpec m = load_model("tiny-gpt");
    const ClusterSpec c = slow_link_pair();
    Plan p = three_microbatches(m, 2);
    SimulateOptions o;
    o.zero2_layerwise_gather = true;
    // Every block's weights are gathered in each forward and its gradients reduce-scattered in each
    // backward, one after another on the link (compute takes microseconds): per microbatch
    // (n-1)/n x (2 + 2 bytes) per weight over 2 ranks. The embedding and head blocks each gather
    // the (tied) V x h table.
    const double weights = m.num_layers * layer_parameters_per_tp_rank(m, 1) + 2.0 * m.vocab_size * m.hidden_size;
    const double per_microbatch = 0.5 * weights * (2 + 2) / 0.01e9;
    p.zero_stage = 2;
    const double layerwise = simulate(m, c, p, o).step_time_s;
    EXPECT_NEAR(layerwise, 3 * per_microbatch, 0.01 * layerwise);
    // ZeRO-3 gathers again in the backward: 2 + 2 + 2 bytes, half as much again.
    p.zero_stage = 3;
    EXPECT_NEAR(simulate(m, c, p, o).step_time_s / layerwise, 6.0 / 4.0, 0.01);
}

TEST(Simulate, ZeroThreeTraceDrawsEachGatherAndReduceScatter) {
    const ModelSpec m = load_model("tiny-gpt");
    const ClusterSpec c = slow_link_pair();
    Plan p = three_microbatches(m, 2);
    p.zero_stage = 3;
    SimulateOptions o;
    o.record_trace = true;
    const SimulationResult r = simulate(m, c, p, o);
    // Per microbatch every block (embedding, the layers, the head) is gathered in the forward and
    // again in the backward and reduce-scattered in the backward, each (n-1)/n x 2 bytes per weight
    // over 2 ranks on the 0.01 GB/s link.
    const int blocks = m.num_layers + 2;
    const double weights = m.num_layers * layer_parameters_per_tp_rank(m, 1) + 2.0 * m.vocab_size * m.hidden_size;
    int gathers = 0, scatters = 0;
    double gather_s = 0, scatter_s = 0;
    std::vector<const TraceEvent*> stream;
    for (const TraceEvent& e : r.trace) {
        if (e.track != "pp stage 0 / dp comm") continue;
        stream.push_back(&e);
        if (e.name.rfind("all-gather ", 0) == 0) ++gathers, gather_s += e.duration_s;
        if (e.name.rfind("reduce-scatter ", 0) == 0) ++scatters, scatter_s += e.duration_s;
    }
    EXPECT_EQ(gathers, 3 * 2 * blocks);
    EXPECT_EQ(scatters, 3 * blocks);
    EXPECT_NEAR(gather_s, 3 * 2 * 0.5 * weights * 2 / 0.01e9, 1e-6 * gather_s);
    EXPECT_NEAR(scatter_s, 3 * 0.5 * weights * 2 / 0.01e9, 1e-6 * scatter_s);
    // One stream: the collectives follow one another, inside the step.
    std::sort(stream.begin(), stream.end(), [](auto* a, auto* b) { return a->start_s < b->start_s; });
    for (std::size_t i = 1; i < stream.size(); ++i)
        EXPECT_GE(stream[i]->start_s, stream[i - 1]->start_s + stream[i - 1]->duration_s - 1e-9 * r.step_time_s);
    ASSERT_FALSE(stream.empty());
    EXPECT_LE(stream.back()->start_s + stream.back()->duration_s, r.step_time_s * (1 + 1e-12));
}

TEST(Simulate, Fsdp2CopiesWeightsOutOfAndGradientsIntoItsBuffersOnTheComputeStream) {
    const ModelSpec m = load_model("tiny-gpt");
    const ClusterSpec c = test::free_communication_cluster(2);
    Plan p = three_microbatches(m, 2);
    p.zero_stage = 3;
    SimulateOptions o;
    o.grad_reduce_in_fp32 = true;
    const double flat = simulate(m, c, p, o).step_time_s;
    o.fsdp2_buffer_copies = true;
    // Per microbatch every block is gathered in the forward and again in the backward; each gather's
    // 2-byte weights are read from the buffer and written to the parameters (4 bytes a weight), and
    // each backward's 2-byte gradients are read and written in fp32 into the reduce-scatter's buffer
    // (6 bytes), all at 0.87 of the 2000 GB/s memory (a lone copy's share; no launch cost on this
    // cluster). With one stage and free communication they add to the step one after another.
    const double weights = m.num_layers * layer_parameters_per_tp_rank(m, 1) + 2.0 * m.vocab_size * m.hidden_size;
    const double Bps = 2000e9 * 0.87;
    const double copy_out = weights * 4.0 / Bps, copy_in = weights * 6.0 / Bps;
    EXPECT_NEAR(simulate(m, c, p, o).step_time_s - flat, 3 * (2 * copy_out + copy_in), 1e-6 * copy_in);
    // FSDP2's ZeRO-2 (reshard_after_forward=False) gathers, and copies out, only in the forward.
    p.zero_stage = 2;
    o.zero2_layerwise_gather = true;
    const double zero2 = simulate(m, c, p, o).step_time_s;
    o.fsdp2_buffer_copies = false;
    EXPECT_NEAR(zero2 - simulate(m, c, p, o).step_time_s, 3 * (copy_out + copy_in), 1e-6 * copy_in);
    // Without sharding there is nothing to copy.
    p.zero_stage = 1;
    o.fsdp2_buffer_copies = true;
    const double unsharded = simulate(m, c, p, o).step_time_s;
    o.fsdp2_buffer_copies = false;
    EXPECT_DOUBLE_EQ(simulate(m, c, p, o).step_time_s, unsharded);
}

TEST(Simulate, Fp8WeightGatherHalvesTheGatheredBytes) {
    const ModelSpec m = load_model("tiny-gpt");
    const ClusterSpec c = slow_link_pair();
    Plan p = three_microbatches(m, 2);
    p.zero_stage = 3;
    p.precision = Precision::fp8;
    SimulateOptions o;
    // ZeRO-3 on a link that dwarfs the compute: per microbatch and weight, a bf16 gather in the
    // forward and again in the backward and a bf16 gradient reduce-scatter, 2 + 2 + 2 bytes; fp8
    // gathers send 1 + 1 + 2.
    const double bf16_gathers = simulate(m, c, p, o).step_time_s;
    o.fp8_weight_gather = true;
    EXPECT_NEAR(simulate(m, c, p, o).step_time_s / bf16_gathers, 4.0 / 6.0, 0.01);
    // A bf16 run has no fp8 weights to gather.
    p.precision = Precision::bf16;
    const double bf16_run = simulate(m, c, p, o).step_time_s;
    o.fp8_weight_gather = false;
    EXPECT_DOUBLE_EQ(simulate(m, c, p, o).step_time_s, bf16_run);
}

TEST(Simulate, CpuOffloadCopiesEachOffloadedLayerOutAndBack) {
    const ModelSpec m = load_model("tiny-gpt");
    ClusterSpec c = slow_link_pair();
    c.gpu.host_bandwidth_GBps = 0.01;  // copies dwarf the layers' microseconds of compute
    Plan p = three_microbatches(m, 1);
    SimulateOptions o;
    const auto kept = simulate(m, c, p, o);
    o.cpu_offload_layers = 2;
    const auto offloaded = simulate(m, c, p, o);
    // Each offloaded layer's activations go to the host after its forward and come back before its
    // backward: 2 copies x 2 layers x the layer's bytes, per microbatch, over 0.01 GB/s.
    const ActivationOptions a = activation_options(m, o);
    const double layer_bytes = layer_activation_bytes(m, p, a);
    EXPECT_NEAR(offloaded.step_time_s - kept.step_time_s, 3 * 2 * 2 * layer_bytes / 0.01e9,
                0.01 * (offloaded.step_time_s - kept.step_time_s));
    // Only the layer in transit stays on the GPU: one layer's activations fewer of the two.
    EXPECT_NEAR((kept.memory_GiB.activations - offloaded.memory_GiB.activations) * units::GiB, layer_bytes,
                1e-6 * layer_bytes);
    // Megatron-Core offloads without pipeline stages only, fewer layers than the model has, and a
    // cluster must say how fast its GPUs reach host memory.
    o.cpu_offload_layers = m.num_layers;
    EXPECT_THROW(simulate(m, c, p, o), InputError);
    o.cpu_offload_layers = 1;
    c.gpu.host_bandwidth_GBps = 0;
    try {
        simulate(m, c, p, o);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("gpu.host_bandwidth_GBps"), std::string::npos) << e.what();
    }
    c.gpu.host_bandwidth_GBps = 0.01;
    p.pp = 2;
    p.dp = 1;
    EXPECT_THROW(simulate(m, c, p, o), InputError);
}

TEST(Simulate, PipelineEngineReducesGradientsAfterTheFlush) {
    // DeepSpeed's pipeline engine: with pipeline stages the reduction follows the last backward
    // (as with overlap off); with one stage the flag changes nothing.
    const ModelSpec m = load_model("gpt3-175b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 128);
    Plan p = gpt3_plan();
    SimulateOptions overlapped, after_flush, blocking;
    after_flush.reduce_after_pipeline_flush = true;
    blocking.overlap_grad_reduce = false;
    const double t_overlapped = simulate(m, c, p, overlapped).step_time_s;
    const double t_blocking = simulate(m, c, p, blocking).step_time_s;
    ASSERT_GT(t_blocking, t_overlapped);  // the comparison below can tell the two apart
    EXPECT_DOUBLE_EQ(simulate(m, c, p, after_flush).step_time_s, t_blocking);
    p.pp = 1;
    p.dp = 16;
    p.virtual_stages = 1;
    p.schedule = Schedule::one_f_one_b;
    EXPECT_DOUBLE_EQ(simulate(m, c, p, after_flush).step_time_s, simulate(m, c, p, overlapped).step_time_s);
}

TEST(Simulate, GradientBucketsGrowWithTheDataParallelSize) {
    // Megatron-Core (DistributedDataParallel, since 2024-04-11) sizes its buckets at
    // max(40M, 1M x DP) parameters so that each bucket's ring stays bandwidth-bound: GPT-2 1.5B's
    // 1.56B parameters on one stage make ceil(1.56B / 128M) = 13 buckets at DP 128 and
    // ceil(1.56B / 1.024B) = 2 at DP 1024; DeepSpeed-style fixed buckets keep 40M: 39 at any DP.
    const ModelSpec m = load_model("gpt2-1.5b");
    const ClusterSpec c = test::free_communication_cluster(8, 128);
    auto buckets = [&](int dp, bool grow) {
        Plan p;
        p.dp = dp;
        p.zero_stage = 1;
        p.microbatch_size = 1;
        p.global_batch_size = dp;
        p.seq_length = 1024;
        SimulateOptions o;
        o.record_trace = true;
        o.grad_buckets_grow_with_dp = grow;
        int n = 0;
        for (const TraceEvent& e : simulate(m, c, p, o).trace) n += e.name.rfind("grad bucket ", 0) == 0;
        return n;
    };
    const double params = double(count_parameters(m).total);
    ASSERT_GT(params, 1.5e9);
    ASSERT_LT(params, 1.6e9);
    EXPECT_EQ(buckets(128, true), int(std::ceil(params / 128e6)));
    EXPECT_EQ(buckets(1024, true), int(std::ceil(params / 1024e6)));
    EXPECT_EQ(buckets(16, true), int(std::ceil(params / 40e6)));  // the 40M floor
    EXPECT_EQ(buckets(1024, false), int(std::ceil(params / 40e6)));
}

TEST(Simulate, TransformerEngineCastsEachFp8WeightOncePerStep) {
    // Megatron-Core passes is_first_microbatch to Transformer Engine, which casts each weight (and
    // its transpose) to fp8 on a step's first microbatch and reuses it: with m microbatches on one
    // GPU, a stack that casts every microbatch pays the weight casts m times, the caching one once,
    // so the gap between them is (m - 1) weight casts. Everything else is the same, so the gap at
    // m = 4 is three times the gap at m = 2.
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = load_cluster("dgx-h100");
    Plan p;
    p.microbatch_size = 1;
    p.seq_length = 1024;
    p.precision = Precision::fp8;
    SimulateOptions caching, every;
    every.fp8_caches_weights = false;
    auto gap = [&](int microbatches) {
        p.global_batch_size = microbatches;
        return simulate(m, c, p, every).step_time_s - simulate(m, c, p, caching).step_time_s;
    };
    p.global_batch_size = 1;
    EXPECT_NEAR(simulate(m, c, p, every).step_time_s, simulate(m, c, p, caching).step_time_s, 1e-12);
    const double two = gap(2), four = gap(4);
    EXPECT_GT(two, 0);
    EXPECT_NEAR(four / two, 3.0, 1e-6);
    // bf16 casts nothing.
    p.precision = Precision::bf16;
    p.global_batch_size = 4;
    EXPECT_NEAR(simulate(m, c, p, every).step_time_s, simulate(m, c, p, caching).step_time_s, 1e-12);
}
