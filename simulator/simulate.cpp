// First analytic version of the simulator entry points; the event-driven schedule replaces the
// closed-form step time as the folder grows.
#include "simulator/simulate.h"

#include <algorithm>

#include "core/accounting.h"
#include "core/schedule.h"
#include "core/units.h"

namespace tessel {

namespace {
// Fraction of peak a large GEMM reaches (cuBLAS, bf16); refined per shape later.
constexpr double kGemmEfficiency = 0.8;

double bytes_per_param(Precision p) { return double(bytes_per_element(p)); }
}  // namespace

MemoryBreakdown estimate_memory(const ModelSpec& m, const ClusterSpec& c, const Plan& p) {
    (void)c;
    MemoryBreakdown mem;
    const auto params = count_parameters(m);
    const double per_stage = double(params.total) / (p.tp * p.pp);
    const double w = bytes_per_param(p.precision);
    const double shard = double(p.dp) * p.cp;
    mem.weights = per_stage * w / (p.zero_stage >= 3 ? shard : 1.0) / units::GiB;
    mem.gradients = per_stage * w / (p.zero_stage >= 2 ? shard : 1.0) / units::GiB;
    mem.optimizer = per_stage * 12.0 / (p.zero_stage >= 1 ? shard : 1.0) / units::GiB;
    const double s = p.seq_length / double(p.cp), b = p.microbatch_size, h = m.hidden_size, a = m.num_attention_heads;
    const double t = p.tp;
    double per_layer = p.sequence_parallel ? s * b * h / t * 34.0 : s * b * h * (10.0 + 24.0 / t);
    if (p.recompute == Recompute::none) per_layer += 5.0 * a * s * s * b / t;
    if (p.recompute == Recompute::full) per_layer = 2.0 * s * b * h / (p.sequence_parallel ? t : 1.0);
    const auto sched = pipeline_schedule(p.schedule, p.pp, p.num_microbatches(), p.virtual_stages);
    const int in_flight = max_in_flight(sched[0]);
    const double layers_per_chunk = double(m.num_layers) / (p.pp * p.virtual_stages);
    mem.activations = per_layer * layers_per_chunk * in_flight / units::GiB;
    mem.buffers = 1.0;
    mem.peak = mem.weights + mem.gradients + mem.optimizer + mem.activations + mem.buffers;
    return mem;
}

double step_time_lower_bound(const ModelSpec& m, const ClusterSpec& c, const Plan& p) {
    const auto f = flops_per_token(m, p.seq_length, p.recompute);
    const double tokens = double(p.global_batch_size) * p.seq_length;
    const double per_gpu = f.hardware * tokens / p.world_size();
    const double compute = per_gpu / (c.gpu.peak(p.precision) * units::TFLOP);
    const int mb = p.num_microbatches();
    const int v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
    const double bubble = double(p.pp - 1) / (double(v) * mb);
    return compute * (1.0 + bubble);
}

SimulationResult simulate(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const SimulateOptions& o) {
    SimulationResult r;
    r.plan = p;
    r.model_name = m.name;
    r.cluster_name = c.name;
    r.num_gpus = p.world_size();
    r.memory_GiB = estimate_memory(m, c, p);
    r.fits = r.memory_GiB.peak <= c.gpu.memory_GiB * (1.0 - o.memory_headroom);
    if (!r.fits) r.notes.push_back("does not fit in GPU memory");
    const auto f = flops_per_token(m, p.seq_length, p.recompute);
    const double tokens = double(p.global_batch_size) * p.seq_length;
    const double peak = c.gpu.peak(p.precision) * units::TFLOP;
    const double compute = f.model * tokens / p.world_size() / (peak * kGemmEfficiency);
    const double recompute = (f.hardware - f.model) * tokens / p.world_size() / (peak * kGemmEfficiency);
    const int v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
    const double bubble = (compute + recompute) * double(p.pp - 1) / (double(v) * p.num_microbatches());
    r.time_s.compute = compute;
    r.time_s.recompute = recompute;
    r.time_s.bubble = bubble;
    r.step_time_s = compute + recompute + bubble;
    r.tokens_per_s = tokens / r.step_time_s;
    r.model_tflops_per_gpu = f.model * tokens / p.world_size() / r.step_time_s / units::TFLOP;
    r.hardware_tflops_per_gpu = f.hardware * tokens / p.world_size() / r.step_time_s / units::TFLOP;
    r.mfu = r.model_tflops_per_gpu * units::TFLOP / peak;
    r.hfu = r.hardware_tflops_per_gpu * units::TFLOP / peak;
    return r;
}

}  // namespace tessel
