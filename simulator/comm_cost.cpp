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

namespace {
// A send from a to b while every rank r of a's node sends to partner(r) (-1: r sends nothing): the
// ranks leaving the node through a's NIC, a among them, split that NIC's bandwidth.
template <typename Partner>
CommGroup shared_nic_link(const Topology& topo, int a, int b, int world, const HardwareEfficiency& e, Partner partner) {
    CommGroup g = make_p2p_link(topo, a, b, e);
    const int node = topo.node_of(a);
    if (node == topo.node_of(b)) return g;
    const int gpn = topo.gpus_per_node();
    int sharing = 0;
    for (int r = node * gpn; r < (node + 1) * gpn && r < world; ++r) {
        if (topo.nic_of(r) != topo.nic_of(a)) continue;
        const int to = partner(r);
        if (to >= 0 && topo.node_of(to) != node) ++sharing;
    }
    if (sharing > 1)
        g.bandwidth_Bps = std::min(g.bandwidth_Bps, topo.nic_GBps() * units::GB * e.inter_node_bandwidth_efficiency / sharing);
    return g;
}
}  // namespace

CommGroup make_stage_p2p_link(const Topology& topo, int a, int b, const std::string& order, const ParallelSizes& sizes,
                              const HardwareEfficiency& e) {
    const int from = coords_of(a, order, sizes).pp, to = coords_of(b, order, sizes).pp;
    return shared_nic_link(topo, a, b, sizes.world(), e, [&](int r) {
        RankCoords c = coords_of(r, order, sizes);
        if (c.pp != from) return -1;
        c.pp = to;
        return rank_of(c, order, sizes);
    });
}

namespace {
// The ring's slowest hop, each hop a -> b costed by hop_link(a, b).
template <typename HopLink>
CommGroup slowest_hop(const Topology& topo, const std::vector<int>& ring, const HardwareEfficiency& e, HopLink hop_link) {
    if (ring.size() < 2) return make_comm_group(topo, ring, e);
    CommGroup slowest;
    bool first = true;
    for (std::size_t i = 0; i < ring.size(); ++i) {
        const int a = ring[i], b = ring[(i + 1) % ring.size()];
        if (a == b) continue;
        const CommGroup hop = hop_link(a, b);
        if (first || hop.bandwidth_Bps < slowest.bandwidth_Bps ||
            (hop.bandwidth_Bps == slowest.bandwidth_Bps && hop.hop_latency_s > slowest.hop_latency_s)) {
            slowest = hop;
            first = false;
        }
    }
    slowest.size = int(ring.size());
    return slowest;
}
}  // namespace

CommGroup make_ring_link(const Topology& topo, const std::vector<int>& ring, const std::string& order,
                         const ParallelSizes& sizes, const HardwareEfficiency& e) {
    return slowest_hop(topo, ring, e, [&](int a, int b) {
        // Every context-parallel ring of the plan turns at once: each rank sends to the next cp rank.
        return shared_nic_link(topo, a, b, sizes.world(), e, [&](int r) {
            RankCoords c = coords_of(r, order, sizes);
            c.cp = (c.cp + 1) % sizes.cp;
            return rank_of(c, order, sizes);
        });
    });
}

CommGroup make_ring_link(const Topology& topo, const std::vector<int>& ring, const HardwareEfficiency& e) {
    return slowest_hop(topo, ring, e, [&](int a, int b) { return make_p2p_link(topo, a, b, e); });
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
