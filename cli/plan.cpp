// tessel plan: search every way to split a model over a cluster, rank the plans that fit, explain
// the winner, and optionally size the training run (--tokens, --chinchilla, --days, --gpu-hours)
// and export the winner (--emit megatron | deepspeed | torchtitan).
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/accounting.h"
#include "core/errors.h"
#include "core/presets.h"
#include "planner/budget_plan.h"
#include "planner/chinchilla.h"
#include "planner/explain.h"
#include "planner/export_deepspeed.h"
#include "planner/export_megatron.h"
#include "planner/export_torchtitan.h"
#include "planner/search.h"

namespace tessel::cli {

namespace {
struct PlanArgs {
    std::string model, cluster;
    std::optional<long long> gpus;
    std::optional<int> gpus_per_node;
    std::optional<int> global_batch, seq;
    std::optional<std::string> tokens;
    bool chinchilla = false;
    std::optional<double> days, gpu_hours;
    std::optional<std::string> precision;
    std::string objective = "time";
    double memory_headroom = 0.10;
    int top = 5;
    std::string json_file;
    std::optional<std::string> emit;
    std::optional<std::string> torchtitan_format;  // default "overrides"
    int threads = 0;
    bool tp_comm_overlap = false;
};

constexpr double kMaxTrainingSteps = 9007199254740992.0;  // 2^53

// "1.4T", "2e12", "300B" -> tokens, whole.
double parse_count(const std::string& text, const char* flag) {
    std::size_t used = 0;
    double v = 0;
    // Decimal only: std::stod would also take leading blanks, hexadecimal ("0x10") and "inf".
    const bool decimal = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.') &&
                         text.find_first_of("xXpP") == std::string::npos;
    try {
        if (!decimal) throw std::invalid_argument(text);
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        throw InputError(fmt::format("{}: expected a number such as 1.4e12 or 1.4T, got \"{}\"", flag, text));
    }
    const std::string suffix = text.substr(used);
    if (suffix == "K" || suffix == "k") v *= 1e3;
    else if (suffix == "M" || suffix == "m") v *= 1e6;
    else if (suffix == "B" || suffix == "b" || suffix == "G" || suffix == "g") v *= 1e9;
    else if (suffix == "T" || suffix == "t") v *= 1e12;
    else if (!suffix.empty())
        throw InputError(fmt::format("{}: expected a number with an optional K, M, B (or G) or T suffix, got \"{}\"", flag, text));
    if (!(v >= 1) || !std::isfinite(v))
        throw InputError(fmt::format("{}: expected a count of at least 1, got \"{}\"", flag, text));
    return std::round(v);
}

// The ranked table, the explanation and budget lines go to stdout, or to stderr under --emit.
struct Printer {
    std::FILE* out;
    template <typename... A>
    void line(fmt::format_string<A...> f, A&&... a) {
        fmt::print(out, f, std::forward<A>(a)...);
        fmt::print(out, "\n");
    }
};

// A progress line on a terminal once the search has run for a second.
std::function<void(const SearchProgress&)> progress_line() {
    if (!isatty(STDERR_FILENO)) return {};
    return [](const SearchProgress& p) {
        if (p.elapsed_s < 1.0) return;
        const double pct = p.total > 0 ? 100.0 * double(p.visited) / double(p.total) : 0.0;
        std::string best = p.best_score > 0 ? fmt::format(", best {:.4g}", p.best_score) : "";
        fmt::print(stderr, "\r  searching: {:5.1f}% of {:L} plans, {:L} simulated{}, {:.1f} s   ", pct, p.total,
                   p.simulated, best, p.elapsed_s);
        std::fflush(stderr);
    };
}

// `gpus`: the winning plan's, which under --objective tokens-per-dollar may be fewer than the cluster's.
void print_budget(Printer& pr, const TrainingBudget& b, int gpus, const ClusterSpec& c, const char* origin) {
    // Under a day in hours: a short run printed "0.0 days".
    const std::string duration = b.days >= 1 ? fmt::format("{:.1f} days", b.days) : fmt::format("{:.2g} hours", b.days * 24);
    // Three significant figures below 1000: a short run's "0 GPU-hours; cost $1" read as free.
    auto amount = [](double x) { return x >= 1000 ? fmt::format("{:.0f}", x) : fmt::format("{:.3g}", x); };
    pr.line("budget ({}): {} tokens = {:.0f} steps; {} on {} GPUs; {} GPU-hours; cost {}", origin,
            human_count(b.tokens), b.steps, duration, gpus, amount(b.gpu_hours),
            c.price_per_gpu_hour > 0 ? fmt::format("${} at ${:.2f}/GPU-hour", amount(b.cost), c.price_per_gpu_hour)
                                     : std::string("unknown (the cluster has no price_per_gpu_hour)"));
}

// Why the default global batch is what it is (default_global_batch).
std::string default_batch_reason(const PlanRequest& req) {
    return default_batch_set_by_gpus(req.seq_length, req.num_gpus) ? " (default: one sequence per 8 GPUs, which is more than ~2M tokens here, raised to a multiple "
                        "of the GPU count's odd factor)"
                      : " (default: ~2M tokens, a multiple of the GPU count's odd factor)";
}

void run_plan(const PlanArgs& a) {
    const bool sized_by_budget = a.days || a.gpu_hours;
    const int budget_flags = (a.tokens ? 1 : 0) + (a.chinchilla ? 1 : 0) + (a.days ? 1 : 0) + (a.gpu_hours ? 1 : 0);
    if (budget_flags > 1) throw InputError("give at most one of --tokens, --chinchilla, --days and --gpu-hours");
    if (sized_by_budget && !a.model.empty())
        throw InputError("--days / --gpu-hours choose the model size themselves: drop --model (or use --tokens)");
    if (a.days && !(*a.days > 0 && std::isfinite(*a.days)))
        throw InputError(fmt::format("--days: expected a positive number, got {}", *a.days));
    if (a.gpu_hours && !(*a.gpu_hours > 0 && std::isfinite(*a.gpu_hours)))
        throw InputError(fmt::format("--gpu-hours: expected a positive number, got {}", *a.gpu_hours));
    if (a.global_batch && *a.global_batch < 1) throw InputError("--global-batch: expected a positive number of sequences");
    if (a.seq && *a.seq < 1) throw InputError("--seq: expected a positive sequence length");
    if (a.top < 1) throw InputError(fmt::format("--top: expected at least 1, got {}", a.top));
    const std::optional<double> tokens_asked =
        a.tokens ? std::optional<double>(parse_count(*a.tokens, "--tokens")) : std::nullopt;
    if (a.emit && a.json_file == "-") throw InputError("--json -: stdout holds the --emit config; give --json a file");
    std::FILE* table = check_outputs({{"--json", a.json_file}}, {{"--model", a.model}, {"--cluster", a.cluster}});

    SearchOptions o;
    o.objective = parse_objective(a.objective);
    o.memory_headroom = a.memory_headroom;
    o.top_k = a.top;
    o.threads = a.threads;
    o.progress = progress_line();
    const Framework framework = a.emit ? parse_framework(*a.emit) : Framework::any;
    o.framework = framework;
    if (a.torchtitan_format && (!a.emit || *a.emit != "torchtitan"))
        throw InputError(fmt::format("--torchtitan-format {}: expected only with --emit torchtitan, which it formats",
                                     *a.torchtitan_format));
    const TorchtitanFormat tt_format = parse_torchtitan_format(a.torchtitan_format.value_or("overrides"));

    const bool default_cluster = a.cluster.empty() && !a.gpus;
    const std::string cluster_origin = a.cluster.empty() ? std::string(kDefaultCluster) : a.cluster;
    ClusterSpec c = resolve_cluster(cluster_origin,
                                    a.gpus ? a.gpus : (a.cluster.empty() ? std::optional<long long>(kDefaultGpus) : std::nullopt),
                                    a.gpus_per_node);
    // Every plan takes one precision, --precision or the GPU's default; the exported framework's
    // stack is simulated in it.
    const Precision precision = a.precision ? parse_precision(*a.precision) : default_precision(c.gpu);
    check_precision_peak(c, precision, cluster_origin);
    check_framework_precision(framework, precision, cluster_origin);
    o.simulate = simulate_options_for(framework, precision);
    use_gpu_attention(o.simulate, c.gpu);
    if (a.tp_comm_overlap) {
        const std::string flags = a.emit ? "--tp-comm-overlap with --emit " + *a.emit : "--tp-comm-overlap";
        apply_tp_comm_overlap(o.simulate, framework, flags);
        check_tp_comm_overlap_gpu(framework, c.gpu, cluster_origin, flags);
    }
    // stdout holds the exported config or the JSON when either goes there.
    Printer pr{a.emit ? stderr : table};
    if (o.objective == Objective::tokens_per_dollar && !(c.price_per_gpu_hour > 0))
        pr.line("note: {} has no price_per_gpu_hour: plans rank by tokens per GPU-hour (the same order at any one "
                "price), and tokens/$ reads 0",
                cluster_origin);

    ModelSpec m;
    SearchResult result;
    std::optional<TrainingBudget> budget;
    std::optional<json> sizing;
    const char* budget_origin = "";
    if (sized_by_budget) {
        ComputeBudget b;
        b.days = a.days.value_or(0);
        b.gpu_hours = a.gpu_hours.value_or(0);
        // Printed once the sizing has succeeded: a budget it refuses (exit 2) leaves no output.
        const std::string heading =
            fmt::format("Sizing a compute-optimal model for {} on {} GPUs of {} ({} node{} x {} {}):",
                        a.days ? fmt::format("{} days", *a.days) : fmt::format("{} GPU-hours", *a.gpu_hours),
                        c.num_gpus(), c.name, c.num_nodes, c.num_nodes == 1 ? "" : "s", c.gpus_per_node, c.gpu.name);
        BudgetPlan bp = plan_for_budget(c, b, a.global_batch.value_or(0), a.seq.value_or(0), o, precision);
        if (o.progress) fmt::print(stderr, "\r{:80}\r", "");
        pr.line("{}", heading);
        sizing = to_json(bp, b);
        for (const auto& r : bp.rounds) pr.line("  {}", r);
        if (!bp.settled)
            pr.line("note: the size did not settle within {} rounds (each round's best plan used another GPU count or "
                    "throughput); the model below is the last one tried, and its budget may miss the one asked for",
                    kBudgetRounds);
        m = bp.model;
        result = bp.search;
        pr.line("compute-optimal split (Hoffmann et al. 2022: D = 20 N, C = 6 N D): {:.3g} FLOPs -> {} parameters, {} "
                "tokens; Approach 3's fit would give {} parameters and {} tokens",
                bp.optimal.flops, human_count(bp.optimal.parameters), human_count(bp.optimal.tokens), human_count(bp.approach3.parameters),
                human_count(bp.approach3.tokens));
        const auto pc = count_parameters(m);
        pr.line("model chosen: {} — Llama-3 style, {} layers, hidden {}, {} heads ({} KV, head dim {}), FFN {} (SwiGLU), "
                "vocab {}, sequence {}: {} parameters (width/depth {:.0f}; Llama 3's is 128)",
                m.name, m.num_layers, m.hidden_size, m.num_attention_heads, m.num_kv_heads, m.head_dim, m.ffn_hidden_size,
                m.vocab_size, m.seq_length, human_count(double(pc.total)), double(m.hidden_size) / m.num_layers);
        pr.line("predicted loss L(N, D) = {:.3f} nats per token (Hoffmann et al. 2022 Approach 3 fit: MassiveText under "
                "Chinchilla's tokenizer, a guide to scale, not this model's loss on your data)",
                chinchilla_loss(double(pc.total), bp.budget.tokens));
        budget = bp.budget;
        budget_origin = "Chinchilla tokens for the chosen model";
        // Shapes come in steps: the one kept may train its tokens in a little more (or less) than asked.
        const double share = budget_share(bp, b);
        if (std::abs(share - 1.0) > 0.005)
            pr.line("note: its Chinchilla tokens take {:.1f}% of the {} asked ({}): the sizing stops within 2% of the "
                    "optimum, and shapes come in steps; --model with --tokens trains a shape on the tokens you choose",
                    100.0 * share, a.days ? "days" : "GPU-hours",
                    a.days ? fmt::format("{:.3g} days of {}", bp.budget.days, *a.days)
                           : fmt::format("{:.4g} GPU-hours of {}", bp.budget.gpu_hours, *a.gpu_hours));
    } else {
        const bool default_model = a.model.empty();
        m = load_model(default_model ? kDefaultModel : a.model);
        if (framework == Framework::torchtitan) {
            const std::vector<std::string> gaps = torchtitan_llama3_gaps(m);
            if (!gaps.empty())
                throw InputError(fmt::format("--emit torchtitan: its llama3 model cannot build {} ({}); a launch would "
                                             "train another model. Emit megatron or deepspeed",
                                             m.name, fmt::join(gaps, ", ")));
        }
        const PlanRequest req = complete_request(m, c, a.global_batch.value_or(0), a.seq.value_or(0), precision);
        // Bad input for every plan, as simulate says, not "no plan fits" (exit 3).
        if (m.position_embedding == PositionEmbedding::learned && req.seq_length > m.max_position_embeddings)
            throw input_error(a.seq ? "--seq" : a.model, a.seq ? "" : "seq_length",
                              fmt::format("at most the model's {} learned positions", m.max_position_embeddings),
                              std::to_string(req.seq_length));
        // Steps are counted in whole numbers (the JSON's steps, Megatron's --train-iters): a count
        // beyond 2^53 is no longer exact in a double, nor meaningful.
        const double tokens_per_step = double(req.global_batch_size) * req.seq_length;
        if (tokens_asked && *tokens_asked / tokens_per_step > kMaxTrainingSteps)
            throw InputError(fmt::format("--tokens {}: {:.3g} steps of {} tokens, more than the {:.3g} counted exactly",
                                         *a.tokens, *tokens_asked / tokens_per_step, tokens_per_step, kMaxTrainingSteps));
        pr.line("Planning {}{} on {} GPUs of {}{} ({} node{} x {} {}, {:.4g} GiB each)", m.name,
                default_model ? " (built-in default model)" : "", c.num_gpus(), c.name,
                default_cluster ? " (built-in default cluster)" : "", c.num_nodes, c.num_nodes == 1 ? "" : "s",
                c.gpus_per_node, c.gpu.name, c.gpu.memory_GiB);
        // What the generic stack assumes where Megatron-LM's defaults differ (its fp32 main gradients).
        std::string stack;
        if (framework == Framework::any && (req.precision == Precision::bf16 || req.precision == Precision::fp8) &&
            !o.simulate.grad_reduce_in_fp32)
            stack += " with 16-bit gradients (as NeMo's performance recipes; --emit megatron or deepspeed prices fp32 ones)";
        if (o.simulate.tp_comm_overlap)
            stack += framework == Framework::torchtitan
                         ? "; TP communication overlapped inside a node (--tp-comm-overlap: async TP, compiled)"
                         : "; TP communication overlapped inside a node (--tp-comm-overlap)";
        pr.line("global batch {} sequences x {} tokens = {} tokens per step{}; {}{}; objective {}; memory headroom {:.0f}%{}",
                req.global_batch_size, req.seq_length, human_count(double(req.global_batch_size) * req.seq_length),
                a.global_batch ? "" : default_batch_reason(req), to_string(req.precision), stack,
                to_string(o.objective), 100 * o.memory_headroom,
                a.emit ? fmt::format("; only plans {} runs", *a.emit) : std::string());
        result = search_plans(m, c, req, o);
        if (o.progress) fmt::print(stderr, "\r{:100}\r", "");
        if (a.tokens || a.chinchilla) {
            const double params = double(count_parameters(m).total);
            const double tokens = tokens_asked ? *tokens_asked : chinchilla_tokens(params);
            budget = budget_for_tokens(tokens, result.best.front(), c.price_per_gpu_hour);
            budget_origin = a.tokens ? "--tokens"
                                     : "Chinchilla, 20 tokens per parameter, embeddings included (Hoffmann et al. 2022, Table 3)";
        }
    }

    pr.line("{}", format_search_stats(result));
    fmt::print(pr.out, "{}", format_ranking_table(result, c, o.objective));
    pr.line("why #1: {}", explain_winner(result, o.objective));
    for (const auto& n : result.best.front().notes) pr.line("note: {}", n);
    if (budget) {
        const int world = result.best.front().plan.world_size();
        print_budget(pr, *budget, world, c, budget_origin);
        // A job on part of each node (64 of an NVL72 rack's 72) leaves the rest of its nodes idle,
        // which the cost above does not bill. The preset's own node size is read only then.
        if (a.gpus_per_node) {
            const int node_gpus = load_cluster(cluster_origin).gpus_per_node;
            const int nodes = (world + c.gpus_per_node - 1) / c.gpus_per_node;
            if (*a.gpus_per_node < node_gpus)
                pr.line("note: the cost bills the {} GPUs the plan uses; its {} nodes of {} hold {} GPUs, {} of them idle",
                        world, nodes, c.name, nodes * node_gpus, nodes * node_gpus - world);
        }
    }

    if (!a.json_file.empty()) {
        json candidates = json::array();
        for (const auto& r : result.best) candidates.push_back(to_json(r, m, c));
        json j = {{"considered", result.considered},
                  {"rejected", result.rejected},
                  {"pruned", result.pruned_memory + result.pruned_bound},
                  {"pruned_memory", result.pruned_memory},
                  {"pruned_bound", result.pruned_bound},
                  {"simulated", result.simulated},
                  {"search_s", result.search_s},
                  {"objective", to_string(o.objective)},
                  {"candidates", candidates}};
        if (budget) {
            const json b = to_json(*budget);
            for (auto it = b.begin(); it != b.end(); ++it) j[it.key()] = it.value();
        }
        if (sizing) j["sizing"] = *sizing;
        write_output(a.json_file, j.dump(2) + "\n");
    }

    if (a.emit) {
        ExportOptions eo;
        if (budget) eo.train_iters = (long long)budget->steps;
        const SimulationResult& win = result.best.front();
        Emitted e = framework == Framework::megatron    ? export_megatron(m, win, c, eo)
                    : framework == Framework::deepspeed ? export_deepspeed(m, win, c, eo)
                                                        : export_torchtitan(m, win, c, tt_format, eo);
        for (const auto& n : e.notes) fmt::print(stderr, "{} note: {}\n", *a.emit, n);
        std::cout << e.text << std::flush;
    }
}
}  // namespace

void add_plan(CLI::App& app) {
    auto a = std::make_shared<PlanArgs>();
    auto* cmd = app.add_subcommand("plan", "Find the fastest way to split a model over a cluster, and explain it");
    cmd->footer(fmt::format(
        "With no arguments: {} on {} resized to {} GPUs.\n"
        "Default global batch: 2^21 tokens / seq (at least GPUs / 8), raised to the smallest odd(GPUs) x 2^k so every "
        "data-parallel size up to the batch divides it.\n"
        "Examples:\n"
        "  tessel plan\n"
        "  tessel plan --model gpt3-175b --cluster dgx-a100 --gpus 384 --global-batch 1536 --top 5 --json plans.json\n"
        "  tessel plan --model llama3-70b --cluster dgx-h100 --gpus 256 --chinchilla --emit megatron > launch.sh\n"
        "  tessel plan --cluster dgx-h100 --gpus 1024 --days 30\n"
        "  tessel plan --cluster gb200-nvl72 --gpus-per-node 64 --gpus 128\n"
        "  tessel plan --model llama3-405b --cluster dgx-b200 --gpus 512 --precision fp8",
        kDefaultModel, kDefaultCluster, kDefaultGpus));
    cmd->add_option("--model", a->model, fmt::format("preset name or path (default {})", kDefaultModel));
    cmd->add_option("--cluster", a->cluster, fmt::format("preset name or path (default {})", kDefaultCluster));
    cmd->add_option("--gpus", a->gpus, "resize the cluster to N GPUs (whole nodes)");
    cmd->add_option("--gpus-per-node", a->gpus_per_node,
                    "GPUs the job takes of each node or NVLink domain (e.g. 64 of a GB200 NVL72 rack; default: all)");
    cmd->add_option("--global-batch", a->global_batch, "sequences per optimizer step (default: see below)");
    cmd->add_option("--seq", a->seq, "sequence length (default: the model's)");
    auto* tokens = cmd->add_option("--tokens", a->tokens, "train on T tokens: steps, days, GPU-hours, cost (e.g. 1.4T)");
    auto* chin = cmd->add_flag("--chinchilla", a->chinchilla, "train on 20 tokens per parameter (Hoffmann et al. 2022)");
    // "--days $D" with D unset must not plan without a budget.
    const CLI::Validator given_number = non_empty("a positive number", "NUMBER");
    auto* days = cmd->add_option("--days", a->days, "size a compute-optimal model for D days on the cluster (--objective "
                                 "time), and plan it")->check(given_number);
    auto* hours = cmd->add_option("--gpu-hours", a->gpu_hours, "size a compute-optimal model for H GPU-hours, and plan it")
                      ->check(given_number);
    tokens->excludes(chin)->excludes(days)->excludes(hours);
    chin->excludes(days)->excludes(hours);
    days->excludes(hours);
    cmd->add_option("--precision", a->precision,
                    "bf16 | fp16 | fp32 | fp8 (default: bf16 where the GPU has it); fp8: GEMMs at the fp8 peak "
                    "through Transformer Engine (torchao's Float8Linear under --emit torchtitan), the rest in bf16")
        ->check(CLI::IsMember({"bf16", "fp16", "fp32", "fp8"}));
    cmd->add_option("--objective", a->objective, "time | tokens-per-dollar | memory (default time)")
        ->check(CLI::IsMember({"time", "tokens-per-dollar", "memory"}));
    cmd->add_option("--memory-headroom", a->memory_headroom, "fraction of GPU memory kept free (default 0.10)")
        ->check(finite_range(0.0, 0.9));
    cmd->add_option("--top", a->top, "plans to show (default 5)")->check(CLI::Range(1, 1000));
    cmd->add_option("--json", a->json_file, "write the ranked plans as JSON ('-' for stdout)")
        ->check(output_path());
    cmd->add_option("--emit", a->emit, "write the winner as a megatron | deepspeed | torchtitan config on stdout "
                                       "(the search keeps to what that framework runs)")
        ->check(CLI::IsMember({"megatron", "deepspeed", "torchtitan"}));
    cmd->add_option("--torchtitan-format", a->torchtitan_format,
                    "overrides (command-line --section.key, default) | toml (v0.1-v0.2 job config)")
        ->check(CLI::IsMember({"overrides", "toml"}));
    cmd->add_option("--threads", a->threads, "search threads (default: every core)")->check(CLI::Range(0, 256));
    cmd->add_flag("--tp-comm-overlap", a->tp_comm_overlap,
                  "price TP collectives overlapped with their GEMMs inside a node (Megatron's --tp-comm-overlap, "
                  "Transformer Engine's userbuffers, as NeMo's recipes run; torchtitan's async TP, which compiles the "
                  "model): sequence parallelism on with TP; --emit megatron or torchtitan writes it");
    cmd->callback([a] { run_plan(*a); });
}

}  // namespace tessel::cli
