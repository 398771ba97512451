// The report's bar and scatter charts, each an SVG element: the step-time breakdown (the rows of
// `tessel compare`), memory per rank by kind, and a plan search's candidates.
#pragma once
#include <optional>
#include <string>

#include "compare/compare.h"
#include "core/json_io.h"

namespace tessel {

// One stacked bar per side (simulated; measured when the comparison has one) over the time rows.
// The simulated compute row holds recomputation too; sim_recompute_s splits it back out.
std::string draw_breakdown(const Comparison& c, double sim_recompute_s);

// Stacked bars of the memory rows (the busiest rank, each side), then the measured run's peak on
// every rank (`peak_memory_GiB`), with the GPU's capacity as a line when known.
std::string draw_memory(const Comparison& c, const json* measured, const std::string& measured_file,
                        std::optional<double> capacity_GiB, const std::string& gpu_name);

// Step time against peak memory for each candidate of a plan result (ranked best first: the
// first is the winner), the capacity line, and the simulated plan ringed when it is among them.
std::string draw_candidates(const json& plan_result, const std::string& file, const json& simulated_plan,
                            std::optional<double> capacity_GiB);

}  // namespace tessel
