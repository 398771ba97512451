// Every kind of bad input gets exit 2 and a message naming the file, the key and what was
// expected — never a crash, a hang or a partial output file (issue: robustness).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli/run_tessel.h"

namespace {

struct BadInput {
    const char* name;
    const char* file_content;            // written to DIR/input.json when not null
    std::vector<std::string> args;       // "@" is replaced by DIR/input.json, "%" by DIR
    int exit_code;
    std::vector<std::string> expected;   // substrings of stderr
};
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

const std::string kModel = R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 128)";
const std::string kCluster = R"({"name": "c", "num_nodes": 1, "gpus_per_node": 4, "gpu": {"name": "g", "memory_GiB": 80,
  "memory_bandwidth_GBps": 2000, "peak_tflops": {"bf16": 300}}, "intra_node": {"bandwidth_GBps": 300}, )";

std::vector<BadInput> cases() {
    static const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    static const std::string model_unknown_key = kModel + R"(, "num_layer": 3})";
    static const std::string model_nan = kModel + R"(, "seq_length": NaN})";
    static const std::string model_inf = kModel + R"(, "seq_length": Infinity})";
    static const std::string model_overflow = kModel + R"(, "seq_length": 1e999})";
    static const std::string model_huge_int = kModel + R"(, "seq_length": 99999999999999999999999})";
    static const std::string cluster_no_nodes = kCluster + R"("num_nodes": 0})";
    static const std::string cluster_ok = kCluster + R"("price_per_gpu_hour": 1})";
    return {
        {"empty file", "", {"inspect", "--model", "@"}, 2, {"input.json", "empty"}},
        {"binary junk", "\x7f" "ELF\x01\x02\x03\xff\xfe", {"inspect", "--model", "@"}, 2, {"input.json", "malformed JSON"}},
        {"truncated JSON", R"({"num_layers": 2, "hidden_si)", {"inspect", "--model", "@"}, 2, {"input.json", "malformed JSON"}},
        {"deeply nested", deep.c_str(), {"inspect", "--model", "@"}, 2, {"input.json", "nested deeper"}},
        {"overflowing number", model_overflow.c_str(), {"inspect", "--model", "@"}, 2, {"input.json"}},
        {"integer too large", model_huge_int.c_str(), {"inspect", "--model", "@"}, 2, {"input.json", "seq_length"}},
        {"NaN", model_nan.c_str(), {"inspect", "--model", "@"}, 2, {"input.json"}},
        {"Infinity", model_inf.c_str(), {"inspect", "--model", "@"}, 2, {"input.json"}},
        {"negative size", R"({"num_layers": -2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 128})",
         {"inspect", "--model", "@"}, 2, {"input.json", "key 'num_layers'", "expected an integer"}},
        {"zero size", R"({"num_layers": 2, "hidden_size": 0, "num_attention_heads": 4, "vocab_size": 128})",
         {"inspect", "--model", "@"}, 2, {"input.json", "key 'hidden_size'"}},
        {"non-integer size", R"({"num_layers": 2.5, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 128})",
         {"inspect", "--model", "@"}, 2, {"input.json", "key 'num_layers'", "got number 2.5"}},
        {"wrong type", R"({"num_layers": "2", "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 128})",
         {"inspect", "--model", "@"}, 2, {"input.json", "key 'num_layers'", "got string"}},
        {"top level not an object", "[1, 2, 3]", {"inspect", "--model", "@"}, 2, {"input.json", "JSON object"}},
        {"unknown key warns with suggestion", model_unknown_key.c_str(), {"inspect", "--model", "@"}, 0,
         {"unknown key 'num_layer'", "did you mean 'num_layers'"}},
        {"hidden not divisible by heads", R"({"num_layers": 2, "hidden_size": 66, "num_attention_heads": 4, "vocab_size": 128})",
         {"inspect", "--model", "@"}, 2, {"input.json", "key 'hidden_size'", "multiple of num_attention_heads"}},
        {"kv heads not dividing heads", R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_kv_heads": 3, "vocab_size": 128})",
         {"inspect", "--model", "@"}, 2, {"input.json", "key 'num_kv_heads'"}},
        {"cluster with no nodes", cluster_no_nodes.c_str(), {"simulate", "--model", "tiny-llama", "--cluster", "@"}, 2,
         {"input.json", "key 'num_nodes'"}},
        {"tp dividing neither heads nor kv heads", nullptr,
         {"simulate", "--model", "tiny-llama", "--cluster", "dgx-h100", "--gpus", "3", "--tp", "3"}, 2, {"key 'tp'", "attention heads"}},
        {"tp zero", nullptr, {"simulate", "--model", "tiny-llama", "--cluster", "dgx-h100", "--gpus", "4", "--tp", "0"}, 2, {"tp"}},
        {"negative gpus", nullptr, {"plan", "--model", "tiny-llama", "--cluster", "dgx-h100", "--gpus", "-8"}, 2, {"--gpus"}},
        {"unknown flag", nullptr, {"inspect", "--model", "tiny-llama", "--colour"}, 2, {"--colour"}},
        {"unknown preset", nullptr, {"inspect", "--model", "llama9-1t"}, 2, {"unknown model preset 'llama9-1t'", "presets:", "tiny-gpt"}},
        {"unknown cluster preset", nullptr, {"simulate", "--model", "tiny-llama", "--cluster", "dgx-z900", "--tp", "1"}, 2,
         {"unknown cluster preset 'dgx-z900'", "dgx-h100"}},
        {"missing file", nullptr, {"inspect", "--model", "%/absent.json"}, 2, {"absent.json: no such file"}},
        {"unreadable file (a folder)", nullptr, {"inspect", "--model", "%"}, 2, {"is a directory"}},
        {"output in a missing folder", cluster_ok.c_str(),
         {"simulate", "--model", "tiny-llama", "--cluster", "@", "--tp", "2", "--json", "%/no/such/dir/out.json"}, 2,
         {"out.json", "does not exist"}},
        {"unsupported Hugging Face architecture", R"({"model_type": "mamba", "hidden_size": 768, "num_hidden_layers": 24, "vocab_size": 50280})",
         {"inspect", "--model", "@"}, 2, {"input.json", "model_type", "llama", "gpt2", "mamba"}},
    };
}

}  // namespace

class BadInputTest : public testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, AnsweredClearly) {
    const BadInput& c = GetParam();
    const std::string dir = temp_dir("bad_input");
    const std::string input = dir + "/input.json";
    if (c.file_content) write_text(input, c.file_content);
    std::vector<std::string> args;
    for (const auto& a : c.args) {
        if (a == "@") args.push_back(input);
        else if (!a.empty() && a[0] == '%') args.push_back(dir + a.substr(1));
        else args.push_back(a);
    }
    auto r = run_tessel(args, 60);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.name << "\nstderr: " << r.err;
    for (const auto& s : c.expected) EXPECT_NE(r.err.find(s), std::string::npos) << c.name << ": missing '" << s << "' in:\n" << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    // No partial output: nothing but the input file is left in the folder.
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        EXPECT_TRUE(e.path() == input || e.is_directory()) << c.name << " left " << e.path();
}

INSTANTIATE_TEST_SUITE_P(Robustness, BadInputTest, testing::ValuesIn(cases()), [](const auto& info) {
    std::string n;
    for (char ch : std::string(info.param.name)) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    return n;
});
