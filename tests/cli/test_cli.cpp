// End-to-end: the binary's exit codes and messages for good and bad input (DESIGN.md, CLI).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/accounting.h"
#include "core/json_io.h"
#include "core/presets.h"
#include "tests/cli/run_tessel.h"

using tessel::json;

TEST(Cli, InspectJsonMatchesHandCount) {
    auto r = run_tessel({"inspect", "--model", "gpt2-124m", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = json::parse(r.out);
    // GPT-2 small by hand: V h + P h + 2h + L (12 h^2 + 13 h).
    EXPECT_EQ(j["parameters"].get<long long>(), 50257LL * 768 + 1024LL * 768 + 2 * 768 + 12 * (12LL * 768 * 768 + 13 * 768));
    EXPECT_EQ(j["embedding_parameters"].get<long long>() + j["non_embedding_parameters"].get<long long>(),
              j["parameters"].get<long long>());
    ASSERT_TRUE(j.contains("flops_per_token"));
    EXPECT_TRUE(j.contains("layer_shapes"));
    // Model FLOPs per token at its 1024-token sequence, Narayanan et al. 2021 (SC21), eq. 3 without
    // recomputation: 72 l h^2 (1 + s/(6h) + V/(12 l h)), l = 12, h = 768, s = 1024, V = 50257
    // (= 6 x forward-and-backward matmul FLOPs including the LM head, plus attention's s terms).
    const double l = 12, h = 768, s = 1024, V = 50257;
    const double hand = 72 * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    EXPECT_EQ(j["seq_length"].get<int>(), 1024);
    EXPECT_NEAR(j["flops_per_token"].get<double>(), hand, 1e-9 * hand);
}

TEST(Cli, InspectHuggingFaceConfig) {
    auto r = run_tessel({"inspect", "--model", std::string(TESSEL_TEST_DATA_DIR) + "/hf/llama3-8b-config.json", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(json::parse(r.out)["parameters"].get<long long>(), 8030261248LL);
}

TEST(Cli, MalformedJsonExitsTwoNamingTheFile) {
    auto dir = temp_dir("malformed");
    auto path = dir + "/broken-model.json";
    write_text(path, "{\"num_layers\": 2, \"hidden_size\": ");
    auto r = run_tessel({"inspect", "--model", path});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("broken-model.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("malformed JSON"), std::string::npos) << r.err;
}

TEST(Cli, WrongTypeNamesTheKey) {
    auto dir = temp_dir("wrongtype");
    auto path = dir + "/m.json";
    write_text(path, R"({"num_layers": "twelve", "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10})");
    auto r = run_tessel({"inspect", "--model", path});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("m.json: key 'num_layers': expected an integer"), std::string::npos) << r.err;
}

TEST(Cli, UnknownPresetListsPresets) {
    auto r = run_tessel({"inspect", "--model", "gpt5"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("unknown model preset 'gpt5'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("llama3-8b"), std::string::npos) << r.err;
}

TEST(Cli, UnknownFlagAndMissingFileExitTwo) {
    EXPECT_EQ(run_tessel({"inspect", "--model", "gpt2-124m", "--frobnicate"}).exit_code, 2);
    auto r = run_tessel({"inspect", "--model", "no/such/model.json"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("no/such/model.json: no such file"), std::string::npos) << r.err;
}

TEST(Cli, HelpHasAnExamplePerSubcommand) {
    for (const char* cmd : {"inspect", "plan", "simulate", "validate", "run", "calibrate", "compare", "report"}) {
        auto r = run_tessel({cmd, "--help"});
        EXPECT_EQ(r.exit_code, 0) << cmd;
        EXPECT_NE(r.out.find("Example"), std::string::npos) << cmd << ":\n" << r.out;
    }
}

// A calibrated profile holds the kernel rates of the device it was measured on: applied to a
// published run on an A100, validate says so on stderr, naming the device (the cluster file's
// gpu.name) and the rows' GPU, and still writes the report; a bare profile names no device.
TEST(Cli, ValidateWarnsWhenAProfileMeetsOtherGpus) {
    const std::string root = std::string(TESSEL_TEST_DATA_DIR) + "/../..";
    const json runs = tessel::read_json_file(root + "/configs/validation/published_runs.json");
    const auto dir = temp_dir("validate-profile");
    write_text(dir + "/one-run.json", json::array({runs.at(0)}).dump());
    const json cpu = tessel::read_json_file(root + "/configs/clusters/cpu.json");
    write_text(dir + "/cpu.json", cpu.dump());
    write_text(dir + "/bare.json", cpu["profile"].dump());
    auto r = run_tessel({"validate", dir + "/one-run.json", "--no-cross-validation", "--out", dir + "/v.md",
                         "--profile", dir + "/cpu.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: --profile " + dir + "/cpu.json was measured on " +
                         cpu["gpu"]["name"].get<std::string>() + "; it prices 1 row on other GPUs: A100-SXM4-80GB (1)"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(std::filesystem::exists(dir + "/v.md"));
    r = run_tessel({"validate", dir + "/one-run.json", "--no-cross-validation", "--out", dir + "/v.md", "--profile",
                    dir + "/bare.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("measured on a device it does not name"), std::string::npos) << r.err;
    r = run_tessel({"validate", dir + "/one-run.json", "--no-cross-validation", "--out", dir + "/v.md"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}
