// tessel simulate: predict one plan's step time, bubble, exposed communication, memory and MFU,
// and optionally draw its schedule as a Chrome/Perfetto trace.
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/presets.h"
#include "planner/search_space.h"
#include "simulator/simulate.h"

namespace tessel::cli {

namespace {
struct SimulateArgs {
    std::string model, cluster;
    std::optional<long long> gpus;
    std::optional<int> gpus_per_node;
    PlanFlags plan;
    std::string trace_file, json_file;
    double memory_headroom = 0.0;
    // The software stack's kernels (SimulateOptions; defaults: a current Megatron-Core run).
    std::string attention = "flash2";
    bool eager_elementwise = false;
    bool fused_cross_entropy = false;
    bool blocking_p2p = false;
    bool p2p_scatter_gather = false;
    bool no_grad_accumulation_fusion = false;
    bool no_tp_backward_overlap = false;
    bool free_gradients = false;
    bool fp8_bf16_inputs = false;
    bool zero2_layerwise_gather = false;
    int metric_cross_entropies = 0;
    bool reduce_after_pipeline_flush = false;
    bool backward_prefetch = false;
    bool fsdp2_buffer_copies = false;
    bool fp8_weight_gather = false;
    int cpu_offload_layers = 0;
    bool eager_rmsnorm = false;
    bool no_dropout = false;
    bool fp32_grad_reduce = false;
    bool torch_cross_entropy = false;
    bool all_forwards_first = false;
    bool torch_context_parallel = false;
    bool all_gather_context_parallel = false;
    bool tp_comm_overlap = false;
    std::optional<std::string> framework;
    std::set<std::string> given;  // the options on the command line (over a framework's defaults)
};

// `out`: stdout, or stderr when stdout holds the --json or --trace output.
void print_table(const SimulationResult& r, const SimulateOptions& o, std::FILE* out) {
    const auto& t = r.time_s;
    const auto& g = r.memory_GiB;
    fmt::print(out, "{} on {} x {} ({})\n", r.model_name, r.num_gpus, r.cluster_name, r.plan.describe());
    // Gradients of 16-bit weights reduced in 16 bits is the generic stack's choice (NeMo's
    // performance recipes), not Megatron-LM's default (fp32 main gradients): say which was priced.
    const bool half_weights = r.plan.precision == Precision::bf16 || r.plan.precision == Precision::fp8;
    fmt::print(out, "  schedule {}, {} microbatches per step, precision {}{}\n", to_string(r.plan.schedule),
               r.plan.num_microbatches(), to_string(r.plan.precision),
               !half_weights ? "" : o.grad_reduce_in_fp32 ? ", gradients reduced in fp32" : ", gradients reduced in bf16 "
                   "(as NeMo's performance recipes; --framework megatron reduces them in fp32)");
    fmt::print(out, "step time        {:>10.4f} s\n", r.step_time_s);
    fmt::print(out, "tokens/s         {:>10.0f}   ({:.0f} per GPU)\n", r.tokens_per_s, r.tokens_per_s / r.num_gpus);
    fmt::print(out, "MFU / HFU        {:>9.1f}% / {:.1f}%   ({:.4g} / {:.4g} TFLOP/s per GPU)\n", 100 * r.mfu, 100 * r.hfu,
               r.model_tflops_per_gpu, r.hardware_tflops_per_gpu);
    fmt::print(out, "                 (model FLOPs per token: 6 x matmul weights, LM head included, + 12 L (a d) s "
               "for attention's whole square, as Narayanan et al. 2021 count; HFU adds recomputation)\n");
    fmt::print(out, "time on pipeline rank {} (the last to finish):\n", r.critical_rank);
    auto row = [&](const char* name, double s) {
        fmt::print(out, "  {:<26} {:>10.4f} s  {:>5.1f}%\n", name, s, r.step_time_s > 0 ? 100 * s / r.step_time_s : 0.0);
    };
    row("compute", t.compute);
    row("recompute", t.recompute);
    row("pipeline bubble", t.bubble);
    row("TP comm (exposed)", t.tp_comm_exposed);
    row("CP comm (exposed)", t.cp_comm_exposed);
    row("PP comm (exposed)", t.pp_comm_exposed);
    row("DP comm (exposed)", t.dp_comm_exposed);
    row("optimizer", t.optimizer);
    const auto& k = r.kernel_time_s;
    fmt::print(out, "kernel time on that rank: GEMM {:.4f} s, attention {:.4f} s, bandwidth-bound {:.4f} s\n", k.gemm,
               k.attention, k.memory_bound);
    // The busiest rank by total: another rank may hold more of one kind (the first stage's activations).
    fmt::print(out, "memory on the GPU that holds the most (GiB): weights {:.2f}, gradients {:.2f}, optimizer {:.2f}, "
               "activations {:.2f}, buffers {:.2f}; peak {:.2f} -> {}\n",
               g.weights, g.gradients, g.optimizer, g.activations, g.buffers, g.peak, r.fits ? "fits" : "DOES NOT FIT");
    for (const auto& n : r.notes) fmt::print(out, "note: {}\n", n);
}

void run_simulate(const SimulateArgs& a) {
    std::FILE* table = check_outputs({{"--json", a.json_file}, {"--trace", a.trace_file}},
                                     {{"--model", a.model}, {"--cluster", a.cluster}, {"--plan", a.plan.plan_file}});
    ModelSpec m = load_model(a.model);
    ClusterSpec c = resolve_cluster(a.cluster, a.gpus, a.gpus_per_node);
    // Where neither --precision nor the plan file names one, the plan takes the precision
    // `tessel plan` would: bf16, else fp16, else fp32 — whichever the GPU has a peak for (a
    // calibrated CPU cluster: fp32).
    // A plan file or --dp fixes the plan's GPUs: without --gpus the job takes that many of the cluster.
    // Otherwise dp fills the whole cluster.
    const bool sized_by_plan = !a.gpus && (!a.plan.plan_file.empty() || a.plan.dp);
    Plan p = resolve_plan(a.plan, m, sized_by_plan ? 0 : c.num_gpus(), std::string(to_string(default_precision(c.gpu))));
    if (sized_by_plan && p.world_size() != c.num_gpus())
        c = resize_cluster(c, p.world_size(), "the plan's tp*pp*dp*cp (no --gpus)");
    check_precision_peak(c, p.precision, a.cluster);
    // A framework (--framework, or the plan file's "framework" from plan --emit) starts from the
    // options plan --emit simulated it with; the stack flags given then override them. Without one
    // every flag takes its value, given or default.
    const std::string framework = a.framework.value_or(p.framework);
    // Kept in the plan, so that the result JSON's plan (or a plan file made from it) prices the same stack.
    if (!framework.empty()) p.framework = to_string(parse_framework(framework));
    SimulateOptions o = framework.empty() ? SimulateOptions{} : simulate_options_for(parse_framework(framework), p.precision);
    auto given = [&](const char* flag) { return framework.empty() || a.given.count(flag) > 0; };
    o.record_trace = !a.trace_file.empty();
    o.memory_headroom = a.memory_headroom;
    // Before the stack flags, which override what the overlap implies (torchtitan's compiled model).
    // The flag, or a plan that plan --tp-comm-overlap priced with it (its tp_comm_overlap key).
    if (a.tp_comm_overlap || p.tp_comm_overlap) {
        const std::string flags = framework.empty() ? "--tp-comm-overlap" : "--tp-comm-overlap with --framework " + framework;
        const Framework f = framework.empty() ? Framework::any : parse_framework(framework);
        apply_tp_comm_overlap(o, f, flags);  // with no framework: the overlap alone
        check_tp_comm_overlap_gpu(f, c.gpu, a.cluster, flags);
        p.tp_comm_overlap = p.sequence_parallel;  // the result's plan says how it was priced
    }
    if (given("--attention")) {
        o.fused_attention = a.attention != "unfused";
        o.flash_attention_version = a.attention == "flash1" ? 1 : 2;
        o.cudnn_attention = a.attention == "cudnn";
    }
    if (!c.gpu.flash_attention && a.given.count("--attention") && a.attention != "unfused")
        throw InputError(fmt::format("--attention {}: expected unfused on {}, whose {} runs no fused flash-style "
                                     "attention kernel (gpu.flash_attention false: FlashAttention and cuDNN's fused "
                                     "attention need compute capability 8.0 or newer)",
                                     a.attention, a.cluster, c.gpu.name));
    use_gpu_attention(o, c.gpu);
    if (given("--eager-elementwise")) o.fused_elementwise = !a.eager_elementwise;
    if (given("--fused-cross-entropy")) o.fused_cross_entropy = a.fused_cross_entropy;
    if (given("--blocking-p2p")) o.overlap_p2p_comm = !a.blocking_p2p;
    if (given("--p2p-scatter-gather")) o.p2p_scatter_gather = a.p2p_scatter_gather;
    if (given("--no-gradient-accumulation-fusion")) o.gradient_accumulation_fusion = !a.no_grad_accumulation_fusion;
    if (given("--no-tp-backward-overlap")) o.tp_backward_overlap = !a.no_tp_backward_overlap;
    if (given("--free-gradients")) o.zero_gradient_buffer = !a.free_gradients;
    if (given("--fp8-keeps-bf16-inputs")) o.fp8_saves_gemm_inputs = !a.fp8_bf16_inputs;
    if (given("--zero2-layerwise-gather")) o.zero2_layerwise_gather = a.zero2_layerwise_gather;
    if (given("--metric-cross-entropies")) o.metric_cross_entropies = a.metric_cross_entropies;
    if (given("--reduce-after-pipeline-flush")) o.reduce_after_pipeline_flush = a.reduce_after_pipeline_flush;
    if (given("--backward-prefetch")) o.backward_prefetch = a.backward_prefetch;
    if (given("--fsdp2-buffer-copies")) o.fsdp2_buffer_copies = a.fsdp2_buffer_copies;
    if (given("--fp8-weight-gather")) o.fp8_weight_gather = a.fp8_weight_gather;
    if (given("--cpu-offload-layers")) o.cpu_offload_layers = a.cpu_offload_layers;
    if (given("--eager-rmsnorm")) o.eager_rmsnorm = a.eager_rmsnorm;
    if (given("--no-dropout")) o.model_dropout = !a.no_dropout;
    if (given("--fp32-grad-reduce")) o.grad_reduce_in_fp32 = a.fp32_grad_reduce;
    if (given("--torch-cross-entropy")) o.torch_cross_entropy = a.torch_cross_entropy;
    if (given("--all-forwards-first")) o.all_forwards_first_at_m_equal_pp = a.all_forwards_first;
    if (given("--torch-context-parallel")) o.torch_context_parallel = a.torch_context_parallel;
    if (given("--all-gather-context-parallel") && a.all_gather_context_parallel) {
        o.all_gather_context_parallel = true;
        o.torch_context_parallel = false;  // in place of a framework's own way (torchtitan's ring)
    }
    SimulationResult r = simulate(m, c, p, o);
    print_table(r, o, table);
    if (!a.json_file.empty()) {
        json j = to_json(r, m, c);
        j["options"] = to_json(o);  // how it was priced: the framework's defaults and the flags given
        write_output(a.json_file, j.dump(2) + "\n");
    }
    if (!a.trace_file.empty()) write_output(a.trace_file, to_chrome_trace(r).dump() + "\n");
}
}  // namespace

void add_simulate(CLI::App& app) {
    auto args = std::make_shared<SimulateArgs>();
    auto* cmd = app.add_subcommand("simulate", "Predict one plan: step time, bubble, exposed communication, memory, MFU");
    cmd->footer(
        "Example: tessel simulate --model gpt3-175b --cluster dgx-a100 --gpus 1024 --tp 8 --pp 16 "
        "--microbatch-size 1 --global-batch-size 1536 --virtual-stages 2 --sequence-parallel true "
        "--recompute selective --trace trace.json --json result.json");
    cmd->add_option("--model", args->model, "preset name or path (native JSON, a Hugging Face config.json or the model folder holding it)")->required();
    cmd->add_option("--cluster", args->cluster, "preset name or path")->required();
    cmd->add_option("--gpus", args->gpus, "resize the cluster to N GPUs (default: the tp*pp*dp*cp of a --plan file or of --dp; without either, the whole cluster, which dp fills)");
    cmd->add_option("--gpus-per-node", args->gpus_per_node,
                    "GPUs the job takes of each node or NVLink domain (e.g. 64 of a GB200 NVL72 rack; default: all)");
    add_plan_flags(*cmd, args->plan, false);
    cmd->add_option("--trace", args->trace_file, "write a Chrome/Perfetto trace (open in ui.perfetto.dev)")
        ->check(output_path());
    cmd->add_option("--json", args->json_file, "write the simulation result as JSON ('-' for stdout)")
        ->check(output_path());
    cmd->add_option("--memory-headroom", args->memory_headroom, "fraction of GPU memory kept free when judging fit")
        ->check(finite_range(0.0, 0.9));
    cmd->add_option("--attention", args->attention,
                    "attention kernel: flash2 (FlashAttention-2, PyTorch SDPA's flash backend), cudnn (cuDNN's "
                    "fused attention: Transformer Engine on Hopper, llm.c; at flash2's speed where the cluster "
                    "gives no cuDNN figures), flash1 (FlashAttention v1, the Triton FlashAttention), unfused "
                    "(pre-2022 Megatron)")
        ->check(CLI::IsMember({"flash2", "cudnn", "flash1", "unfused"}));
    cmd->add_flag("--eager-elementwise", args->eager_elementwise,
                  "one kernel per PyTorch op between the GEMMs (no torch.compile, no fused kernels)");
    cmd->add_flag("--fused-cross-entropy", args->fused_cross_entropy,
                  "the loss as one fused classifier kernel (llm.c, flash-attn xentropy, Megatron "
                  "--cross-entropy-loss-fusion) instead of the fp32 cross entropy");
    cmd->add_flag("--blocking-p2p", args->blocking_p2p,
                  "interleaved schedule: each pipeline send holds the compute stream until it lands (Megatron "
                  "without --overlap-p2p-communication; GPipe and 1F1B always do)");
    cmd->add_flag("--p2p-scatter-gather", args->p2p_scatter_gather,
                  "without sequence parallelism, each TP rank sends 1/tp of the pipeline boundary (Megatron-LM "
                  "before Megatron-Core, DeepSpeed's pipeline engine) instead of the whole tensor");
    cmd->add_flag("--no-gradient-accumulation-fusion", args->no_grad_accumulation_fusion,
                  "each microbatch's weight gradients are added to the accumulator by separate kernels "
                  "(Megatron-LM before 2022, DeepSpeed, PyTorch autograd) instead of in the wgrad GEMM");
    cmd->add_flag("--no-tp-backward-overlap", args->no_tp_backward_overlap,
                  "the backward waits for each column-parallel linear's input-gradient all-reduce (reduce-scatter "
                  "with sequence parallelism) (PyTorch's tensor parallelism, DeepSpeed, Megatron-LM before 2021-09) "
                  "instead of running it beside the weight-gradient GEMM (Megatron-LM, Transformer Engine)");
    cmd->add_flag("--free-gradients", args->free_gradients,
                  "the gradients are freed after each step (PyTorch's zero_grad(set_to_none=True): FSDP, torchtitan, "
                  "Composer) instead of a persistent buffer zeroed every step (Megatron-LM, DeepSpeed, llm.c)");
    cmd->add_flag("--fp8-keeps-bf16-inputs", args->fp8_bf16_inputs,
                  "fp8: each GEMM's bf16 input is kept for the backward and cast again there (torchao's "
                  "Float8Linear, torchtitan) instead of its fp8 cast (Transformer Engine)");
    cmd->add_flag("--zero2-layerwise-gather", args->zero2_layerwise_gather,
                  "ZeRO-2 as FSDP's SHARD_GRAD_OP: weights gathered layer by layer in every forward and kept "
                  "through the backward, instead of gathered after the optimizer step");
    cmd->add_flag("--reduce-after-pipeline-flush", args->reduce_after_pipeline_flush,
                  "with pipeline stages, gradients reduce after the last microbatch's backward instead of beside "
                  "it (DeepSpeed's pipeline engine)");
    cmd->add_flag("--no-dropout", args->no_dropout,
                  "a GPT-family model trained without its dropout (llm.c, llm-foundry's MPT); by default "
                  "learned-position models apply attention and hidden dropout, as Megatron-LM does");
    cmd->add_flag("--eager-rmsnorm", args->eager_rmsnorm,
                  "RMSNorm as eager PyTorch ops in fp32 (torch.nn.RMSNorm without torch.compile) instead of one kernel");
    cmd->add_flag("--backward-prefetch", args->backward_prefetch,
                  "ZeRO-3/FSDP: each block's weight gather is issued before the previous block's gradient "
                  "reduce-scatter, beside its backward (FSDP2, BACKWARD_PRE), instead of queued behind it");
    cmd->add_flag("--fsdp2-buffer-copies", args->fsdp2_buffer_copies,
                  "ZeRO-3/FSDP as FSDP2 (torchtitan): on the compute stream, each block's gathered weights are "
                  "copied out of the all-gather buffer before it runs, and its gradients into the reduce-scatter "
                  "buffer in the reduce precision after its backward");
    cmd->add_flag("--fp8-weight-gather", args->fp8_weight_gather,
                  "fp8: sharded weights are gathered in fp8, half the bytes of bf16 (torchao's "
                  "enable_fsdp_float8_all_gather, Megatron's --fp8-param-gather)");
    cmd->add_option("--cpu-offload-layers", args->cpu_offload_layers,
                    "activations of the first N layers offloaded to host memory over gpu.host_bandwidth_GBps and "
                    "brought back for the backward (Megatron-Core's cpu_offloading_num_layers; no pipeline parallelism)")
        ->check(CLI::Range(0, 1 << 20));
    cmd->add_flag("--fp32-grad-reduce", args->fp32_grad_reduce,
                  "16-bit runs reduce their gradients in fp32 and, under ZeRO-0/1, keep them in an fp32 buffer "
                  "(Megatron-LM and DeepSpeed with bf16, FSDP's fp32 reduce dtype); default: 16-bit");
    cmd->add_flag("--torch-cross-entropy", args->torch_cross_entropy,
                  "the eager loss is PyTorch's F.cross_entropy on fp32 logits (torchtitan), whose backward holds "
                  "two more fp32 copies of the logits than Megatron's in-place loss");
    cmd->add_flag("--all-forwards-first", args->all_forwards_first,
                  "interleaved schedule with as many microbatches as pipeline ranks: every forward before any "
                  "backward, as Megatron-LM ran it before November 2024 (commit 4295be1a6c), instead of the usual "
                  "warm-up of Megatron-Core since and of PyTorch's ScheduleInterleaved1F1B");
    cmd->add_flag("--torch-context-parallel", args->torch_context_parallel,
                  "context parallelism through PyTorch's context_parallel (torchtitan): K/V all-gathered at "
                  "the first step, fp32 merges and gradients, KV heads repeated before the attention; default: "
                  "Transformer Engine's ring");
    cmd->add_flag("--all-gather-context-parallel", args->all_gather_context_parallel,
                  "context parallelism the all-gather way (Llama 3's; tessel run's): K/V all-gathered before the "
                  "attention and kept for the backward, dK/dV reduce-scattered after it, neither hidden; default: "
                  "Transformer Engine's ring")
        ->excludes("--torch-context-parallel");
    cmd->add_flag("--tp-comm-overlap", args->tp_comm_overlap,
                  "TP collectives beside their GEMMs, inside a node (Megatron's --tp-comm-overlap: Transformer "
                  "Engine's userbuffers; Megatron requires --sequence-parallel with it; with --framework torchtitan, "
                  "its async TP, which compiles the model: fused elementwise kernels)");
    cmd->add_option("--metric-cross-entropies", args->metric_cross_entropies,
                    "cross entropies the trainer evaluates on each microbatch's logits for its logged metrics "
                    "(Composer/llm-foundry: 2, LanguageCrossEntropy and LanguagePerplexity; default 0)")
        ->check(CLI::Range(0, 16));
    cmd->add_option("--framework", args->framework,
                    "price the plan with that framework's kernels and communication, as plan --emit does (a plan "
                    "file from plan --emit names it; the stack flags above override it)")
        ->check(CLI::IsMember({"megatron", "deepspeed", "torchtitan"}));
    cmd->callback([args, cmd] {
        for (const CLI::Option* opt : cmd->get_options())
            if (opt->count() > 0) args->given.insert(opt->get_name());
        run_simulate(*args);
    });
}

}  // namespace tessel::cli
