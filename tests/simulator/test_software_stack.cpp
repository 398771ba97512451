// The software stacks' kernel and dropout defaults, each against the framework's own documented
// behaviour, and their effect on a simulated step against the kernel speeds the presets give.
#include <gtest/gtest.h>

#include "core/accounting.h"
#include "core/presets.h"
#include "simulator/compute_cost.h"
#include "simulator/hardware_efficiency.h"
#include "simulator/simulate.h"
#include "simulator/software_stack.h"
#include "tests/planner/plan_fixtures.h"

using namespace tessel;

namespace {
// One GPU, one sequence of the model's length, bf16.
Plan one_gpu(const ModelSpec& m) { return tessel::test::make_plan(1, 1, 1, 1, 1, 1, m.seq_length); }
}  // namespace

TEST(SoftwareStack, AttentionKernelAndDropoutFollowEachFrameworksDefaults) {
    // Transformer Engine prefers cuDNN's FusedAttention on Hopper; llm.c builds with cuDNN.
    EXPECT_EQ(attention_kernel(stack_defaults(kMegatronLM, Precision::bf16)), AttentionKernel::cudnn);
    EXPECT_EQ(attention_kernel(stack_defaults(kLlmC, Precision::bf16)), AttentionKernel::cudnn);
    // PyTorch SDPA's cuDNN backend became opt-in in October 2024: torchtitan runs FlashAttention-2.
    EXPECT_EQ(attention_kernel(stack_defaults(kTorchtitan, Precision::bf16)), AttentionKernel::flash);
    // llm-foundry's benchmark configurations: the Triton FlashAttention.
    EXPECT_EQ(attention_kernel(stack_defaults(kLlmFoundry, Precision::bf16)), AttentionKernel::flash1);
    // Dropout: Megatron-LM's and DeepSpeed's GPT defaults are 0.1; llm.c has none and llm-foundry's
    // MPT configurations set it to 0.
    EXPECT_TRUE(stack_defaults(kMegatronLM, Precision::bf16).model_dropout);
    EXPECT_TRUE(stack_defaults(kDeepSpeed, Precision::bf16).model_dropout);
    EXPECT_FALSE(stack_defaults(kLlmC, Precision::bf16).model_dropout);
    EXPECT_FALSE(stack_defaults(kLlmFoundry, Precision::bf16).model_dropout);
}

TEST(SoftwareStack, GradientBuffersAreZeroedWhereTheFrameworkKeepsOne) {
    // Megatron-LM zeroes each model chunk's gradient buffer every step (zero_grad_buffer), DeepSpeed's
    // bf16 optimizer its fp32 gradients (clear_hp_grads), llm.c memsets its gradients; PyTorch's
    // trainers free theirs (zero_grad(set_to_none=True)).
    EXPECT_TRUE(stack_defaults(kMegatronLM, Precision::bf16).zero_gradient_buffer);
    EXPECT_TRUE(stack_defaults(kDeepSpeed, Precision::bf16).zero_gradient_buffer);
    EXPECT_TRUE(stack_defaults(kLlmC, Precision::bf16).zero_gradient_buffer);
    EXPECT_FALSE(stack_defaults(kTorchtitan, Precision::bf16).zero_gradient_buffer);
    EXPECT_FALSE(stack_defaults(kLlmFoundry, Precision::bf16).zero_gradient_buffer);
}

TEST(SoftwareStack, MegatronAndUnnamedStacksReduceTheTpBackwardBesideAGemm) {
    // Megatron-LM's asynchronous TP communication (and Transformer Engine's layers), which the
    // simulator's defaults describe; DeepSpeed's Megatron fork and PyTorch's tensor parallelism
    // wait for the reduction.
    EXPECT_TRUE(SimulateOptions{}.tp_backward_overlap);
    EXPECT_TRUE(stack_defaults(kMegatronLM, Precision::bf16).tp_backward_overlap);
    EXPECT_TRUE(stack_defaults(SoftwareStack{}, Precision::bf16).tp_backward_overlap);
    EXPECT_FALSE(stack_defaults(kDeepSpeed, Precision::bf16).tp_backward_overlap);
    EXPECT_FALSE(stack_defaults(kTorchtitan, Precision::bf16).tp_backward_overlap);
    EXPECT_TRUE(stack_defaults(kTorchtitan, Precision::bf16).tp_overlap_symmetric_memory);
    EXPECT_FALSE(stack_defaults(kMegatronLM, Precision::bf16).tp_overlap_symmetric_memory);
}

TEST(SoftwareStack, OnlyTorchtitanRunsPyTorchsCrossEntropy) {
    // torchtitan calls F.cross_entropy on the fp32 logits; Megatron-LM and DeepSpeed run the
    // vocabulary-parallel loss, llm-foundry and llm.c a fused one.
    EXPECT_TRUE(stack_defaults(kTorchtitan, Precision::bf16).torch_cross_entropy);
    for (const SoftwareStack* s : {&kMegatronLM, &kDeepSpeed, &kLlmFoundry, &kLlmC})
        EXPECT_FALSE(stack_defaults(*s, Precision::bf16).torch_cross_entropy) << s->name;
}

TEST(SoftwareStack, TorchtitansRingIsPyTorchs) {
    // torch's context_parallel ring; Megatron runs Transformer Engine's. Both warm the interleaved
    // schedule up as usual at m = pp: Megatron-LM ran all forwards first only until 2024-11-01
    // (commit 4295be1a6c), which validate applies to the rows dated before.
    const SimulateOptions tt = stack_defaults(kTorchtitan, Precision::bf16);
    const SimulateOptions mg = stack_defaults(kMegatronLM, Precision::bf16);
    EXPECT_FALSE(tt.all_forwards_first_at_m_equal_pp);
    EXPECT_TRUE(tt.torch_context_parallel);
    EXPECT_FALSE(mg.all_forwards_first_at_m_equal_pp);
    EXPECT_EQ(kMegatronLM.all_forwards_first_until, 20241101);
    EXPECT_FALSE(mg.torch_context_parallel);
}

TEST(SoftwareStack, ZeroingTheBufferWritesEveryGradientOnce) {
    // By hand: the buffer holds every weight of the rank (ZeRO-1 shards only the optimizer) in the
    // reduction's precision, fp32 here, and zeroing it is one write of that many bytes. With ZeRO-2
    // the buffer is the rank's shard of the gradients.
    const ModelSpec m = load_model("gpt2-124m");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 4);
    const ComputeModel gpu(c.gpu, hardware_efficiency(c), Precision::bf16);
    // Tied: the table counted once, its 50257 rows padded to 50304 (a multiple of 128, the
    // options' default as Megatron-LM pads).
    const double params = double(count_parameters(m).total) + (50304.0 - 50257.0) * m.hidden_size;
    for (int zero : {1, 2}) {
        const Plan p = tessel::test::make_plan(1, 1, 4, 1, 1, 4, 1024, 1, zero);
        SimulateOptions kept, freed;
        kept.grad_reduce_in_fp32 = freed.grad_reduce_in_fp32 = true;
        freed.zero_gradient_buffer = false;
        const double added = simulate(m, c, p, kept).time_s.optimizer - simulate(m, c, p, freed).time_s.optimizer;
        const double buffer = zero == 2 ? params / 4 : params;
        EXPECT_NEAR(added, gpu.memory_time(buffer * 4.0, 1), 1e-9 * added) << "ZeRO-" << zero;
    }
}

TEST(SoftwareStack, CudnnAttentionShortensAHopperStepOnlyWhereTheGpuHasCudnnFigures) {
    // llama3-8b at 8192 tokens on one GPU: the step changes by the attention time saved, which the
    // H100 preset's figures bound (cuDNN 0.56 / 0.53 against FlashAttention-2's 0.39 / 0.33 of the
    // peak); the A100 preset gives no cuDNN figures, so its step does not change.
    const ModelSpec m = load_model("llama3-8b");
    const Plan p = one_gpu(m);
    SimulateOptions flash, cudnn;
    cudnn.cudnn_attention = true;
    for (const char* name : {"dgx-h100", "dgx-a100"}) {
        const ClusterSpec c = resize_cluster(load_cluster(name), 1);
        const double t_flash = simulate(m, c, p, flash).step_time_s;
        const double t_cudnn = simulate(m, c, p, cudnn).step_time_s;
        if (std::string(name) == "dgx-h100") {
            EXPECT_LT(t_cudnn, t_flash);
            EXPECT_GT(t_cudnn, t_flash * (1.0 - (1.0 - 0.33 / 0.53)));  // at most the whole attention share saved
        } else {
            EXPECT_DOUBLE_EQ(t_cudnn, t_flash);
        }
    }
}

TEST(SoftwareStack, DroppingAGptModelsDropoutRemovesItsMasksFromMemory) {
    // gpt2-124m keeps a 1-byte dropout mask per element of each residual branch it stores (two per
    // layer): turning the model's dropout off takes 2 x tokens x hidden bytes per layer out of the
    // stored activations, and the step gets no slower.
    const ModelSpec m = load_model("gpt2-124m");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 1);
    const Plan p = one_gpu(m);
    SimulateOptions on, off;
    off.model_dropout = false;
    const auto with = simulate(m, c, p, on), without = simulate(m, c, p, off);
    EXPECT_LE(without.step_time_s, with.step_time_s);
    EXPECT_LT(without.memory_GiB.activations, with.memory_GiB.activations);
    // By hand (memory_model.h: a 1-byte mask per element of the attention and MLP dropouts, two
    // per layer; flash attention regenerates its own dropout, so no s^2 mask; nothing else of the
    // one microbatch's stored set or the loss's working set depends on dropout):
    //   12 layers x 2 masks x (1 x 1024 tokens) x 768 hidden x 1 B = 18,874,368 B.
    const double GiB = 1024.0 * 1024.0 * 1024.0;
    EXPECT_NEAR((with.memory_GiB.activations - without.memory_GiB.activations) * GiB, 12.0 * 2 * 1024 * 768, 1.0);
}
