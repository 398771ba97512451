#include "executor/calibrate_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace tessel {

namespace {

// The simulator's attention constants (compute_cost.cpp): query/key block, the head dim at which
// the FlashAttention-2 rate halves per step, a query block's fixed cost in key-block iterations.
constexpr double kAttentionBlock = 128.0;
constexpr double kAttentionHeadDimHalf = 16.0;
constexpr double kFlash2BlockOverhead = 1.5;

// max(a, b) / min(a, b) - 1: the error of a prediction whichever side it falls on.
double ratio_error(double predicted, double measured) {
    if (predicted <= 0 || measured <= 0) return 0;
    return std::max(predicted, measured) / std::min(predicted, measured) - 1.0;
}

double geometric_mean_error(const std::vector<std::pair<double, double>>& predicted_measured) {
    if (predicted_measured.empty()) return 0;
    double s = 0;
    for (auto [p, m] : predicted_measured) s += std::log1p(ratio_error(p, m));
    return std::expm1(s / double(predicted_measured.size()));
}

// Seconds left for the work itself once the fixed cost is taken off (never below half the time,
// so that a launch cost measured on an idle moment cannot eat a whole kernel).
double work_seconds(double seconds, double fixed) { return std::max(seconds - fixed, 0.5 * seconds); }

void fit_gemm(const KernelMeasurements& k, FittedProfile& f) {
    std::vector<const GemmSample*> g;
    for (const auto& s : k.gemms)
        if (s.seconds > 0) g.push_back(&s);
    if (g.empty() || f.peak_flops <= 0) return;
    auto predict = [&](const GemmSample& s, double eff, double overhead) {
        return s.flops() / (f.peak_flops * eff * s.k / (s.k + overhead)) + f.kernel_launch_s;
    };
    double best_sse = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= 240; ++i) {
        const double overhead = i == 0 ? 0.0 : std::pow(10.0, 4.0 * (i - 1) / 239.0);  // 1 .. 10^4 elements of K
        // For a fixed overhead, log(eff) is the mean of the per-sample logs (closed form).
        double log_eff = 0;
        for (const GemmSample* s : g)
            log_eff += std::log(s->flops() * (s->k + overhead) / s->k / f.peak_flops /
                                work_seconds(s->seconds, f.kernel_launch_s));
        const double eff = std::min(1.0, std::exp(log_eff / double(g.size())));
        double sse = 0;
        for (const GemmSample* s : g) sse += std::pow(std::log(predict(*s, eff, overhead) / s->seconds), 2);
        if (sse < best_sse) {
            best_sse = sse;
            f.gemm_max_efficiency = eff;
            f.gemm_k_overhead = overhead;
        }
    }
    std::vector<std::pair<double, double>> pm;
    for (const GemmSample* s : g) pm.push_back({predict(*s, f.gemm_max_efficiency, f.gemm_k_overhead), s->seconds});
    f.gemm_error = geometric_mean_error(pm);
}

// How often each streaming kernel runs in the mix the efficiency is fitted to: one GPT layer and
// one Llama layer forward and backward (two norms each way; the four residual adds and residual-
// gradient sums of each layer), one embedding, one loss and one optimizer step over a layer. The
// kernels differ widely in bytes per second (an add streams, GeLU and exp compute), so the mix
// decides what one efficiency reproduces: the total of a layer's streaming kernels.
double mix_weight(const std::string& kernel) {
    if (kernel.starts_with("layernorm") || kernel.starts_with("rmsnorm")) return 2;
    if (kernel == "residual_add") return 8;
    return 1;
}

void fit_streaming(const KernelMeasurements& k, FittedProfile& f) {
    double bytes = 0, seconds = 0;
    for (const auto& s : k.streaming) {
        bytes += mix_weight(s.name) * s.bytes;
        seconds += mix_weight(s.name) * work_seconds(s.seconds, f.kernel_launch_s);
    }
    if (bytes <= 0 || seconds <= 0 || f.memory_bandwidth_Bps <= 0) return;
    f.memory_bandwidth_efficiency = std::clamp(bytes / seconds / f.memory_bandwidth_Bps, 1e-3, 1.0);
    // Each kernel's own efficiency: the geometric mean over its shapes, in first-seen order.
    std::vector<std::pair<std::string, std::pair<double, int>>> log_sum;
    for (const auto& s : k.streaming) {
        const double seconds_of_work = work_seconds(s.seconds, f.kernel_launch_s);
        if (s.bytes <= 0 || seconds_of_work <= 0) continue;
        auto it = std::find_if(log_sum.begin(), log_sum.end(), [&](const auto& e) { return e.first == s.name; });
        if (it == log_sum.end()) it = log_sum.insert(log_sum.end(), {s.name, {0.0, 0}});
        it->second.first += std::log(s.bytes / seconds_of_work / f.memory_bandwidth_Bps);
        ++it->second.second;
    }
    f.streaming_table.clear();
    for (const auto& [name, sum] : log_sum)
        f.streaming_table.push_back({name, std::clamp(std::exp(sum.first / sum.second), 1e-3, 100.0)});
    std::vector<std::pair<double, double>> pm;
    for (const auto& s : k.streaming) {
        double eff = f.memory_bandwidth_efficiency;
        for (const auto& [name, e] : f.streaming_table)
            if (name == s.name) eff = e;
        pm.push_back({s.bytes / (f.memory_bandwidth_Bps * eff) + f.kernel_launch_s, s.seconds});
    }
    f.streaming_error = geometric_mean_error(pm);
}

void fit_attention(const KernelMeasurements& k, FittedProfile& f) {
    if (k.attention.empty() || f.peak_flops <= 0) return;
    double log_fwd = 0, log_bwd = 0;
    for (const auto& a : k.attention) {
        const double flops = simulator_attention_forward_flops(a.batch_heads, a.seq, a.head_dim);
        const double ramp = simulator_attention_ramp(a.batch_heads, a.seq, a.head_dim, f.sm_count);
        log_fwd += std::log(flops / work_seconds(a.forward_seconds, f.kernel_launch_s) / f.peak_flops / ramp);
        log_bwd += std::log(2.5 * flops / work_seconds(a.backward_seconds, 2 * f.kernel_launch_s) / f.peak_flops / ramp);
    }
    const double n = double(k.attention.size());
    f.attention_forward_fit = std::exp(log_fwd / n);
    f.attention_backward_fit = std::exp(log_bwd / n);
    f.attention_forward_efficiency = std::min(1.0, f.attention_forward_fit);
    f.attention_backward_efficiency = std::min(1.0, f.attention_backward_fit);
    std::vector<std::pair<double, double>> pm;
    for (const auto& a : k.attention) {
        const double flops = simulator_attention_forward_flops(a.batch_heads, a.seq, a.head_dim);
        const double rate = f.peak_flops * simulator_attention_ramp(a.batch_heads, a.seq, a.head_dim, f.sm_count);
        pm.push_back({flops / (rate * f.attention_forward_efficiency) + f.kernel_launch_s, a.forward_seconds});
        pm.push_back({2.5 * flops / (rate * f.attention_backward_efficiency) + 2 * f.kernel_launch_s, a.backward_seconds});
    }
    f.attention_error = geometric_mean_error(pm);
}

// Terms of the simulator's alpha-beta model for one collective on n ranks (comm_cost.cpp): the
// bus-bandwidth factor of S and the number of neighbour steps (ring all-reduce 2(n-1),
// all-gather and reduce-scatter n-1, a send 1).
double hops(Collective op, int n) {
    switch (op) {
        case Collective::all_reduce: return 2.0 * (n - 1);
        case Collective::send_recv: return 1.0;
        default: return double(n - 1);
    }
}

// Least squares of A x = 1 (rows already divided by the measured time, so each sample's relative
// error counts alike) over the columns `use`; unused columns stay 0.
std::array<double, 3> solve_relative(const std::vector<std::array<double, 3>>& rows, std::array<bool, 3> use) {
    std::array<std::array<double, 4>, 3> m{};
    for (const auto& r : rows)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                m[i][j] += use[i] && use[j] ? r[i] * r[j] : 0.0;
                if (j == 0) m[i][3] += use[i] ? r[i] : 0.0;
            }
    for (int i = 0; i < 3; ++i)
        if (!use[i]) m[i][i] = 1.0;  // x_i = 0
    for (int c = 0; c < 3; ++c) {  // Gaussian elimination with partial pivoting
        int p = c;
        for (int r = c + 1; r < 3; ++r)
            if (std::abs(m[r][c]) > std::abs(m[p][c])) p = r;
        std::swap(m[c], m[p]);
        if (std::abs(m[c][c]) < 1e-300) return {0, 0, 0};
        for (int r = 0; r < 3; ++r) {
            if (r == c) continue;
            const double k = m[r][c] / m[c][c];
            for (int j = c; j < 4; ++j) m[r][j] -= k * m[c][j];
        }
    }
    return {m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]};
}

void fit_link(const std::vector<CollectiveSample>& c, FittedProfile& f) {
    std::vector<std::array<double, 3>> rows;
    for (const auto& s : c)
        if (s.seconds > 0 && s.ranks > 1)
            rows.push_back({bus_bandwidth_factor(s.op, s.ranks) * s.bytes / s.seconds, hops(s.op, s.ranks) / s.seconds,
                            1.0 / s.seconds});
    if (rows.empty()) return;
    // x = (seconds per bus byte, hop latency, call latency), none negative: drop a latency term
    // that comes out negative and fit again.
    // Samples of one collective on one group size cannot tell the hop term from the call term
    // (the matrix is singular): then the hop term goes first.
    std::array<bool, 3> use{true, true, true};
    std::array<double, 3> x = solve_relative(rows, use);
    for (int i : {1, 2})
        if (x[i] < 0 || x[0] <= 0) {
            use[i] = false;
            x = solve_relative(rows, use);
        }
    if (x[0] <= 0) return;  // no bandwidth term: nothing sensible to write
    f.has_link = true;
    f.link_bandwidth_Bps = 1.0 / x[0];
    f.hop_latency_s = std::max(0.0, x[1]);
    f.collective_latency_s = std::max(0.0, x[2]);
    std::vector<std::pair<double, double>> pm;
    for (const auto& s : c)
        pm.push_back({bus_bandwidth_factor(s.op, s.ranks) * s.bytes / f.link_bandwidth_Bps +
                          hops(s.op, s.ranks) * f.hop_latency_s + f.collective_latency_s,
                      s.seconds});
    f.collective_error = geometric_mean_error(pm);
}

}  // namespace

double simulator_attention_forward_flops(double batch_heads, double seq, double head_dim) {
    const double nb = std::max(1.0, std::ceil(seq / kAttentionBlock));
    return 4.0 * batch_heads * seq * seq * head_dim * (nb + 1.0) / (2.0 * nb);
}

double simulator_attention_wave_fill(double batch_heads, double seq, int sm_count) {
    const double sms = std::max(1, sm_count);
    const double blocks = batch_heads * std::ceil(seq / kAttentionBlock);
    return blocks / (std::ceil(blocks / sms) * sms);
}

double simulator_attention_ramp(double batch_heads, double seq, double head_dim, int sm_count) {
    const double dim = (head_dim / (head_dim + kAttentionHeadDimHalf)) / (128.0 / (128.0 + kAttentionHeadDimHalf));
    const double fill = simulator_attention_wave_fill(batch_heads, seq, sm_count);
    const double nb = std::max(1.0, std::ceil(seq / kAttentionBlock));
    const double iterations = (nb + 1.0) / 2.0;
    return std::min(1.0, dim) * fill * iterations / (iterations + kFlash2BlockOverhead);
}

FittedProfile fit_profile(const KernelMeasurements& k, const std::vector<CollectiveSample>& c, int sm_count) {
    FittedProfile f;
    f.peak_flops = k.peak_flops;
    f.peak_source = fmt::format("{}^3 square, best sample", k.peak_size);
    // A shape of the step that ran faster than the square's best sample sets the peak instead: no
    // efficiency may exceed 1.
    for (const auto& g : k.gemms)
        if (g.seconds > 0 && g.flops() / g.seconds > f.peak_flops) {
            f.peak_flops = g.flops() / g.seconds;
            f.peak_source = fmt::format("the {} GEMM {}x{}x{}, faster than the {}^3 square's best sample", g.role,
                                        g.m, g.n, g.k, k.peak_size);
        }
    f.memory_bandwidth_Bps = k.stream_Bps;
    f.kernel_launch_s = k.launch_s;
    f.sm_count = std::max(1, sm_count);
    fit_gemm(k, f);
    fit_streaming(k, f);
    fit_attention(k, f);
    fit_link(c, f);
    // The samples are medians of short runs of one kernel, which see a core alone and caches warm
    // with that kernel's operands; a training step's ranks share the cores for all of it, and its
    // kernels run back to back. What a step keeps is the cpu share times what a real step's
    // kernels keep against the same kernels alone: the simulator's sustained fraction scales its compute ceilings, and the
    // streaming kernels take the same factor here; the launch and the link (the MPI copies run on
    // the ranks' cores) take the cpu share.
    double log_kept = 0;
    for (const auto& l : k.steps) log_kept += std::log(std::clamp(l.kept(), 1e-3, 1.0));
    const double kept = k.steps.empty() ? 1.0 : std::exp(log_kept / double(k.steps.size()));
    const double share = std::clamp(k.cpu_share, 1e-3, 1.0);
    f.sustained_clock_fraction = std::clamp(share * kept, 1e-3, 1.0);
    f.memory_bandwidth_efficiency *= f.sustained_clock_fraction;
    for (auto& [_, e] : f.streaming_table) e *= f.sustained_clock_fraction;
    f.kernel_launch_s /= share;
    f.link_share = share;
    f.link_bandwidth_Bps *= share;
    f.hop_latency_s /= share;
    f.collective_latency_s /= share;
    if (f.peak_flops > 0) {
        for (const auto& g : k.gemms)
            if (g.seconds > 0)
                f.gemm_table.push_back(
                    {g.m, g.n, g.k, std::min(1.0, g.flops() / work_seconds(g.seconds, k.launch_s) / f.peak_flops)});
        for (const auto& a : k.attention) {
            const double flops = simulator_attention_forward_flops(a.batch_heads, a.seq, a.head_dim);
            // With the GPU full: the sample's idle SMs are its own shape's, not every batch's.
            const double full = f.peak_flops * simulator_attention_wave_fill(a.batch_heads, a.seq, f.sm_count);
            f.attention_table.push_back(
                {a.seq, a.head_dim, std::min(1.0, flops / work_seconds(a.forward_seconds, k.launch_s) / full),
                 std::min(1.0, 2.5 * flops / work_seconds(a.backward_seconds, 2 * k.launch_s) / full)});
        }
    }
    return f;
}

}  // namespace tessel
