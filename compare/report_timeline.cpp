#include "compare/report_timeline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "compare/svg.h"
#include "core/errors.h"
#include "simulator/simulate.h"

namespace tessel {

SimulationResult resimulate_with_trace(const json& sim, const std::string& file) {
    ObjectReader s(sim, file);
    // Each must be an object (the message names the key); theirs name their place in the file.
    for (const char* key : {"model", "cluster", "plan"}) s.object(key);
    const ModelSpec m = parse_model(s.raw("model"), file + ": model");
    const ClusterSpec c = parse_cluster(s.raw("cluster"), file + ": cluster");
    const Plan p = parse_plan(s.raw("plan"), file + ": plan");
    validate_plan(p, m, 0, file + ": plan");
    // The stack it was priced with (a framework's, flags over it); a file from before simulate
    // recorded them is redrawn with the defaults.
    SimulateOptions o = s.has("options") ? parse_simulate_options(s.raw("options"), file) : SimulateOptions{};
    o.record_trace = true;
    return simulate(m, c, p, o);
}

namespace {

struct Row {
    std::string track, label;
    bool compute = false;
    double y = 0, height = 0;
};

// CSS classes: "c *" on compute streams, "m *" on communication streams (the tests count them).
std::string event_class(const TraceEvent& e, bool compute_row) {
    if (compute_row) {
        if (e.name == "optimizer") return "c o";
        if (!e.name.empty() && e.name[0] == 'B') return "c b";
        return "c f";
    }
    if (e.track.ends_with("tp comm")) return "m tp";
    if (e.track.ends_with("cp comm")) return "m cp";
    if (e.track.find("p2p") != std::string::npos) return "m pp";
    if (e.track.ends_with("dp comm")) return "m dp";
    return "m x";
}

struct Span {
    double start = 0, end = 0;
    std::size_t count = 1;
    const TraceEvent* first = nullptr;
};

struct Series {
    std::size_t row = 0;
    std::string cls;
    std::vector<const TraceEvent*> events;  // by start time
};

std::vector<Span> merge(const Series& s, double gap) {
    std::vector<Span> out;
    for (const TraceEvent* e : s.events) {
        const double end = e->start_s + e->duration_s;
        if (gap > 0 && !out.empty() && e->start_s - out.back().end <= gap) {
            out.back().end = std::max(out.back().end, end);
            ++out.back().count;
        } else {
            out.push_back({e->start_s, end, 1, e});
        }
    }
    return out;
}

std::size_t merged_count(const std::vector<Series>& all, double gap) {
    std::size_t n = 0;
    for (const auto& s : all) {
        if (gap <= 0) {
            n += s.events.size();
            continue;
        }
        double end = -1;
        bool any = false;
        for (const TraceEvent* e : s.events) {
            if (!any || e->start_s - end > gap) ++n;
            end = any ? std::max(end, e->start_s + e->duration_s) : e->start_s + e->duration_s;
            any = true;
        }
    }
    return n;
}

std::string time_label(double seconds, bool ms) { return ms ? fmt::format("{:.4g} ms", seconds * 1e3) : fmt::format("{:.4g} s", seconds); }

}  // namespace

TimelineDrawing draw_timeline(const SimulationResult& r, std::size_t max_rects) {
    TimelineDrawing d;
    d.events = r.trace.size();

    // Rows in stage order, each stage's compute stream above its communication streams.
    std::map<std::tuple<int, int, std::string>, std::size_t> row_of_key;
    for (const auto& e : r.trace) row_of_key.emplace(trace_track_order(e.track), 0);
    std::vector<Row> rows;
    std::map<std::string, std::size_t> row_of_track;
    for (auto& [key, index] : row_of_key) {
        index = rows.size();
        const bool compute = std::get<1>(key) == 0 && std::get<0>(key) != (1 << 30);
        // A stream's row sits under its stage's: its own name says enough.
        const std::string& track = std::get<2>(key);
        const std::size_t slash = track.find(" / ");
        rows.push_back({track, slash == std::string::npos ? track : track.substr(slash + 3), compute});
        row_of_track[std::get<2>(key)] = index;
    }

    // Events by row and kind, each series in start order.
    std::map<std::pair<std::size_t, std::string>, Series> by_series;
    double end_s = r.step_time_s;
    for (const auto& e : r.trace) {
        const std::size_t row = row_of_track[e.track];
        const std::string cls = event_class(e, rows[row].compute);
        Series& s = by_series[{row, cls}];
        s.row = row;
        s.cls = cls;
        s.events.push_back(&e);
        if (rows[row].compute) ++d.compute_events;
        end_s = std::max(end_s, e.start_s + e.duration_s);
    }
    std::vector<Series> series;
    for (auto& [key, s] : by_series) {
        std::stable_sort(s.events.begin(), s.events.end(),
                         [](const TraceEvent* a, const TraceEvent* b) { return a->start_s < b->start_s; });
        series.push_back(std::move(s));
    }

    // Layout: labels on the left, time to the right; compute rows taller than communication rows.
    const double left = 170, plot_w = 1000, top = 46, right = 20;
    const bool dense = rows.size() > 80;
    const double compute_h = dense ? 8 : 16, comm_h = dense ? 4 : 8, gap_h = dense ? 2 : 3;
    double y = top;
    for (auto& row : rows) {
        if (row.compute && &row != &rows.front()) y += gap_h * 2;  // a little air between stages
        row.y = y;
        row.height = row.compute ? compute_h : comm_h;
        y += row.height + gap_h;
    }
    const double axis_y = y + 4;
    Svg svg;
    svg.width = left + plot_w + right;
    svg.height = axis_y + 40;
    const double scale = end_s > 0 ? plot_w / end_s : 0;
    const bool ms = end_s < 2.0;

    // Recomputation runs at the start of each backward; the simulator times it per action but the
    // trace holds whole actions, so each backward shows the critical rank's share of its backward
    // time as recomputation.
    double backward_s = 0;
    const std::string critical_track = fmt::format("pp stage {}", r.critical_rank);
    for (const auto& e : r.trace)
        if (e.track == critical_track && !e.name.empty() && e.name[0] == 'B') backward_s += e.duration_s;
    const double recompute_share = backward_s > 0 ? std::min(1.0, r.time_s.recompute / backward_s) : 0.0;
    std::size_t backwards = 0;
    for (const auto& s : series)
        if (s.cls == "c b") backwards += s.events.size();

    // Merge only when there are too many rectangles to draw one per event.
    const std::size_t overlay = recompute_share > 0 ? backwards : 0;
    if (d.events + overlay > max_rects && scale > 0) {
        double gap = 1.0 / scale;
        while (merged_count(series, gap) > max_rects && gap < end_s * 4) gap *= 2;
        d.merge_gap_s = gap;
    }
    const bool merged = d.merge_gap_s > 0;
    const bool titles = (merged ? merged_count(series, d.merge_gap_s) : d.events) <= 4000;

    // Legend.
    struct Key {
        const char* cls;
        const char* label;
    };
    double lx = left;
    for (const Key& k : {Key{"f", "forward"}, Key{"b", "backward"}, Key{"r", "recompute"}, Key{"o", "optimizer"},
                         Key{"tp", "TP comm"}, Key{"cp", "CP comm"}, Key{"pp", "PP send"}, Key{"dp", "DP comm"}}) {
        svg_rect(svg, lx, 10, 12, 12, std::string("k ") + k.cls);
        svg_text(svg, lx + 16, 20, k.label, "lg");
        lx += 24 + 8 * std::string(k.label).size();
    }

    // Row labels and guide lines.
    for (const auto& row : rows) {
        if (dense && !row.compute) continue;  // too thin to label; the legend's colours tell them apart
        svg_text(svg, left - 6, row.y + row.height - (row.compute ? 4 : 0), row.label, row.compute ? "rl" : "rl sub", "end");
        svg_line(svg, left, row.y + row.height, left + plot_w, row.y + row.height, "guide");
    }

    // The events.
    for (const auto& s : series) {
        const Row& row = rows[s.row];
        for (const Span& sp : merge(s, d.merge_gap_s)) {
            const double x = left + sp.start * scale;
            const double w = std::max((sp.end - sp.start) * scale, 0.15);
            std::string title;
            if (titles)
                title = sp.count == 1 ? fmt::format("{} on {}: {} at {}", sp.first->name, row.track,
                                                    time_label(sp.end - sp.start, ms), time_label(sp.start, ms))
                                      : fmt::format("{} events on {} from {} to {}", sp.count, row.track,
                                                    time_label(sp.start, ms), time_label(sp.end, ms));
            svg_rect(svg, x, row.y, w, row.height, s.cls, title);
            ++d.event_rects;
            if (!merged && s.cls == "c b" && recompute_share > 0) {
                svg_rect(svg, x, row.y + row.height * 0.5, w * recompute_share, row.height * 0.5, "r");
                ++d.recompute_rects;
            }
        }
    }

    // Time axis.
    svg_line(svg, left, axis_y, left + plot_w, axis_y, "axis");
    for (double t : nice_ticks(end_s, 8)) {
        if (t > end_s * (1 + 1e-9)) break;  // the plot ends with the step
        const double x = left + t * scale;
        svg_line(svg, x, axis_y, x, axis_y + 5, "axis");
        svg_text(svg, x, axis_y + 18, ms ? svg_number(t * 1e3) : svg_number(t), "tick", "middle");
    }
    svg_text(svg, left + plot_w / 2, axis_y + 34, ms ? "time (ms)" : "time (s)", "axl", "middle");
    if (r.step_time_s > 0) {
        const double x = left + r.step_time_s * scale;
        svg_line(svg, x, top - 6, x, axis_y, "step");
    }

    d.svg = svg_element(svg, "pipeline timeline");
    d.caption = fmt::format("{} events simulated ({} on the stages' compute streams), {} rectangles drawn", d.events,
                            d.compute_events, d.event_rects + d.recompute_rects);
    if (merged)
        d.caption += fmt::format("; neighbouring events of one kind closer than {} are merged to keep the page small "
                                 "(hover a bar for its count), recomputation not shown separately",
                                 time_label(d.merge_gap_s, ms));
    else if (recompute_share > 0)
        d.caption += fmt::format("; the lower half of each backward's start shows recomputation, {:.0f}% of the "
                                 "backward time on the critical rank",
                                 100 * recompute_share);
    return d;
}

}  // namespace tessel
