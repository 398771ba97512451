// Context parallelism's ring attention, ZeRO-2's per-microbatch gradient reduction and the
// compute they slow, each against a hand derivation.
#include <gtest/gtest.h>

#include <cmath>

#include "core/presets.h"
#include "core/topology.h"
#include "simulator/comm_cost.h"
#include "simulator/compute_cost.h"
#include "simulator/hardware_efficiency.h"
#include "simulator/layer_cost.h"
#include "simulator/memory_model.h"
#include "simulator/pipeline_sim.h"
#include "simulator/simulate.h"
#include "test_clusters.h"

using namespace tessel;

namespace {
// A GPU with one SM (no wave quantization to account for) and no kernel launch cost.
ClusterSpec one_sm_cluster() {
    json j = {{"name", "one-sm"},
              {"num_nodes", 2},
              {"gpus_per_node", 8},
              {"gpu", {{"name", "test-gpu"}, {"memory_GiB", 80}, {"memory_bandwidth_GBps", 3000}, {"peak_tflops", {{"bf16", 1000}}}}},
              {"intra_node", {{"kind", "nvlink"}, {"bandwidth_GBps", 400}, {"latency_us", 0}}},
              {"inter_node", {{"kind", "infiniband"}, {"nics_per_node", 8}, {"nic_bandwidth_GBps", 50}, {"latency_us", 0}}},
              {"profile", {{"sm_count", 1}, {"kernel_launch_us", 0}, {"collective", {{"latency_us", 0}}}}}};
    return parse_cluster(j, "test cluster");
}

// Llama 3 70B's attention on one GPU at tp 2: 32 query heads, 4 KV heads of 128.
RingAttentionInput llama70b_tp2(int cp, double seq) {
    RingAttentionInput in;
    in.cp = cp;
    in.microbatch = 1;
    in.tokens = seq / cp;
    in.heads = 32;
    in.kv_width = 4 * 128;
    in.head_dim = 128;
    in.element_bytes = 2;
    return in;
}

CommGroup link(double GBps, int size) {
    CommGroup g;
    g.size = size;
    g.bandwidth_Bps = GBps * 1e9;
    return g;
}
}  // namespace

TEST(RingAttention, ExchangedBytesAreTheHandCount) {
    // Each rank passes its K and V (S/cp tokens x kv heads x head dim, 2 bytes each) on cp - 1
    // times in the forward pass: 2 (K and V) x (cp - 1) x (S/cp) x 4 x 128 x 2 bytes; the backward
    // sends K/V and dK/dV together except at its first and last step: twice that.
    const ClusterSpec c = one_sm_cluster();
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    for (int cp : {2, 4, 8, 16}) {
        const double S = 8192;
        const auto r = ring_attention_cost(llama70b_tp2(cp, S), gpu, link(400, cp));
        const double hand = 2.0 * (cp - 1) * (S / cp) * 4 * 128 * 2;
        EXPECT_DOUBLE_EQ(r.forward_bytes_sent, hand) << cp;
        EXPECT_DOUBLE_EQ(r.backward_bytes_sent, 2.0 * hand) << cp;
    }
}

TEST(RingAttention, StepsAreTheLoadBalancedChunks) {
    // S = 8192 over cp = 16: chunks of c = 256 tokens, each rank holds two (512 tokens).
    const ClusterSpec c = one_sm_cluster();
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    const auto r = ring_attention_cost(llama70b_tp2(16, 8192), gpu, link(400, 16));
    EXPECT_EQ(r.first_step.seq_q, 512);
    EXPECT_EQ(r.first_step.seq_kv, 512);
    EXPECT_TRUE(r.first_step.causal);
    EXPECT_EQ(r.earlier_step.seq_q, 512);
    EXPECT_EQ(r.earlier_step.seq_kv, 256);
    EXPECT_FALSE(r.earlier_step.causal);
    EXPECT_EQ(r.later_step.seq_q, 256);
    EXPECT_EQ(r.later_step.seq_kv, 512);
    // The rank's share of the causal work: S^2 / 2 query-key pairs per head over 16 ranks, plus
    // the masked half of the first step's four diagonal 128-blocks (4 x 128^2 / 2 pairs).
    const double pairs = 8192.0 * 8192.0 / 2.0 / 16.0 + 4 * 128.0 * 128.0 / 2.0;
    EXPECT_NEAR(r.forward.flops, 4.0 * 32 * pairs * 128, 1e-6 * r.forward.flops);
}

TEST(RingAttention, ShortChunksRunAtTheirOwnRamp) {
    // compute_cost.h's sequence ramp: a query block pays a fixed 1.5 key-block iterations. The
    // 512 x 256 step iterates over 2 key blocks per query block (2 / 3.5 of the limit); the whole
    // 8192-token causal attention over 32.5 on average (32.5 / 34).
    const ClusterSpec c = one_sm_cluster();
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    const auto r = ring_attention_cost(llama70b_tp2(16, 8192), gpu, link(400, 16));
    AttentionShape whole{32, 8192, 8192, 128, true, AttentionKernel::flash, false};
    const double ratio = gpu.attention_efficiency(r.earlier_step, true) / gpu.attention_efficiency(whole, true);
    EXPECT_NEAR(ratio, (2.0 / 3.5) / (32.5 / 34.0), 1e-9);
}

TEST(RingAttention, TheRingHidesBehindEachStepOrShowsItsRest) {
    const ClusterSpec c = one_sm_cluster();
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    const int cp = 4;
    // Fast enough: every transfer hides behind its step's kernel.
    const auto fast = ring_attention_cost(llama70b_tp2(cp, 8192), gpu, link(1e6, cp));
    EXPECT_EQ(fast.forward.cp_comm_s, 0.0);
    EXPECT_EQ(fast.backward.cp_comm_s, 0.0);
    // Very slow: the forward exposes cp - 1 transfers less the kernels beside them (at most the
    // whole attention time).
    const CommGroup slow = link(0.1, cp);
    const auto r = ring_attention_cost(llama70b_tp2(cp, 8192), gpu, slow);
    const double send = r.forward_bytes_sent / (cp - 1) / slow.bandwidth_Bps;
    EXPECT_LE(r.forward.cp_comm_s, (cp - 1) * send);
    EXPECT_GE(r.forward.cp_comm_s, (cp - 1) * send - r.forward.attention_s);
    EXPECT_LE(r.backward.cp_comm_s, 2.0 * (cp - 1) * send);
    EXPECT_GE(r.backward.cp_comm_s, 2.0 * (cp - 1) * send - r.backward.attention_s);
}

TEST(RingAttention, PyTorchsRingGathersTheKvBesideItsFirstStepOnly) {
    // PyTorch's default rotate method: one all-gather of the cp ranks' K/V, (cp - 1) x kv bytes in
    // and out of each rank, beside the first step's kernel f0 (and b0 in the backward); the dK/dV
    // (fp32: 2 x kv bytes) go one hop per step beside the next step's kernel, the last beside none.
    const ClusterSpec c = one_sm_cluster();
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    const int cp = 4;
    RingAttentionInput in = llama70b_tp2(cp, 8192);
    in.kv_width = 32 * 128;
    in.torch_ring = true;
    const double kv = 2 * (8192.0 / cp) * in.kv_width * 2;
    const auto at_speed = [&](double Bps) { return ring_attention_cost(in, gpu, link(Bps / 1e9, cp)); };
    const double f0 = gpu.attention_forward_time(at_speed(1e15).first_step);
    const double b0 = gpu.attention_backward_time(at_speed(1e15).first_step);
    // A link on which the gather takes twice the first step: f0 of it shows in the forward.
    const double bw = (cp - 1) * kv / (2 * f0);
    const auto r = at_speed(bw);
    const double gather = (cp - 1) * kv / bw, dkv = 2 * kv / bw;
    const double b_step = (r.backward.attention_s - b0) / (cp - 1);
    ASSERT_LT(dkv, b_step);  // every dK/dV but the last hides behind a step
    EXPECT_NEAR(r.forward.cp_comm_s, gather - f0, 1e-9 * gather);
    EXPECT_NEAR(r.backward.cp_comm_s, std::max(0.0, gather - b0) + dkv, 1e-9 * gather);
    // Transformer Engine's ring on that link hides each forward send behind its own step.
    in.torch_ring = false;
    in.kv_width = 4 * 128;
    EXPECT_EQ(ring_attention_cost(in, gpu, link(bw / 1e9, cp)).forward.cp_comm_s, 0.0);
}

TEST(RingAttention, AcrossNodesTheRingMovesAtOneNic) {
    // 16 ranks over two nodes: the hop from rank 7 to rank 8 (and 15 back to 0) crosses
    // InfiniBand on one GPU's 25 GB/s NIC, while an all-reduce's eight rings share all eight NICs.
    const ClusterSpec c = test::simple_node(300, 1);
    const Topology topo(c);
    const HardwareEfficiency e = hardware_efficiency(c);
    std::vector<int> ranks;
    for (int i = 0; i < 16; ++i) ranks.push_back(i);
    EXPECT_NEAR(make_ring_link(topo, ranks, e).bandwidth_Bps, 25e9, 1e6);
    EXPECT_NEAR(make_comm_group(topo, ranks, e).bandwidth_Bps, 200e9, 1e6);
    // Inside one node, NVLink.
    EXPECT_NEAR(make_ring_link(topo, {0, 2, 4, 6}, e).bandwidth_Bps, 300e9, 1e6);
}

TEST(RingAttention, PyTorchsRingMergesInFp32AndSendsFp32Gradients) {
    // PyTorch's context_parallel (torchtitan) over K/V repeated to the 32 query heads: per forward,
    // cp - 1 merges of 38 + E bytes per output element (cast to fp32, then out - block, the product
    // with the sigmoid and the difference, 12 + 8 + 12 bytes) with their log-sum-exp, cp - 1 packed
    // K/V buffers (read and write; the half K/V a step uses is a view) and the first and final casts; per
    // backward, the K/V plus the fp32 dK/dV so far, whose bytes are twice the 16-bit K/V's.
    const ClusterSpec c = one_sm_cluster();
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    const int cp = 4;
    RingAttentionInput in = llama70b_tp2(cp, 8192);
    in.kv_width = 32 * 128;  // repeated
    in.torch_ring = true;
    const auto r = ring_attention_cost(in, gpu, link(1e6, cp));
    const double E = 2, T = 2048, q = 32 * 128, kv = 2 * T * q * E;
    EXPECT_DOUBLE_EQ(r.forward_bytes_sent, (cp - 1) * kv);
    EXPECT_DOUBLE_EQ(r.backward_bytes_sent, (cp - 1) * kv + cp * 2 * kv);
    const double lse = 32 * T * 20;
    const double bytes = (cp - 1) * ((E + 36) * T * q + lse) + (cp - 1) * 2 * kv + 2 * (E + 4) * T * q;
    const double per_byte = gpu.memory_time(1e9, 0) / 1e9;
    EXPECT_NEAR(r.forward.memory_bound_s, bytes * per_byte, 1e-9 * r.forward.memory_bound_s);
    // Transformer Engine's ring at the same shapes moves fewer bytes both ways.
    in.torch_ring = false;
    const auto te = ring_attention_cost(in, gpu, link(1e6, cp));
    EXPECT_LT(te.forward.memory_bound_s, r.forward.memory_bound_s);
    EXPECT_LT(te.backward.memory_bound_s, r.backward.memory_bound_s);
    EXPECT_DOUBLE_EQ(te.forward.flops, r.forward.flops);
}

TEST(RingAttention, MemoryHoldsTheStepOutputsAndRingBuffers) {
    // No pipeline, no sequence parallelism: buffers are the runtime's reserve plus the ring's
    // forward working set, cp step outputs (T x q x 2 bytes each) and two K/V buffers.
    const ModelSpec m = load_model("llama3-70b");
    const ClusterSpec c = load_cluster("dgx-h100");
    Plan p;
    p.tp = 8;
    p.cp = 8;
    p.dp = 1;
    p.seq_length = 8192;
    p.global_batch_size = 1;
    const double T = 1024, q = 8192.0 / 8, kv = 128;  // one KV head per rank at tp 8
    const double ring = std::max(8 * T * q * 2 + 2 * (2 * T * kv * 2), 4 * (2 * T * kv * 2) + T * q * 2);
    const auto ranks = memory_per_rank(m, c, p, default_activation_options(m));
    EXPECT_NEAR(ranks[0].buffers, kRuntimeReservedBytes + ring, 1.0);

    // PyTorch's ring over K/V repeated to the 8 query heads of the rank (1024 wide, as q) and
    // gathered from the 8 ranks, peak in the backward: fp32 dQ (4 B) and the step's dQ (2 B) per
    // query element; fp32 dK/dV accumulators and the packed fp32 dK/dV sent and received
    // (3 x 2 x 4 B); the step's dK/dV, the 8 gathered K/V and the step's packed copy
    // (10 x 2 x 2 B). The forward holds less: fp32 output, the step's output and its fp32 cast
    // (10 B), the gathered K/V and the packed copy (9 x 2 x 2 B).
    ActivationOptions torch = default_activation_options(m);
    torch.torch_context_parallel = true;
    const double elements = T * q;
    const double torch_ring = elements * (4 + 2) + 3 * (2 * elements * 4) + 10 * (2 * elements * 2);
    // (The backward's set, 6 + 24 + 40 = 70 B per query element, is the larger: the forward's is
    // 10 + 36 = 46 B, so the peak above is the backward's.)
    EXPECT_NEAR(memory_per_rank(m, c, p, torch)[0].buffers, kRuntimeReservedBytes + torch_ring, 1.0);
}

TEST(ZeroTwo, ReducesEveryMicrobatchAndSlowsTheBackwardBesideIt) {
    // One rank, four microbatches of 1 s forward and 1 s backward, two gradient buckets of 0.25 s.
    // Bucket 0 fills halfway through a backward and runs beside its second half (0.25 s overlap);
    // bucket 1 fills at its end. With 10% interference each releasing backward slows 0.025 s:
    // ZeRO-1 once (the last backward), ZeRO-2 after every backward.
    PipelineInput in;
    in.pp = 1;
    in.microbatches = 4;
    in.forward = {ActionParts{1.0}};
    in.backward = {ActionParts{1.0}};
    in.send_forward_s = {0.0};
    in.send_backward_s = {0.0};
    in.buckets_s = {{0.25, 0.25}};
    in.interference = 0.1;
    in.record_trace = true;
    auto buckets = [](const PipelineOutput& o) {
        int n = 0;
        for (const auto& e : o.trace) n += e.name.rfind("grad bucket", 0) == 0;
        return n;
    };
    const auto once = simulate_pipeline(in);
    EXPECT_EQ(buckets(once), 2);
    EXPECT_NEAR(once.ranks[0].parts.compute, 8.0 + 0.025, 1e-12);
    in.reduce_every_microbatch = true;
    const auto every = simulate_pipeline(in);
    EXPECT_EQ(buckets(every), 8);
    EXPECT_NEAR(every.ranks[0].parts.compute, 8.0 + 4 * 0.025, 1e-12);
}

TEST(ZeroTwo, SimulatedPlanReducesEachMicrobatch) {
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 8);
    Plan p;
    p.dp = 8;
    p.zero_stage = 1;
    p.microbatch_size = 1;
    p.global_batch_size = 32;  // 4 microbatches per rank
    p.seq_length = 4096;
    p.recompute = Recompute::full;
    SimulateOptions o;
    o.record_trace = true;
    auto buckets = [](const SimulationResult& r) {
        int n = 0;
        for (const auto& e : r.trace) n += e.name.rfind("grad bucket", 0) == 0;
        return n;
    };
    const int z1 = buckets(simulate(m, c, p, o));
    p.zero_stage = 2;
    const int z2 = buckets(simulate(m, c, p, o));
    EXPECT_GT(z1, 0);
    EXPECT_EQ(z2, 4 * z1);
}

TEST(AllGatherAttention, EveryRankVisitsTheRingsPairsAsTwoPrefixKernels) {
    // Chunks of c tokens (a multiple of the 128-token block), chunk g's c queries against the
    // (g + 1) c keys up to its end: g c / 128 whole key blocks, then the triangle, (nq + 1) / 2
    // blocks on average over its nq = c / 128 query blocks, so c x 128 x (g c / 128 + (nq + 1) / 2)
    // pairs. Rank r's chunks r and 2 cp - 1 - r add up to c (2 cp c + 128) pairs whatever r.
    const ClusterSpec c = one_sm_cluster();
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    for (int cp : {2, 4, 8}) {
        RingAttentionInput in = llama70b_tp2(cp, 8192);
        in.all_gather = true;
        const double chunk = 8192.0 / (2 * cp);
        const auto r = ring_attention_cost(in, gpu, link(400, cp));
        EXPECT_NEAR(r.forward.flops, 4.0 * 32 * 128 * chunk * (2 * cp * chunk + 128), 1e-9 * r.forward.flops) << cp;
        EXPECT_NEAR(r.backward.flops, 2.5 * r.forward.flops, 1e-9 * r.forward.flops) << cp;
        EXPECT_EQ(r.first_step.seq_q, chunk);
        EXPECT_EQ(r.first_step.seq_kv, chunk);
        EXPECT_EQ(r.later_step.seq_kv, 2 * cp * chunk);
    }
}

TEST(AllGatherAttention, NothingHidesTheGatherOrTheReduceScatter) {
    // K and V as a collective each: each rank receives the other cp - 1 ranks' K/V (kv bytes
    // each) in the forward and sends them their dK/dV share in the backward; with no latency, the
    // time is (cp - 1) kv / bandwidth each way, all of it exposed, however fast the kernels.
    const ClusterSpec c = one_sm_cluster();
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    const int cp = 4;
    RingAttentionInput in = llama70b_tp2(cp, 8192);
    in.all_gather = true;
    const double kv = 2 * (8192.0 / cp) * 4 * 128 * 2;
    for (double GBps : {1.0, 400.0, 1e6}) {
        const auto r = ring_attention_cost(in, gpu, link(GBps, cp));
        EXPECT_NEAR(r.forward.cp_comm_s, (cp - 1) * kv / (GBps * 1e9), 1e-9 * r.forward.cp_comm_s) << GBps;
        EXPECT_NEAR(r.backward.cp_comm_s, (cp - 1) * kv / (GBps * 1e9), 1e-9 * r.backward.cp_comm_s) << GBps;
        EXPECT_EQ(r.forward.cp_comm_hidden_s, 0.0);
        EXPECT_DOUBLE_EQ(r.forward_bytes_sent, (cp - 1) * kv);
    }
}

TEST(AllGatherAttention, TheGatheredKvAreKeptForTheBackward) {
    // Llama 3 70B at tp 2 (4 KV heads of 128 per rank), cp 4, 8192 tokens, bf16: the other three
    // ranks' K and V, 3 x 2048 tokens x 2 x 512 x 2 bytes, are one layer's extra activations.
    const ModelSpec m = load_model("llama3-70b");
    Plan p;
    p.tp = 2;
    p.cp = 4;
    p.seq_length = 8192;
    ActivationOptions ring = default_activation_options(m), gathered = ring;
    gathered.all_gather_context_parallel = true;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p, gathered) - layer_activation_bytes(m, p, ring),
                     3.0 * 2048 * 2 * 512 * 2);
}
