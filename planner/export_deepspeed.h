// The winner as a DeepSpeed config JSON (shared reference config-formats.md §B2): explicit values
// for every key that matters rather than DeepSpeed's defaults (which changed between versions,
// e.g. offload pin_memory in v0.19.5), and train_batch_size = micro x GAS x DP exactly.
// DeepSpeed's JSON carries no TP or PP degree: with TP or PP > 1 the notes give the
// Megatron-DeepSpeed flags that set them. The activation_checkpointing block only configures
// deepspeed.checkpointing; the model code must call it (the notes say so).
#pragma once
#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "planner/export.h"
#include "simulator/result.h"

namespace tessel {

Emitted export_deepspeed(const ModelSpec& m, const SimulationResult& winner, const ClusterSpec& c,
                         const ExportOptions& o = {});

}  // namespace tessel
