#include "core/topology.h"

#include <algorithm>
#include <limits>
#include <set>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

namespace {
struct EdgeProps {
    double bandwidth_GBps;
    double latency_us;
    double weight;  // latency plus a tiny per-hop cost, so ties prefer fewer hops
};
EdgeProps link(double bandwidth_GBps, double latency_us) { return {bandwidth_GBps, latency_us, latency_us + 1e-6}; }
// A NIC's wire to the fabric weighs more than any latency: two GPUs of one node talk over the
// node's own links (NCCL's P2P and NVLink transports), never out through a NIC and back, whatever
// the latencies say (a calibrated profile may measure the fabric's below NVLink's). A path between
// nodes crosses exactly two wires whichever way it goes, so its choice is unchanged.
constexpr double kFabricDetour_us = 1e9;
EdgeProps wire_link(double bandwidth_GBps, double latency_us) {
    EdgeProps e = link(bandwidth_GBps, latency_us);
    e.weight += kFabricDetour_us;
    return e;
}
// Past this many nodes every node is identical, so the graph holds this many and maps the rest
// onto them by node index modulo; paths and group links are unchanged by the symmetry.
constexpr int kMaxMaterializedNodes = 4096;
// PCIe Gen5 x16 between a GPU and its NIC, one direction (PCI-SIG Gen5 spec: 32 GT/s x16 ~ 64 GB/s).
constexpr double kPcieGpuNicGBps = 64.0;
}  // namespace

struct Topology::Graph {
    using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeProps>;
    G g;
};

Topology::Topology(const ClusterSpec& c)
    : graph_(std::make_unique<Graph>()),
      num_nodes_(c.num_nodes),
      gpus_per_node_(c.gpus_per_node),
      materialized_nodes_(std::min(c.num_nodes, kMaxMaterializedNodes)) {
    auto& g = graph_->g;
    const int gpn = gpus_per_node_;
    const int nics = std::max(1, c.inter_node.nics_per_node);
    const double intra_bw = c.intra_node.bandwidth_GBps > 0 ? c.intra_node.bandwidth_GBps : 1e-9;
    const double nic_bw = c.inter_node.nic_bandwidth_GBps > 0 ? c.inter_node.nic_bandwidth_GBps : 1e-9;
    // Per node: gpn GPUs, 1 switch, then each NIC as a send side and a receive side; one fabric
    // vertex at the end. Links are full duplex, so each direction is its own directed edge, and a
    // NIC's send side leads only to the fabric: traffic between two GPUs of a node cannot take a
    // shortcut through a NIC they share.
    const int per_node = gpn + 1 + 2 * nics;
    vertices_per_node_ = per_node;
    const int fabric = materialized_nodes_ * per_node;
    // Vertices added in place: assigning a sized graph copies it (Boost has no move assignment),
    // which trips GCC 12's -Wmaybe-uninitialized inside Boost.
    for (int v = 0; v <= fabric; ++v) boost::add_vertex(g);
    const double pcie = std::min(kPcieGpuNicGBps, nic_bw * 4);
    for (int n = 0; n < materialized_nodes_; ++n) {
        const int base = n * per_node, sw = base + gpn;
        for (int i = 0; i < gpn; ++i) {
            // Half the intra-node latency on each side of the switch.
            boost::add_edge(base + i, sw, link(intra_bw, c.intra_node.latency_us / 2), g);
            boost::add_edge(sw, base + i, link(intra_bw, c.intra_node.latency_us / 2), g);
            const int k = (i * nics) / gpn;
            boost::add_edge(base + i, sw + 1 + 2 * k, link(pcie, 0.0), g);      // GPU -> NIC send side
            boost::add_edge(sw + 2 + 2 * k, base + i, link(pcie, 0.0), g);      // NIC receive side -> GPU
        }
        for (int k = 0; k < nics; ++k) {
            const auto wire = wire_link(nic_bw / c.inter_node.oversubscription, c.inter_node.latency_us / 2);
            boost::add_edge(sw + 1 + 2 * k, fabric, wire, g);
            boost::add_edge(fabric, sw + 2 + 2 * k, wire, g);
        }
    }
    nics_per_node_ = nics;
    nic_wire_GBps_ = nic_bw / c.inter_node.oversubscription;
}

Topology::~Topology() = default;

std::size_t Topology::num_vertices() const { return boost::num_vertices(graph_->g); }
std::size_t Topology::num_edges() const { return boost::num_edges(graph_->g); }

int Topology::vertex_of(int rank) const {
    return (node_of(rank) % materialized_nodes_) * vertices_per_node_ + rank % gpus_per_node_;
}

LinkInfo Topology::path(int a, int b) const {
    if (a < 0 || b < 0 || a >= num_ranks() || b >= num_ranks())
        throw InputError(fmt::format("rank pair ({}, {}) outside a cluster of {} GPUs", a, b, num_ranks()));
    if (a == b) return LinkInfo{std::numeric_limits<double>::infinity(), 0.0, 0};
    const bool same_node = node_of(a) == node_of(b);
    const auto key = std::make_tuple(a % gpus_per_node_, b % gpus_per_node_, same_node);
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = path_cache_.find(key); it != path_cache_.end()) return it->second;

    // Lowest-latency path (Dijkstra),
    // then the bottleneck bandwidth along it.
    const auto& g = graph_->g;
    int va = vertex_of(a), vb = vertex_of(b);
    if (!same_node && node_of(a) % materialized_nodes_ == node_of(b) % materialized_nodes_)
        vb = (vb + vertices_per_node_) % (vertices_per_node_ * materialized_nodes_);
    std::vector<Graph::G::vertex_descriptor> pred(boost::num_vertices(g));
    std::vector<double> dist(boost::num_vertices(g));
    auto weight = boost::get(&EdgeProps::weight, g);
    boost::dijkstra_shortest_paths(g, va, boost::predecessor_map(pred.data()).distance_map(dist.data()).weight_map(weight));
    LinkInfo info{std::numeric_limits<double>::infinity(), 0.0, 0};
    for (auto v = Graph::G::vertex_descriptor(vb); v != Graph::G::vertex_descriptor(va); v = pred[v]) {
        if (pred[v] == v) throw RuntimeError("topology graph is disconnected");
        auto [e, ok] = boost::edge(pred[v], v, g);
        info.bandwidth_GBps = std::min(info.bandwidth_GBps, g[e].bandwidth_GBps);
        info.latency_us += g[e].latency_us;
        ++info.hops;
    }
    path_cache_[key] = info;
    return info;
}

GroupLink Topology::group(const std::vector<int>& ranks) const {
    if (ranks.size() < 2) {
        GroupLink out;
        out.bandwidth_GBps = std::numeric_limits<double>::infinity();
        out.num_nodes = 1;
        out.max_members_per_node = int(ranks.size());
        return out;
    }
    // FNV-1a over the members in order: a miss costs the pass below, a hit one multiply per member.
    std::uint64_t hash = 1469598103934665603ull;
    for (int r : ranks) hash = (hash ^ std::uint32_t(r)) * 1099511628211ull;
    const auto key = std::make_tuple(ranks.size(), ranks.front(), ranks.back(), hash);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [k, link] : group_cache_)
            if (k == key) return link;
    }
    const GroupLink out = compute_group(ranks);
    std::lock_guard<std::mutex> lock(mutex_);
    group_cache_.emplace_front(key, out);
    if (group_cache_.size() > 64) group_cache_.pop_back();
    return out;
}

GroupLink Topology::compute_group(const std::vector<int>& ranks) const {
    GroupLink out;
    // Node by node, in one pass over the sorted ranks (a data-parallel group of an absurd cluster
    // has a million members: no map, and each intra-node path asked for once).
    std::vector<int> sorted = ranks;
    if (!std::is_sorted(sorted.begin(), sorted.end())) std::sort(sorted.begin(), sorted.end());
    std::vector<std::size_t> run_starts;  // index in `sorted` where each node's members begin
    for (std::size_t i = 0; i < sorted.size(); ++i)
        if (i == 0 || node_of(sorted[i]) != node_of(sorted[i - 1])) run_starts.push_back(i);
    run_starts.push_back(sorted.size());
    out.num_nodes = int(run_starts.size() - 1);
    int min_members = int(ranks.size());
    for (std::size_t n = 0; n + 1 < run_starts.size(); ++n) {
        const int count = int(run_starts[n + 1] - run_starts[n]);
        out.max_members_per_node = std::max(out.max_members_per_node, count);
        min_members = std::min(min_members, count);
    }

    // Inside the node: the slowest GPU-to-GPU path among the members.
    double intra_bw = std::numeric_limits<double>::infinity(), intra_lat = 0;
    std::vector<char> asked(std::size_t(gpus_per_node_) * gpus_per_node_, 0);
    for (std::size_t n = 0; n + 1 < run_starts.size(); ++n) {
        const int first = sorted[run_starts[n]];
        for (std::size_t i = run_starts[n] + 1; i < run_starts[n + 1]; ++i) {
            char& done = asked[std::size_t(first % gpus_per_node_) * gpus_per_node_ + sorted[i] % gpus_per_node_];
            if (done) continue;
            done = 1;
            LinkInfo l = path(first, sorted[i]);
            intra_bw = std::min(intra_bw, l.bandwidth_GBps);
            intra_lat = std::max(intra_lat, l.latency_us);
        }
    }
    if (out.num_nodes == 1) {
        out.bandwidth_GBps = intra_bw;
        out.latency_us = intra_lat;
        return out;
    }
    // Across nodes: a ring (or NCCL's several rings, one per member of a node) crosses every node
    // boundary with as many channels as the node contributes members; each channel gets one GPU's
    // share of the node's NICs when all GPUs communicate at once (symmetric plans do).
    const int a = sorted[run_starts[0]], b = sorted[run_starts[1]];
    LinkInfo cross = path(a, b);
    const double cross_bw = std::min(cross.bandwidth_GBps * min_members, nic_share_GBps() * min_members);
    out.bandwidth_GBps = std::min(intra_bw, cross_bw);
    out.latency_us = std::max(intra_lat, cross.latency_us);
    return out;
}

}  // namespace tessel
