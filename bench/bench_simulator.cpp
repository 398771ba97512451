// How fast the simulator scores one plan: the planner calls simulate() for every candidate.
// GPT-3 175B on 1024 A100s (tp 8, pp 16, dp 8, microbatch 1, global batch 1536), as in
// Narayanan et al. 2021's scaling runs; target under 10 ms per plan.
#include <benchmark/benchmark.h>

#include "core/presets.h"
#include "simulator/simulate.h"

using namespace tessel;

namespace {
Plan gpt3_plan(Schedule schedule, int v) {
    Plan p;
    p.tp = 8;
    p.pp = 16;
    p.dp = 8;
    p.microbatch_size = 1;
    p.global_batch_size = 1536;
    p.seq_length = 2048;
    p.schedule = schedule;
    p.virtual_stages = v;
    p.sequence_parallel = true;
    p.recompute = Recompute::selective;
    p.zero_stage = 1;
    return p;
}

void simulate_plan(benchmark::State& state, Schedule schedule, int v) {
    const ModelSpec m = load_model("gpt3-175b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 1024);
    const Plan p = gpt3_plan(schedule, v);
    double step = 0;
    for (auto _ : state) {
        auto r = simulate(m, c, p);
        step = r.step_time_s;
        benchmark::DoNotOptimize(r);
    }
    state.counters["simulated_step_s"] = step;
}

// A cluster simulate() has not seen: the Topology and its shortest paths are built first (the
// planner pays this once per cluster).
void BM_Simulate_GPT3_175B_1024_NewCluster(benchmark::State& state) {
    const ModelSpec m = load_model("gpt3-175b");
    ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 1024);
    const Plan p = gpt3_plan(Schedule::interleaved, 2);
    int k = 0;
    for (auto _ : state) {
        c.intra_node.latency_us = 3.0 + 1e-3 * (k++ % 64);  // a distinct wiring each time
        benchmark::DoNotOptimize(simulate(m, c, p));
    }
}

void BM_Simulate_GPT3_175B_1024_1F1B(benchmark::State& state) { simulate_plan(state, Schedule::one_f_one_b, 1); }
void BM_Simulate_GPT3_175B_1024_Interleaved_v2(benchmark::State& state) { simulate_plan(state, Schedule::interleaved, 2); }

void BM_EstimateMemory_GPT3_175B_1024(benchmark::State& state) {
    const ModelSpec m = load_model("gpt3-175b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 1024);
    const Plan p = gpt3_plan(Schedule::interleaved, 2);
    for (auto _ : state) benchmark::DoNotOptimize(estimate_memory(m, c, p));
}

void BM_LowerBound_GPT3_175B_1024(benchmark::State& state) {
    const ModelSpec m = load_model("gpt3-175b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-a100"), 1024);
    const Plan p = gpt3_plan(Schedule::interleaved, 2);
    for (auto _ : state) benchmark::DoNotOptimize(step_time_lower_bound(m, c, p));
}
}  // namespace

BENCHMARK(BM_Simulate_GPT3_175B_1024_1F1B)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simulate_GPT3_175B_1024_Interleaved_v2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Simulate_GPT3_175B_1024_NewCluster)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EstimateMemory_GPT3_175B_1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LowerBound_GPT3_175B_1024)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
