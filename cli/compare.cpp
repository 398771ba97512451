// tessel compare --simulated S.json --measured M.json [--json]: a simulation result against a
// measured run, per component, with each error and a verdict. Parsing and printing only; the
// comparison is compare/compare.cpp.
#include <iostream>

#include "cli/commands.h"
#include "compare/compare.h"
#include "core/json_io.h"

namespace tessel::cli {

namespace {
struct CompareArgs {
    std::string simulated, measured;
    bool json = false;
};
}  // namespace

void add_compare(CLI::App& app) {
    auto args = std::make_shared<CompareArgs>();
    auto* cmd = app.add_subcommand("compare", "Put a simulation result and a measured run side by side, per component");
    cmd->footer(
        "Example: tessel compare --simulated sim.json --measured run.json\n"
        "  (sim.json from `tessel simulate ... --json sim.json`, run.json from `tessel run ... --out run.json`)\n"
        "Errors are (simulated - measured) / measured; a time component's error is also given as a share of the\n"
        "measured step, a memory kind's as a share of the measured peak. The verdict names the largest.");
    cmd->add_option("--simulated", args->simulated, "simulation result JSON (tessel simulate --json)")->required();
    cmd->add_option("--measured", args->measured, "measured-run JSON (tessel run --out)")->required();
    cmd->add_flag("--json", args->json, "print the comparison as JSON (for tools)");
    cmd->callback([args] {
        const Comparison c = compare_results(read_json_file(args->simulated), args->simulated,
                                             read_json_file(args->measured), args->measured);
        if (args->json)
            std::cout << to_json(c).dump(2) << "\n";
        else
            std::cout << format_comparison(c);
    });
}

}  // namespace tessel::cli
