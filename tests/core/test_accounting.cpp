// Parameter counts against published figures, and FLOPs per token against the hand-derived
// Megatron formula (Narayanan et al. 2021, eq. 3).
#include <gtest/gtest.h>

#include <cmath>

#include "core/accounting.h"
#include "core/presets.h"

using namespace tessel;

namespace {
void expect_within(double got, double published, double rel, const char* what) {
    EXPECT_LE(std::abs(got - published) / published, rel) << what << ": got " << got << ", published " << published;
}
}  // namespace

TEST(ParameterCount, PublishedTotalsWithinHalfPercent) {
    // GPT-3 paper (Brown et al. 2020, Table 2.1): 175.0B nominal, 174.6B exact with V = 50257.
    expect_within(double(count_parameters(load_model("gpt3-175b")).total), 174.6e9, 0.005, "gpt3-175b");
    // Meta model cards: Llama 3 8B / 70B / 405B.
    expect_within(double(count_parameters(load_model("llama3-8b")).total), 8.03e9, 0.005, "llama3-8b");
    expect_within(double(count_parameters(load_model("llama3-70b")).total), 70.55e9, 0.005, "llama3-70b");
    expect_within(double(count_parameters(load_model("llama3-405b")).total), 405.85e9, 0.005, "llama3-405b");
    // GPT-2 small: 124.44M (Hugging Face gpt2).
    expect_within(double(count_parameters(load_model("gpt2-124m")).total), 124.44e6, 0.005, "gpt2-124m");
}

TEST(ParameterCount, ExactByHandDerivation) {
    // GPT-2 124M: V h + P h + 2h + L (12 h^2 + 13 h), h = 768, L = 12, V = 50257, P = 1024.
    const std::int64_t h = 768, L = 12, V = 50257, P = 1024;
    EXPECT_EQ(count_parameters(load_model("gpt2-124m")).total, V * h + P * h + 2 * h + L * (12 * h * h + 13 * h));
    EXPECT_EQ(count_parameters(load_model("gpt2-124m")).total, 124439808);
}

TEST(ParameterCount, HuggingFaceConfigsMatchTheirFamilyFormulas) {
    const std::string dir = TESSEL_TEST_DATA_DIR;
    // The same Llama 3 8B from its config.json: 8,030,261,248 (model card 8.03B).
    EXPECT_EQ(count_parameters(load_model(dir + "/hf/llama3-8b-config.json")).total, 8030261248);
    EXPECT_EQ(count_parameters(load_model("llama3-8b")).total, 8030261248);
    // Qwen2-0.5B: tied, QKV bias: 494,032,768 (Qwen2 report: 0.49B).
    EXPECT_EQ(count_parameters(load_model(dir + "/hf/qwen2-0.5b-config.json")).total, 494032768);
    // Pythia-160M (GPT-NeoX, untied): 162,322,944 (Pythia paper: 162,322,944 total).
    EXPECT_EQ(count_parameters(load_model(dir + "/hf/pythia-160m-config.json")).total, 162322944);
}

TEST(ParameterCount, EmbeddingSplit) {
    auto c = count_parameters(load_model("llama3-8b"));
    EXPECT_EQ(c.embedding, 2 * 128256LL * 4096);  // token table + untied LM head
    EXPECT_EQ(c.non_embedding + c.embedding, c.total);
}

TEST(Flops, GptMatchesNarayananEquation3) {
    auto m = load_model("gpt3-175b");
    const double l = 96, h = 12288, V = 50257, s = 2048;
    // Model FLOPs (no recomputation): 72 l h^2 (1 + s/(6h) + V/(12 l h)) per token.
    const double model = 72 * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    // With full recomputation, eq. 3: 96 l h^2 (1 + s/(6h) + V/(16 l h)) per token.
    const double hardware = 96 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    auto f = flops_per_token(m, 2048, Recompute::full);
    EXPECT_NEAR(f.model / model, 1.0, 1e-12);
    EXPECT_NEAR(f.hardware / hardware, 1.0, 1e-12);
}

TEST(Flops, SixNPlusAttentionForLlama) {
    // torchtitan / PaLM convention: 6 * (non-embedding matmul weights incl. LM head) + 12 L H d s.
    auto m = load_model("llama3-8b");
    auto c = count_parameters(m);
    const double matmul = double(c.total - c.token_embedding - 32LL * (2 * 4096) - 4096);  // minus norms
    const double expected = 6 * matmul + 12.0 * 32 * 4096 * 8192;
    EXPECT_NEAR(flops_per_token(m, 8192).model / expected, 1.0, 1e-12);
    auto sel = flops_per_token(m, 8192, Recompute::selective);
    EXPECT_NEAR(sel.hardware - sel.model, 4.0 * 32 * 4096 * 8192, 1.0);
}
