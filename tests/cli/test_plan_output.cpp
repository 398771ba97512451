// tessel plan's output where it can go wrong: stdout that cannot be written, and the closest
// plans it lists when none fits.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "tests/cli/run_tessel.h"

namespace {

TEST(PlanOutput, UnwritableStdoutIsAFailure) {
    // An exported launch script redirected to a full disk: exit 1 and a message, not success.
    const std::string cmd = std::string(TESSEL_BINARY) +
                            " plan --model tiny-llama --gpus 8 --emit megatron > /dev/full 2>/dev/null";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST(PlanOutput, ClosestMissesAscendByPeakAndAreDistinct) {
    // A 100M-token sequence fits no plan of Llama 3 8B on 8 GPUs; the message lists the closest.
    const TesselRun r = run_tessel({"plan", "--model", "llama3-8b", "--gpus", "8", "--seq", "100000000"});
    ASSERT_EQ(r.exit_code, 3) << r.err;
    const std::regex line(R"(\n  (\S.*?) \((\S+)\): ([0-9.]+) GiB \(weights)");
    std::vector<double> peaks;
    std::vector<std::string> plans;
    for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), line); it != std::sregex_iterator(); ++it) {
        plans.push_back((*it)[1]);
        peaks.push_back(std::stod((*it)[3]));
    }
    ASSERT_GE(peaks.size(), 2u) << r.err;
    for (std::size_t i = 1; i < peaks.size(); ++i) {
        EXPECT_LE(peaks[i - 1], peaks[i]) << r.err;
        for (std::size_t j = 0; j < i; ++j) EXPECT_NE(plans[i], plans[j]) << "listed twice (placement aside):\n" << r.err;
    }
}

}  // namespace
