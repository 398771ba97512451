#include "core/cluster_spec.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/plan.h"

namespace tessel {

bool GpuSpec::has_own_peak(Precision p) const {
    auto it = peak_tflops.find(p);
    return it != peak_tflops.end() && it->second > 0;
}

Precision default_precision(const GpuSpec& gpu) {
    if (gpu.has_own_peak(Precision::bf16)) return Precision::bf16;
    if (gpu.has_own_peak(Precision::fp16)) return Precision::fp16;
    if (gpu.has_own_peak(Precision::fp32)) return Precision::fp32;
    return Precision::bf16;  // no usable peak at all: simulate() says which key is missing
}

double GpuSpec::peak(Precision p) const {
    auto it = peak_tflops.find(p);
    if (it != peak_tflops.end()) return it->second;
    // fp8 falls back to the bf16 peak on GPUs without fp8 tensor cores (A100).
    if (p == Precision::fp8) return peak(Precision::bf16);
    if (p == Precision::fp16) return peak(Precision::bf16);
    return 0;
}

int launch_gpus_per_host(const ClusterSpec& c, int world) {
    const int per_node = std::max(1, std::min(c.gpus_per_node, world));
    // A job's share of a node (--gpus-per-node, or fewer GPUs than a node) is whole hosts when it
    // can be; the gcd keeps the count a divisor of that share otherwise.
    return c.gpus_per_host > 0 ? std::gcd(c.gpus_per_host, per_node) : per_node;
}

ClusterSpec parse_cluster(const json& j, const std::string& file) {
    ObjectReader r(j, file);
    ClusterSpec c;
    c.name = r.string("name", std::string("unnamed"));
    c.num_nodes = int(r.integer("num_nodes", std::nullopt, 1, 1 << 20));
    c.gpus_per_node = int(r.integer("gpus_per_node", std::nullopt, 1, 1024));
    c.gpus_per_host = int(r.integer("gpus_per_host", 0, 0, 1024));
    // As many GPUs as a plan may span (plan.h): plan searches a cluster up to its size.
    if (std::int64_t(c.num_nodes) * c.gpus_per_node > kMaxPlanGpus)
        throw input_error(file, "num_nodes", fmt::format("at most {} GPUs in all (num_nodes x gpus_per_node)", kMaxPlanGpus),
                          fmt::format("{} x {}", c.num_nodes, c.gpus_per_node));
    if (c.gpus_per_host > 0 && c.gpus_per_node % c.gpus_per_host != 0)
        throw InputError(fmt::format("{}: key 'gpus_per_host': expected a divisor of gpus_per_node ({}), got {}", file,
                                     c.gpus_per_node, c.gpus_per_host));

    ObjectReader g = r.object("gpu");
    c.gpu.name = g.string("name", std::string("gpu"));
    // Upper bounds far above any device catch figures written in other units (bytes, FLOP/s).
    c.gpu.memory_GiB = g.number("memory_GiB", std::nullopt, 0.0, 1e5);
    c.gpu.memory_bandwidth_GBps = g.number("memory_bandwidth_GBps", std::nullopt, 0.0, 1e6);
    ObjectReader peaks = g.object("peak_tflops");
    for (auto p : {Precision::bf16, Precision::fp16, Precision::fp8, Precision::fp32})
        if (peaks.has(to_string(p))) c.gpu.peak_tflops[p] = peaks.number(to_string(p), std::nullopt, 0.0, 1e6);
    peaks.ignore({"tf32", "int8"});
    if (peaks.has("tf32")) peaks.number("tf32");
    peaks.finish();
    if (!c.gpu.peak_tflops.count(Precision::bf16) && !c.gpu.peak_tflops.count(Precision::fp32))
        throw input_error(file, "gpu.peak_tflops", "at least a \"bf16\" or \"fp32\" peak in TFLOP/s");
    c.gpu.sm_count = int(g.integer("sm_count", 0, 0, 1 << 16));
    c.gpu.matmul_efficiency = g.number("matmul_efficiency", 0.0, 0.0, 1.0, false);
    c.gpu.fp8_matmul_efficiency = g.number("fp8_matmul_efficiency", 0.0, 0.0, 1.0, false);
    c.gpu.flash_forward_efficiency = g.number("flash_forward_efficiency", 0.0, 0.0, 1.0, false);
    c.gpu.flash_backward_efficiency = g.number("flash_backward_efficiency", 0.0, 0.0, 1.0, false);
    c.gpu.flash1_efficiency = g.number("flash1_efficiency", 0.0, 0.0, 1.0, false);
    c.gpu.cudnn_forward_efficiency = g.number("cudnn_forward_efficiency", 0.0, 0.0, 1.0, false);
    c.gpu.cudnn_backward_efficiency = g.number("cudnn_backward_efficiency", 0.0, 0.0, 1.0, false);
    c.gpu.tdp_W = g.number("tdp_W", 0.0, 0.0, 1e5, false);
    c.gpu.power_limit_W = g.number("power_limit_W", 0.0, 0.0, 1e5, false);
    c.gpu.host_bandwidth_GBps = g.number("host_bandwidth_GBps", 0.0, 0.0, 1e6, false);
    c.gpu.flash_attention = g.boolean("flash_attention", true);
    if (c.gpu.power_limit_W > 0 && c.gpu.tdp_W <= 0)
        throw input_error(file, "gpu.tdp_W", "the board power the peaks were measured at, to scale them to gpu.power_limit_W",
                          "no tdp_W");
    g.finish();

    if (auto in = r.optional_object("intra_node")) {
        c.intra_node.kind = in->choice("kind", {"nvlink", "nvswitch", "pcie", "none", "shared-memory"}, std::string("nvlink"));
        // No upper bound on the links: a network made free (1e12 GB/s) is how the hand derivations
        // of the schedule take communication out.
        c.intra_node.bandwidth_GBps = in->number("bandwidth_GBps", c.gpus_per_node == 1 ? std::optional<double>(1.0) : std::nullopt);
        c.intra_node.latency_us = in->number("latency_us", 3.0, 0.0, 1e6, false);
        in->finish();
        if (c.intra_node.kind == "none" && c.gpus_per_node > 1)
            throw input_error(file, "intra_node.kind", "a link between the GPUs of a node of several GPUs", "\"none\"");
    } else if (c.gpus_per_node > 1) {
        throw input_error(file, "intra_node", "an object with bandwidth_GBps for a node of several GPUs");
    }
    if (auto out = r.optional_object("inter_node")) {
        c.inter_node.kind = out->choice("kind", {"infiniband", "roce", "ethernet", "none"}, std::string("infiniband"));
        c.inter_node.nics_per_node = int(out->integer("nics_per_node", 1, 1, 1024));
        // One node needs no network: without a figure it has none, and resizing it to several nodes is refused.
        c.inter_node.nic_bandwidth_GBps = out->number("nic_bandwidth_GBps", c.num_nodes == 1 ? std::optional<double>(0.0) : std::nullopt);
        c.inter_node.latency_us = out->number("latency_us", 5.0, 0.0, 1e6, false);
        c.inter_node.oversubscription = out->number("oversubscription", 1.0, 1.0, 1e6, false);
        out->finish();
        if (c.inter_node.kind == "none" && c.num_nodes > 1)
            throw input_error(file, "inter_node.kind", "a network between the nodes of a cluster of several nodes", "\"none\"");
    } else if (c.num_nodes > 1) {
        throw input_error(file, "inter_node", "an object with nics_per_node and nic_bandwidth_GBps for several nodes");
    }
    c.price_per_gpu_hour = r.number("price_per_gpu_hour", 0.0, 0.0, 1e9, false);
    if (r.has("profile")) {
        const json& p = r.raw("profile");
        if (!p.is_object()) throw input_error(file, "profile", "a JSON object written by `tessel calibrate`", describe_json_value(p));
        c.profile = p;
        c.profile_origin = file;
    }
    r.ignore({"source", "notes", "description"});
    r.finish();
    return c;
}

json to_json(const ClusterSpec& c) {
    json peaks = json::object();
    for (auto& [p, v] : c.gpu.peak_tflops) peaks[to_string(p)] = v;
    json j = {{"name", c.name},
              {"num_nodes", c.num_nodes},
              {"gpus_per_node", c.gpus_per_node},
              {"gpu",
               {{"name", c.gpu.name},
                {"memory_GiB", c.gpu.memory_GiB},
                {"memory_bandwidth_GBps", c.gpu.memory_bandwidth_GBps},
                {"peak_tflops", peaks}}},
              {"intra_node",
               {{"kind", c.intra_node.kind},
                {"bandwidth_GBps", c.intra_node.bandwidth_GBps},
                {"latency_us", c.intra_node.latency_us}}},
              {"inter_node",
               {{"kind", c.inter_node.kind},
                {"nics_per_node", c.inter_node.nics_per_node},
                {"nic_bandwidth_GBps", c.inter_node.nic_bandwidth_GBps},
                {"latency_us", c.inter_node.latency_us},
                {"oversubscription", c.inter_node.oversubscription}}},
              {"price_per_gpu_hour", c.price_per_gpu_hour}};
    if (c.gpus_per_host > 0) j["gpus_per_host"] = c.gpus_per_host;
    if (c.gpu.sm_count > 0) j["gpu"]["sm_count"] = c.gpu.sm_count;
    if (!c.gpu.flash_attention) j["gpu"]["flash_attention"] = false;
    if (c.gpu.matmul_efficiency > 0) j["gpu"]["matmul_efficiency"] = c.gpu.matmul_efficiency;
    if (c.gpu.fp8_matmul_efficiency > 0) j["gpu"]["fp8_matmul_efficiency"] = c.gpu.fp8_matmul_efficiency;
    if (c.gpu.flash_forward_efficiency > 0) j["gpu"]["flash_forward_efficiency"] = c.gpu.flash_forward_efficiency;
    if (c.gpu.flash_backward_efficiency > 0) j["gpu"]["flash_backward_efficiency"] = c.gpu.flash_backward_efficiency;
    if (c.gpu.flash1_efficiency > 0) j["gpu"]["flash1_efficiency"] = c.gpu.flash1_efficiency;
    if (c.gpu.cudnn_forward_efficiency > 0) j["gpu"]["cudnn_forward_efficiency"] = c.gpu.cudnn_forward_efficiency;
    if (c.gpu.cudnn_backward_efficiency > 0) j["gpu"]["cudnn_backward_efficiency"] = c.gpu.cudnn_backward_efficiency;
    if (c.gpu.tdp_W > 0) j["gpu"]["tdp_W"] = c.gpu.tdp_W;
    if (c.gpu.power_limit_W > 0) j["gpu"]["power_limit_W"] = c.gpu.power_limit_W;
    if (c.gpu.host_bandwidth_GBps > 0) j["gpu"]["host_bandwidth_GBps"] = c.gpu.host_bandwidth_GBps;
    if (c.profile) j["profile"] = *c.profile;
    return j;
}

ClusterSpec resize_cluster(const ClusterSpec& c, long long n, const std::string& flag) {
    if (n < 1 || n > (1LL << 24))
        throw input_error(flag, "", "a GPU count between 1 and 16777216", std::to_string(n));
    ClusterSpec r = c;
    if (n < c.gpus_per_node) {
        r.num_nodes = 1;
        r.gpus_per_node = int(n);
    } else {
        if (n % c.gpus_per_node != 0)
            throw input_error(flag, "",
                              fmt::format("a multiple of the {} GPUs per node of cluster '{}' (--gpus-per-node takes "
                                          "fewer of each node)",
                                          c.gpus_per_node, c.name),
                              std::to_string(n));
        r.num_nodes = int(n / c.gpus_per_node);
    }
    if (r.num_nodes > 1 && (r.inter_node.nic_bandwidth_GBps <= 0 || r.inter_node.kind == "none"))
        throw input_error(flag, "",
                          fmt::format("at most the {} GPUs of one node: cluster '{}' has no network between nodes "
                                      "(inter_node kind \"none\" or no NIC bandwidth; a calibrated cluster is one node "
                                      "of the ranks calibrate ran with: calibrate under mpirun -np {} for more)",
                                      c.gpus_per_node, c.name, n),
                          std::to_string(n));
    return r;
}

ClusterSpec with_gpus_per_node(const ClusterSpec& c, int n, const std::string& what) {
    if (n < 1) throw input_error(what, "", "a positive number of GPUs per node", std::to_string(n));
    ClusterSpec r = c;
    if (c.inter_node.nics_per_node == c.gpus_per_node) r.inter_node.nics_per_node = n;
    r.gpus_per_node = n;
    return r;
}

}  // namespace tessel
