// From calibrate's measurements to the simulator's `profile` keys (simulator/hardware_efficiency.h)
// and the cluster's gpu and link keys. Each value is fitted so that the simulator's cost model,
// evaluated at the measured shapes, reproduces the measured times:
//   - gpu.peak_tflops.fp32: the best GEMM rate measured (the ceiling every efficiency is a
//     fraction of): the fastest square sample or a layer shape's median, whichever is higher;
//   - gemm_table, attention_table: each measured shape's efficiency, which the simulator
//     interpolates in place of its GPU shape models;
//   - gemm_max_efficiency, gemm_k_overhead: the simulator's GEMM time
//       flops / (peak x max_eff x k / (k + k_overhead)) + kernel_launch
//     least squares in log time over the layer-shaped GEMMs (whose m and n are multiples of 256
//     and 128, so the simulator's tile padding does not enter);
//   - gpu.memory_bandwidth_GBps: streaming copy/add over arrays far beyond the caches;
//     memory_bandwidth_efficiency: the bandwidth the layer's streaming kernels reach, counted in
//     the simulator's bytes, over that: total bytes / total time, so that the kernels of a layer
//     take the measured time in sum; streaming_table: each kernel's own (the geometric mean over
//     its shapes), which the simulator uses for the kernels it names;
//   - attention_{forward,backward}_efficiency: the simulator's efficiencies are long-sequence
//     limits that compute_cost.cpp ramps down for short sequences and small head dims; each
//     measured efficiency is divided by that ramp and the geometric mean is kept;
//   - kernel_launch_us: a 16-element add;
//   - the link: all collectives' times fitted jointly to the simulator's alpha-beta model
//     (comm_cost.cpp: factor x S / bw + hops x hop_latency + call_latency), so intra_node.bandwidth_GBps
//     is the bus bandwidth the collectives reach (intra_node_bandwidth_efficiency 1); and the
//     measured bus bandwidths themselves (collective_table), which the simulator prefers inside a
//     node, since an MPI library's collectives do not share one bandwidth.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "executor/calibrate_collectives.h"
#include "executor/calibrate_kernels.h"

namespace tessel {

// Rows of the profile's measured tables (simulator/hardware_efficiency.h: gemm_table and
// attention_table), efficiencies as fractions of the peak.
struct GemmTableRow {
    int m = 0, n = 0, k = 0;
    double efficiency = 0;
};
struct AttentionTableRow {
    int seq = 0, head_dim = 0;
    double forward_efficiency = 0, backward_efficiency = 0;
};

struct FittedProfile {
    double peak_flops = 0;              // FLOP/s
    std::string peak_source;            // which measurement set it: the square GEMM's best sample or a shape's
    double memory_bandwidth_Bps = 0;
    double gemm_max_efficiency = 1, gemm_k_overhead = 0;
    double attention_forward_efficiency = 0, attention_backward_efficiency = 0;  // at most 1 (of peak)
    // The fit before that cap: above 1 the measured attention outruns peak x the simulator's ramp,
    // and attention_error measures the capped model, which the simulator does not use where
    // attention_table is written (calibrate's report says so).
    double attention_forward_fit = 0, attention_backward_fit = 0;
    double memory_bandwidth_efficiency = 1;
    double kernel_launch_s = 0;
    int sm_count = 1;
    // Measured in a loaded step directly, so nothing is left to derate.
    double sustained_clock_fraction = 1.0;

    // Every measured shape's own efficiency: on a CPU the shape models above do not hold (a GEMM
    // slows once its operands leave the cache; blocked attention slows as the sequence grows), so
    // the simulator interpolates these instead.
    std::vector<GemmTableRow> gemm_table;
    std::vector<AttentionTableRow> attention_table;
    std::vector<std::pair<std::string, double>> streaming_table;  // kernel name -> bandwidth efficiency

    bool has_link = false;                // collectives were measured (two ranks or more)
    double link_bandwidth_Bps = 0;        // bus bandwidth the collectives reach
    double hop_latency_s = 0;             // one step between neighbours
    double collective_latency_s = 0;      // fixed cost of one call
    double link_share = 1;                // what the link figures were scaled by (the cpu share)

    // How well each fit reproduces its own measurements: the geometric mean of
    // max(predicted, measured) / min(predicted, measured) - 1 over the samples.
    double gemm_error = 0, streaming_error = 0, attention_error = 0, collective_error = 0;
};

// sm_count: the parallel units one rank's kernels spread over (BLAS threads on the CPU, SMs on a GPU).
FittedProfile fit_profile(const KernelMeasurements& k, const std::vector<CollectiveSample>& c, int sm_count);

// The simulator's ramp of a fused causal attention kernel below its long-sequence efficiency, at
// one shape: head-dim ramp x wave fill x sequence ramp (compute_cost.cpp,
// ComputeModel::attention_efficiency, FlashAttention-2 class). Mirrored here because calibrate
// may not call the simulator; tests/executor/test_calibrate_fit.cpp checks both agree.
double simulator_attention_ramp(double batch_heads, double seq, double head_dim, int sm_count);
// Its wave fill alone: the share of the SMs' time a grid of batch_heads x ceil(seq / 128) query
// blocks keeps busy. The attention table holds efficiencies with the GPU full (each measured one
// divided by its fill); the simulator multiplies in the fill of the shape it costs.
double simulator_attention_wave_fill(double batch_heads, double seq, int sm_count);
// FLOPs the simulator counts for a causal fused attention forward (blocks on and below the diagonal).
double simulator_attention_forward_flops(double batch_heads, double seq, double head_dim);

}  // namespace tessel
