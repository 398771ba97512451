// The tessel command line as a function, so the binary, the end-to-end tests and the fuzzer share
// it: CLI11 subcommands; exceptions become the documented exit codes
// (0 success, 1 runtime failure, 2 bad input, 3 no plan fits).
#include "cli/app.h"

#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "core/errors.h"

namespace tessel::cli {

int run_cli(int argc, char** argv, bool rethrow_internal_errors) {
    CLI::App app{"tessel: plan, simulate and run distributed training of decoder-only transformers"};
    app.require_subcommand(0, 1);
    app.footer("Run `tessel plan` with no arguments to plan the built-in default.\n"
               "Exit codes: 0 success, 1 runtime failure, 2 bad input, 3 no plan fits.");
    tessel::cli::add_inspect(app);
    tessel::cli::add_plan(app);
    tessel::cli::add_simulate(app);
    tessel::cli::add_validate(app);
    tessel::cli::add_run(app);
    tessel::cli::add_calibrate(app);
    tessel::cli::add_compare(app);
    tessel::cli::add_report(app);
    try {
        app.parse(argc, argv);
        if (app.get_subcommands().empty()) {
            std::cout << app.help();
            return 0;
        }
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "tessel: " << e.what() << "\n";
        std::cerr << "Run with --help for usage.\n";
        return 2;
    } catch (const tessel::InputError& e) {
        std::cerr << "tessel: " << e.what() << "\n";
        return 2;
    } catch (const tessel::NoPlanFits& e) {
        std::cerr << "tessel: no plan fits: " << e.what() << "\n";
        return 3;
    } catch (const tessel::RuntimeError& e) {
        std::cerr << "tessel: " << e.what() << "\n";
        return 1;
    } catch (const std::bad_alloc&) {
        if (rethrow_internal_errors) throw;
        std::cerr << "tessel: out of memory\n";
        return 1;
    } catch (const std::exception& e) {
        // Anything else is a bug in tessel, not in the input: the fuzzer wants to see it.
        if (rethrow_internal_errors) throw;
        std::cerr << "tessel: internal error: " << e.what() << "\n";
        return 1;
    }
    // Output on stdout that did not all reach its destination (an exported config redirected to a
    // full disk) is a failure, not a success.
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::cerr << "tessel: could not write standard output\n";
        return 1;
    }
    return 0;
}

}  // namespace tessel::cli
