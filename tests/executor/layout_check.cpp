// layout_check: runs one parallel layout under mpirun and checks it against a one-rank run of
// the same model, seed, data and global batch (the independent reference): every step's loss
// must agree within a relative 1e-4 (fp32), and the loss must fall over the run.
//   mpirun -np 8 layout_check --model tiny-gpt --tp 2 --pp 2 --dp 2 --zero-stage 3 --global-batch-size 8 --seq 32
// Rank 0 computes the reference first (on MPI_COMM_SELF) while the others wait. With
// --fail-rank R --fail-step S, world rank R throws at step S instead (the failing-rank test);
// with --nan-rank R --nan-step S, rank R's loss is NaN at step S (the run must stop there).
// --layers N changes the model's depth, for pipeline splits the tiny models' 4 layers cannot show.
// --stage-through-host runs the layout's collectives through host copies, the path ranks sharing
// one GPU take (executor/host_staged_communicator.h). Every layout also checks that each rank's
// time breakdown adds up to the step time, and a ZeRO stage over one data-parallel rank that it
// holds the memory of ZeRO-0 (a second run of the layout, unsharded).
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/common.h"
#include "core/presets.h"
#include "executor/mpi_communicator.h"
#include "executor/mpi_job.h"
#include "executor/trainer.h"

using namespace tessel;

int main(int argc, char** argv) {
    CLI::App app{"check a parallel layout against a one-rank run"};
    std::string model = "tiny-gpt";
    cli::PlanFlags flags;
    int steps = 10, layers = 0, fail_rank = -1, fail_step = -1, nan_rank = -1, nan_step = -1;
    bool stage_through_host = false;
    double tolerance = 1e-4;
    app.add_option("--model", model);
    app.add_option("--layers", layers, "override the model's layer count (uneven pipeline splits)");
    cli::add_plan_flags(app, flags, false);
    app.add_option("--steps", steps);
    app.add_option("--tolerance", tolerance, "largest relative loss difference");
    app.add_option("--fail-rank", fail_rank);
    app.add_option("--fail-step", fail_step);
    app.add_option("--nan-rank", nan_rank, "this world rank's loss is NaN at --nan-step");
    app.add_option("--nan-step", nan_step);
    app.add_flag("--stage-through-host", stage_through_host, "collectives through host copies");
    CLI11_PARSE(app, argc, argv);

    MPI_Init(&argc, &argv);
    bool ok = true;
    const int code = run_mpi_job("layout_check", [&](std::unique_ptr<Communicator> world) {
        const int rank = world->rank();
        TrainOptions o;
        o.model = load_model(model);
        if (layers > 0) o.model.num_layers = layers;
        o.plan = cli::resolve_plan(flags, o.model, world->size());
        o.steps = steps;
        o.peak_tflops = 1.0;  // MFU is not what this checks; skip the start-up sgemm
        o.peak_source = "fixed (test)";
        o.fail_rank = fail_rank;
        o.fail_step = fail_step;
        o.nan_rank = nan_rank;
        o.nan_step = nan_step;
        o.stage_through_host = stage_through_host;

        std::vector<double> reference;
        if (rank == 0 && fail_rank < 0 && nan_rank < 0) {
            TrainOptions one = o;
            one.plan.tp = one.plan.pp = one.plan.dp = one.plan.cp = 1;
            one.plan.zero_stage = 0;
            one.plan.virtual_stages = 1;
            one.plan.lm_head_layers = 0;
            one.plan.schedule = Schedule::one_f_one_b;
            one.plan.sequence_parallel = false;
            one.plan.recompute = Recompute::none;
            one.stage_through_host = false;
            reference = train(one, make_mpi_communicator(MPI_COMM_SELF)).losses;
        }
        // ZeRO over one data-parallel rank is the unsharded layout: the same memory, kind by kind.
        std::optional<RunResult> unsharded;
        if (o.plan.zero_stage > 0 && o.plan.dp * o.plan.cp == 1 && fail_rank < 0 && nan_rank < 0) {
            TrainOptions z = o;
            z.plan.zero_stage = 0;
            unsharded = train(z, make_mpi_communicator(MPI_COMM_WORLD));
        }
        const RunResult r = train(o, std::move(world));
        if (rank != 0) return;
        // Each rank's breakdown is of the job's step: its parts add up to step_time_s.
        for (std::size_t i = 0; i < r.time_per_rank.size(); ++i) {
            const double total = r.time_per_rank[i].total();
            if (std::abs(total - r.step_time_s) > 1e-9 * r.step_time_s) {
                fmt::print("rank {}: its breakdown adds up to {:.9f} s, the step is {:.9f} s: FAILED\n", i, total,
                           r.step_time_s);
                ok = false;
            }
        }
        if (unsharded) {
            const MemoryBreakdown &a = r.memory, &b = unsharded->memory;
            const bool same = a.weights == b.weights && a.gradients == b.gradients && a.optimizer == b.optimizer &&
                              a.buffers == b.buffers && a.peak == b.peak;
            fmt::print("ZeRO-{} over one data-parallel rank: weights {} gradients {} optimizer {} buffers {} peak {} "
                       "GiB; ZeRO-0 {} {} {} {} {}: {}\n",
                       o.plan.zero_stage, a.weights, a.gradients, a.optimizer, a.buffers, a.peak, b.weights,
                       b.gradients, b.optimizer, b.buffers, b.peak, same ? "the same" : "DIFFERENT: FAILED");
            ok = ok && same;
        }
        fmt::print("{} {}: step  one-rank loss   layout loss   rel. diff\n", o.model.name, o.plan.describe());
        double worst = 0;
        for (int i = 0; i < steps; ++i) {
            const double rel = std::abs(r.losses[i] - reference[i]) / std::abs(reference[i]);
            worst = std::max(worst, rel);
            fmt::print("  {:>4}  {:>12.7f}  {:>12.7f}  {:>9.2e}{}\n", i + 1, reference[i], r.losses[i], rel,
                       rel > tolerance ? "  MISMATCH" : "");
        }
        const bool falls = r.losses.back() < r.losses.front() - 0.05;
        ok = ok && worst <= tolerance && falls;
        fmt::print("largest relative difference {:.2e} (limit {:.0e}); loss {:.4f} -> {:.4f} ({}); {}\n", worst,
                   tolerance, r.losses.front(), r.losses.back(), falls ? "falls" : "DOES NOT FALL",
                   ok ? "OK" : "FAILED");
    });
    MPI_Finalize();
    return code != 0 ? code : (ok ? 0 : 1);
}
