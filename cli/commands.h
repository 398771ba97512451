// One function per subcommand, each in its own file: it declares the flags and the callback.
// The callbacks parse and print; the logic lives in the library folders.
#pragma once
#include <CLI/CLI.hpp>

namespace tessel::cli {

void add_inspect(CLI::App& app);
void add_plan(CLI::App& app);
void add_simulate(CLI::App& app);
void add_validate(CLI::App& app);
void add_run(CLI::App& app);
void add_calibrate(CLI::App& app);
void add_compare(CLI::App& app);
void add_report(CLI::App& app);

}  // namespace tessel::cli
