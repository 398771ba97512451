// tessel validate: placeholder until its issue lands; says so and exits 1.
#include "cli/commands.h"
#include "core/errors.h"

namespace tessel::cli {

void add_validate(CLI::App& app) {
    auto* cmd = app.add_subcommand("validate", "(not built yet)");
    cmd->allow_extras();
    cmd->callback([] { throw RuntimeError("tessel validate is not built yet"); });
}

}  // namespace tessel::cli
