#include "planner/export_torchtitan.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/plan.h"

namespace tessel {

namespace {
std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// torchtitan defines model shapes in code; the presets it ships under these names.
std::pair<std::string, std::string> torchtitan_flavor(const ModelSpec& m) {
    if (m.name == "llama3-8b") return {"llama3", "8B"};
    if (m.name == "llama3-70b") return {"llama3", "70B"};
    if (m.name == "llama3-405b") return {"llama3", "405B"};
    return {"", ""};
}

// The train config the launch script starts from. torchtitan ships one per Llama 3 flavor; another
// model starts from the 8B's and registers its own flavor. The 405B's turns on float8 converters,
// compile and async TP, none of which the eager bf16 step simulated here runs, so the 405B starts
// from the 70B's, its flavor overridden.
std::string base_config_file(const ModelSpec& m) {
    const std::string flavor = torchtitan_flavor(m).second;
    return flavor == "70B" || flavor == "405B" ? "llama3_70b.toml" : "llama3_8b.toml";
}

// Async TP where the search priced TP overlapped with its GEMMs and there is TP to overlap.
bool runs_async_tp(const Plan& p) { return p.tp_comm_overlap && p.tp > 1; }

// Data parallelism as FSDP (data_parallel_shard_degree): ZeRO 2/3, or ZeRO 1 under pipelining.
bool data_parallel_is_fsdp(const Plan& p) { return p.zero_stage >= 2 || (p.zero_stage == 1 && p.pp > 1); }
}  // namespace

std::vector<std::string> torchtitan_llama3_gaps(const ModelSpec& m) {
    std::vector<std::string> gaps;
    if (m.activation != Activation::swiglu) gaps.push_back("a non-SwiGLU MLP");
    if (m.norm != Norm::rmsnorm) gaps.push_back("LayerNorm");
    if (m.position_embedding != PositionEmbedding::rope) gaps.push_back("learned positions");
    if (m.rotary_percent < 1.0) gaps.push_back("partial rotary");
    if (m.tied_embeddings) gaps.push_back("tied embeddings");
    if (m.has_qkv_bias() || m.has_out_bias() || m.has_mlp_bias()) gaps.push_back("linear biases");
    if (m.qk_norm != QkNorm::none) gaps.push_back("QK norms");
    if (m.head_dim * m.num_attention_heads != m.hidden_size) gaps.push_back("a head dim other than hidden / heads");
    if (m.sliding_window > 0) gaps.push_back("a sliding window");
    if (m.sandwich_norms || m.parallel_residual || m.shared_norm) gaps.push_back("another residual layout");
    if (m.logit_softcap) gaps.push_back("a logit soft-cap");
    return gaps;
}

std::string torchtitan_flavor_entry(const ModelSpec& m) {
    // torchtitan's FeedForward (model.py) builds int(2 * 4 * dim / 3) scaled by ffn_dim_multiplier
    // (when set, then truncated) and rounded up to a multiple of multiple_of. Its default rounding
    // (256) where that gives the width; otherwise the width itself as the multiple, with a
    // multiplier below 1 where the unscaled width is wider still.
    const long long ffn = m.ffn_hidden_size;
    const long long base = 8LL * m.hidden_size / 3;
    auto round_up = [](long long x, long long k) { return k * ((x + k - 1) / k); };
    std::string ffn_args = "multiple_of=256";
    if (round_up(base, 256) != ffn) {
        ffn_args = fmt::format("multiple_of={}", ffn);
        if (base > ffn) ffn_args += fmt::format(", ffn_dim_multiplier={:.9g}", static_cast<double>(ffn) / base);
    }
    return fmt::format("\"{}\": TransformerModelArgs(dim={}, n_layers={}, n_heads={}, n_kv_heads={}, vocab_size={}, "
                       "{}, norm_eps={:g}, rope_theta={:g})",
                       m.name, m.hidden_size, m.num_layers, m.num_attention_heads, m.num_kv_heads, m.vocab_size, ffn_args,
                       m.norm_epsilon, m.rope_theta);
}

TorchtitanFormat parse_torchtitan_format(const std::string& s) {
    if (s == "overrides") return TorchtitanFormat::overrides;
    if (s == "toml") return TorchtitanFormat::toml;
    throw InputError("--torchtitan-format: expected overrides or toml, got \"" + s + "\"");
}

std::vector<TorchtitanKey> torchtitan_keys(const ModelSpec& m, const Plan& p, const ExportOptions& o) {
    std::vector<TorchtitanKey> k;
    // A Llama-shaped model torchtitan does not ship runs as a flavor named after it, which the user
    // registers (the note gives its shape); unregistered, torchtitan stops instead of training the
    // base config's model.
    const auto [name, flavor] = torchtitan_flavor(m);
    k.push_back({"model", "name", quoted(name.empty() ? "llama3" : name)});
    k.push_back({"model", "flavor", quoted(flavor.empty() ? m.name : flavor)});
    const int local = p.pp > 1 ? p.microbatch_size * p.num_microbatches() : p.microbatch_size;
    k.push_back({"training", "local_batch_size", std::to_string(local)});
    k.push_back({"training", "global_batch_size", std::to_string(p.global_batch_size)});
    k.push_back({"training", "seq_len", std::to_string(p.seq_length)});
    k.push_back({"training", "mixed_precision_param", quoted(p.precision == Precision::fp32 ? "float32" : "bfloat16")});
    k.push_back({"training", "mixed_precision_reduce", quoted("float32")});
    if (o.train_iters > 0) k.push_back({"training", "steps", std::to_string(o.train_iters)});

    // ZeRO 1 with pipeline stages is torchtitan's FSDP there: "default" keeps the gathered weights.
    const bool pipelined_fsdp = p.zero_stage == 1 && p.pp > 1;
    const bool fsdp = data_parallel_is_fsdp(p);
    k.push_back({"parallelism", "data_parallel_replicate_degree", std::to_string(fsdp ? 1 : p.dp)});
    k.push_back({"parallelism", "data_parallel_shard_degree", std::to_string(fsdp ? p.dp : 1)});
    if (fsdp || p.cp > 1)
        k.push_back({"parallelism", "fsdp_reshard_after_forward",
                     quoted(pipelined_fsdp ? "default" : p.zero_stage == 3 ? "always" : "never")});
    k.push_back({"parallelism", "tensor_parallel_degree", std::to_string(p.tp)});
    k.push_back({"parallelism", "pipeline_parallel_degree", std::to_string(p.pp)});
    if (p.pp > 1) {
        k.push_back({"parallelism", "pipeline_parallel_schedule", quoted(p.virtual_stages > 1 ? "Interleaved1F1B" : "1F1B")});
        k.push_back({"parallelism", "pipeline_parallel_microbatch_size", std::to_string(p.microbatch_size)});
        // torchtitan cuts (layers + first_less + last_less) into stages of layers_per_stage and
        // takes first_less from the first stage and last_less from the last: the middle chunk's
        // count and how many fewer the two ends hold reproduce layers_per_chunk exactly.
        const auto layers = layers_per_chunk(m.num_layers, p.pp, p.virtual_stages, p.lm_head_layers);
        const int middle = *std::max_element(layers.begin(), layers.end());
        k.push_back({"parallelism", "pipeline_parallel_layers_per_stage", std::to_string(middle)});
        k.push_back({"parallelism", "pipeline_parallel_first_stage_less_layers", std::to_string(middle - layers.front())});
        k.push_back({"parallelism", "pipeline_parallel_last_stage_less_layers", std::to_string(middle - layers.back())});
    }
    k.push_back({"parallelism", "context_parallel_degree", std::to_string(p.cp)});
    // Async TP, where the search priced TP overlapped with its GEMMs; torchtitan raises without the
    // compiled model (maybe_enable_async_tp), which the search priced as fused elementwise kernels.
    // Written off as well as on: the overrides form sits on a base config, and torchtitan's own 405B
    // config turns both on.
    const bool async_tp = runs_async_tp(p);
    k.push_back({"parallelism", "enable_async_tensor_parallel", async_tp ? "true" : "false"});

    k.push_back({"activation_checkpoint", "mode", quoted(to_string(p.recompute))});
    if (p.recompute == Recompute::selective) k.push_back({"activation_checkpoint", "selective_ac_option", quoted("op")});
    k.push_back({"compile", "enable", async_tp ? "true" : "false"});  // components keep their default, model and loss
    return k;
}

Emitted export_torchtitan(const ModelSpec& m, const SimulationResult& w, const ClusterSpec& c, TorchtitanFormat format,
                          const ExportOptions& o) {
    const Plan& p = w.plan;
    Emitted e;
    const auto keys = torchtitan_keys(m, p, o);
    const int world = p.world_size();
    const int gpus_per_node = launch_gpus_per_host(c, world);  // torchrun's processes per host
    const int nodes = (world + gpus_per_node - 1) / gpus_per_node;
    const std::string summary =
        fmt::format("{} on {} GPUs ({}): {} (placement {}); simulated step {:.3f} s, MFU {:.1f}%, peak {:.1f} GiB", m.name,
                    world, c.name, p.describe(), p.placement, w.step_time_s, 100 * w.mfu, w.memory_GiB.peak);
    std::string& s = e.text;
    if (format == TorchtitanFormat::toml) {
        s += "# torchtitan v0.2.x job config, written by `tessel plan`.\n# " + summary + "\n";
        std::string section;
        for (const auto& k : keys) {
            if (k.section != section) {
                s += (section.empty() ? "\n[" : "\n[") + k.section + "]\n";
                section = k.section;
            }
            s += k.key + " = " + k.value + "\n";
        }
    } else {
        s += "#!/usr/bin/env bash\n";
        s += "# torchtitan launch with command-line overrides (v0.2.x keys), written by `tessel plan`.\n# " + summary + "\n";
        s += "# CONFIG_FILE is the base job config (its other sections: optimizer, data, checkpointing; the\n"
             "# overrides below set the model). It must list no model.converters, which no override can clear:\n"
             "# llama3_405b.toml's float8 would train a step this plan did not price;\n"
             "# run on every node with NODE_RANK, MASTER_ADDR and MASTER_PORT set.\n";
        s += "set -euo pipefail\n";
        s += "CONFIG_FILE=${CONFIG_FILE:-./torchtitan/models/llama3/train_configs/" + base_config_file(m) + "}\n";
        s += "OVERRIDES=(\n";
        for (const auto& k : keys) {
            std::string v = k.value;
            v.erase(std::remove(v.begin(), v.end(), '"'), v.end());
            // A boolean is a bare flag on torchtitan's command line (tyro: --x on, --no_x off).
            if (v == "true")
                s += fmt::format("  --{}.{}\n", k.section, k.key);
            else if (v == "false")
                s += fmt::format("  --{}.no_{}\n", k.section, k.key);
            else
                s += fmt::format("  --{}.{} {}\n", k.section, k.key, v);
        }
        s += ")\n";
        s += fmt::format(
            "torchrun --nproc_per_node {} --nnodes {} --node_rank \"${{NODE_RANK:-0}}\" \\\n"
            "  --rdzv_backend c10d --rdzv_endpoint \"${{MASTER_ADDR:-localhost}}:${{MASTER_PORT:-29500}}\" \\\n"
            "  -m torchtitan.train --job.config_file \"$CONFIG_FILE\" \"${{OVERRIDES[@]}}\"\n",
            gpus_per_node, nodes);
    }
    if (torchtitan_flavor(m).first.empty())
        e.notes.push_back(fmt::format("torchtitan defines model shapes in code: register a llama3 flavor named \"{}\" "
                                      "with {} layers, hidden {}, {} heads ({} KV), FFN {}, vocabulary {} and RoPE theta "
                                      "{:g} (model.flavor names it; until it is registered torchtitan stops): add "
                                      "{} to llama3_args in torchtitan/models/llama3/__init__.py",
                                      m.name, m.num_layers, m.hidden_size, m.num_attention_heads, m.num_kv_heads,
                                      m.ffn_hidden_size, m.vocab_size, m.rope_theta, torchtitan_flavor_entry(m)));
    // torchtitan v0.2.x's Llama 3 model applies RoPEScalingArgs (factor 8, bands 1 and 4 over 8192
    // positions) in precompute_freqs_cis to every flavor, and no TOML key reaches it.
    const bool llama31_rope = m.rope_scaling_type == "llama3" && m.rope_scaling_factor == 8.0 &&
                              m.rope_scaling_low_freq_factor == 1.0 && m.rope_scaling_high_freq_factor == 4.0 &&
                              m.rope_scaling_original_context == 8192.0;
    if (m.position_embedding == PositionEmbedding::rope && !llama31_rope)
        e.notes.push_back(fmt::format(
            "torchtitan v0.2.x's llama3 model rotates every flavor with Llama 3.1's RoPE scaling (factor 8, bands 1 and 4 "
            "over 8192 positions; RoPEScalingArgs in model/args.py, which the TOML cannot set), where this model has {}: "
            "set the flavor's rope_scaling_args to match (the step's cost is the same)",
            m.rope_scaling_type.empty() ? std::string("none")
                                        : fmt::format("{} factor {:g}", m.rope_scaling_type, m.rope_scaling_factor)));
    if (m.rotary_percent < 1.0 || m.parallel_residual)
        e.notes.push_back("torchtitan's Llama model rotates every head dimension and runs attention and MLP in sequence; "
                          "this model's partial rotary or parallel residual needs its own model code");
    if (runs_async_tp(p))
        e.notes.push_back("async TP (parallelism.enable_async_tensor_parallel) overlaps the TP all-gathers and "
                          "reduce-scatters with their matmuls inside a node and needs the compiled model, so compile.enable "
                          "is on too; both were simulated (fused elementwise kernels, TP communication beside the GEMMs)");
    if (p.pp > 1)
        e.notes.push_back(fmt::format("{} microbatches of {} per step = local_batch_size {} / pipeline_parallel_microbatch_size",
                                      p.num_microbatches(), p.microbatch_size, p.microbatch_size * p.num_microbatches()));
    else if (p.num_microbatches() > 1)
        e.notes.push_back(fmt::format("gradient accumulation: global {} / (local {} x data-parallel {}) = {} steps",
                                      p.global_batch_size, p.microbatch_size, p.dp, p.num_microbatches()));
    if (p.zero_stage == 1 && p.pp > 1)
        e.notes.push_back("FSDP under pipelining: weights gathered once per step and kept (fsdp_reshard_after_forward "
                          "\"default\"), gradients reduce-scattered after the last microbatch; simulated as ZeRO-1");
    else if (p.zero_stage == 1)
        e.notes.push_back("ZeRO-1 has no torchtitan equivalent; use ZeRO 0 (DDP) or FSDP (plan with --emit torchtitan)");
    const bool fsdp_on = (data_parallel_is_fsdp(p) && p.dp > 1) || p.cp > 1;
    if (p.precision != Precision::fp32 && (p.tp > 1 || p.pp > 1) && !fsdp_on)
        e.notes.push_back("torchtitan casts to bf16 inside FSDP, or by autocast without TP and PP: with TP or PP and "
                          "no sharded data parallelism (DP > 1 with FSDP, or CP > 1) this config trains in fp32, not "
                          "the bf16 that was simulated (tessel plan --emit torchtitan does not choose such plans)");
    // tessel plan refuses these (check_framework_precision, and its search never offers partial
    // recompute for torchtitan); a plan written by hand can still ask for them.
    if (p.precision == Precision::fp16)
        e.notes.push_back("torchtitan has no fp16 (training.mixed_precision_param is bfloat16 or float32): this config "
                          "trains in bf16, not the fp16 that was simulated");
    if (p.recompute == Recompute::full && p.recompute_layers > 0)
        e.notes.push_back(fmt::format("activation_checkpoint.mode \"full\" recomputes every layer; the plan recomputes {} "
                                      "per chunk, which torchtitan cannot express",
                                      p.recompute_layers));
    if (p.precision == Precision::fp8)
        e.notes.push_back(fp8_note(c, "fp8 was simulated with torchao's Float8Linear; the config trains in bf16 until "
                                      "you add its converter (v0.2.x: --model.converters quantize.linear.float8 "
                                      "--compile.enable, docs/float8.md); with TP, v0.2.x keeps the TP collectives "
                                      "in bf16 as simulated (parallelize.py turns float8 TP on only for a converter "
                                      "named \"float8\", which v0.2.x no longer registers)"));
    // The notes travel in the file too: the script's above its first command, the TOML's above
    // its first section.
    const auto at = format == TorchtitanFormat::toml ? s.find("\n[") + 1 : s.find("set -euo pipefail\n");
    s.insert(at, note_comments(e.notes));
    return e;
}

}  // namespace tessel
