#include "simulator/hardware_efficiency.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.h"
#include "core/units.h"

namespace tessel {

double power_clock_fraction(const GpuSpec& gpu) {
    if (gpu.power_limit_W <= 0 || gpu.tdp_W <= 0 || gpu.power_limit_W >= gpu.tdp_W) return 1.0;
    return std::cbrt(gpu.power_limit_W / gpu.tdp_W);
}

HardwareEfficiency hardware_efficiency(const ClusterSpec& c) {
    HardwareEfficiency e;
    if (c.gpu.matmul_efficiency > 0) e.gemm_max_efficiency = c.gpu.matmul_efficiency;
    if (c.gpu.sm_count > 0) e.sm_count = c.gpu.sm_count;
    if (c.gpu.flash_forward_efficiency > 0) e.attention_forward_efficiency = c.gpu.flash_forward_efficiency;
    if (c.gpu.flash_backward_efficiency > 0) e.attention_backward_efficiency = c.gpu.flash_backward_efficiency;
    if (c.gpu.flash1_efficiency > 0) e.attention_v1_efficiency = c.gpu.flash1_efficiency;
    if (c.gpu.cudnn_forward_efficiency > 0) e.attention_cudnn_forward_efficiency = c.gpu.cudnn_forward_efficiency;
    if (c.gpu.cudnn_backward_efficiency > 0) e.attention_cudnn_backward_efficiency = c.gpu.cudnn_backward_efficiency;
    if (!c.profile) return e;
    // Messages name the file the profile came from (a calibrated cluster file, --profile).
    const std::string& file = c.profile_origin.empty() ? c.name : c.profile_origin;
    ObjectReader r(*c.profile, file, "profile");
    e.gemm_max_efficiency = r.number("gemm_max_efficiency", e.gemm_max_efficiency, 0.0, 1.0);
    e.gemm_k_overhead = r.number("gemm_k_overhead", e.gemm_k_overhead, 0.0, 1e6, false);
    e.attention_forward_efficiency = r.number("attention_forward_efficiency", e.attention_forward_efficiency, 0.0, 1.0);
    e.attention_backward_efficiency = r.number("attention_backward_efficiency", e.attention_backward_efficiency, 0.0, 1.0);
    e.attention_v1_efficiency = r.number("attention_v1_efficiency", e.attention_v1_efficiency, 0.0, 1.0);
    e.attention_v1_scale = r.number("attention_v1_scale", e.attention_v1_scale, 0.0, 10.0);
    e.attention_cudnn_forward_efficiency =
        r.number("attention_cudnn_forward_efficiency", e.attention_cudnn_forward_efficiency, 0.0, 1.0, false);
    e.attention_cudnn_backward_efficiency =
        r.number("attention_cudnn_backward_efficiency", e.attention_cudnn_backward_efficiency, 0.0, 1.0, false);
    e.memory_bandwidth_efficiency = r.number("memory_bandwidth_efficiency", e.memory_bandwidth_efficiency, 0.0, 100.0);
    e.kernel_launch_s = r.number("kernel_launch_us", e.kernel_launch_s / units::us, 0.0, 1e6, false) * units::us;
    e.sm_count = int(r.integer("sm_count", e.sm_count, 1, 1 << 16));
    e.sustained_clock_fraction = r.number("sustained_clock_fraction", e.sustained_clock_fraction, 0.0, 1.0);
    if (auto col = r.optional_object("collective")) {
        e.intra_node_bandwidth_efficiency =
            col->number("intra_node_bandwidth_efficiency", e.intra_node_bandwidth_efficiency, 0.0, 1.0);
        e.inter_node_bandwidth_efficiency =
            col->number("inter_node_bandwidth_efficiency", e.inter_node_bandwidth_efficiency, 0.0, 1.0);
        e.collective_latency_s = col->number("latency_us", e.collective_latency_s / units::us, 0.0, 1e6, false) * units::us;
        e.sm_interference = col->number("sm_interference", e.sm_interference, 0.0, 1.0, false);
        col->ignore({"measured", "source"});
        col->finish();
    }
    e.runtime_reserved_bytes =
        r.number("runtime_reserved_GiB", e.runtime_reserved_bytes / units::GiB, 0.0, 1e6, false) * units::GiB;
    if (r.has("gemm_table")) {
        const json& t = r.raw("gemm_table");
        if (!t.is_array()) throw input_error(file, "profile.gemm_table", "an array of {m, n, k, efficiency}", describe_json_value(t));
        for (std::size_t i = 0; i < t.size(); ++i) {
            ObjectReader p(t[i], file, "profile.gemm_table[" + std::to_string(i) + "]");
            e.gemm_table.push_back({p.number("m"), p.number("n"), p.number("k"), p.number("efficiency", std::nullopt, 0.0, 1.0)});
            p.finish();
        }
    }
    if (r.has("attention_table")) {
        const json& t = r.raw("attention_table");
        if (!t.is_array())
            throw input_error(file, "profile.attention_table", "an array of {seq, head_dim, forward_efficiency, backward_efficiency}",
                              describe_json_value(t));
        for (std::size_t i = 0; i < t.size(); ++i) {
            ObjectReader p(t[i], file, "profile.attention_table[" + std::to_string(i) + "]");
            e.attention_table.push_back({p.number("seq"), p.number("head_dim"),
                                         p.number("forward_efficiency", std::nullopt, 0.0, 1.0),
                                         p.number("backward_efficiency", std::nullopt, 0.0, 1.0)});
            p.finish();
        }
    }
    if (r.has("streaming_table")) {
        const json& t = r.raw("streaming_table");
        if (!t.is_array())
            throw input_error(file, "profile.streaming_table", "an array of {kernel, efficiency}", describe_json_value(t));
        for (std::size_t i = 0; i < t.size(); ++i) {
            ObjectReader p(t[i], file, "profile.streaming_table[" + std::to_string(i) + "]");
            e.streaming_table.push_back({p.string("kernel"), p.number("efficiency", std::nullopt, 1e-6, 100.0)});
            p.finish();
        }
    }
    if (r.has("collective_table")) {
        const json& t = r.raw("collective_table");
        if (!t.is_array())
            throw input_error(file, "profile.collective_table", "an array of {collective, bytes, busbw_GBps}",
                              describe_json_value(t));
        auto table = std::make_shared<CollectiveTable>();
        for (std::size_t i = 0; i < t.size(); ++i) {
            ObjectReader p(t[i], file, "profile.collective_table[" + std::to_string(i) + "]");
            const std::string name = p.choice("collective", {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"});
            Collective op = Collective::all_reduce;
            for (Collective k : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                                 Collective::all_to_all, Collective::send_recv})
                if (name == to_string(k)) op = k;
            table->push_back({op, p.number("bytes"), p.number("busbw_GBps") * units::GB});
            p.finish();
        }
        e.collective_table = std::move(table);
    }
    // calibrate may store its raw measurements next to the fitted values.
    r.ignore({"measured", "source", "device", "date", "kernels", "collectives"});
    r.finish();
    return e;
}

namespace {
// Inverse-distance weights over log2 sizes (see the header); `distance2(i)` is the squared
// distance to point i, `log_eff(i)` its log efficiency.
template <typename D, typename L>
double interpolate(std::size_t n, D distance2, L log_eff) {
    double weights = 0, sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double d2 = distance2(i);
        if (d2 < 1e-12) return std::exp(log_eff(i));
        const double w = 1.0 / (d2 * d2);
        weights += w;
        sum += w * log_eff(i);
    }
    return weights > 0 ? std::exp(sum / weights) : 1.0;
}
double log2_ratio(double a, double b) { return std::log2(std::max(a, 1.0) / std::max(b, 1.0)); }
}  // namespace

double table_gemm_efficiency(const std::vector<GemmEfficiencyPoint>& t, double m, double n, double k) {
    return interpolate(
        t.size(),
        [&](std::size_t i) {
            const double a = log2_ratio(m, t[i].m), b = log2_ratio(n, t[i].n), c = log2_ratio(k, t[i].k);
            return a * a + b * b + c * c;
        },
        [&](std::size_t i) { return std::log(std::max(t[i].efficiency, 1e-6)); });
}

double table_attention_efficiency(const std::vector<AttentionEfficiencyPoint>& t, double seq, double head_dim,
                                  bool forward) {
    return interpolate(
        t.size(),
        [&](std::size_t i) {
            const double a = log2_ratio(seq, t[i].seq), b = log2_ratio(head_dim, t[i].head_dim);
            return a * a + b * b;
        },
        [&](std::size_t i) {
            return std::log(std::max(forward ? t[i].forward_efficiency : t[i].backward_efficiency, 1e-6));
        });
}

double table_bus_bandwidth(const CollectiveTable& t, Collective c, double bytes) {
    // The measured sizes of this collective, in order.
    std::vector<std::pair<double, double>> points;  // (log2 S, log busbw)
    for (const auto& p : t)
        if (p.collective == c && p.bytes > 0 && p.bus_bandwidth_Bps > 0)
            points.push_back({std::log2(p.bytes), std::log(p.bus_bandwidth_Bps)});
    if (points.empty()) return 0;
    std::sort(points.begin(), points.end());
    const double x = std::log2(std::max(bytes, 1.0));
    if (x <= points.front().first) return std::exp(points.front().second);
    if (x >= points.back().first) return std::exp(points.back().second);
    for (std::size_t i = 1; i < points.size(); ++i)
        if (x <= points[i].first) {
            const auto& [x0, y0] = points[i - 1];
            const auto& [x1, y1] = points[i];
            const double w = x1 > x0 ? (x - x0) / (x1 - x0) : 0.0;
            return std::exp(y0 + w * (y1 - y0));
        }
    return std::exp(points.back().second);
}

json to_profile_json(const HardwareEfficiency& e) {
    json gemm = json::array(), attention = json::array();
    for (const auto& p : e.gemm_table) gemm.push_back({{"m", p.m}, {"n", p.n}, {"k", p.k}, {"efficiency", p.efficiency}});
    for (const auto& p : e.attention_table)
        attention.push_back({{"seq", p.seq}, {"head_dim", p.head_dim}, {"forward_efficiency", p.forward_efficiency},
                             {"backward_efficiency", p.backward_efficiency}});
    json j{{"gemm_max_efficiency", e.gemm_max_efficiency},
                {"gemm_k_overhead", e.gemm_k_overhead},
                {"attention_forward_efficiency", e.attention_forward_efficiency},
                {"attention_backward_efficiency", e.attention_backward_efficiency},
                {"attention_v1_efficiency", e.attention_v1_efficiency},
                {"attention_v1_scale", e.attention_v1_scale},
                {"memory_bandwidth_efficiency", e.memory_bandwidth_efficiency},
                {"kernel_launch_us", e.kernel_launch_s / units::us},
                {"sm_count", e.sm_count},
                {"sustained_clock_fraction", e.sustained_clock_fraction},
                {"collective",
                 {{"intra_node_bandwidth_efficiency", e.intra_node_bandwidth_efficiency},
                  {"inter_node_bandwidth_efficiency", e.inter_node_bandwidth_efficiency},
                  {"latency_us", e.collective_latency_s / units::us},
                  {"sm_interference", e.sm_interference}}},
                {"runtime_reserved_GiB", e.runtime_reserved_bytes / units::GiB}};
    if (e.attention_cudnn_forward_efficiency > 0)
        j["attention_cudnn_forward_efficiency"] = e.attention_cudnn_forward_efficiency;
    if (e.attention_cudnn_backward_efficiency > 0)
        j["attention_cudnn_backward_efficiency"] = e.attention_cudnn_backward_efficiency;
    if (!gemm.empty()) j["gemm_table"] = gemm;
    if (!attention.empty()) j["attention_table"] = attention;
    if (!e.streaming_table.empty()) {
        json streaming = json::array();
        for (const auto& [kernel, efficiency] : e.streaming_table)
            streaming.push_back({{"kernel", kernel}, {"efficiency", efficiency}});
        j["streaming_table"] = streaming;
    }
    if (e.collective_table) {
        json collectives = json::array();
        for (const auto& p : *e.collective_table)
            collectives.push_back({{"collective", to_string(p.collective)}, {"bytes", p.bytes},
                                   {"busbw_GBps", p.bus_bandwidth_Bps / units::GB}});
        j["collective_table"] = collectives;
    }
    return j;
}

}  // namespace tessel
