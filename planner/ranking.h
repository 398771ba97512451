// What "best" means: the objective a plan is ranked by, lower scores first.
//   time               simulated seconds per optimizer step
//   tokens-per-dollar  GPU-seconds per step (the step's cost at the cluster's price, for the same
//                      tokens per step); the search may then use fewer GPUs than the cluster has
//   memory             peak GiB per GPU, ties broken by step time
#pragma once
#include <string>
#include <vector>

#include "simulator/result.h"

namespace tessel {

enum class Objective { time, tokens_per_dollar, memory };

Objective parse_objective(const std::string& s);  // InputError for anything else
const char* to_string(Objective o);

// The score of a simulated plan (lower is better).
double score(const SimulationResult& r, Objective o);
// A lower bound on score() from a lower bound on the step time and one on peak memory.
double score_bound(double step_time_bound_s, double memory_bound_GiB, int num_gpus, Objective o);

// Strict order: by score, then step time, then peak memory, then the plan's description, so the
// ranking does not depend on the order plans were simulated in.
bool ranks_before(const SimulationResult& a, const SimulationResult& b, Objective o);
void rank(std::vector<SimulationResult>& results, Objective o);

// Tokens per dollar of a simulated plan at the cluster's price (0 when the price is unknown).
double tokens_per_dollar(const SimulationResult& r, double price_per_gpu_hour);

}  // namespace tessel
