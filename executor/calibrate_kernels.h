// calibrate's compute microbenchmarks, through the Backend interface (so the same code measures
// the CPU and the CUDA backend): the GEMM peak, GEMMs at the shapes of a transformer layer,
// streaming memory bandwidth, the norm / activation / residual / optimizer / cross-entropy
// kernels, fused causal attention forward and backward, the fixed cost of one kernel, and real
// training steps of a small model with each kernel timed in the step and alone (calibrate_step.h).
//
// Each streaming kernel's bytes are counted as the simulator's cost model counts them for fp32
// training (simulator/layer_cost.cpp), so that bytes / seconds is directly the bandwidth the
// simulator needs to reproduce the kernel's time.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "executor/calibrate_step.h"
#include "executor/calibrate_timing.h"
#include "kernels/backend.h"

namespace tessel {

// What to measure; the default sweep takes a few minutes on one CPU core, `quick` seconds.
struct KernelSweep {
    std::vector<int> peak_sizes;  // square GEMMs; the best rate is the peak
    std::vector<int> hidden;      // hidden sizes h of the layer shapes (ffn 4h)
    std::vector<int> tokens;      // tokens T per microbatch
    // The step benchmark's models: (tokens per microbatch, hidden) in each layout.
    std::vector<std::pair<int, int>> step_shapes;
    std::vector<std::string> step_layouts;
    StepBenchmark step;
    std::vector<int> attention_seq, attention_head_dim;
    int attention_batch_heads = 8;
    std::size_t stream_bytes = 0;  // per array of the bandwidth test
    double share_seconds = 1.0;    // each of the two windows of measure_cpu_share
    TimingBudget timing;
    static KernelSweep standard();  // a CPU core's sizes
    static KernelSweep device();    // a GPU's: layer-sized GEMMs, arrays larger than its L2
    static KernelSweep quick();
    // What calibrate measures on a backend: the quick sweep, a CPU core's, or a GPU's.
    static KernelSweep for_backend(const std::string& backend, bool quick);
};

// C (m x n) = A (m x k) B (k x n), as nn.Linear runs it (forward, or the weight gradient).
struct GemmSample {
    std::string role;  // "qkv", "mlp_up", "mlp_down", "wgrad", "square"
    int m = 0, n = 0, k = 0;
    double seconds = 0;
    double flops() const { return 2.0 * m * n * k; }
};

// A bandwidth-bound kernel: bytes as the simulator counts them.
struct StreamingSample {
    std::string name;   // "layernorm_forward", "gelu_backward", "adamw", ...
    std::string shape;  // e.g. "T=256 h=128"
    double bytes = 0;
    double seconds = 0;
};

// Causal attention over batch_heads (T x T) problems of head size d.
struct AttentionSample {
    int batch_heads = 0, seq = 0, head_dim = 0;
    double forward_seconds = 0, backward_seconds = 0;
};

struct KernelMeasurements {
    double peak_flops = 0;  // FLOP/s, best square GEMM
    int peak_size = 0;
    std::vector<GemmSample> gemms;
    double stream_Bps = 0;  // bytes/s, best of copy and add over arrays far beyond the caches
    std::vector<StreamingSample> streaming;
    std::vector<AttentionSample> attention;
    double launch_s = 0;  // one tiny kernel
    std::vector<StepKernelSample> steps;  // a real step's kernels in place against alone
    double cpu_share = 1;  // measure_cpu_share, all ranks at once (1 where not measured)
};

// The share of a core this process holds while it computes without pause for `seconds` (CPU time
// over wall time, GEMMs through the backend): 1 on an idle machine, less where the ranks, or
// anything else, share the cores. Meaningful for the CPU backend only.
double measure_cpu_share(Backend& backend, double seconds);

// `progress(what)` is called before each measurement (for the progress line).
KernelMeasurements measure_kernels(Backend& backend, const KernelSweep& sweep,
                                   const std::function<void(const std::string&)>& progress);

// Number of measurements measure_kernels makes (for the progress count).
int kernel_measurement_count(const KernelSweep& sweep);

}  // namespace tessel
