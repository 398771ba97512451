#include "executor/trainer.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "core/accounting.h"
#include "core/errors.h"
#include "core/schedule.h"
#include "core/units.h"
#include "executor/backends.h"
#include "executor/device_communicator.h"
#include "executor/job_error.h"
#include "executor/model_chunk.h"
#include "executor/parallel_groups.h"
#include "executor/peak_flops.h"
#include "executor/pipeline_runner.h"
#include "executor/rotary.h"
#include "executor/sharding.h"
#include "executor/timed_communicator.h"
#include "executor/token_data.h"

namespace tessel {

void check_model_executable(const ModelSpec& m, const std::string& model_origin) {
    if (m.activation == Activation::geglu)
        throw input_error(model_origin, "activation", "gelu or swiglu (the executor has no gated-GELU kernel; tessel "
                          "simulate and plan model Gemma's)", "geglu");
    if (m.sandwich_norms)
        throw input_error(model_origin, "sandwich_norms", "false (the executor has no post-attention and post-MLP "
                          "norms; tessel simulate and plan model Gemma's)", "true");
    if (m.logit_softcap)
        throw input_error(model_origin, "logit_softcap", "false (the executor does not soft-cap the logits; tessel "
                          "simulate and plan model it)", "true");
    if (m.rotary_percent < 1.0)
        throw input_error(model_origin, "rotary_percent", "1 (the executor rotates every head dimension; tessel "
                          "simulate and plan model partial rotary)", fmt::format("{:g}", m.rotary_percent));
    if (m.parallel_residual)
        throw input_error(model_origin, "parallel_residual", "false (the executor runs attention and MLP in sequence; "
                          "tessel simulate and plan model the parallel layer)", "true");
    if (!rope_scaling_executable(m.rope_scaling_type))
        throw input_error(model_origin, "rope_scaling_type", "none, llama3 or linear (the executor rotates by "
                          "these; tessel simulate and plan model any scaling, which costs the same)", m.rope_scaling_type);
    // OLMo 2's norm spans the whole Q and K projections, which tensor parallelism splits by heads.
    if (m.qk_norm == QkNorm::full_width)
        throw input_error(model_origin, "qk_norm", "none or per_head (the executor does not run OLMo 2's "
                          "whole-projection query/key norm; tessel simulate and plan model it)", to_string(m.qk_norm));
}

void check_executable(const ModelSpec& m, const Plan& p, int world_size, const std::string& file) {
    if (p.world_size() != world_size)
        throw input_error(file, "tp,pp,dp,cp",
                          fmt::format("tp*pp*dp*cp equal to the world size {} (start it with mpirun -np {})",
                                      world_size, p.world_size()),
                          fmt::format("{}*{}*{}*{} = {}", p.tp, p.pp, p.dp, p.cp, p.world_size()));
    validate_plan(p, m, world_size, file);
    if (m.num_kv_heads % p.tp != 0)
        throw input_error(file, "tp", fmt::format("a divisor of the model's {} KV heads (the executor does not "
                                                  "replicate KV heads over TP ranks yet)", m.num_kv_heads),
                          std::to_string(p.tp));
    if (m.vocab_size % p.tp != 0)
        throw input_error(file, "tp", fmt::format("a divisor of the vocabulary size {} (the executor does not pad "
                                                  "the vocabulary)", m.vocab_size),
                          std::to_string(p.tp));
    check_model_executable(m, "model " + m.name);
    if (m.sliding_window > 0 && m.sliding_window < p.seq_length)
        throw input_error(file, "seq_length",
                          fmt::format("at most the model's sliding window of {} tokens (the executor's attention has no "
                                      "window; tessel simulate and plan model it)", m.sliding_window),
                          std::to_string(p.seq_length));
    if (m.position_embedding == PositionEmbedding::rope && m.head_dim % 2 != 0)
        throw input_error(file, "head_dim", "an even head dimension for RoPE", std::to_string(m.head_dim));
    const long long tokens = 1LL * p.microbatch_size * p.seq_length;
    const long long width = std::max<long long>(m.vocab_size / p.tp, m.hidden_size);
    if (tokens * width > (1LL << 31))
        throw input_error(file, "seq_length",
                          fmt::format("a microbatch whose logits fit a 32-bit element count: microbatch_size x "
                                      "seq_length at most {} tokens of {} logits",
                                      (1LL << 31) / width, width),
                          fmt::format("{} ({} x {} tokens)", p.seq_length, p.microbatch_size, p.seq_length));
}

namespace {

using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

// Seconds spent in calls into each kind of group (executor/timed_communicator.h).
struct CommSeconds {
    double tp = 0, cp = 0, pp = 0, dp = 0;
    double total() const { return tp + cp + pp + dp; }
    CommSeconds operator-(const CommSeconds& o) const { return {tp - o.tp, cp - o.cp, pp - o.pp, dp - o.dp}; }
};

double max_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) * 1024.0;  // KiB on Linux
}

LayerDims layer_dims(const ModelSpec& m, const Plan& p, int tp_rank, int cp_rank) {
    LayerDims d;
    d.batch = p.microbatch_size;
    d.seq = p.seq_length;
    d.hidden = m.hidden_size;
    d.cp = p.cp;
    d.cp_rank = cp_rank;
    d.tokens = d.batch * d.seq / p.cp;
    d.local_tokens = p.sequence_parallel ? d.tokens / p.tp : d.tokens;
    d.heads = m.num_attention_heads / p.tp;
    d.kv_heads = m.num_kv_heads / p.tp;
    d.head_dim = m.head_dim;
    d.ffn = m.ffn_hidden_size / p.tp;
    const Range vocab = split_range(std::size_t(m.vocab_size), p.tp, tp_rank);
    d.vocab_start = int(vocab.begin);
    d.vocab_end = int(vocab.end);
    return d;
}

// Sums a per-rank value into slot `rank` of a world-sized vector, on every rank.
std::vector<double> gather_per_rank(Communicator& world, double value) {
    std::vector<double> v(world.size(), 0.0);
    v[world.rank()] = value;
    world.all_reduce_host(v.data(), v.size(), ReduceOp::sum);
    return v;
}

}  // namespace

double least_training_state_bytes(const ModelSpec& m, const Plan& p) {
    const double layers = double(count_parameters(m).per_layer) * m.num_layers / (double(p.tp) * p.pp);
    const double shard = double(p.dp) * p.cp;
    const double weights = p.zero_stage >= 3 ? layers / shard : layers;
    const double gradients = p.zero_stage >= 2 ? layers / shard : layers;
    const double moments = p.zero_stage >= 1 ? 2.0 * layers / shard : 2.0 * layers;
    return 4.0 * (weights + gradients + moments);
}

RunResult train(const TrainOptions& o, std::unique_ptr<Communicator> world_comm) {
    const ModelSpec& m = o.model;
    const Plan& p = o.plan;
    Communicator& world0 = *world_comm;

    agree_on_inputs(world0,
                    json{{"model", to_json(m)}, {"plan", to_json(p)}, {"steps", o.steps}, {"warmup", o.warmup_steps},
                         {"seed", o.seed}, {"data", o.data_path}, {"backend", o.backend}, {"comm", o.comm},
                         {"through_host", o.stage_through_host}}
                        .dump(),
                    "model, plan, --steps, --seed, --data, --backend or --comm");

    // ---- setup whose errors every rank agrees on (same inputs everywhere) ----
    std::unique_ptr<Backend> backend;
    CommPath comm_path = CommPath::direct;
    std::optional<TokenSource> data;
    agree_on_errors(world0, [&] {
        check_executable(m, p, world0.size(), o.plan_origin);
        if (o.steps < 1) throw InputError(fmt::format("--steps: expected at least 1, got {}", o.steps));
        backend = make_backend(o.backend);
        data = o.data_path.empty() ? TokenSource::synthetic(m.vocab_size, o.seed)
                                   : TokenSource::from_file(o.data_path, m.vocab_size, p.seq_length);
    });
    // Which GPU each rank took, gathered so that every rank sees the same sharing and picks the
    // same communicator (a rank choosing NCCL beside one choosing MPI would hang both).
    std::vector<double> gpu_keys(std::size_t(world0.size()), 0.0);
    gpu_keys[std::size_t(world0.rank())] = gpu_identity_key(o.backend == "cuda" ? gpu_identity() : "");
    world0.all_reduce_host(gpu_keys.data(), gpu_keys.size(), ReduceOp::sum);
    const int ranks_sharing = ranks_sharing_a_gpu(gpu_keys);
    agree_on_errors(world0, [&] { comm_path = choose_comm_path(o.backend, o.comm, ranks_sharing); });
    if (world0.rank() == 0 && o.on_setup) o.on_setup();
    if (o.kernel_times) backend = make_timed_backend(std::move(backend), o.kernel_times);
    if (o.stage_through_host && comm_path == CommPath::direct) comm_path = CommPath::host_staged;
    world_comm = make_device_communicator(std::move(world_comm), *backend, comm_path);

    ParallelGroups g = make_parallel_groups(p, std::move(world_comm));
    // Seconds this rank spends in each kind of group, for the measured breakdown of a step. The
    // tied table's gradient sum is gradient traffic like the data-parallel reduction (the
    // simulator counts it there too).
    // NCCL only queues its transfers on the GPU's stream: the timer synchronizes around each call.
    CommSeconds comm;
    Backend* queued = comm_path == CommPath::nccl ? backend.get() : nullptr;
    g.tp = make_timed_communicator(std::move(g.tp), &comm.tp, queued);
    g.cp = make_timed_communicator(std::move(g.cp), &comm.cp, queued);
    g.pp = make_timed_communicator(std::move(g.pp), &comm.pp, queued);
    g.dp_cp = make_timed_communicator(std::move(g.dp_cp), &comm.dp, queued);
    g.embedding = make_timed_communicator(std::move(g.embedding), &comm.dp, queued);
    if (g.pp) g.pp->prepare_neighbour_transfers();  // the stages' sends go to stage ± 1
    Communicator& world = *g.world;
    const RankCoords me = g.coords;
    MemoryTracker tracker;
    const DeviceMemory mem{backend.get(), &tracker};

    LayerContext ctx;
    ctx.backend = backend.get();
    ctx.mem = mem;
    ctx.tp = g.tp.get();
    ctx.model = &m;
    ctx.rope = rope_frequencies(m);
    ctx.dims = layer_dims(m, p, me.tp, me.cp);
    ctx.cp = p.cp > 1 ? g.cp.get() : nullptr;
    ctx.sequence_parallel = p.sequence_parallel;
    ctx.recompute = p.recompute;

    // ---- this rank's chunks: chunk c holds model stage c·pp + pp_rank ----
    const int v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
    const int stages = p.pp * v;
    const std::vector<int> layers = layers_per_chunk(m.num_layers, p.pp, v, p.lm_head_layers);
    std::vector<std::unique_ptr<ModelChunk>> chunks;
    std::vector<ModelChunk*> chunk_ptrs;
    std::vector<ParamBuffer*> buffers;
    // Sharding over a group of one rank is the unsharded layout: no gathers, no shard copies (the
    // simulator prices ZeRO with one data-parallel rank as free, and so does this run).
    const int sharded_stage = g.dp_cp->size() > 1 ? p.zero_stage : 0;
    for (int c = 0; c < v; ++c) {
        ChunkPlacement where;
        where.stage = c * p.pp + me.pp;
        where.num_stages = stages;
        for (int s = 0; s < where.stage; ++s) where.first_layer += layers[s];
        where.num_layers = layers[where.stage];
        chunks.push_back(std::make_unique<ModelChunk>(m, p, where, p.tp, me.tp));
        chunks.back()->materialize(mem, sharded_stage, g.dp_cp.get(), o.seed);
        chunk_ptrs.push_back(chunks.back().get());
        for (ParamBuffer* b : chunks.back()->buffers()) buffers.push_back(b);
    }
    const int M = p.num_microbatches();
    const RankSchedule schedule = pipeline_schedule(p.schedule, p.pp, M, v)[me.pp];

    // ---- the peak MFU is measured against ----
    double peak = 0;
    std::string peak_source;
    if (o.peak_tflops) {
        peak = *o.peak_tflops;
        peak_source = o.peak_source;
    } else {
        // Every rank at once, as they will share the cores while training.
        std::vector<double> each = gather_per_rank(world, measure_matmul_tflops({backend.get(), nullptr}));  // not the run's memory
        for (double x : each) peak += x / double(each.size());
        peak_source = fmt::format("fp32 sgemm 1024^3 measured at start-up by each of the {} ranks at once (mean)",
                                  world.size());
    }

    // ---- the steps ----
    const double global_tokens = double(p.global_batch_size) * p.seq_length;
    const float dloss = float(1.0 / global_tokens);
    const bool holds_loss = me.tp == 0 && chunk_ptrs.back()->placement().last();
    // Steps left out of the medians and means: none when there are no more steps than that.
    const int warmup = o.steps > o.warmup_steps ? o.warmup_steps : 0;
    RunResult r;
    for (int step = 1; step <= o.steps; ++step) {
        if (o.kernel_times && step == warmup + 1) o.kernel_times->clear();
        const CommSeconds at_start = comm;
        const auto t0 = clock_type::now();
        PipelineStep ps;
        ps.actions = &schedule;
        ps.chunks = chunk_ptrs;
        ps.pp = g.pp.get();
        ps.pp_size = p.pp;
        ps.num_stages = stages;
        ps.dloss = dloss;
        ps.tokens = [&](int mb) {
            // Samples of this step, data-parallel rank and microbatch, in the global batch's order;
            // this context-parallel rank's chunks of them, in the [chunk][batch][position] layout.
            const LayerDims& d = ctx.dims;
            const int B = p.microbatch_size, T = p.seq_length, c = d.chunk_len();
            std::vector<int> in(std::size_t(B) * T), out(std::size_t(B) * T);
            const std::int64_t first = std::int64_t(step - 1) * p.global_batch_size +
                                       std::int64_t(me.dp) * M * B + std::int64_t(mb) * B;
            for (int b = 0; b < B; ++b)
                data->sample(first + b, T, in.data() + std::size_t(b) * T, out.data() + std::size_t(b) * T);
            MicrobatchTokens t;
            for (int j = 0; j < d.num_chunks(); ++j)
                for (int b = 0; b < B; ++b) {
                    const std::size_t from = std::size_t(b) * T + d.chunk_position(j);
                    t.inputs.insert(t.inputs.end(), in.begin() + from, in.begin() + from + c);
                    t.targets.insert(t.targets.end(), out.begin() + from, out.begin() + from + c);
                }
            return t;
        };
        if (g.world_rank == o.fail_rank && step == o.fail_step)
            ps.before_action = [&](const PipelineAction& a) {
                if (a.op == PipelineOp::forward && a.microbatch == 0 && a.chunk == 0)
                    throw RuntimeError(fmt::format("injected failure at step {} (test)", step));
            };
        double local_loss = run_pipeline_step(ctx, ps);
        // A GPU may still be running the pipeline's queued kernels: they belong to its time, not
        // to the optimizer's, whose synchronize would otherwise absorb them.
        backend->synchronize();
        const double pipeline_s = since(t0);
        const CommSeconds after_pipeline = comm;
        if (g.world_rank == o.nan_rank && step == o.nan_step && holds_loss) local_loss = std::nan("");

        // The step's mean loss on every rank, and whether any rank saw a non-finite one.
        double loss_sum = holds_loss ? local_loss : 0.0;
        double bad_rank = std::isfinite(local_loss) ? -1.0 : double(g.world_rank);  // the highest such rank
        world.all_reduce_host(&loss_sum, 1, ReduceOp::sum);
        world.all_reduce_host(&bad_rank, 1, ReduceOp::max);
        if (bad_rank >= 0)
            throw JobWideError(1, fmt::format("loss is {} at step {} (computed on rank {}); stopping",
                                              std::isnan(loss_sum) ? "NaN" : "not finite", step, int(bad_rank)),
                               g.world_rank == 0);

        const auto t_opt = clock_type::now();
        optimizer_step(*backend, buffers, g, o.optimizer, step);
        backend->synchronize();
        const double opt_s = since(t_opt);
        const CommSeconds after_optimizer = comm;
        world.barrier();  // the step ends when the slowest rank's does
        const double dt = since(t0);
        r.losses.push_back(loss_sum / global_tokens);
        r.step_times_s.push_back(dt);
        const CommSeconds in_pipeline = after_pipeline - at_start, in_optimizer = after_optimizer - after_pipeline;
        StepBreakdown b;
        b.tp_comm = in_pipeline.tp + in_optimizer.tp;
        b.cp_comm = in_pipeline.cp + in_optimizer.cp;
        b.pp_wait = in_pipeline.pp + in_optimizer.pp;
        b.dp_comm = in_pipeline.dp + in_optimizer.dp;
        b.compute = pipeline_s - in_pipeline.total();
        b.optimizer = opt_s - in_optimizer.total();
        b.sync_wait = dt - pipeline_s - opt_s;
        r.step_breakdowns.push_back(b);
        if (g.world_rank == 0 && o.on_step) o.on_step(step, r.losses.back(), dt);
    }

    // ---- what the runtime holds beside the executor's tensors ----
    // The CUDA context, the libraries' workspaces and NCCL's buffers, at the end of the run when
    // all of them exist (the simulator's runtime reserve is the same quantity). The device counts
    // every process on it, so ranks that share a GPU are not measured. 0 on the CPU backend. (The
    // last step ended with a synchronize.)
    const double my_gpu = gpu_keys[std::size_t(world0.rank())];
    const bool shares_device = my_gpu != 0.0 && std::count(gpu_keys.begin(), gpu_keys.end(), my_gpu) > 1;
    const double runtime_bytes = shares_device ? 0.0 : double(backend->runtime_memory_bytes());

    // ---- what was measured ----
    r.model = m;
    r.plan = p;
    r.backend = backend->name();
    r.device = backend->device_name();
    r.communicator = comm_path_name(comm_path);
    r.compute_precision = "fp32";  // every Backend op is over fp32 device pointers
    r.world_size = world.size();
    r.steps = o.steps;
    r.warmup_steps = warmup;
    r.seed = o.seed;
    r.data = o.data_path.empty() ? "synthetic" : o.data_path;
    // Every rank records the job's step times, the slowest rank's clock for each step (they leave
    // the same barrier within microseconds), so that every rank's breakdown below is scaled to
    // one step_time_s and the per-rank totals equal it.
    const std::vector<double> my_step_times = r.step_times_s;
    world.all_reduce_host(r.step_times_s.data(), r.step_times_s.size(), ReduceOp::max);
    r.step_time_s = median_after(r.step_times_s, r.warmup_steps);
    r.tokens_per_step = global_tokens;
    const FlopsPerToken f = flops_per_token(m, p);
    r.model_flops_per_token = f.model;
    r.hardware_flops_per_token = f.hardware;
    r.peak_tflops_used = peak;
    r.peak_tflops_source = peak_source;
    r.cluster = o.cluster;
    r.optimizer = {{"name", "adamw"},           {"lr", o.optimizer.lr},
                   {"beta1", o.optimizer.beta1}, {"beta2", o.optimizer.beta2},
                   {"eps", o.optimizer.eps},     {"weight_decay", o.optimizer.weight_decay},
                   {"weight_decay_on", "weight matrices"}, {"lr_schedule", "constant"}, {"grad_clip", nullptr}};

    // ---- where the steps went, per rank ----
    // The mean split of the counted steps, scaled from their mean time to the median step_time_s,
    // so that the parts add up to the step they break down (a few slow steps would otherwise make
    // the parts outgrow it).
    StepBreakdown mean;
    const int counted = o.steps - r.warmup_steps;
    double mean_step = 0;
    for (int i = r.warmup_steps; i < o.steps; ++i) mean_step += my_step_times[std::size_t(i)] / counted;
    const double to_median = mean_step > 0 ? r.step_time_s / mean_step : 1.0;
    const double w = to_median / counted;  // each counted step's weight in the scaled mean
    for (int i = r.warmup_steps; i < o.steps; ++i) {
        const StepBreakdown& b = r.step_breakdowns[std::size_t(i)];
        mean.compute += b.compute * w;
        mean.tp_comm += b.tp_comm * w;
        mean.cp_comm += b.cp_comm * w;
        mean.pp_wait += b.pp_wait * w;
        mean.dp_comm += b.dp_comm * w;
        mean.optimizer += b.optimizer * w;
        mean.sync_wait += b.sync_wait * w;
    }
    if (o.kernel_times) {  // cleared at the first counted step
        const KernelKindTimes k = kernel_time_by_kind(*o.kernel_times);
        r.kernel_time_s = KernelKindTimes{k.gemm * w, k.attention * w, k.memory_bound * w};
    }
    const std::vector<double> fields[] = {
        gather_per_rank(world, mean.compute), gather_per_rank(world, mean.tp_comm),   gather_per_rank(world, mean.cp_comm),
        gather_per_rank(world, mean.pp_wait), gather_per_rank(world, mean.dp_comm),   gather_per_rank(world, mean.optimizer),
        gather_per_rank(world, mean.sync_wait)};
    for (int i = 0; i < world.size(); ++i) {
        r.time_per_rank.push_back({fields[0][i], fields[1][i], fields[2][i], fields[3][i], fields[4][i], fields[5][i],
                                   fields[6][i]});
        if (r.time_per_rank[i].sync_wait < r.time_per_rank[r.critical_rank].sync_wait) r.critical_rank = i;
    }

    const std::vector<double> peaks = gather_per_rank(world, double(tracker.peak()) + runtime_bytes);
    r.runtime_memory_GiB = gather_per_rank(world, runtime_bytes);
    for (double& x : r.runtime_memory_GiB) x /= units::GiB;
    r.max_rss_GiB = gather_per_rank(world, max_rss_bytes());
    for (double& x : r.max_rss_GiB) x /= units::GiB;
    int top = 0;
    for (int i = 0; i < int(peaks.size()); ++i) {
        r.peak_memory_GiB.push_back(peaks[i] / units::GiB);
        if (peaks[i] > peaks[top]) top = i;
    }
    double mine[kMemoryKinds] = {};
    if (g.world_rank == top)
        for (int k = 0; k < kMemoryKinds; ++k) mine[k] = double(tracker.at_peak(MemoryKind(k))) / units::GiB;
    if (g.world_rank == top) mine[int(MemoryKind::buffers)] += runtime_bytes / units::GiB;
    world.all_reduce_host(mine, kMemoryKinds, ReduceOp::sum);
    r.memory = {mine[0], mine[1], mine[2], mine[3], mine[4], peaks[top] / units::GiB};
    return r;
}

}  // namespace tessel
