#include "cli/common.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/json_io.h"
#include "core/presets.h"

namespace tessel::cli {

void add_plan_flags(CLI::App& cmd, PlanFlags& f, bool plan_required) {
    auto* opt = cmd.add_option("--plan", f.plan_file, "plan JSON (as written by `tessel plan --json`'s winner or configs/plans/)");
    if (plan_required) opt->required();
    cmd.add_option("--tp", f.tp, "tensor-parallel size");
    cmd.add_option("--pp", f.pp, "pipeline-parallel size");
    cmd.add_option("--dp", f.dp, "data-parallel size");
    cmd.add_option("--cp", f.cp, "context-parallel size");
    cmd.add_option("--zero-stage", f.zero_stage, "ZeRO stage 0-3");
    cmd.add_option("--microbatch-size", f.microbatch_size, "sequences per microbatch");
    cmd.add_option("--global-batch-size", f.global_batch_size, "sequences per optimizer step");
    cmd.add_option("--seq", f.seq_length, "sequence length");
    cmd.add_option("--virtual-stages", f.virtual_stages, "model chunks per pipeline rank (> 1: interleaved)");
    cmd.add_option("--sequence-parallel", f.sequence_parallel, "true|false");
    cmd.add_option("--recompute", f.recompute, "none|selective|full");
    cmd.add_option("--recompute-layers", f.recompute_layers,
                   "with --recompute full: layers of each model chunk recomputed, the rest keep their activations "
                   "(Megatron's --recompute-method block --recompute-num-layers; 0: all)");
    cmd.add_option("--lm-head-layers", f.lm_head_layers,
                   "with --pp > 1: the LM head counts as N layers in the pipeline split, the last chunk holding N "
                   "fewer (Megatron's --account-for-loss-in-pipeline-split is 1; torchtitan's "
                   "pipeline_parallel_last_stage_less_layers)");
    cmd.add_option("--schedule", f.schedule, "gpipe|1f1b|interleaved");
    cmd.add_option("--precision", f.precision, "bf16|fp16|fp32|fp8");
    cmd.add_option("--placement", f.placement, "order of dimensions, innermost first, e.g. tp-cp-dp-pp");
}

namespace {

// The other JSON files tessel writes are objects too, and every plan key is optional, so one of
// them given as --plan would be read as the default one-GPU plan with only warnings.
void reject_other_documents(const json& j, const std::string& origin) {
    if (j.contains("candidates"))
        throw input_error(origin, "candidates",
                          "a plan, not a plan search's result: give its winner, candidates[0].plan, as a file of its own "
                          "(jq '.candidates[0].plan' FILE)",
                          "a ranked list of candidates");
    if (j.contains("plan") && j["plan"].is_object())
        throw input_error(origin, "plan",
                          "a plan, not a simulation result or a measured run: give the object under \"plan\" as a "
                          "file of its own (jq '.plan' FILE)",
                          "an object holding a plan");
    static const char* const plan_keys[] = {"tp", "pp", "dp", "cp", "zero_stage", "microbatch_size", "global_batch_size",
                                            "virtual_stages", "sequence_parallel", "recompute", "schedule", "precision",
                                            "placement"};
    for (const char* k : plan_keys)
        if (j.contains(k)) return;
    throw input_error(origin, "(top level)", "a plan: at least one of tp, pp, dp, cp, zero_stage, microbatch_size, "
                      "global_batch_size, ... (configs/plans/ has examples)", "none of them");
}

}  // namespace

std::optional<int> dp_filling(const PlanFlags& f, int world_size) {
    if (!f.plan_file.empty() || f.dp || world_size <= 0) return std::nullopt;
    const long long rest = (long long)f.tp.value_or(1) * f.pp.value_or(1) * f.cp.value_or(1);
    if (rest <= 0 || world_size % rest != 0) return std::nullopt;
    return int(world_size / rest);
}

Plan resolve_plan(const PlanFlags& f, const ModelSpec& m, int world_size,
                  const std::optional<std::string>& precision_default) {
    json j = json::object();
    std::string origin = "command line";
    if (!f.plan_file.empty()) j = load_json("plans", f.plan_file, &origin);
    if (!j.is_object()) throw input_error(origin, "(top level)", "a JSON object describing a plan", describe_json_value(j));
    if (!f.plan_file.empty()) reject_other_documents(j, origin);
    if (!j.contains("seq_length")) j["seq_length"] = m.seq_length;
    std::vector<std::string> overrides;  // the flags that replace the plan file's values
    auto set = [&](const char* key, const char* flag, const auto& v) {
        if (!v) return;
        j[key] = *v;
        overrides.push_back(flag);
    };
    set("tp", "--tp", f.tp);
    set("pp", "--pp", f.pp);
    set("dp", "--dp", f.dp);
    set("cp", "--cp", f.cp);
    set("zero_stage", "--zero-stage", f.zero_stage);
    set("microbatch_size", "--microbatch-size", f.microbatch_size);
    set("global_batch_size", "--global-batch-size", f.global_batch_size);
    set("seq_length", "--seq", f.seq_length);
    set("virtual_stages", "--virtual-stages", f.virtual_stages);
    set("sequence_parallel", "--sequence-parallel", f.sequence_parallel);
    set("recompute", "--recompute", f.recompute);
    set("recompute_layers", "--recompute-layers", f.recompute_layers);
    set("lm_head_layers", "--lm-head-layers", f.lm_head_layers);
    set("schedule", "--schedule", f.schedule);
    set("precision", "--precision", f.precision);
    set("placement", "--placement", f.placement);
    // A message about a value the command line gave must not blame the file alone.
    if (!f.plan_file.empty() && !overrides.empty()) {
        std::string flags;
        for (const auto& o : overrides) flags += (flags.empty() ? "" : ", ") + o;
        origin = fmt::format("{} with {} from the command line", origin, flags);
    }
    if (!j.contains("precision") && precision_default) j["precision"] = *precision_default;
    if (f.virtual_stages && *f.virtual_stages > 1 && !f.schedule) j["schedule"] = "interleaved";
    if (const auto dp = dp_filling(f, world_size)) j["dp"] = *dp;
    const bool batch_defaulted = !j.contains("global_batch_size");
    Plan p = parse_plan(j, origin);
    try {
        validate_plan(p, m, world_size, origin);
    } catch (const InputError& e) {
        // A batch nobody gave must not read as the user's mistake alone.
        const std::string what = e.what();
        if (!batch_defaulted || what.find("'global_batch_size'") == std::string::npos) throw;
        throw InputError(what + fmt::format(" (not given: it defaults to dp*microbatch_size = {}, one microbatch per "
                                            "data-parallel rank; set it with --global-batch-size)",
                                            p.global_batch_size));
    }
    return p;
}

ClusterSpec resolve_cluster(const std::string& name_or_path, std::optional<long long> gpus, std::optional<int> gpus_per_node) {
    ClusterSpec c = load_cluster(name_or_path);
    if (gpus_per_node) {
        // A job takes part of a node, never more than the node holds.
        if (*gpus_per_node > c.gpus_per_node)
            throw input_error("--gpus-per-node", "", fmt::format("at most the {} GPUs per node of cluster '{}'", c.gpus_per_node, c.name),
                              std::to_string(*gpus_per_node));
        c = with_gpus_per_node(c, *gpus_per_node);
    }
    if (gpus) c = resize_cluster(c, *gpus);
    return c;
}

std::string human_count(double n) {
    if (n >= 1e12) return fmt::format("{:.2f}T", n / 1e12);
    if (n >= 1e9) return fmt::format("{:.2f}B", n / 1e9);
    if (n >= 1e6) return fmt::format("{:.2f}M", n / 1e6);
    if (n >= 1e3) return fmt::format("{:.2f}K", n / 1e3);
    return fmt::format("{:.0f}", n);
}

void write_output(const std::string& path, const std::string& text) {
    if (path == "-") {
        std::cout << text;
        return;
    }
    write_file_atomically(path, text);
}

namespace {

// Two outputs' names of one file: equal, or the same path once made absolute and normalised,
// which needs neither file to exist yet (./a.json and a.json).
bool same_output_file(const std::string& a, const std::string& b) {
    if (a == b) return true;
    std::error_code ec;
    const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a, ec), ec);
    const auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b, ec), ec);
    return !ec && ca == cb;
}

bool is_file_path(const std::string& path) { return !path.empty() && path != "-"; }

}  // namespace

void check_output_file(const std::string& flag, const std::string& path, FlagPaths inputs) {
    if (!is_file_path(path)) return;
    try {
        check_file_writable(path);
    } catch (const InputError& e) {
        throw InputError(fmt::format("{} {}", flag, e.what()));
    }
    for (const auto& [input_flag, input] : inputs) {
        std::error_code ec;
        if (is_file_path(input) && std::filesystem::equivalent(path, input, ec) && !ec)
            throw InputError(fmt::format("{} {}: the same file as {} {}, which it would overwrite; give the output "
                                         "another name",
                                         flag, path, input_flag, input));
    }
}

std::FILE* check_outputs(FlagPaths outputs, FlagPaths inputs) {
    std::string on_stdout;
    int count = 0;
    for (auto it = outputs.begin(); it != outputs.end(); ++it) {
        const auto& [flag, path] = *it;
        check_output_file(flag, path, inputs);
        // Two outputs in one file: the second written would silently replace the first.
        for (auto other = outputs.begin(); other != it && is_file_path(path); ++other) {
            const auto& [other_flag, other_path] = *other;
            if (is_file_path(other_path) && same_output_file(path, other_path))
                throw InputError(fmt::format("{} {}: the same file as {} {}; give each output its own name", flag, path,
                                             other_flag, other_path));
        }
        if (path != "-") continue;
        on_stdout += fmt::format("{}{} -", count ? " and " : "", flag);
        ++count;
    }
    if (count > 1)
        throw InputError(fmt::format("{}: only one of them can go to stdout; give the other a file", on_stdout));
    return count ? stderr : stdout;
}

CLI::Validator non_empty(const std::string& expected, const std::string& type) {
    return CLI::Validator(
        [expected](std::string& text) {
            return text.empty() ? fmt::format("expected {}, got an empty string", expected) : std::string();
        },
        type);
}

CLI::Validator output_path() { return non_empty("a file path ('-' for stdout where the flag takes it)", "PATH"); }

CLI::Validator unsigned_64() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            // std::stoull reads "-1" as 2^64 - 1: only digits, within 64 bits.
            std::uint64_t value = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, value);
            if (text.empty() || ec != std::errc() || ptr != end)
                return fmt::format("expected an integer from 0 to {}, got {}", std::numeric_limits<std::uint64_t>::max(), text);
            return {};
        },
        "UINT64");
}

CLI::Validator finite_range(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value < lo || value > hi)
                return fmt::format("expected a number in [{} - {}], got {}", lo, hi, text);
            return {};
        },
        fmt::format("FLOAT in [{} - {}]", lo, hi));
}

}  // namespace tessel::cli
