// Clusters for the simulator tests, built from JSON the way users write them.
#pragma once
#include "core/cluster_spec.h"

namespace tessel::test {

// One node of `gpus` GPUs (more nodes when asked) whose links are so fast and so close that
// communication costs nothing measurable, and whose kernels have no fixed cost (unless `profile`
// says otherwise).
inline ClusterSpec free_communication_cluster(int gpus_per_node = 8, int nodes = 1,
                                              json profile = {{"kernel_launch_us", 0}, {"collective", {{"latency_us", 0}}}}) {
    json j = {{"name", "free-comm"},
              {"num_nodes", nodes},
              {"gpus_per_node", gpus_per_node},
              {"gpu", {{"name", "test-gpu"}, {"memory_GiB", 80}, {"memory_bandwidth_GBps", 2000}, {"peak_tflops", {{"bf16", 312}}}}},
              {"intra_node", {{"kind", "nvlink"}, {"bandwidth_GBps", 1e12}, {"latency_us", 0}}},
              {"inter_node", {{"kind", "infiniband"}, {"nics_per_node", 8}, {"nic_bandwidth_GBps", 1e12}, {"latency_us", 0}}},
              {"profile", std::move(profile)}};
    return parse_cluster(j, "test cluster");
}

// Two DGX-A100-like nodes with round numbers and NCCL reaching the full link bandwidth: `nics`
// NICs of 25 GB/s per node of 8 GPUs (rail wiring: GPU i uses NIC i * nics / 8).
inline ClusterSpec simple_node(double intra_GBps, double latency_us, int nics = 8) {
    json j = {{"name", "simple"},
              {"num_nodes", 2},
              {"gpus_per_node", 8},
              {"gpu", {{"name", "test-gpu"}, {"memory_GiB", 80}, {"memory_bandwidth_GBps", 2000}, {"peak_tflops", {{"bf16", 312}}}}},
              {"intra_node", {{"kind", "nvlink"}, {"bandwidth_GBps", intra_GBps}, {"latency_us", latency_us}}},
              {"inter_node", {{"kind", "infiniband"}, {"nics_per_node", nics}, {"nic_bandwidth_GBps", 25}, {"latency_us", 5}}},
              {"profile",
               {{"collective",
                 {{"intra_node_bandwidth_efficiency", 1.0}, {"inter_node_bandwidth_efficiency", 1.0}, {"latency_us", 0}}}}}};
    return parse_cluster(j, "test cluster");
}

}  // namespace tessel::test
