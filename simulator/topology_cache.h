// Topologies shared across simulate() calls: the planner scores thousands of plans on one cluster,
// and a Topology's shortest-path cache is what makes its queries cheap.
#pragma once
#include <memory>

#include "core/cluster_spec.h"
#include "core/topology.h"

namespace tessel {

// The Topology of the cluster's wiring (nodes, GPUs per node, links); built once per distinct
// wiring and kept for the process's life (the last few are kept). Thread-safe.
std::shared_ptr<const Topology> shared_topology(const ClusterSpec& c);

}  // namespace tessel
