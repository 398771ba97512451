// The tensor-parallel collectives of one transformer layer, each against a hand count: which
// collectives a pass has, which of them the stream waits for and which run beside a GEMM, for
// Megatron's NCCL path, PyTorch's tensor parallelism, Transformer Engine's userbuffers and
// PyTorch's async TP.
#include <gtest/gtest.h>

#include "core/presets.h"
#include "simulator/comm_cost.h"
#include "simulator/compute_cost.h"
#include "simulator/hardware_efficiency.h"
#include "simulator/layer_cost.h"

using namespace tessel;

namespace {
// An H100-sized GPU (132 SMs) whose GEMMs run at one measured efficiency whatever their shape
// (a one-point gemm_table), so that a GEMM on fewer SMs takes exactly all/(all - reserved) as
// long; no launch cost, no collective latency.
ClusterSpec flat_gemm_cluster() {
    json j = {{"name", "flat"},
              {"num_nodes", 1},
              {"gpus_per_node", 8},
              {"gpu", {{"name", "test-gpu"}, {"memory_GiB", 80}, {"memory_bandwidth_GBps", 3000},
                       {"peak_tflops", {{"bf16", 1000}, {"fp8", 2000}}}}},
              {"intra_node", {{"kind", "nvlink"}, {"bandwidth_GBps", 400}, {"latency_us", 0}}},
              {"inter_node", {{"kind", "infiniband"}, {"nics_per_node", 8}, {"nic_bandwidth_GBps", 50}, {"latency_us", 0}}},
              {"profile",
               {{"sm_count", 132},
                {"kernel_launch_us", 0},
                {"gemm_table", {{{"m", 4096}, {"n", 4096}, {"k", 4096}, {"efficiency", 0.8}}}},
                {"collective", {{"latency_us", 0}, {"sm_interference", 0.1}}}}}};
    return parse_cluster(j, "test cluster");
}

// A TP group of `size` ranks inside one node at `GBps` of bus bandwidth, no latency.
CommGroup tp_group(int size, double GBps) {
    CommGroup g;
    g.size = size;
    g.bandwidth_Bps = GBps * 1e9;
    g.members_per_node = size;
    return g;
}

// Ring collectives by hand (nccl-tests' convention, S the whole tensor): an all-gather or a
// reduce-scatter moves (n-1)/n S through each rank, an all-reduce twice that.
double ring_gather(double bytes, int n, double GBps) { return (n - 1.0) / n * bytes / (GBps * 1e9); }
double ring_all_reduce(double bytes, int n, double GBps) { return 2.0 * ring_gather(bytes, n, GBps); }

// Llama 3 8B's shapes (h 4096, 32 heads, 8 KV heads, SwiGLU 14336) at 4096 tokens.
struct LayerSetup {
    ModelSpec model = load_model("llama3-8b");
    Plan plan;
    ClusterSpec cluster = flat_gemm_cluster();
    LayerSetup(int tp, bool sp, Precision precision = Precision::bf16) {
        plan.tp = tp;
        plan.microbatch_size = 1;
        plan.global_batch_size = 1;
        plan.seq_length = 4096;
        plan.sequence_parallel = sp;
        plan.precision = precision;
        model.seq_length = 4096;
    }
    BlockModels blocks(const CommGroup& tp, const OverlapOptions& o) const {
        const ComputeModel gpu(cluster.gpu, hardware_efficiency(cluster), plan.precision);
        return block_models(model, plan, gpu, tp, CommGroup{}, o);
    }
    // One full activation tensor [T, h] in 16 bits: the size of every TP collective.
    double activation_bytes() const { return 4096.0 * 4096 * 2; }
};
}  // namespace

TEST(TensorParallelComm, ForwardWaitsForTwoGathersAndTwoReduceScattersWithSequenceParallelism) {
    // Without overlap the forward gathers the input of QKV and of the MLP's up projection and
    // reduce-scatters the outputs of the projection and the MLP's down projection; without
    // sequence parallelism it all-reduces the two outputs instead.
    const double GBps = 100;
    for (bool sp : {true, false}) {
        const LayerSetup s(4, sp);
        const CommGroup tp = tp_group(4, GBps);
        const BlockModels b = s.blocks(tp, OverlapOptions{});
        const double S = s.activation_bytes();
        const double expected = sp ? 4.0 * ring_gather(S, 4, GBps) : 2.0 * ring_all_reduce(S, 4, GBps);
        EXPECT_NEAR(b.layer.forward.tp_comm_s, expected, 1e-9 * expected) << "sp " << sp;
        EXPECT_EQ(b.layer.forward.tp_comm_hidden_s, 0.0);
    }
}

TEST(TensorParallelComm, MegatronBackwardWaitsOnlyForTheOutputGradientGathers) {
    // Megatron's sequence-parallel backward (Korthikanti et al. 2022, the backward of its g and
    // g-bar operators; Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication, Transformer
    // Engine's Linear): each row-parallel linear first gathers its output gradient, which the
    // stream waits for; each column-parallel linear gathers its sharded input again beside its
    // input-gradient GEMM and reduce-scatters that gradient beside its weight-gradient GEMM. On a
    // fast link the GEMMs hide both: 2 exposed gathers, 2 hidden gathers and 2 hidden
    // reduce-scatters per layer, and the hidden ones slow the compute by sm_interference (0.1) of
    // their time.
    const double GBps = 400;
    const LayerSetup s(4, true);
    const CommGroup tp = tp_group(4, GBps);
    OverlapOptions megatron;
    megatron.tp_backward_overlap = true;
    OverlapOptions waiting = megatron;
    waiting.tp_backward_overlap = false;
    const BlockModels a = s.blocks(tp, megatron), w = s.blocks(tp, waiting);
    const double one = ring_gather(s.activation_bytes(), 4, GBps);
    EXPECT_NEAR(a.layer.backward.tp_comm_s, 2.0 * one, 1e-9 * one);
    EXPECT_NEAR(a.layer.backward.tp_comm_hidden_s, 4.0 * one, 1e-9 * one);
    EXPECT_NEAR(a.layer.backward.compute_s - w.layer.backward.compute_s, 0.1 * 4.0 * one, 1e-9 * one);
    // PyTorch's tensor parallelism keeps the gathered input for the backward and waits for the
    // output-gradient gathers and the input-gradient reduce-scatters: 4 collectives, none hidden.
    EXPECT_NEAR(w.layer.backward.tp_comm_s, 4.0 * one, 1e-9 * one);
    EXPECT_EQ(w.layer.backward.tp_comm_hidden_s, 0.0);
}

TEST(TensorParallelComm, WithoutSequenceParallelismTheInputGradientAllReduceHidesBesideTheWeightGradient) {
    // Megatron-LM's asynchronous all-reduce (since 2021-09): the two column-parallel input
    // gradients are all-reduced beside the weight-gradient GEMMs; the row-parallel backward needs
    // no collective. Without it the stream waits for both all-reduces.
    const double GBps = 400;
    const LayerSetup s(2, false);
    const CommGroup tp = tp_group(2, GBps);
    OverlapOptions async;
    OverlapOptions waiting;
    waiting.tp_backward_overlap = false;
    const double two = 2.0 * ring_all_reduce(s.activation_bytes(), 2, GBps);
    const BlockModels a = s.blocks(tp, async), w = s.blocks(tp, waiting);
    EXPECT_EQ(a.layer.backward.tp_comm_s, 0.0);
    EXPECT_NEAR(a.layer.backward.tp_comm_hidden_s, two, 1e-9 * two);
    EXPECT_NEAR(w.layer.backward.tp_comm_s, two, 1e-9 * two);
}

TEST(TensorParallelComm, Fp8GathersItsGemmInputsInOneByte) {
    // Transformer Engine quantizes a sequence-parallel GEMM input before it gathers it (and torchao's
    // Float8 tensor parallelism the same): the forward's two gathers move one byte a value, its two
    // reduce-scatters of 16-bit GEMM outputs two.
    const double GBps = 100;
    const LayerSetup s(4, true, Precision::fp8);
    const CommGroup tp = tp_group(4, GBps);
    const BlockModels b = s.blocks(tp, OverlapOptions{});
    const double S = s.activation_bytes();
    const double expected = 2.0 * ring_gather(S / 2.0, 4, GBps) + 2.0 * ring_gather(S, 4, GBps);
    EXPECT_NEAR(b.layer.forward.tp_comm_s, expected, 1e-9 * expected);
}

TEST(TensorParallelComm, UserbuffersHoldSixteenSmsForTheReduceScattersAndTheBulkOverlaps) {
    // Transformer Engine's default userbuffers layout: the projection and MLP-down GEMMs (forward)
    // and the QKV and MLP-up input- and weight-gradient GEMMs (backward) run on 132 - 16 SMs while
    // the communication kernels hold the rest; every other GEMM keeps all 132. With a flat GEMM
    // efficiency each of those six GEMMs takes 132/116 of its time. The extra compute is exactly
    // that share of those GEMMs' FLOPs at the rate of the flat efficiency.
    const LayerSetup s(4, true);
    const CommGroup tp = tp_group(4, 400);
    OverlapOptions ub;
    ub.tp_comm_overlap = true;
    const BlockModels with = s.blocks(tp, ub), without = s.blocks(tp, OverlapOptions{});
    const double T = 4096, h = 4096, q = 4096 / 4.0, kv = 8 * 128 / 4.0, f_up = 2.0 * 14336 / 4.0, f = 14336 / 4.0;
    const double rate = 1000e12 * 0.92 * 0.8;  // peak x sustained clock x the table's efficiency
    const double forward_flops = 2.0 * T * (q * h + f * h);                     // projection, MLP down
    const double backward_flops = 2.0 * 2.0 * T * (h * (q + 2 * kv) + h * f_up);    // QKV, MLP up: dgrad + wgrad
    const double extra = (132.0 / 116.0 - 1.0) / rate;
    EXPECT_NEAR(with.layer.forward.gemm_s - without.layer.forward.gemm_s, forward_flops * extra, 1e-9 * forward_flops * extra);
    EXPECT_NEAR(with.layer.backward.gemm_s - without.layer.backward.gemm_s, backward_flops * extra,
                1e-9 * backward_flops * extra);
}

TEST(TensorParallelComm, UserbuffersExposeOnlyTheLastReduceScatterChunkOnAFastLink) {
    // On a link fast enough that each chunk's transfer fits beside a chunk's GEMM, the ring
    // exchanges hide whole, and each pipelined reduce-scatter (4 chunks) leaves its last chunk,
    // a quarter of it, after the GEMM: 2 x 1/4 of a reduce-scatter per forward, nothing in the
    // backward, whose gathers and reduce-scatters run beside independent GEMMs.
    const double GBps = 2000;
    const LayerSetup s(4, true);
    const CommGroup tp = tp_group(4, GBps);
    OverlapOptions ub;
    ub.tp_comm_overlap = true;
    const BlockModels b = s.blocks(tp, ub);
    const double one = ring_gather(s.activation_bytes(), 4, GBps);
    EXPECT_NEAR(b.layer.forward.tp_comm_s, 2.0 * one / 4.0, 1e-9 * one);
    EXPECT_NEAR(b.layer.forward.tp_comm_hidden_s, 4.0 * one - 2.0 * one / 4.0, 1e-9 * one);
    EXPECT_EQ(b.layer.backward.tp_comm_s, 0.0);
    EXPECT_NEAR(b.layer.backward.tp_comm_hidden_s, 6.0 * one, 1e-9 * one);
}

TEST(TensorParallelComm, OnASlowLinkOverlapHidesAtMostTheGemmsItPipelines) {
    // When the link is the bottleneck: a ring exchange of tp steps hides all but one of its tp
    // GEMM chunks, (tp-1)/tp of the GEMM; a pipelined reduce-scatter of 4 chunks hides three
    // chunks' GEMM; so the exposed forward time is the collectives' total less 3/4 of QKV's and
    // MLP-up's GEMMs and 3/4 of the projection's and MLP-down's (on 116 SMs).
    const double GBps = 0.5;
    const LayerSetup s(4, true);
    const CommGroup tp = tp_group(4, GBps);
    OverlapOptions ub;
    ub.tp_comm_overlap = true;
    const BlockModels b = s.blocks(tp, ub);
    const double T = 4096, h = 4096, q = 4096 / 4.0, kv = 8 * 128 / 4.0, f_up = 2.0 * 14336 / 4.0, f = 14336 / 4.0;
    const double rate = 1000e12 * 0.92 * 0.8;
    const double gathered_gemms = 2.0 * T * h * (q + 2 * kv + f_up) / rate;
    const double reduced_gemms = 2.0 * T * (q * h + f * h) / rate * 132.0 / 116.0;
    const double all = 4.0 * ring_gather(s.activation_bytes(), 4, GBps);
    const double expected = all - 0.75 * gathered_gemms - 0.75 * reduced_gemms;
    EXPECT_NEAR(b.layer.forward.tp_comm_s, expected, 1e-9 * expected);
}

TEST(TensorParallelComm, AsyncTpHoldsNoSmsAndPipelinesOverTheGroup) {
    // PyTorch's async TP (torchtitan): copy engines move its chunks, so no GEMM gives up SMs, and
    // its matmul-reduce-scatter cuts the GEMM into tp chunks, leaving 1/tp of each reduce-scatter
    // after it; its backward keeps the gathered input and reduce-scatters each column-parallel
    // input gradient pipelined behind that GEMM, leaving 1/tp of it too.
    const double GBps = 2000;
    const LayerSetup s(4, true);
    const CommGroup tp = tp_group(4, GBps);
    OverlapOptions async_tp;
    async_tp.tp_comm_overlap = true;
    async_tp.tp_overlap_symmetric_memory = true;
    async_tp.tp_backward_overlap = false;
    const BlockModels b = s.blocks(tp, async_tp), plain = s.blocks(tp, OverlapOptions{});
    const double one = ring_gather(s.activation_bytes(), 4, GBps);
    EXPECT_DOUBLE_EQ(b.layer.forward.gemm_s, plain.layer.forward.gemm_s);
    EXPECT_DOUBLE_EQ(b.layer.backward.gemm_s, plain.layer.backward.gemm_s);
    EXPECT_NEAR(b.layer.forward.tp_comm_s, 2.0 * one / 4.0, 1e-9 * one);
    EXPECT_NEAR(b.layer.backward.tp_comm_s, 2.0 * one / 4.0, 1e-9 * one);
    EXPECT_NEAR(b.layer.backward.tp_comm_hidden_s, 4.0 * one - 2.0 * one / 4.0, 1e-9 * one);
}

// PyTorch's collective matmuls issue one op per shard: each of the 4 forward GEMMs and the 4
// backward input-gradient GEMMs (the row-parallel ones gathered into, the column-parallel ones
// reduce-scattered out of) pays tp - 1 more kernels' fixed cost than the whole GEMM (the flat
// efficiency leaves the chunks' FLOP time that of the whole), and each of the 2 forward and 2
// backward matmul-reduce-scatters sums the tp partials in a kernel reading T x h and writing
// T/tp x h.
TEST(TensorParallelComm, AsyncTpPaysEachShardsOpAndTheSumOfThePartials) {
    const int tp = 4;
    LayerSetup s(tp, true);
    json profile = {{"sm_count", 132}, {"kernel_launch_us", 5},
                    {"gemm_table", {{{"m", 4096}, {"n", 4096}, {"k", 4096}, {"efficiency", 0.8}}}},
                    {"collective", {{"latency_us", 0}, {"sm_interference", 0.1}}}};
    s.cluster = flat_gemm_cluster();
    s.cluster.profile = profile;
    const CommGroup group = tp_group(tp, 1e6);  // a fast link: the collectives hide
    OverlapOptions async_tp;
    async_tp.tp_comm_overlap = true;
    async_tp.tp_overlap_symmetric_memory = true;
    async_tp.tp_backward_overlap = false;
    OverlapOptions nccl;
    nccl.tp_backward_overlap = false;
    const BlockModels b = s.blocks(group, async_tp), plain = s.blocks(group, nccl);
    const double launch = 5e-6;
    EXPECT_NEAR(b.layer.forward.gemm_s - plain.layer.forward.gemm_s, 4.0 * (tp - 1) * launch, 1e-12);
    EXPECT_NEAR(b.layer.backward.gemm_s - plain.layer.backward.gemm_s, 4.0 * (tp - 1) * launch, 1e-12);
    const ComputeModel gpu(s.cluster.gpu, hardware_efficiency(s.cluster), s.plan.precision);
    const double sum = gpu.memory_time(s.activation_bytes() * (1.0 + 1.0 / tp), 1);
    EXPECT_NEAR(b.layer.forward.memory_bound_s - plain.layer.forward.memory_bound_s, 2.0 * sum, 1e-12);
    EXPECT_NEAR(b.layer.backward.memory_bound_s - plain.layer.backward.memory_bound_s, 2.0 * sum, 1e-12);
}
