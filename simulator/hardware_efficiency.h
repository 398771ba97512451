// The physical efficiencies behind every cost model: each a named quantity with a unit and the
// reason for its default. A cluster's `profile` object (written by `tessel calibrate`) overrides
// any of them by the same key; keys it does not name keep these defaults:
//
//   "profile": {
//     "gemm_max_efficiency": 0.80,            fraction of the dense peak a large square GEMM reaches
//     "gemm_k_overhead": 96,                  elements of K whose time each output tile adds (prologue/epilogue)
//     "attention_forward_efficiency": 0.62,   FlashAttention-2-class forward, fraction of the dense peak
//     "attention_backward_efficiency": 0.50,  the same, backward (its 2.5x forward FLOPs)
//     "attention_v1_efficiency": 0.27,        FlashAttention v1's benchmark, forward and backward
//     "attention_v1_scale": 1.3,              FlashAttention-1-class kernels in training / that benchmark
//     "attention_cudnn_forward_efficiency": 0.56,   cuDNN fused attention, forward (0: as FlashAttention-2)
//     "attention_cudnn_backward_efficiency": 0.53,  the same, backward
//     "memory_bandwidth_efficiency": 0.60,    fraction of HBM bandwidth a training step's streaming kernels reach
//     "kernel_launch_us": 5,                  fixed cost of one kernel (launch, ramp-up, tail)
//     "sustained_clock_fraction": 0.92,       share of the single-GPU compute ceilings kept in a full training step
//     "sm_count": 132,                        streaming multiprocessors (wave quantization)
//     "collective": {
//       "intra_node_bandwidth_efficiency": 0.80,  NCCL bus bandwidth / link bandwidth inside a node
//       "inter_node_bandwidth_efficiency": 0.90,  NCCL bus bandwidth / NIC bandwidth across nodes
//       "latency_us": 10,                         fixed cost of one collective call (launch + sync)
//       "sm_interference": 0.10                   compute slowdown while an NCCL collective overlaps it
//     },
//     "runtime_reserved_GiB": 1.0,            memory the runtime holds before the model allocates
//     "gemm_table": [{"m": 256, "n": 128, "k": 128, "efficiency": 0.97}, ...],
//     "attention_table": [{"seq": 128, "head_dim": 32, "forward_efficiency": 0.7,
//                          "backward_efficiency": 0.9}, ...],
//     "collective_table": [{"collective": "all_reduce", "bytes": 131072, "busbw_GBps": 3.1}, ...],
//     "streaming_table": [{"kernel": "gelu_forward", "efficiency": 0.2}, ...]
//   }
//
// The tables are measured efficiencies (fractions of the peak) at the listed shapes, written by
// calibrate for machines whose kernels the shape models below do not describe — a CPU, where a
// GEMM's rate depends on whether its operands stay in cache and attention runs as blocked BLAS
// calls whose rate falls with the sequence. Present, a table replaces the shape model (tiles,
// waves, K ramp; the attention ramps): a shape's efficiency is interpolated between the measured
// ones (table_gemm_efficiency, table_attention_efficiency). The attention table is keyed by length
// and head dim alone and holds the rate with the GPU full; the wave fill of the batch x heads
// being costed multiplies it (calibrate divides each sample's own fill out). The collective table is nccl-tests'
// bus bandwidth per collective and message size S, measured between the ranks of one node: groups
// inside a node take their collective's time from it (bus factor x S / busbw, interpolated in
// log S), in place of the link's alpha-beta model, which holds only for algorithms that share
// one bandwidth (NCCL's rings), not for the different algorithms an MPI library picks. The
// streaming table is the fraction of the memory bandwidth each named bandwidth-bound kernel
// reaches in the cost model's bytes (layernorm_forward, gelu_backward, residual_add, adamw, ...):
// on a CPU, GeLU's tanh and a norm's reductions are bound by arithmetic, not by the memory, so one
// efficiency for every such kernel misprices them; kernels it does not name keep
// memory_bandwidth_efficiency.
//
// Defaults without a profile come from the GPU spec (gpu.matmul_efficiency, gpu.sm_count,
// gpu.flash_forward_efficiency, gpu.flash_backward_efficiency, gpu.flash1_efficiency,
// gpu.cudnn_forward_efficiency, gpu.cudnn_backward_efficiency) and the
// constants below. The attention efficiencies are long-sequence limits for causal attention at
// head dim 128; compute_cost.cpp ramps them down for short sequences and small head dims.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster_spec.h"
#include "simulator/collectives.h"

namespace tessel {

struct GemmEfficiencyPoint {
    double m = 0, n = 0, k = 0;
    double efficiency = 0;
};
struct AttentionEfficiencyPoint {
    double seq = 0, head_dim = 0;
    double forward_efficiency = 0, backward_efficiency = 0;
};
struct CollectiveBandwidthPoint {
    Collective collective = Collective::all_reduce;
    double bytes = 0;           // S, as nccl-tests counts it
    double bus_bandwidth_Bps = 0;
};
using CollectiveTable = std::vector<CollectiveBandwidthPoint>;

struct HardwareEfficiency {
    // Fraction of the dense tensor-core peak a large, well-shaped GEMM reaches (cuBLAS). The GPU
    // spec's measured matmul_efficiency wins over this default.
    double gemm_max_efficiency = 0.80;
    // Streaming multiprocessors, for wave quantization (A100: 108; H100 SXM: 132).
    int sm_count = 108;
    // Elements of K each output tile pays for beyond its main loop (pipeline fill and the
    // epilogue's store): a GEMM with reduction length K runs at K / (K + this) of its tile rate.
    double gemm_k_overhead = 96;
    // Flash-attention kernels reach less than a GEMM: softmax and rescaling run on the CUDA cores
    // between the two tensor-core products. FlashAttention-2 (Dao 2023, Fig. 4-6): forward up to
    // 73% of A100 peak for head dim 128, backward lower; expressed as a fraction of peak.
    double attention_forward_efficiency = 0.62;
    double attention_backward_efficiency = 0.50;
    // FlashAttention v1 reaches less than half of FlashAttention-2 (Dao 2023, Fig. 4: A100 causal
    // head dim 128, 83 against 189 TFLOP/s at 16k tokens); one figure for both passes, the paper
    // plots only their sum. The GPU spec's flash1_efficiency wins over this default.
    double attention_v1_efficiency = 0.27;
    // Speed of the FlashAttention-1-class kernels the published runs used (the Triton
    // FlashAttention of flash_attn_triton.py, which llm-foundry runs) relative to FlashAttention
    // v1's benchmark figure above. Its author documents it as close to v1 ("Triton forward is
    // generally faster than CUDA forward, ... backward generally slower"); no benchmark of it at
    // training shapes is published. FITTED on the published runs with sustained_clock_fraction
    // and memory_bandwidth_efficiency (compare/validate.cpp, fit_global_parameters).
    double attention_v1_scale = 1.3;
    // cuDNN's fused flash attention, the kernel Transformer Engine picks over FlashAttention-2 on
    // Hopper and newer ("FusedAttention preference on Hopper+ for performance reasons"): fraction
    // of the dense peak, forward and backward. 0: the FlashAttention-2 figures above (no faster
    // cuDNN kernel known for this GPU). The GPU spec's cudnn_*_efficiency win over these.
    double attention_cudnn_forward_efficiency = 0;
    double attention_cudnn_backward_efficiency = 0;
    // Time of a fused attention kernel with attention dropout against the same kernel without:
    // the kernel draws a random number per score element on the CUDA cores beside the tensor-core
    // products. Measured with PyTorch SDPA on an H200 (reports/gpu/h200/attention-dropout.txt;
    // head dim 128, causal, dropout 0.1, 2k-8k tokens): FlashAttention-2 1.17-1.27 forward and
    // 1.10-1.11 backward; cuDNN 1.97-2.21 and 1.23-1.25, which undoes most of its forward lead.
    // Kernel properties, not fitted to training runs. The FlashAttention-1-class Triton kernel has
    // no dropout.
    double flash_dropout_forward_slowdown = 1.21;
    double flash_dropout_backward_slowdown = 1.10;
    double cudnn_dropout_forward_slowdown = 2.05;
    double cudnn_dropout_backward_slowdown = 1.24;
    // Fraction of the single-GPU measured ceilings (matmul_efficiency, flash_*_efficiency) that
    // compute-bound kernels keep through a real training step on a fully loaded node: power and
    // thermal limits lower the clock below what a lone benchmark holds, and neighbouring kernels
    // share L2 and HBM. FITTED jointly with memory_bandwidth_efficiency and attention_v1_scale:
    // the values that minimise the mean absolute error over the published runs of
    // configs/validation (compare/validate.cpp, fit_global_parameters; reports/validation.md
    // gives the error of each fold held out).
    double sustained_clock_fraction = 0.92;
    // Fraction of HBM bandwidth the elementwise, normalization, softmax and optimizer kernels of a
    // training step reach. STREAM-like copies reach ~90% of A100/H100 HBM; framework kernels on
    // activation-sized tensors (reductions, strided layouts, several small launches) reach less.
    // FITTED with sustained_clock_fraction on the published runs. Above 1 where the step's
    // tensors stay in caches faster than the memory (a small model on a CPU).
    double memory_bandwidth_efficiency = 0.60;
    // Seconds of fixed cost per kernel: launch latency plus the ramp-up and drain of its grid
    // (~5 us from kernel to kernel in CUDA-graph-free PyTorch and Megatron traces).
    double kernel_launch_s = 5e-6;
    // NCCL bus bandwidth reached as a fraction of the link bandwidth: nccl-tests all-reduce on a
    // DGX A100 reaches ~230 of 300 GB/s over NVSwitch, and ~90% of line rate over InfiniBand.
    double intra_node_bandwidth_efficiency = 0.80;
    double inter_node_bandwidth_efficiency = 0.90;
    // Seconds of fixed cost per collective call (kernel launch and the first handshake).
    double collective_latency_s = 10e-6;
    // Fraction by which compute slows while a collective runs beside it: NCCL kernels occupy a
    // few of the SMs (up to 16-32 channels of 108-132) and share memory bandwidth.
    double sm_interference = 0.10;
    // Device memory the runtime holds before the model allocates anything: the CUDA context, NCCL
    // communicators and the cuBLAS workspace (about 1 GiB measured on DGX nodes with a few
    // communicators). A CPU process's allocator holds only the tensors it is asked for: 0.
    double runtime_reserved_bytes = 1.0 * 1024 * 1024 * 1024;
    // Measured efficiency tables (see the top of this file); empty: the shape models apply.
    std::vector<GemmEfficiencyPoint> gemm_table;
    std::vector<AttentionEfficiencyPoint> attention_table;
    std::shared_ptr<const CollectiveTable> collective_table;  // shared by the groups that use it
    std::vector<std::pair<std::string, double>> streaming_table;  // kernel name -> bandwidth efficiency
};

// Efficiency at a shape from a measured table: inverse-distance weights (1/d^4) over the distance
// d between log2 sizes, averaging log efficiencies, so a measured shape returns its own value and
// one between two measured sizes lies between them. Beyond the table it tends to the nearest.
double table_gemm_efficiency(const std::vector<GemmEfficiencyPoint>& table, double m, double n, double k);
double table_attention_efficiency(const std::vector<AttentionEfficiencyPoint>& table, double seq, double head_dim,
                                  bool forward);
// Bus bandwidth (bytes/s) of collective c at S bytes: linear in log S between the measured sizes,
// the nearest size's beyond them; 0 when the table has no such collective.
double table_bus_bandwidth(const CollectiveTable& table, Collective c, double bytes);

// The defaults, then the GPU spec's physical keys, then the cluster's profile. InputError names
// the cluster file's profile key when a value is out of range.
HardwareEfficiency hardware_efficiency(const ClusterSpec& c);

// Share of its clock a GPU keeps under a power cap below its TDP: (cap / TDP)^(1/3), 1 without a
// cap. A training step's GEMMs already hold the TDP, so their clock is set by power; dynamic
// power goes as f V^2 and DVFS lowers the voltage with the frequency, so power ~ f^3. Check: an
// H100 NVL card (400 W; datasheet 835 dense bf16 TFLOP/s, same 132 SMs) against the 700 W SXM's
// 989: measured 0.84, this law 0.83. Scales the compute ceilings (GEMM, attention), not HBM.
double power_clock_fraction(const GpuSpec& gpu);

// Writes the profile object that reproduces e (the format above).
json to_profile_json(const HardwareEfficiency& e);

}  // namespace tessel
