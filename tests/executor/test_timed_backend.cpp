// TimedBackend (executor/timed_backend.h): every kernel tallied by name and shape, replays that
// really re-run the kernel (so "alone" times the same work), AdamW never replayed, results the
// same as the wrapped backend's; and calibrate's step benchmark on it.
#include <gtest/gtest.h>

#include <vector>

#include "executor/calibrate_step.h"
#include "executor/timed_backend.h"
#include "kernels/cpu/cpu_backend.h"

namespace tessel {
namespace {

TEST(TimedBackend, TalliesEachKernelByNameAndShape) {
    KernelTimes times;
    auto be = make_timed_backend(make_cpu_backend(), &times);
    std::vector<float> x(64 * 32, 0.5f), w(16 * 32, 0.25f), y(64 * 16, 0.0f), w2(8 * 32, 0.25f), y2(64 * 8, 0.0f);
    be->matmul_forward(y.data(), x.data(), w.data(), nullptr, 64, 32, 16);
    be->matmul_forward(y.data(), x.data(), w.data(), nullptr, 64, 32, 16);
    be->matmul_forward(y2.data(), x.data(), w2.data(), nullptr, 64, 32, 8);
    ASSERT_EQ(times.by_kernel.size(), 2u);
    EXPECT_EQ(times.by_kernel.at("matmul_forward N=64 C=32 OC=16").calls, 2);
    EXPECT_EQ(times.by_kernel.at("matmul_forward N=64 C=32 OC=8").calls, 1);
    EXPECT_GT(times.in_step_seconds(), 0.0);
    EXPECT_EQ(times.alone_seconds(), 0.0);  // no replays asked for
    EXPECT_FLOAT_EQ(y[0], 32 * 0.5f * 0.25f);  // the wrapped kernel's result, by hand
    times.clear();
    EXPECT_TRUE(times.by_kernel.empty());
}

TEST(TimedBackend, KernelTimeByKindIsTheSimulatorsSplit) {
    KernelTimes times;
    times.by_kernel["matmul_forward N=64 C=32 OC=16"].in_step_seconds = 1.0;
    times.by_kernel["matmul_backward N=64 C=32 OC=16"].in_step_seconds = 2.0;
    times.by_kernel["attention_forward B=1 T=64 H=4 KH=4 D=8"].in_step_seconds = 0.5;
    times.by_kernel["attention_backward B=1 T=64 H=4 KH=4 D=8"].in_step_seconds = 0.25;
    times.by_kernel["layernorm_forward N=64 C=32"].in_step_seconds = 0.125;
    times.by_kernel["adamw_update n=10"].in_step_seconds = 0.0625;
    times.by_kernel["fill_zero bytes=64"].in_step_seconds = 0.03125;
    times.by_kernel["upload bytes=512"].in_step_seconds = 8.0;    // the batch in: a transfer
    times.by_kernel["download bytes=4"].in_step_seconds = 16.0;   // the loss out
    const KernelKindTimes k = kernel_time_by_kind(times);
    EXPECT_DOUBLE_EQ(k.gemm, 3.0);
    EXPECT_DOUBLE_EQ(k.attention, 0.75);
    EXPECT_DOUBLE_EQ(k.memory_bound, 0.125 + 0.0625 + 0.03125);
}

TEST(TimedBackend, ReplaysRunTheKernelAgain) {
    KernelTimes times;
    times.replays = 2;
    auto be = make_timed_backend(make_cpu_backend(), &times);
    std::vector<float> y(100, 1.0f), x(100, 2.0f);
    be->add_inplace(y.data(), x.data(), y.size());  // once in the step, twice replayed: y = 1 + 3 * 2
    EXPECT_FLOAT_EQ(y[0], 7.0f);
    EXPECT_FLOAT_EQ(y[99], 7.0f);
    EXPECT_GT(times.alone_seconds(), 0.0);
}

TEST(TimedBackend, AdamWIsNotReplayed) {
    KernelTimes times;
    times.replays = 3;
    auto timed = make_timed_backend(make_cpu_backend(), &times);
    auto plain = make_cpu_backend();
    std::vector<float> p1(10, 1.0f), g(10, 0.5f), m1(10, 0.0f), v1(10, 0.0f);
    std::vector<float> p2 = p1, m2 = m1, v2 = v1;
    timed->adamw_update(p1.data(), g.data(), m1.data(), v1.data(), 10, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 1);
    plain->adamw_update(p2.data(), g.data(), m2.data(), v2.data(), 10, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 1);
    EXPECT_EQ(p1, p2);  // one update, as the plain backend makes
    const KernelTally& t = times.by_kernel.at("adamw_update n=10");
    EXPECT_EQ(t.alone_seconds, t.in_step_seconds);
}

TEST(CalibrateStep, RealStepKernelsTimedInPlaceAndAlone) {
    for (const char* layout : {"gpt", "llama"}) {
        const StepKernelSample s = measure_step_kernels("cpu", layout, 64, 64, {2, 2});
        EXPECT_EQ(s.layout, layout);
        EXPECT_EQ(s.tokens, 64);
        EXPECT_EQ(s.heads, 2);  // head dim 32 at h = 64
        EXPECT_GT(s.in_step_seconds, 0.0);
        EXPECT_GT(s.alone_seconds, 0.0);
        EXPECT_GT(s.kept(), 0.0);
    }
}

}  // namespace
}  // namespace tessel
