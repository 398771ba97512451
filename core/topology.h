// Topology: the cluster as a Boost.Graph — GPUs, each node's switch (NVSwitch, or the PCIe root
// for a PCIe box), NICs, and one InfiniBand fabric vertex whose links carry the oversubscription.
//
//   gpu0 ─┐             gpu i ─► nic k (send) ─► fabric ─► nic k' (receive) ─► gpu j
//   gpu1 ─┼─ switch      with k = i * nics / gpus over PCIe (rail-optimised wiring, as on DGX
//   ...  ─┘  (NVLink)    boxes); every link is full duplex, one directed edge per direction.
//
// It answers "bandwidth and latency between these two ranks" and "the slowest link inside this
// group of ranks" when every group of the same shape communicates at once.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/cluster_spec.h"

namespace tessel {

struct LinkInfo {
    double bandwidth_GBps = 0;  // bottleneck one-direction bandwidth of the path
    double latency_us = 0;      // summed over the path's hops
    int hops = 0;
};

struct GroupLink {
    double bandwidth_GBps = 0;  // per-rank ring bandwidth: the slowest link a ring through the group uses
    double latency_us = 0;      // worst pairwise latency inside the group
    int num_nodes = 0;          // nodes the group spans
    int max_members_per_node = 0;
    bool crosses_nodes() const { return num_nodes > 1; }
};

class Topology {
public:
    explicit Topology(const ClusterSpec& cluster);
    ~Topology();
    Topology(const Topology&) = delete;
    Topology& operator=(const Topology&) = delete;

    LinkInfo path(int rank_a, int rank_b) const;
    GroupLink group(const std::vector<int>& ranks) const;

    int node_of(int rank) const { return rank / gpus_per_node_; }
    // The NIC a rank's traffic leaves its node through (rail wiring: GPU i of a node uses NIC
    // i * nics / gpus), and one NIC's bandwidth into the fabric, one direction.
    int nic_of(int rank) const { return (rank % gpus_per_node_) * nics_per_node_ / gpus_per_node_; }
    double nic_GBps() const { return nic_wire_GBps_; }
    int num_ranks() const { return num_nodes_ * gpus_per_node_; }
    int gpus_per_node() const { return gpus_per_node_; }
    std::size_t num_vertices() const;
    std::size_t num_edges() const;
    int materialized_nodes() const { return materialized_nodes_; }

private:
    struct Graph;
    std::unique_ptr<Graph> graph_;
    int num_nodes_, gpus_per_node_, materialized_nodes_, vertices_per_node_ = 0, nics_per_node_ = 1;
    double nic_wire_GBps_ = 0;
    // NIC bandwidth per GPU when every GPU of a node sends at once.
    double nic_share_GBps() const { return nics_per_node_ * nic_wire_GBps_ / gpus_per_node_; }
    mutable std::mutex mutex_;
    mutable std::map<std::tuple<int, int, bool>, LinkInfo> path_cache_;
    // The last groups asked for, by member count, first and last member and a hash of the members
    // (64 kept; a false match needs two member lists alike in all four): the planner asks for
    // the same few groups of a layout for every plan it simulates.
    mutable std::deque<std::pair<std::tuple<std::size_t, int, int, std::uint64_t>, GroupLink>> group_cache_;
    int vertex_of(int rank) const;
    GroupLink compute_group(const std::vector<int>& ranks) const;
};

}  // namespace tessel
