// tessel validate: predict published training runs and compare each with the figure its source
// published. A row of the runs file (configs/validation/published_runs.json) names the model, the
// GPUs, the parallel layout and one throughput figure; every null field takes the framework's
// documented default by a general rule (validate.cpp, "Rules"), never by a rule for one row.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/json_io.h"
#include "core/model_spec.h"
#include "core/plan.h"
#include "simulator/simulate.h"

namespace tessel {

struct SoftwareStack;

// The built-in runs the global parameters are fitted on: its preset name, and the path `tessel
// validate` reports it under (the other files' errors are out of sample).
inline constexpr const char* kFitSetPreset = "published_runs";
inline constexpr const char* kFitSetOrigin = "configs/validation/published_runs.json";

// How a row is turned into a model, a cluster, a plan and simulator options.
struct ValidationCase {
    std::string name;
    std::string framework;
    ModelSpec model;
    ClusterSpec cluster;
    Plan plan;
    SimulateOptions options;
    // torchtitan's "selective" activation checkpointing re-runs about half of each forward
    // (every other matmul, or every other layer): simulated as the midpoint of none and full.
    bool half_recompute = false;
    std::vector<std::string> assumptions;  // every default a null field took, in words
    // The knobs the row left null that R15 may set when the defaults do not fit in memory.
    struct Unstated {
        bool virtual_pipeline = false, microbatch = false, recompute = false, zero = false, sequence_parallel = false;
        bool any() const { return virtual_pipeline || microbatch || recompute || zero || sequence_parallel; }
    } unstated;
    const SoftwareStack* stack = nullptr;      // the framework the source ran: what R15 may choose
    bool stated_param_gather_overlap = false;  // R7's weight-gather overlap before ZeRO-3's own
};

enum class PublishedMetric { tokens_per_s_per_gpu, iteration_time_s, hardware_tflops_per_gpu, model_tflops_per_gpu, mfu, hfu };
const char* to_string(PublishedMetric m);

struct ValidationRow {
    std::string name;
    std::string source;
    std::string framework;             // the software the source ran (Megatron-LM, llm-foundry, ...)
    bool modelable = false;
    std::string skipped_because;
    ValidationCase setup;
    PublishedMetric metric = PublishedMetric::tokens_per_s_per_gpu;
    double published = 0, predicted = 0;
    double error = 0;                        // (predicted - published) / published
    double published_mfu = 0, predicted_mfu = 0;  // utilization implied, under tessel's FLOP count
    double step_time_s = 0;
    bool fits = false;
    double memory_GiB = 0;
    double published_memory_GiB = 0;   // R16: the source's measured peak per GPU; 0 where it gives none
    SimulationResult result;
};

struct ValidationSummary {
    int rows = 0, modelable = 0;
    double mape = 0;                 // mean |error| over modelable rows
    double worst_error = 0;          // signed, of the row with the largest |error|
    std::string worst_row;
    double spearman = 0;             // rank correlation of implied utilization, published vs predicted
    double fit_share = 0;            // share of modelable rows predicted to fit in memory
    int within_15_percent = 0;
    // Predicted against published peak memory per GPU (R16), over the modelable rows that give one:
    // mean of predicted / published − 1 and of its magnitude.
    int memory_rows = 0;
    double memory_bias = 0, memory_mape = 0;
};

struct ValidationReport {
    std::vector<ValidationRow> rows;
    ValidationSummary summary;
};

// Builds the case for one row; InputError (naming `origin`, the row and the key) when a field
// the rules need is missing or the layout is not valid for the model.
ValidationCase validation_case(const json& row, const std::string& origin);
// R3: the ZeRO stage a zero_or_fsdp text names ("ZeRO-1", "ZeRO stage 3", FSDP's sharding
// strategies, Megatron's distributed optimizer), or nullopt when it names none.
std::optional<int> stated_zero_stage(const std::string& text);
// R4: the recompute an activation_recompute text names (nullopt for an empty one).
std::optional<Recompute> stated_recompute(const std::string& text);
// R4: with full recompute, the layers of each chunk a text says are recomputed ("--recompute-method
// block --recompute-num-layers 5", NeMo's "recompute_layers 5"); 0 (every layer) when it names none.
int stated_block_recompute_layers(const std::string& text);
// R5: the GEMMs' number format a precision text names ("amp_bf16", "torch.float16", "MXFP8", "fp32").
// `format` is the simulator's precision, or nullopt when the text names none; `unmodelled` is the
// name of a format the simulator has no costs for (4- and 6-bit floats, integers, TF32 alone) when
// the text names one, else empty.
struct StatedPrecision {
    std::optional<Precision> format;
    std::string unmodelled;
};
StatedPrecision stated_precision(const std::string& text);
// The rows of a published-runs file: its top-level array, or the "runs" array of an object that
// holds one beside other keys; InputError naming `origin` otherwise.
const json& published_run_list(const json& file, const std::string& origin);
// Where a profile measured on one device (`device`, the gpu.name of the cluster file that holds it;
// empty when the file is a bare profile) is applied to rows on others: each other GPU the modelled
// rows run on (its preset's name) and how many rows run on it, most rows first, ties by name.
struct RowsOnGpu {
    std::string gpu;
    int rows = 0;
};
std::vector<RowsOnGpu> rows_on_other_gpus(const ValidationReport& rep, const std::string& device);

// `profile`, when given, replaces every cluster's profile (see simulator/hardware_efficiency.h),
// e.g. one written by `tessel calibrate`.
ValidationReport validate_runs(const json& runs, const std::string& origin, const std::optional<json>& profile = std::nullopt);

// The summary statistics of a set of rows.
ValidationSummary summarize(const std::vector<ValidationRow>& rows);

// A global simulator parameter fitted on the published runs: its profile key, the grid searched
// and the default the simulator ships (the fit's result on configs/validation).
struct FittedParameter {
    std::string name;
    std::vector<double> grid;
    double shipped = 0;
};
const std::vector<FittedParameter>& fitted_parameters();

// The fitted parameters, refitted on every subset: on all rows (in-sample), and for each fold on
// the rows outside it, that fold then predicted (held out). Folds: by framework (leave one
// framework out) and k folds by position in the file. The baseline predicts every row with one
// constant MFU, fitted the same ways.
struct CrossValidation {
    std::vector<std::string> parameters;
    std::vector<double> in_sample;               // fitted on every row
    ValidationSummary in_sample_summary;
    struct Fold {
        std::string name;
        std::vector<double> fitted;              // on the rows outside the fold
        ValidationSummary summary;               // of the fold's rows, held out
    };
    std::vector<Fold> by_framework, k_fold;
    int folds = 5;
    ValidationSummary by_framework_summary;      // every row predicted with its framework held out
    ValidationSummary k_fold_summary;            // every row predicted with its fold held out
    double baseline_mfu = 0;
    ValidationSummary baseline_summary;              // constant MFU fitted on every row
    ValidationSummary baseline_by_framework_summary; // constant MFU fitted without the row's framework
};
// `profile`, when given, is the base every grid point's parameters are written into.
CrossValidation cross_validate(const json& runs, const std::string& origin, const std::optional<json>& profile = std::nullopt,
                               int folds = 5);

// The rules that fill null fields and pick the compared metric, one sentence each (R1...).
const std::vector<std::string>& validation_rules();

// Spearman's rank correlation (ties share their mean rank).
double spearman(const std::vector<double>& a, const std::vector<double>& b);

// The Markdown report; `command` is the line that produced it; `cv`, when given, adds the fit and
// its held-out error.
std::string validation_markdown(const ValidationReport& r, const std::string& origin, const std::string& command,
                                const CrossValidation* cv = nullptr);
json to_json(const ValidationReport& r);

}  // namespace tessel
