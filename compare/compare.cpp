#include "compare/compare.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/json_io.h"

namespace tessel {

std::optional<double> ComparedValue::error() const {
    if (!simulated || !measured || *measured == 0) return std::nullopt;
    return (*simulated - *measured) / *measured;
}

std::optional<double> ComparedValue::error_of_total() const {
    if (group == CompareGroup::headline) return error();
    if (!simulated || !measured || !total || *total <= 0) return std::nullopt;
    return (*simulated - *measured) / *total;
}

namespace {

// Numbers are >= 0 everywhere in both formats.
double required(ObjectReader& r, const std::string& key) { return r.number(key, std::nullopt, 0.0, 1e300, false); }

std::optional<double> optional_number(ObjectReader& r, const std::string& key) {
    if (!r.has(key)) return std::nullopt;
    return r.number(key, std::nullopt, 0.0, 1e300, false);
}

std::string string_of(const json& o, const char* key) {
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

std::string describe_plan(const json& p) {
    if (!p.is_object()) return "";
    auto i = [&](const char* k) { return p.contains(k) && p[k].is_number() ? p[k].get<long long>() : 0LL; };
    auto s = [&](const char* k) { return p.contains(k) && p[k].is_string() ? p[k].get<std::string>() : std::string("?"); };
    return fmt::format("tp{} pp{} dp{} cp{} zero{}, microbatch {}, global batch {}, seq {}, {}", i("tp"), i("pp"), i("dp"),
                       i("cp"), i("zero_stage"), i("microbatch_size"), i("global_batch_size"), i("seq_length"),
                       s("schedule"));
}

// A key absent from one plan or model object and present in the other is compared against the
// value the writer leaves out (to_json writes these keys only when they differ from it), so a
// sliding-window model is not taken for the same model as a dense one.
const json& value_or_default(const json& o, const std::string& k, const json& defaults) {
    static const json absent;
    if (o.contains(k)) return o[k];
    return defaults.contains(k) ? defaults[k] : absent;
}

const char* json_kind(const json& v) {
    if (v.is_string()) return "a string";
    if (v.is_number()) return "a number";
    if (v.is_boolean()) return "a boolean";
    if (v.is_object()) return "an object";
    if (v.is_array()) return "an array";
    return "null";
}

std::vector<std::string> differences(const std::string& prefix, const json& a, const json& b,
                                     const std::vector<std::string>& ignored, const json& defaults,
                                     const std::string& a_side = "simulated", const std::string& b_side = "measured") {
    std::vector<std::string> out;
    if (!a.is_object() || !b.is_object()) return out;
    std::vector<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.push_back(k);
    for (const auto& [k, v] : b.items())
        if (!a.contains(k)) keys.push_back(k);
    for (const auto& k : keys) {
        if (std::find(ignored.begin(), ignored.end(), k) != ignored.end()) continue;
        const json &x = value_or_default(a, k, defaults), &y = value_or_default(b, k, defaults);
        // A key only one side knows, without a default, is from another version of the writer.
        if (x.is_null() || y.is_null() || x == y) continue;
        if (x.is_number() && y.is_number() && x.get<double>() == y.get<double>()) continue;  // 1 and 1.0
        // Values of two kinds (a quoted "1" against 1) are an edited file, not another run: say so.
        if (x.type() != y.type() && !(x.is_number() && y.is_number())) {
            out.push_back(fmt::format("{}.{} is {} in one file and {} in the other ({} {}, {} {}): one of them "
                                      "was not written as tessel writes it",
                                      prefix, k, json_kind(x), json_kind(y), a_side, x.dump(), b_side, y.dump()));
            continue;
        }
        out.push_back(fmt::format("{}.{} ({} {}, {} {})", prefix, k, a_side, x.dump(), b_side, y.dump()));
    }
    return out;
}

// Every plan key but the framework a plan was exported for (it does not change the run) and the
// precision, which is checked against what the run computed in (tessel run's plan may say bf16
// while it computes fp32).
std::vector<std::string> plan_differences(const json& a, const json& b) {
    static const json defaults = {{"recompute_layers", 0}, {"lm_head_layers", 0}};
    return differences("plan", a, b, {"framework", "precision"}, defaults);
}

}  // namespace

// Every model key but those that change neither time nor memory: the name (a preset against its
// Hugging Face config), the default context length (the plan's seq_length is the run's), the norm
// epsilon and the rotary base.
std::vector<std::string> model_differences(const json& a, const json& b, const std::string& a_side,
                                           const std::string& b_side) {
    static const json defaults = {{"out_bias", false},          {"mlp_bias", false},       {"qk_norm", "none"},
                                  {"sliding_window", 0},        {"sliding_window_pattern", 0},
                                  {"sandwich_norms", false},    {"logit_softcap", false},  {"rotary_percent", 1.0},
                                  {"parallel_residual", false}, {"linear_bias", false},    {"qkv_bias", false},
                                  {"shared_norm", false},       {"full_attention_layers", -1}};
    return differences("model", a, b,
                       {"name", "seq_length", "norm_epsilon", "rope_theta", "rope_scaling_type", "rope_scaling_factor",
                        "rope_scaling_low_freq_factor", "rope_scaling_high_freq_factor", "rope_scaling_original_context"},
                       defaults, a_side, b_side);
}

InputError not_the_same_run(const std::string& a_file, const std::string& b_file,
                            const std::vector<std::string>& differences, const std::string& advice) {
    std::string list;
    for (const auto& d : differences) list += d + "; ";
    return InputError(fmt::format("{} and {}: not the same run: {}{}", a_file, b_file, list, advice));
}

std::string gpu_name(const json& cluster) {
    return cluster.is_object() && cluster.contains("gpu") ? string_of(cluster["gpu"], "name") : "";
}

namespace {


std::string value(std::optional<double> x, const std::string& unit) {
    if (!x) return "not measured";
    if (unit.empty()) return fmt::format("{:.2f}%", 100 * *x);
    return fmt::format("{:.4g}", *x);
}

}  // namespace

namespace {

// Both sides, or the simulated side alone (meas == nullptr: every measured value absent, no verdict).
Comparison build_comparison(const json& sim, const std::string& sim_file, const json* meas,
                            const std::string& meas_file) {
    static const json no_measurement = json::object();
    ObjectReader s(sim, sim_file), m(meas ? *meas : no_measurement, meas_file);
    if (s.has("step_times_s"))
        throw input_error(sim_file, "step_times_s",
                          "a simulation result (tessel simulate --json), not a measured run (pass it as --measured)");
    if (s.has("candidates"))
        throw input_error(sim_file, "candidates",
                          "a simulation result (tessel simulate --json), not a plan result (tessel plan --json)");
    if (meas && !m.has("step_times_s"))
        throw input_error(meas_file, "step_times_s", "a measured run (tessel run --out) with its per-step times");
    if (meas) {
        const json& times = m.raw("step_times_s");
        const bool all_positive = times.is_array() && !times.empty() &&
                                  std::all_of(times.begin(), times.end(),
                                              [](const json& t) { return t.is_number() && t.get<double>() > 0; });
        if (!all_positive)
            throw input_error(meas_file, "step_times_s", "a non-empty array of positive seconds, one per step",
                              describe_json_value(times));
        if (!m.has("device") && !m.has("cluster"))
            throw input_error(meas_file, "device",
                              "the device the run measured on (tessel run --out writes it) or its cluster, to check "
                              "that the simulation is of the same hardware");
    }

    Comparison c;
    c.simulated_file = sim_file;
    c.measured_file = meas ? meas_file : "";
    // Every error divides by the measured step (and the step rows by both): a zero step is no run.
    auto step_of = [](ObjectReader& r, const std::string& file) {
        const double t = required(r, "step_time_s");
        if (!(t > 0)) throw input_error(file, "step_time_s", "a positive number of seconds", fmt::format("{}", t));
        return t;
    };
    const double sim_step = step_of(s, sim_file);
    const std::optional<double> meas_step = meas ? std::optional(step_of(m, meas_file)) : std::nullopt;
    ObjectReader st = s.object("time_s");
    const double compute = required(st, "compute"), recompute = required(st, "recompute"), bubble = required(st, "bubble"),
                 tp = required(st, "tp_comm_exposed"), pp = required(st, "pp_comm_exposed"),
                 dp = required(st, "dp_comm_exposed"), optimizer = required(st, "optimizer");
    const double cp = optional_number(st, "cp_comm_exposed").value_or(0.0);
    ObjectReader sm = s.object("memory_GiB");
    std::optional<ObjectReader> mm;
    if (meas) mm = m.object("memory_GiB");
    const double sim_mfu = required(s, "mfu");
    const std::optional<double> meas_mfu = meas ? std::optional(required(m, "mfu")) : std::nullopt;
    if (s.has("critical_rank")) c.simulated_critical_rank = int(s.integer("critical_rank", std::nullopt, 0));
    if (meas && m.has("critical_rank")) c.measured_critical_rank = int(m.integer("critical_rank", std::nullopt, 0));
    if (s.has("model") && s.raw("model").is_object()) c.model = s.raw("model").value("name", "");
    if (c.model.empty() && m.has("model") && m.raw("model").is_object()) c.model = m.raw("model").value("name", "");
    // Either side's plan and model are objects: a mistyped one would hide a mismatch. Beside a
    // measured run both sides must have them: without what says which run each file is, the rows
    // would compare one run with another.
    for (const auto& [reader, side] : {std::pair{&s, &sim_file}, std::pair{&m, &meas_file}})
        for (const char* k : {"plan", "model"}) {
            if (!reader->has(k)) {
                if (meas)
                    throw input_error(*side, k,
                                      fmt::format("the {} of the run (tessel simulate --json and tessel run --out "
                                                  "write it), to check that both files are of the same run",
                                                  k));
                continue;
            }
            if (!reader->raw(k).is_object())
                throw input_error(*side, k, "an object", describe_json_value(reader->raw(k)));
        }
    const json no_plan;
    const json& sim_plan = s.has("plan") ? s.raw("plan") : no_plan;
    const json& meas_plan = m.has("plan") ? m.raw("plan") : no_plan;
    c.plan = describe_plan(sim_plan.is_object() ? sim_plan : meas_plan);
    // Another plan or model makes every row a comparison of two different runs: refused.
    std::vector<std::string> differences = plan_differences(sim_plan, meas_plan);
    if (meas && s.has("model") && m.has("model"))
        for (auto& d : model_differences(s.raw("model"), m.raw("model"))) differences.push_back(std::move(d));
    // The precision the run computed in (tessel run computes fp32 on every backend, whatever its
    // plan says), against the simulated plan's: the simulator times another precision against
    // another peak (bf16 989 against fp32 67 TFLOP/s on an H100), so every time row would differ
    // by that factor, not by the simulator's error.
    const std::string sim_precision = string_of(sim_plan, "precision");
    const std::string run_precision =
        meas && m.has("compute_precision") ? string_of(*meas, "compute_precision") : string_of(meas_plan, "precision");
    if (!sim_precision.empty() && !run_precision.empty() && sim_precision != run_precision)
        differences.push_back(fmt::format("plan.precision (simulated \"{}\", measured {} \"{}\"; simulate with "
                                          "--precision {})",
                                          sim_precision, m.has("compute_precision") ? "compute_precision" : "plan.precision",
                                          run_precision, run_precision));
    // The hardware. The simulation records its cluster; the run records the device it ran on
    // (tessel calibrate names a calibrated cluster's gpu after that same device) and, when given
    // --cluster, the cluster it was told it ran on. Two different GPU names in those are two
    // different machines: refused. A GPU run without --cluster cannot be matched exactly (a preset
    // says "H100-SXM", the driver "NVIDIA H100 80GB HBM3"), so that is a note in the verdict.
    const json no_cluster;
    const json& sim_cluster = s.has("cluster") ? s.raw("cluster") : no_cluster;
    const json& run_cluster = m.has("cluster") ? m.raw("cluster") : no_cluster;
    const std::string sim_gpu = gpu_name(sim_cluster), run_cluster_gpu = gpu_name(run_cluster);
    const std::string run_device = m.has("device") ? string_of(*meas, "device") : "";
    const std::string run_backend = m.has("backend") ? string_of(*meas, "backend") : "";
    std::string hardware_note;
    if (!sim_gpu.empty() && !run_cluster_gpu.empty() && sim_gpu != run_cluster_gpu)
        differences.push_back(fmt::format("cluster.gpu.name (simulated \"{}\", measured \"{}\")", sim_gpu, run_cluster_gpu));
    else if (!sim_gpu.empty() && !run_device.empty() && sim_gpu != run_device) {
        // The CPU backend's device is the name calibrate gives a CPU cluster's gpu: exact.
        if (run_backend == "cpu")
            differences.push_back(fmt::format("cluster.gpu.name (simulated \"{}\", measured device \"{}\", backend cpu: "
                                              "calibrate this machine and simulate on that)",
                                              sim_gpu, run_device));
        else if (run_cluster_gpu.empty())
            hardware_note = fmt::format("simulated on {} ({}), the run on device {} with no --cluster: compare cannot "
                                        "tell whether they are the same hardware",
                                        sim_gpu, string_of(sim_cluster, "name"), run_device);
    }
    if (!differences.empty())
        throw not_the_same_run(sim_file, meas_file, differences,
                               "simulate the plan, model, precision and cluster the run used");

    auto row = [&](std::string name, std::string key, std::string unit, CompareGroup g, std::optional<double> sv,
                   std::optional<double> mv, std::optional<double> total, std::string note = "") {
        c.rows.push_back({std::move(name), std::move(key), std::move(unit), g, sv, mv, total, std::move(note)});
    };
    using G = CompareGroup;
    row("step time", "step_time_s", "s", G::headline, sim_step, meas_step, std::nullopt,
        meas ? "measured: median after warm-up" : "");

    // Time on the rank that finishes last (each side its own).
    std::optional<ObjectReader> mt;
    if (meas && m.has("time_s")) mt = m.object("time_s");
    auto measured_time = [&](const std::string& key) { return mt ? optional_number(*mt, key) : std::nullopt; };
    // The measured breakdown must add up to its own total (tessel run writes the parts and their
    // sum): a part edited or cut off would be compared against the simulation as it stands.
    if (mt && mt->has("total")) {
        double parts = 0;
        for (const char* k : {"compute", "tp_comm_exposed", "cp_comm_exposed", "bubble", "pp_comm_exposed",
                              "bubble_and_pp_comm", "dp_comm_exposed", "optimizer", "sync_wait"})
            if (const auto v = measured_time(k)) {
                if (!std::isfinite(*v) || *v < 0)
                    throw input_error(meas_file, std::string("time_s.") + k, "a non-negative number of seconds",
                                      fmt::format("{}", *v));
                parts += *v;
            }
        const double total = required(*mt, "total");
        if (!(std::abs(parts - total) <= 1e-6 * std::max(std::abs(total), 1.0) + 1e-9))
            throw input_error(meas_file, "time_s.total",
                              "the sum of the time_s parts (compute, comm, bubble, optimizer, sync_wait)",
                              fmt::format("{} against parts summing to {}", total, parts));
    }
    row("compute", "time_s.compute", "s", G::time, compute + recompute, measured_time("compute"), meas_step,
        recompute > 0 ? "simulated compute + recompute" : "");
    row("TP comm (exposed)", "time_s.tp_comm_exposed", "s", G::time, tp, measured_time("tp_comm_exposed"), meas_step);
    row("CP comm (exposed)", "time_s.cp_comm_exposed", "s", G::time, cp, measured_time("cp_comm_exposed"), meas_step);
    if (measured_time("bubble") || !measured_time("bubble_and_pp_comm")) {
        row("pipeline bubble", "time_s.bubble", "s", G::time, bubble, measured_time("bubble"), meas_step);
        row("PP comm (exposed)", "time_s.pp_comm_exposed", "s", G::time, pp, measured_time("pp_comm_exposed"), meas_step);
    } else {
        row("pipeline bubble + PP comm", "time_s.bubble_and_pp_comm", "s", G::time, bubble + pp,
            measured_time("bubble_and_pp_comm"), meas_step, "one wait on the measured rank");
    }
    row("DP comm (exposed)", "time_s.dp_comm_exposed", "s", G::time, dp, measured_time("dp_comm_exposed"), meas_step);
    row("optimizer", "time_s.optimizer", "s", G::time, optimizer, measured_time("optimizer"), meas_step,
        mt || !meas ? "" : "measured: the optimizer step with its communication");
    if (measured_time("sync_wait"))
        row("waiting for other ranks", "time_s.sync_wait", "s", G::time, 0.0, measured_time("sync_wait"), meas_step,
            "the simulated critical rank never waits");

    // Kernel time by kind: only where the run timed its kernels (tessel run --kernel-times), which it
    // does on rank 0; on one rank that is the rank the simulated breakdown follows.
    if (meas && m.has("kernel_time_s") && s.has("kernel_time_s")) {
        ObjectReader sk = s.object("kernel_time_s"), mk = m.object("kernel_time_s");
        const std::string note = c.measured_critical_rank > 0 ? "measured on rank 0" : "";
        for (const auto& [kind, name] : {std::pair{"gemm", "GEMM kernels"}, {"attention", "attention kernels"},
                                         {"memory_bound", "bandwidth-bound kernels"}})
            row(name, std::string("kernel_time_s.") + kind, "s", G::kernels, required(sk, kind), required(mk, kind),
                meas_step, note);
    }

    const double sim_peak = required(sm, "peak");
    const std::optional<double> meas_peak = mm ? std::optional(required(*mm, "peak")) : std::nullopt;
    row("peak memory per rank", "memory_GiB.peak", "GiB", G::headline, sim_peak, meas_peak, std::nullopt,
        "the busiest rank");
    for (const char* kind : {"weights", "gradients", "optimizer", "activations", "buffers"})
        row(kind, std::string("memory_GiB.") + kind, "GiB", G::memory, required(sm, kind),
            mm ? optional_number(*mm, kind) : std::nullopt, meas_peak);

    // Both MFUs against one peak, the simulation's (its cluster's peak at the plan's precision):
    // a run measured against another peak (its start-up GEMM, another calibration) would otherwise
    // give an MFU error that is not the throughput's (step +47.6% beside MFU -8.0%).
    std::string mfu_note;
    std::optional<double> meas_mfu_same_peak = meas_mfu;
    if (meas && m.has("peak_tflops_used") && s.has("cluster") && s.raw("cluster").is_object()) {
        const double run_peak = required(m, "peak_tflops_used");
        const std::string source = m.has("peak_tflops_source") ? m.string("peak_tflops_source") : "its peak";
        const json& cl = s.raw("cluster");
        const std::string precision = sim_plan.is_object() && sim_plan.contains("precision") && sim_plan["precision"].is_string()
                                          ? sim_plan["precision"].get<std::string>()
                                          : "";
        const json* peaks = cl.contains("gpu") && cl["gpu"].is_object() && cl["gpu"].contains("peak_tflops")
                                ? &cl["gpu"]["peak_tflops"]
                                : nullptr;
        const bool known = peaks && peaks->is_object() && peaks->contains(precision) && (*peaks)[precision].is_number();
        const double sim_peak_tflops = known ? (*peaks)[precision].get<double>() : 0.0;
        if (sim_peak_tflops > 0 && run_peak > 0 && meas_mfu) {
            meas_mfu_same_peak = *meas_mfu * run_peak / sim_peak_tflops;
            mfu_note = fmt::format("both against the simulation's {:.4g} TFLOP/s ({}); the run measured {:.2f}% against "
                                   "{:.4g} TFLOP/s ({})",
                                   sim_peak_tflops, precision, 100 * *meas_mfu, run_peak, source);
        } else {
            mfu_note = fmt::format("measured against {:.4g} TFLOP/s ({})", run_peak, source);
        }
    }
    row("MFU", "mfu", "", G::headline, sim_mfu, meas_mfu_same_peak, std::nullopt, mfu_note);
    if (!meas) return c;

    // The verdict: the headline errors and the component whose error weighs most. The headline
    // rows (step, peak, MFU) are in the verdict already, and MFU's error, -e/(1+e) for a step
    // error e, would outrank every component whenever the simulation is fast.
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
        if (c.rows[i].group == G::headline) continue;
        const auto e = c.rows[i].error_of_total();
        if (e && (!c.largest || std::abs(*e) > std::abs(*c.rows[*c.largest].error_of_total()))) c.largest = i;
    }
    c.verdict = fmt::format("step time {} ({:.4g} s simulated, {:.4g} s measured), peak memory {}", format_error(c.rows[0].error()),
                            sim_step, *meas_step, format_error(c.row("memory_GiB.peak")->error()));
    if (c.largest) {
        const ComparedValue& r = c.rows[*c.largest];
        const std::string scale = r.group == G::time || r.group == G::kernels ? " of the measured step"
                                  : r.group == G::memory ? " of the measured peak"
                                                         : "";
        c.verdict += fmt::format("; largest error: {} {}{} ({} simulated, {} measured)", r.name,
                                 format_error(r.error_of_total()), scale, value(r.simulated, r.unit), value(r.measured, r.unit));
    }
    if (!hardware_note.empty()) c.verdict += "; note: " + hardware_note;
    // The same hardware under another cluster name (another calibration of this machine, a preset
    // resized with --gpus): said, not refused.
    const std::string sim_cluster_name = string_of(sim_cluster, "name"), run_cluster_name = string_of(run_cluster, "name");
    if (!sim_cluster_name.empty() && !run_cluster_name.empty() && sim_cluster_name != run_cluster_name)
        c.verdict += fmt::format("; note: simulated on cluster {}, the run's is {}", sim_cluster_name, run_cluster_name);
    return c;
}

}  // namespace

std::string format_error(std::optional<double> fraction) {
    if (!fraction) return "-";
    const double p = 100 * *fraction;
    // One decimal reads best for real errors; absurd ones (a 1e-300 s step in the file) would
    // print hundreds of digits, so past a million percent they take three significant figures.
    return std::abs(p) < 1e6 ? fmt::format("{:+.1f}%", p) : fmt::format("{:+.3g}%", p);
}

const ComparedValue* Comparison::row(const std::string& key) const {
    for (const auto& r : rows)
        if (r.key == key) return &r;
    return nullptr;
}

Comparison compare_results(const json& sim, const std::string& sim_file, const json& meas, const std::string& meas_file) {
    return build_comparison(sim, sim_file, &meas, meas_file);
}

Comparison simulated_components(const json& sim, const std::string& sim_file) {
    return build_comparison(sim, sim_file, nullptr, "");
}

std::string format_comparison(const Comparison& c) {
    std::ostringstream o;
    o << fmt::format("compare: {}{}\n", c.model.empty() ? "" : c.model + ", ", c.plan);
    o << fmt::format("  simulated {}{}\n", c.simulated_file,
                     c.simulated_critical_rank >= 0 ? fmt::format(" (breakdown of pipeline rank {}, the last to finish)",
                                                                  c.simulated_critical_rank)
                                                    : "");
    o << fmt::format("  measured  {}{}\n", c.measured_file,
                     c.measured_critical_rank >= 0 ? fmt::format(" (breakdown of world rank {}, the last to finish)",
                                                                 c.measured_critical_rank)
                                                   : "");
    o << fmt::format("\n{:<28} {:>4} {:>12} {:>14} {:>9} {:>10}\n", "", "", "simulated", "measured", "error",
                     "of total");
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
        const ComparedValue& r = c.rows[i];
        if (r.group == CompareGroup::kernels && (i == 0 || c.rows[i - 1].group != CompareGroup::kernels))
            o << "kernel time by kind on that rank (of total: share of the measured step)\n";
        const bool sub = r.group != CompareGroup::headline;
        const std::string name = (sub ? "  " : "") + r.name;
        const std::string of_total = r.group == CompareGroup::headline ? "" : format_error(r.error_of_total());
        o << fmt::format("{:<28} {:>4} {:>12} {:>14} {:>9} {:>10}{}\n", name, r.unit, value(r.simulated, r.unit),
                         value(r.measured, r.unit), format_error(r.error()), of_total, r.note.empty() ? "" : "  " + r.note);
        if (r.key == "step_time_s") o << "time on the rank that finishes last (of total: share of the measured step)\n";
        if (r.key == "memory_GiB.peak") o << "memory by kind on the busiest rank (of total: share of the measured peak)\n";
    }
    o << "\nverdict: " << c.verdict << "\n";
    return o.str();
}

json to_json(const Comparison& c) {
    json rows = json::array();
    auto opt = [](std::optional<double> x) { return x ? json(*x) : json(nullptr); };
    for (const auto& r : c.rows)
        rows.push_back({{"name", r.name},
                        {"key", r.key},
                        {"unit", r.unit},
                        {"simulated", opt(r.simulated)},
                        {"measured", opt(r.measured)},
                        {"error", opt(r.error())},
                        {"error_of_total", opt(r.error_of_total())},
                        {"note", r.note}});
    json j = {{"simulated", c.simulated_file}, {"measured", c.measured_file}, {"model", c.model}, {"plan", c.plan},
              {"rows", rows},                  {"verdict", c.verdict}};
    if (c.largest) j["largest_error"] = c.rows[*c.largest].key;
    return j;
}

}  // namespace tessel
