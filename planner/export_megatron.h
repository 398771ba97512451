// The winner as a Megatron-LM launch script (bash): pretrain_gpt.py under torchrun with the
// parallel, model-shape, batch, precision and recompute flags of shared reference
// config-formats.md §B1, each spelled as Megatron's arguments.py defines it. Choices:
//   - interleaving as --num-layers-per-virtual-pipeline-stage (no --virtual-pipeline-... flag
//     exists); uneven pipelines as --decoder-first/last-pipeline-num-layers, and interleaved ones
//     as --pipeline-model-parallel-layout (the only form that shortens one chunk of a rank);
//   - the model's RoPE base (--rotary-base) and norm epsilon (--norm-epsilon) rather than Megatron's
//     defaults (10000 and 1e-5; Llama 3 uses 500000);
//   - always an explicit --ffn-hidden-size (the SwiGLU default is not Llama's), --kv-channels when
//     the head dimension is not hidden/heads, GQA as --group-query-attention --num-query-groups;
//   - ZeRO-1 as --use-distributed-optimizer with --overlap-grad-reduce --overlap-param-gather (the
//     overlap the simulator assumes);
//   - recompute full as --recompute-granularity full --recompute-method uniform --recompute-num-layers 1,
//     and full recompute of only the first N layers of each chunk as --recompute-method block
//     --recompute-num-layers N.
// Data, tokenizer and optimizer flags are the user's: the script appends $EXTRA_ARGS.
#pragma once
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "planner/export.h"
#include "simulator/result.h"

namespace tessel {

// Megatron-Core's layout string for these model chunks (first chunk first, as layers_per_chunk
// gives them): stages separated by '|', E the embedding, t a decoder layer, L the loss, `x*n` and
// `(...)*n` repetitions, commas cosmetic; Megatron assigns stage k to pipeline rank k mod PP.
// {3, 4, 4, 3} -> "Et*3|(t*4|)*2,t*3L".
std::string megatron_pipeline_layout(const std::vector<int>& layers_per_chunk);

Emitted export_megatron(const ModelSpec& m, const SimulationResult& winner, const ClusterSpec& c,
                        const ExportOptions& o = {});

}  // namespace tessel
