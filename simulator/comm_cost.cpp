#include "simulator/comm_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/units.h"

namespace tessel {

CommGroup make_comm_group(const Topology& topo, const std::vector<int>& ranks, const HardwareEfficiency& e) {
    CommGroup g;
    g.size = int(ranks.size());
    g.call_latency_s = e.collective_latency_s;
    if (g.size < 2) {
        g.bandwidth_Bps = std::numeric_limits<double>::infinity();
        return g;
    }
    const GroupLink link = topo.group(ranks);
    const double eff = link.crosses_nodes() ? e.inter_node_bandwidth_efficiency : e.intra_node_bandwidth_efficiency;
    g.bandwidth_Bps = link.bandwidth_GBps * units::GB * eff;
    g.hop_latency_s = link.latency_us * units::us;
    g.num_nodes = link.num_nodes;
    g.members_per_node = link.max_members_per_node;
    if (!link.crosses_nodes()) g.measured = e.collective_table;
    return g;
}

CommGroup make_p2p_link(const Topology& topo, int a, int b, const HardwareEfficiency& e) {
    CommGroup g;
    g.size = 2;
    g.call_latency_s = e.collective_latency_s;
    const LinkInfo l = topo.path(a, b);
    const bool crosses = topo.node_of(a) != topo.node_of(b);
    g.bandwidth_Bps = l.bandwidth_GBps * units::GB *
                      (crosses ? e.inter_node_bandwidth_efficiency : e.intra_node_bandwidth_efficiency);
    g.hop_latency_s = l.latency_us * units::us;
    g.num_nodes = crosses ? 2 : 1;
    if (!crosses) g.measured = e.collective_table;
    return g;
}

CommGroup make_stage_p2p_link(const Topology& topo, int a, int b, const std::string& order, const ParallelSizes& sizes,
                              const HardwareEfficiency& e) {
    CommGroup g = make_p2p_link(topo, a, b, e);
    if (topo.node_of(a) == topo.node_of(b)) return g;
    const RankCoords from = coords_of(a, order, sizes), to = coords_of(b, order, sizes);
    const int gpn = topo.gpus_per_node(), first = topo.node_of(a) * gpn;
    int sharing = 0;  // a itself among them
    for (int r = first; r < first + gpn && r < sizes.world(); ++r) {
        if (topo.nic_of(r) != topo.nic_of(a)) continue;
        RankCoords c = coords_of(r, order, sizes);
        if (c.pp != from.pp) continue;
        c.pp = to.pp;
        if (topo.node_of(rank_of(c, order, sizes)) != topo.node_of(a)) ++sharing;
    }
    if (sharing > 1)
        g.bandwidth_Bps = std::min(g.bandwidth_Bps, topo.nic_GBps() * units::GB * e.inter_node_bandwidth_efficiency / sharing);
    return g;
}

CommGroup make_ring_link(const Topology& topo, const std::vector<int>& ring, const HardwareEfficiency& e) {
    if (ring.size() < 2) return make_comm_group(topo, ring, e);
    CommGroup slowest;
    bool first = true;
    for (std::size_t i = 0; i < ring.size(); ++i) {
        const int a = ring[i], b = ring[(i + 1) % ring.size()];
        if (a == b) continue;
        const CommGroup hop = make_p2p_link(topo, a, b, e);
        if (first || hop.bandwidth_Bps < slowest.bandwidth_Bps ||
            (hop.bandwidth_Bps == slowest.bandwidth_Bps && hop.hop_latency_s > slowest.hop_latency_s)) {
            slowest = hop;
            first = false;
        }
    }
    slowest.size = int(ring.size());
    return slowest;
}

double ring_all_reduce_time(double bytes, const CommGroup& g) {
    const int n = g.size;
    if (n < 2 || bytes <= 0) return 0;
    // Reduce-scatter then all-gather around the ring: 2(n-1) steps of S/n bytes each.
    return bus_bandwidth_factor(Collective::all_reduce, n) * bytes / g.bandwidth_Bps + 2.0 * (n - 1) * g.hop_latency_s +
           g.call_latency_s;
}

double tree_all_reduce_time(double bytes, const CommGroup& g) {
    const int n = g.size;
    if (n < 2 || bytes <= 0) return 0;
    // NCCL's double binary tree over nodes (a chain inside each node): every rank sends and
    // receives about 2S in all, so the bandwidth term matches the ring's at large n, while the
    // latency grows with the tree's depth rather than the rank count.
    const double depth = std::ceil(std::log2(std::max(2, g.num_nodes))) + (g.members_per_node - 1);
    return 2.0 * bytes / g.bandwidth_Bps + 2.0 * depth * g.hop_latency_s + g.call_latency_s;
}

double collective_time(Collective c, double bytes, const CommGroup& g) {
    const int n = g.size;
    if (bytes <= 0) return 0;
    if (g.measured && (n >= 2 || c == Collective::send_recv)) {
        const double busbw = table_bus_bandwidth(*g.measured, c, bytes);
        if (busbw > 0) return (c == Collective::send_recv ? 1.0 : bus_bandwidth_factor(c, n)) * bytes / busbw;
    }
    if (c == Collective::send_recv) return bytes / g.bandwidth_Bps + g.hop_latency_s + g.call_latency_s;
    if (n < 2) return 0;
    switch (c) {
        case Collective::all_reduce: {
            double ring = ring_all_reduce_time(bytes, g);
            return g.num_nodes > 1 ? std::min(ring, tree_all_reduce_time(bytes, g)) : ring;
        }
        case Collective::all_gather:
        case Collective::reduce_scatter:
        case Collective::all_to_all:
            return bus_bandwidth_factor(c, n) * bytes / g.bandwidth_Bps + (n - 1) * g.hop_latency_s + g.call_latency_s;
        case Collective::send_recv: break;
    }
    return 0;
}

}  // namespace tessel
