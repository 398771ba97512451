#include "core/model_spec.h"

#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

const char* to_string(Activation a) {
    switch (a) {
        case Activation::swiglu: return "swiglu";
        case Activation::geglu: return "geglu";
        case Activation::gelu: break;
    }
    return "gelu";
}
const char* to_string(Norm n) { return n == Norm::layernorm ? "layernorm" : "rmsnorm"; }
const char* to_string(PositionEmbedding p) { return p == PositionEmbedding::rope ? "rope" : "learned"; }
const char* to_string(QkNorm q) {
    switch (q) {
        case QkNorm::per_head: return "per_head";
        case QkNorm::full_width: return "full_width";
        case QkNorm::none: break;
    }
    return "none";
}

bool looks_like_huggingface(const json& j) {
    if (!j.is_object()) return false;
    for (const char* k : {"model_type", "num_hidden_layers", "n_layer", "n_embd", "intermediate_size",
                          "num_key_value_heads", "hidden_act", "tie_word_embeddings", "architectures"})
        if (j.contains(k)) return true;
    return false;
}

namespace {

// Where the three llama3 band keys live: the native file's top level, or a Hugging Face block.
struct Llama3RopeKeys {
    std::string low, high, context;
};
const Llama3RopeKeys kNativeLlama3RopeKeys{"rope_scaling_low_freq_factor", "rope_scaling_high_freq_factor",
                                           "rope_scaling_original_context"};
Llama3RopeKeys huggingface_llama3_rope_keys(const std::string& block) {
    return {block + ".low_freq_factor", block + ".high_freq_factor", block + ".original_max_position_embeddings"};
}

// Llama 3.1's blend divides by high - low, and its bands are wavelengths context / factor.
void check_llama3_rope_bands(const ModelSpec& m, const std::string& file, const Llama3RopeKeys& keys) {
    if (!(m.rope_scaling_low_freq_factor > 0))
        throw input_error(file, keys.low, "a positive number", fmt::format("{:g}", m.rope_scaling_low_freq_factor));
    if (!(m.rope_scaling_high_freq_factor > m.rope_scaling_low_freq_factor))
        throw input_error(file, keys.high, fmt::format("more than the low-frequency factor {:g}",
                                                       m.rope_scaling_low_freq_factor),
                          fmt::format("{:g}", m.rope_scaling_high_freq_factor));
    if (!(m.rope_scaling_original_context >= 1))
        throw input_error(file, keys.context, "the pretraining context in tokens, at least 1",
                          fmt::format("{:g}", m.rope_scaling_original_context));
}

ModelSpec parse_native(const json& j, const std::string& file) {
    ObjectReader r(j, file);
    ModelSpec m;
    m.source = "native";
    m.name = r.string("name", std::string("unnamed"));
    m.num_layers = int(r.integer("num_layers", std::nullopt, 1, kMaxNumLayers));
    m.hidden_size = int(r.integer("hidden_size", std::nullopt, 1, kMaxHiddenSize));
    m.num_attention_heads = int(r.integer("num_attention_heads", std::nullopt, 1, kMaxHeads));
    m.num_kv_heads = int(r.integer("num_kv_heads", m.num_attention_heads, 1, kMaxHeads));
    if (!r.has("head_dim") && m.hidden_size % m.num_attention_heads != 0)
        throw input_error(file, "hidden_size",
                          fmt::format("a multiple of num_attention_heads ({}) (or an explicit head_dim)",
                                      m.num_attention_heads),
                          std::to_string(m.hidden_size));
    m.head_dim = int(r.integer("head_dim", m.hidden_size / m.num_attention_heads, 1, kMaxHeads));
    m.ffn_hidden_size = int(r.integer("ffn_hidden_size", std::int64_t(4) * m.hidden_size, 1, kMaxFfnHiddenSize));
    m.vocab_size = r.integer("vocab_size", std::nullopt, 1, std::int64_t(1) << 32);
    m.seq_length = int(r.integer("seq_length", 2048, 1, kMaxSeqLength));
    const std::string act = r.choice("activation", {"gelu", "swiglu", "geglu"}, std::string("gelu"));
    m.activation = act == "swiglu" ? Activation::swiglu : act == "geglu" ? Activation::geglu : Activation::gelu;
    m.norm = r.choice("norm", {"layernorm", "rmsnorm"}, std::string("layernorm")) == "layernorm" ? Norm::layernorm
                                                                                                : Norm::rmsnorm;
    m.position_embedding = r.choice("position_embedding", {"rope", "learned"}, std::string("learned")) == "rope"
                               ? PositionEmbedding::rope
                               : PositionEmbedding::learned;
    m.tied_embeddings = r.boolean("tied_embeddings", false);
    // GPT-style models (GELU + LayerNorm) carry biases by default; Llama-style do not.
    bool gpt_style = m.activation == Activation::gelu && m.norm == Norm::layernorm;
    m.linear_bias = r.boolean("linear_bias", gpt_style);
    m.qkv_bias = r.boolean("qkv_bias", false);
    m.out_bias = r.boolean("out_bias", false);
    m.mlp_bias = r.boolean("mlp_bias", false);
    const std::string qk = r.choice("qk_norm", {"none", "per_head", "full_width"}, std::string("none"));
    m.qk_norm = qk == "per_head" ? QkNorm::per_head : qk == "full_width" ? QkNorm::full_width : QkNorm::none;
    m.sliding_window = int(r.integer("sliding_window", 0, 0, kMaxSeqLength));
    m.sliding_window_pattern = int(r.integer("sliding_window_pattern", 0, 0, kMaxNumLayers));
    if (r.has("full_attention_layers")) m.full_attention_layers = int(r.integer("full_attention_layers", std::nullopt, 0, kMaxNumLayers));
    m.sandwich_norms = r.boolean("sandwich_norms", false);
    m.logit_softcap = r.boolean("logit_softcap", false);
    m.rotary_percent = r.number("rotary_percent", 1.0, 0.0, 1.0);
    m.parallel_residual = r.boolean("parallel_residual", false);
    m.shared_norm = r.boolean("shared_norm", false);
    if (m.shared_norm && !m.parallel_residual)
        throw input_error(file, "shared_norm", "false unless parallel_residual is true (one norm feeds both branches only "
                          "when both read the layer's input)", "true with parallel_residual false");
    m.max_position_embeddings = int(r.integer(
        "max_position_embeddings", m.position_embedding == PositionEmbedding::learned ? m.seq_length : 0, 0, 1 << 24));
    m.rope_theta = r.number("rope_theta", 10000.0);
    m.rope_scaling_type = r.string("rope_scaling_type", std::string(""));
    m.rope_scaling_factor = r.number("rope_scaling_factor", 1.0);
    if (m.rope_scaling_type.empty() && m.rope_scaling_factor != 1.0)
        throw input_error(file, "rope_scaling_factor", "1 unless rope_scaling_type names the scaling (llama3, linear, yarn, ...)",
                          fmt::format("{:g} with no rope_scaling_type", m.rope_scaling_factor));
    if (!m.rope_scaling_type.empty() && !(m.rope_scaling_factor > 0))
        throw input_error(file, "rope_scaling_factor", "a positive number", fmt::format("{:g}", m.rope_scaling_factor));
    const bool llama3_rope = m.rope_scaling_type == "llama3";
    for (const char* key : {"rope_scaling_low_freq_factor", "rope_scaling_high_freq_factor",
                            "rope_scaling_original_context"})
        if (!llama3_rope && r.has(key))
            throw input_error(file, key, "absent unless rope_scaling_type is llama3 (Llama 3.1's frequency bands)",
                              fmt::format("given with rope_scaling_type \"{}\"", m.rope_scaling_type));
    if (llama3_rope) {
        m.rope_scaling_low_freq_factor = r.number("rope_scaling_low_freq_factor", 1.0);
        m.rope_scaling_high_freq_factor = r.number("rope_scaling_high_freq_factor", 4.0);
        m.rope_scaling_original_context = r.number("rope_scaling_original_context", 8192.0);
        check_llama3_rope_bands(m, file, kNativeLlama3RopeKeys);
    }
    m.norm_epsilon = r.number("norm_epsilon", 1e-5);
    r.ignore({"source", "notes", "description"});
    r.finish();
    return m;
}

// Hugging Face config.json; keys per family as in transformers' configuration_<family>.py.
ModelSpec parse_huggingface(const json& j, const std::string& file, HeadKeys& keys) {
    ObjectReader r(j, file);
    ModelSpec m;
    std::string type = r.string("model_type", std::string(""));
    if (type.empty()) {
        if (r.has("n_layer") && r.has("n_embd")) type = "gpt2";
        else type = "llama";
    }
    m.source = "huggingface:" + type;
    m.name = type;
    if (r.has("_name_or_path")) m.name = r.string("_name_or_path");
    // Mixture-of-experts families (transformers' model_type): routed expert MLPs and their
    // all-to-all are not modelled, so their configs are refused by name rather than as unknown.
    static const std::vector<std::string> mixture_of_experts = {
        "mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "olmoe", "dbrx", "llama4",
        "llama4_text", "gpt_oss", "granitemoe", "phimoe", "jamba", "jetmoe", "minimax", "glm4_moe"};
    const char* kSupported =
        "a supported architecture (llama, mistral, qwen2, qwen3, phi3, olmo2, gemma, gemma2, gemma3_text, gpt2, gpt_neox, "
        "falcon)";
    if (std::find(mixture_of_experts.begin(), mixture_of_experts.end(), type) != mixture_of_experts.end())
        throw input_error(file, "model_type",
                          std::string(kSupported) + "; mixture-of-experts models are not modelled",
                          "\"" + type + "\"");
    for (const char* k : {"num_local_experts", "num_experts", "n_routed_experts"})
        if (r.has(k) && r.raw(k).is_number_integer() && r.raw(k).get<std::int64_t>() > 1)
            throw input_error(file, k, "no routed experts (mixture-of-experts models are not modelled)",
                              r.raw(k).dump());
    static const std::vector<std::string> supported = {"llama",   "mistral",     "qwen2",     "qwen3",  "phi3",
                                                       "olmo2",   "gemma",       "gemma2",    "gemma3_text",
                                                       "gpt2",    "gpt_neox",    "falcon",    "RefinedWeb",
                                                       "RefinedWebModel"};
    if (std::find(supported.begin(), supported.end(), type) == supported.end())
        throw input_error(file, "model_type", kSupported, "\"" + type + "\"");

    auto first_int = [&](std::initializer_list<const char*> keys, std::optional<std::int64_t> fallback,
                         std::int64_t min = 1) -> std::int64_t {
        for (const char* k : keys)
            if (r.has(k)) return r.integer(k, std::nullopt, min);
        for (const char* k : keys) r.ignore({k});
        if (fallback) return *fallback;
        return r.integer(*keys.begin(), std::nullopt, min);  // throws naming the first key
    };

    // The keys this file names its widths by, for the messages below: GPT-2's n_embd and n_head,
    // Falcon's n_embed, n_head and n_head_kv where the file uses them.
    auto key_of = [&](std::initializer_list<const char*> keys) {
        for (const char* k : keys)
            if (r.has(k)) return std::string(k);
        return std::string(*keys.begin());
    };
    std::string hidden_key = "hidden_size";
    keys.kv_heads = "num_key_value_heads";
    if (type == "gpt2") {
        hidden_key = key_of({"n_embd", "hidden_size"});
        keys.heads = key_of({"n_head", "num_attention_heads"});
    } else if (type == "falcon" || type == "RefinedWeb" || type == "RefinedWebModel") {
        hidden_key = key_of({"hidden_size", "n_embed"});
        keys.heads = key_of({"num_attention_heads", "n_head"});
        keys.kv_heads = key_of({"num_kv_heads", "n_head_kv"});
    }

    if (type == "gpt2") {
        m.num_layers = int(first_int({"n_layer", "num_hidden_layers"}, std::nullopt));
        m.hidden_size = int(first_int({"n_embd", "hidden_size"}, std::nullopt));
        m.num_attention_heads = int(first_int({"n_head", "num_attention_heads"}, std::nullopt));
        m.num_kv_heads = m.num_attention_heads;
        m.ffn_hidden_size = int(first_int({"n_inner"}, std::int64_t(4) * m.hidden_size));
        m.vocab_size = first_int({"vocab_size"}, 50257);
        m.max_position_embeddings = int(first_int({"n_positions", "max_position_embeddings"}, 1024));
        m.seq_length = int(first_int({"n_ctx"}, m.max_position_embeddings));
        m.activation = Activation::gelu;
        m.norm = Norm::layernorm;
        m.position_embedding = PositionEmbedding::learned;
        m.tied_embeddings = r.boolean("tie_word_embeddings", true);
        m.linear_bias = true;
    } else if (type == "gpt_neox") {
        m.num_layers = int(first_int({"num_hidden_layers"}, std::nullopt));
        m.hidden_size = int(first_int({"hidden_size"}, std::nullopt));
        m.num_attention_heads = int(first_int({"num_attention_heads"}, std::nullopt));
        m.num_kv_heads = m.num_attention_heads;
        m.ffn_hidden_size = int(first_int({"intermediate_size"}, std::int64_t(4) * m.hidden_size));
        m.vocab_size = first_int({"vocab_size"}, std::nullopt);
        m.seq_length = int(first_int({"max_position_embeddings"}, 2048));
        m.activation = Activation::gelu;
        m.norm = Norm::layernorm;
        m.position_embedding = PositionEmbedding::rope;
        m.tied_embeddings = r.boolean("tie_word_embeddings", false);
        // modeling_gpt_neox: attention_bias sets the query_key_value and dense biases; GPTNeoXMLP's
        // two projections always carry biases.
        m.linear_bias = r.boolean("attention_bias", true);
        m.mlp_bias = true;
        // configuration_gpt_neox.py defaults: rotary_pct 0.25, use_parallel_residual true.
        m.rotary_percent = r.number("rotary_pct", 0.25, 0.0, 1.0);
        m.parallel_residual = r.boolean("use_parallel_residual", true);
        r.ignore({"hidden_act", "rotary_emb_base", "layer_norm_eps"});
    } else if (type == "falcon" || type == "RefinedWeb" || type == "RefinedWebModel") {
        m.num_layers = int(first_int({"num_hidden_layers", "n_layer"}, std::nullopt));
        m.hidden_size = int(first_int({"hidden_size", "n_embed"}, std::nullopt));
        m.num_attention_heads = int(first_int({"num_attention_heads", "n_head"}, std::nullopt));
        bool new_arch = r.boolean("new_decoder_architecture", type == "RefinedWeb");
        // configuration_falcon.py defaults multi_query to true (one K/V head without the new
        // decoder architecture).
        bool multi_query = r.boolean("multi_query", type == "RefinedWebModel" || type == "falcon");
        if (new_arch) m.num_kv_heads = int(first_int({"num_kv_heads", "n_head_kv"}, m.num_attention_heads));
        else if (multi_query) m.num_kv_heads = 1;
        else m.num_kv_heads = m.num_attention_heads;
        r.ignore({"num_kv_heads", "n_head_kv"});
        m.ffn_hidden_size = int(first_int({"ffn_hidden_size"}, std::int64_t(4) * m.hidden_size));
        m.vocab_size = first_int({"vocab_size"}, std::nullopt);
        m.seq_length = int(first_int({"max_position_embeddings"}, 2048));
        m.activation = Activation::gelu;
        m.norm = Norm::layernorm;
        // Falcon-RW's ALiBi biases the attention scores by distance; tessel has no such positions.
        if (r.boolean("alibi", false))
            throw input_error(file, "alibi", "false (ALiBi attention biases are not modelled; Falcon uses RoPE)", "true");
        m.position_embedding = PositionEmbedding::rope;
        m.tied_embeddings = r.boolean("tie_word_embeddings", true);
        m.linear_bias = r.boolean("bias", false);
        // modeling_falcon.py: the new decoder architecture (Falcon 40B, 180B) is parallel whatever
        // parallel_attn says; configuration_falcon.py defaults parallel_attn to true.
        m.parallel_residual = new_arch || r.boolean("parallel_attn", true);
        // modeling_falcon.py's FalconDecoderLayer: ln_attn and ln_mlp only with the new decoder
        // architecture and num_ln_in_parallel_attn 2 (its default there); otherwise one
        // input_layernorm, which a parallel layer's MLP reads too (Falcon-7B).
        int norms = 2;
        if (r.has("num_ln_in_parallel_attn") && !r.raw("num_ln_in_parallel_attn").is_null())
            norms = int(r.integer("num_ln_in_parallel_attn", 2, 1, 2));
        m.shared_norm = m.parallel_residual && !(new_arch && norms == 2);
        r.ignore({"parallel_attn", "num_ln_in_parallel_attn", "layer_norm_epsilon", "hidden_dropout",
                  "attention_dropout"});
    } else {  // llama, mistral, qwen2, qwen3, phi3, olmo2, gemma, gemma2, gemma3_text
        m.num_layers = int(first_int({"num_hidden_layers"}, std::nullopt));
        m.hidden_size = int(first_int({"hidden_size"}, std::nullopt));
        m.num_attention_heads = int(first_int({"num_attention_heads"}, std::nullopt));
        m.num_kv_heads = int(first_int({"num_key_value_heads"}, type == "mistral" ? 8 : m.num_attention_heads));
        m.ffn_hidden_size = int(first_int({"intermediate_size"}, std::nullopt));
        m.vocab_size = first_int({"vocab_size"}, std::nullopt);
        // The default training length: the context the model was pretrained at. A config whose
        // RoPE was stretched afterwards keeps it as original_max_position_embeddings, inside
        // rope_scaling (Llama 3.1), inside transformers v5's rope_parameters, or at the top level
        // (Phi-3's, Phi-3.5's and Phi-4-mini's long variants, beside a rope_scaling without it);
        // max_position_embeddings is the stretched context.
        m.seq_length = int(first_int({"max_position_embeddings"}, 4096));
        bool original_found = false;
        for (const char* block : {"rope_scaling", "rope_parameters"}) {
            if (original_found || !r.has(block) || !r.raw(block).is_object()) continue;
            ObjectReader rs = r.object(block);
            if (!rs.has("original_max_position_embeddings")) continue;
            m.seq_length = int(rs.integer("original_max_position_embeddings", std::nullopt, 1, kMaxSeqLength));
            original_found = true;
        }
        if (!original_found && r.has("original_max_position_embeddings"))
            m.seq_length = int(r.integer("original_max_position_embeddings", std::nullopt, 1, kMaxSeqLength));
        // Gemma names its gated GELU hidden_activation (hidden_act in its first configs).
        const bool gemma = type.rfind("gemma", 0) == 0;
        std::string act = r.has("hidden_activation") && r.raw("hidden_activation").is_string()
                              ? r.string("hidden_activation")
                              : r.string("hidden_act", std::string(gemma ? "gelu_pytorch_tanh" : "silu"));
        r.ignore({"hidden_act", "hidden_activation"});
        // These families' MLPs are gated whatever the activation (LlamaMLP and its copies: gate, up
        // and down projections), so the activation picks only the gate's function.
        if (act == "silu" || act == "swish") m.activation = Activation::swiglu;
        else if (act.rfind("gelu", 0) == 0) m.activation = Activation::geglu;  // gelu, gelu_new, gelu_pytorch_tanh
        else
            throw input_error(file, r.has("hidden_activation") ? "hidden_activation" : "hidden_act",
                              "silu or swish (SwiGLU) or a GELU (GeGLU): the gated MLP of model_type '" + type +
                                  "' is not modelled with other activations",
                              "\"" + act + "\"");
        m.norm = Norm::rmsnorm;
        m.position_embedding = PositionEmbedding::rope;
        // Phi-2 / Phi-4-mini, StableLM, GLM: RoPE over part of each head.
        if (r.has("partial_rotary_factor")) m.rotary_percent = r.number("partial_rotary_factor", 1.0, 0.0, 1.0);
        m.tied_embeddings = r.boolean("tie_word_embeddings", gemma);  // Gemma ties them and lists no key
        // modeling_llama (and Mistral, Qwen3, Gemma, OLMo 2): attention_bias sets the biases of
        // q_proj, k_proj, v_proj and o_proj; mlp_bias those of gate_proj, up_proj and down_proj.
        // Qwen2 builds q/k/v with bias=True and has no config key for it (modeling_qwen2.py).
        m.qkv_bias = type == "qwen2" || r.boolean("attention_bias", false);
        m.out_bias = r.boolean("attention_bias", false);
        m.mlp_bias = r.boolean("mlp_bias", false);
        r.ignore({"mlp_bias", "attention_bias"});
        // Qwen3 normalises each head's query and key (modeling_qwen3: q_norm, k_norm over
        // head_dim); OLMo 2 the whole projections (modeling_olmo2: q_norm over heads x head_dim,
        // k_norm over KV heads x head_dim). Neither has a config key for it.
        if (type == "qwen3" || type == "gemma3_text") m.qk_norm = QkNorm::per_head;
        if (type == "olmo2") m.qk_norm = QkNorm::full_width;
        // Gemma 2 and 3 (modeling_gemma2/3): pre- and post-norms around attention and the MLP, and
        // windowed attention on all but every 2nd (Gemma 2) or every sliding_window_pattern-th
        // (Gemma 3) layer; Gemma 2 soft-caps the logits (final_logit_softcapping). Its attention
        // soft-cap runs inside the fused kernel and is not priced.
        // A pattern of 1 makes every layer global (transformers: sliding when (i + 1) % pattern).
        bool every_layer_global = false;
        // A count of global layers, kept as such (the simulator averages the layers, so only the
        // count matters) and as the pattern whose num_layers / pattern come nearest to it, for
        // Megatron's --window-attn-skip-freq.
        auto keep_global_layers = [&](int full) {
            every_layer_global = full >= m.num_layers;
            m.full_attention_layers = every_layer_global ? -1 : std::max(0, full);
            if (full <= 0) m.sliding_window_pattern = 0;
            else if (!every_layer_global) {
                int best = 2;
                for (int p = 2; p <= m.num_layers; ++p)
                    if (std::abs(m.num_layers / p - full) < std::abs(m.num_layers / best - full)) best = p;
                m.sliding_window_pattern = best;
            }
        };
        const bool gemma_windows = type == "gemma2" || type == "gemma3_text";
        // Qwen2/3 list a sliding_window that applies only with use_sliding_window, and then to the
        // layers from max_window_layers on (transformers' Qwen2Config: layer i slides when
        // use_sliding_window and i >= max_window_layers, 28 by default).
        const bool window_switch = type == "qwen2" || type == "qwen3";
        bool windowed = !window_switch;
        if (gemma_windows) {
            m.sandwich_norms = true;
            m.sliding_window_pattern = type == "gemma2" ? 2 : 6;
            if (r.has("sliding_window_pattern")) m.sliding_window_pattern = int(r.integer("sliding_window_pattern", 6, 1, kMaxNumLayers));
            every_layer_global = m.sliding_window_pattern == 1;
        }
        if (window_switch && r.has("use_sliding_window") && r.boolean("use_sliding_window")) {
            windowed = true;
            keep_global_layers(int(r.integer("max_window_layers", 28, 0, kMaxNumLayers)));
        }
        r.ignore({"use_sliding_window", "max_window_layers"});
        if ((gemma_windows || window_switch) && r.has("layer_types")) {
            // transformers v4.53+: one entry per layer, which its layer_type_validation checks;
            // it outranks the pattern and the switch.
            const json& types = r.raw("layer_types");
            if (!types.is_array() || types.size() != std::size_t(m.num_layers))
                throw input_error(file, "layer_types", fmt::format("an array of {} entries (one per layer)", m.num_layers),
                                  describe_json_value(types));
            int full = 0;
            for (const auto& t : types) {
                if (t != "full_attention" && t != "sliding_attention")
                    throw input_error(file, "layer_types", "\"full_attention\" or \"sliding_attention\" per layer",
                                      describe_json_value(t));
                full += t == "full_attention";
            }
            windowed = full < m.num_layers;
            keep_global_layers(full);
        }
        if (r.has("final_logit_softcapping") && r.raw("final_logit_softcapping").is_number())
            m.logit_softcap = r.number("final_logit_softcapping") > 0;
        r.ignore({"final_logit_softcapping", "attn_logit_softcapping", "query_pre_attn_scalar", "rope_local_base_freq"});
        // Sliding-window attention: Mistral 7B v0.1 (4096) and Phi-3 set sliding_window; Qwen2/3 where
        // a layer slides.
        if (windowed && r.has("sliding_window") && !r.raw("sliding_window").is_null())
            m.sliding_window = int(r.integer("sliding_window", std::nullopt, 0, kMaxSeqLength));
        if (every_layer_global) m.sliding_window = m.sliding_window_pattern = 0;
    }
    if (m.hidden_size % m.num_attention_heads != 0 && !r.has("head_dim"))
        throw input_error(file, hidden_key, fmt::format("a multiple of {} ({})", keys.heads, m.num_attention_heads),
                          std::to_string(m.hidden_size));
    m.head_dim = int(r.integer("head_dim", m.hidden_size / m.num_attention_heads, 1, kMaxHeads));
    // RoPE base: top-level rope_theta (older configs, GPT-NeoX's rotary_emb_base) or
    // transformers v5's rope_parameters.rope_theta.
    if (r.has("rope_theta")) m.rope_theta = r.number("rope_theta");
    else if (r.has("rotary_emb_base")) m.rope_theta = r.number("rotary_emb_base");
    else if (r.has("rope_parameters") && r.raw("rope_parameters").is_object()) {
        ObjectReader rp = r.object("rope_parameters");
        if (rp.has("rope_theta")) m.rope_theta = rp.number("rope_theta");
    }
    // RoPE scaling: rope_scaling {rope_type (or type), factor}, or transformers v5's
    // rope_parameters, where rope_type "default" means none.
    for (const char* block : {"rope_scaling", "rope_parameters"}) {
        if (!r.has(block) || !r.raw(block).is_object()) continue;
        ObjectReader rs = r.object(block);
        const char* kind_key = rs.has("rope_type") ? "rope_type" : "type";
        const std::string kind = rs.has(kind_key) ? rs.string(kind_key) : std::string();
        if (kind.empty() || kind == "default") continue;
        m.rope_scaling_type = kind;
        m.rope_scaling_factor = rs.number("factor", 1.0);
        if (kind == "llama3") {
            m.rope_scaling_low_freq_factor = rs.number("low_freq_factor", 1.0);
            m.rope_scaling_high_freq_factor = rs.number("high_freq_factor", 4.0);
            m.rope_scaling_original_context = rs.number("original_max_position_embeddings", 8192.0);
            check_llama3_rope_bands(m, file, huggingface_llama3_rope_keys(block));
        }
        break;
    }
    for (const char* k : {"rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps"})
        if (r.has(k)) m.norm_epsilon = r.number(k);
    // Everything else in a config.json (token ids, dropout, rope settings, dtype, ...) does not
    // change the shape; do not warn about it.
    for (auto it = j.begin(); it != j.end(); ++it) r.ignore({it.key().c_str()});
    return m;
}

}  // namespace

ModelSpec parse_model(const json& j, const std::string& file) {
    if (!j.is_object()) throw input_error(file, "(top level)", "a JSON object describing a model", describe_json_value(j));
    HeadKeys keys;
    ModelSpec m = looks_like_huggingface(j) ? parse_huggingface(j, file, keys) : parse_native(j, file);
    validate_model(m, file, keys);
    return m;
}

void validate_model(const ModelSpec& m, const std::string& file, const HeadKeys& keys) {
    if (m.num_kv_heads > m.num_attention_heads || m.num_attention_heads % m.num_kv_heads != 0)
        throw input_error(file, keys.kv_heads, fmt::format("a divisor of {} ({})", keys.heads, m.num_attention_heads),
                          std::to_string(m.num_kv_heads));
    // The attention's width (heads x head_dim) is a tensor dimension like the hidden size.
    const std::int64_t query_width = std::int64_t(m.num_attention_heads) * m.head_dim;
    if (query_width > kMaxHiddenSize)
        throw input_error(file, "head_dim",
                          fmt::format("num_attention_heads x head_dim at most {} (the largest hidden size)", kMaxHiddenSize),
                          fmt::format("{} x {} = {}", m.num_attention_heads, m.head_dim, query_width));
    // Parameter and FLOP counts are 64-bit integers: a model far beyond any trained one (10^16
    // parameters, ten thousand times the largest published) is refused before they overflow.
    const double width = double(m.hidden_size);
    const double per_layer = width * (2.0 * query_width + 2.0 * double(m.num_kv_heads) * m.head_dim) +
                             3.0 * width * double(m.ffn_hidden_size);
    const double approximate = double(m.num_layers) * per_layer + 2.0 * double(m.vocab_size) * width;
    if (approximate > 1e16)
        throw input_error(file, "num_layers, hidden_size, ffn_hidden_size",
                          "a model of at most 10^16 parameters",
                          fmt::format("about {:.3g} parameters", approximate));
    if (m.full_attention_layers > m.num_layers)
        throw input_error(file, "full_attention_layers", fmt::format("at most num_layers ({})", m.num_layers),
                          std::to_string(m.full_attention_layers));
    if (m.position_embedding == PositionEmbedding::learned && m.max_position_embeddings < 1)
        throw input_error(file, "max_position_embeddings", "a positive size for the learned position table");
}

json to_json(const ModelSpec& m) {
    json j = {{"name", m.name},
              {"num_layers", m.num_layers},
              {"hidden_size", m.hidden_size},
              {"num_attention_heads", m.num_attention_heads},
              {"num_kv_heads", m.num_kv_heads},
              {"head_dim", m.head_dim},
              {"ffn_hidden_size", m.ffn_hidden_size},
              {"vocab_size", m.vocab_size},
              {"seq_length", m.seq_length},
              {"activation", to_string(m.activation)},
              {"norm", to_string(m.norm)},
              {"position_embedding", to_string(m.position_embedding)},
              {"tied_embeddings", m.tied_embeddings},
              {"linear_bias", m.linear_bias},
              {"qkv_bias", m.qkv_bias},
              {"norm_epsilon", m.norm_epsilon}};
    if (m.out_bias) j["out_bias"] = true;
    if (m.mlp_bias) j["mlp_bias"] = true;
    if (m.qk_norm != QkNorm::none) j["qk_norm"] = to_string(m.qk_norm);
    if (m.sliding_window > 0) j["sliding_window"] = m.sliding_window;
    if (m.sliding_window_pattern > 0) j["sliding_window_pattern"] = m.sliding_window_pattern;
    if (m.sliding_window > 0 && m.full_attention_layers >= 0) j["full_attention_layers"] = m.full_attention_layers;
    if (m.sandwich_norms) j["sandwich_norms"] = true;
    if (m.logit_softcap) j["logit_softcap"] = true;
    if (m.rotary_percent != 1.0) j["rotary_percent"] = m.rotary_percent;
    if (m.parallel_residual) j["parallel_residual"] = true;
    if (m.shared_norm) j["shared_norm"] = true;
    if (m.position_embedding == PositionEmbedding::rope) j["rope_theta"] = m.rope_theta;
    if (!m.rope_scaling_type.empty()) {
        j["rope_scaling_type"] = m.rope_scaling_type;
        j["rope_scaling_factor"] = m.rope_scaling_factor;
    }
    if (m.rope_scaling_type == "llama3") {
        j["rope_scaling_low_freq_factor"] = m.rope_scaling_low_freq_factor;
        j["rope_scaling_high_freq_factor"] = m.rope_scaling_high_freq_factor;
        j["rope_scaling_original_context"] = m.rope_scaling_original_context;
    }
    if (m.position_embedding == PositionEmbedding::learned) j["max_position_embeddings"] = m.max_position_embeddings;
    return j;
}

}  // namespace tessel
