// Pipeline schedules as data: each pipeline rank's ordered list of forward and backward actions.
// The simulator times these lists; the executor runs them. Chunk c on pipeline rank r holds model
// stage c * pp + r (Megatron's interleaved assignment), so with one chunk, stage = rank.
#pragma once
#include <string>
#include <vector>

#include "core/options.h"

namespace tessel {

enum class PipelineOp { forward, backward };

struct PipelineAction {
    PipelineOp op;
    int microbatch;
    int chunk;
    bool operator==(const PipelineAction&) const = default;
};

using RankSchedule = std::vector<PipelineAction>;

// One list per pipeline rank. GPipe: all forwards, then all backwards (last microbatch first).
// 1F1B: pp - rank - 1 warm-up forwards, then one-forward-one-backward, then the cool-down.
// Interleaved (virtual_stages > 1): Megatron's order with microbatch groups of pp; needs
// num_microbatches % pp == 0.
// `all_forwards_first_at_m_equal_pp`: with as many microbatches as pipeline ranks, Megatron-LM's
// interleaved schedule ran every forward before any backward on every rank until 2024-11-01
// (commit 4295be1a6c, "tunable schedule with overlapping", first in core_r0.10.0); since then it
// keeps the usual warm-up there, as PyTorch's ScheduleInterleaved1F1B (torchtitan) does.
std::vector<RankSchedule> pipeline_schedule(Schedule schedule, int pp, int num_microbatches, int virtual_stages = 1,
                                            bool all_forwards_first_at_m_equal_pp = false);

// Forwards a rank runs before its first backward (Megatron's get_pp_rank_microbatches; the
// interleaved warm-up, (v - 1) pp + 2 (pp - rank - 1), is also PyTorch's).
int warmup_forwards(Schedule schedule, int pp, int rank, int num_microbatches, int virtual_stages = 1,
                    bool all_forwards_first_at_m_equal_pp = false);

// The most microbatch activations a rank holds at once under the schedule (per chunk summed).
int max_in_flight(const RankSchedule& actions);

std::string to_string(const RankSchedule& actions);  // "F0 F1 B0 ..." with ".c" for chunks

}  // namespace tessel
