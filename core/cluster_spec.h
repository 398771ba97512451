// ClusterSpec: the GPUs, how they are wired inside a node and across nodes, and the price.
// Bandwidths are one GPU's one-direction GB/s (DESIGN.md); latencies in microseconds.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "core/json_io.h"
#include "core/options.h"

namespace tessel {

struct GpuSpec {
    std::string name;
    double memory_GiB = 0;
    double memory_bandwidth_GBps = 0;
    std::map<Precision, double> peak_tflops;  // dense tensor-core peaks
    // Optional physical keys the simulator's cost models use (0 = unknown: the simulator's
    // defaults apply). sm_count: streaming multiprocessors, for wave quantization of GEMM tiles.
    // matmul_efficiency: the fraction of the bf16 peak a large, well-shaped GEMM reaches with
    // the vendor BLAS (a measured ceiling, e.g. Bekman's "maximum achievable matmul FLOPS").
    // flash_*_efficiency: fraction of the 16-bit peak a FlashAttention-2 kernel reaches (head dim
    // 128, causal, long sequences) forward and backward — it differs by GPU generation.
    // flash1_efficiency: the same for a FlashAttention-1-class kernel (FlashAttention v1, the
    // Triton FlashAttention), forward and backward together.
    // cudnn_*_efficiency: the same for cuDNN's fused flash attention (Transformer Engine's
    // FusedAttention, PyTorch SDPA's cuDNN backend), forward and backward, where it is faster than
    // FlashAttention-2 (Hopper); 0: it runs at the flash_*_efficiency figures.
    int sm_count = 0;
    double matmul_efficiency = 0;
    double flash_forward_efficiency = 0, flash_backward_efficiency = 0;
    double flash1_efficiency = 0;
    double cudnn_forward_efficiency = 0, cudnn_backward_efficiency = 0;
    // fp8_matmul_efficiency: the fraction of the fp8 peak a large fp8 GEMM reaches (a measured
    // ceiling like matmul_efficiency); 0: the same fraction as matmul_efficiency.
    double fp8_matmul_efficiency = 0;
    // tdp_W: the board power the peaks and measured ceilings above were taken at (the datasheet's
    // maximum). power_limit_W: the cap the GPUs actually ran under (nvidia-smi -pl); 0 = the TDP.
    double tdp_W = 0;
    double power_limit_W = 0;
    // host_bandwidth_GBps: one direction of the GPU's own link to host memory (PCIe, or NVLink-C2C
    // on a Grace superchip), for activations offloaded to the CPU; 0 = unknown.
    double host_bandwidth_GBps = 0;
    // flash_attention: a fused flash-style attention kernel runs on the GPU. FlashAttention (v1
    // and v2) and cuDNN's fused attention, which Transformer Engine and PyTorch's SDPA pick, need
    // compute capability 8.0 (Ampere) or newer; on Volta, Megatron-LM and DeepSpeed fall back to
    // the unfused softmax attention, which stores the s x s scores. false: plans and simulations
    // on it price unfused attention.
    bool flash_attention = true;
    double peak(Precision p) const;
    // Whether the GPU lists a positive peak of its own for `p` (peak() falls back to bf16's for fp8
    // and fp16 where it does not).
    bool has_own_peak(Precision p) const;
};

// The precision a plan on this GPU defaults to: bf16 where the GPU has a bf16 peak (A100 and
// later), else fp16 (V100), else fp32 — a calibrated CPU cluster has only an fp32 peak, and the
// CPU backend computes in fp32 whatever the plan says (DESIGN.md).
Precision default_precision(const GpuSpec& gpu);

struct IntraNodeLink {
    std::string kind = "nvlink";   // nvlink | pcie | none (a single GPU per node)
    double bandwidth_GBps = 0;     // per GPU, one direction
    double latency_us = 0;
};

struct InterNodeLink {
    std::string kind = "infiniband";  // infiniband | roce | ethernet
    int nics_per_node = 0;
    double nic_bandwidth_GBps = 0;    // per NIC, one direction
    double latency_us = 0;
    double oversubscription = 1.0;    // fabric taper: 2.0 halves what crosses the spine
};

struct ClusterSpec {
    std::string name;
    int num_nodes = 1;
    int gpus_per_node = 1;
    GpuSpec gpu;
    IntraNodeLink intra_node;
    InterNodeLink inter_node;
    double price_per_gpu_hour = 0;
    // GPUs one operating-system host holds where a node (an NVLink domain) spans several hosts: a
    // GB200 NVL72 rack is 18 compute trays of 4 GPUs. 0: a node is one host (DGX, HGX). Only the
    // launch scripts use it: torchrun's --nproc_per_node and --nnodes count hosts.
    int gpus_per_host = 0;
    std::optional<json> profile;  // measured efficiencies written by `calibrate`
    std::string profile_origin;   // the file the profile was read from, for messages about its keys

    int num_gpus() const { return num_nodes * gpus_per_node; }
};

// Processes a launch script starts on each host for a job of `world` GPUs: the node's GPUs, or a
// host's share of them (gpus_per_host), never more than the job.
int launch_gpus_per_host(const ClusterSpec& c, int world);

ClusterSpec parse_cluster(const json& j, const std::string& file);
json to_json(const ClusterSpec& c);
// Resizes to N GPUs: whole nodes when N >= gpus_per_node, else one node of N GPUs.
ClusterSpec resize_cluster(const ClusterSpec& c, long long num_gpus, const std::string& flag = "--gpus");
// The cluster with n GPUs in each node (NVLink domain): a job that takes 64 of a GB200 NVL72 rack's
// 72, or a published run's own node size. The GPU count becomes num_nodes * n; a preset with one NIC
// per GPU keeps one per GPU, and the intra-node fabric is unchanged. `what` names the flag or key
// in the error for n < 1.
ClusterSpec with_gpus_per_node(const ClusterSpec& c, int n, const std::string& what = "--gpus-per-node");

}  // namespace tessel
