// R9 of validate: the cluster a published run ran on, read from the row's own words — the GPU it
// names picks the preset, and the node size and network it states replace the preset's.
#pragma once
#include <optional>
#include <string>

#include "core/cluster_spec.h"

namespace tessel {

// The preset a row's gpu_type names (A100 40GB, A100 PCIe, other A100, H100, H200), or nullptr.
const char* cluster_preset_for_gpu(const std::string& gpu_type);

// What a row's gpu_type states about the card beyond its name, each 0 when not stated: memory
// ("96GB": GiB, as GPU memory is marketed), HBM bandwidth ("2.4 TB/s") and the power cap the run
// kept ("500 W power limit"; the simulator scales the compute ceilings by power_clock_fraction).
struct GpuFigures {
    double memory_GiB = 0;
    double memory_bandwidth_GBps = 0;
    double power_limit_W = 0;
};
GpuFigures parse_gpu_figures(const std::string& gpu_type);

// A node's network as an interconnect description states it: NICs per node and one NIC's
// one-direction bandwidth. Rates are in bits per second (Gb/s, Gbps, 400G, 100GbE, Tb/s). Read, in
// this order:
//   "8 x 200 Gb/s", "4×100Gbps", "8x400G"  count and rate of the NICs;
//   "200 Gb/s ... (8 HCAs/node)"           a rate and a count of HCAs, NICs, adapters or rails;
//   "1600 Gbps node-node", "400 Gbps EFA",  one figure for the whole node (node-node, per node, total,
//   "3.2 Tbps per node", "3.2 Tb/s"        aggregate, EFA, or a rate above any port's 800 Gb/s),
//                                           spread over `default_nics` NICs;
//   "HDR InfiniBand", "NDR", "EDR", "Omni-Path"   the technology's port rate (200, 400, 100, 100 Gb/s)
//                                           with the count stated, else `default_nics`;
//   "RoCE 200 Gbps", "100GbE"              a rate alone: a port's, as a technology's is.
// Besides, "2:1 oversubscribed" (or "1:2 blocking", "3:1 taper"; "non-blocking" is 1) sets the
// fabric's oversubscription. Zero fields are not stated (nics_per_node 0: the preset's NICs
// stand); nullopt when the text states none of these.
struct NodeNetwork {
    int nics_per_node = 0;
    double nic_bandwidth_GBps = 0;
    double oversubscription = 0;
};
std::optional<NodeNetwork> parse_interconnect(const std::string& text, int default_nics);

// The largest d <= limit that divides n (1 at least): the GPUs a run took of each node when its
// count does not fill whole nodes.
int largest_divisor_within(long long n, int limit);

// The preset for gpu_type with the figures it states (parse_gpu_figures), the row's
// gpus_per_node (when positive; else, where num_gpus does not fill whole nodes, the largest node
// share that divides it, also written to *inferred_gpus_per_node when given) and interconnect,
// resized to num_gpus. InputError naming `where`.gpu_type when no preset matches.
ClusterSpec published_cluster(const std::string& gpu_type, const std::string& interconnect, int gpus_per_node,
                              long long num_gpus, const std::string& origin, const std::string& where,
                              int* inferred_gpus_per_node = nullptr);

}  // namespace tessel
