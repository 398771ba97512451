// Runs the tessel binary with arguments and captures its exit code, stdout and stderr.
#pragma once
#include <string>
#include <vector>

struct TesselRun {
    int exit_code = -1;
    std::string out, err;
};

TesselRun run_tessel(const std::vector<std::string>& args, int timeout_s = 120);
std::string temp_dir(const std::string& name);  // a fresh, empty folder for one test
void write_text(const std::string& path, const std::string& text);
