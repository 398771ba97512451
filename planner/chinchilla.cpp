#include "planner/chinchilla.h"

#include <cmath>

namespace tessel {

double chinchilla_tokens(double parameters) { return kChinchillaTokensPerParameter * parameters; }

double chinchilla_loss(double n, double d) {
    const ChinchillaLossFit f;
    return f.E + f.A / std::pow(n, f.alpha) + f.B / std::pow(d, f.beta);
}

ComputeOptimal compute_optimal(double flops) {
    ComputeOptimal o;
    o.flops = flops;
    o.parameters = std::sqrt(flops / (6.0 * kChinchillaTokensPerParameter));
    o.tokens = kChinchillaTokensPerParameter * o.parameters;
    return o;
}

ComputeOptimal compute_optimal_approach3(double flops) {
    const ChinchillaLossFit f;
    const double a = f.beta / (f.alpha + f.beta), b = f.alpha / (f.alpha + f.beta);
    const double g = std::pow(f.alpha * f.A / (f.beta * f.B), 1.0 / (f.alpha + f.beta));
    ComputeOptimal o;
    o.flops = flops;
    o.parameters = g * std::pow(flops / 6.0, a);
    o.tokens = std::pow(flops / 6.0, b) / g;
    return o;
}

TrainingBudget budget_for_tokens(double tokens, const SimulationResult& r, double price_per_gpu_hour) {
    TrainingBudget b;
    const double tokens_per_step = double(r.plan.global_batch_size) * r.plan.seq_length;
    b.tokens = tokens;
    b.steps = std::ceil(tokens / tokens_per_step);
    const double seconds = b.steps * r.step_time_s;
    b.days = seconds / 86400.0;
    b.gpu_hours = seconds * r.plan.world_size() / 3600.0;
    b.cost = b.gpu_hours * price_per_gpu_hour;
    return b;
}

json to_json(const TrainingBudget& b) {
    // Steps are whole; a cluster without price_per_gpu_hour has no cost (null), not a free run.
    return json{{"tokens", b.tokens},
                {"steps", b.steps <= 9007199254740992.0 ? json((long long)b.steps) : json(b.steps)},  // exact to 2^53
                {"days", b.days},
                {"gpu_hours", b.gpu_hours},
                {"cost", b.cost > 0 ? json(b.cost) : json(nullptr)}};
}

}  // namespace tessel
