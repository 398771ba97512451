// α–β costs of collectives over the topology: the bandwidth term is S x busbw-factor / bw, with
// bw the group's ring bandwidth under concurrent use (Topology::group) scaled by NCCL's reachable
// fraction of the link; the latency term counts the ring's steps (or the tree's depth).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/rank_groups.h"
#include "core/topology.h"
#include "simulator/collectives.h"
#include "simulator/hardware_efficiency.h"

namespace tessel {

// What a collective needs to know about its group.
struct CommGroup {
    int size = 1;
    double bandwidth_Bps = 0;   // per-rank bus bandwidth NCCL reaches (link x efficiency), bytes/s
    double hop_latency_s = 0;   // one step between neighbours (the group's worst pairwise latency)
    int num_nodes = 1;
    int members_per_node = 1;
    double call_latency_s = 0;  // fixed cost of one collective call
    // Measured bus bandwidths (the profile's collective_table) for a group inside one node, which
    // collective_time uses in place of the alpha-beta model; nullptr otherwise.
    std::shared_ptr<const CollectiveTable> measured;
};

CommGroup make_comm_group(const Topology& topo, const std::vector<int>& ranks, const HardwareEfficiency& e);
// A point-to-point link between two ranks.
CommGroup make_p2p_link(const Topology& topo, int a, int b, const HardwareEfficiency& e);
// A pipeline stage's send to the next stage, from rank a to rank b, while every rank of the stage
// sends its own share of the boundary at once (symmetric plans do): across nodes, the ranks of a's
// node that leave through a's NIC towards another node split that NIC's bandwidth. Inside a node,
// or with a NIC per GPU, it is make_p2p_link's path.
CommGroup make_stage_p2p_link(const Topology& topo, int a, int b, const std::string& order, const ParallelSizes& sizes,
                              const HardwareEfficiency& e);
// The slowest hop of a context-parallel ring that passes each rank's buffer to the next (ring[i]
// -> ring[i + 1], the last back to the first), as ring attention does: every rank sends and
// receives at once and the next step waits for all, so the ring moves at its slowest hop. Across
// nodes that hop is one GPU's path through its NIC, shared with the node's other ranks whose rings
// leave through the same NIC (every cp ring of the plan, laid out by order and sizes, turns at
// once). size is the ring's rank count.
CommGroup make_ring_link(const Topology& topo, const std::vector<int>& ring, const std::string& order,
                         const ParallelSizes& sizes, const HardwareEfficiency& e);
// The same ring as if no other ring shared its NICs: no slower than the shared one, so a lower
// bound on its time (the planner's StepBound, whose cache does not know the other rings).
CommGroup make_ring_link(const Topology& topo, const std::vector<int>& ring, const HardwareEfficiency& e);

// Seconds for one collective on `bytes` = S as nccl-tests defines it (see collectives.h).
// All-reduce takes the faster of a ring and, across several nodes, NCCL's double binary tree.
double collective_time(Collective c, double bytes, const CommGroup& g);
double ring_all_reduce_time(double bytes, const CommGroup& g);
double tree_all_reduce_time(double bytes, const CommGroup& g);

}  // namespace tessel
