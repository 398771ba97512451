// The schedule, event by event: every pipeline rank runs its ordered forward/backward actions
// (core/schedule.h) on its compute stream; an action starts when the stream is free and its input
// has arrived — the previous stage's activation, or the next stage's gradient — over a point-to-
// point link that is its own resource, one per direction. Gradient buckets are released while each
// chunk's last backward runs and queue on the rank's data-parallel stream, which overlaps with
// whatever compute remains. One tensor-parallel rank of one data-parallel replica stands for all
// (they are symmetric), so the simulation is pp x (2 x microbatches x chunks) actions.
#pragma once
#include <string>
#include <vector>

#include "core/options.h"
#include "simulator/result.h"

namespace tessel {

// What one forward or backward action on a model stage is made of, in seconds.
struct ActionParts {
    double compute = 0, recompute = 0, tp_comm = 0, cp_comm = 0, dp_comm = 0;  // dp_comm: ZeRO-3 gathers not hidden
    double tp_comm_hidden = 0, cp_comm_hidden = 0;  // beside the compute (PassCost), for the trace only
    double total() const { return compute + recompute + tp_comm + cp_comm + dp_comm; }
};

// One collective on a communication stream, placed from the start of the action that issues it
// (for the trace).
struct CommSpan {
    std::string name;
    double offset_s = 0, duration_s = 0;
};

struct PipelineInput {
    Schedule schedule = Schedule::one_f_one_b;
    int pp = 1, virtual_stages = 1, microbatches = 1;
    bool all_forwards_first_at_m_equal_pp = false;  // core/schedule.h: Megatron-LM's interleaved order before 2024-11
    // Per model stage (pp x virtual_stages, stage = chunk x pp + rank).
    std::vector<ActionParts> forward, backward;
    std::vector<int> layers;               // for the trace: layers of each stage
    std::vector<double> send_forward_s;    // activation from stage s to s + 1
    std::vector<double> send_backward_s;   // gradient from stage s to s - 1
    // Seconds of each gradient bucket's reduction, in release order, per stage.
    std::vector<std::vector<double>> buckets_s;
    bool overlap_grad_reduce = true;       // buckets start during the last backward, else after it
    // Point-to-point transfers run beside the rank's next action (Megatron-Core's interleaved
    // schedule with --overlap-p2p-communication). Otherwise the rank's compute stream waits for
    // each of its sends to land before its next action starts, as in GPipe and 1F1B, where
    // Megatron waits on every batched send/receive and DeepSpeed's pipeline engine sends by
    // blocking broadcasts.
    bool overlap_p2p = true;
    // ZeRO-2 keeps only its shard of the gradients, so every microbatch's backward reduce-scatters
    // its buckets (DeepSpeed: "gradient reduction is required after every backward because of
    // gradient partitioning", deepspeedai/DeepSpeed#2252); ZeRO-0/1 accumulate the whole gradient
    // and reduce once, in the last backward.
    bool reduce_every_microbatch = false;
    // Compute slowdown while a bucket's collective runs beside the backward that released it
    // (NCCL's kernels take SMs and memory bandwidth; HardwareEfficiency::sm_interference).
    double interference = 0.0;
    // The tied embedding's gradient all-reduce between the first and the last pipeline rank, after
    // both have reduced their data-parallel gradients (Megatron's finalize_model_grads): one
    // collective, so the rank that gets there first waits for the other. 0: none.
    double tied_embedding_sync_s = 0;
    // Per pipeline rank, after its gradients are reduced (and the tied embedding's synced):
    // communication that stays exposed (the ZeRO parameter all-gather) and the optimizer step.
    std::vector<double> after_comm_s, optimizer_s;
    bool record_trace = false;
    // With record_trace, per model stage: the ZeRO-3/FSDP weight gathers and gradient
    // reduce-scatters of its forward and backward passes (time_pass), drawn on the rank's
    // "dp comm" track at every action. Empty: none.
    std::vector<std::vector<CommSpan>> forward_comm, backward_comm;
};

struct RankTimeline {
    double busy_s = 0;         // sum of its actions
    ActionParts parts;         // the same, by kind
    double bubble_s = 0;       // idle waiting for upstream compute
    double pp_wait_s = 0;      // idle waiting for a point-to-point transfer
    double compute_end_s = 0;  // last action ends
    double dp_end_s = 0;       // last gradient bucket reduced
    double sync_wait_s = 0;    // then idle until the other end of the pipeline joins the tied-embedding sync
    double sync_s = 0;         // and in that sync
    double end_s = 0;          // optimizer step done
};

struct PipelineOutput {
    double step_s = 0;
    int critical_rank = 0;     // the rank that finishes last
    std::vector<RankTimeline> ranks;
    std::vector<TraceEvent> trace;
};

// InputError if the schedule deadlocks (it cannot for schedules from core/schedule.h).
PipelineOutput simulate_pipeline(const PipelineInput& in);

}  // namespace tessel
