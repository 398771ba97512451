// tessel calibrate: placeholder until its issue lands; says so and exits 1.
#include "cli/commands.h"
#include "core/errors.h"

namespace tessel::cli {

void add_calibrate(CLI::App& app) {
    auto* cmd = app.add_subcommand("calibrate", "(not built yet: exits 1)");
    cmd->footer("Example (once built): tessel calibrate --backend cpu --out cpu-cluster.json");
    cmd->allow_extras();
    cmd->callback([] { throw RuntimeError("tessel calibrate is not built yet"); });
}

}  // namespace tessel::cli
