#include "simulator/topology_cache.h"

#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace tessel {

namespace {
// Everything Topology's constructor reads.
std::string wiring_key(const ClusterSpec& c) {
    return fmt::format("{}x{}|{}:{}:{}|{}:{}:{}:{}:{}", c.num_nodes, c.gpus_per_node, c.intra_node.kind,
                       c.intra_node.bandwidth_GBps, c.intra_node.latency_us, c.inter_node.kind, c.inter_node.nics_per_node,
                       c.inter_node.nic_bandwidth_GBps, c.inter_node.latency_us, c.inter_node.oversubscription);
}
constexpr std::size_t kKept = 8;
}  // namespace

std::shared_ptr<const Topology> shared_topology(const ClusterSpec& c) {
    static std::mutex mutex;
    static std::deque<std::pair<std::string, std::shared_ptr<const Topology>>> kept;
    const std::string key = wiring_key(c);
    {
        std::lock_guard<std::mutex> lock(mutex);
        for (const auto& [k, t] : kept)
            if (k == key) return t;
    }
    auto topo = std::make_shared<const Topology>(c);
    std::lock_guard<std::mutex> lock(mutex);
    kept.emplace_front(key, topo);
    if (kept.size() > kKept) kept.pop_back();
    return topo;
}

}  // namespace tessel
