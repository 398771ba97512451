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
    // Qwen2-0.5B: tied, QKV bias: 494,032,768 (Qwen2 report: 0.49B). By hand from its config
    // (h 896, 14 heads of 64, 2 KV heads: K/V width 128, FFN 4864, 24 layers, V 151936):
    //   L (h^2 + h [Q + bias] + 2 (h x 128 + 128) [K, V + biases] + h^2 [O] + 3 h f + 2 h [norms])
    //   + V h [tied embedding] + h [final norm].
    {
        const std::int64_t h = 896, kv = 128, f = 4864, L = 24, V = 151936;
        const std::int64_t qwen2 = L * (h * h + h + 2 * (h * kv + kv) + h * h + 3 * h * f + 2 * h) + V * h + h;
        EXPECT_EQ(qwen2, 494032768);
        EXPECT_EQ(count_parameters(load_model(dir + "/hf/qwen2-0.5b-config.json")).total, qwen2);
    }
    // Pythia-160M (GPT-NeoX, untied): 162,322,944 (Pythia paper: 162,322,944 total).
    EXPECT_EQ(count_parameters(load_model(dir + "/hf/pythia-160m-config.json")).total, 162322944);
}

// Falcon (modeling_falcon.py's FalconDecoderLayer): the old architecture with parallel_attn
// keeps one input_layernorm per layer, read by attention and MLP alike; the new architecture
// (40B) has ln_attn and ln_mlp. By hand, with d = 64, f = 4h, no biases, tied, 2h final norm:
//   7B:  L (h (h + 2d) [multi-query QKV] + h^2 + 2 h f + 2h [one LN]) + V h + 2h, h 4544, L 32
//   40B: L (h (2K + H) d + h^2 + 2 h f + 4h [two LNs]) + V h + 2h, h 8192, H 128, K 8, L 60
// the golden values 6,921,720,704 and 41,303,293,952 of the shared config-formats reference (B4).
TEST(ParameterCount, FalconCountsItsSharedNorm) {
    const std::string dir = TESSEL_TEST_DATA_DIR;
    const std::int64_t V = 65024, d = 64;
    {
        const std::int64_t h = 4544, f = 4 * h, L = 32;
        const std::int64_t falcon7 = L * (h * (h + 2 * d) + h * h + 2 * h * f + 2 * h) + V * h + 2 * h;
        EXPECT_EQ(falcon7, 6921720704);
        const ModelSpec m = load_model(dir + "/hf/falcon-7b-config.json");
        EXPECT_TRUE(m.parallel_residual && m.shared_norm);
        EXPECT_EQ(count_parameters(m).total, falcon7);
    }
    {
        const std::int64_t h = 8192, f = 4 * h, L = 60, H = 128, K = 8;
        const std::int64_t falcon40 = L * (h * (2 * K + H) * d + h * h + 2 * h * f + 4 * h) + V * h + 2 * h;
        EXPECT_EQ(falcon40, 41303293952);
        const ModelSpec m = load_model(dir + "/hf/falcon-40b-config.json");
        EXPECT_TRUE(m.parallel_residual);
        EXPECT_FALSE(m.shared_norm);
        EXPECT_EQ(count_parameters(m).total, falcon40);
    }
}

TEST(ParameterCount, QkNormFamiliesMatchTheirModelCards) {
    const std::string dir = TESSEL_TEST_DATA_DIR;
    // Qwen3 model cards (Qwen/Qwen3-8B, Qwen/Qwen3-0.6B on Hugging Face): 8.2B parameters, 6.95B
    // without the embeddings; 0.6B and 0.44B. Their per-head Q/K norms add 2 x 128 per layer.
    const auto q8 = count_parameters(load_model(dir + "/hf/qwen3-8b-config.json"));
    EXPECT_EQ(std::llround(double(q8.total) / 1e8), 82);
    EXPECT_EQ(std::llround(double(q8.non_embedding) / 1e7), 695);
    const auto q06 = count_parameters(load_model(dir + "/hf/qwen3-0.6b-config.json"));  // tied
    EXPECT_EQ(std::llround(double(q06.total) / 1e8), 6);
    EXPECT_EQ(std::llround(double(q06.non_embedding) / 1e7), 44);
    // By hand, Qwen3-8B: L (h (H d + 2 K d) + H d h + 3 h f + 2 h + 2 d) + h + 2 V h with h 4096,
    // H 32, K 8, d 128, f 12288, L 36, V 151936.
    const std::int64_t h = 4096, H = 32, K = 8, d = 128, f = 12288, L = 36, V = 151936;
    EXPECT_EQ(q8.total, L * (h * (H * d + 2 * K * d) + H * d * h + 3 * h * f + 2 * h + 2 * d) + h + 2 * V * h);
    // OLMo 2 7B normalises whole projections: q_norm over H d = 4096, k_norm over K d = 4096 (K = H).
    const ModelSpec olmo = load_model(dir + "/hf/olmo2-7b-config.json");
    EXPECT_EQ(olmo.qk_norm, QkNorm::full_width);
    const std::int64_t ho = 4096, fo = 11008, Lo = 32, Vo = 100352;
    EXPECT_EQ(count_parameters(olmo).total, Lo * (4 * ho * ho + 3 * ho * fo + 2 * ho + 2 * ho) + ho + 2 * Vo * ho);
    // Phi-3-mini (no QK norm): 3,821,079,552 (Hugging Face microsoft/Phi-3-mini-4k-instruct, 3.8B).
    // By hand (h 3072, 32 heads = KV heads, FFN 8192, 32 layers, V 32064, untied, no biases):
    //   L (4 h^2 + 3 h f + 2 h) + 2 V h + h.
    const std::int64_t hp = 3072, fp = 8192, Lp = 32, Vp = 32064;
    const std::int64_t phi3 = Lp * (4 * hp * hp + 3 * hp * fp + 2 * hp) + 2 * Vp * hp + hp;
    EXPECT_EQ(phi3, 3821079552);
    EXPECT_EQ(count_parameters(load_model(dir + "/hf/phi3-mini-4k-config.json")).total, phi3);
}

TEST(Flops, SlidingWindowCountsTheBand) {
    // Mistral 7B v0.1 (sliding_window 4096): at 8192 tokens each query counts 4096 keys, so the
    // attention term is 12 L (H d) 4096 per token, the same as a full model's at 4096 tokens.
    ModelSpec m = load_model("llama2-7b");
    const double at4096 = flops_per_token(m, 4096).model;
    const double full8192 = flops_per_token(m, 8192).model;
    m.sliding_window = 4096;
    EXPECT_DOUBLE_EQ(flops_per_token(m, 8192).model, at4096);
    EXPECT_DOUBLE_EQ(full8192 - at4096, 12.0 * m.num_layers * m.q_size() * 4096);
    EXPECT_DOUBLE_EQ(flops_per_token(m, 2048).model, flops_per_token(load_model("llama2-7b"), 2048).model);
}

TEST(ParameterCount, GemmaFamiliesMatchTheirReports) {
    const std::string dir = TESSEL_TEST_DATA_DIR;
    // Gemma Team 2024 (Gemma: Open Models..., Table 2), non-embedding parameters: 2B 1,981,884,416,
    // 7B 7,751,248,896 (their embedding counts use a padded table of 256,128 rows; the configs list
    // 256,000). Gated GELU: three matrices per MLP, like SwiGLU.
    EXPECT_EQ(count_parameters(load_model(dir + "/hf/gemma-2b-config.json")).non_embedding, 1981884416);
    EXPECT_EQ(count_parameters(load_model(dir + "/hf/gemma-7b-config.json")).non_embedding, 7751248896);
    // Gemma Team 2024 (Gemma 2, Table 1): 9B non-embedding 8,324,201,984, with a post-norm after the
    // attention and after the MLP (four norms a layer).
    EXPECT_EQ(count_parameters(load_model(dir + "/hf/gemma-2-9b-config.json")).non_embedding, 8324201984);
    // Gemma Team 2025 (Gemma 3, Table 1): 1B: 302M embedding, 698M non-embedding (per-head QK norms).
    const auto g3 = count_parameters(load_model(dir + "/hf/gemma-3-1b-config.json"));
    EXPECT_EQ(std::llround(double(g3.embedding) / 1e6), 302);
    EXPECT_EQ(std::llround(double(g3.non_embedding) / 1e6), 698);
}

TEST(Flops, InterleavedWindowsAverageTheLayers) {
    // Gemma 3's pattern 6 over its 26 layers: layers 5, 11, 17 and 23 (i + 1 a multiple of 6)
    // global, the other 22 windowed (512 keys). At 4096 tokens the layers count
    // (22 x 512 + 4 x 4096) / 26 keys per query on average.
    const ModelSpec m = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/gemma-3-1b-config.json");
    ASSERT_EQ(m.num_layers, 26);
    const double keys = (22.0 * 512 + 4.0 * 4096) / 26.0;
    EXPECT_DOUBLE_EQ(m.attended_keys(4096), keys);
    EXPECT_DOUBLE_EQ(m.attended_keys(256), 256.0);  // shorter than the window: every layer sees all
    ModelSpec full = m;
    full.sliding_window = 0;
    EXPECT_DOUBLE_EQ(flops_per_token(full, 4096).model - flops_per_token(m, 4096).model,
                     12.0 * m.num_layers * m.q_size() * (4096 - keys));
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
