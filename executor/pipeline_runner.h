// Runs one rank's pipeline schedule for one step: the ordered forward and backward actions of
// core/schedule.h (GPipe, 1F1B, interleaved 1F1B — the lists the simulator times), with the
// activation and gradient transfers between neighbouring stages.
//
// Deadlock freedom: sends are non-blocking (each buffer lives until its send completes) and
// receives block, each matched by a tag naming (microbatch, destination stage, direction). A
// rank then only ever waits for data its schedule needs next, and every schedule's dependency
// order is acyclic, so any interleaving of neighbours completes. NCCL matches by order instead
// of tag, one channel per direction (nccl_communicator.h): that holds because each rank posts
// its receives from a neighbour in the order the neighbour sends them (tested for every schedule).
#pragma once

#include <functional>
#include <vector>

#include "core/schedule.h"
#include "executor/model_chunk.h"

namespace tessel {

struct PipelineStep {
    const RankSchedule* actions = nullptr;
    std::vector<ModelChunk*> chunks;  // by chunk index on this rank
    Communicator* pp = nullptr;       // the pipeline group (rank = pipeline rank)
    int pp_size = 1;
    int num_stages = 1;               // pp · virtual stages
    float dloss = 1.0f;               // each token's weight in the step's mean loss
    std::function<MicrobatchTokens(int microbatch)> tokens;
    std::function<void(const PipelineAction&)> before_action;  // optional (fault injection in tests)
};

// Returns the sum of the token losses this rank computed (0 off the last stage).
double run_pipeline_step(const LayerContext& ctx, const PipelineStep& step);

// The message tag of a transfer into `stage` (forward: its input; backward: its output gradient).
int pipeline_tag(int microbatch, int stage, int num_stages, bool backward);

// The transfers around one action of the chunk at model stage `stage`: the receive before it
// (forward: the input from stage - 1; backward: the output gradient from stage + 1) and the send
// after it, with the peers' pipeline ranks (stage mod pp_size); peer -1 where there is none.
struct StageTransfer {
    int peer = -1;
    int tag = 0;
};
struct ActionTransfers {
    StageTransfer receive, send;
};
ActionTransfers action_transfers(const PipelineAction& action, int stage, int num_stages, int pp_size);

}  // namespace tessel
