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

}  // namespace tessel
