// tessel run --model M --plan P.json [--backend cpu|cuda] [--steps N] [--data tokens.bin] [--out FILE]
// [--seed S] [--cluster C] [--kernel-times]: trains N real steps of a plan (under mpirun for more than one rank) and
// measures them. Parsing and printing only; the runtime is executor/.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/errors.h"
#include "core/presets.h"
#include "core/units.h"
#include "executor/backends.h"
#include "executor/device_communicator.h"
#include "executor/job_error.h"
#include "executor/mpi_job.h"
#include "executor/trainer.h"
#include "simulator/hardware_efficiency.h"
#include "simulator/simulate.h"

namespace tessel::cli {

namespace {

struct RunArgs {
    std::string model, cluster, backend = "cpu", comm = "auto", data, out;
    PlanFlags plan;
    int steps = 10;
    std::uint64_t seed = 1234;
    bool kernel_times = false;
};

// Rank 0's kernels, the most time first: where a measured step's compute went.
void print_kernel_times(const KernelTimes& k, const RunResult& r) {
    std::vector<std::pair<std::string, KernelTally>> rows(k.by_kernel.begin(), k.by_kernel.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.second.in_step_seconds > b.second.in_step_seconds; });
    const int steps = std::max(1, r.steps - r.warmup_steps);
    // Rank 0's compute and optimizer over the same steps the kernel times cover.
    const double compute = steps * (r.time_per_rank[0].compute + r.time_per_rank[0].optimizer);
    fmt::print("\nkernels of rank 0, per step (mean of the {} steps after warm-up)\n", steps);
    fmt::print("{:>10} {:>8} {:>7}  {}\n", "ms/step", "calls", "share", "kernel and shape");
    for (const auto& [key, t] : rows)
        fmt::print("{:>10.3f} {:>8.1f} {:>6.1f}%  {}\n", 1e3 * t.in_step_seconds / steps, double(t.calls) / steps,
                   compute > 0 ? 100 * t.in_step_seconds / compute : 0.0, key);
    fmt::print("{:>10.3f}  in kernels; {:.3f} ms/step of compute and optimizer outside them (host work)\n",
               1e3 * k.in_step_seconds() / steps, 1e3 * (compute - k.in_step_seconds()) / steps);
}

void print_summary(const RunResult& r, const std::string& out) {
    const auto& g = r.memory;
    fmt::print("step time (median of {} after {} warm-up) {:.4f} s, {:.0f} tokens/s ({:.0f} per rank)\n",
               r.steps - r.warmup_steps, r.warmup_steps, r.step_time_s, r.tokens_per_s(),
               r.tokens_per_s() / r.world_size);
    fmt::print("MFU {:.1f}%, HFU {:.1f}% ({:.3f} / {:.3f} TFLOP/s per rank against {:.3f})\n", 100 * r.mfu(),
               100 * r.hfu(), r.model_tflops_per_gpu(), r.hardware_tflops_per_gpu(), r.peak_tflops_used);
    fmt::print("memory on the busiest rank (GiB): weights {:.4f}, gradients {:.4f}, optimizer {:.4f}, "
               "activations {:.4f}, buffers {:.4f}; peak {:.4f}\n",
               g.weights, g.gradients, g.optimizer, g.activations, g.buffers, g.peak);
    const double runtime = r.runtime_memory_GiB.empty()
                               ? 0.0 : *std::max_element(r.runtime_memory_GiB.begin(), r.runtime_memory_GiB.end());
    if (runtime > 0)
        fmt::print("of which the runtime beside the tensors (CUDA context, library workspaces, NCCL): up to "
                   "{:.4f} GiB per rank\n", runtime);
    fmt::print("loss {:.4f} -> {:.4f} over {} steps\n", r.losses.front(), r.losses.back(), r.steps);
    if (!out.empty()) fmt::print("wrote {}\n", out);
}

// Bytes the busiest rank of the plan holds at its peak, in fp32 (both backends compute in fp32).
double fp32_step_memory_bytes(const ModelSpec& m, Plan p, int ranks) {
    p.precision = Precision::fp32;
    SimulateOptions so;
    so.all_gather_context_parallel = true;  // tessel run's context parallelism
    so.vocab_padding_multiple = 1;          // and its vocabulary, unpadded
    // One host of as many CPU "GPUs" as the plan has ranks: only the memory per rank is read.
    ClusterSpec host = load_cluster("cpu");
    host.num_nodes = 1;
    host.gpus_per_node = std::max(ranks, p.world_size());
    return estimate_memory(m, host, p, so).peak * units::GiB;
}

void run_command(const RunArgs& a) {
    const int code = run_mpi_job("tessel run", [&](std::unique_ptr<Communicator> world) {
        const int rank = world->rank();
        TrainOptions o;
        // Inputs every rank reads alike; a bad one stops every rank with exit 2 and one message.
        agree_on_errors(*world, [&] {
            if (!backend_available(a.backend)) make_backend(a.backend);  // throws, saying why
            o.model = load_model(a.model);
            check_model_executable(o.model, a.model);
            // Without a plan file or --dp, dp fills the ranks the other sizes leave, as simulate
            // fills the cluster (mpirun -np 4 tessel run --tp 2 is tp2 dp2).
            PlanFlags flags = a.plan;
            if (const auto dp = dp_filling(flags, world->size())) flags.dp = *dp;
            o.plan = resolve_plan(flags, o.model, 0);  // the world size is checked with its hint below
            check_executable(o.model, o.plan, world->size(), a.plan.plan_file.empty() ? "command line" : a.plan.plan_file);
            o.plan_origin = a.plan.plan_file.empty() ? "command line" : a.plan.plan_file;
            if (a.backend == "cpu") {
                // The CPU backend's ranks share the host's memory: refuse a model it cannot hold
                // rather than allocate until the system runs out.
                const double host = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
                const int ranks = node_local_rank().size;
                const double least = least_training_state_bytes(o.model, o.plan) * ranks;
                if (host > 0 && least > host)
                    throw InputError(fmt::format(
                        "--model {}: its training state needs at least {:.1f} GiB on this host ({} rank{} of fp32 "
                        "weights, gradients and AdamW moments under {}), more than its {:.1f} GiB of memory: a smaller "
                        "model, or ranks spread over more hosts",
                        a.model, least / units::GiB, ranks, ranks == 1 ? "" : "s", o.plan.describe(), host / units::GiB));
                // The step's activations as well, as simulate counts them for the busiest rank (in
                // fp32, the executor's CP the all-gather way): a long sequence needs them most.
                const double step = fp32_step_memory_bytes(o.model, o.plan, world->size()) * ranks;
                if (host > 0 && step > host)
                    throw InputError(fmt::format(
                        "{} {} (plan {}): a training step needs about {:.1f} GiB on this host ({} rank{} of fp32 "
                        "states and activations, as tessel simulate counts them), more than its {:.1f} GiB of memory: "
                        "a shorter sequence, a smaller microbatch, recompute, or ranks spread over more hosts",
                        a.plan.plan_file.empty() ? std::string("--seq") : a.plan.plan_file + ": key 'seq_length'",
                        o.plan.seq_length, o.plan.describe(), step / units::GiB, ranks, ranks == 1 ? "" : "s",
                        host / units::GiB));
            }
            if (!a.cluster.empty()) {
                ClusterSpec c = load_cluster(a.cluster);
                // Its profile is read as simulate reads it: compare puts the two side by side, and a
                // profile simulate refuses should not pass here.
                (void)hardware_efficiency(c);
                // A CPU cluster (tessel calibrate --backend cpu, the cpu preset) lists only an fp32
                // peak; one with 16-bit tensor-core peaks describes GPUs, which the CPU backend's
                // MFU would be measured against and compare would take for the machine it ran on.
                if (a.backend == "cpu" && (c.gpu.has_own_peak(Precision::bf16) || c.gpu.has_own_peak(Precision::fp16)))
                    throw InputError(fmt::format(
                        "--cluster {} with --backend cpu: expected a CPU cluster (only an fp32 peak, as tessel calibrate "
                        "--backend cpu writes, or the cpu preset), got the {} with 16-bit tensor-core peaks: run "
                        "--backend cuda on it, or give the CPU's own cluster",
                        a.cluster, c.gpu.name));
                // Both backends compute in fp32 (kernels/backend.h is an fp32 interface).
                const Precision computed = Precision::fp32;
                const double peak = c.gpu.peak(computed);
                if (peak > 0) {
                    o.peak_tflops = peak;
                    o.peak_source = fmt::format("cluster {}: gpu.peak_tflops.{}", c.name, to_string(computed));
                }
                o.cluster = to_json(c);
            }
            // Its progress and summary hold stdout: "-" would interleave them with the JSON.
            if (a.out == "-")
                throw InputError("--out: expected a file path, got \"-\" (tessel run prints its progress on stdout)");
            if (rank == 0)
                check_output_file("--out", a.out,
                                  {{"--plan", a.plan.plan_file}, {"--model", a.model}, {"--cluster", a.cluster}, {"--data", a.data}});
        });
        o.steps = a.steps;
        o.seed = a.seed;
        o.data_path = a.data;
        o.backend = a.backend;
        o.comm = a.comm;
        const int world_size = world->size();
        o.on_setup = [&o, &a, world_size] {
            fmt::print("tessel run: {} ({}), {} on {} rank{}, backend {}\n", o.model.name, o.plan.describe(),
                       to_string(o.plan.schedule), world_size, world_size > 1 ? "s" : "", a.backend);
            if (o.plan.precision != Precision::fp32)
                fmt::print("note: the {} backend computes in fp32 (the plan says {})\n", a.backend,
                           to_string(o.plan.precision));
            std::fflush(stdout);
        };
        o.on_step = [&](int step, double loss, double seconds) {
            const double tokens = double(o.plan.global_batch_size) * o.plan.seq_length;
            fmt::print("step {:>4}/{} ({:>3.0f}%)  loss {:.4f}  {:.3f} s  {:.0f} tokens/s\n", step, o.steps,
                       100.0 * step / o.steps, loss, seconds, tokens / seconds);
            std::fflush(stdout);
        };
        KernelTimes kernel_times;
        if (a.kernel_times) o.kernel_times = &kernel_times;
        RunResult r = train(o, std::move(world));
        if (rank == 0) {
            fmt::print("peak {:.3f} TFLOP/s per rank: {}\n", r.peak_tflops_used, r.peak_tflops_source);
            if (!a.out.empty()) write_file_atomically(a.out, to_json(r).dump(2) + "\n");
            print_summary(r, a.out);
            if (a.kernel_times) print_kernel_times(kernel_times, r);
        }
    });
    // The message was printed by one rank; every rank leaves with the job's code.
    if (code != 0) {
        std::fflush(stdout);
        std::exit(code);
    }
}

}  // namespace

void add_run(CLI::App& app) {
    auto args = std::make_shared<RunArgs>();
    auto* cmd = app.add_subcommand("run", "Train real steps of a plan (CPU + MPI) and measure them");
    cmd->footer(
        "Example: mpirun -np 4 tessel run --model tiny-llama --plan plan.json --steps 10 --out run.json\n"
        "  (plan.json: {\"tp\": 2, \"pp\": 2, \"global_batch_size\": 8, \"seq_length\": 64})\n"
        "The world size (mpirun -np) must equal tp*pp*dp*cp. Without --data, a deterministic synthetic token "
        "stream is used;\n--data reads flat uint16 token ids (nanoGPT/llm.c .bin). MFU is measured against the "
        "--cluster's peak, or an sgemm\nmeasured at start-up. Optimizer: AdamW, lr 1e-3, betas 0.9/0.95, weight "
        "decay 0.1 on matrices.");
    cmd->add_option("--model", args->model, "preset name or path (native JSON, a Hugging Face config.json or the model folder holding it)")
        ->required();
    add_plan_flags(*cmd, args->plan, false);
    cmd->add_option("--backend", args->backend, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_option("--comm", args->comm,
                    "auto | mpi | nccl: how the CUDA backend's collectives move (auto: NCCL with one GPU per rank, "
                    "else MPI through host copies)")
        ->check(CLI::IsMember({"auto", "mpi", "nccl"}));
    cmd->add_option("--steps", args->steps, "optimizer steps (default 10)")->check(CLI::Range(1, 1000000));
    cmd->add_option("--data", args->data, "token file: flat uint16 ids (default: synthetic stream)");
    cmd->add_option("--out", args->out, "measured-run JSON (written by rank 0, atomically)")->check(output_path());
    cmd->add_option("--seed", args->seed, "seed of the initial weights and the synthetic data (default 1234)")
        ->check(unsigned_64());
    cmd->add_option("--cluster", args->cluster, "cluster preset or file whose peak MFU is measured against");
    cmd->add_flag("--kernel-times", args->kernel_times,
                  "time every kernel where the step runs it and print rank 0's, the most time first");
    cmd->callback([args] { run_command(*args); });
}

}  // namespace tessel::cli
