// tessel report: one self-contained HTML page (inline CSS and SVG; no script, no network) with
// the headline figures, the step-time breakdown simulated against measured, the pipeline
// timeline, memory per rank by kind, and a plan search's candidates.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "core/json_io.h"

namespace tessel {

struct ReportFiles {
    std::string simulated;    // tessel simulate --json (required)
    std::string measured;     // tessel run --out (empty: none)
    std::string plan_result;  // tessel plan --json (empty: none)
};

struct ReportInputs {
    ReportFiles files;
    json simulated;
    std::optional<json> measured, plan_result;
};

// Reads the files and checks each is of its kind; InputError naming the file and the key.
ReportInputs load_report_inputs(const ReportFiles& files);

struct ReportOptions {
    std::size_t max_timeline_rects = 20000;
};

struct ReportSummary {
    std::size_t timeline_events = 0, timeline_rects = 0;
    bool timeline_merged = false;
    double resimulated_step_s = 0;
    std::size_t bytes = 0;
};

// The page. InputError (naming the file and the key) for anything missing or of the wrong type,
// for a measured run of another run (compare_results' rules) and for a plan result whose first
// candidate has another model or GPU than the simulation; nothing is written here.
std::string render_report(const ReportInputs& in, const ReportOptions& options = {}, ReportSummary* summary = nullptr);

}  // namespace tessel
