// neighbour_channels: the one-way channels between ring neighbours of a group (rank -> rank ± 1
// mod size), and the order in which a group builds them. Each channel is a two-rank communicator
// made by a split that the whole group calls; one split can make many channels at once as long
// as no rank is in two of them, so the channels come in rounds of channels with disjoint ends.
#pragma once

#include <vector>

namespace tessel {

struct NeighbourChannel {
    int from = 0, to = 0;
};

// Every directed edge between ring neighbours once (two for a group of two, 2·size above), in
// rounds whose channels share no rank. The same on every rank: it depends on size alone.
std::vector<std::vector<NeighbourChannel>> neighbour_channel_rounds(int size);

}  // namespace tessel
