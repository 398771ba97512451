#include "compare/report_html.h"

#include <cmath>

#include <fmt/format.h>

#include "compare/compare.h"
#include "compare/report_charts.h"
#include "compare/report_timeline.h"
#include "compare/svg.h"
#include "core/errors.h"

namespace tessel {

namespace {

// One check per kind of file, so a file passed in the wrong place is named as what it is.
void check_kind(const json& j, const std::string& file, const std::string& expected) {
    ObjectReader r(j, file);  // InputError unless an object
    const bool plan_result = r.has("candidates"), measured = r.has("step_times_s");
    if (expected == "simulation" && (plan_result || measured))
        throw input_error(file, plan_result ? "candidates" : "step_times_s",
                          std::string("a simulation result (tessel simulate --json), not ") +
                              (plan_result ? "a plan result (pass it as --plan-result)" : "a measured run (pass it as --measured)"));
    if (expected == "measured" && !measured)
        throw input_error(file, plan_result ? "candidates" : "step_times_s",
                          plan_result ? "a measured run (tessel run --out), not a plan result (pass it as --plan-result)"
                                      : "a measured run (tessel run --out) with its per-step times");
    if (expected == "plan result" && !plan_result)
        throw input_error(file, "candidates",
                          std::string("a plan result (tessel plan --json) with its candidates") +
                              (measured ? ", not a measured run (pass it as --measured)"
                               : r.has("step_time_s") ? ", not a simulation result (pass it as --simulated)"
                                                      : ""));
}

const char* kCss = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;background:#fff;margin:24px auto;max-width:1240px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
p.sub{color:#555;margin:2px 0}
table{border-collapse:collapse;margin:8px 0}th,td{padding:3px 10px;text-align:right;border-bottom:1px solid #eee}
th:first-child,td:first-child{text-align:left}td.note{text-align:left;color:#666}th{background:#f5f5f5}
tr.sub td:first-child{padding-left:22px}
.plan td{text-align:left}.verdict{background:#f7f7ee;border-left:4px solid #c9b458;padding:6px 10px}
.note{color:#666}.caption{color:#555;font-size:12px}
svg{display:block;margin:8px 0;max-width:100%;height:auto}
svg text{font:11px system-ui,sans-serif;fill:#333}svg text.sub{fill:#888;font-size:8px}svg text.tick{fill:#555}
svg text.axl{fill:#333;font-size:12px}svg text.wl{font-weight:600}svg text.capl{fill:#b22}
line.axis{stroke:#555;stroke-width:1}line.guide{stroke:#eee;stroke-width:1}
line.cap{stroke:#d62728;stroke-width:1.5;stroke-dasharray:5 3}line.step,line.mark{stroke:#222;stroke-width:1.5}
line.step{stroke-dasharray:3 3}
.f{fill:#4e79a7}.b{fill:#59a14f}.r{fill:#f28e2b}.o{fill:#b07aa1}.tp{fill:#e15759}.cp{fill:#edc948}.pp{fill:#9c755f}
.dp{fill:#76b7b2}.x{fill:#bab0ac}
rect.c,rect.m,rect.r{shape-rendering:crispEdges}
.x-compute{fill:#4e79a7}.x-recompute{fill:#f28e2b}.x-bubble{fill:#d7d7d7}.x-pp{fill:#9c755f}.x-tp{fill:#e15759}
.x-cp{fill:#edc948}.x-dp{fill:#76b7b2}.x-opt{fill:#b07aa1}.x-wait{fill:#ff9da7}.x-other{fill:#eeeeee}
.y-weights{fill:#4e79a7}.y-gradients{fill:#59a14f}.y-optimizer{fill:#b07aa1}.y-activations{fill:#f28e2b}
.y-buffers{fill:#76b7b2}.y-other{fill:#e0e0e0}.y-peak{fill:#9da9b8}
circle.pt{fill:#4e79a7;fill-opacity:.65}circle.nofit{fill:#bbb}circle.win{fill:#d62728;stroke:#fff;stroke-width:1.5}
circle.this{fill:none;stroke:#222;stroke-width:1.5}
)";

std::string esc(const std::string& s) { return escape_xml(s); }

std::optional<double> error_of(std::optional<double> s, std::optional<double> m) {
    if (!s || !m || *m == 0) return std::nullopt;
    return (*s - *m) / *m;
}

std::optional<double> number_at(const json& j, std::initializer_list<const char*> path) {
    const json* p = &j;
    for (const char* k : path) {
        if (!p->is_object() || !p->contains(k)) return std::nullopt;
        p = &(*p)[k];
    }
    return p->is_number() ? std::optional(p->get<double>()) : std::nullopt;
}

std::string string_at(const json& j, std::initializer_list<const char*> path) {
    const json* p = &j;
    for (const char* k : path) {
        if (!p->is_object() || !p->contains(k)) return "";
        p = &(*p)[k];
    }
    return p->is_string() ? p->get<std::string>() : "";
}


std::string value_text(std::optional<double> v, const std::string& unit, bool measured_side, bool have_measured) {
    if (!v) return measured_side && have_measured ? "not measured" : "-";
    if (unit.empty()) return fmt::format("{:.2f}%", 100 * *v);
    return fmt::format("{:.4g} {}", *v, unit);
}

std::string header(const ReportInputs& in, const Comparison& c) {
    const json& s = in.simulated;
    const bool have_m = in.measured.has_value();
    std::string model = string_at(s, {"model", "name"});
    if (model.empty()) model = c.model.empty() ? "(unnamed model)" : c.model;
    const std::string cluster = string_at(s, {"cluster", "name"}), gpu = string_at(s, {"cluster", "gpu", "name"});
    const auto gpus = number_at(s, {"num_gpus"});
    std::string o = fmt::format("<header>\n<h1>tessel report: {}</h1>\n", esc(model));
    o += fmt::format("<p class=\"sub\">on {}{}{}</p>\n", gpus ? fmt::format("{:.0f} x ", *gpus) : "",
                     esc(cluster.empty() ? "(unnamed cluster)" : cluster), gpu.empty() ? "" : " (" + esc(gpu) + ")");

    // The plan, key by key as the JSON has it.
    o += "<table class=\"plan\"><tr>";
    const json& plan = s.contains("plan") ? s["plan"] : json();
    static const std::pair<const char*, const char*> keys[] = {
        {"tp", "tp"}, {"pp", "pp"}, {"dp", "dp"}, {"cp", "cp"}, {"zero_stage", "zero"}, {"microbatch_size", "microbatch"},
        {"global_batch_size", "global batch"}, {"seq_length", "seq"}, {"schedule", "schedule"},
        {"virtual_stages", "virtual stages"}, {"recompute", "recompute"}, {"sequence_parallel", "seq. parallel"},
        {"precision", "precision"}};
    for (const auto& [k, label] : keys) o += fmt::format("<th>{}</th>", esc(label));
    o += "</tr>\n<tr>";
    for (const auto& [k, label] : keys) {
        std::string v = "-";
        if (plan.is_object() && plan.contains(k)) v = plan[k].is_string() ? plan[k].get<std::string>() : plan[k].dump();
        o += fmt::format("<td>{}</td>", esc(v));
    }
    o += "</tr></table>\n";

    // Headline figures.
    auto row = [&](const std::string& name, std::optional<double> sv, std::optional<double> mv, auto format) {
        std::string r = fmt::format("<tr><td>{}</td><td>{}</td>", esc(name), sv ? esc(format(*sv)) : "-");
        if (have_m) r += fmt::format("<td>{}</td><td>{}</td>", mv ? esc(format(*mv)) : "not measured", format_error(error_of(sv, mv)));
        return r + "</tr>\n";
    };
    o += "<table class=\"headline\"><tr><th></th><th>simulated</th>";
    if (have_m) o += "<th>measured</th><th>error</th>";
    o += "</tr>\n";
    const ComparedValue* step = c.row("step_time_s");
    const ComparedValue* mfu = c.row("mfu");
    const ComparedValue* peak = c.row("memory_GiB.peak");
    o += row("step time", step->simulated, step->measured, [](double v) { return fmt::format("{:.4g} s", v); });
    o += row("MFU", mfu->simulated, mfu->measured, [](double v) { return fmt::format("{:.3g}%", 100 * v); });
    o += row("tokens/s", number_at(s, {"tokens_per_s"}), have_m ? number_at(*in.measured, {"tokens_per_s"}) : std::nullopt,
             [](double v) { return fmt::format("{:.0f}", v); });
    o += row("peak memory per GPU", peak->simulated, peak->measured, [](double v) { return fmt::format("{:.3g} GiB", v); });
    o += "</table>\n";
    if (!c.verdict.empty()) o += fmt::format("<p class=\"verdict\">{}</p>\n", esc(c.verdict));
    if (s.contains("fits") && s["fits"].is_boolean() && !s["fits"].get<bool>())
        o += "<p class=\"verdict\">The simulated plan does not fit in GPU memory.</p>\n";
    return o + "</header>\n";
}

std::string comparison_table(const Comparison& c, bool have_m) {
    std::string o = "<table class=\"rows\"><tr><th></th><th>simulated</th>";
    if (have_m) o += "<th>measured</th><th>error</th><th>of total</th>";
    o += "<th>note</th></tr>\n";
    for (const auto& r : c.rows) {
        const bool sub = r.group != CompareGroup::headline;
        o += fmt::format("<tr{}><td>{}</td><td>{}</td>", sub ? " class=\"sub\"" : "", esc(r.name),
                         esc(value_text(r.simulated, r.unit, false, have_m)));
        if (have_m)
            o += fmt::format("<td>{}</td><td>{}</td><td>{}</td>", esc(value_text(r.measured, r.unit, true, true)),
                             format_error(r.error()), sub ? format_error(r.error_of_total()) : "");
        o += fmt::format("<td class=\"note\">{}</td></tr>\n", esc(r.note));
    }
    return o + "</table>\n";
}

}  // namespace

ReportInputs load_report_inputs(const ReportFiles& files) {
    ReportInputs in;
    in.files = files;
    in.simulated = read_json_file(files.simulated);
    check_kind(in.simulated, files.simulated, "simulation");
    if (!files.measured.empty()) {
        in.measured = read_json_file(files.measured);
        check_kind(*in.measured, files.measured, "measured");
    }
    if (!files.plan_result.empty()) {
        in.plan_result = read_json_file(files.plan_result);
        check_kind(*in.plan_result, files.plan_result, "plan result");
    }
    return in;
}

std::string render_report(const ReportInputs& in, const ReportOptions& options, ReportSummary* summary) {
    const std::string& sim_file = in.files.simulated;
    const bool have_m = in.measured.has_value();
    const Comparison c = have_m ? compare_results(in.simulated, sim_file, *in.measured, in.files.measured)
                                : simulated_components(in.simulated, sim_file);
    const json& s = in.simulated;
    const double sim_step = *c.row("step_time_s")->simulated;
    const double sim_recompute = number_at(s, {"time_s", "recompute"}).value_or(0.0);
    std::optional<double> capacity = number_at(s, {"cluster", "gpu", "memory_GiB"});
    const std::string gpu = string_at(s, {"cluster", "gpu", "name"});

    const SimulationResult resim = resimulate_with_trace(s, sim_file);
    const TimelineDrawing timeline = draw_timeline(resim, options.max_timeline_rects);

    std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
    o += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
    o += fmt::format("<title>tessel report: {}</title>\n", esc(c.model.empty() ? "simulation" : c.model));
    o += fmt::format("<style>{}</style>\n</head>\n<body>\n", kCss);
    o += header(in, c);

    o += "<section id=\"breakdown\">\n<h2>Step time: where it goes</h2>\n";
    o += fmt::format("<p class=\"caption\">Time on the rank that finishes last{}. ", have_m ? ", each side its own" : "");
    o += sim_recompute > 0 && have_m ? "The measured compute includes recomputation, which a run does not time apart. " : "";
    o += "Hover a segment for its value.</p>\n";
    o += draw_breakdown(c, sim_recompute);
    o += comparison_table(c, have_m);
    o += "</section>\n";

    o += "<section id=\"timeline\">\n<h2>Pipeline timeline (simulated)</h2>\n";
    o += fmt::format("<p class=\"caption\">One row per pipeline stage (its compute stream) and its communication "
                     "streams; the dashed line is the step's end. {}.</p>\n",
                     esc(timeline.caption));
    if (std::abs(resim.step_time_s - sim_step) > 0.005 * std::max(sim_step, 1e-12))
        o += fmt::format("<p class=\"note\">The timeline is re-simulated from the plan, model and cluster in {} with "
                         "{} and takes {:.4g} s, against the file's {:.4g} s: the file was simulated with other "
                         "options (--attention, --eager-elementwise, ...) or by another version.</p>\n",
                         esc(sim_file), s.contains("options") ? "the options it records" : "the default kernel options",
                         resim.step_time_s, sim_step);
    o += timeline.svg;
    o += "</section>\n";

    o += "<section id=\"memory\">\n<h2>Memory per rank</h2>\n";
    o += "<p class=\"caption\">The busiest rank by kind (simulated, and measured where the run breaks it out), "
         "then each measured rank's peak; the dashed line is the GPU's capacity.</p>\n";
    o += draw_memory(c, have_m ? &*in.measured : nullptr, in.files.measured, capacity, gpu);
    o += "</section>\n";

    if (in.plan_result) {
        const json& pr = *in.plan_result;
        o += "<section id=\"candidates\">\n<h2>Plan search: candidates</h2>\n";
        std::string stats;
        for (const char* k : {"considered", "pruned", "simulated"})
            if (auto v = number_at(pr, {k})) stats += fmt::format("{}{} {:.0f}", stats.empty() ? "" : ", ", k, *v);
        if (auto v = number_at(pr, {"search_s"})) stats += fmt::format(", search {:.3g} s", *v);
        o += fmt::format("<p class=\"caption\">{} ({}): step time against peak memory for each ranked candidate, "
                         "the winner labelled.</p>\n",
                         esc(in.files.plan_result), esc(stats));
        const json* first = pr["candidates"].is_array() && !pr["candidates"].empty() ? &pr["candidates"][0] : nullptr;
        // A search over another model or GPU ranks candidates that have nothing to do with this
        // run: refused, as compare refuses a measured run of another plan.
        if (first) {
            std::vector<std::string> mismatch;
            if (first->contains("model") && s.contains("model"))
                mismatch = model_differences((*first)["model"], s["model"], "searched", "simulated");
            const std::string searched_gpu = first->contains("cluster") ? gpu_name((*first)["cluster"]) : "";
            const std::string simulated_gpu = s.contains("cluster") ? gpu_name(s["cluster"]) : "";
            if (!searched_gpu.empty() && !simulated_gpu.empty() && searched_gpu != simulated_gpu)
                mismatch.push_back(
                    fmt::format("cluster.gpu.name (searched \"{}\", simulated \"{}\")", searched_gpu, simulated_gpu));
            if (!mismatch.empty()) {
                mismatch.front() = "candidates[0] " + mismatch.front();
                throw not_the_same_run(in.files.plan_result, sim_file, mismatch,
                                       "plan the model and cluster that were simulated");
            }
        }
        const std::optional<double> pr_capacity =
            first ? number_at(*first, {"cluster", "gpu", "memory_GiB"}) : std::nullopt;
        o += draw_candidates(pr, in.files.plan_result, s.contains("plan") ? s["plan"] : json(),
                             pr_capacity ? pr_capacity : capacity);
        o += "</section>\n";
    }

    if (s.contains("notes") && s["notes"].is_array() && !s["notes"].empty()) {
        o += "<section id=\"notes\">\n<h2>Simulator notes</h2>\n<ul>\n";
        for (const auto& n : s["notes"])
            if (n.is_string()) o += "<li>" + esc(n.get<std::string>()) + "</li>\n";
        o += "</ul>\n</section>\n";
    }
    o += fmt::format("<footer><p class=\"note\">Generated by tessel report from {}{}{}.</p></footer>\n", esc(sim_file),
                     have_m ? ", " + esc(in.files.measured) : "",
                     in.plan_result ? ", " + esc(in.files.plan_result) : "");
    o += "</body>\n</html>\n";

    if (summary) {
        summary->timeline_events = timeline.events;
        summary->timeline_rects = timeline.event_rects + timeline.recompute_rects;
        summary->timeline_merged = timeline.merge_gap_s > 0;
        summary->resimulated_step_s = resim.step_time_s;
        summary->bytes = o.size();
    }
    return o;
}

}  // namespace tessel
