#include "planner/ranking.h"

#include <algorithm>

#include "core/errors.h"

namespace tessel {

Objective parse_objective(const std::string& s) {
    if (s == "time") return Objective::time;
    if (s == "tokens-per-dollar") return Objective::tokens_per_dollar;
    if (s == "memory") return Objective::memory;
    throw InputError("--objective: expected one of time | tokens-per-dollar | memory, got \"" + s + "\"");
}

const char* to_string(Objective o) {
    switch (o) {
        case Objective::time: return "time";
        case Objective::tokens_per_dollar: return "tokens-per-dollar";
        case Objective::memory: return "memory";
    }
    return "?";
}

double score(const SimulationResult& r, Objective o) {
    switch (o) {
        case Objective::time: return r.step_time_s;
        case Objective::tokens_per_dollar: return r.step_time_s * r.plan.world_size();
        case Objective::memory: return r.memory_GiB.peak;
    }
    return r.step_time_s;
}

double score_bound(double step_time_bound_s, double memory_bound_GiB, int num_gpus, Objective o) {
    switch (o) {
        case Objective::time: return step_time_bound_s;
        case Objective::tokens_per_dollar: return step_time_bound_s * num_gpus;
        case Objective::memory: return memory_bound_GiB;
    }
    return step_time_bound_s;
}

bool ranks_before(const SimulationResult& a, const SimulationResult& b, Objective o) {
    const double sa = score(a, o), sb = score(b, o);
    if (sa != sb) return sa < sb;
    if (a.step_time_s != b.step_time_s) return a.step_time_s < b.step_time_s;
    if (a.memory_GiB.peak != b.memory_GiB.peak) return a.memory_GiB.peak < b.memory_GiB.peak;
    const std::string da = a.plan.describe() + " " + a.plan.placement, db = b.plan.describe() + " " + b.plan.placement;
    return da < db;
}

void rank(std::vector<SimulationResult>& results, Objective o) {
    std::sort(results.begin(), results.end(),
              [o](const SimulationResult& a, const SimulationResult& b) { return ranks_before(a, b, o); });
}

double tokens_per_dollar(const SimulationResult& r, double price_per_gpu_hour) {
    if (price_per_gpu_hour <= 0 || r.step_time_s <= 0) return 0;
    const double dollars = r.step_time_s * r.plan.world_size() * price_per_gpu_hour / 3600.0;
    return double(r.plan.global_batch_size) * r.plan.seq_length / dollars;
}

}  // namespace tessel
