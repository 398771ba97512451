// Memory against the papers' own figures and formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/presets.h"
#include "simulator/memory_model.h"
#include "simulator/simulate.h"
#include "simulator/software_stack.h"

using namespace tessel;

TEST(MemoryModel, ZeroPaperExample) {
    // Rajbhandari et al. 2020, Fig. 1: Ψ = 7.5B, N_d = 64, K = 12 (mixed-precision Adam), in
    // 10^9-byte GB: baseline (2+2+12)Ψ = 120; P_os 31.4; P_os+g 16.6; P_os+g+p 1.9.
    const double psi = 7.5e9, GB = 1e9;
    EXPECT_NEAR(model_state_bytes(psi, 0, 64, Precision::fp16).total() / GB, 120.0, 0.05);
    EXPECT_NEAR(model_state_bytes(psi, 1, 64, Precision::fp16).total() / GB, 31.4, 0.05);
    EXPECT_NEAR(model_state_bytes(psi, 2, 64, Precision::fp16).total() / GB, 16.6, 0.05);
    EXPECT_NEAR(model_state_bytes(psi, 3, 64, Precision::bf16).total() / GB, 1.9, 0.05);
    // The parts: stage 1 shards only the 12Ψ.
    const auto s1 = model_state_bytes(psi, 1, 64, Precision::bf16);
    EXPECT_DOUBLE_EQ(s1.weights, 2 * psi);
    EXPECT_DOUBLE_EQ(s1.gradients, 2 * psi);
    EXPECT_DOUBLE_EQ(s1.optimizer, 12 * psi / 64);
}

TEST(MemoryModel, MegatronDistributedOptimizerGuide) {
    // Megatron Core's distributed optimizer guide, bytes per parameter with bf16 parameters and fp32
    // (main) gradients: 18 without the distributed optimizer, 6 + 12/d with it. The fp32 gradient
    // buffer is unsharded there; under ZeRO-3 FSDP's fp32 shard is its master weight: 16/d.
    const double psi = 1e9;
    const int d = 8;
    EXPECT_DOUBLE_EQ(model_state_bytes(psi, 0, d, Precision::bf16, true).total(), 18 * psi);
    EXPECT_DOUBLE_EQ(model_state_bytes(psi, 1, d, Precision::bf16, true).total(), (6 + 12.0 / d) * psi);
    EXPECT_DOUBLE_EQ(model_state_bytes(psi, 3, d, Precision::bf16, true).total(), 16.0 / d * psi);
    // A 16-bit gradient buffer (llm.c; NeMo's fp8 recipes) keeps the ZeRO paper's 2 bytes.
    EXPECT_DOUBLE_EQ(model_state_bytes(psi, 1, d, Precision::bf16, false).total(), (4 + 12.0 / d) * psi);
}

TEST(MemoryModel, TorchCrossEntropyBackwardHoldsTwoMoreFp32Copies) {
    // Without recompute the loss is the only working set. Megatron's loss keeps the fp32 softmax
    // (4 bytes per logit, stored) and needs the 16-bit logits beside it (2); PyTorch's
    // F.cross_entropy keeps its fp32 log-probabilities and its backward makes their gradient and the
    // logits' gradient, both fp32, out of place: 8 bytes per logit beside the stored 4.
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = load_cluster("dgx-h100");
    Plan p;
    p.dp = 8;
    p.microbatch_size = 2;
    p.global_batch_size = 16;
    p.seq_length = 4096;
    ActivationOptions megatron = default_activation_options(m), torch = megatron;
    torch.torch_cross_entropy = true;
    const double logits = 2.0 * 4096 * double(m.vocab_size);
    const double diff = memory_per_rank(m, c, p, torch)[0].activations - memory_per_rank(m, c, p, megatron)[0].activations;
    EXPECT_NEAR(diff, (8.0 - 2.0) * logits, 1e-9 * diff);
}

namespace {
// A GPT-3-175B layer shape (Brown et al. 2020) for Korthikanti et al. 2022, Table 2.
ModelSpec gpt_shape() {
    ModelSpec m;
    m.name = "gpt";
    m.num_layers = 96;
    m.hidden_size = 12288;
    m.num_attention_heads = 96;
    m.num_kv_heads = 96;
    m.head_dim = 128;
    m.ffn_hidden_size = 4 * 12288;
    m.vocab_size = 51200;
    m.seq_length = 2048;
    m.max_position_embeddings = 2048;
    return m;
}
Plan plan(int tp, bool sp, Recompute rc) {
    Plan p;
    p.tp = tp;
    p.sequence_parallel = sp;
    p.recompute = rc;
    p.seq_length = 2048;
    p.microbatch_size = 2;
    p.precision = Precision::fp16;
    return p;
}
}  // namespace

TEST(MemoryModel, KorthikantiTable2) {
    const ModelSpec m = gpt_shape();
    const double s = 2048, b = 2, h = 12288, a = 96, t = 8;
    // Korthikanti et al. 2022 counts unfused attention and dropout.
    const ActivationOptions paper{false, true};
    const double sbh = s * b * h;
    // No parallelism: sbh (34 + 5as/h).
    EXPECT_NEAR(layer_activation_bytes(m, plan(1, false, Recompute::none), paper), sbh * (34 + 5 * a * s / h), 1.0);
    // Tensor parallel: sbh (10 + 24/t + 5as/(ht)).
    EXPECT_NEAR(layer_activation_bytes(m, plan(8, false, Recompute::none), paper), sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1.0);
    // Tensor + sequence parallel: sbh/t (34 + 5as/h).
    EXPECT_NEAR(layer_activation_bytes(m, plan(8, true, Recompute::none), paper), sbh / t * (34 + 5 * a * s / h), 1.0);
    // Selective recompute drops the 5as/h term.
    EXPECT_NEAR(layer_stored_activation_bytes(m, plan(8, true, Recompute::selective), paper), sbh / t * 34, 1.0);
    EXPECT_NEAR(layer_stored_activation_bytes(m, plan(8, false, Recompute::selective), paper), sbh * (10 + 24 / t), 1.0);
    // Full recompute keeps the layer input: 2sbh (split by t with sequence parallelism).
    EXPECT_NEAR(layer_stored_activation_bytes(m, plan(8, false, Recompute::full), paper), 2 * sbh, 1.0);
    EXPECT_NEAR(layer_stored_activation_bytes(m, plan(8, true, Recompute::full), paper), 2 * sbh / t, 1.0);
}

TEST(MemoryModel, PyTorchTensorParallelismKeepsTheGatheredGemmInputs) {
    // Korthikanti's sequence-parallel count keeps every norm-side tensor sharded: the inputs of QKV
    // and of the MLP (2 bytes each) are gathered again in the backward. PyTorch's tensor
    // parallelism keeps them as gathered instead: those two 2sbh/t terms grow to 2sbh each.
    const ModelSpec m = gpt_shape();
    const double s = 2048, b = 2, h = 12288, a = 96, t = 8;
    const double sbh = s * b * h;
    ActivationOptions paper{false, true};
    const double regathered = layer_activation_bytes(m, plan(8, true, Recompute::none), paper);
    EXPECT_NEAR(regathered, sbh / t * (34 + 5 * a * s / h), 1.0);
    paper.keeps_gathered_tp_inputs = true;
    EXPECT_NEAR(layer_activation_bytes(m, plan(8, true, Recompute::none), paper), regathered + 2.0 * 2.0 * sbh * (1.0 - 1.0 / t),
                1.0);
    // Without sequence parallelism the inputs are whole either way.
    EXPECT_NEAR(layer_activation_bytes(m, plan(8, false, Recompute::none), paper), sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1.0);
    // The stacks: Megatron re-gathers, torchtitan keeps.
    EXPECT_FALSE(activation_options(m, stack_defaults(kMegatronLM, Precision::bf16)).keeps_gathered_tp_inputs);
    EXPECT_TRUE(activation_options(m, stack_defaults(kTorchtitan, Precision::bf16)).keeps_gathered_tp_inputs);
}

TEST(MemoryModel, FlashAttentionStoresNoScores) {
    const ModelSpec m = gpt_shape();
    const double s = 2048, b = 2, h = 12288, a = 96;
    // Flash attention keeps the output (already counted as the projection input) and an fp32
    // log-sum-exp per head and query.
    const ActivationOptions flash{true, true};
    EXPECT_NEAR(layer_activation_bytes(m, plan(1, false, Recompute::none), flash), s * b * h * 34 + 4 * a * s * b, 1.0);
}

TEST(MemoryModel, QkNormKeepsTheQueriesAndKeysBeforeTheNorm) {
    // Korthikanti's count plus the norm's input: Q and K before it, 2 bytes each, all H d = h
    // channels of Q and K (no GQA here), split over the tensor-parallel ranks.
    ModelSpec m = gpt_shape();
    m.qk_norm = QkNorm::per_head;
    const double s = 2048, b = 2, h = 12288, a = 96, t = 8;
    const ActivationOptions flash{true, true};
    EXPECT_NEAR(layer_activation_bytes(m, plan(1, false, Recompute::none), flash), s * b * h * (34 + 4) + 4 * a * s * b, 1.0);
    EXPECT_NEAR(layer_activation_bytes(m, plan(8, true, Recompute::none), flash), s * b * h * (34 + 4) / t + 4 * a / t * s * b,
                1.0);
}

TEST(MemoryModel, PostNormsKeepTheirInputs) {
    // Gemma's post-attention and post-MLP norms each keep their input, 2 bytes per element of the
    // hidden state, split over the TP ranks only with sequence parallelism (as the other norms).
    ModelSpec m = gpt_shape();
    m.sandwich_norms = true;
    const double s = 2048, b = 2, h = 12288, a = 96, t = 8;
    const ActivationOptions flash{true, true};
    EXPECT_NEAR(layer_activation_bytes(m, plan(1, false, Recompute::none), flash), s * b * h * (34 + 4) + 4 * a * s * b, 1.0);
    EXPECT_NEAR(layer_activation_bytes(m, plan(8, true, Recompute::none), flash), s * b * h * (34 + 4) / t + 4 * a / t * s * b,
                1.0);
}

TEST(MemoryModel, Fp8KeepsTransformerEnginesFp8GemmInputs) {
    const ModelSpec m = gpt_shape();
    const double s = 2048, b = 2, h = 12288, a = 96;
    Plan p = plan(1, false, Recompute::none);
    p.precision = Precision::fp8;
    // Of Korthikanti's 34 sbh, the GEMMs' inputs are the QKV and MLP inputs (2 sbh each), the
    // projection input (2 sbh) and the FC2 input (8 sbh): 14 sbh in bf16, 7 sbh as fp8 casts.
    ActivationOptions te{true, true};
    EXPECT_NEAR(layer_activation_bytes(m, p, te), s * b * h * 27 + 4 * a * s * b, 1.0);
    // torchao's Float8Linear keeps the bf16 inputs: the 16-bit count.
    ActivationOptions torchao = te;
    torchao.fp8_saves_gemm_inputs = false;
    EXPECT_NEAR(layer_activation_bytes(m, p, torchao), s * b * h * 34 + 4 * a * s * b, 1.0);
    // A bf16 run is not affected by the option.
    p.precision = Precision::bf16;
    EXPECT_NEAR(layer_activation_bytes(m, p, te), layer_activation_bytes(m, p, torchao), 1e-6);
    // Full recompute keeps the bf16 layer input whatever the GEMMs run in.
    p.precision = Precision::fp8;
    p.recompute = Recompute::full;
    EXPECT_NEAR(layer_stored_activation_bytes(m, p, te), 2 * s * b * h, 1.0);
}

TEST(MemoryModel, ZeroThreeGathersTheVocabularyAsAUnitOfItsOwn) {
    // Llama 3 8B's LM head (128256 x 4096 = 525M weights) is 2.4 times a layer (218M): at the loss
    // the gathered head, its 16-bit gradient and the prefetched last layer are live,
    // 2 x 2 x 525M + 2 x 218M bytes, not three layers' 3 x 2 x 218M.
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 64);
    Plan p = plan(1, false, Recompute::full);
    p.precision = Precision::bf16;
    p.seq_length = 8192;
    p.microbatch_size = 1;
    p.dp = 64;
    p.zero_stage = 3;
    p.global_batch_size = 256;
    const double head = 128256.0 * 4096;
    const double layer = 4096.0 * (4096 + 2 * 1024 + 4096) + 3.0 * 4096 * 14336;  // QKV, O, gate/up/down
    const double GiB = 1024.0 * 1024 * 1024;
    const double runtime = kRuntimeReservedBytes / GiB;
    EXPECT_NEAR(estimate_memory(m, c, p).buffers - runtime, (4.0 * head + 2.0 * layer) / GiB, 0.01);
}

TEST(MemoryModel, GpipeHoldsMoreMicrobatchesThanOneFOneB) {
    const ModelSpec m = load_model("gpt2-1.5b");
    const ClusterSpec c = load_cluster("dgx-a100");
    Plan p;
    p.pp = 4;
    p.dp = 1;
    p.microbatch_size = 1;
    p.global_batch_size = 16;  // 16 microbatches
    p.seq_length = 1024;
    p.schedule = Schedule::one_f_one_b;
    const auto f1b1 = estimate_memory(m, c, p);
    p.schedule = Schedule::gpipe;
    const auto gpipe = estimate_memory(m, c, p);
    // 1F1B's first stage holds pp = 4 microbatches, GPipe's all 16.
    EXPECT_GT(gpipe.activations, 3.0 * f1b1.activations);
    // Model states do not depend on the schedule.
    const auto a = memory_per_rank(m, c, p, default_activation_options(m));
    p.schedule = Schedule::one_f_one_b;
    const auto b = memory_per_rank(m, c, p, default_activation_options(m));
    EXPECT_DOUBLE_EQ(a[0].states.total(), b[0].states.total());
    EXPECT_DOUBLE_EQ(a[3].states.total(), b[3].states.total());
}

TEST(MemoryModel, BlockRecomputeKeepsTheOtherLayersActivations) {
    // One stage of 48 layers: recomputing k of them stores k layer inputs and 48 - k full layers,
    // so the activations fall linearly from no recompute (k = 0) to full recompute (k = 48).
    const ModelSpec m = load_model("gpt2-1.5b");
    const ClusterSpec c = load_cluster("dgx-a100");
    Plan p;
    p.dp = 8;
    p.microbatch_size = 2;
    p.global_batch_size = 16;
    p.seq_length = 1024;
    const ActivationOptions o = default_activation_options(m);
    const double none = memory_per_rank(m, c, p, o)[0].activations;
    p.recompute = Recompute::full;
    const double full = memory_per_rank(m, c, p, o)[0].activations;
    p.recompute_layers = 12;
    const double quarter = memory_per_rank(m, c, p, o)[0].activations;
    const double per_layer = layer_activation_bytes(m, p, o) - layer_stored_activation_bytes(m, p, o);
    EXPECT_NEAR(quarter - full, (m.num_layers - 12) * per_layer, 1e-6 * quarter);
    EXPECT_LT(quarter, none);
    EXPECT_GT(quarter, full);
}

TEST(MemoryModel, FullRecomputeRunsTheLayersAfterTheLossHasFreedItsLogits) {
    // One microbatch, no pipeline, Megatron's loss (2-byte logits, 4-byte softmax stored) and full
    // recompute, Llama 2 7B on one GPU (s = 4096, b = 4, h = 4096, V = 32000). The loss runs
    // after the layers' forward and its backward before theirs; autograd frees the saved softmax
    // once the loss's backward has run, so a recomputed layer's full set is live beside the layer
    // checkpoints and the incoming gradient (2sbh), not beside the logits:
    //   checkpoints + max(loss: 4sbV stored + 2sbV beside it + 2sbh final-norm input,
    //                     a layer: its full set + 2sbh).
    const ModelSpec m = load_model("llama2-7b");
    const ClusterSpec c = load_cluster("dgx-h100");
    Plan p;
    p.microbatch_size = 4;
    p.global_batch_size = 4;
    p.seq_length = 4096;
    p.recompute = Recompute::full;
    const ActivationOptions o = default_activation_options(m);
    const double sb = 4.0 * 4096, h = 4096, V = 32000;
    const double checkpoints = m.num_layers * layer_stored_activation_bytes(m, p, o);
    EXPECT_NEAR(checkpoints, 32 * 2 * sb * h, 1.0);  // each layer's bf16 input
    const double layer = layer_activation_bytes(m, p, o);
    const double expected = checkpoints + std::max(6 * sb * V + 2 * sb * h, layer + 2 * sb * h);
    EXPECT_NEAR(memory_per_rank(m, c, p, o)[0].activations, expected, 1e-9 * expected);
    // With a quarter of the vocabulary the recomputed layer is the peak instead.
    ModelSpec narrow = m;
    narrow.vocab_size = 8000;
    const double expected_narrow = checkpoints + std::max(6 * sb * 8000 + 2 * sb * h, layer + 2 * sb * h);
    ASSERT_GT(layer, 6 * sb * 8000);
    EXPECT_NEAR(memory_per_rank(narrow, c, p, o)[0].activations, expected_narrow, 1e-9 * expected_narrow);
}

TEST(MemoryModel, ColumnParallelBiasesSplitOverTp) {
    // GPT-3 175B's layer at TP 8 (Megatron's ColumnParallelLinear splits the QKV and MLP-up
    // biases with their outputs; RowParallelLinear's bias and the LayerNorms are whole on every
    // rank): 12h^2/8 weights + (3h + 4h)/8 split biases + (h + h) whole biases + 2 x 2h norms.
    const ModelSpec m = load_model("gpt3-175b");
    const double h = 12288;
    EXPECT_DOUBLE_EQ(layer_parameters_per_tp_rank(m, 8), 12 * h * h / 8 + 7 * h / 8 + 2 * h + 4 * h);
    EXPECT_DOUBLE_EQ(layer_parameters_per_tp_rank(m, 1), 12 * h * h + 13 * h);
}

TEST(MemoryModel, ParametersSplitOverTheRanks) {
    const ModelSpec m = load_model("llama3-8b");
    Plan p;
    p.tp = 2;
    p.pp = 4;
    double sum = 0;
    for (int r = 0; r < p.pp; ++r) sum += parameters_on_rank(m, p, r);
    // Every layer weight is split over tp; norms are replicated, so the sum is a little above total/tp.
    const double total = 8.03e9;
    EXPECT_GT(sum, total / 2 * 0.99);
    EXPECT_LT(sum, total / 2 * 1.01);
}

// ZeRO end to end: a real plan's model states, through simulate() and memory_per_rank(), against
// hand counts of Llama-3-8B (Dubey et al. 2024, Table 3: 32 layers, hidden 4096, FFN 14336, 32
// query and 8 KV heads of 128, vocabulary 128256, untied embeddings):
//   a layer: attention 4096 x (4096 + 2 x 1024) + 4096 x 4096 = 41,943,040; SwiGLU MLP
//            3 x 4096 x 14336 = 176,160,768; two RMSNorms 2 x 4096 = 8,192; 218,112,000 in all
//   Ψ = 32 x 218,112,000 + 2 x 128256 x 4096 (embedding and LM head) + 4096 (final norm)
//     = 6,979,584,000 + 1,050,673,152 + 4,096 = 8,030,261,248.
// Mixed-precision Adam (Rajbhandari et al. 2020, sec. 3.1 and 5): 2 B weights, 2 B gradients,
// 12 B optimizer states a parameter; ZeRO-1 shards the 12, ZeRO-2 also the 2 of the gradients,
// ZeRO-3 all 16, over the N_d data-parallel ranks.
TEST(MemoryModel, ZeroStatesOfARealPlanAreTheHandCounts) {
    const ModelSpec m = load_model("llama3-8b");
    const double psi = 8030261248.0, GiB = 1024.0 * 1024.0 * 1024.0;
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 64);
    Plan p;
    p.dp = 64;
    p.global_batch_size = 64;
    p.seq_length = 2048;
    p.zero_stage = 1;
    const auto z1 = simulate(m, c, p).memory_GiB;
    EXPECT_NEAR(z1.weights * GiB, 2 * psi, 1.0);
    EXPECT_NEAR(z1.gradients * GiB, 2 * psi, 1.0);
    EXPECT_NEAR(z1.optimizer * GiB, 12 * psi / 64, 1.0);
    p.zero_stage = 2;
    const auto z2 = simulate(m, c, p).memory_GiB;
    EXPECT_NEAR(z2.weights * GiB, 2 * psi, 1.0);
    EXPECT_NEAR(z2.gradients * GiB, 2 * psi / 64, 1.0);
    EXPECT_NEAR(z2.optimizer * GiB, 12 * psi / 64, 1.0);
    p.zero_stage = 3;
    const auto z3 = simulate(m, c, p).memory_GiB;
    EXPECT_NEAR(z3.weights * GiB, 2 * psi / 64, 1.0);
    EXPECT_NEAR(z3.gradients * GiB, 2 * psi / 64, 1.0);
    EXPECT_NEAR(z3.optimizer * GiB, 12 * psi / 64, 1.0);
    EXPECT_NEAR((z3.weights + z3.gradients + z3.optimizer) * GiB, 16 * psi / 64, 1.0);

    // TP 2 x PP 4 x DP 8: 8 layers a stage, each rank holding half of every layer's matrices and
    // the whole of its norms:
    //   a layer per TP rank: 4096 x (2048 + 2 x 512) + 2048 x 4096 = 20,971,520; MLP
    //   88,080,384; norms 8,192: 109,060,096; 8 layers: 872,480,768.
    //   stage 0 adds half the embedding (128256 x 4096 / 2 = 262,668,288): 1,135,149,056;
    //   stage 3 half the LM head and the final norm: 1,135,153,152; stages 1-2: 872,480,768.
    Plan q;
    q.tp = 2;
    q.pp = 4;
    q.dp = 8;
    q.global_batch_size = 64;
    q.seq_length = 2048;
    const double stage[4] = {1135149056.0, 872480768.0, 872480768.0, 1135153152.0};
    for (int zero : {1, 3}) {
        q.zero_stage = zero;
        const auto ranks = memory_per_rank(m, c, q, default_activation_options(m));
        ASSERT_EQ(ranks.size(), 4u);
        for (int r = 0; r < 4; ++r) {
            const double n = stage[r];
            EXPECT_NEAR(ranks[r].states.weights, zero == 3 ? 2 * n / 8 : 2 * n, 1.0) << "ZeRO-" << zero << " stage " << r;
            EXPECT_NEAR(ranks[r].states.gradients, zero == 3 ? 2 * n / 8 : 2 * n, 1.0) << "ZeRO-" << zero << " stage " << r;
            EXPECT_NEAR(ranks[r].states.optimizer, 12 * n / 8, 1.0) << "ZeRO-" << zero << " stage " << r;
        }
        // simulate() reports the rank with the largest total, whichever it is: one of the four.
        const auto reported = simulate(m, c, q).memory_GiB;
        bool one_of_them = false;
        for (int r = 0; r < 4; ++r)
            one_of_them |= std::abs(reported.optimizer * GiB - 12 * stage[r] / 8) < 1.0;
        EXPECT_TRUE(one_of_them) << "ZeRO-" << zero;
    }
}

TEST(MemoryModel, PlanTooBigReportsDoesNotFit) {
    const ModelSpec m = load_model("gpt3-175b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 8);
    Plan p;
    p.tp = 8;
    p.global_batch_size = 8;
    p.seq_length = 2048;
    const auto r = simulate(m, c, p);
    EXPECT_FALSE(r.fits);
    EXPECT_GT(r.memory_GiB.peak, 80.0);
    ASSERT_FALSE(r.notes.empty());
    EXPECT_NE(r.notes[0].find("does not fit"), std::string::npos);
    EXPECT_GT(r.step_time_s, 0.0);  // still simulated
}

TEST(MemoryModel, ZeroThreeHoldsTheGatheredLayerGradientInItsReduceType) {
    // ZeRO-3 over 8 GPUs: two gathered layers (this one, the prefetched next) and this layer's
    // 16-bit gradient, 3 x 2 bytes per layer weight; reducing in fp32 adds the gradient's fp32
    // copy, 4 bytes more per layer weight.
    const ModelSpec m = gpt_shape();
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 8);
    Plan p = plan(1, false, Recompute::full);
    p.precision = Precision::bf16;
    p.dp = 8;
    p.zero_stage = 3;
    p.global_batch_size = 16;
    SimulateOptions bf16_reduce, fp32_reduce;
    fp32_reduce.grad_reduce_in_fp32 = true;
    const double layer = 12.0 * 12288.0 * 12288.0;  // 4h^2 attention + 8h^2 MLP weights
    const double diff_GiB = estimate_memory(m, c, p, fp32_reduce).buffers - estimate_memory(m, c, p, bf16_reduce).buffers;
    EXPECT_NEAR(diff_GiB, 4.0 * layer / (1024.0 * 1024 * 1024), 0.001 * diff_GiB);
}
