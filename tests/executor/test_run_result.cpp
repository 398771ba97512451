// The measured-run JSON: DESIGN.md's keys, and the figures derived from the raw measurements by
// hand-computed examples.
#include <gtest/gtest.h>

#include "core/presets.h"
#include "executor/run_result.h"

namespace tessel {

TEST(RunResult, MedianSkipsWarmup) {
    EXPECT_DOUBLE_EQ(median_after({9.0, 1.0, 3.0, 2.0}, 1), 2.0);
    EXPECT_DOUBLE_EQ(median_after({9.0, 1.0, 3.0}, 1), 2.0);
    EXPECT_DOUBLE_EQ(median_after({5.0}, 1), 5.0);  // nothing after warm-up: all of it
    EXPECT_DOUBLE_EQ(median_after({}, 0), 0.0);
}

TEST(RunResult, RatesAndJsonKeys) {
    RunResult r;
    r.model = load_model("tiny-gpt");
    r.world_size = 4;
    r.step_time_s = 2.0;
    r.tokens_per_step = 1000;
    r.model_flops_per_token = 8e9;      // 8e12 FLOPs per step over 4 ranks in 2 s: 1 TFLOP/s each
    r.hardware_flops_per_token = 1e10;  // 1.25 TFLOP/s each
    r.peak_tflops_used = 2.0;
    EXPECT_DOUBLE_EQ(r.tokens_per_s(), 500.0);
    EXPECT_DOUBLE_EQ(r.model_tflops_per_gpu(), 1.0);
    EXPECT_DOUBLE_EQ(r.mfu(), 0.5);
    EXPECT_DOUBLE_EQ(r.hfu(), 0.625);
    r.losses = {7.0, 6.5};
    r.step_times_s = {3.0, 2.0};
    r.peak_memory_GiB = {0.1, 0.2, 0.1, 0.2};
    r.runtime_memory_GiB = {1.1, 1.0, 1.1, 1.0};
    json j = to_json(r);
    for (const char* key : {"step_time_s", "mfu", "hfu", "model_tflops_per_gpu", "hardware_tflops_per_gpu",
                            "tokens_per_s", "memory_GiB", "plan", "model", "backend", "device", "world_size", "steps",
                            "step_times_s", "losses", "peak_memory_GiB", "runtime_memory_GiB", "peak_tflops_used"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["runtime_memory_GiB"].size(), 4u);
    for (const char* key : {"weights", "gradients", "optimizer", "activations", "buffers", "peak"})
        EXPECT_TRUE(j["memory_GiB"].contains(key)) << key;
    EXPECT_EQ(j["losses"].size(), 2u);
}

}  // namespace tessel
