// tessel compare: placeholder until its issue lands; says so and exits 1.
#include "cli/commands.h"
#include "core/errors.h"

namespace tessel::cli {

void add_compare(CLI::App& app) {
    auto* cmd = app.add_subcommand("compare", "(not built yet: exits 1)");
    cmd->footer("Example (once built): tessel compare --simulated sim.json --measured run.json");
    cmd->allow_extras();
    cmd->callback([] { throw RuntimeError("tessel compare is not built yet"); });
}

}  // namespace tessel::cli
