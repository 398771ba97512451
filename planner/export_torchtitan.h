// The winner for torchtitan (shared reference config-formats.md §B3), in one of two forms:
//   - overrides (default): a launch script passing `--section.key value` overrides of the
//     [parallelism], [activation_checkpoint], [training] (and [model]) keys of torchtitan v0.2.x,
//     the form its releases accept on the command line over a base config file;
//   - toml: the same keys as the TOML file of the v0.2.x releases (v0.1.0 has no
//     pipeline_parallel_first/last_stage_less_layers).
// Mapping: ZeRO 0 -> data_parallel_replicate_degree = DP (DDP); ZeRO 2/3 -> data_parallel_shard_degree
// = DP (FSDP) with fsdp_reshard_after_forward "never" / "always"; ZeRO 1 (only with PP, see
// search_space.h) -> FSDP with "default", which keeps the gathered weights under PP; SP comes with TP; interleaving
// -> Interleaved1F1B; the stages as pipeline_parallel_layers_per_stage = the middle chunks' layers
// and first/last_stage_less_layers = how many fewer the first and last chunk hold (0 when even). Batches: with PP,
// local_batch_size = microbatch x microbatches (one step, no accumulation), so torchtitan runs
// local / pipeline_parallel_microbatch_size microbatches; without PP, local_batch_size = microbatch
// and global / (local x DP) accumulation steps.
#pragma once
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "planner/export.h"
#include "simulator/result.h"

namespace tessel {

enum class TorchtitanFormat { overrides, toml };
TorchtitanFormat parse_torchtitan_format(const std::string& s);  // "overrides" | "toml"

// (section, key, value as TOML writes it) in emission order.
struct TorchtitanKey {
    std::string section, key, value;
};
// What torchtitan's llama3 model (v0.2.x: RMSNorm, SwiGLU, RoPE over every dimension, no biases,
// untied embeddings, head dim = hidden / heads) cannot build of m, one phrase each; empty when it
// can. A model it cannot build is refused for --emit torchtitan: its launch would train another.
std::vector<std::string> torchtitan_llama3_gaps(const ModelSpec& m);

// The entry that registers m as a flavor of torchtitan v0.2.x's llama3 model (a line of
// llama3_args in models/llama3/__init__.py): `"<name>": TransformerModelArgs(...)`, with
// multiple_of and ffn_dim_multiplier chosen so that its FeedForward's rounding gives m's FFN width.
std::string torchtitan_flavor_entry(const ModelSpec& m);

std::vector<TorchtitanKey> torchtitan_keys(const ModelSpec& m, const Plan& p, const ExportOptions& o = {});

Emitted export_torchtitan(const ModelSpec& m, const SimulationResult& winner, const ClusterSpec& c,
                          TorchtitanFormat format, const ExportOptions& o = {});

}  // namespace tessel
