// Process groups from the plan, Megatron's parallel_state factoring: a rank's (tp, cp, dp, pp)
// coordinates come from the plan's placement string (core/rank_groups.h), and each kind of group
// is one split of the world communicator. The embedding group links the first and last pipeline
// stages of one pipeline, whose copies of a tied token table sum their gradients.
#pragma once

#include <memory>
#include <vector>

#include "core/plan.h"
#include "core/rank_groups.h"
#include "executor/communicator.h"

namespace tessel {

// Every group of each kind, as lists of world ranks (pure; the same on every rank).
struct GroupLists {
    std::vector<std::vector<int>> tp, cp, pp, dp, embedding;
    std::vector<std::vector<int>> dp_cp;  // the ranks that hold the same parameters: gradients sum here
};
GroupLists group_lists(const Plan& plan);

struct ParallelGroups {
    ParallelSizes sizes;
    RankCoords coords;
    int world_rank = 0;
    std::unique_ptr<Communicator> world, tp, cp, pp;
    // Data- and context-parallel ranks hold the same parameters (Megatron's data-parallel group
    // with context parallelism): gradients are reduced and ZeRO shards over this group. Nothing
    // goes over the data-parallel group alone, so it gets no communicator (under NCCL each one
    // holds device memory): with cp = 1 this is that group.
    std::unique_ptr<Communicator> dp_cp;
    std::unique_ptr<Communicator> embedding;  // first and last pipeline stage; nullptr elsewhere or when pp = 1
};

// Collective over `world` (whose size must be the plan's world size): every rank creates every
// group in the same order.
ParallelGroups make_parallel_groups(const Plan& plan, std::unique_ptr<Communicator> world);

}  // namespace tessel
