// Rank groups: which global ranks share a tensor-, context-, data- or pipeline-parallel group.
// Megatron-LM's RankGenerator factoring: with order "tp-cp-dp-pp" (innermost first),
//   rank = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank)).
// Example (Megatron's docstring): order tp-pp-dp, sizes 2-2-2 -> dp groups [[0,4],[1,5],[2,6],[3,7]].
#pragma once
#include <string>
#include <vector>

namespace tessel {

struct ParallelSizes {
    int tp = 1, cp = 1, dp = 1, pp = 1;
    int world() const { return tp * cp * dp * pp; }
};

struct RankCoords {
    int tp = 0, cp = 0, dp = 0, pp = 0;
};

RankCoords coords_of(int rank, const std::string& order, const ParallelSizes& sizes);
int rank_of(const RankCoords& coords, const std::string& order, const ParallelSizes& sizes);

// Groups of ranks that differ only along `dims` (e.g. "dp" or "tp-cp"), each ascending, listed
// by their first rank.
std::vector<std::vector<int>> rank_groups(const std::string& order, const ParallelSizes& sizes,
                                          const std::string& dims);
// The one group along `dims` that contains `rank`.
std::vector<int> group_of(int rank, const std::string& order, const ParallelSizes& sizes, const std::string& dims);

// Whether every group of every dimension sits on the nodes as the group through rank 0 does: each
// product of the sizes from TP outward, in the placement's order, divides the GPUs per node or is
// a multiple of them. TP 3 on 8-GPU nodes puts two of every eight TP groups across two nodes while
// rank 0's stays in one; the planner keeps to layouts where they sit alike, and the simulator
// prices the slowest copy where they do not.
bool groups_sit_alike(const std::string& placement, const ParallelSizes& sizes, int gpus_per_node);

// Distance between neighbouring ranks of dimension `dim` ("tp", "cp", "dp" or "pp") under a
// placement: the product of the sizes of the dimensions placed inside it. The group of `dim`
// through rank 0 is {k * stride : k < size} (the factoring above, without its parsing).
int placement_stride(const std::string& placement, const ParallelSizes& sizes, const std::string& dim);

}  // namespace tessel
