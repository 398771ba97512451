// tessel report: placeholder until its issue lands; says so and exits 1.
#include "cli/commands.h"
#include "core/errors.h"

namespace tessel::cli {

void add_report(CLI::App& app) {
    auto* cmd = app.add_subcommand("report", "(not built yet: exits 1)");
    cmd->footer("Example (once built): tessel report --simulated sim.json --measured run.json --out report.html");
    cmd->allow_extras();
    cmd->callback([] { throw RuntimeError("tessel report is not built yet"); });
}

}  // namespace tessel::cli
