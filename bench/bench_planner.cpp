// Search time of `tessel plan` over the full space, on the cases the targets name:
//   GPT-3 175B on 384 A100-80GB (global batch 1536, sequence 2048; Narayanan et al. 2021, Table 2) — target < 2 s;
//   Megatron's 1T model on 3072 A100s (global batch 3072; Narayanan et al. 2021, Table 1) — target < 10 s;
//   the built-in default, Llama-3 70B on 64 H100s.
// Each iteration is a whole search (enumeration, bounds, memory, simulation) with every hardware
// thread, as `tessel plan` runs it; the counters say how much of the space each stage handled.
// Results: reports/bench/planner.txt.
#include <benchmark/benchmark.h>

#include "core/presets.h"
#include "planner/search.h"

namespace {

using namespace tessel;

void run_search(benchmark::State& state, const char* model, const char* cluster, int gpus, int global_batch, int threads) {
    const ModelSpec m = load_model(model);
    const ClusterSpec c = resize_cluster(load_cluster(cluster), gpus);
    const PlanRequest req = complete_request(m, c, global_batch, 0);
    SearchOptions o;
    o.threads = threads;
    SearchResult r;
    for (auto _ : state) {
        r = search_plans(m, c, req, o);
        benchmark::DoNotOptimize(r.best.data());
    }
    state.counters["considered"] = double(r.considered);
    state.counters["rejected"] = double(r.rejected);
    state.counters["pruned_memory"] = double(r.pruned_memory);
    state.counters["pruned_bound"] = double(r.pruned_bound);
    state.counters["simulated"] = double(r.simulated);
    state.counters["best_step_s"] = r.best.front().step_time_s;
    state.counters["best_mfu"] = r.best.front().mfu;
    state.SetLabel(r.best.front().plan.describe() + " " + r.best.front().plan.placement);
}

void BM_PlanGpt3On384(benchmark::State& state) {
    run_search(state, "gpt3-175b", "dgx-a100", 384, 1536, int(state.range(0)));
}
BENCHMARK(BM_PlanGpt3On384)->Arg(0)->Arg(1)->ArgName("threads")->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();

void BM_PlanMegatron1TOn3072(benchmark::State& state) {
    run_search(state, "megatron-1t", "dgx-a100", 3072, 3072, int(state.range(0)));
}
BENCHMARK(BM_PlanMegatron1TOn3072)->Arg(0)->Arg(1)->ArgName("threads")->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void BM_PlanDefaultLlama70BOn64H100(benchmark::State& state) {
    run_search(state, "llama3-70b", "dgx-h100", 64, 0, 0);
}
BENCHMARK(BM_PlanDefaultLlama70BOn64H100)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
