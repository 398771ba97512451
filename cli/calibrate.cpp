// tessel calibrate [--backend cpu|cuda] [--out FILE] [--raw FILE] [--quick] [--name NAME]: measures
// this machine's kernels and (under mpirun) its collectives and writes a cluster JSON with a fitted
// `profile`. Parsing and printing only; the measurements and the fit are executor/calibrate*.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/errors.h"
#include "core/json_io.h"
#include "executor/backends.h"
#include "executor/calibrate.h"
#include "executor/job_error.h"
#include "executor/mpi_job.h"

namespace tessel::cli {

namespace {

struct CalibrateArgs {
    std::string backend = "cpu", out, raw, name;  // name: default <backend>-calibrated
    bool quick = false;
    double memory_GiB = 0;
    int sm_count = 0;
};

void calibrate_command(const CalibrateArgs& a) {
    const int code = run_mpi_job("tessel calibrate", [&](std::unique_ptr<Communicator> world) {
        const int rank = world->rank();
        std::unique_ptr<Backend> backend;
        agree_on_errors(*world, [&] {
            backend = make_backend(a.backend);
            // Stdout holds the cluster file (no --out, or --out -) or else the report.
            if (a.raw == "-")
                throw InputError("--raw: expected a file path, got \"-\" (stdout holds the cluster file or the "
                                 "report)");
            if (!a.out.empty() && a.out == a.raw)
                throw InputError(fmt::format("--out and --raw: expected two files, got {} for both", a.out));
            if (a.out != "-") check_output_file("--out", a.out);
            check_output_file("--raw", a.raw);
        });
        CalibrateOptions o;
        o.backend = a.backend;
        o.quick = a.quick;
        // Not the shipped preset's name ("cpu"): compare tells a calibrated cluster from the preset by it.
        o.name = a.name.empty() ? a.backend + "-calibrated" : a.name;
        o.memory_GiB = a.memory_GiB;
        o.sm_count = a.sm_count;
        // One progress line, rewritten in place on a terminal; one line per measurement otherwise.
        const bool tty = isatty(STDERR_FILENO);
        o.progress = [tty](int done, int total, const std::string& what) {
            std::fprintf(stderr, tty ? "\r\033[K[%3d/%d] %s" : "[%3d/%d] %s\n", done + 1, total, what.c_str());
            std::fflush(stderr);
        };
        // Without a file the cluster JSON is stdout's alone (`tessel calibrate > cluster.json`), and the
        // report goes to stderr beside the progress.
        const bool cluster_to_stdout = a.out.empty() || a.out == "-";
        std::FILE* report = cluster_to_stdout ? stderr : stdout;
        if (rank == 0) {
            fmt::print(report, "tessel calibrate: backend {} on {} rank{}{}\n", a.backend, world->size(),
                       world->size() > 1 ? "s" : "", a.quick ? " (--quick)" : "");
            if (world->size() == 1)
                fmt::print(report, "one rank: compute only; run under mpirun -np 2 (or more) to measure collectives\n");
            std::fflush(report);
        }
        Calibration c;
        agree_on_errors(*world, [&] { c = calibrate(o, *backend, *world); });
        if (rank != 0) return;
        if (tty) std::fprintf(stderr, "\n");
        fmt::print(report, "\n{}", calibration_report(c));
        const std::string cluster = to_cluster_json(c, o.name).dump(2) + "\n";
        if (!a.raw.empty()) {
            write_file_atomically(a.raw, to_raw_json(c).dump(2) + "\n");
            fmt::print(report, "wrote {}\n", a.raw);
        }
        if (cluster_to_stdout) {
            std::fflush(stderr);
            fmt::print("{}", cluster);
        } else {
            write_file_atomically(a.out, cluster);
            fmt::print("wrote {}\n", a.out);
        }
    });
    if (code != 0) {
        std::fflush(stdout);
        std::exit(code);
    }
}

}  // namespace

void add_calibrate(CLI::App& app) {
    auto args = std::make_shared<CalibrateArgs>();
    auto* cmd = app.add_subcommand("calibrate", "Measure this machine's kernels and collectives; write a cluster profile");
    cmd->footer(
        "Example: mpirun -np 2 tessel calibrate --backend cpu --out configs/clusters/cpu.json --raw calibrate.json\n"
        "Under mpirun every rank measures at once (as ranks share the machine while training) and the collectives\n"
        "(all-reduce, all-gather, reduce-scatter, send/recv) are measured between them; one rank alone measures\n"
        "compute only. The profile's efficiencies are fitted so that the simulator reproduces the measured times.");
    cmd->add_option("--backend", args->backend, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}));
    cmd->add_option("--out", args->out, "cluster JSON to write (atomically); default or -: stdout, the report going to stderr")
        ->check(output_path());
    cmd->add_option("--raw", args->raw, "every measurement as JSON (for the record)")->check(output_path());
    cmd->add_flag("--quick", args->quick, "a few seconds of measurement (tests; not a calibration)");
    cmd->add_option("--name", args->name, "the cluster's name (default: the backend's, then -calibrated: cpu-calibrated)")
        ->check(non_empty("a name", "NAME"));
    cmd->add_option("--memory-GiB", args->memory_GiB, "memory per rank (default: the device's; on cpu the host's, shared by the ranks)")
        ->check(finite_range(1.0 / 1024, 1e6));
    cmd->add_option("--sm-count", args->sm_count, "parallel units per rank (default: the GPU's SMs; on cpu 1 BLAS thread)")
        ->check(CLI::Range(1, 1 << 16));
    cmd->callback([args] { calibrate_command(*args); });
}

}  // namespace tessel::cli
