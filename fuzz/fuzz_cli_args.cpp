// Fuzzes the command line: NUL-separated arguments to the inspect and simulate subcommands
// (the others search, train or write files, which a fuzzer must not do at random). Output
// flags are dropped so nothing is written to disk.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/app.h"
#include "fuzz/fuzz_input.h"

// stdout goes to /dev/null; stderr (tessel's messages) is closed by libFuzzer's -close_fd_mask=2,
// which keeps libFuzzer's own statistics and the sanitizers' reports (scripts/fuzz.sh passes it).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    std::freopen("/dev/null", "w", stdout);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::string> args = {"tessel"};
    std::string cur;
    for (size_t i = 0; i < size && args.size() < 32; ++i) {
        if (data[i] == 0) args.push_back(cur), cur.clear();
        else cur += char(data[i]);
    }
    if (!cur.empty()) args.push_back(cur);
    if (args.size() < 2 || (args[1] != "inspect" && args[1] != "simulate")) return 0;
    std::vector<std::string> kept = {args[0]};
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.rfind("--json", 0) == 0 || a.rfind("--trace", 0) == 0 || a.rfind("--out", 0) == 0) {
            if (a != "--json" || args[1] != "inspect") ++i;  // drop the flag and its value
            continue;
        }
        kept.push_back(a);
    }
    std::vector<char*> argv;
    for (auto& a : kept) argv.push_back(a.data());
    tessel::cli::run_cli(int(argv.size()), argv.data(), /*rethrow_internal_errors=*/true);
    return 0;
}
