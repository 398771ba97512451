// Flags shared by several subcommands and the helpers that resolve them.
#pragma once
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include "core/cluster_spec.h"
#include "core/model_spec.h"
#include "core/plan.h"

namespace tessel::cli {

// The built-in default of `tessel plan` with no arguments.
inline constexpr const char* kDefaultModel = "llama3-70b";
inline constexpr const char* kDefaultCluster = "dgx-h100";
inline constexpr int kDefaultGpus = 64;

// Plan fields as flags (--tp, --pp, ...), each overriding the plan file when given.
struct PlanFlags {
    std::string plan_file;
    std::optional<int> tp, pp, dp, cp, zero_stage, microbatch_size, global_batch_size, seq_length, virtual_stages,
        recompute_layers, lm_head_layers;
    std::optional<bool> sequence_parallel;
    std::optional<std::string> recompute, schedule, precision, placement;
};
void add_plan_flags(CLI::App& cmd, PlanFlags& flags, bool plan_required);

// A finite number in [lo, hi]: CLI::Range lets NaN through (every comparison with it is false).
CLI::Validator finite_range(double lo, double hi);
// A non-negative integer that fits 64 bits, as written (no sign, no wrap-around).
CLI::Validator unsigned_64();
// Refuses an empty value ("expected EXPECTED, got an empty string"): CLI11 takes "--flag $UNSET" as
// given, and an empty string read as "not given" would silently skip what the flag asked for.
CLI::Validator non_empty(const std::string& expected, const std::string& type);
// An output path that is not empty: an unset shell variable (--json "$OUT") must not read as success.
CLI::Validator output_path();
// Without a plan file or --dp, the DP size that fills world_size GPUs or ranks with the flags' TP,
// PP and CP (none where they do not divide it, or world_size is 0).
std::optional<int> dp_filling(const PlanFlags& flags, int world_size);
// Reads --plan (if any) and applies the flags over it; validates against the model and world.
// `precision_default` is the precision where neither the flags nor the plan file name one
// (otherwise the plan format's default, bf16).
Plan resolve_plan(const PlanFlags& flags, const ModelSpec& m, int world_size,
                  const std::optional<std::string>& precision_default = std::nullopt);

// The cluster preset or file with --gpus-per-node (the GPUs a job takes of each node), then --gpus
// N resized to N GPUs; absent values keep the preset's.
ClusterSpec resolve_cluster(const std::string& name_or_path, std::optional<long long> gpus,
                            std::optional<int> gpus_per_node = std::nullopt);

// A count in words' sizes for the tables: 70.55B, 1.40T, 125.00M, 12.30K, 512.
std::string human_count(double n);

// Writes text to a file atomically, or to stdout for "-".
void write_output(const std::string& path, const std::string& text);

// Every command checks its output paths before its work (a long run, calibration, a simulation
// whose other output would be written first): InputError naming the flag when the folder is
// missing or cannot be written, or the path is a folder. "" (no output) and "-" (stdout) pass.
// An output that is one of the command's input files (`inputs`, as (flag, path) pairs; presets and
// paths that do not exist never are) is refused too: writing it would destroy the input.
using FlagPaths = std::initializer_list<std::pair<const char*, std::string>>;
void check_output_file(const std::string& flag, const std::string& path, FlagPaths inputs = {});
// A command's outputs as (flag, path) pairs: each checked with check_output_file, at most one on
// stdout (InputError naming them otherwise). Returns where the command's table goes: stdout, or
// stderr when an output holds stdout.
std::FILE* check_outputs(FlagPaths outputs, FlagPaths inputs = {});

}  // namespace tessel::cli
