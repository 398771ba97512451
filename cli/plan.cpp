// tessel plan: placeholder until its issue lands; says so and exits 1.
#include "cli/commands.h"
#include "core/errors.h"

namespace tessel::cli {

void add_plan(CLI::App& app) {
    auto* cmd = app.add_subcommand("plan", "(not built yet)");
    cmd->allow_extras();
    cmd->callback([] { throw RuntimeError("tessel plan is not built yet"); });
}

}  // namespace tessel::cli
