// tessel validate [RUNS.json]: predict published training runs and write the comparison.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/errors.h"
#include "compare/validate.h"
#include "core/presets.h"
#include "simulator/hardware_efficiency.h"

namespace tessel::cli {

namespace {
struct ValidateArgs {
    std::string runs = kFitSetPreset;
    std::string out = "reports/validation.md";
    std::string json_file;
    std::string profile_file;
    bool cross_validation = true;
};

void run_validate(const ValidateArgs& a) {
    // The per-row lines go to stderr when stdout holds the report or the JSON.
    std::FILE* log = check_outputs({{"--out", a.out}, {"--json", a.json_file}}, {{"RUNS", a.runs}, {"--profile", a.profile_file}});
    std::string origin;
    json runs = load_json("validation", a.runs, &origin);
    // The built-in set is the file in the repository; name it so.
    if (origin.rfind("preset", 0) == 0) origin = "configs/validation/" + a.runs + ".json";
    std::optional<json> profile;
    std::string profile_device;  // the GPU the profile's cluster file names, if it names one
    if (!a.profile_file.empty()) {
        json p = read_json_file(a.profile_file);
        profile = p.contains("profile") ? p["profile"] : p;
        if (p.contains("profile") && p.contains("gpu") && p["gpu"].is_object() && p["gpu"].contains("name") &&
            p["gpu"]["name"].is_string())
            profile_device = p["gpu"]["name"].get<std::string>();
        // Its keys are checked once here, so that a bad one names this file rather than a row's cluster.
        ClusterSpec probe;
        probe.profile = profile;
        probe.profile_origin = a.profile_file;
        hardware_efficiency(probe);
    }
    ValidationReport rep = validate_runs(runs, origin, profile);
    if (profile) {
        // A calibrated profile holds one device's kernel rates; on another GPU they price the wrong kernels.
        const auto others = rows_on_other_gpus(rep, profile_device);
        std::string list;
        int rows = 0;
        for (const auto& o : others) {
            list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", o.gpu, o.rows);
            rows += o.rows;
        }
        if (rows > 0)
            fmt::print(stderr, "warning: --profile {} was measured on {}; it prices {} row{} on other GPUs: {}\n",
                       a.profile_file, profile_device.empty() ? "a device it does not name" : profile_device, rows,
                       rows == 1 ? "" : "s", list);
    }
    const auto& s = rep.summary;
    // A summary over no rows would read as a perfect score (MAPE 0.0%). Refused, the rows' reasons
    // go to stderr with the message, and stdout stays empty.
    if (s.rows == 0)
        throw InputError(fmt::format("{}: expected published runs (a JSON array of rows as in "
                                     "configs/validation/published_runs.json), got no rows", origin));
    std::FILE* rows_out = s.modelable == 0 ? stderr : log;
    for (const auto& row : rep.rows) {
        if (!row.modelable) fmt::print(rows_out, "  skipped  {}: {}\n", row.name, row.skipped_because);
        else
            fmt::print(rows_out, "  {:+6.1f}%  {:<60} {} published {:.4g}, predicted {:.4g}{}\n", 100 * row.error,
                       row.name, to_string(row.metric), row.published, row.predicted, row.fits ? "" : "  (does not fit)");
    }
    if (s.modelable == 0)
        throw InputError(fmt::format("{}: none of its {} rows could be modelled (each row's reason is above)", origin, s.rows));
    fmt::print(log, "{} of {} rows modelled: MAPE {:.1f}%, worst {:+.1f}% ({}), Spearman {:.3f}, fit {:.0f}%\n", s.modelable,
               s.rows, 100 * s.mape, 100 * s.worst_error, s.worst_row, s.spearman, 100 * s.fit_share);
    std::optional<CrossValidation> cv;
    if (a.cross_validation) {
        cv = cross_validate(runs, origin, profile);
        const auto& l = cv->by_framework_summary;
        const auto& k = cv->k_fold_summary;
        fmt::print(log, "held out: leave one framework out MAPE {:.1f}% (worst {:+.1f}%), {}-fold MAPE {:.1f}% (worst {:+.1f}%); "
                   "constant-MFU baseline MAPE {:.1f}%\n",
                   100 * l.mape, 100 * l.worst_error, cv->folds, 100 * k.mape, 100 * k.worst_error,
                   100 * cv->baseline_summary.mape);
    }
    std::string command = "tessel validate";
    if (a.runs != kFitSetPreset) command += " " + a.runs;
    if (!a.profile_file.empty()) command += " --profile " + a.profile_file;
    if (a.out != "reports/validation.md") command += " --out " + a.out;
    if (!a.cross_validation) command += " --no-cross-validation";
    if (!a.out.empty()) {
        write_output(a.out, validation_markdown(rep, origin, command, cv ? &*cv : nullptr));
        if (a.out != "-") fmt::print(log, "wrote {}\n", a.out);
    }
    if (!a.json_file.empty()) write_output(a.json_file, to_json(rep).dump(2) + "\n");
}
}  // namespace

void add_validate(CLI::App& app) {
    auto args = std::make_shared<ValidateArgs>();
    auto* cmd = app.add_subcommand("validate", "Predict published training runs and report the error per run");
    cmd->footer("Example: tessel validate --out reports/validation.md   (default runs: the built-in published set)");
    cmd->add_option("runs", args->runs, "published runs JSON (default: configs/validation/published_runs.json, built in)");
    cmd->add_option("--out", args->out, "Markdown report path ('-' for stdout)");
    cmd->add_option("--json", args->json_file, "also write the rows and summary as JSON")->check(output_path());
    cmd->add_option("--profile", args->profile_file,
                    "a hardware profile (or a cluster JSON with one) applied to every run's cluster");
    cmd->add_flag("!--no-cross-validation", args->cross_validation,
                  "skip refitting the fitted parameters without each fold (the held-out error; about a minute on one core)");
    cmd->callback([args] { run_validate(*args); });
}

}  // namespace tessel::cli
