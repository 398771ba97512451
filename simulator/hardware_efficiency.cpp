#include "simulator/hardware_efficiency.h"

#include "core/units.h"

namespace tessel {

HardwareEfficiency hardware_efficiency(const ClusterSpec& c) {
    HardwareEfficiency e;
    if (c.gpu.matmul_efficiency > 0) e.gemm_max_efficiency = c.gpu.matmul_efficiency;
    if (c.gpu.sm_count > 0) e.sm_count = c.gpu.sm_count;
    if (c.gpu.flash_forward_efficiency > 0) e.attention_forward_efficiency = c.gpu.flash_forward_efficiency;
    if (c.gpu.flash_backward_efficiency > 0) e.attention_backward_efficiency = c.gpu.flash_backward_efficiency;
    if (c.gpu.flash1_efficiency > 0) e.attention_v1_efficiency = c.gpu.flash1_efficiency;
    if (!c.profile) return e;
    ObjectReader r(*c.profile, c.name, "profile");
    e.gemm_max_efficiency = r.number("gemm_max_efficiency", e.gemm_max_efficiency, 0.0, 1.0);
    e.gemm_k_overhead = r.number("gemm_k_overhead", e.gemm_k_overhead, 0.0, 1e6, false);
    e.attention_forward_efficiency = r.number("attention_forward_efficiency", e.attention_forward_efficiency, 0.0, 1.0);
    e.attention_backward_efficiency = r.number("attention_backward_efficiency", e.attention_backward_efficiency, 0.0, 1.0);
    e.attention_v1_efficiency = r.number("attention_v1_efficiency", e.attention_v1_efficiency, 0.0, 1.0);
    e.attention_v1_scale = r.number("attention_v1_scale", e.attention_v1_scale, 0.0, 10.0);
    e.memory_bandwidth_efficiency = r.number("memory_bandwidth_efficiency", e.memory_bandwidth_efficiency, 0.0, 1.0);
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
    // calibrate may store its raw measurements next to the fitted values.
    r.ignore({"measured", "source", "device", "date", "kernels", "collectives"});
    r.finish();
    return e;
}

json to_profile_json(const HardwareEfficiency& e) {
    return json{{"gemm_max_efficiency", e.gemm_max_efficiency},
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
                  {"sm_interference", e.sm_interference}}}};
}

}  // namespace tessel
