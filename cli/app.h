// Runs the tessel command line and returns its exit code; never exits the process itself.
#pragma once

namespace tessel::cli {

// With rethrow_internal_errors, exceptions that are not tessel's own error types propagate
// (the fuzzer treats them as crashes) instead of becoming exit 1.
int run_cli(int argc, char** argv, bool rethrow_internal_errors = false);

}  // namespace tessel::cli
