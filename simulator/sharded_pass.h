// One forward or backward pass over a pipeline stage's blocks, with ZeRO-3/FSDP's layer-by-layer
// weight gathers and gradient reduce-scatters beside the compute.
#pragma once
#include <vector>

#include "simulator/comm_cost.h"
#include "simulator/layer_cost.h"
#include "simulator/pipeline_sim.h"

namespace tessel {

// Times one pass over a stage's blocks. With weights sharded over the group `sharded` (ZeRO-3),
// each block's weights are all-gathered first and, in the backward pass, its gradients
// reduce-scattered after it. All of them share one communication stream beside compute (one
// process group: NCCL runs its collectives in the order they are issued). In the forward the next
// block's gather is issued when this block starts. In the backward with `prefetch`, the stream
// runs gather(0), gather(1), scatter(0), gather(2), scatter(1), ...: the next block's gather is
// issued before this block's reduce-scatter, which waits for this block's compute. Without it a
// block's gather queues behind the previous block's reduce-scatter. Without `gather_in_backward`
// (FSDP's SHARD_GRAD_OP: the forward's gathered weights stay until the backward is done) the
// backward only reduce-scatters. SimulateOptions::backward_prefetch says why simulate() leaves
// the prefetch off by default. With `spans`, each gather and reduce-scatter is appended to it,
// placed from the start of the pass.
ActionParts time_pass(const std::vector<const BlockCost*>& blocks, bool forward, const CommGroup* sharded,
                      double weight_bytes, double grad_bytes, double interference, bool gather_in_backward = true,
                      bool prefetch = false, std::vector<CommSpan>* spans = nullptr);

}  // namespace tessel
