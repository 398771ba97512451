// tessel compare against hand-made results: every expected error below is worked out by hand
// from the numbers in the two documents, not taken from the code.
#include <gtest/gtest.h>

#include <limits>

#include <fmt/format.h>

#include "compare/compare.h"
#include "core/errors.h"
#include "tests/input_error_message.h"

using namespace tessel;

namespace {

json plan_json(int tp) {
    return {{"tp", tp}, {"pp", 2}, {"dp", 2}, {"cp", 1}, {"zero_stage", 1}, {"microbatch_size", 1},
            {"global_batch_size", 16}, {"seq_length", 128}, {"virtual_stages", 1}, {"schedule", "1f1b"},
            {"recompute", "full"}, {"sequence_parallel", false}, {"placement", "tp-cp-dp-pp"}};
}

json model_json(int layers) {
    return {{"name", "hand"}, {"num_layers", layers}, {"hidden_size", 256}, {"num_attention_heads", 4},
            {"vocab_size", 1000}, {"seq_length", 128}};
}

// Simulated step 1.05 s = compute 0.6 + recompute 0.1 + bubble 0.1 + TP 0.05 + PP 0.05 + DP 0.1 + optimizer 0.05.
json simulated() {
    return {{"fits", true}, {"step_time_s", 1.05}, {"mfu", 0.38}, {"hfu", 0.5}, {"tokens_per_s", 1000.0},
            {"critical_rank", 1},
            {"memory_GiB", {{"weights", 2.0}, {"gradients", 2.0}, {"optimizer", 4.0}, {"activations", 7.0},
                            {"buffers", 1.0}, {"peak", 16.0}}},
            {"time_s", {{"compute", 0.6}, {"recompute", 0.1}, {"bubble", 0.1}, {"tp_comm_exposed", 0.05},
                        {"pp_comm_exposed", 0.05}, {"dp_comm_exposed", 0.1}, {"optimizer", 0.05}}},
            {"plan", plan_json(2)}, {"model", model_json(4)}, {"cluster", {{"name", "hand"}}}};
}

// Measured step 1.0 s = compute 0.5 + TP 0.2 + bubble/PP 0.15 + DP 0.1 + optimizer 0.05 + waiting 0.0.
json measured() {
    return {{"fits", true}, {"step_time_s", 1.0}, {"mfu", 0.40}, {"tokens_per_s", 1050.0},
            {"step_times_s", {1.2, 1.0, 1.0}}, {"critical_rank", 3},
            {"memory_GiB", {{"weights", 2.0}, {"gradients", 2.0}, {"optimizer", 4.0}, {"activations", 6.0},
                            {"buffers", 2.0}, {"peak", 16.0}}},
            {"time_s", {{"compute", 0.5}, {"tp_comm_exposed", 0.2}, {"cp_comm_exposed", 0.0},
                        {"bubble_and_pp_comm", 0.15}, {"dp_comm_exposed", 0.1}, {"optimizer", 0.05},
                        {"sync_wait", 0.0}, {"total", 1.0}}},
            {"plan", plan_json(2)}, {"model", model_json(4)}, {"device", "hand"},
            {"peak_memory_GiB", {15.0, 16.0, 14.0, 16.0}}};
}

const ComparedValue& row(const Comparison& c, const std::string& key) {
    const ComparedValue* r = c.row(key);
    if (!r) throw std::runtime_error("no row " + key);
    return *r;
}

using tessel::test::message_of;

}  // namespace

TEST(Compare, KernelTimeByKindWhereTheRunTimedItsKernels) {
    json sim = simulated(), meas = measured();
    sim["kernel_time_s"] = {{"gemm", 0.45}, {"attention", 0.1}, {"memory_bound", 0.2}};
    // Without the run's kernel times there is nothing to set the simulated split against.
    const Comparison without = compare_results(sim, "sim.json", meas, "run.json");
    EXPECT_EQ(without.row("kernel_time_s.gemm"), nullptr);
    meas["kernel_time_s"] = {{"gemm", 0.3}, {"attention", 0.1}, {"memory_bound", 0.25}};
    const Comparison c = compare_results(sim, "sim.json", meas, "run.json");
    const auto& gemm = row(c, "kernel_time_s.gemm");
    EXPECT_NEAR(*gemm.error(), 0.5, 1e-12);           // (0.45 - 0.3) / 0.3
    EXPECT_NEAR(*gemm.error_of_total(), 0.15, 1e-12);  // 0.15 of the 1.0 s measured step
    EXPECT_NEAR(*row(c, "kernel_time_s.attention").error(), 0.0, 1e-12);
    EXPECT_NEAR(*row(c, "kernel_time_s.memory_bound").error_of_total(), -0.05, 1e-12);
    EXPECT_NE(row(c, "kernel_time_s.gemm").note.find("rank 0"), std::string::npos);  // measured rank 3 was last
    EXPECT_NE(format_comparison(c).find("kernel time by kind"), std::string::npos);
}

TEST(Compare, EachComponentsErrorAndShareOfTheStep) {
    const Comparison c = compare_results(simulated(), "sim.json", measured(), "run.json");
    EXPECT_NEAR(*row(c, "step_time_s").error(), 0.05, 1e-12);  // (1.05 - 1.0) / 1.0
    // Simulated compute holds recomputation: 0.6 + 0.1 = 0.7 against 0.5.
    const auto& compute = row(c, "time_s.compute");
    EXPECT_NEAR(*compute.simulated, 0.7, 1e-12);
    EXPECT_NEAR(*compute.error(), 0.4, 1e-12);           // 0.2 / 0.5
    EXPECT_NEAR(*compute.error_of_total(), 0.2, 1e-12);  // 0.2 / 1.0 s step
    EXPECT_NE(compute.note.find("recompute"), std::string::npos);
    const auto& tp = row(c, "time_s.tp_comm_exposed");
    EXPECT_NEAR(*tp.error(), -0.75, 1e-12);  // (0.05 - 0.2) / 0.2
    EXPECT_NEAR(*tp.error_of_total(), -0.15, 1e-12);
    // The run cannot split bubble from point-to-point waits: one row, 0.1 + 0.05 against 0.15.
    const auto& bubble = row(c, "time_s.bubble_and_pp_comm");
    EXPECT_NEAR(*bubble.simulated, 0.15, 1e-12);
    EXPECT_NEAR(*bubble.error(), 0.0, 1e-12);
    EXPECT_NEAR(*row(c, "time_s.dp_comm_exposed").error(), 0.0, 1e-12);
    EXPECT_NEAR(*row(c, "time_s.optimizer").error(), 0.0, 1e-12);
    // Zero measured: no relative error, but its share of the step is well defined.
    EXPECT_FALSE(row(c, "time_s.cp_comm_exposed").error());
    EXPECT_NEAR(*row(c, "time_s.cp_comm_exposed").error_of_total(), 0.0, 1e-12);
    EXPECT_FALSE(row(c, "time_s.sync_wait").error());

    EXPECT_NEAR(*row(c, "memory_GiB.peak").error(), 0.0, 1e-12);
    const auto& act = row(c, "memory_GiB.activations");
    EXPECT_NEAR(*act.error(), 1.0 / 6.0, 1e-12);           // (7 - 6) / 6
    EXPECT_NEAR(*act.error_of_total(), 1.0 / 16.0, 1e-12);  // 1 GiB of a 16 GiB peak
    EXPECT_NEAR(*row(c, "memory_GiB.buffers").error(), -0.5, 1e-12);
    EXPECT_NEAR(*row(c, "memory_GiB.buffers").error_of_total(), -1.0 / 16.0, 1e-12);
    EXPECT_NEAR(*row(c, "mfu").error(), -0.05, 1e-12);  // (0.38 - 0.40) / 0.40
    EXPECT_EQ(c.simulated_critical_rank, 1);
    EXPECT_EQ(c.measured_critical_rank, 3);
}

TEST(Compare, VerdictNamesTheLargestError) {
    const Comparison c = compare_results(simulated(), "sim.json", measured(), "run.json");
    ASSERT_TRUE(c.largest);
    EXPECT_EQ(c.rows[*c.largest].key, "time_s.compute");  // +20% of the step beats TP's -15%
    EXPECT_NE(c.verdict.find("step time +5.0%"), std::string::npos) << c.verdict;
    EXPECT_NE(c.verdict.find("peak memory +0.0%"), std::string::npos) << c.verdict;
    EXPECT_NE(c.verdict.find("largest error: compute +20.0% of the measured step"), std::string::npos) << c.verdict;
    EXPECT_EQ(c.verdict.find("differ"), std::string::npos) << c.verdict;
    const std::string table = format_comparison(c);
    EXPECT_NE(table.find("verdict: " + c.verdict), std::string::npos);
    EXPECT_NE(table.find("-75.0%"), std::string::npos) << table;  // TP's error in the table
}

TEST(Compare, JsonOutputKeys) {
    const json j = to_json(compare_results(simulated(), "sim.json", measured(), "run.json"));
    for (const char* k : {"simulated", "measured", "model", "plan", "rows", "verdict", "largest_error"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j["simulated"], "sim.json");
    EXPECT_EQ(j["measured"], "run.json");
    EXPECT_EQ(j["largest_error"], "time_s.compute");
    ASSERT_TRUE(j["rows"].is_array());
    for (const auto& r : j["rows"])
        for (const char* k : {"name", "key", "unit", "simulated", "measured", "error", "error_of_total", "note"})
            EXPECT_TRUE(r.contains(k)) << k << " in " << r.dump();
    bool saw_tp = false;
    for (const auto& r : j["rows"])
        if (r["key"] == "time_s.tp_comm_exposed") {
            saw_tp = true;
            EXPECT_NEAR(r["error"].get<double>(), -0.75, 1e-12);
            EXPECT_NEAR(r["error_of_total"].get<double>(), -0.15, 1e-12);
        } else if (r["key"] == "time_s.cp_comm_exposed") {
            EXPECT_TRUE(r["error"].is_null());  // measured 0: no relative error
        }
    EXPECT_TRUE(saw_tp);
}

TEST(Compare, SeparateBubbleAndPointToPointWhenTheRunSplitsThem) {
    json m = measured();
    m["time_s"].erase("bubble_and_pp_comm");
    m["time_s"]["bubble"] = 0.1;
    m["time_s"]["pp_comm_exposed"] = 0.05;
    const Comparison c = compare_results(simulated(), "sim.json", m, "run.json");
    EXPECT_NEAR(*row(c, "time_s.bubble").error(), 0.0, 1e-12);
    EXPECT_NEAR(*row(c, "time_s.pp_comm_exposed").error(), 0.0, 1e-12);
    for (const auto& r : c.rows) EXPECT_NE(r.key, "time_s.bubble_and_pp_comm");
}

TEST(Compare, TheLargestErrorIsAComponentNotMfu) {
    // A run 1.25 times slower in every part than the simulated 1.05 s: compute's error (with
    // recompute) is the largest of the components' ((0.7 - 0.875) / 1.3125 = -13% of the measured
    // step), while MFU's
    // is +25%, a restatement of the step's -20% that the verdict gives already.
    json m = measured();
    const json sim = simulated();
    m["time_s"] = {{"compute", 0.875}, {"tp_comm_exposed", 0.0625}, {"cp_comm_exposed", 0.0},
                   {"bubble_and_pp_comm", 0.1875}, {"dp_comm_exposed", 0.125}, {"optimizer", 0.0625},
                   {"sync_wait", 0.0}, {"total", 1.3125}};
    m["step_time_s"] = 1.3125;
    m["mfu"] = 0.38 / 1.25;
    const Comparison c = compare_results(sim, "sim.json", m, "run.json");
    ASSERT_TRUE(c.largest);
    EXPECT_EQ(c.rows[*c.largest].key, "time_s.compute") << c.verdict;
    EXPECT_NEAR(*row(c, "mfu").error(), 0.25, 1e-12);
}

TEST(Compare, OtherPrecisionIsRefused) {
    // A bf16 simulation against a run that computed fp32 (tessel run's compute_precision on every
    // backend): the times would differ by the two peaks' ratio, not by the simulator's error.
    json s = simulated(), m = measured();
    s["plan"]["precision"] = "bf16";
    m["plan"]["precision"] = "bf16";  // what the run's plan said; it computed fp32 all the same
    m["compute_precision"] = "fp32";
    std::string error = message_of([&] { compare_results(s, "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("sim.json and run.json: not the same run: plan.precision (simulated \"bf16\", measured "
                         "compute_precision \"fp32\"; simulate with --precision fp32)"),
              std::string::npos)
        << error;
    // Simulated in the precision the run computed in: the same run, whatever the run's plan said.
    s["plan"]["precision"] = "fp32";
    EXPECT_NO_THROW(compare_results(s, "sim.json", m, "run.json"));
}

TEST(Compare, OtherHardwareIsRefused) {
    // An H100 simulation against a CPU run that recorded its calibrated cluster (run --cluster).
    json s = simulated(), m = measured();
    s["cluster"] = {{"name", "dgx-h100"}, {"gpu", {{"name", "H100-SXM"}}}};
    m["cluster"] = {{"name", "cpu"}, {"gpu", {{"name", "AMD EPYC"}}}};
    m["backend"] = "cpu";
    m["device"] = "AMD EPYC";
    std::string error = message_of([&] { compare_results(s, "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("sim.json and run.json: not the same run: cluster.gpu.name (simulated \"H100-SXM\", measured "
                         "\"AMD EPYC\")"),
              std::string::npos)
        << error;
    // Without --cluster the CPU backend's device is what calibrate names the cluster's gpu: exact.
    m.erase("cluster");
    error = message_of([&] { compare_results(s, "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("cluster.gpu.name (simulated \"H100-SXM\", measured device \"AMD EPYC\", backend cpu: calibrate "
                         "this machine and simulate on that)"),
              std::string::npos)
        << error;
    // A calibration of that CPU under another cluster name: the same hardware, noted.
    s["cluster"] = {{"name", "cpu-calibrated-again"}, {"gpu", {{"name", "AMD EPYC"}}}};
    m["cluster"] = {{"name", "cpu"}, {"gpu", {{"name", "AMD EPYC"}}}};
    const Comparison renamed = compare_results(s, "sim.json", m, "run.json");
    EXPECT_NE(renamed.verdict.find("note: simulated on cluster cpu-calibrated-again, the run's is cpu"), std::string::npos)
        << renamed.verdict;
}

TEST(Compare, GpuRunWithoutClusterIsNotedNotRefused) {
    // The driver's name and a preset's cannot be matched exactly: said in the verdict.
    json s = simulated(), m = measured();
    s["cluster"] = {{"name", "dgx-h100"}, {"gpu", {{"name", "H100-SXM"}}}};
    m["backend"] = "cuda";
    m["device"] = "NVIDIA H100 80GB HBM3";
    const Comparison c = compare_results(s, "sim.json", m, "run.json");
    EXPECT_NE(c.verdict.find("note: simulated on H100-SXM (dgx-h100), the run on device NVIDIA H100 80GB HBM3 with no "
                             "--cluster: compare cannot tell whether they are the same hardware"),
              std::string::npos)
        << c.verdict;
    // Told its cluster, the run's GPU name is exact: the same one compares without a note.
    m["cluster"] = s["cluster"];
    const Comparison told = compare_results(s, "sim.json", m, "run.json");
    EXPECT_EQ(told.verdict.find("note:"), std::string::npos) << told.verdict;
    const Comparison same = compare_results(simulated(), "sim.json", measured(), "run.json");
    EXPECT_EQ(same.verdict.find("note:"), std::string::npos) << same.verdict;
}

TEST(Compare, ModelKeysTheWriterLeavesOutCountAsTheirDefault) {
    // tessel writes qk_norm, sliding_window, out_bias, ... only when set: a sliding-window model
    // against one without is another model; the name, context length and norm epsilon change
    // neither time nor memory.
    json s = simulated(), m = measured();
    s["model"]["sliding_window"] = 64;
    std::string error = message_of([&] { compare_results(s, "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("model.sliding_window (simulated 64, measured 0)"), std::string::npos) << error;
    s = simulated();
    m["model"]["qk_norm"] = "rmsnorm";
    error = message_of([&] { compare_results(s, "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("model.qk_norm (simulated \"none\", measured \"rmsnorm\")"), std::string::npos) << error;
    m = measured();
    s["model"]["head_dim"] = 64;
    m["model"]["head_dim"] = 32;
    error = message_of([&] { compare_results(s, "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("model.head_dim (simulated 64, measured 32)"), std::string::npos) << error;
    s = simulated();
    m = measured();
    s["plan"]["recompute_layers"] = 2;
    error = message_of([&] { compare_results(s, "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("plan.recompute_layers (simulated 2, measured 0)"), std::string::npos) << error;
    s = simulated();
    s["model"]["name"] = "hand-from-hf";
    s["model"]["seq_length"] = 4096;
    s["model"]["norm_epsilon"] = 1e-6;
    EXPECT_NO_THROW(compare_results(s, "sim.json", m, "run.json"));
}

TEST(Compare, ZeroStepIsRefused) {
    json m = measured();
    m["step_time_s"] = 0.0;
    const std::string error = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("run.json"), std::string::npos) << error;
    EXPECT_NE(error.find("step_time_s"), std::string::npos) << error;
    json s = simulated();
    s["step_time_s"] = 0.0;
    EXPECT_NE(message_of([&] { compare_results(s, "sim.json", measured(), "run.json"); }).find("sim.json"),
              std::string::npos);
}

TEST(Compare, NullNegativeOrOutOfRangeNumbersNameTheFileKeyAndValue) {
    // A key written as null is in the file: said so, not "missing".
    json m = measured();
    m["step_time_s"] = nullptr;
    std::string error = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("run.json: key 'step_time_s'"), std::string::npos) << error;
    EXPECT_NE(error.find("got null"), std::string::npos) << error;
    EXPECT_EQ(error.find("missing"), std::string::npos) << error;
    m = measured();
    m.erase("step_time_s");
    error = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("missing"), std::string::npos) << error;
    // Negative and infinite numbers (the JSON reader refuses 1e400 and Infinity in a file; a
    // document built in memory can hold one).
    json s = simulated();
    s["time_s"]["compute"] = -0.5;
    error = message_of([&] { compare_results(s, "sim.json", measured(), "run.json"); });
    EXPECT_NE(error.find("sim.json: key 'time_s.compute'"), std::string::npos) << error;
    EXPECT_NE(error.find("-0.5"), std::string::npos) << error;
    m = measured();
    m["step_time_s"] = std::numeric_limits<double>::infinity();
    error = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("run.json: key 'step_time_s'"), std::string::npos) << error;
}

TEST(Compare, AMeasuredBreakdownThatDoesNotAddUpIsRefused) {
    // tessel run writes the parts of the critical rank's step and their sum; a part edited or cut
    // off (compute 1e300 against a 1 s total) would be compared as if it were measured.
    json m = measured();
    m["time_s"]["compute"] = 1e300;
    std::string error = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("run.json: key 'time_s.total'"), std::string::npos) << error;
    EXPECT_NE(error.find("sum of the time_s parts"), std::string::npos) << error;
    m = measured();
    m["time_s"]["dp_comm_exposed"] = -0.1;
    error = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("run.json: key 'time_s.dp_comm_exposed'"), std::string::npos) << error;
    // Parts that add up, however they are split, are compared.
    m = measured();
    m["time_s"]["compute"] = 0.4;
    m["time_s"]["sync_wait"] = 0.1;
    EXPECT_NO_THROW(compare_results(simulated(), "sim.json", m, "run.json"));
}

TEST(Compare, AbsurdErrorsPrintInThreeFigures) {
    // 1e300 s simulated against 1e-3 s measured: an error of (1e300 - 1e-3) / 1e-3 = 1e303, that is
    // +1e+305 %, printed as such rather than in 306 digits; real errors keep one decimal.
    EXPECT_EQ(format_error(1e303), "+1e+305%");
    EXPECT_EQ(format_error(-0.0912), "-9.1%");
    EXPECT_EQ(format_error(9999.994), "+999999.4%");
    EXPECT_EQ(format_error(std::nullopt), "-");
    json s = simulated(), m = measured();
    s["step_time_s"] = 1e300;
    m["step_time_s"] = 1e-3;
    const Comparison c = compare_results(s, "sim.json", m, "run.json");
    EXPECT_NE(c.verdict.find("step time +1e+305%"), std::string::npos) << c.verdict;
    EXPECT_LT(format_comparison(c).size(), 4000u);
}

TEST(Compare, BothMfusAgainstTheSimulationsPeak) {
    // The same run at the same model FLOPs per step: simulated step 1.05 s against measured 1.0 s,
    // so the throughput is 1/1.05 of the measured, an MFU error of 1/1.05 - 1 = -4.76% on any one
    // peak. The run measured its MFU against 0.118 TFLOP/s (its start-up GEMM), the simulation
    // against its cluster's 0.087 fp32: 0.40 there is 0.40 x 0.118 / 0.087 = 0.5425 on the
    // simulation's peak, against which the simulated MFU is 0.5425 / 1.05 = 0.5167.
    json s = simulated(), m = measured();
    s["plan"]["precision"] = "fp32";
    s["cluster"] = {{"name", "cpu"}, {"gpu", {{"peak_tflops", {{"fp32", 0.087}}}}}};
    s["mfu"] = 0.40 * 0.118 / 0.087 / 1.05;
    m["peak_tflops_used"] = 0.118;
    m["peak_tflops_source"] = "start-up sgemm";
    const Comparison c = compare_results(s, "sim.json", m, "run.json");
    EXPECT_NEAR(*row(c, "mfu").measured, 0.40 * 0.118 / 0.087, 1e-12);
    EXPECT_NEAR(*row(c, "mfu").error(), 1 / 1.05 - 1, 1e-12);
    EXPECT_NE(row(c, "mfu").note.find("0.118"), std::string::npos) << row(c, "mfu").note;
}

TEST(Compare, DifferentPlansOrModelsAreRefused) {
    // Two different runs side by side: every row would be meaningless, so it is bad input naming
    // both files and the first differing key with both values.
    json m = measured();
    m["plan"] = plan_json(4);
    std::string error = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("sim.json and run.json: not the same run: plan.tp (simulated 2, measured 4)"), std::string::npos)
        << error;
    m = measured();
    m["model"] = model_json(8);
    error = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("model.num_layers (simulated 4, measured 8)"), std::string::npos) << error;
    json s = simulated();
    s["model"]["activation"] = "swiglu";
    m = measured();
    m["model"]["activation"] = "gelu";
    error = message_of([&] { compare_results(s, "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("model.activation"), std::string::npos) << error;
    // The same run compares.
    EXPECT_NO_THROW(compare_results(simulated(), "sim.json", measured(), "run.json"));
    // A mistyped plan would hide a mismatch.
    m = measured();
    m["plan"] = "pp2";
    error = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(error.find("run.json"), std::string::npos) << error;
    EXPECT_NE(error.find("plan"), std::string::npos) << error;
}

TEST(Compare, FilesThatDoNotSayWhichRunTheyAreAreRefused) {
    // Without its plan, model or hardware a file cannot be checked against the other: refused,
    // naming the file and the key (it compared a 1-microbatch simulation with a 2-microbatch run).
    for (const char* key : {"plan", "model"}) {
        json m = measured();
        m.erase(key);
        std::string e = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
        EXPECT_NE(e.find(fmt::format("run.json: key '{}'", key)), std::string::npos) << e;
        json s = simulated();
        s.erase(key);
        e = message_of([&] { compare_results(s, "sim.json", measured(), "run.json"); });
        EXPECT_NE(e.find(fmt::format("sim.json: key '{}'", key)), std::string::npos) << e;
        // The simulation alone needs neither: there is nothing to check it against.
        EXPECT_NO_THROW(simulated_components(s, "sim.json"));
    }
    json m = measured();
    m.erase("device");
    std::string e = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(e.find("run.json: key 'device'"), std::string::npos) << e;
    m["cluster"] = simulated()["cluster"];  // told its cluster instead: enough
    EXPECT_NO_THROW(compare_results(simulated(), "sim.json", m, "run.json"));
    // Per-step times that are no times.
    for (const json& bad : {json("x"), json::array(), json::array({1.0, -1.0}), json::array({1.0, "2"})}) {
        m = measured();
        m["step_times_s"] = bad;
        e = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
        EXPECT_NE(e.find("run.json: key 'step_times_s'"), std::string::npos) << bad.dump() << ": " << e;
    }
}

TEST(Compare, AValueOfAnotherKindIsSaidToBeOne) {
    // A quoted "2" against 2 is an edited file, not a second run: the message says which kinds.
    json s = simulated();
    s["plan"]["tp"] = "2";
    const std::string e = message_of([&] { compare_results(s, "sim.json", measured(), "run.json"); });
    EXPECT_NE(e.find("plan.tp is a string in one file and a number in the other (simulated \"2\", measured 2)"),
              std::string::npos)
        << e;
}

TEST(Compare, FilesOfTheWrongKindNameTheFileAndKey) {
    std::string e = message_of([] { compare_results(measured(), "run.json", measured(), "run2.json"); });
    EXPECT_NE(e.find("run.json"), std::string::npos) << e;
    EXPECT_NE(e.find("step_times_s"), std::string::npos) << e;
    e = message_of([] { compare_results(simulated(), "sim.json", simulated(), "sim2.json"); });
    EXPECT_NE(e.find("sim2.json"), std::string::npos) << e;
    EXPECT_NE(e.find("step_times_s"), std::string::npos) << e;
    const json plan_result = {{"considered", 1}, {"candidates", json::array({simulated()})}};
    e = message_of([&] { compare_results(plan_result, "plan.json", measured(), "run.json"); });
    EXPECT_NE(e.find("plan.json"), std::string::npos) << e;
    EXPECT_NE(e.find("candidates"), std::string::npos) << e;
    json s = simulated();
    s["time_s"].erase("bubble");
    e = message_of([&] { compare_results(s, "sim.json", measured(), "run.json"); });
    EXPECT_NE(e.find("sim.json"), std::string::npos) << e;
    EXPECT_NE(e.find("time_s.bubble"), std::string::npos) << e;
    json m = measured();
    m["memory_GiB"]["peak"] = "lots";
    e = message_of([&] { compare_results(simulated(), "sim.json", m, "run.json"); });
    EXPECT_NE(e.find("run.json"), std::string::npos) << e;
    EXPECT_NE(e.find("memory_GiB.peak"), std::string::npos) << e;
}

TEST(Compare, SimulatedSideAloneHasTheSameRowsWithoutMeasurements) {
    const Comparison both = compare_results(simulated(), "sim.json", measured(), "run.json");
    const Comparison alone = simulated_components(simulated(), "sim.json");
    EXPECT_TRUE(alone.verdict.empty());
    EXPECT_FALSE(alone.largest);
    for (const auto& r : alone.rows) EXPECT_FALSE(r.measured) << r.key;
    // Without a run to say otherwise, bubble and point-to-point stay apart.
    EXPECT_NEAR(*row(alone, "time_s.bubble").simulated, 0.1, 1e-12);
    EXPECT_NEAR(*row(alone, "time_s.pp_comm_exposed").simulated, 0.05, 1e-12);
    EXPECT_NEAR(*row(alone, "time_s.compute").simulated, *row(both, "time_s.compute").simulated, 1e-12);
    EXPECT_NEAR(*row(alone, "memory_GiB.peak").simulated, 16.0, 1e-12);
}
