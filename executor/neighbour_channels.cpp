#include "executor/neighbour_channels.h"

#include <algorithm>

namespace tessel {

std::vector<std::vector<NeighbourChannel>> neighbour_channel_rounds(int size) {
    std::vector<NeighbourChannel> edges;
    if (size < 2) return {};
    for (int step : {1, -1})
        for (int r = 0; r < size; ++r) {
            const NeighbourChannel e{r, (r + step + size) % size};
            const bool seen = std::any_of(edges.begin(), edges.end(),
                                          [&](const NeighbourChannel& x) { return x.from == e.from && x.to == e.to; });
            if (!seen) edges.push_back(e);
        }
    std::vector<std::vector<NeighbourChannel>> rounds;
    auto touches = [](const std::vector<NeighbourChannel>& round, int rank) {
        return std::any_of(round.begin(), round.end(),
                           [&](const NeighbourChannel& x) { return x.from == rank || x.to == rank; });
    };
    for (const NeighbourChannel& e : edges) {
        auto free = std::find_if(rounds.begin(), rounds.end(), [&](const std::vector<NeighbourChannel>& round) {
            return !touches(round, e.from) && !touches(round, e.to);
        });
        if (free == rounds.end()) rounds.emplace_back(1, e);
        else free->push_back(e);
    }
    return rounds;
}

}  // namespace tessel
