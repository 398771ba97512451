#include "planner/budget_plan.h"

#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "core/accounting.h"
#include "core/errors.h"
#include "planner/model_shape.h"

namespace tessel {

BudgetPlan plan_for_budget(const ClusterSpec& c, const ComputeBudget& b, int global_batch_size, int seq_length,
                           const SearchOptions& o, std::optional<Precision> requested) {
    if ((b.days > 0) == (b.gpu_hours > 0)) throw InputError("budget: give exactly one of --days and --gpu-hours, positive");
    // The budget's compute is what the winning plan does with it. D days are spent in full only by
    // the fastest plan on the cluster (another objective's winner may leave most GPUs idle: a 13B
    // model on 16 of 1024 GPUs for 30 days); GPU-hours by the plan with the most tokens per GPU-hour,
    // which the time and tokens-per-dollar objectives choose, not the memory one.
    if (b.days > 0 && o.objective != Objective::time)
        throw InputError(fmt::format("--objective {}: --days sizes a model for the whole cluster's days, which only "
                                     "--objective time spends; give --gpu-hours with --objective tokens-per-dollar",
                                     to_string(o.objective)));
    if (b.gpu_hours > 0 && o.objective == Objective::memory)
        throw InputError("--objective memory: --gpu-hours sizes a model for the tokens the budget buys, which the "
                         "least-memory plan does not maximise; give --objective time or tokens-per-dollar");
    const double gpus = c.num_gpus();
    // The wall-clock seconds the budget buys on `world` GPUs: the days whatever the GPU count, or
    // the GPU-hours spread over the GPUs the plan uses (the tokens-per-dollar objective may use
    // fewer than the cluster has).
    auto seconds_on = [&](double world) { return b.days > 0 ? b.days * 86400.0 : b.gpu_hours * 3600.0 / world; };
    const int seq = seq_length > 0 ? seq_length : 4096;
    const Precision precision = requested.value_or(default_precision(c.gpu));

    BudgetPlan out;
    double flops = gpus * c.gpu.peak(precision) * 1e12 * kInitialMfuGuess * seconds_on(gpus);
    double parameters = compute_optimal(flops).parameters;
    // The fixed point N = optimal(6 N tps(N) seconds) is bracketed as the rounds go: a round whose
    // optimum lies above its size raises the lower bound, below it lowers the upper one. Where the
    // winner's GPU count changes from round to round the plain iteration can swing between two
    // sizes; a next size outside the bracket is replaced by the bracket's geometric middle.
    double lower = 0, upper = std::numeric_limits<double>::infinity();
    // Each shape tried, by parameter count: its plans, its budget's FLOPs and the optimum they give.
    struct Tried {
        ModelSpec model;
        SearchResult search;
        double flops = 0, next = 0;
    };
    std::map<double, Tried> tried;
    const double smallest_shape = double(count_parameters(llama_style_model(0, seq)).total);
    const double largest_shape = largest_llama_style_parameters(seq);
    for (int round = 0; round < kBudgetRounds; ++round) {
        if (parameters > largest_shape) {
            const bool by_days = b.days > 0;
            throw InputError(fmt::format(
                "{} {}: its compute-optimal model has {:.3g} parameters, more than the largest shape tessel plans "
                "({:.3g} parameters: width 65536, {} layers, the most a model file may have): give a smaller budget",
                by_days ? "--days" : "--gpu-hours", by_days ? b.days : b.gpu_hours, parameters, largest_shape,
                kMaxNumLayers));
        }
        out.model = llama_style_model(parameters, seq);
        const double n = double(count_parameters(out.model).total);
        const PlanRequest req = complete_request(out.model, c, global_batch_size, seq, precision);
        out.search = search_plans(out.model, c, req, o);
        const SimulationResult& win = out.search.best.front();
        // The budget trains tps x seconds tokens of this model: C = 6 N D.
        flops = 6.0 * n * win.tokens_per_s * seconds_on(win.plan.world_size());
        const double next = compute_optimal(flops).parameters;
        out.rounds.push_back(fmt::format("round {}: {} ({:.2f}B parameters) reaches {:.0f} tokens/s on {} GPUs -> budget "
                                         "{:.3g} FLOPs, optimal size {:.2f}B",
                                         round + 1, out.model.name, n / 1e9, win.tokens_per_s, win.plan.world_size(),
                                         flops, next / 1e9));
        if (std::abs(next - n) < 0.02 * n) {
            out.settled = true;
            break;
        }
        // The next size rounds back to this shape: settled, unless this is the smallest shape and the
        // budget asks for less, which it would overrun: say so, with what the smallest one needs.
        const bool same_shape = double(count_parameters(llama_style_model(next, seq)).total) == n;
        if (same_shape && !(n == smallest_shape && next < n)) {
            out.settled = true;
            break;
        }
        if (same_shape) {
            const double seconds = chinchilla_tokens(n) / win.tokens_per_s;
            const bool by_days = b.days > 0;
            throw InputError(fmt::format(
                "{} {}: its compute-optimal model has {:.3g} parameters, fewer than the smallest tessel shapes ({}, "
                "{:.2f}B), whose {:.3g} Chinchilla tokens take {} on {} GPUs: give at least that, or --model with --tokens",
                by_days ? "--days" : "--gpu-hours", by_days ? b.days : b.gpu_hours, next, out.model.name, n / 1e9,
                chinchilla_tokens(n),
                by_days ? fmt::format("{:.3g} days", seconds / 86400.0)
                        : fmt::format("{:.3g} GPU-hours", seconds * win.plan.world_size() / 3600.0),
                win.plan.world_size()));
        }
        tried[n] = {out.model, out.search, flops, next};
        if (next > n) lower = std::max(lower, n);
        else upper = std::min(upper, n);
        parameters = next;
        if (lower > 0 && std::isfinite(upper) && (next <= lower || next >= upper)) parameters = std::sqrt(lower * upper);
        // The bracket holds no shape not yet tried (shapes come in steps): the rounds would repeat. Keep
        // whichever bracketing shape lies nearer its own optimum, in ratio.
        const double candidate = double(count_parameters(llama_style_model(parameters, seq)).total);
        if (lower > 0 && std::isfinite(upper) && tried.count(candidate)) {
            auto off = [&](double size) { return std::abs(std::log(tried.at(size).next / size)); };
            const double kept = off(lower) <= off(upper) ? lower : upper;
            const Tried& t = tried.at(kept);
            out.model = t.model;
            out.search = t.search;
            flops = t.flops;
            out.rounds.push_back(fmt::format("no shape lies between {:.2f}B and {:.2f}B: kept {} ({:.2f}B), its optimum "
                                             "{:.2f}B the nearer",
                                             lower / 1e9, upper / 1e9, t.model.name, kept / 1e9, t.next / 1e9));
            out.settled = true;
            break;
        }
    }
    out.optimal = compute_optimal(flops);
    out.approach3 = compute_optimal_approach3(flops);
    out.budget = budget_for_tokens(chinchilla_tokens(double(count_parameters(out.model).total)), out.search.best.front(),
                                   c.price_per_gpu_hour);
    return out;
}

double budget_share(const BudgetPlan& p, const ComputeBudget& asked) {
    return asked.days > 0 ? p.budget.days / asked.days : p.budget.gpu_hours / asked.gpu_hours;
}

json to_json(const BudgetPlan& p, const ComputeBudget& asked) {
    auto split = [](const ComputeOptimal& o) {
        return json{{"flops", o.flops}, {"parameters", o.parameters}, {"tokens", o.tokens}};
    };
    const double parameters = double(count_parameters(p.model).total);
    return json{{"asked", asked.days > 0 ? json{{"days", asked.days}} : json{{"gpu_hours", asked.gpu_hours}}},
                {"settled", p.settled},
                {"rounds", p.rounds},
                {"compute_optimal", split(p.optimal)},
                {"approach3", split(p.approach3)},
                {"parameters", parameters},
                {"predicted_loss", chinchilla_loss(parameters, p.budget.tokens)},
                {"budget_share", budget_share(p, asked)}};
}

}  // namespace tessel
