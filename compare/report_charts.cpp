#include "compare/report_charts.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "compare/svg.h"
#include "core/errors.h"

namespace tessel {

namespace {

struct Segment {
    std::string label, cls;
    double value = 0;
};

struct Bar {
    std::string label;
    std::vector<Segment> segments;
    std::optional<double> marker;  // the side's step time or peak, drawn as a tick
    std::string marker_label;
};

Bar make_bar(std::string label, std::vector<Segment> segments) {
    Bar b;
    b.label = std::move(label);
    b.segments = std::move(segments);
    return b;
}

struct Category {
    std::string label, cls;
};

// Legend entries in first-seen order.
void add_category(std::vector<Category>& seen, const Segment& s) {
    for (const auto& c : seen)
        if (c.cls == s.cls) return;
    seen.push_back({s.label, s.cls});
}

// Horizontal stacked bars with a legend and a value axis; unit names the axis.
std::string stacked_bars(const std::vector<Bar>& bars, const std::string& unit, std::optional<double> capacity,
                         const std::string& capacity_label, const std::string& aria) {
    const double left = 190, plot_w = 860, right = 110, top = capacity ? 56 : 40, bar_h = bars.size() > 12 ? 14 : 26,
                 gap = bars.size() > 12 ? 6 : 14;
    double max = 0;
    for (const auto& b : bars) {
        double sum = 0;
        for (const auto& s : b.segments) sum += s.value;
        max = std::max({max, sum, b.marker.value_or(0)});
    }
    // A capacity far above every bar would squeeze them into a sliver: it is then named at the
    // right edge instead of drawn to scale.
    const bool capacity_on_scale = capacity && max >= 0.25 * *capacity;
    if (capacity_on_scale) max = std::max(max, *capacity);
    if (!(max > 0)) max = 1;
    const auto ticks = nice_ticks(max * 1.02, 8);
    const double axis_max = std::max(ticks.back(), max);
    const double scale = plot_w / axis_max;

    Svg svg;
    svg.width = left + plot_w + right;
    const double axis_y = top + bars.size() * (bar_h + gap) + 4;
    svg.height = axis_y + 40;

    std::vector<Category> legend;
    for (const auto& b : bars)
        for (const auto& s : b.segments)
            if (s.value > 0) add_category(legend, s);
    double lx = left;
    for (const auto& c : legend) {
        svg_rect(svg, lx, 10, 12, 12, c.cls);
        svg_text(svg, lx + 16, 20, c.label, "lg");
        lx += 26 + 7.5 * c.label.size();
    }

    double y = top;
    for (const auto& b : bars) {
        svg_text(svg, left - 8, y + bar_h / 2 + 4, b.label, "rl", "end");
        double x = left;
        for (const auto& s : b.segments) {
            if (!(s.value > 0)) continue;
            const double w = s.value * scale;
            svg_rect(svg, x, y, w, bar_h, s.cls, fmt::format("{}: {:.4g} {}", s.label, s.value, unit));
            x += w;
        }
        if (b.marker) {
            const double mx = left + *b.marker * scale;
            svg_line(svg, mx, y - 3, mx, y + bar_h + 3, "mark");
            svg_text(svg, std::min(mx + 4, left + plot_w), y + bar_h / 2 + 4, b.marker_label, "val");
        }
        y += bar_h + gap;
    }
    if (capacity_on_scale) {
        const double cx = left + *capacity * scale;
        svg_line(svg, cx, top - 8, cx, axis_y, "cap");
        svg_text(svg, cx - 4, top - 10, capacity_label, "capl", "end");
    } else if (capacity) {
        svg_text(svg, left + plot_w, top - 12, capacity_label + ", off this scale", "capl", "end");
    }
    svg_line(svg, left, axis_y, left + plot_w, axis_y, "axis");
    for (double t : ticks) {
        const double x = left + t * scale;
        svg_line(svg, x, axis_y, x, axis_y + 5, "axis");
        svg_text(svg, x, axis_y + 18, fmt::format("{:.4g}", t), "tick", "middle");
    }
    svg_text(svg, left + plot_w / 2, axis_y + 34, unit, "axl", "middle");
    return svg_element(svg, aria);
}

// The time rows of the comparison as segments of one side.
std::vector<Segment> time_segments(const Comparison& c, bool simulated, double sim_recompute_s) {
    struct Style {
        const char* key;
        const char* label;
        const char* cls;
    };
    static const Style styles[] = {
        {"time_s.compute", "compute", "x-compute"},
        {"time_s.tp_comm_exposed", "TP comm", "x-tp"},
        {"time_s.cp_comm_exposed", "CP comm", "x-cp"},
        {"time_s.bubble", "pipeline bubble", "x-bubble"},
        {"time_s.pp_comm_exposed", "PP comm", "x-pp"},
        {"time_s.bubble_and_pp_comm", "bubble + PP comm", "x-bubble"},
        {"time_s.dp_comm_exposed", "DP comm", "x-dp"},
        {"time_s.optimizer", "optimizer", "x-opt"},
        {"time_s.sync_wait", "waiting for other ranks", "x-wait"},
    };
    std::vector<Segment> out;
    for (const auto& row : c.rows) {
        if (row.group != CompareGroup::time) continue;
        const auto v = simulated ? row.simulated : row.measured;
        if (!v) continue;
        const Style* style = nullptr;
        for (const auto& s : styles)
            if (row.key == s.key) style = &s;
        const std::string label = style ? style->label : row.name, cls = style ? style->cls : "x-other";
        if (simulated && row.key == "time_s.compute" && sim_recompute_s > 0) {
            out.push_back({label, cls, std::max(0.0, *v - sim_recompute_s)});
            out.push_back({"recompute", "x-recompute", std::min(*v, sim_recompute_s)});
        } else {
            out.push_back({label, cls, *v});
        }
    }
    return out;
}


std::string plan_label(const json& p) {
    if (!p.is_object()) return "?";
    auto i = [&](const char* k) { return p.contains(k) && p[k].is_number() ? p[k].get<long long>() : 0LL; };
    std::string s = fmt::format("tp{} pp{} dp{}", i("tp"), i("pp"), i("dp"));
    if (i("cp") > 1) s += fmt::format(" cp{}", i("cp"));
    s += fmt::format(" zero{} mb{}", i("zero_stage"), i("microbatch_size"));
    if (i("virtual_stages") > 1) s += fmt::format(" v{}", i("virtual_stages"));
    if (p.contains("recompute") && p["recompute"].is_string() && p["recompute"] != "none")
        s += " rc-" + p["recompute"].get<std::string>();
    return s;
}

}  // namespace

std::string draw_breakdown(const Comparison& c, double sim_recompute_s) {
    std::vector<Bar> bars;
    const ComparedValue* step = c.row("step_time_s");
    Bar sim = make_bar("simulated", time_segments(c, true, sim_recompute_s));
    if (step && step->simulated) {
        sim.marker = step->simulated;
        sim.marker_label = fmt::format("step {:.4g} s", *step->simulated);
    }
    bars.push_back(sim);
    if (step && step->measured) {
        Bar meas = make_bar("measured", time_segments(c, false, 0));
        double sum = 0;
        for (const auto& s : meas.segments) sum += s.value;
        // What the run does not break out still belongs to its step.
        if (*step->measured - sum > 0.005 * *step->measured)
            meas.segments.push_back({"not broken out", "x-other", *step->measured - sum});
        meas.marker = step->measured;
        meas.marker_label = fmt::format("step {:.4g} s", *step->measured);
        bars.push_back(meas);
    }
    return stacked_bars(bars, "seconds", std::nullopt, "", "step time breakdown");
}

std::string draw_memory(const Comparison& c, const json* measured, const std::string& measured_file,
                        std::optional<double> capacity, const std::string& gpu_name) {
    static const char* kinds[] = {"weights", "gradients", "optimizer", "activations", "buffers"};
    auto kind_segments = [&](bool simulated, std::optional<double> peak) {
        std::vector<Segment> out;
        double sum = 0;
        for (const char* k : kinds) {
            const ComparedValue* r = c.row(std::string("memory_GiB.") + k);
            const auto v = r ? (simulated ? r->simulated : r->measured) : std::nullopt;
            if (!v) continue;
            out.push_back({k, std::string("y-") + k, *v});
            sum += *v;
        }
        if (peak && *peak - sum > 0.01 * *peak) out.push_back({"not attributed", "y-other", *peak - sum});
        return out;
    };
    const ComparedValue* peak = c.row("memory_GiB.peak");
    std::vector<Bar> bars;
    Bar sim = make_bar("simulated, busiest rank", kind_segments(true, std::nullopt));
    if (peak && peak->simulated) {
        sim.marker = peak->simulated;
        sim.marker_label = fmt::format("peak {:.3g} GiB", *peak->simulated);
    }
    bars.push_back(sim);

    std::vector<double> per_rank;
    if (measured && measured->contains("peak_memory_GiB") && !(*measured)["peak_memory_GiB"].is_null()) {
        const json& a = (*measured)["peak_memory_GiB"];
        if (!a.is_array()) throw input_error(measured_file, "peak_memory_GiB", "an array of GiB per rank", describe_json_value(a));
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_number() || a[i].get<double>() < 0)
                throw input_error(measured_file, fmt::format("peak_memory_GiB[{}]", i), "a number of GiB >= 0",
                                  describe_json_value(a[i]));
            per_rank.push_back(a[i].get<double>());
        }
    }
    if (peak && peak->measured) {
        const auto busiest = std::max_element(per_rank.begin(), per_rank.end());
        Bar meas = make_bar(busiest == per_rank.end()
                                ? std::string("measured, busiest rank")
                                : fmt::format("measured, busiest (rank {})", busiest - per_rank.begin()),
                            kind_segments(false, peak->measured));
        meas.marker = peak->measured;
        meas.marker_label = fmt::format("peak {:.3g} GiB", *peak->measured);
        bars.push_back(meas);
    }
    // Every rank's peak; a large world shows its spread instead.
    auto rank_bar = [](const std::string& label, double v) { return make_bar(label, {{"measured peak", "y-peak", v}}); };
    if (per_rank.size() <= 32) {
        for (std::size_t i = 0; i < per_rank.size(); ++i)
            bars.push_back(rank_bar(fmt::format("measured, rank {}", i), per_rank[i]));
    } else {
        std::vector<double> sorted = per_rank;
        std::sort(sorted.begin(), sorted.end());
        bars.push_back(rank_bar(fmt::format("measured, min of {} ranks", sorted.size()), sorted.front()));
        bars.push_back(rank_bar("measured, median rank", sorted[sorted.size() / 2]));
        bars.push_back(rank_bar("measured, max rank", sorted.back()));
    }
    const std::string cap_label =
        capacity ? fmt::format("capacity {:.4g} GiB{}", *capacity, gpu_name.empty() ? "" : " (" + gpu_name + ")") : "";
    return stacked_bars(bars, "GiB", capacity, cap_label, "memory per rank by kind");
}

std::string draw_candidates(const json& plan_result, const std::string& file, const json& simulated_plan,
                            std::optional<double> capacity) {
    struct Point {
        double memory = 0, step = 0;
        bool fits = true, is_simulated = false;
        std::string label;
    };
    ObjectReader pr(plan_result, file);
    const json& list = pr.raw("candidates");
    if (!list.is_array() || list.empty())
        throw input_error(file, "candidates", "a non-empty array of simulation results (tessel plan --json)",
                          describe_json_value(list));
    std::vector<Point> points;
    for (std::size_t i = 0; i < list.size(); ++i) {
        ObjectReader cr(list[i], file, fmt::format("candidates[{}]", i));
        Point p;
        p.step = cr.number("step_time_s", std::nullopt, 0.0, 1e300, false);
        p.memory = cr.object("memory_GiB").number("peak", std::nullopt, 0.0, 1e300, false);
        p.fits = cr.has("fits") ? cr.boolean("fits") : true;
        const json& plan = cr.has("plan") ? cr.raw("plan") : json();
        p.is_simulated = simulated_plan.is_object() && plan == simulated_plan;
        p.label = fmt::format("#{} {}", i + 1, plan_label(plan));
        points.push_back(std::move(p));
    }

    const double left = 80, top = 56, plot_w = 900, plot_h = 400, right = 90;
    double min_x = points[0].memory, max_x = 0, min_y = points[0].step, max_y = 0;
    for (const auto& p : points) {
        min_x = std::min(min_x, p.memory);
        max_x = std::max(max_x, p.memory);
        min_y = std::min(min_y, p.step);
        max_y = std::max(max_y, p.step);
    }
    const bool capacity_on_scale = capacity && max_x >= 0.25 * *capacity;
    if (capacity_on_scale) max_x = std::max(max_x, *capacity);
    // Axes start at zero unless the points crowd far from it (the tick labels say where they start).
    auto range = [](double lo, double hi, int target) {
        hi = std::max(hi, 1e-12);
        const double from = lo > 0.5 * hi ? lo - 0.1 * (hi - lo) - 0.02 * hi : 0.0;
        return nice_ticks(from, hi + 0.05 * (hi - from), target);
    };
    const auto xt = range(min_x, max_x, 8), yt = range(min_y, max_y, 6);
    const double x0 = xt.front(), y0 = yt.front();
    const double sx = plot_w / std::max(xt.back() - x0, max_x - x0), sy = plot_h / std::max(yt.back() - y0, max_y - y0);
    auto X = [&](double v) { return left + (v - x0) * sx; };
    auto Y = [&](double v) { return top + plot_h - (v - y0) * sy; };

    Svg svg;
    svg.width = left + plot_w + right;
    svg.height = top + plot_h + 50;
    // The legend lists only the marks the chart draws.
    const bool simulated_shown = std::any_of(points.begin(), points.end(), [](const Point& p) { return p.is_simulated; });
    const bool misfit_shown = std::any_of(points.begin(), points.end(), [](const Point& p) { return !p.fits; });
    double legend_x = left;
    auto legend = [&](double radius, const char* cls, const std::string& text, double width) {
        if (radius > 0) svg_circle(svg, legend_x + 6, 16, radius, cls);
        svg_text(svg, legend_x + (radius > 0 ? 16 + radius : 0), 20, text, "lg");
        legend_x += width;
    };
    legend(4, "pt", "candidate", 100);
    legend(6, "win", "winner (#1)", 120);
    if (simulated_shown) legend(8, "this", "the simulated plan", 170);
    else if (simulated_plan.is_object()) legend(0, "", "(the simulated plan is not among these candidates)", 330);
    if (misfit_shown) legend(4, "pt nofit", "does not fit", 110);

    for (double t : xt) {
        svg_line(svg, X(t), top, X(t), top + plot_h, "guide");
        svg_text(svg, X(t), top + plot_h + 18, fmt::format("{:.4g}", t), "tick", "middle");
    }
    for (double t : yt) {
        svg_line(svg, left, Y(t), left + plot_w, Y(t), "guide");
        svg_text(svg, left - 6, Y(t) + 4, fmt::format("{:.4g}", t), "tick", "end");
    }
    svg_line(svg, left, top + plot_h, left + plot_w, top + plot_h, "axis");
    svg_line(svg, left, top, left, top + plot_h, "axis");
    svg_text(svg, left + plot_w / 2, top + plot_h + 38, "peak memory per GPU (GiB)", "axl", "middle");
    svg_text(svg, 14, top - 14, "step time (s)", "axl");
    if (capacity_on_scale) {
        svg_line(svg, X(*capacity), top, X(*capacity), top + plot_h, "cap");
        svg_text(svg, X(*capacity) - 4, top + 12, fmt::format("capacity {:.4g} GiB", *capacity), "capl", "end");
    } else if (capacity) {
        svg_text(svg, left + plot_w, 20, fmt::format("capacity {:.4g} GiB, off this scale", *capacity), "capl", "end");
    }
    // Winner last so it is drawn on top.
    for (std::size_t i = points.size(); i-- > 0;) {
        const Point& p = points[i];
        const std::string title = fmt::format("{}: {:.4g} s, {:.4g} GiB{}", p.label, p.step, p.memory, p.fits ? "" : ", does not fit");
        if (p.is_simulated) svg_circle(svg, X(p.memory), Y(p.step), 9, "this");
        svg_circle(svg, X(p.memory), Y(p.step), i == 0 ? 6 : 4, i == 0 ? "win" : (p.fits ? "pt" : "pt nofit"), title);
    }
    const Point& w = points.front();
    const bool label_left = X(w.memory) > left + plot_w * 0.6;
    svg_text(svg, X(w.memory) + (label_left ? -10 : 10), Y(w.step) - 8,
             fmt::format("{}: {:.4g} s, {:.4g} GiB", w.label, w.step, w.memory), "wl", label_left ? "end" : "start");
    return svg_element(svg, "plan candidates: step time against peak memory");
}

}  // namespace tessel
