// The software stack's kernels: attention kernel generations and their sequence ramp against the
// published kernel benchmarks, and the bytes the elementwise, loss and fp8-cast kernels move,
// each against a hand count.
#include <gtest/gtest.h>

#include "core/presets.h"
#include "simulator/comm_cost.h"
#include "simulator/compute_cost.h"
#include "simulator/layer_cost.h"
#include "simulator/simulate.h"

using namespace tessel;

namespace {
// A GPU as its preset describes it, with no fixed kernel cost and the full clock, so that a
// kernel's rate is the benchmark figure the preset was read from.
ComputeModel bench_gpu(const char* preset, Precision p = Precision::bf16) {
    const ClusterSpec c = load_cluster(preset);
    HardwareEfficiency e = hardware_efficiency(c);
    e.kernel_launch_s = 0;
    e.sustained_clock_fraction = 1.0;
    e.attention_v1_scale = 1.0;
    return ComputeModel(c.gpu, e, p);
}

// Forward + backward TFLOP/s as the FlashAttention benchmarks count them: causal attention is
// 4·b·h·s²·d / 2 FLOPs forward, 3.5 times that forward + backward (benchmark_flash_attention.py),
// for batch x seq = 16k tokens and 2048 hidden (16 heads of 128), the figures' setting.
double benchmark_tflops(const ComputeModel& gpu, double seq, AttentionKernel k, double head_dim = 128) {
    const double heads = 2048 / head_dim, batch = 16384 / seq;
    AttentionShape a{batch * heads, seq, seq, head_dim, true, k};
    const double counted = 3.5 * 4.0 * batch * heads * seq * seq * head_dim / 2.0;
    return counted / (gpu.attention_forward_time(a) + gpu.attention_backward_time(a)) / 1e12;
}

CommGroup single() { return CommGroup{}; }

ModelSpec gpt(int layers, int hidden, int heads, int vocab) {
    ModelSpec m;
    m.name = "test-gpt";
    m.num_layers = layers;
    m.hidden_size = hidden;
    m.num_attention_heads = heads;
    m.num_kv_heads = heads;
    m.head_dim = hidden / heads;
    m.ffn_hidden_size = 4 * hidden;
    m.vocab_size = vocab;
    m.seq_length = 2048;
    m.max_position_embeddings = 2048;
    m.activation = Activation::gelu;
    m.norm = Norm::layernorm;
    m.position_embedding = PositionEmbedding::learned;
    m.tied_embeddings = true;
    return m;
}

Plan single_gpu(int microbatch, int seq, Precision precision = Precision::bf16) {
    Plan p;
    p.microbatch_size = microbatch;
    p.global_batch_size = microbatch;
    p.seq_length = seq;
    p.precision = precision;
    return p;
}
}  // namespace

TEST(KernelCosts, FlashAttention2RampReproducesThePublishedCurve) {
    // FlashAttention-2 README, assets/flash2_a100_fwd_bwd_benchmark.png and
    // flash2_h100_fwd_bwd_benchmark.png, causal, head dim 128, forward + backward TFLOP/s.
    const auto a100 = bench_gpu("dgx-a100");
    EXPECT_NEAR(benchmark_tflops(a100, 512, AttentionKernel::flash), 99, 0.06 * 99);
    EXPECT_NEAR(benchmark_tflops(a100, 2048, AttentionKernel::flash), 155, 0.05 * 155);
    EXPECT_NEAR(benchmark_tflops(a100, 16384, AttentionKernel::flash), 189, 0.05 * 189);
    const auto h100 = bench_gpu("dgx-h100");
    EXPECT_NEAR(benchmark_tflops(h100, 512, AttentionKernel::flash), 163, 0.06 * 163);
    EXPECT_NEAR(benchmark_tflops(h100, 2048, AttentionKernel::flash), 265, 0.05 * 265);
    EXPECT_NEAR(benchmark_tflops(h100, 16384, AttentionKernel::flash), 328, 0.05 * 328);
    // Head dim 64 runs ~10% slower (A100 causal at 16k: 171 against 189).
    EXPECT_NEAR(benchmark_tflops(a100, 16384, AttentionKernel::flash, 64), 171, 0.05 * 171);
}

TEST(KernelCosts, FlashAttention1ClassRunsAtItsPublishedFigure) {
    // Same figures, FlashAttention (v1): A100 causal head dim 128 55 / 69 / 83 TFLOP/s at 512 /
    // 2k / 16k tokens; H100 98 / 108 / 137.
    const auto a100 = bench_gpu("dgx-a100");
    EXPECT_NEAR(benchmark_tflops(a100, 16384, AttentionKernel::flash1), 83, 0.05 * 83);
    EXPECT_NEAR(benchmark_tflops(a100, 2048, AttentionKernel::flash1), 69, 0.10 * 69);
    const auto h100 = bench_gpu("dgx-h100");
    EXPECT_NEAR(benchmark_tflops(h100, 16384, AttentionKernel::flash1), 137, 0.05 * 137);
    // About half of FlashAttention-2 at long sequences.
    EXPECT_LT(benchmark_tflops(a100, 16384, AttentionKernel::flash1), 0.5 * benchmark_tflops(a100, 16384, AttentionKernel::flash));
}

TEST(KernelCosts, AttentionEfficiencyIsTheLimitTimesTheRamp) {
    // 27 x 16 query blocks fill 4 waves of the A100's 108 SMs exactly; head dim 128 takes no
    // head-dim loss; a causal query block runs (16 + 1) / 2 key blocks on average against a fixed
    // cost of 1.5 (FlashAttention-2 class) or 0.6 (v1 class) of them.
    const ClusterSpec c = load_cluster("dgx-a100");
    const ComputeModel gpu = bench_gpu("dgx-a100");
    AttentionShape a{27, 2048, 2048, 128, true, AttentionKernel::flash};
    EXPECT_NEAR(gpu.attention_efficiency(a, true), c.gpu.flash_forward_efficiency * 8.5 / (8.5 + 1.5), 1e-12);
    EXPECT_NEAR(gpu.attention_efficiency(a, false), c.gpu.flash_backward_efficiency * 8.5 / (8.5 + 1.5), 1e-12);
    a.kernel = AttentionKernel::flash1;
    EXPECT_NEAR(gpu.attention_efficiency(a, true), c.gpu.flash1_efficiency * 8.5 / (8.5 + 0.6), 1e-12);
    // attention_v1_scale multiplies the v1 class only.
    HardwareEfficiency e = hardware_efficiency(c);
    e.sustained_clock_fraction = 1.0;
    e.attention_v1_scale = 1.3;
    const ComputeModel scaled(c.gpu, e, Precision::bf16);
    EXPECT_NEAR(scaled.attention_efficiency(a, true), 1.3 * c.gpu.flash1_efficiency * 8.5 / 9.1, 1e-12);
    a.kernel = AttentionKernel::flash;
    EXPECT_NEAR(scaled.attention_efficiency(a, true), gpu.attention_efficiency(a, true), 1e-12);
}

TEST(KernelCosts, EagerElementwiseMovesTheHandCountedExtraBytes) {
    // GPT layer (LayerNorm, GeLU, no rotary, no dropout, biases): forward is the same either way
    // (norms 2·2h, residual branches 2·3h, GeLU 2f elements); eager backward adds the norms'
    // second weight-gradient pass (2·h each) and the Q/K/V gradient assembly (2·3h).
    ModelSpec m = gpt(2, 1024, 8, 50304);
    const Plan p = single_gpu(4, 2048);
    const ComputeModel gpu = bench_gpu("dgx-a100");
    const CommGroup g = single();
    OverlapOptions fused, eager;
    eager.fused_elementwise = false;
    const auto bf = block_models(m, p, gpu, g, g, fused);
    const auto be = block_models(m, p, gpu, g, g, eager);
    const double T = 4.0 * 2048, h = 1024, E = 2.0;
    const double Bps = 2039e9 * gpu.efficiency().memory_bandwidth_efficiency;
    EXPECT_NEAR(be.layer.forward.memory_bound_s, bf.layer.forward.memory_bound_s, 1e-15);
    const double extra = (2.0 * T * h + 2.0 * T * 3.0 * h) * E;
    EXPECT_NEAR(be.layer.backward.memory_bound_s - bf.layer.backward.memory_bound_s, extra / Bps, 1e-12);
    // Biases: the backward reads each biased output gradient once more (3h + h + 4h + h).
    m.linear_bias = true;
    const auto bb = block_models(m, p, gpu, g, g, fused);
    EXPECT_NEAR(bb.layer.backward.memory_bound_s - bf.layer.backward.memory_bound_s, T * 9.0 * h * E / Bps, 1e-12);
}

TEST(KernelCosts, EagerRotaryAndSwigluRunInMorePasses) {
    // Llama layer: eager rotary casts Q and K to fp32 and back (2E + 16 bytes per element against
    // 2E fused), each way; eager SwiGLU runs silu and the product apart (5f against 3f elements
    // forward, 8f against 5f backward).
    ModelSpec m = gpt(2, 1024, 8, 32000);
    m.activation = Activation::swiglu;
    m.norm = Norm::rmsnorm;
    m.position_embedding = PositionEmbedding::rope;
    m.tied_embeddings = false;
    m.ffn_hidden_size = 2816;
    const Plan p = single_gpu(2, 2048);
    const ComputeModel gpu = bench_gpu("dgx-a100");
    const CommGroup g = single();
    OverlapOptions fused, eager;
    eager.fused_elementwise = false;
    const auto bf = block_models(m, p, gpu, g, g, fused);
    const auto be = block_models(m, p, gpu, g, g, eager);
    const double T = 2.0 * 2048, h = 1024, f = 2816, E = 2.0, qk = 1024 + 1024;
    const double Bps = 2039e9 * gpu.efficiency().memory_bandwidth_efficiency;
    EXPECT_NEAR(be.layer.forward.memory_bound_s - bf.layer.forward.memory_bound_s, (T * qk * 16.0 + 2.0 * T * f * E) / Bps,
                1e-12);
    const double backward = T * qk * 16.0 + 3.0 * T * f * E + 2.0 * T * h * E + 2.0 * T * 3.0 * h * E;
    EXPECT_NEAR(be.layer.backward.memory_bound_s - bf.layer.backward.memory_bound_s, backward / Bps, 1e-12);
}

TEST(KernelCosts, EagerRmsNormStreamsFp32CopiesOpByOp) {
    // PyTorch's eager RMSNorm on bf16 input, per element: forward to(fp32) 2+4, pow 4+4, mean 4,
    // x*rsqrt 4+4, *weight 4+4, cast back 4+2 = 36 bytes against the fused kernel's 2+2; backward
    // cast up 2+4, dy*w 4+4, weight gradient (product 4+4+4, reduction 4), dy*rsqrt 4+4, rsqrt's
    // gradient (product 4+4+4, reduction 4), pow backward 4+4+4, sum of both paths 4+4+4, cast
    // back 4+2 = 84 against the eager kernel pair's 5 x 2. Two norms per layer; LayerNorm models
    // are left alone.
    ModelSpec m = gpt(2, 1024, 8, 32000);
    m.norm = Norm::rmsnorm;
    const Plan p = single_gpu(2, 2048);
    const ComputeModel gpu = bench_gpu("dgx-a100");
    const CommGroup g = single();
    OverlapOptions eager, eager_norm;
    eager.fused_elementwise = eager_norm.fused_elementwise = false;
    eager_norm.eager_rmsnorm = true;
    const auto be = block_models(m, p, gpu, g, g, eager);
    const auto bn = block_models(m, p, gpu, g, g, eager_norm);
    const double T = 2.0 * 2048, h = 1024;
    const double Bps = 2039e9 * gpu.efficiency().memory_bandwidth_efficiency;
    EXPECT_NEAR(bn.layer.forward.memory_bound_s - be.layer.forward.memory_bound_s, 2.0 * T * h * (36.0 - 4.0) / Bps, 1e-12);
    EXPECT_NEAR(bn.layer.backward.memory_bound_s - be.layer.backward.memory_bound_s, 2.0 * T * h * (84.0 - 10.0) / Bps,
                1e-12);
    m.norm = Norm::layernorm;
    EXPECT_DOUBLE_EQ(block_models(m, p, gpu, g, g, eager_norm).layer.forward.memory_bound_s,
                     block_models(m, p, gpu, g, g, eager).layer.forward.memory_bound_s);
}

TEST(KernelCosts, QkNormStreamsTheQueriesAndKeysOnceEachWay) {
    // An RMSNorm over Q (T x H d) and K (T x K d), as fused kernels: forward reads and writes each
    // element (2 x 2 bytes in bf16), backward reads x and dy and writes dx (3 x 2 bytes) plus the
    // weight gradient's second read under eager PyTorch (+2). Here H d = 1024, K d = 256 (GQA 8:2).
    ModelSpec m = gpt(2, 1024, 8, 32000);
    m.norm = Norm::rmsnorm;
    m.num_kv_heads = 2;
    const Plan p = single_gpu(2, 2048);
    const ComputeModel gpu = bench_gpu("dgx-a100");
    const CommGroup g = single();
    const OverlapOptions fused;
    const auto plain = block_models(m, p, gpu, g, g, fused);
    for (QkNorm kind : {QkNorm::per_head, QkNorm::full_width}) {
        m.qk_norm = kind;
        const auto with = block_models(m, p, gpu, g, g, fused);
        const double elements = 2.0 * 2048 * (1024 + 256);
        const double Bps = 2039e9 * gpu.efficiency().memory_bandwidth_efficiency;
        EXPECT_NEAR(with.layer.forward.memory_bound_s - plain.layer.forward.memory_bound_s, 4.0 * elements / Bps, 1e-12);
        EXPECT_NEAR(with.layer.backward.memory_bound_s - plain.layer.backward.memory_bound_s, 8.0 * elements / Bps, 1e-12);
        // Its weights are replicated norms: parameters grow by the hand count of qk_norm_weights.
        EXPECT_DOUBLE_EQ(with.layer.parameters - plain.layer.parameters,
                         kind == QkNorm::per_head ? 2.0 * 128 : 1024.0 + 256.0);
    }
}

TEST(KernelCosts, SlidingWindowVisitsOnlyTheBandsKeyBlocks) {
    // 4096 tokens in blocks of 128: 32 query blocks, block j visits j + 1 key blocks causally
    // (528 of 1024). A window of 1024 keys touches ceil(1024/128) + 1 = 9 blocks: 1 + ... + 9 for
    // the first nine query blocks, 9 for each of the other 23: 45 + 207 = 252.
    AttentionShape full{32, 4096, 4096, 128, true, AttentionKernel::flash};
    AttentionShape band = full;
    band.window = 1024;
    EXPECT_DOUBLE_EQ(full.forward_flops(), 4.0 * 32 * 4096.0 * 4096 * 128 * 528 / 1024);
    EXPECT_DOUBLE_EQ(band.forward_flops(), 4.0 * 32 * 4096.0 * 4096 * 128 * 252 / 1024);
    // A window as long as the sequence changes nothing; the unfused kernel computes the square.
    AttentionShape wide = full;
    wide.window = 4096;
    EXPECT_DOUBLE_EQ(wide.forward_flops(), full.forward_flops());
    AttentionShape unfused = band;
    unfused.kernel = AttentionKernel::unfused;
    EXPECT_DOUBLE_EQ(unfused.forward_flops(), 4.0 * 32 * 4096.0 * 4096 * 128);
    // Fewer blocks per query block, so the band's kernel runs below the full one's rate but takes
    // less time (the per-block ramp of attention_efficiency).
    const ComputeModel gpu = bench_gpu("dgx-h100");
    EXPECT_LT(gpu.attention_forward_time(band), gpu.attention_forward_time(full));
    EXPECT_GT(gpu.attention_forward_time(band) / band.forward_flops(), gpu.attention_forward_time(full) / full.forward_flops());
}

TEST(KernelCosts, GemmaPostNormsSoftCapAndInterleavedWindows) {
    ModelSpec m = gpt(2, 1024, 8, 32000);
    m.norm = Norm::rmsnorm;
    m.activation = Activation::geglu;
    const Plan p = single_gpu(2, 4096);
    const ComputeModel gpu = bench_gpu("dgx-h100");
    const CommGroup g = single();
    const OverlapOptions fused;
    const auto plain = block_models(m, p, gpu, g, g, fused);
    // GeGLU streams what SwiGLU does: the same fused gated kernel's bytes.
    ModelSpec swiglu = m;
    swiglu.activation = Activation::swiglu;
    EXPECT_DOUBLE_EQ(block_models(swiglu, p, gpu, g, g, fused).layer.forward.memory_bound_s, plain.layer.forward.memory_bound_s);
    const double T = 2.0 * 4096, h = 1024, V = 32000, E = 2.0;
    const double Bps = 3350e9 * gpu.efficiency().memory_bandwidth_efficiency;
    // Two more norms each way: forward reads and writes T x h (2E per element), backward reads x
    // and dy and writes dx (3E) and the weight gradient's pass (fused: 4E in all, as the others).
    ModelSpec sandwich = m;
    sandwich.sandwich_norms = true;
    const auto s = block_models(sandwich, p, gpu, g, g, fused);
    EXPECT_NEAR(s.layer.forward.memory_bound_s - plain.layer.forward.memory_bound_s, 2.0 * 2.0 * E * T * h / Bps, 1e-12);
    EXPECT_NEAR(s.layer.backward.memory_bound_s - plain.layer.backward.memory_bound_s, 2.0 * 4.0 * E * T * h / Bps, 1e-12);
    // The logit soft-cap: one pass over the logits forward (read, write), one backward (3 tensors).
    ModelSpec capped = m;
    capped.logit_softcap = true;
    const auto c = block_models(capped, p, gpu, g, g, fused);
    EXPECT_NEAR(c.head.forward.memory_bound_s - plain.head.forward.memory_bound_s, 2.0 * E * T * V / Bps, 1e-12);
    EXPECT_NEAR(c.head.backward.memory_bound_s - plain.head.backward.memory_bound_s, 3.0 * E * T * V / Bps, 1e-12);
    // Windows on all but every 2nd layer: the layer's attention is the mean of a windowed and a
    // full one.
    ModelSpec all = m, half = m;
    all.sliding_window = half.sliding_window = 1024;
    half.sliding_window_pattern = 2;
    const double full_s = plain.layer.forward.attention_s, windowed_s = block_models(all, p, gpu, g, g, fused).layer.forward.attention_s;
    EXPECT_LT(windowed_s, full_s);
    EXPECT_NEAR(block_models(half, p, gpu, g, g, fused).layer.forward.attention_s, (windowed_s + full_s) / 2.0, 1e-15);
}

TEST(KernelCosts, Fp32CrossEntropyStreamsTheLogitsSeveralTimes) {
    // Per logit: fused 2 bytes forward (one read) and 4 backward (read, write in place); fp32
    // eager 2 + 36 forward (cast, max, shift, exp, sum, normalise) and 12 + 2 backward.
    const ModelSpec m = gpt(2, 1024, 8, 50304);
    const Plan p = single_gpu(4, 2048);
    const ComputeModel gpu = bench_gpu("dgx-a100");
    const CommGroup g = single();
    OverlapOptions fused, eager;
    eager.fused_cross_entropy = false;
    const auto bf = block_models(m, p, gpu, g, g, fused);
    const auto be = block_models(m, p, gpu, g, g, eager);
    const double logits = 4.0 * 2048 * 50304;
    const double Bps = 2039e9 * gpu.efficiency().memory_bandwidth_efficiency;
    EXPECT_NEAR(be.head.forward.memory_bound_s - bf.head.forward.memory_bound_s, logits * 36.0 / Bps, 1e-12);
    EXPECT_NEAR(be.head.backward.memory_bound_s - bf.head.backward.memory_bound_s, logits * 10.0 / Bps, 1e-12);
}

TEST(KernelCosts, LoggedMetricCrossEntropiesEachCastAndLogSoftmaxTheLogits) {
    // Per logit and metric: the cast reads 2 and writes 4 bytes, log_softmax reads 4 and writes 4;
    // four kernels each (cast, log_softmax, target gather, target count).
    const ModelSpec m = gpt(2, 1024, 8, 50304);
    const Plan p = single_gpu(4, 2048);
    const ComputeModel gpu = bench_gpu("dgx-a100");
    const CommGroup g = single();
    OverlapOptions none, two;
    two.metric_cross_entropies = 2;
    const auto b0 = block_models(m, p, gpu, g, g, none);
    const auto b2 = block_models(m, p, gpu, g, g, two);
    const double logits = 4.0 * 2048 * 50304;
    const double Bps = 2039e9 * gpu.efficiency().memory_bandwidth_efficiency;
    EXPECT_NEAR(b2.head.forward.compute_s - b0.head.forward.compute_s,
                2.0 * logits * 14.0 / Bps + 8.0 * gpu.efficiency().kernel_launch_s, 1e-12);
    EXPECT_DOUBLE_EQ(b2.head.backward.compute_s, b0.head.backward.compute_s);
    EXPECT_DOUBLE_EQ(b2.layer.forward.compute_s, b0.layer.forward.compute_s);
}

TEST(KernelCosts, LoggedMetricsPeakAfterTheBackwardWhenTheLogitsOutweighTheLayers) {
    // A small model with a large vocabulary and microbatch: after the backward only the 16-bit
    // logits (2 bytes), the metric's fp32 copy (4) and its log_softmax (4) are live, 10 bytes per
    // logit, more than the stored activations of two narrow layers and their fused loss (2).
    const ModelSpec m = gpt(2, 256, 4, 50304);
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 1);
    const Plan p = single_gpu(16, 1024);
    SimulateOptions plain, logged;
    plain.fused_cross_entropy = logged.fused_cross_entropy = true;
    logged.metric_cross_entropies = 2;
    const double logits = 16.0 * 1024 * 50304;
    EXPECT_NEAR(estimate_memory(m, c, p, logged).activations, 10.0 * logits / (1024.0 * 1024 * 1024), 1e-9);
    EXPECT_LT(estimate_memory(m, c, p, plain).activations, estimate_memory(m, c, p, logged).activations);
}

TEST(KernelCosts, Fp8CastsEveryLayerGemmOperandAndKeepsTheHeadSixteenBit) {
    // Transformer Engine casts each linear's input and weight (forward) and its output gradient
    // (backward) to fp8 with a transposed copy: 2 bytes read + 2 written per element. The weights
    // here on every microbatch (share 1: torchao's Float8Linear; Megatron's share is 1/m).
    const ModelSpec m = gpt(2, 1024, 8, 50304);
    const ComputeModel bf16 = bench_gpu("dgx-h100", Precision::bf16), fp8 = bench_gpu("dgx-h100", Precision::fp8);
    const CommGroup g = single();
    OverlapOptions o;
    o.fp8_weight_cast_share = 1;
    const auto b16 = block_models(m, single_gpu(2, 2048, Precision::bf16), bf16, g, g, o);
    const auto b8 = block_models(m, single_gpu(2, 2048, Precision::fp8), fp8, g, g, o);
    const double T = 2.0 * 2048, h = 1024, f = 4096;
    const double Bps = 3350e9 * fp8.efficiency().memory_bandwidth_efficiency;
    // Linears (in, out): QKV (h, 3h), projection (h, h), up (h, f), down (f, h).
    const double inputs = T * (h + h + h + f), weights = 3 * h * h + h * h + h * f + f * h;
    const double outputs = T * (3 * h + h + f + h);
    EXPECT_NEAR(b8.layer.forward.memory_bound_s - b16.layer.forward.memory_bound_s, 4.0 * (inputs + weights) / Bps, 1e-12);
    EXPECT_NEAR(b8.layer.backward.memory_bound_s - b16.layer.backward.memory_bound_s, 4.0 * outputs / Bps, 1e-12);
    // The layer GEMMs run at the fp8 peak, the LM head at the 16-bit one.
    EXPECT_LT(b8.layer.forward.gemm_s, 0.7 * b16.layer.forward.gemm_s);
    EXPECT_NEAR(b8.head.forward.gemm_s, b16.head.forward.gemm_s, 1e-12);
    EXPECT_NEAR(b8.head.backward.gemm_s, b16.head.backward.gemm_s, 1e-12);
}

TEST(KernelCosts, SimulateOptionsSelectTheKernels) {
    const ModelSpec m = load_model("gpt2-1.5b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 8);
    Plan p = single_gpu(8, 1024);
    p.dp = 8;
    p.global_batch_size = 64;
    SimulateOptions fastest;
    fastest.fused_cross_entropy = true;
    SimulateOptions v1 = fastest, eager = fastest, fp32_loss = fastest;
    v1.flash_attention_version = 1;
    eager.fused_elementwise = false;
    fp32_loss.fused_cross_entropy = false;
    const double t = simulate(m, c, p, fastest).step_time_s;
    EXPECT_GT(simulate(m, c, p, v1).step_time_s, t);
    EXPECT_GT(simulate(m, c, p, eager).step_time_s, t);
    EXPECT_GT(simulate(m, c, p, fp32_loss).step_time_s, t);
    // OverlapOptions' defaults are the fastest choices, so a bound built from them stays a bound.
    const OverlapOptions d;
    EXPECT_EQ(d.attention, AttentionKernel::flash);
    EXPECT_TRUE(d.fused_elementwise);
    EXPECT_TRUE(d.fused_cross_entropy);
}

TEST(KernelCosts, FusedLossKeepsSixteenBitLogitsInsteadOfTheFp32Softmax) {
    // One microbatch in flight on one stage: the loss's saved tensor is 4 bytes per logit (the
    // fp32 softmax of the eager cross entropy) or 2 (the 16-bit logits a fused classifier keeps).
    const ModelSpec m = load_model("gpt2-1.5b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 1);
    const Plan p = single_gpu(4, 1024);
    SimulateOptions eager, fused;
    fused.fused_cross_entropy = true;
    const double diff = estimate_memory(m, c, p, eager).activations - estimate_memory(m, c, p, fused).activations;
    // GPT-2's 50257 tokens padded to a multiple of 128 (the options' default, as Megatron-LM pads).
    EXPECT_NEAR(diff, 2.0 * 4 * 1024 * 50304.0 / (1024.0 * 1024 * 1024), 1e-9);
}

TEST(KernelCosts, CudnnAttentionReachesItsPublishedLongSequenceSpeedOnH100) {
    // Shah et al. 2024 (FlashAttention-3), Fig. 5-6, H100 SXM5, head dim 128, 16k tokens (one
    // sequence, 16 heads): cuDNN forward 539 TFLOP/s (causal), backward 516. The kernel takes
    // FlashAttention-2's ramp, so shorter sequences run slower (the figure's cuDNN forward falls to
    // 484 at 2k and 315 at 512; the ramp gives somewhat less there).
    const auto h100 = bench_gpu("dgx-h100");
    AttentionShape a{16, 16384, 16384, 128, true, AttentionKernel::cudnn};
    const double counted = 4.0 * 16 * 16384.0 * 16384 * 128 / 2.0;  // the benchmark's causal count
    EXPECT_NEAR(counted / h100.attention_forward_time(a) / 1e12, 539, 0.05 * 539);
    EXPECT_NEAR(2.5 * counted / h100.attention_backward_time(a) / 1e12, 516, 0.05 * 516);
    AttentionShape f = a;
    f.kernel = AttentionKernel::flash;
    EXPECT_LT(h100.attention_forward_time(a), h100.attention_forward_time(f) / 1.4);
    EXPECT_LT(benchmark_tflops(h100, 2048, AttentionKernel::cudnn), benchmark_tflops(h100, 16384, AttentionKernel::cudnn));
    // A GPU with no cuDNN figures (the A100 presets) runs it as FlashAttention-2.
    const auto a100 = bench_gpu("dgx-a100");
    EXPECT_DOUBLE_EQ(a100.attention_forward_time(a), a100.attention_forward_time(f));
    EXPECT_DOUBLE_EQ(a100.attention_backward_time(a), a100.attention_backward_time(f));
}

TEST(KernelCosts, AttentionDropoutSlowsTheFusedKernelsByTheirMeasuredFactors) {
    // Measured on an H200 (reports/gpu/h200/attention-dropout.txt): with dropout 0.1 the
    // FlashAttention-2 kernel runs 1.21x / 1.10x as long forward / backward, cuDNN's 2.05x / 1.24x.
    // The Triton FlashAttention-1-class kernel has no dropout.
    const ComputeModel h100 = bench_gpu("dgx-h100");
    const HardwareEfficiency& e = h100.efficiency();
    auto ratio = [&](AttentionKernel k, bool forward) {
        AttentionShape a{16, 16384, 16384, 128, true, k};
        AttentionShape d = a;
        d.dropout = true;
        return forward ? h100.attention_forward_time(d) / h100.attention_forward_time(a)
                       : h100.attention_backward_time(d) / h100.attention_backward_time(a);
    };
    EXPECT_NEAR(ratio(AttentionKernel::flash, true), e.flash_dropout_forward_slowdown, 1e-9);
    EXPECT_NEAR(ratio(AttentionKernel::flash, false), e.flash_dropout_backward_slowdown, 1e-9);
    EXPECT_NEAR(ratio(AttentionKernel::cudnn, true), e.cudnn_dropout_forward_slowdown, 1e-9);
    EXPECT_NEAR(ratio(AttentionKernel::cudnn, false), e.cudnn_dropout_backward_slowdown, 1e-9);
    EXPECT_DOUBLE_EQ(ratio(AttentionKernel::flash1, true), 1.0);
    EXPECT_NEAR(e.flash_dropout_forward_slowdown, 1.21, 0.005);
    EXPECT_NEAR(e.cudnn_dropout_forward_slowdown, 2.05, 0.005);
    // With dropout, cuDNN's forward is no faster than FlashAttention-2's on the H100's figures
    // (0.56 / 2.05 against 0.39 / 1.21 of the peak).
    AttentionShape c{16, 16384, 16384, 128, true, AttentionKernel::cudnn, true};
    AttentionShape f = c;
    f.kernel = AttentionKernel::flash;
    EXPECT_GT(h100.attention_forward_time(c), h100.attention_forward_time(f));
}

TEST(KernelCosts, GemmModelMatchesBackToBackGemmsMeasuredOnAnH200) {
    // reports/gpu/h200/gemm-speed.txt (tools/gpu/gemm_speed.py): cuBLASLt through PyTorch, random
    // operands, runs of back-to-back calls, share of the dense peak. bf16 at Llama 3.1 8B/70B's
    // forward GEMMs (8192 tokens) and at the Megatron-Core 7.1B model's (4096 tokens, tp 2); fp8
    // as a training step mixes them (forward with fast accumulation, two backward GEMMs without).
    // The preset's lone-GPU ceilings times the fitted sustained-clock fraction give the same within
    // 5% below and 8% above: in a training step the GEMMs run beside bandwidth-bound kernels that
    // draw less power, and under the power limit their clock rises above a back-to-back run's
    // (8-13% measured with half the time in copies, reports/gpu/step-kernel-split.md).
    const ClusterSpec c = load_cluster("dgx-h200");
    const HardwareEfficiency e = hardware_efficiency(c);
    const ComputeModel bf16(c.gpu, e, Precision::bf16), fp8(c.gpu, e, Precision::fp8);
    struct Measured {
        double m, n, k, bf16, fp8;
    };
    const Measured measured[] = {
        {8192, 6144, 4096, 0.689, 0.608},  {8192, 4096, 4096, 0.669, 0.607},  {8192, 28672, 4096, 0.680, 0.622},
        {8192, 4096, 14336, 0.700, 0.638}, {8192, 10240, 8192, 0.684, 0.634}, {8192, 8192, 8192, 0.687, 0.628},
        {8192, 57344, 8192, 0.688, 0.631}, {8192, 8192, 28672, 0.694, 0.638}, {4096, 6144, 4096, 0.666, 0.595},
        {4096, 4096, 2048, 0.656, 0.540},  {4096, 8192, 4096, 0.668, 0.610},  {4096, 4096, 8192, 0.681, 0.616},
    };
    auto share = [](const ComputeModel& gpu, const Measured& x, double peak) {
        GemmShape g{x.m, x.n, x.k};
        return g.flops() / gpu.gemm_time(g) / peak;  // with its per-kernel fixed cost, as measured
    };
    for (const auto& x : measured) {
        EXPECT_GT(share(bf16, x, 989e12), 0.95 * x.bf16) << x.m << " x " << x.n << " x " << x.k;
        EXPECT_LT(share(bf16, x, 989e12), 1.08 * x.bf16) << x.m << " x " << x.n << " x " << x.k;
        EXPECT_GT(share(fp8, x, 1979e12), 0.95 * x.fp8) << x.m << " x " << x.n << " x " << x.k;
        EXPECT_LT(share(fp8, x, 1979e12), 1.08 * x.fp8) << x.m << " x " << x.n << " x " << x.k;
    }
}
