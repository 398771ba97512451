// The search space of `tessel plan`: the values each dimension of a Plan may take for one model on
// one cluster, before any rule or memory check. Dimensions: TP, PP, CP (DP fills the rest of the
// GPUs), microbatch size, virtual pipeline stages, recompute, sequence parallelism, placement and
// ZeRO stage. Precision and the schedule are not searched: the precision is the request's, the
// schedule follows from the virtual stages (1F1B, or interleaved when v > 1; GPipe holds every
// microbatch's activations for the same bubble, so 1F1B dominates it).
#pragma once
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/options.h"
#include "core/rank_groups.h"

namespace tessel {

// What the user asks the planner to plan, after defaults are filled in.
struct PlanRequest {
    int num_gpus = 0;           // world size: tp*pp*dp*cp must equal it
    int global_batch_size = 0;  // sequences per optimizer step
    int seq_length = 0;
    Precision precision = Precision::bf16;
};

// The default global batch: 2^21 tokens (about 2M: between GPT-3 175B's 3.2M and the 1-2M of
// smaller runs; Brown et al. 2020 Table 2.1) divided by the sequence length, but at least one
// sequence per 8 GPUs, then raised to odd(N) * 2^k, the smallest such value, where odd(N) is the
// odd part of the GPU count — so that every data-parallel size the GPU count allows divides it
// (384 GPUs, sequence 2048: 3 * 2^9 = 1536, the batch Narayanan et al. 2021 used for GPT-3).
int default_global_batch(int seq_length, int num_gpus);

// The request with the model's sequence length, the default batch and the best 16-bit precision
// the GPU has filled in where the caller left 0.
PlanRequest complete_request(const ModelSpec& m, const ClusterSpec& c, int global_batch_size, int seq_length);

// Positive divisors of n, ascending.
std::vector<int> divisors(int n);

// Microbatch sizes tried for a data-parallel size: divisors of the per-replica batch up to 64
// sequences (beyond that the activations of one microbatch outgrow any GPU for every model
// large enough to need planning, and GEMMs are already efficient).
std::vector<int> microbatch_sizes(int global_batch_size, int dp);
inline constexpr int kMaxMicrobatch = 64;

// Virtual stages tried for a pipeline of pp ranks: 1, and when pp > 1 and pp divides the layers,
// every v >= 2 with pp*v dividing the layers (Megatron's --num-layers-per-virtual-pipeline-stage
// rule).
std::vector<int> virtual_stage_counts(int num_layers, int pp);

// Placements (innermost dimension first) worth simulating for these sizes. TP always goes first:
// its collectives sit on every layer's critical path. The orders of CP, DP and PP that follow are
// kept only when they pack different groups into a node (same nodes spanned and members per node
// for every dimension), so size-1 dimensions do not multiply the search. Megatron's default
// "tp-cp-dp-pp" comes first.
std::vector<std::string> distinct_placements(const ParallelSizes& sizes, int gpus_per_node);

// Distance between neighbouring ranks of dimension `dim` ("tp", "cp", "dp" or "pp") under a
// placement: the product of the sizes of the dimensions placed inside it. The group of `dim`
// through rank 0 is {k * stride : k < size} (core/rank_groups.h's factoring, without its parsing).
int placement_stride(const std::string& placement, const ParallelSizes& sizes, const std::string& dim);

}  // namespace tessel
