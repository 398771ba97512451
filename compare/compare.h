// compare: a simulation result against a measured run of the same plan (DESIGN.md formats), side
// by side per component — step time, compute, exposed communication (tensor, context, pipeline,
// data parallel), pipeline bubble, optimizer, memory per rank by kind, MFU — each with its error,
// and a one-line verdict naming the largest error.
//
// Errors are (simulated - measured) / measured. A time component's error is also given as a share
// of the measured step (what it costs the step-time prediction), and memory kinds as a share of the
// measured peak; the verdict names the row whose error is largest on that scale. A component the
// measured run does not break out is "not measured", never estimated. The measured run's
// pipeline bubble and point-to-point transfers are one wait (a rank cannot tell them apart), so
// they are compared as one row against the simulated bubble plus exposed pipeline communication.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/json_io.h"

namespace tessel {

// headline: step, peak memory, MFU; time: the step's parts on the rank that finishes last; kernels:
// that rank's kernel time by kind (where the measured run timed its kernels); memory: the peak's parts.
enum class CompareGroup { headline, time, kernels, memory };

struct ComparedValue {
    std::string name;  // "step time", "compute", "peak memory", ...
    std::string key;   // machine-readable: "step_time_s", "time_s.compute", ...
    std::string unit;  // "s", "GiB", "" (a fraction)
    CompareGroup group = CompareGroup::time;
    std::optional<double> simulated, measured;
    std::optional<double> total;  // what error_of_total divides by: the measured step, or peak memory
    std::string note;
    std::optional<double> error() const;           // (simulated - measured) / measured
    std::optional<double> error_of_total() const;  // (simulated - measured) / total; the headline rows: error()
};

struct Comparison {
    std::string simulated_file, measured_file;
    std::string model, plan;
    int simulated_critical_rank = -1, measured_critical_rank = -1;
    std::vector<ComparedValue> rows;
    std::optional<std::size_t> largest;  // index of the component row (not step, peak, MFU) with the largest |error_of_total|
    std::string verdict;
    const ComparedValue* row(const std::string& key) const;  // nullptr when there is no such row
};

// InputError (exit 2) naming the file and the key for a missing or mistyped key, or a file of the
// other kind (a measured run or a plan result passed as the simulation, or the reverse), and for
// two different runs ("sim.json and run.json: not the same run: plan.tp (simulated 2, measured
// 4)"), where every row would compare two different things:
//  - a plan key differs (all but framework), or a model key that changes time or memory (all but
//    name, seq_length, norm_epsilon and the RoPE base and scaling; keys left out by the writer count as their default);
//  - the simulated precision is not the one the run computed in (its compute_precision: fp32);
//  - the simulated cluster's gpu.name is not the run's --cluster gpu.name, or, for the CPU backend,
//    not the run's device (calibrate names the cluster's gpu after it).
// A GPU run without --cluster is only noted in the verdict: its driver's device name cannot be
// matched exactly to a preset's GPU name. Another cluster name on the same GPU is noted too.
Comparison compare_results(const json& simulated, const std::string& simulated_file, const json& measured,
                           const std::string& measured_file);

// The model keys that make two model objects (DESIGN.md's format, as tessel writes it) different
// models for a run's time or memory, each "model.KEY (A_SIDE a, B_SIDE b)"; empty when either is not
// an object. What compare_results refuses on; report refuses a plan search over another model.
std::vector<std::string> model_differences(const json& a, const json& b, const std::string& a_side = "simulated",
                                           const std::string& b_side = "measured");
std::string gpu_name(const json& cluster);  // cluster.gpu.name, "" where absent
// "A and B: not the same run: D1; D2; ADVICE", the refusal compare and report share.
InputError not_the_same_run(const std::string& a_file, const std::string& b_file,
                            const std::vector<std::string>& differences, const std::string& advice);

// The simulated side alone (every measured value absent, no verdict): the same rows, for drawing a
// simulation without a run.
Comparison simulated_components(const json& simulated, const std::string& simulated_file);

// An error as a signed percentage, "+12.3%", past +-1e6 % in three significant figures
// ("+1e+302%"); "-" when there is none.
std::string format_error(std::optional<double> fraction);

std::string format_comparison(const Comparison& c);  // the side-by-side table and the verdict
json to_json(const Comparison& c);

}  // namespace tessel
