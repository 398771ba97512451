// The tessel binary.
#include "cli/app.h"

int main(int argc, char** argv) { return tessel::cli::run_cli(argc, argv); }
