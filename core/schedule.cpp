#include "core/schedule.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

int warmup_forwards(Schedule schedule, int pp, int rank, int m, int v, bool all_forwards_first_at_m_equal_pp) {
    if (schedule == Schedule::gpipe) return m * v;
    if (schedule == Schedule::one_f_one_b || v == 1) return std::min(pp - rank - 1, m);
    const int total = m * v;
    // Megatron-LM before 2024-11: with as many microbatches as stages, all forwards go first.
    if (m == pp && all_forwards_first_at_m_equal_pp) return total;
    return std::min((pp - rank - 1) * 2 + (v - 1) * pp, total);
}

std::vector<RankSchedule> pipeline_schedule(Schedule schedule, int pp, int m, int v, bool all_forwards_first_at_m_equal_pp) {
    if (pp < 1 || m < 1 || v < 1) throw InputError(fmt::format("pipeline schedule: pp {}, microbatches {}, virtual stages {} must be >= 1", pp, m, v));
    if (schedule != Schedule::interleaved) v = 1;
    if (schedule == Schedule::interleaved && v > 1 && m % pp != 0)
        throw InputError(fmt::format("interleaved schedule: microbatches ({}) must be a multiple of pp ({})", m, pp));
    std::vector<RankSchedule> out(pp);
    for (int r = 0; r < pp; ++r) {
        RankSchedule& s = out[r];
        if (schedule == Schedule::gpipe) {
            for (int i = 0; i < m; ++i) s.push_back({PipelineOp::forward, i, 0});
            for (int i = m - 1; i >= 0; --i) s.push_back({PipelineOp::backward, i, 0});
            continue;
        }
        // Virtual microbatch k -> (microbatch, chunk). Groups of pp microbatches run through each
        // chunk in turn; backward walks the chunks in reverse.
        auto fwd = [&](int k) {
            int in_round = k % (pp * v);
            return PipelineAction{PipelineOp::forward, (k / (pp * v)) * pp + in_round % pp, in_round / pp};
        };
        auto bwd = [&](int k) {
            int in_round = k % (pp * v);
            return PipelineAction{PipelineOp::backward, (k / (pp * v)) * pp + in_round % pp, v - 1 - in_round / pp};
        };
        const int total = m * v;
        const int warmup = warmup_forwards(schedule, pp, r, m, v, all_forwards_first_at_m_equal_pp);
        for (int k = 0; k < warmup; ++k) s.push_back(fwd(k));
        for (int k = 0; k < total - warmup; ++k) {
            s.push_back(fwd(k + warmup));
            s.push_back(bwd(k));
        }
        for (int k = total - warmup; k < total; ++k) s.push_back(bwd(k));
    }
    return out;
}

int max_in_flight(const RankSchedule& actions) {
    int live = 0, peak = 0;
    for (const auto& a : actions) {
        live += a.op == PipelineOp::forward ? 1 : -1;
        peak = std::max(peak, live);
    }
    return peak;
}

std::string to_string(const RankSchedule& actions) {
    std::string s;
    for (const auto& a : actions) {
        if (!s.empty()) s += ' ';
        s += fmt::format("{}{}", a.op == PipelineOp::forward ? 'F' : 'B', a.microbatch);
        if (a.chunk) s += fmt::format(".{}", a.chunk);
    }
    return s;
}

}  // namespace tessel
