#include "executor/parallel_groups.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

namespace {
ParallelSizes sizes_of(const Plan& p) { return ParallelSizes{p.tp, p.cp, p.dp, p.pp}; }
}  // namespace

GroupLists group_lists(const Plan& plan) {
    const ParallelSizes sizes = sizes_of(plan);
    GroupLists g;
    g.tp = rank_groups(plan.placement, sizes, "tp");
    g.cp = rank_groups(plan.placement, sizes, "cp");
    g.dp_cp = rank_groups(plan.placement, sizes, "dp-cp");
    g.pp = rank_groups(plan.placement, sizes, "pp");
    g.dp = rank_groups(plan.placement, sizes, "dp");
    if (plan.pp > 1) {
        // Each pipeline's ranks come in pipeline order (ascending ranks = ascending pp coordinate).
        for (const auto& pipeline : g.pp) g.embedding.push_back({pipeline.front(), pipeline.back()});
    }
    return g;
}

ParallelGroups make_parallel_groups(const Plan& plan, std::unique_ptr<Communicator> world) {
    ParallelGroups g;
    g.sizes = sizes_of(plan);
    if (world->size() != g.sizes.world())
        throw RuntimeError(fmt::format("parallel groups: world of {} ranks for a plan of {}", world->size(),
                                       g.sizes.world()));
    g.world_rank = world->rank();
    g.coords = coords_of(g.world_rank, plan.placement, g.sizes);
    const GroupLists lists = group_lists(plan);
    g.tp = world->split(lists.tp);
    g.cp = world->split(lists.cp);
    g.pp = world->split(lists.pp);
    g.dp_cp = world->split(lists.dp_cp);
    if (!lists.embedding.empty()) g.embedding = world->split(lists.embedding);
    g.world = std::move(world);
    return g;
}

}  // namespace tessel
