// tessel report --simulated S.json [--measured M.json] [--plan-result P.json] --out report.html:
// one self-contained HTML page. Parsing and printing only; the page is compare/report_html.cpp.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "compare/report_html.h"

namespace tessel::cli {

namespace {
struct ReportArgs {
    ReportFiles files;
    std::string out;
};
}  // namespace

void add_report(CLI::App& app) {
    auto args = std::make_shared<ReportArgs>();
    auto* cmd = app.add_subcommand("report", "Draw a simulation (and a measured run, a plan search) as one HTML page");
    cmd->footer(
        "Example: tessel simulate --model tiny-gpt --cluster dgx-h100 --gpus 8 --tp 2 --pp 2 --dp 2 "
        "--global-batch-size 16 --seq 256 --json sim.json\n"
        "         tessel report --simulated sim.json --measured run.json --plan-result plan.json --out report.html\n"
        "The page is self-contained (inline CSS and SVG, no script, nothing fetched): headline figures, the step-time\n"
        "breakdown simulated against measured (the rows of `tessel compare`), the pipeline timeline re-simulated from\n"
        "the plan in sim.json, memory per rank by kind, and the plan search's candidates.");
    cmd->add_option("--simulated", args->files.simulated, "simulation result JSON (tessel simulate --json)")->required();
    cmd->add_option("--measured", args->files.measured, "measured-run JSON (tessel run --out)");
    cmd->add_option("--plan-result", args->files.plan_result, "plan result JSON (tessel plan --json)");
    cmd->add_option("--out", args->out, "the HTML file to write ('-' for stdout)")->required()->check(output_path());
    cmd->callback([args] {
        check_output_file("--out", args->out,
                          {{"--simulated", args->files.simulated}, {"--measured", args->files.measured},
                           {"--plan-result", args->files.plan_result}});
        ReportSummary s;
        const std::string html = render_report(load_report_inputs(args->files), {}, &s);
        write_output(args->out, html);
        // With the page on stdout, the summary goes to stderr.
        std::ostream& log = args->out == "-" ? std::cerr : std::cout;
        log << fmt::format("wrote {} ({:.0f} KiB): timeline of {} events in {} rectangles{}\n", args->out,
                           double(s.bytes) / 1024, s.timeline_events, s.timeline_rects,
                           s.timeline_merged ? " (neighbours merged)" : "");
    });
}

}  // namespace tessel::cli
