// End-to-end: `tessel plan` and `tessel simulate` through the binary — the built-in default,
// JSON outputs that follow DESIGN.md's formats, --emit keeping stdout to the config alone, the
// trace file, and exit 3 when no plan fits.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/json_io.h"
#include "core/plan.h"
#include "core/presets.h"
#include "tests/cli/run_tessel.h"

using tessel::json;

namespace {
json read(const std::string& path) { return tessel::read_json_file(path); }
}  // namespace

TEST(PlanCli, NoArgumentsPlansTheBuiltInDefault) {
    auto r = run_tessel({"plan"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string all = r.out + r.err;
    EXPECT_NE(all.find("llama3-70b"), std::string::npos) << all;
    EXPECT_NE(all.find("default"), std::string::npos) << all;
    EXPECT_NE(all.find("considered"), std::string::npos) << all;
    EXPECT_NE(all.find("pruned"), std::string::npos) << all;
    EXPECT_NE(all.find("simulated"), std::string::npos) << all;
}

TEST(PlanCli, JsonHoldsRankedCandidatesAndBudget) {
    auto dir = temp_dir("plan_json");
    auto r = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16", "--tokens", "1e11",
                         "--json", dir + "/plans.json", "--top", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json j = read(dir + "/plans.json");
    for (const char* k : {"considered", "pruned", "simulated", "search_s", "candidates", "tokens", "steps", "days", "gpu_hours", "cost"})
        EXPECT_TRUE(j.contains(k)) << k;
    ASSERT_GE(j["candidates"].size(), 1u);
    double prev = 0;
    for (const auto& c : j["candidates"]) {
        EXPECT_TRUE(c["fits"].get<bool>());
        EXPECT_GE(c["step_time_s"].get<double>(), prev);  // best first
        prev = c["step_time_s"].get<double>();
        for (const char* k : {"mfu", "hfu", "tokens_per_s", "memory_GiB", "time_s", "plan"}) EXPECT_TRUE(c.contains(k)) << k;
    }
    // Budget arithmetic by hand: steps = tokens / tokens per step; gpu_hours = GPUs * days * 24.
    const auto& best = j["candidates"][0];
    const double tokens_per_step = best["plan"]["global_batch_size"].get<double>() * best["plan"]["seq_length"].get<double>();
    EXPECT_NEAR(j["steps"].get<double>(), std::ceil(1e11 / tokens_per_step), 1.0);
    EXPECT_NEAR(j["gpu_hours"].get<double>(), 16 * j["days"].get<double>() * 24, 1e-6 * j["gpu_hours"].get<double>() + 1e-9);
}

TEST(PlanCli, SimulateReproducesAnExportedPlan) {
    // DESIGN.md: a plan is what `plan` writes and `simulate` reads. Under --emit the plan names
    // its framework, so simulate --plan prices it with the same stack (Megatron's cuDNN attention
    // and fp32 gradient buffer, DeepSpeed's gather after the step, torchtitan's eager ops).
    const auto dir = temp_dir("plan_emit_simulate");
    for (const char* fw : {"megatron", "deepspeed", "torchtitan"}) {
        auto r = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64", "--emit", fw,
                             "--json", dir + "/plans.json", "--top", "1"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const json best = read(dir + "/plans.json")["candidates"][0];
        EXPECT_EQ(best["plan"]["framework"], fw);
        std::ofstream(dir + "/plan.json") << best["plan"].dump();
        auto s = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64", "--plan",
                             dir + "/plan.json", "--json", dir + "/sim.json"});
        ASSERT_EQ(s.exit_code, 0) << s.err;
        const json sim = read(dir + "/sim.json");
        EXPECT_NEAR(sim["step_time_s"].get<double>(), best["step_time_s"].get<double>(), 1e-9) << fw;
        EXPECT_NEAR(sim["memory_GiB"]["peak"].get<double>(), best["memory_GiB"]["peak"].get<double>(), 1e-9) << fw;
    }
}

TEST(PlanCli, SimulateReproducesAPlanPricedWithTpOverlap) {
    // A plan searched with --tp-comm-overlap says so (tp_comm_overlap), so simulate --plan prices
    // the overlap (and torchtitan's compiled model) as plan did; without the key it would not.
    const auto dir = temp_dir("plan_overlap_simulate");
    for (const char* fw : {"megatron", "torchtitan"}) {
        auto r = run_tessel({"plan", "--model", "llama3-70b", "--cluster", "dgx-h100", "--gpus", "64", "--emit", fw,
                             "--tp-comm-overlap", "--json", dir + "/plans.json", "--top", "1"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        json plan = read(dir + "/plans.json")["candidates"][0]["plan"];
        const double planned = read(dir + "/plans.json")["candidates"][0]["step_time_s"].get<double>();
        ASSERT_GT(plan["tp"].get<int>(), 1) << fw;
        EXPECT_EQ(plan["tp_comm_overlap"], true) << fw;
        auto step = [&](const json& p) {
            std::ofstream(dir + "/plan.json") << p.dump();
            auto s = run_tessel({"simulate", "--model", "llama3-70b", "--cluster", "dgx-h100", "--gpus", "64", "--plan",
                                 dir + "/plan.json", "--json", dir + "/sim.json"});
            EXPECT_EQ(s.exit_code, 0) << s.err;
            return read(dir + "/sim.json")["step_time_s"].get<double>();
        };
        EXPECT_NEAR(step(plan), planned, 1e-9) << fw;
        plan.erase("tp_comm_overlap");
        EXPECT_GT(step(plan), planned * 1.01) << fw;
    }
}

TEST(PlanCli, EmitKeepsStdoutToTheConfig) {
    auto r = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16", "--emit", "deepspeed"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json ds = json::parse(r.out);  // stdout is exactly one JSON document
    const long long tbs = ds["train_batch_size"].get<long long>();
    EXPECT_EQ(tbs % ds["train_micro_batch_size_per_gpu"].get<long long>(), 0);
    EXPECT_NE(r.err.find("considered"), std::string::npos);  // the table went to stderr
    auto m = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16", "--emit", "megatron"});
    ASSERT_EQ(m.exit_code, 0) << m.err;
    EXPECT_EQ(m.out.rfind("#!/usr/bin/env bash", 0), 0u) << m.out.substr(0, 200);
    EXPECT_NE(m.out.find("--ffn-hidden-size 14336"), std::string::npos);
    EXPECT_EQ(m.out.find("considered"), std::string::npos);
}

// `--json -` puts the JSON alone on stdout (the table goes to stderr), for plan and simulate; two
// outputs cannot share stdout.
TEST(PlanCli, JsonToStdoutIsOneDocument) {
    auto r = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16", "--top", "2", "--json", "-"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["candidates"].size(), 2u);
    EXPECT_NE(r.err.find("why #1"), std::string::npos) << r.err;
    auto s = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--dp", "8",
                         "--zero-stage", "1", "--global-batch-size", "64", "--json", "-"});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_GT(json::parse(s.out)["step_time_s"].get<double>(), 0);
    EXPECT_NE(s.err.find("step time"), std::string::npos) << s.err;
    auto both = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--dp", "8",
                            "--global-batch-size", "64", "--json", "-", "--trace", "-"});
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_NE(both.err.find("--trace -"), std::string::npos) << both.err;
}

// A budget shorter than a day is said in hours (it printed "0.0 days"): 2B tokens at ~2M tokens
// a step are 954 steps, under an hour on 64 H100s; the hours are the JSON's days x 24.
TEST(PlanCli, ShortBudgetInHours) {
    auto r = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64", "--tokens", "2e9",
                         "--top", "1", "--json", "-"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    const double hours = j["days"].get<double>() * 24;
    ASSERT_LT(hours, 24);
    EXPECT_NE(r.err.find(fmt::format("; {:.2g} hours on ", hours)), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("0.0 days"), std::string::npos) << r.err;
}

// Under tokens-per-dollar the winner may take fewer GPUs than the cluster has; the budget line
// names the winner's count, the one its GPU-hours are for.
TEST(PlanCli, BudgetNamesTheWinnersGpus) {
    auto r = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64", "--objective",
                         "tokens-per-dollar", "--tokens", "1e11", "--top", "1", "--json", "-"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    const int gpus = tessel::parse_plan(j["candidates"][0]["plan"], "plan --json").world_size();
    ASSERT_LT(gpus, 64);  // the cheaper, smaller job wins: otherwise this test shows nothing
    EXPECT_NE(r.err.find("days on " + std::to_string(gpus) + " GPUs;"), std::string::npos) << r.err;
    EXPECT_NEAR(j["gpu_hours"].get<double>(), gpus * j["days"].get<double>() * 24, 1e-6 * j["gpu_hours"].get<double>());
    // --top 1 keeps no runner-up to compare with, which is not the same as one plan fitting.
    EXPECT_EQ(r.err.find("only one plan fits"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--top 2"), std::string::npos) << r.err;
}

// 64 GPUs of each 72-GPU NVL72 rack: 128 GPUs take two racks, whose other 16 GPUs the cost leaves
// out, and the note says so. The whole nodes of a plain cluster need no note.
TEST(PlanCli, CostOnPartOfEachNodeNamesTheIdleGpus) {
    auto r = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "gb200-nvl72", "--gpus", "128", "--gpus-per-node",
                         "64", "--tokens", "1e10", "--top", "1", "--json", "-"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    const int gpus = tessel::parse_plan(j["candidates"][0]["plan"], "plan --json").world_size();
    ASSERT_EQ(gpus, 128);
    EXPECT_NE(r.err.find("its 2 nodes of gb200-nvl72 hold 144 GPUs, 16 of them idle"), std::string::npos) << r.err;
    r = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64", "--tokens", "1e10", "--top", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ((r.out + r.err).find("of them idle"), std::string::npos);
}

// torchtitan's mixed_precision_param takes bfloat16 or float32: an fp16 plan (a V100's) is refused.
TEST(PlanCli, TorchtitanHasNoFp16) {
    auto r = run_tessel({"plan", "--model", "llama2-7b", "--cluster", "dgx2-v100", "--gpus", "16", "--emit", "torchtitan"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("mixed_precision_param"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--precision fp32"), std::string::npos) << r.err;
    auto fp32 = run_tessel({"plan", "--model", "llama2-7b", "--cluster", "dgx2-v100", "--gpus", "16", "--emit", "torchtitan",
                            "--precision", "fp32"});
    ASSERT_EQ(fp32.exit_code, 0) << fp32.err;
    EXPECT_NE(fp32.out.find("mixed_precision_param float32"), std::string::npos) << fp32.out;
}

TEST(PlanCli, PrecisionIsEveryPlansAndOneTheGpuLacksIsBadInput) {
    auto dir = temp_dir("plan_precision");
    auto r = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16", "--precision", "fp8",
                         "--top", "2", "--json", dir + "/plans.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Every plan in fp8, and the generic stack says its gradients stay 16-bit (Megatron-LM keeps fp32 ones).
    EXPECT_NE(r.out.find("; fp8 with 16-bit gradients"), std::string::npos) << r.out;
    const json j = read(dir + "/plans.json");
    ASSERT_GE(j["candidates"].size(), 1u);
    for (const auto& c : j["candidates"]) EXPECT_EQ(c["plan"]["precision"].get<std::string>(), "fp8");
    // The CPU preset has only an fp32 peak: a bf16 plan names the missing key.
    auto cpu = run_tessel({"plan", "--model", "tiny-gpt", "--cluster", "cpu", "--precision", "bf16"});
    EXPECT_EQ(cpu.exit_code, 2) << cpu.err;
    EXPECT_NE(cpu.err.find("gpu.peak_tflops.bf16"), std::string::npos) << cpu.err;
    auto unknown = run_tessel({"plan", "--precision", "fp4"});
    EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
    EXPECT_NE(unknown.err.find("--precision"), std::string::npos) << unknown.err;
    // An A100 has no fp8 tensor cores: the plan says its fp8 run trains (and is simulated) as bf16.
    auto a100 = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "dgx-a100", "--gpus", "8", "--precision", "fp8", "--top", "1"});
    ASSERT_EQ(a100.exit_code, 0) << a100.err;
    EXPECT_NE(a100.out.find("no fp8 tensor cores"), std::string::npos) << a100.out;
}

TEST(PlanCli, NoPlanFitsExitsThreeWithReasons) {
    // 405B parameters with Adam cannot fit on 8 GPUs of 80 GiB under any ZeRO stage:
    // 16 bytes/parameter * 405e9 / 8 GPUs = 810 GB per GPU.
    auto r = run_tessel({"plan", "--model", "llama3-405b", "--cluster", "dgx-h100", "--gpus", "8"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("no plan fits"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("GiB"), std::string::npos) << r.err;  // the closest plans' memory against capacity
}

TEST(SimulateCli, GpusPerNodeSplitsTensorParallelismAcrossNodes) {
    // Taking 4 of each DGX H100's 8 GPUs, TP 8 spans two nodes: its all-reduces leave NVLink for the
    // NICs, so the same plan on the same 8 GPUs is slower than on one whole node.
    auto dir = temp_dir("simulate_gpus_per_node");
    auto sim = [&](std::vector<std::string> extra, const std::string& file) {
        std::vector<std::string> args = {"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8", "--tp", "8",
                                         "--global-batch-size", "8", "--json", dir + "/" + file};
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = run_tessel(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return read(dir + "/" + file);
    };
    json whole = sim({}, "whole.json"), split = sim({"--gpus-per-node", "4"}, "split.json");
    EXPECT_EQ(split["cluster"]["gpus_per_node"].get<int>(), 4);
    EXPECT_EQ(split["cluster"]["num_nodes"].get<int>(), 2);
    EXPECT_EQ(split["cluster"]["inter_node"]["nics_per_node"].get<int>(), 4);
    // The ring's bandwidth falls from NVLink's 450 GB/s to a node's four 50 GB/s NICs (2.25x); the
    // latency terms, the same in both, keep the exposed time from growing by all of that.
    EXPECT_GT(split["time_s"]["tp_comm_exposed"].get<double>(), 1.5 * whole["time_s"]["tp_comm_exposed"].get<double>());
    EXPECT_GT(split["step_time_s"].get<double>(), whole["step_time_s"].get<double>());
    // Exactly, with the latencies zeroed (a copy of the preset: links and collective calls at 0 us)
    // and every collective waited for (--no-tp-backward-overlap: none beside a GEMM, which would
    // hide more of the faster ring), every TP collective is the same ring (factor 2 x 7/8 of the
    // same S) at its bandwidth alone:
    // NVLink 450 GB/s at NCCL's intra-node 0.8 = 360 GB/s, against four GPUs' share of their
    // node's four 50 GB/s NICs, 200 GB/s at NCCL's inter-node 0.9 = 180 GB/s: 2.0x (the 2.25x
    // above is the raw links').
    json quiet = tessel::to_json(tessel::load_cluster("dgx-h100"));
    quiet["intra_node"]["latency_us"] = 0;
    quiet["inter_node"]["latency_us"] = 0;
    quiet["profile"] = {{"collective", {{"latency_us", 0}}}};
    write_text(dir + "/quiet-h100.json", quiet.dump());
    auto sim_quiet = [&](std::vector<std::string> extra, const std::string& file) {
        std::vector<std::string> args = {"simulate", "--model", "llama3-8b", "--cluster", dir + "/quiet-h100.json", "--gpus",
                                         "8", "--tp", "8", "--global-batch-size", "8", "--no-tp-backward-overlap",
                                         "--json", dir + "/" + file};
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = run_tessel(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return read(dir + "/" + file)["time_s"]["tp_comm_exposed"].get<double>();
    };
    const double quiet_whole = sim_quiet({}, "quiet-whole.json");
    const double quiet_split = sim_quiet({"--gpus-per-node", "4"}, "quiet-split.json");
    ASSERT_GT(quiet_whole, 0);
    EXPECT_NEAR(quiet_split / quiet_whole, (450 * 0.8) / (4 * 50 * 0.9), 1e-6);
    // The plan searches the same partial nodes: two GB200 racks of 64.
    auto p = run_tessel({"plan", "--model", "llama3-8b", "--cluster", "gb200-nvl72", "--gpus-per-node", "64", "--gpus", "128",
                         "--top", "1"});
    EXPECT_EQ(p.exit_code, 0) << p.err;
    EXPECT_NE(p.out.find("128 GPUs of gb200-nvl72 (2 nodes x 64"), std::string::npos) << p.out;
}

// A plan file or --dp fixes the plan's GPUs, and without --gpus the job takes that many of the
// preset's 1024 (it was refused: "expected tp*pp*dp*cp equal to the world size 1024"); without
// either, dp fills the cluster.
TEST(SimulateCli, APlanSizesTheClusterToItsOwnGpus) {
    auto dir = temp_dir("simulate_plan_gpus");
    write_text(dir + "/plan.json", R"({"tp": 2, "dp": 8, "global_batch_size": 64, "seq_length": 2048})");
    auto from_file = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--plan", dir + "/plan.json",
                                 "--json", dir + "/file.json"});
    ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
    EXPECT_EQ(read(dir + "/file.json")["num_gpus"].get<int>(), 16);
    EXPECT_EQ(read(dir + "/file.json")["cluster"]["num_nodes"].get<int>(), 2);
    auto from_flags = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--tp", "2", "--dp", "8",
                                  "--global-batch-size", "64", "--seq", "2048", "--json", dir + "/flags.json"});
    ASSERT_EQ(from_flags.exit_code, 0) << from_flags.err;
    EXPECT_DOUBLE_EQ(read(dir + "/flags.json")["step_time_s"].get<double>(), read(dir + "/file.json")["step_time_s"].get<double>());
    auto filling = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "32", "--tp", "2",
                               "--global-batch-size", "64", "--seq", "2048", "--json", dir + "/fill.json"});
    ASSERT_EQ(filling.exit_code, 0) << filling.err;
    EXPECT_EQ(read(dir + "/fill.json")["plan"]["dp"].get<int>(), 16);
    // A plan of 12 GPUs is not whole nodes of 8: said so, exit 2.
    auto partial = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--tp", "2", "--dp", "6",
                               "--global-batch-size", "48"});
    EXPECT_EQ(partial.exit_code, 2);
    EXPECT_NE(partial.err.find("multiple of the 8 GPUs per node"), std::string::npos) << partial.err;
    // A plan larger than the preset grows it to the plan's GPUs (dgx-a100 has 16 nodes of 8).
    auto larger = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-a100", "--tp", "2", "--dp", "128",
                              "--global-batch-size", "256", "--seq", "2048", "--json", dir + "/larger.json"});
    ASSERT_EQ(larger.exit_code, 0) << larger.err;
    EXPECT_EQ(read(dir + "/larger.json")["num_gpus"].get<int>(), 256);
    EXPECT_EQ(read(dir + "/larger.json")["cluster"]["num_nodes"].get<int>(), 32);
}

TEST(SimulateCli, JsonFollowsTheDesignFormatAndTraceHasOneTrackPerStage) {
    auto dir = temp_dir("simulate_json");
    auto r = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16", "--tp", "2", "--pp", "4",
                         "--global-batch-size", "64", "--json", dir + "/sim.json", "--trace", dir + "/trace.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json j = read(dir + "/sim.json");
    for (const char* k : {"fits", "step_time_s", "mfu", "hfu", "model_tflops_per_gpu", "hardware_tflops_per_gpu",
                          "tokens_per_s", "memory_GiB", "time_s", "plan", "model", "cluster"})
        EXPECT_TRUE(j.contains(k)) << k;
    for (const char* k : {"weights", "gradients", "optimizer", "activations", "buffers", "peak"})
        EXPECT_TRUE(j["memory_GiB"].contains(k)) << k;
    for (const char* k : {"compute", "recompute", "bubble", "tp_comm_exposed", "pp_comm_exposed", "dp_comm_exposed", "optimizer"})
        EXPECT_TRUE(j["time_s"].contains(k)) << k;
    EXPECT_EQ(j["plan"]["dp"].get<int>(), 2);  // 16 / (tp 2 * pp 4)
    // tokens/s = global batch * seq / step time.
    EXPECT_NEAR(j["tokens_per_s"].get<double>(), 64.0 * 8192 / j["step_time_s"].get<double>(), 1e-6 * j["tokens_per_s"].get<double>());
    json t = read(dir + "/trace.json");
    std::set<std::string> stage_tracks;
    for (const auto& e : t["traceEvents"])
        if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
            std::string n = e["args"]["name"];
            if (n.rfind("pp stage", 0) == 0 && n.find('/') == std::string::npos) stage_tracks.insert(n);  // compute tracks; comm tracks are "pp stage N / ..."
        }
    EXPECT_EQ(stage_tracks.size(), 4u);
    // Tracks are numbered and sort-indexed rank by rank, each rank's compute track first, so viewers
    // show stage 0's streams under stage 0 (they were numbered as first drawn).
    std::vector<std::string> by_tid;
    std::map<int, int> sort_index;
    bool process_named = false;
    for (const auto& e : t["traceEvents"]) {
        if (e.value("ph", "") != "M") continue;
        if (e["name"] == "process_name") process_named = true;
        if (e["name"] == "thread_sort_index") sort_index[e["tid"].get<int>()] = e["args"]["sort_index"].get<int>();
        if (e["name"] != "thread_name") continue;
        const int tid = e["tid"].get<int>();
        if (int(by_tid.size()) <= tid) by_tid.resize(tid + 1);
        by_tid[tid] = e["args"]["name"].get<std::string>();
    }
    EXPECT_TRUE(process_named);
    ASSERT_GT(by_tid.size(), 8u);
    EXPECT_EQ(by_tid[0], "pp stage 0");
    int last_stage = 0;
    for (std::size_t tid = 0; tid < by_tid.size(); ++tid) {
        EXPECT_EQ(sort_index[int(tid)], int(tid));
        if (by_tid[tid].rfind("pp stage ", 0) != 0) continue;
        const int stage = std::stoi(by_tid[tid].substr(9));
        EXPECT_GE(stage, last_stage) << by_tid[tid];
        if (stage != last_stage) EXPECT_EQ(by_tid[tid], "pp stage " + std::to_string(stage));  // compute track first
        last_stage = stage;
    }
    EXPECT_EQ(last_stage, 3);
}

// The result JSON's plan names the framework it was priced as, so that a plan file made from it
// prices the same stack; an empty output path is refused, not read as "no output".
TEST(SimulateCli, ResultKeepsTheFrameworkAndRefusesEmptyPaths) {
    auto dir = temp_dir("simulate_framework");
    const std::vector<std::string> base = {"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16",
                                           "--tp", "2", "--pp", "4", "--global-batch-size", "64"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = base;
        args.insert(args.end(), extra.begin(), extra.end());
        return run_tessel(args);
    };
    auto r = with({"--framework", "deepspeed", "--json", dir + "/ds.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json ds = read(dir + "/ds.json");
    EXPECT_EQ(ds["plan"]["framework"], "deepspeed");
    std::ofstream(dir + "/plan.json") << ds["plan"].dump();
    r = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--plan", dir + "/plan.json", "--json",
                    dir + "/again.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_DOUBLE_EQ(read(dir + "/again.json")["step_time_s"].get<double>(), ds["step_time_s"].get<double>());
    r = with({"--json", dir + "/plain.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(read(dir + "/plain.json")["plan"].contains("framework"));
    // "options" records how it was priced: DeepSpeed's stack reduces gradients in fp32 and adds
    // each microbatch's gradients in separate kernels (README, plan --emit); the plain default
    // does neither; a flag given over the framework shows too.
    EXPECT_EQ(ds["options"]["grad_reduce_in_fp32"], true);
    EXPECT_EQ(ds["options"]["gradient_accumulation_fusion"], false);
    const json plain = read(dir + "/plain.json");
    EXPECT_EQ(plain["options"]["grad_reduce_in_fp32"], false);
    // The table says which gradients were priced: the generic stack's bf16, DeepSpeed's fp32.
    EXPECT_NE((r.out + r.err).find("gradients reduced in bf16"), std::string::npos) << r.out;
    EXPECT_NE(with({"--framework", "deepspeed"}).out.find("gradients reduced in fp32"), std::string::npos);
    EXPECT_EQ(plain["options"]["gradient_accumulation_fusion"], true);
    EXPECT_EQ(plain["options"]["fused_elementwise"], true);
    r = with({"--framework", "deepspeed", "--eager-elementwise", "--json", dir + "/eager.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read(dir + "/eager.json")["options"]["fused_elementwise"], false);
    EXPECT_EQ(read(dir + "/eager.json")["options"]["grad_reduce_in_fp32"], true);
    for (const char* flag : {"--json", "--trace"}) {
        r = with({flag, ""});
        EXPECT_EQ(r.exit_code, 2) << flag;
        EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
    }
    // A defaulted global batch that does not divide is named as the default it is.
    r = run_tessel({"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16", "--tp", "2", "--pp", "4",
                    "--virtual-stages", "2"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("not given: it defaults to dp*microbatch_size"), std::string::npos) << r.err;
}

TEST(SimulateCli, PlanFileWithoutPrecisionTakesOneTheClusterHas) {
    // The cpu preset has only an fp32 peak: a plan file that names no precision must simulate in
    // fp32 there (not fail for want of a bf16 peak), and one that names bf16 must be refused.
    auto dir = temp_dir("simulate_precision");
    {
        std::ofstream(dir + "/plan.json") << R"({"tp": 2, "global_batch_size": 16, "microbatch_size": 2, "seq_length": 128})";
        std::ofstream(dir + "/bf16.json") << R"({"tp": 2, "global_batch_size": 16, "seq_length": 128, "precision": "bf16"})";
    }
    auto r = run_tessel({"simulate", "--model", "tiny-gpt", "--cluster", "cpu", "--plan", dir + "/plan.json", "--json",
                         dir + "/sim.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read(dir + "/sim.json")["plan"]["precision"].get<std::string>(), "fp32");
    auto bad = run_tessel({"simulate", "--model", "tiny-gpt", "--cluster", "cpu", "--plan", dir + "/bf16.json"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("peak_tflops.bf16"), std::string::npos) << bad.err;
}

TEST(SimulateCli, Fp8KeepsFp8GemmInputsUnlessTold) {
    // An fp8 plan keeps Transformer Engine's fp8 casts of the GEMM inputs for the backward; with
    // --fp8-keeps-bf16-inputs (torchao) the bf16 inputs, more activation memory and the same step.
    const auto dir = temp_dir("simulate_fp8_inputs");
    auto sim = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "8",
                                         "--precision", "fp8", "--json", dir + "/r.json"};
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = run_tessel(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return read(dir + "/r.json");
    };
    const json te = sim({}), torchao = sim({"--fp8-keeps-bf16-inputs"});
    EXPECT_GT(torchao["memory_GiB"]["activations"].get<double>(), te["memory_GiB"]["activations"].get<double>());
    EXPECT_DOUBLE_EQ(torchao["step_time_s"].get<double>(), te["step_time_s"].get<double>());
}

TEST(SimulateCli, CudnnAttentionAndNoDropoutAreAcceptedAndChangeTheStep) {
    // gpt2-1.5b on one H100: cuDNN's attention (faster on the H100 preset) and the model without
    // its dropout (no masks, no dropout in the attention kernel) each shorten the step.
    const auto dir = temp_dir("simulate_attention");
    auto step = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"simulate", "--model", "gpt2-1.5b", "--cluster", "dgx-h100", "--gpus", "1",
                                         "--microbatch-size", "4", "--global-batch-size", "4", "--json", dir + "/r.json"};
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = run_tessel(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return read(dir + "/r.json")["step_time_s"].get<double>();
    };
    const double flash = step({});
    EXPECT_LT(step({"--free-gradients"}), flash);  // no buffer to zero
    EXPECT_LT(step({"--attention", "cudnn", "--no-dropout"}), step({"--no-dropout"}));
    EXPECT_LT(step({"--no-dropout"}), flash);
    auto bad = run_tessel({"simulate", "--model", "gpt2-1.5b", "--cluster", "dgx-h100", "--gpus", "1", "--attention", "flash3"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE((bad.out + bad.err).find("attention"), std::string::npos);
}

TEST(SimulateCli, TorchtitansStackChoicesReachTheSimulator) {
    // Llama-3-8B on 16 H100s with PP 2 (interleaved, as many microbatches as ranks) and CP 4:
    // fp32 gradient buffers double the gradients' memory; PyTorch's loss holds more activations;
    // PyTorch's interleaved warm-up holds fewer on the last rank; PyTorch's ring takes longer.
    const auto dir = temp_dir("simulate_torch_stack");
    auto sim = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"simulate", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16",
                                         "--tp", "1", "--pp", "2", "--dp", "2", "--cp", "4", "--zero-stage", "1",
                                         "--microbatch-size", "1", "--global-batch-size", "4", "--seq", "32768",
                                         "--recompute", "full", "--schedule", "interleaved", "--virtual-stages", "2",
                                         "--json", dir + "/r.json"};
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = run_tessel(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return read(dir + "/r.json");
    };
    auto mem = [](const json& j, const char* k) { return j["memory_GiB"][k].get<double>(); };
    const json base = sim({});
    EXPECT_NEAR(mem(sim({"--fp32-grad-reduce"}), "gradients"), 2.0 * mem(base, "gradients"), 1e-9);
    EXPECT_GT(mem(sim({"--torch-cross-entropy"}), "activations"), mem(base, "activations"));
    EXPECT_GT(mem(sim({"--all-forwards-first"}), "activations"), mem(base, "activations"));
    EXPECT_GT(sim({"--torch-context-parallel"})["step_time_s"].get<double>(), base["step_time_s"].get<double>());
}
