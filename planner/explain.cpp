#include "planner/explain.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace tessel {

namespace {

double exposed_comm(const TimeBreakdown& t) {
    return t.tp_comm_exposed + t.cp_comm_exposed + t.pp_comm_exposed + t.dp_comm_exposed;
}

// "full", or "full (first 3 layers of each chunk)" under block recompute.
std::string recompute_words(const Plan& p) {
    if (p.recompute == Recompute::full && p.recompute_layers > 0)
        return fmt::format("full (first {} layers of each chunk)", p.recompute_layers);
    return to_string(p.recompute);
}

std::string plan_cell(const Plan& p) {
    std::string s = fmt::format("tp{} pp{} dp{}", p.tp, p.pp, p.dp);
    if (p.cp > 1) s += fmt::format(" cp{}", p.cp);
    s += fmt::format(" z{} mb{}", p.zero_stage, p.microbatch_size);
    if (p.virtual_stages > 1) s += fmt::format(" v{}", p.virtual_stages);
    if (p.sequence_parallel) s += " sp";
    if (p.recompute != Recompute::none) s += p.recompute == Recompute::full ? " rc-full" : " rc-sel";
    if (p.recompute == Recompute::full && p.recompute_layers > 0) s += fmt::format("{}", p.recompute_layers);
    if (p.lm_head_layers > 0) s += fmt::format(" head{}", p.lm_head_layers);
    return s;
}

// The dimensions in which b differs from a, as "v24 vs v12".
std::vector<std::string> plan_differences(const Plan& a, const Plan& b) {
    std::vector<std::string> out;
    auto num = [&](const char* name, int x, int y) {
        if (x != y) out.push_back(fmt::format("{} {} vs {}", name, x, y));
    };
    num("TP", a.tp, b.tp);
    num("PP", a.pp, b.pp);
    num("DP", a.dp, b.dp);
    num("CP", a.cp, b.cp);
    num("ZeRO stage", a.zero_stage, b.zero_stage);
    num("microbatch", a.microbatch_size, b.microbatch_size);
    num("virtual stages", a.virtual_stages, b.virtual_stages);
    num("layers the LM head counts as in the pipeline split", a.lm_head_layers, b.lm_head_layers);
    if (a.sequence_parallel != b.sequence_parallel)
        out.push_back(fmt::format("sequence parallel {} vs {}", a.sequence_parallel ? "on" : "off",
                                  b.sequence_parallel ? "on" : "off"));
    if (a.recompute != b.recompute || a.recompute_layers != b.recompute_layers)
        out.push_back(fmt::format("recompute {} vs {}", recompute_words(a), recompute_words(b)));
    if (a.placement != b.placement) out.push_back(fmt::format("placement {} vs {}", a.placement, b.placement));
    return out;
}

// Seconds to the millisecond, and to three significant figures below 10 ms, where a small
// model's whole gap would read "0.000 s".
std::string seconds_text(double s, bool sign = false) {
    if (std::abs(s) >= 0.01 || s == 0.0) return sign ? fmt::format("{:+.3f} s", s) : fmt::format("{:.3f} s", s);
    return sign ? fmt::format("{:+.3g} s", s) : fmt::format("{:.3g} s", s);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
    return s;
}

}  // namespace

std::string format_search_stats(const SearchResult& r) {
    std::string worlds;
    if (r.world_sizes.size() > 1) {
        std::vector<std::string> w;
        for (int n : r.world_sizes) w.push_back(std::to_string(n));
        worlds = fmt::format(" over {} GPUs", join(w, "/"));
    }
    return fmt::format(
        "considered {:L} plans{}: {:L} broke a rule, {:L} pruned by memory, {:L} pruned by the bound (they cannot beat "
        "the K-th best), {:L} simulated; {:.2f} s",
        r.considered, worlds, r.rejected, r.pruned_memory, r.pruned_bound, r.simulated, r.search_s);
}

std::string format_ranking_table(const SearchResult& r, const ClusterSpec& c, Objective o) {
    const bool dollars = o == Objective::tokens_per_dollar;
    std::string s = fmt::format("{:>2}  {:<36} {:<12} {:>9} {:>6} {:>14} {:>14} {:>9}", "#", "plan", "placement",
                                "step (s)", "MFU", "bubble (s)", "exposed comm", "peak GiB");
    if (dollars) s += fmt::format(" {:>5} {:>12}", "GPUs", "tokens/$");
    s += "\n";
    int i = 0;
    for (const auto& x : r.best) {
        const double step = x.step_time_s;
        s += fmt::format("{:>2}  {:<36} {:<12} {:>9.3f} {:>5.1f}% {:>7.3f} ({:>4.1f}%) {:>7.3f} ({:>4.1f}%) {:>9.1f}", ++i,
                         plan_cell(x.plan), x.plan.placement, step, 100 * x.mfu, x.time_s.bubble,
                         100 * x.time_s.bubble / step, exposed_comm(x.time_s), 100 * exposed_comm(x.time_s) / step,
                         x.memory_GiB.peak);
        if (dollars) s += fmt::format(" {:>5} {:>12.0f}", x.plan.world_size(), tokens_per_dollar(x, c.price_per_gpu_hour));
        s += "\n";
    }
    return s;
}

std::string explain_winner(const SearchResult& r, Objective o) {
    if (r.best.empty()) return "";
    if (r.best.size() < 2) {
        // With --top 1 the search keeps one plan and prunes against it, so there is no runner-up
        // to compare with even when many fit.
        if (r.simulated > 1 || r.pruned_bound > 0)
            return "it is the best of the plans that fit; --top 2 or more compares it with the runner-up.";
        return "only one plan fits, so it wins by default.";
    }
    const SimulationResult& a = r.best[0];
    const SimulationResult& b = r.best[1];
    std::string s;
    const auto diffs = plan_differences(a.plan, b.plan);
    if (o == Objective::memory) {
        // A few MiB apart would read "0.00 GiB less".
        const double less = b.memory_GiB.peak - a.memory_GiB.peak;
        s = fmt::format("#1 needs {:.2f} GiB per GPU, {} less than #2", a.memory_GiB.peak,
                        less < 0.1 ? fmt::format("{:.1f} MiB", less * 1024) : fmt::format("{:.2f} GiB", less));
    } else if (o == Objective::tokens_per_dollar && a.plan.world_size() != b.plan.world_size()) {
        s = fmt::format("#1 costs {:.1f} GPU-seconds per step on {} GPUs against #2's {:.1f} on {}",
                        a.step_time_s * a.plan.world_size(), a.plan.world_size(), b.step_time_s * b.plan.world_size(),
                        b.plan.world_size());
    } else if (b.step_time_s - a.step_time_s < 1e-4 * b.step_time_s) {
        s = fmt::format("#1 ties with #2 (within 0.01% of {} per step) and is listed first", seconds_text(a.step_time_s));
        if (a.memory_GiB.peak < b.memory_GiB.peak) s += " for needing less memory";
    } else {
        const double gap = b.step_time_s - a.step_time_s;
        s = fmt::format("#1 is {} ({:.2f}%) faster per step than #2", seconds_text(gap), 100 * gap / b.step_time_s);
    }
    s += diffs.empty() ? "." : fmt::format(" ({}).", join(diffs, ", "));

    // Components of the step, #1 minus #2: negative = where #1 saves time.
    struct Part {
        const char* name;
        double delta;
    };
    const TimeBreakdown& x = a.time_s;
    const TimeBreakdown& y = b.time_s;
    std::vector<Part> parts = {{"compute", x.compute - y.compute},
                               {"recompute", x.recompute - y.recompute},
                               {"pipeline bubble", x.bubble - y.bubble},
                               {"exposed TP comm", x.tp_comm_exposed - y.tp_comm_exposed},
                               {"exposed CP comm", x.cp_comm_exposed - y.cp_comm_exposed},
                               {"exposed PP comm", x.pp_comm_exposed - y.pp_comm_exposed},
                               {"exposed DP comm", x.dp_comm_exposed - y.dp_comm_exposed},
                               {"optimizer", x.optimizer - y.optimizer}};
    std::sort(parts.begin(), parts.end(), [](const Part& p, const Part& q) { return std::abs(p.delta) > std::abs(q.delta); });
    std::vector<std::string> lines;
    for (const Part& p : parts) {
        if (std::abs(p.delta) < 1e-4 * b.step_time_s || lines.size() >= 4) continue;
        lines.push_back(fmt::format("{} {}", p.name, seconds_text(p.delta, true)));
    }
    if (!lines.empty()) s += " Seconds per step, #1 minus #2: " + join(lines, ", ") + ".";
    if (o != Objective::memory && a.memory_GiB.peak != b.memory_GiB.peak)
        s += fmt::format(" Peak memory {:.1f} vs {:.1f} GiB.", a.memory_GiB.peak, b.memory_GiB.peak);
    return s;
}

}  // namespace tessel
