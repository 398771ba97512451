#include "planner/export_megatron.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/plan.h"
#include "simulator/memory_model.h"

namespace tessel {

namespace {
std::string array(const char* name, const std::vector<std::string>& lines) {
    std::string s = fmt::format("{}=(\n", name);
    for (const auto& l : lines)
        if (!l.empty()) s += "  " + l + "\n";
    return s + ")\n";
}

// n decoder layers in the layout grammar: "", "t" or "t*n".
std::string decoder_layers(int n) { return n == 0 ? "" : n == 1 ? "t" : fmt::format("t*{}", n); }
}  // namespace

std::string megatron_pipeline_layout(const std::vector<int>& chunks) {
    if (chunks.empty()) return "EL";
    if (chunks.size() == 1) return fmt::format("E{}L", decoder_layers(chunks[0]));
    std::string s = fmt::format("E{}|", decoder_layers(chunks.front()));
    for (std::size_t c = 1; c + 1 < chunks.size();) {
        std::size_t run = 1;
        while (c + run + 1 < chunks.size() && chunks[c + run] == chunks[c]) ++run;
        s += run == 1 ? fmt::format("{}|", decoder_layers(chunks[c]))
                      : fmt::format("({}|)*{}", decoder_layers(chunks[c]), run);
        c += run;
    }
    return fmt::format("{},{}L", s, decoder_layers(chunks.back()));
}

Emitted export_megatron(const ModelSpec& m, const SimulationResult& w, const ClusterSpec& c, const ExportOptions& o) {
    const Plan& p = w.plan;
    Emitted e;
    const int world = p.world_size();
    const int gpus_per_node = launch_gpus_per_host(c, world);
    const int nodes = (world + gpus_per_node - 1) / gpus_per_node;

    std::vector<std::string> model;
    model.push_back(fmt::format("--num-layers {} --hidden-size {} --ffn-hidden-size {}", m.num_layers, m.hidden_size,
                                m.ffn_hidden_size));
    std::string heads = fmt::format("--num-attention-heads {}", m.num_attention_heads);
    if (m.num_kv_heads != m.num_attention_heads)
        heads += fmt::format(" --group-query-attention --num-query-groups {}", m.num_kv_heads);
    if (m.head_dim * m.num_attention_heads != m.hidden_size) heads += fmt::format(" --kv-channels {}", m.head_dim);
    model.push_back(heads);
    const int max_positions = m.position_embedding == PositionEmbedding::learned
                                  ? std::max(m.max_position_embeddings, p.seq_length)
                                  : std::max(m.seq_length, p.seq_length);
    model.push_back(fmt::format("--seq-length {} --max-position-embeddings {}", p.seq_length, max_positions));
    // RoPE scaling Megatron-LM can express (arguments.py): Llama 3.1's as --use-rope-scaling (its
    // low/high frequency factors 1 and 4 over 8192 positions, fixed), linear interpolation by a
    // whole factor as --rotary-seq-len-interpolation-factor; the note names the rest.
    std::string rope_scaling;
    const bool whole_factor = m.rope_scaling_factor == std::floor(m.rope_scaling_factor) && m.rope_scaling_factor >= 1;
    if (m.rope_scaling_type == "llama3")
        rope_scaling = fmt::format(" --use-rope-scaling --rope-scaling-factor {:g}", m.rope_scaling_factor);
    else if (m.rope_scaling_type == "linear" && whole_factor)
        rope_scaling = fmt::format(" --rotary-seq-len-interpolation-factor {:.0f}", m.rope_scaling_factor);
    if (m.position_embedding == PositionEmbedding::rope)
        model.push_back(fmt::format("--position-embedding-type rope --rotary-base {:.0f}{}{}", m.rope_theta,
                                    m.rotary_percent < 1.0 ? fmt::format(" --rotary-percent {:g}", m.rotary_percent) : "",
                                    rope_scaling));
    else
        model.push_back("--position-embedding-type learned_absolute");
    std::string shape = fmt::format("--normalization {} --norm-epsilon {:g}", m.norm == Norm::rmsnorm ? "RMSNorm" : "LayerNorm",
                                    m.norm_epsilon);
    if (m.activation == Activation::swiglu) shape += " --swiglu";
    if (!m.tied_embeddings) shape += " --untie-embeddings-and-output-weights";
    // Megatron's add_bias_linear (its default) puts a bias on every linear layer; without it,
    // --add-qkv-bias puts them on Q, K and V alone.
    const bool every_bias = m.linear_bias || (m.qkv_bias && m.out_bias && m.mlp_bias);
    if (!every_bias) shape += " --disable-bias-linear";
    if (!every_bias && m.qkv_bias) shape += " --add-qkv-bias";
    // Megatron-Core's q_layernorm / k_layernorm normalise each head (hidden size = kv_channels).
    if (m.qk_norm != QkNorm::none) shape += " --qk-layernorm";
    // Megatron-LM's dropouts default to 0.1. The simulator trains GPT-style (learned position)
    // models with dropout and RoPE models (Llama, Qwen, Mistral: none in their recipes) without,
    // so the script switches them off where the simulation did.
    if (!default_activation_options(m).dropout) shape += " --attention-dropout 0.0 --hidden-dropout 0.0";
    // Banded attention: Transformer Engine's window (left, right) counts the keys before the
    // query, so w keys with itself are (w - 1, 0); with a pattern, Megatron-Core's
    // is_layer_window_attention keeps layers n, 2n, ... (1-based) full, as Gemma 2 and 3 do.
    if (m.sliding_window > 0 && m.windowed_layer_fraction() > 0) {
        shape += fmt::format(" --window-size {},0", m.sliding_window - 1);
        if (m.sliding_window_pattern > 1) shape += fmt::format(" --window-attn-skip-freq {}", m.sliding_window_pattern);
    }
    // Transformer Engine, Megatron's default layer implementation, needs compute capability 8.0,
    // as FlashAttention does (the cluster's gpu.flash_attention): below it the local layers, which
    // run the unfused attention the plan priced there.
    // Its RMSNorm is then WrappedTorchNorm, which asserts that the layer-norm persistence Megatron
    // turns on by default is off (megatron/core/transformer/torch_norm.py).
    if (!c.gpu.flash_attention) {
        shape += " --transformer-impl local";
        if (m.norm == Norm::rmsnorm) shape += " --no-persist-layer-norm";
    }
    model.push_back(shape);
    model.push_back("--make-vocab-size-divisible-by 128");

    std::vector<std::string> parallel;
    // Transformer Engine's userbuffer overlap, as priced (plan --tp-comm-overlap keeps SP on with TP).
    const bool tp_overlap = p.tp_comm_overlap && p.tp > 1 && p.sequence_parallel;
    parallel.push_back(fmt::format("--tensor-model-parallel-size {}{}{}", p.tp, p.sequence_parallel ? " --sequence-parallel" : "",
                                   tp_overlap ? " --tp-comm-overlap" : ""));
    std::string pipe = fmt::format("--pipeline-model-parallel-size {}", p.pp);
    const auto layers = layers_per_chunk(m.num_layers, p.pp, p.virtual_stages, p.lm_head_layers);
    const bool even = std::all_of(layers.begin(), layers.end(), [&](int n) { return n == layers.front(); });
    if (p.virtual_stages > 1 && even) {
        pipe += fmt::format(" --num-layers-per-virtual-pipeline-stage {}", layers.front());
    } else if (p.virtual_stages > 1) {
        pipe += fmt::format(" --pipeline-model-parallel-layout \"{}\"", megatron_pipeline_layout(layers));
    } else if (p.pp > 1 && !even) {
        const int middle = p.pp > 2 ? layers[1] : -1;
        if (layers.front() != middle) pipe += fmt::format(" --decoder-first-pipeline-num-layers {}", layers.front());
        if (p.pp > 2 && layers.back() != middle) pipe += fmt::format(" --decoder-last-pipeline-num-layers {}", layers.back());
    }
    parallel.push_back(pipe);
    parallel.push_back(fmt::format("--context-parallel-size {}{}", p.cp, p.cp > 1 ? " --cp-comm-type p2p" : ""));
    parallel.push_back(p.zero_stage >= 1 ? "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather"
                                         : "--overlap-grad-reduce");

    std::vector<std::string> batch{fmt::format("--micro-batch-size {} --global-batch-size {}", p.microbatch_size,
                                               p.global_batch_size)};
    if (o.train_iters > 0) batch.push_back(fmt::format("--train-iters {}", o.train_iters));

    std::vector<std::string> precision;
    if (p.precision == Precision::bf16 || p.precision == Precision::fp8) precision.push_back("--bf16");
    // Transformer Engine's fp8 GEMMs: E4M3 in the forward, E5M2 for gradients. It refuses fp8 on a
    // GPU without fp8 tensor cores (A100), where the plan ran the GEMMs at the bf16 peak anyway.
    const bool fp8_gemms = p.precision == Precision::fp8 && c.gpu.has_own_peak(Precision::fp8);
    if (fp8_gemms) precision.push_back("--fp8-format hybrid");
    else if (p.precision == Precision::fp16) precision.push_back("--fp16");

    std::vector<std::string> recompute;
    if (p.recompute == Recompute::selective) recompute.push_back("--recompute-granularity selective");
    if (p.recompute == Recompute::full && p.recompute_layers > 0)
        recompute.push_back(fmt::format("--recompute-granularity full --recompute-method block --recompute-num-layers {}",
                                        p.recompute_layers));
    else if (p.recompute == Recompute::full)
        recompute.push_back("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");

    std::string& s = e.text;
    s += "#!/usr/bin/env bash\n";
    s += fmt::format("# Megatron-LM launch for {} on {} GPUs ({}), written by `tessel plan`.\n", m.name, world, c.name);
    s += fmt::format("# Plan {} (placement {}, {} microbatches per step): simulated step {:.3f} s, MFU {:.1f}%, "
                     "peak {:.1f} GiB per GPU.\n",
                     p.describe(), p.placement, p.num_microbatches(), w.step_time_s, 100 * w.mfu, w.memory_GiB.peak);
    if (gpus_per_node < std::min(c.gpus_per_node, world))
        s += fmt::format("# A node of {} holds {} GPUs in one NVLink domain over hosts of {}: GPUS_PER_NODE and NNODES\n"
                         "# count hosts, as torchrun does.\n",
                         c.name, c.gpus_per_node, gpus_per_node);
    s += "# Run on every node with NODE_RANK, MASTER_ADDR and MASTER_PORT set; MEGATRON_LM is your Megatron-LM\n"
         "# checkout. Data, tokenizer and optimizer flags are yours: put them in EXTRA_ARGS, e.g.\n"
         "#   EXTRA_ARGS=\"--data-path ... --tokenizer-type ... --lr 3e-4\"\n";
    s += "set -euo pipefail\n";
    // Megatron asserts it for TP or CP below Blackwell (validate_args): one hardware queue keeps
    // each layer's TP collective ahead of the GEMM that follows it, the order that was priced.
    if (p.tp > 1 || p.cp > 1) s += "export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}\n";
    s += fmt::format("GPUS_PER_NODE={}\nNNODES={}\n", gpus_per_node, nodes);
    s += array("MODEL_ARGS", model);
    s += array("PARALLEL_ARGS", parallel);
    s += array("BATCH_ARGS", batch);
    s += array("PRECISION_ARGS", precision);
    s += array("RECOMPUTE_ARGS", recompute);
    s += "torchrun --nproc_per_node \"$GPUS_PER_NODE\" --nnodes \"$NNODES\" --node_rank \"${NODE_RANK:-0}\" \\\n"
         "  --master_addr \"${MASTER_ADDR:-localhost}\" --master_port \"${MASTER_PORT:-6000}\" \\\n"
         "  \"${MEGATRON_LM:-.}/pretrain_gpt.py\" \\\n"
         "  \"${MODEL_ARGS[@]}\" \"${PARALLEL_ARGS[@]}\" \"${BATCH_ARGS[@]}\" ${PRECISION_ARGS[@]+\"${PRECISION_ARGS[@]}\"} "
         "${RECOMPUTE_ARGS[@]+\"${RECOMPUTE_ARGS[@]}\"} \\\n"
         "  ${EXTRA_ARGS:-}\n";

    if (tp_overlap)
        e.notes.push_back("--tp-comm-overlap, as the plan was priced: Transformer Engine's userbuffers run the TP "
                          "all-gathers and reduce-scatters beside their GEMMs (Transformer Engine built with them; "
                          "the TP group inside one node)");
    // A count of full-attention layers no pattern gives (Qwen2's max_window_layers, a layer_types
    // list): --window-attn-skip-freq writes the nearest pattern.
    if (m.sliding_window > 0 && m.full_attention_layers >= 0 && m.windowed_layer_fraction() > 0) {
        const int pattern_full = m.pattern_global_layers();
        if (pattern_full != m.full_attention_layers)
            e.notes.push_back(fmt::format("the model attends to the whole sequence in {} of its {} layers, priced so; the "
                                          "script's window gives {} of them ({})",
                                          m.full_attention_layers, m.num_layers, pattern_full,
                                          m.sliding_window_pattern > 1
                                              ? fmt::format("--window-attn-skip-freq {}", m.sliding_window_pattern)
                                              : std::string("every layer windowed")));
    }
    if (p.tp > m.num_kv_heads)
        e.notes.push_back(fmt::format("TP {} exceeds the {} KV heads: each TP rank keeps a replicated KV head, which "
                                      "needs Megatron-Core >= 0.16 (num_query_groups a divisor of TP)",
                                      p.tp, m.num_kv_heads));
    if (p.zero_stage >= 2)
        e.notes.push_back(fmt::format("ZeRO stage {} has no Megatron-LM flag; --use-distributed-optimizer shards only the "
                                      "optimizer state (ZeRO-1)",
                                      p.zero_stage));
    if (p.placement != "tp-cp-dp-pp")
        e.notes.push_back("placement " + p.placement + " differs from Megatron's rank order tp-cp-dp-pp");
    if (!m.rope_scaling_type.empty() && rope_scaling.empty())
        e.notes.push_back(fmt::format("RoPE scaling \"{}\" (factor {:g}) has no launch flag here: Megatron-LM builds "
                                      "plain RoPE unless its model code applies the scaling",
                                      m.rope_scaling_type, m.rope_scaling_factor));
    // pretrain_gpt.py's builder (gpt_builders.py, Megatron-LM core_v0.13 to core_v0.19) hands GPTModel
    // rope_scaling=args.use_rope_scaling alone: GPTModel's rope_scaling_factor keeps its default 8
    // and its seq_len_interpolation_factor None, whatever the two flags say.
    if (m.rope_scaling_type == "llama3" && m.rope_scaling_factor != 8.0)
        e.notes.push_back(fmt::format("pretrain_gpt.py builds GPTModel from --use-rope-scaling alone (gpt_builders.py), so "
                                      "the RoPE scaling factor stays its default 8, not this model's {:g}: pass "
                                      "rope_scaling_factor in the model builder",
                                      m.rope_scaling_factor));
    // Megatron-LM's GPT builder passes the interpolation factor from 2026-06-01 (5f884384a7, the
    // builder moved to megatron/training/argument_utils.py); core_v0.13 to core_v0.19's does not.
    if (m.rope_scaling_type == "linear" && !rope_scaling.empty())
        e.notes.push_back(fmt::format("--rotary-seq-len-interpolation-factor {:g} reaches the model from Megatron-LM's "
                                      "June 2026 GPT builder on; core_v0.13 to core_v0.19's pretrain_gpt.py "
                                      "(gpt_builders.py) builds GPTModel without it, so there pass it in the model builder",
                                      m.rope_scaling_factor));
    if (m.rope_scaling_type == "llama3" &&
        (m.rope_scaling_low_freq_factor != 1.0 || m.rope_scaling_high_freq_factor != 4.0 ||
         m.rope_scaling_original_context != 8192.0))
        e.notes.push_back(fmt::format("--use-rope-scaling applies Llama 3.1's frequency bands (factors 1 and 4 over "
                                      "8192 positions); this model's are {:g} and {:g} over {:g}, which Megatron-LM "
                                      "rotates by only if its model code passes them to the rotary embedding",
                                      m.rope_scaling_low_freq_factor, m.rope_scaling_high_freq_factor,
                                      m.rope_scaling_original_context));
    if (m.activation == Activation::geglu)
        e.notes.push_back("the MLP is a gated GELU (GeGLU), which has no launch flag: set Megatron-Core's "
                          "gated_linear_unit with a GELU activation_func in the model provider");
    if (m.sandwich_norms || m.logit_softcap)
        e.notes.push_back("Gemma's post-attention and post-MLP norms and logit soft-cap have no Megatron-LM flag; the "
                          "script builds a model without them");
    if (m.parallel_residual)
        e.notes.push_back("attention and MLP in parallel off one residual (GPT-NeoX, Falcon) has no Megatron-LM flag; "
                          "the script builds the sequential layer, which tessel prices the same");
    if (!every_bias && (m.out_bias || m.mlp_bias))
        e.notes.push_back(fmt::format("biases on {} alone have no Megatron-LM flag (--add-bias-linear puts them on every "
                                      "linear layer); the script builds the model without them",
                                      m.out_bias && m.mlp_bias ? "the attention output and the MLP"
                                      : m.out_bias             ? "the attention output"
                                                               : "the MLP"));
    if (m.qk_norm == QkNorm::full_width)
        e.notes.push_back("--qk-layernorm normalises each head's query and key; this model (OLMo 2) normalises the "
                          "whole projections, which Megatron-LM has no flag for");
    if (p.precision == Precision::fp8)
        e.notes.push_back(
            fp8_note(c, "fp8: --fp8-format hybrid with Megatron's default scaling recipe; it needs Transformer Engine"));
    // The notes travel in the script too, above its first command.
    const auto at = s.find("set -euo pipefail\n");
    s.insert(at, note_comments(e.notes));
    return e;
}

}  // namespace tessel
