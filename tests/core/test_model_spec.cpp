// Model parsing: native and Hugging Face configs, detected by their keys.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/accounting.h"
#include "core/errors.h"
#include "core/json_io.h"
#include "core/model_spec.h"
#include "core/presets.h"
#include "tests/input_error_message.h"

using namespace tessel;

TEST(ModelSpec, NativeDefaults) {
    auto m = parse_model(json::parse(R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100})"), "t.json");
    EXPECT_EQ(m.num_kv_heads, 4);
    EXPECT_EQ(m.ffn_hidden_size, 256);  // DESIGN.md: 4 * hidden by default
    EXPECT_EQ(m.head_dim, 16);
    EXPECT_EQ(m.source, "native");
}

TEST(ModelSpec, HuggingFaceLlamaDetected) {
    auto m = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/llama3-8b-config.json");
    EXPECT_EQ(m.source, "huggingface:llama");
    EXPECT_EQ(m.num_layers, 32);
    EXPECT_EQ(m.num_kv_heads, 8);
    EXPECT_EQ(m.ffn_hidden_size, 14336);
    EXPECT_EQ(m.activation, Activation::swiglu);
    EXPECT_FALSE(m.tied_embeddings);
    EXPECT_DOUBLE_EQ(m.rope_theta, 500000.0);  // config.json's rope_theta
    EXPECT_DOUBLE_EQ(m.norm_epsilon, 1e-5);    // rms_norm_eps
}

TEST(ModelSpec, HuggingFaceGpt2Keys) {
    auto m = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/gpt2-config.json");
    EXPECT_EQ(m.num_layers, 12);
    EXPECT_EQ(m.hidden_size, 768);
    EXPECT_EQ(m.max_position_embeddings, 1024);
    EXPECT_TRUE(m.tied_embeddings);
    EXPECT_TRUE(m.linear_bias);
}

// Pythia (GPT-NeoX) rotates a quarter of each head (rotary_pct) and adds attention and MLP to one
// residual (use_parallel_residual); Falcon is parallel by default and always with its new decoder
// architecture; a native file carries both, and a rotary share outside (0, 1] is bad input.
TEST(ModelSpec, PartialRotaryAndParallelResidualRead) {
    auto p = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/pythia-160m-config.json");
    EXPECT_DOUBLE_EQ(p.rotary_percent, 0.25);
    EXPECT_TRUE(p.parallel_residual);
    auto back = parse_model(to_json(p), "back.json");
    EXPECT_DOUBLE_EQ(back.rotary_percent, 0.25);
    EXPECT_TRUE(back.parallel_residual);
    const std::string falcon = R"({"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "vocab_size": 128, "parallel_attn": false, "new_decoder_architecture": )";
    EXPECT_FALSE(parse_model(json::parse(falcon + "false}"), "f.json").parallel_residual);
    EXPECT_TRUE(parse_model(json::parse(falcon + "true, \"num_kv_heads\": 2}"), "f.json").parallel_residual);
    // configuration_falcon.py's multi_query defaults to true: one K/V head without the new
    // decoder architecture unless the file says false.
    EXPECT_EQ(parse_model(json::parse(falcon + "false}"), "f.json").num_kv_heads, 1);
    EXPECT_EQ(parse_model(json::parse(falcon + "false, \"multi_query\": false}"), "f.json").num_kv_heads, 4);
    const auto llama = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/llama3-8b-config.json");
    EXPECT_DOUBLE_EQ(llama.rotary_percent, 1.0);
    EXPECT_FALSE(llama.parallel_residual);
    for (const char* bad : {"0", "1.5"}) {
        const std::string native = std::string(R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
            "position_embedding": "rope", "rotary_percent": )") + bad + "}";
        try {
            parse_model(json::parse(native), "t.json");
            FAIL() << bad;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find("rotary_percent"), std::string::npos) << e.what();
        }
    }
}

// Falcon-RW's ALiBi is refused by its key rather than read as a learned position table.
// One norm for both branches: Falcon's new architecture with num_ln_in_parallel_attn 1 (Falcon 2)
// shares it as the old one does; a native file carries shared_norm through to_json, and refuses it
// without a parallel residual (a sequential MLP reads the attention's sum, not the layer input).
TEST(ModelSpec, SharedNormReadAndRefusedWithoutParallelResidual) {
    const std::string falcon = R"({"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_kv_heads": 2, "vocab_size": 128, "new_decoder_architecture": true)";
    EXPECT_FALSE(parse_model(json::parse(falcon + "}"), "f.json").shared_norm);
    const ModelSpec one = parse_model(json::parse(falcon + R"(, "num_ln_in_parallel_attn": 1})"), "f.json");
    EXPECT_TRUE(one.shared_norm);
    EXPECT_TRUE(parse_model(to_json(one), "back.json").shared_norm);
    try {
        parse_model(json::parse(R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
            "shared_norm": true})"), "t.json");
        FAIL() << "shared_norm without parallel_residual";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("shared_norm"), std::string::npos) << e.what();
    }
}

TEST(ModelSpec, AlibiIsRefusedByName) {
    try {
        parse_model(json::parse(R"({"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "vocab_size": 128, "alibi": true})"), "rw.json");
        FAIL();
    } catch (const InputError& e) {
        const std::string s = e.what();
        EXPECT_NE(s.find("rw.json"), std::string::npos) << s;
        EXPECT_NE(s.find("key 'alibi'"), std::string::npos) << s;
    }
}

TEST(ModelSpec, UnsupportedArchitectureSaysWhichAre) {
    try {
        load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/mamba-config.json");
        FAIL();
    } catch (const InputError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find("model_type"), std::string::npos) << m;
        EXPECT_NE(m.find("llama"), std::string::npos) << m;
        EXPECT_NE(m.find("mamba"), std::string::npos) << m;
    }
}

TEST(ModelSpec, QkNormFamiliesDetected) {
    const std::string dir = TESSEL_TEST_DATA_DIR;
    auto q = load_model(dir + "/hf/qwen3-8b-config.json");
    EXPECT_EQ(q.source, "huggingface:qwen3");
    EXPECT_EQ(q.qk_norm, QkNorm::per_head);
    EXPECT_FALSE(q.qkv_bias);  // unlike Qwen2, Qwen3's attention_bias is false
    EXPECT_EQ(q.head_dim, 128);
    EXPECT_EQ(q.qk_norm_weights(), 256);
    auto small = load_model(dir + "/hf/qwen3-0.6b-config.json");
    EXPECT_EQ(small.q_size(), 2048);  // 16 heads of 128 over a width of 1024
    EXPECT_TRUE(small.tied_embeddings);
    EXPECT_EQ(load_model(dir + "/hf/olmo2-7b-config.json").qk_norm_weights(), 4096 + 4096);
    auto phi = load_model(dir + "/hf/phi3-mini-4k-config.json");
    EXPECT_EQ(phi.qk_norm, QkNorm::none);
    EXPECT_EQ(phi.activation, Activation::swiglu);
    // The native format reads and writes the key.
    auto n = parse_model(json::parse(R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
        "vocab_size": 100, "qk_norm": "per_head"})"), "t.json");
    EXPECT_EQ(n.qk_norm, QkNorm::per_head);
    EXPECT_EQ(parse_model(to_json(n), "t.json").qk_norm, QkNorm::per_head);
    EXPECT_FALSE(to_json(load_model("llama3-8b")).contains("qk_norm"));
    EXPECT_THROW(parse_model(json::parse(R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
        "vocab_size": 100, "qk_norm": "yes"})"), "t.json"), InputError);
}

TEST(ModelSpec, StretchedRopeTrainsAtItsOriginalContextByDefault) {
    // Llama 3.1 8B's config.json: max_position_embeddings 131072 after its llama3 RoPE scaling of
    // an 8192-token pretraining context (Dubey et al. 2024, §3.4: long-context pre-training last).
    auto llama31 = parse_model(json::parse(R"({"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
        "max_position_embeddings": 131072, "rope_theta": 500000.0, "rope_scaling": {"factor": 8.0,
        "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192,
        "rope_type": "llama3"}})"), "c.json");
    EXPECT_EQ(llama31.seq_length, 8192);
    // Phi-3's long variants keep it at the top level; without either, max_position_embeddings.
    auto phi = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/phi3-mini-4k-config.json");
    EXPECT_EQ(phi.seq_length, 4096);
    EXPECT_EQ(load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/qwen3-8b-config.json").seq_length, 40960);
    // Phi-3.5-mini and Phi-4-mini: a rope_scaling of long/short factors without the length, which
    // sits at the top level (4096 of 131072).
    const std::string shape = R"("num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
        "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 131072, )";
    EXPECT_EQ(parse_model(json::parse(R"({"model_type": "phi3", )" + shape + R"("original_max_position_embeddings": 4096,
        "rope_scaling": {"long_factor": [1.0], "short_factor": [1.0], "type": "longrope"}})"), "c.json").seq_length, 4096);
    // transformers v5 writes Llama 3.2's as rope_parameters.original_max_position_embeddings.
    EXPECT_EQ(parse_model(json::parse(R"({"model_type": "llama", )" + shape + R"("rope_parameters": {"factor": 32.0,
        "original_max_position_embeddings": 8192, "rope_theta": 500000.0, "rope_type": "llama3"}})"), "c.json").seq_length, 8192);
    EXPECT_THROW(parse_model(json::parse(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
        "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "rope_scaling":
        {"original_max_position_embeddings": "long"}})"), "c.json"), InputError);
}

TEST(ModelSpec, RopeScalingReadAndKept) {
    // Llama 3.1 8B's config.json (meta-llama/Llama-3.1-8B): rope_scaling llama3, factor 8.
    const ModelSpec llama31 = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/llama3.1-8b-config.json");
    EXPECT_EQ(llama31.rope_scaling_type, "llama3");
    EXPECT_EQ(llama31.rope_scaling_factor, 8.0);
    const ModelSpec back = parse_model(to_json(llama31), "back.json");
    EXPECT_EQ(back.rope_scaling_type, "llama3");
    EXPECT_EQ(back.rope_scaling_factor, 8.0);
    // Llama 3 had none (rope_scaling null); transformers v5's rope_type "default" is none too;
    // older configs name the kind "type".
    EXPECT_EQ(load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/llama3-8b-config.json").rope_scaling_type, "");
    const std::string shape = R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
        "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, )";
    EXPECT_EQ(parse_model(json::parse(shape + R"("rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}})"),
                          "c.json").rope_scaling_type, "");
    const ModelSpec linear = parse_model(json::parse(shape + R"("rope_scaling": {"type": "linear", "factor": 4.0}})"), "c.json");
    EXPECT_EQ(linear.rope_scaling_type, "linear");
    EXPECT_EQ(linear.rope_scaling_factor, 4.0);
    EXPECT_FALSE(to_json(load_model("llama3-8b")).contains("rope_scaling_type"));
    // A native factor needs its kind.
    try {
        parse_model(json::parse(R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
            "position_embedding": "rope", "rope_scaling_factor": 8})"), "t.json");
        FAIL() << "rope_scaling_factor without rope_scaling_type";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("rope_scaling_factor"), std::string::npos) << e.what();
    }
}

TEST(ModelSpec, Llama3RopeBandsReadKeptAndChecked) {
    // Llama 3.1 8B's config.json: low_freq_factor 1, high_freq_factor 4, original context 8192.
    const ModelSpec llama31 = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/llama3.1-8b-config.json");
    EXPECT_EQ(llama31.rope_scaling_low_freq_factor, 1.0);
    EXPECT_EQ(llama31.rope_scaling_high_freq_factor, 4.0);
    EXPECT_EQ(llama31.rope_scaling_original_context, 8192.0);
    // Other bands survive the native file both ways.
    const std::string shape = R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
        "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, )";
    const ModelSpec other = parse_model(json::parse(shape + R"("rope_scaling": {"rope_type": "llama3", "factor": 32,
        "low_freq_factor": 2, "high_freq_factor": 8, "original_max_position_embeddings": 4096}})"), "c.json");
    EXPECT_EQ(other.rope_scaling_low_freq_factor, 2.0);
    EXPECT_EQ(other.rope_scaling_high_freq_factor, 8.0);
    EXPECT_EQ(other.rope_scaling_original_context, 4096.0);
    const ModelSpec back = parse_model(to_json(other), "back.json");
    EXPECT_EQ(back.rope_scaling_low_freq_factor, 2.0);
    EXPECT_EQ(back.rope_scaling_high_freq_factor, 8.0);
    EXPECT_EQ(back.rope_scaling_original_context, 4096.0);
    // Bands that do not nest (the blend divides by high - low) name their key; so do band keys
    // beside another kind, and a factor that is not positive.
    const std::string native = R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
        "position_embedding": "rope", )";
    EXPECT_NE(tessel::test::message_of([&] {
                  parse_model(json::parse(shape + R"("rope_scaling": {"rope_type": "llama3", "factor": 8,
                      "low_freq_factor": 4, "high_freq_factor": 4}})"), "c.json");
              }).find("rope_scaling.high_freq_factor"), std::string::npos);
    EXPECT_NE(tessel::test::message_of([&] {
                  parse_model(json::parse(native + R"("rope_scaling_type": "linear", "rope_scaling_factor": 2,
                      "rope_scaling_low_freq_factor": 1})"), "t.json");
              }).find("rope_scaling_low_freq_factor"), std::string::npos);
    EXPECT_NE(tessel::test::message_of([&] {
                  parse_model(json::parse(native + R"("rope_scaling_type": "llama3", "rope_scaling_factor": 0})"),
                              "t.json");
              }).find("rope_scaling_factor"), std::string::npos);
    EXPECT_NE(tessel::test::message_of([&] {
                  parse_model(json::parse(native + R"("rope_scaling_type": "llama3", "rope_scaling_factor": 8,
                      "rope_scaling_original_context": 0})"), "t.json");
              }).find("rope_scaling_original_context"), std::string::npos);
}

TEST(ModelSpec, SlidingWindowsRead) {
    const std::string dir = TESSEL_TEST_DATA_DIR;
    EXPECT_EQ(load_model(dir + "/hf/phi3-mini-4k-config.json").sliding_window, 2047);
    EXPECT_EQ(load_model(dir + "/hf/qwen3-8b-config.json").sliding_window, 0);  // use_sliding_window false
    auto mistral = parse_model(json::parse(R"({"model_type": "mistral", "num_hidden_layers": 32, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
        "max_position_embeddings": 32768, "sliding_window": 4096})"), "c.json");
    EXPECT_EQ(mistral.sliding_window, 4096);
    EXPECT_EQ(parse_model(to_json(mistral), "c.json").sliding_window, 4096);
    auto v03 = parse_model(json::parse(R"({"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 64,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100,
        "sliding_window": null})"), "c.json");
    EXPECT_EQ(v03.sliding_window, 0);
    // Qwen2/3 window the layers from max_window_layers on (transformers' Qwen2Config: layer i
    // slides when use_sliding_window and i >= max_window_layers): of 8 layers with 6 below the
    // mark, 2 windowed; a mark at or above the depth windows none, 0 all of them.
    auto qwen = [](const std::string& mark) {
        return parse_model(json::parse(R"({"model_type": "qwen2", "num_hidden_layers": 8, "hidden_size": 64,
            "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "use_sliding_window": true,
            "sliding_window": 32)" + mark + "}"), "c.json");
    };
    const ModelSpec upper = qwen(R"(, "max_window_layers": 6)");
    EXPECT_EQ(upper.sliding_window, 32);
    EXPECT_DOUBLE_EQ(upper.windowed_layer_fraction(), 2.0 / 8.0);
    EXPECT_EQ(qwen(R"(, "max_window_layers": 8)").windowed_layer_fraction(), 0.0);
    EXPECT_EQ(qwen(R"(, "max_window_layers": 0)").windowed_layer_fraction(), 1.0);
    EXPECT_EQ(qwen("").windowed_layer_fraction(), 0.0);  // the default mark, 28, is above 8 layers
    EXPECT_DOUBLE_EQ(parse_model(to_json(upper), "c.json").windowed_layer_fraction(), 2.0 / 8.0);  // native keeps the count
    json deeper = to_json(upper);
    deeper["full_attention_layers"] = 9;  // more than the 8 layers
    EXPECT_THROW(parse_model(deeper, "c.json"), InputError);
}

TEST(ModelSpec, HuggingFaceModelFolderReadsItsConfig) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(::testing::TempDir()) / "tessel-hf-folder-test";
    fs::remove_all(dir);
    fs::create_directories(dir / "Qwen3-8B");
    fs::copy_file(fs::path(TESSEL_TEST_DATA_DIR) / "hf" / "qwen3-8b-config.json", dir / "Qwen3-8B" / "config.json");
    const ModelSpec m = load_model((dir / "Qwen3-8B").string());
    EXPECT_EQ(m.source, "huggingface:qwen3");
    EXPECT_EQ(m.num_layers, 36);
    // A folder without one says what it looked for.
    fs::create_directories(dir / "empty");
    try {
        load_model((dir / "empty").string());
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
}

TEST(ModelSpec, GemmaFamiliesDetected) {
    const std::string dir = TESSEL_TEST_DATA_DIR;
    const ModelSpec g1 = load_model(dir + "/hf/gemma-7b-config.json");
    EXPECT_EQ(g1.activation, Activation::geglu);  // hidden_act "gelu" is Gemma's gated GELU
    EXPECT_TRUE(g1.tied_embeddings);
    EXPECT_FALSE(g1.sandwich_norms);
    EXPECT_EQ(g1.sliding_window, 0);
    const ModelSpec g2 = load_model(dir + "/hf/gemma-2-9b-config.json");
    EXPECT_TRUE(g2.sandwich_norms);
    EXPECT_TRUE(g2.logit_softcap);
    EXPECT_EQ(g2.sliding_window, 4096);
    EXPECT_EQ(g2.sliding_window_pattern, 2);
    EXPECT_DOUBLE_EQ(g2.windowed_layer_fraction(), 0.5);
    const ModelSpec g3 = load_model(dir + "/hf/gemma-3-1b-config.json");
    EXPECT_EQ(g3.qk_norm, QkNorm::per_head);
    EXPECT_FALSE(g3.logit_softcap);  // final_logit_softcapping null
    EXPECT_EQ(g3.sliding_window_pattern, 6);
    // Newer configs list each layer's kind instead of a pattern.
    const ModelSpec typed = parse_model(json::parse(R"({"model_type": "gemma3_text", "num_hidden_layers": 4,
        "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16, "intermediate_size": 128,
        "vocab_size": 100, "sliding_window": 16, "layer_types": ["sliding_attention", "full_attention",
        "sliding_attention", "full_attention"]})"), "c.json");
    EXPECT_EQ(typed.sliding_window_pattern, 2);
    // transformers makes layer i sliding when (i + 1) % pattern != 0: a pattern of 1, or every
    // layer "full_attention", leaves no layer windowed; every layer "sliding_attention" windows
    // them all; 3 global layers of 10 are 10 / 3 (rounded down) = 3, pattern 3.
    auto gemma3 = [](const std::string& extra) {
        return parse_model(json::parse(R"({"model_type": "gemma3_text", "num_hidden_layers": 10, "hidden_size": 64,
            "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16, "intermediate_size": 128,
            "vocab_size": 100, "sliding_window": 16, )" + extra + "}"), "c.json");
    };
    EXPECT_EQ(gemma3(R"("sliding_window_pattern": 1)").windowed_layer_fraction(), 0.0);
    auto kinds = [](int full, int n) {
        std::string s = R"("layer_types": [)";
        for (int i = 0; i < n; ++i) s += std::string(i ? ", " : "") + (i < full ? "\"full_attention\"" : "\"sliding_attention\"");
        return s + "]";
    };
    EXPECT_EQ(gemma3(kinds(10, 10)).windowed_layer_fraction(), 0.0);
    EXPECT_EQ(gemma3(kinds(0, 10)).windowed_layer_fraction(), 1.0);
    EXPECT_DOUBLE_EQ(gemma3(kinds(3, 10)).windowed_layer_fraction(), 0.7);
    EXPECT_THROW(gemma3(kinds(3, 9)), InputError);  // one entry short
    EXPECT_THROW(gemma3(R"("layer_types": ["full_attention", "chunked_attention", "full_attention", "full_attention",
        "full_attention", "full_attention", "full_attention", "full_attention", "full_attention", "full_attention"])"),
                 InputError);
    // The native format round-trips every field.
    const ModelSpec back = parse_model(to_json(g2), "c.json");
    EXPECT_EQ(back.activation, Activation::geglu);
    EXPECT_TRUE(back.sandwich_norms && back.logit_softcap);
    EXPECT_EQ(back.sliding_window_pattern, 2);
    EXPECT_EQ(count_parameters(back).total, count_parameters(g2).total);
}

// The query width (heads x head_dim) is a tensor dimension: 32768 heads of 65536 wrapped the
// parameter count negative. A model far beyond any trained one is refused before its 64-bit
// counts overflow. A Hugging Face config's messages use its own key names.
TEST(ModelSpec, SizesWhoseProductsOverflowAreRefused) {
    auto message = [](const std::string& text) {
        try {
            parse_model(json::parse(text), "m.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(message(R"({"num_layers": 2, "hidden_size": 4096, "num_attention_heads": 32768, "head_dim": 65536,
        "vocab_size": 100})").find("head_dim"), std::string::npos);
    EXPECT_NE(message(R"({"num_layers": 100000, "hidden_size": 4194304, "num_attention_heads": 32768,
        "ffn_hidden_size": 16777216, "vocab_size": 100})").find("10^16"), std::string::npos);
    EXPECT_NE(message(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 100})").find("'num_key_value_heads'"),
              std::string::npos);
    // GPT-2's and Falcon's own names for the widths, where the file uses them.
    const std::string gpt2 = message(R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 770, "n_head": 12, "vocab_size": 100})");
    EXPECT_NE(gpt2.find("'n_embd'"), std::string::npos) << gpt2;
    EXPECT_NE(gpt2.find("n_head (12)"), std::string::npos) << gpt2;
    const std::string rw = message(R"({"model_type": "RefinedWeb", "n_layer": 2, "n_embed": 64, "n_head": 4, "n_head_kv": 3,
        "vocab_size": 100})");
    EXPECT_NE(rw.find("'n_head_kv'"), std::string::npos) << rw;
    EXPECT_EQ(rw.find("num_key_value_heads"), std::string::npos) << rw;
    EXPECT_EQ(message(R"({"num_layers": 126, "hidden_size": 16384, "num_attention_heads": 128, "num_kv_heads": 8,
        "ffn_hidden_size": 53248, "vocab_size": 128256})"), "accepted");  // Llama 3.1 405B
}

// transformers' biases, counted by hand. Llama's attention_bias puts one on q, k, v and o_proj,
// its mlp_bias on gate, up and down; GPT-NeoX's attention_bias covers query_key_value and dense
// while its MLP always has biases.
TEST(ModelSpec, HuggingFaceBiasKeysCountTheLayersTheyName) {
    const std::string dir = std::string(TESSEL_TEST_DATA_DIR) + "/hf/";
    const json llama = read_json_file(dir + "llama3-8b-config.json");
    const std::int64_t plain = count_parameters(parse_model(llama, "l.json")).total;
    json attention = llama, mlp = llama;
    attention["attention_bias"] = true;
    mlp["mlp_bias"] = true;
    // 32 layers x (q 4096 + k 1024 + v 1024 + o 4096); 32 x (gate 14336 + up 14336 + down 4096).
    EXPECT_EQ(count_parameters(parse_model(attention, "l.json")).total - plain, 32 * (4096 + 1024 + 1024 + 4096));
    EXPECT_EQ(count_parameters(parse_model(mlp, "l.json")).total - plain, 32 * (14336 + 14336 + 4096));
    const json pythia = read_json_file(dir + "pythia-160m-config.json");
    json no_attention_bias = pythia;
    no_attention_bias["attention_bias"] = false;
    // 12 layers x (query_key_value 3 x 768 + dense 768); the MLP keeps its 3072 + 768.
    EXPECT_EQ(count_parameters(parse_model(pythia, "p.json")).total -
                  count_parameters(parse_model(no_attention_bias, "p.json")).total,
              12 * (3 * 768 + 768));
}

TEST(ModelSpec, MixtureOfExpertsRefusedByName) {
    try {
        load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/mixtral-8x7b-config.json");
        FAIL();
    } catch (const InputError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find("model_type"), std::string::npos) << m;
        EXPECT_NE(m.find("mixture-of-experts"), std::string::npos) << m;
        EXPECT_NE(m.find("mixtral"), std::string::npos) << m;
    }
    // A dense family's config that lists routed experts anyway names the key.
    try {
        parse_model(json::parse(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
            "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "num_local_experts": 8})"), "c.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("num_local_experts"), std::string::npos) << e.what();
    }
}

TEST(ModelSpec, InconsistentShapesRejected) {
    EXPECT_THROW(parse_model(json::parse(R"({"num_layers": 2, "hidden_size": 65, "num_attention_heads": 4, "vocab_size": 100})"), "t"), InputError);
    EXPECT_THROW(parse_model(json::parse(R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_kv_heads": 3, "vocab_size": 100})"), "t"), InputError);
    EXPECT_THROW(parse_model(json::parse(R"({"num_layers": 0, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100})"), "t"), InputError);
    EXPECT_THROW(parse_model(json::parse(R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "activation": "relu"})"), "t"), InputError);
}
