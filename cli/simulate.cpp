// tessel simulate: placeholder until its issue lands; says so and exits 1.
#include "cli/commands.h"
#include "core/errors.h"

namespace tessel::cli {

void add_simulate(CLI::App& app) {
    auto* cmd = app.add_subcommand("simulate", "(not built yet)");
    cmd->allow_extras();
    cmd->callback([] { throw RuntimeError("tessel simulate is not built yet"); });
}

}  // namespace tessel::cli
