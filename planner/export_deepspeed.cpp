#include "planner/export_deepspeed.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/json_io.h"
#include "planner/search_space.h"

namespace tessel {

Emitted export_deepspeed(const ModelSpec& m, const SimulationResult& w, const ClusterSpec& c, const ExportOptions& o) {
    (void)c;
    (void)o;
    const Plan& p = w.plan;
    Emitted e;
    const int gas = p.num_microbatches();
    // ordered_json keeps the keys in the order a person reads them.
    nlohmann::ordered_json j;
    j["train_batch_size"] = p.microbatch_size * gas * p.dp;
    j["train_micro_batch_size_per_gpu"] = p.microbatch_size;
    j["gradient_accumulation_steps"] = gas;
    j["gradient_clipping"] = 1.0;
    if (p.precision == Precision::fp16) {
        j["fp16"] = {{"enabled", true},   {"loss_scale", 0},          {"initial_scale_power", 16},
                     {"loss_scale_window", 1000}, {"hysteresis", 2}, {"min_loss_scale", 1}};
        j["bf16"] = {{"enabled", false}};
    } else {
        j["fp16"] = {{"enabled", false}};
        j["bf16"] = {{"enabled", p.precision != Precision::fp32}};
        if (p.precision != Precision::fp32) {
            // What the simulation priced (kDeepSpeed): 16-bit gradients added into fp32 and reduced
            // in fp32. Both default to the model's bf16 (engine.py get_data_types,
            // communication_data_type); fp32 accumulation with ZeRO 0/1 selects the bf16 optimizer.
            j["data_types"] = {{"grad_accum_dtype", "fp32"}};
            j["communication_data_type"] = "fp32";
        }
    }
    // bf16 weights with fp32 gradient accumulation need ZeRO on (search_space.cpp, limits_for):
    // a ZeRO-0 plan handed in is written as ZeRO-1, which over one data-parallel rank is the same.
    const bool bf16_accumulating_in_fp32 = j.contains("data_types");
    const int stage = bf16_accumulating_in_fp32 ? std::max(1, p.zero_stage) : p.zero_stage;
    nlohmann::ordered_json zero;
    zero["stage"] = stage;
    zero["overlap_comm"] = true;
    zero["contiguous_gradients"] = true;
    zero["reduce_scatter"] = true;
    zero["allgather_partitions"] = true;
    // The buckets the search priced (grad_bucket_parameters), not DeepSpeed's 5e8: its overlap_comm
    // keeps buffers of several buckets, which at 5e8 elements come to gigabytes the memory
    // model does not hold, and larger buckets leave a longer reduction after the backward.
    const auto bucket = static_cast<long long>(simulate_options_for(Framework::deepspeed, p.precision).grad_bucket_parameters);
    zero["reduce_bucket_size"] = bucket;
    zero["allgather_bucket_size"] = bucket;
    if (stage == 3) {
        zero["stage3_prefetch_bucket_size"] = 50000000;
        zero["stage3_param_persistence_threshold"] = 100000;
        zero["stage3_max_live_parameters"] = 1000000000;
        zero["stage3_max_reuse_distance"] = 1000000000;
        zero["stage3_gather_16bit_weights_on_model_save"] = true;
        zero["sub_group_size"] = 1000000000;
        zero["offload_param"] = {{"device", "none"}, {"pin_memory", true}};
    }
    if (stage >= 1) zero["offload_optimizer"] = {{"device", "none"}, {"pin_memory", true}};
    j["zero_optimization"] = zero;
    const bool recompute = p.recompute != Recompute::none;
    j["activation_checkpointing"] = {{"partition_activations", recompute && p.tp > 1},
                                     {"cpu_checkpointing", false},
                                     {"contiguous_memory_optimization", false},
                                     {"number_checkpoints", nullptr},
                                     {"synchronize_checkpoint_boundary", false},
                                     {"profile", false}};
    e.text = j.dump(2) + "\n";

    e.notes.push_back(fmt::format("DeepSpeed config for {}: {} (placement {}); simulated step {:.3f} s, MFU {:.1f}%",
                                  m.name, p.describe(), p.placement, w.step_time_s, 100 * w.mfu));
    e.notes.push_back(fmt::format("train_batch_size {} = micro {} x gradient accumulation {} x data-parallel {}",
                                  p.global_batch_size, p.microbatch_size, gas, p.dp));
    if (stage != p.zero_stage)
        e.notes.push_back(fmt::format("ZeRO stage 1 for the plan's 0: DeepSpeed accumulates bf16 weights' gradients "
                                      "in fp32 only with ZeRO on{}",
                                      p.dp * p.cp == 1 ? " (over one data-parallel rank the two are the same)"
                                                       : "; ZeRO-1 shards the optimizer states over the "
                                                         "data-parallel ranks, which the plan did not"));
    // Megatron-DeepSpeed builds its pipeline model (GPTModelPipe, DeepSpeed's pipeline engine,
    // which refuses ZeRO-2/3) unless told --no-pipeline-parallel, and takes the ZeRO stage as
    // --zero-stage as well (zero.Init for stage 3) beside DeepSpeed's own --deepspeed_config.
    if (p.tp > 1 || p.pp > 1)
        e.notes.push_back(fmt::format("the JSON has no TP/PP degree: run it with Megatron-DeepSpeed and "
                                      "--tensor-model-parallel-size {} --pipeline-model-parallel-size {} --micro-batch-size {} "
                                      "--global-batch-size {}{} --deepspeed --deepspeed_config <this file> --zero-stage {}{}, "
                                      "with the model's shape flags (--emit megatron writes Megatron-LM's spelling of them); "
                                      "its mpu makes train_batch_size count the {} data-parallel ranks, where "
                                      "deepspeed.initialize without one counts all {} GPUs and refuses the batch",
                                      p.tp, p.pp, p.microbatch_size, p.global_batch_size,
                                      // Megatron's own weights' dtype: the config's fp16/bf16 block does not set it.
                                      p.precision == Precision::fp16 ? " --fp16" : p.precision == Precision::fp32 ? "" : " --bf16",
                                      stage, p.pp == 1 ? " --no-pipeline-parallel" : "", p.dp, p.world_size()));
    if (p.pp > 1 && (m.num_layers % p.pp != 0 || p.lm_head_layers > 0))
        e.notes.push_back(fmt::format("{} layers over {} stages: Megatron-DeepSpeed's partition_method "
                                      "\"type:transformer\" gives the first stages the extra layers, not the split "
                                      "that was simulated (tessel plan --emit deepspeed keeps to even splits)",
                                      m.num_layers, p.pp));
    if (recompute)
        // Megatron-DeepSpeed's --checkpoint-activations means full, uniform recompute (its
        // validate_args), as HF's gradient_checkpointing does; selective has its own flag.
        e.notes.push_back(fmt::format("activation_checkpointing only configures deepspeed.checkpointing: the model must "
                                      "call it ({} recompute; {})",
                                      to_string(p.recompute),
                                      p.recompute == Recompute::selective
                                          ? "Megatron-DeepSpeed: --recompute-granularity selective; HF Trainer has no "
                                            "selective mode"
                                          : "Megatron-DeepSpeed: --checkpoint-activations; HF Trainer: gradient_checkpointing"));
    if (p.precision == Precision::fp8)
        e.notes.push_back(fp8_note(c, "fp8 was simulated (Transformer Engine's GEMMs); DeepSpeed's JSON has no fp8 "
                                      "switch: the config trains in bf16 unless the model's linear layers are "
                                      "Transformer Engine's"));
    return e;
}

}  // namespace tessel
