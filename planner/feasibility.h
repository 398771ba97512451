// The rules a plan must satisfy before it is worth simulating, each with a name the user sees when
// it rejects everything. These are the checks Megatron-LM, DeepSpeed and torchtitan make at start-up
// (see shared reference config-formats.md), plus memory by the simulator's memory model.
//
// Choices made here:
// - KV heads: TP must divide the KV heads, or the KV heads must divide TP (each TP rank then keeps
//   one replicated KV head) — what core's validate_plan allows and Megatron-Core >= 0.16 runs
//   (transformer_config.py: "a multiple or divisor of TP"). The Megatron exporter says so when a
//   plan needs it.
// - Uneven pipelines: PP x V need not divide the layers if core's layers_per_chunk split leaves
//   every chunk but the first and last equal (core's pipeline_split_supported): Megatron's
//   --decoder-first/last-pipeline-num-layers without interleaving, its
//   --pipeline-model-parallel-layout with it, torchtitan's first/last_stage_less_layers either way.
#pragma once
#include <string>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "simulator/memory_model.h"

namespace tessel {

enum class Rule {
    ok,
    heads_tp,            // num_attention_heads % tp
    kv_heads_tp,         // kv % tp and tp % kv both nonzero
    ffn_tp,              // ffn_hidden_size % tp
    layers_pp,           // pp x v layers split Megatron cannot express (or more stages than layers)
    cp_seq,              // seq % (2 cp)
    batch_dp,            // global % (dp x microbatch)
    microbatches,        // more than kMaxMicrobatchesPerStep microbatches per step
    interleave_microbatches,  // interleaving with microbatches % pp != 0
    sp_seq,              // sequence parallel needs tp > 1 and (seq / cp) % tp == 0
    positions,           // learned position table shorter than the sequence
    framework,           // the export target cannot run it (planner/search_space.h SpaceLimits)
    node_groups,         // a parallel group sits across nodes unlike the one through rank 0 (groups_sit_alike)
    memory,              // does not fit with the requested headroom
};
inline constexpr int kNumRules = int(Rule::memory) + 1;

// One line saying what the rule demands.
const char* describe(Rule r);

// The first rule (in the order above) the plan breaks, ignoring memory; Rule::ok if none.
Rule check_rules(const ModelSpec& m, const Plan& p);

// A cheap lower bound on the simulator's peak memory per GPU (GiB), for pruning before the exact
// estimate: each pipeline rank's model states, the runtime's reservation, and on the first rank
// the stored activations of the microbatches 1F1B (or the interleaved schedule) has in flight when
// its first backward starts, under the same activation options as the exact estimate (a bound
// under other options may exceed it: dropout's masks, the interleaved warm-up).
double memory_lower_bound_GiB(const ModelSpec& m, const Plan& p, const ActivationOptions& opt);
// The same with the parameters of the first and last pipeline rank given (simulator's
// parameters_on_rank), which the search computes once per (tp, pp, v).
double memory_lower_bound_GiB(const ModelSpec& m, const Plan& p, const ActivationOptions& opt, double params_first,
                              double params_last);

// GiB a GPU may use: its memory less the headroom fraction.
double usable_memory_GiB(const ClusterSpec& c, double headroom);

}  // namespace tessel
