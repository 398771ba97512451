// ModelSpec: the shape of a decoder-only transformer, read from tessel's native JSON or from a
// Hugging Face config.json (Llama, Mistral, Qwen2, GPT-2, GPT-NeoX, Falcon), detected by its keys.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/json_io.h"

namespace tessel {

// geglu: the gated GELU of Gemma (GELU-tanh of the gate times the up projection), SwiGLU's shapes.
enum class Activation { gelu, swiglu, geglu };
enum class Norm { layernorm, rmsnorm };
enum class PositionEmbedding { rope, learned };
// RMSNorm of the queries and keys after their projections, before RoPE: per head over head_dim
// (Qwen3; Megatron's --qk-layernorm), or over the whole projection width (OLMo 2).
enum class QkNorm { none, per_head, full_width };

struct ModelSpec {
    std::string name;
    int num_layers = 0;
    int hidden_size = 0;
    int num_attention_heads = 0;
    int num_kv_heads = 0;        // = num_attention_heads without grouped-query attention
    int head_dim = 0;            // usually hidden_size / num_attention_heads
    int ffn_hidden_size = 0;     // per projection; SwiGLU has two of these going up
    std::int64_t vocab_size = 0;
    int seq_length = 0;          // default training sequence length
    Activation activation = Activation::gelu;
    Norm norm = Norm::layernorm;
    PositionEmbedding position_embedding = PositionEmbedding::learned;
    bool tied_embeddings = false;
    bool linear_bias = false;    // biases on every linear layer (GPT-2, GPT-NeoX)
    bool qkv_bias = false;       // biases on Q, K, V (Qwen2; with out_bias, Llama's attention_bias)
    bool out_bias = false;       // a bias on the attention's output projection (Llama's attention_bias)
    bool mlp_bias = false;       // biases on the MLP's projections (Llama's mlp_bias; GPT-NeoX's MLP always)
    QkNorm qk_norm = QkNorm::none;
    int sliding_window = 0;      // each query attends to at most this many keys, itself included (0: all before it)
    // > 1: layer i (from 0) attends to the whole sequence when i + 1 is a multiple of it, as
    // transformers' Gemma 2 (2) and 3 (6) and Megatron's --window-attn-skip-freq lay them out;
    // 0 or 1: every layer is windowed.
    int sliding_window_pattern = 0;
    // With a window: how many layers attend to the whole sequence, where a config counts them
    // rather than giving a pattern (transformers' layer_types; Qwen2's layers below
    // max_window_layers); -1: the pattern's count.
    int full_attention_layers = -1;
    bool sandwich_norms = false;     // a norm after the attention and after the MLP as well (Gemma 2 and 3)
    bool logit_softcap = false;      // the logits pass through c * tanh(x / c) before the loss (Gemma 2)
    // Share of each head's dimensions RoPE rotates (GPT-NeoX/Pythia's rotary_pct 0.25, Phi-2's
    // partial_rotary_factor 0.4; Megatron's --rotary-percent). Priced as full rotary: Transformer
    // Engine's fused RoPE copies the dimensions it leaves alone, an unfused one concatenates them
    // back, so the kernels move the whole Q and K either way.
    double rotary_percent = 1.0;
    // Attention and MLP both read the layer's input and their outputs are added to it together
    // (GPT-NeoX's use_parallel_residual, GPT-J, Falcon's parallel_attn), instead of the MLP reading
    // the attention's residual sum. The same kernels and stored tensors to within one residual add
    // of T x h, which the simulator does not tell apart.
    bool parallel_residual = false;
    // With parallel_residual: the attention and the MLP read one norm's output (Falcon-7B's
    // parallel_attn, Falcon 2's num_ln_in_parallel_attn 1, GPT-J) instead of a norm each: one
    // norm fewer per layer, in the parameters, the kernels and the stored activations.
    bool shared_norm = false;
    int max_position_embeddings = 0;  // rows of the learned position table (learned only)
    double rope_theta = 10000.0;      // RoPE base (Su et al. 2021; Llama 3 uses 500000)
    // RoPE stretched past the pretraining context (a Hugging Face config's rope_scaling): its kind
    // ("llama3" for Llama 3.1's, "linear", "yarn", ...; empty for none) and factor. The rotation
    // costs the same, so the simulator does not read them; the exporters write them and tessel run
    // rotates by them (llama3 and linear).
    std::string rope_scaling_type;
    double rope_scaling_factor = 1.0;
    // llama3 only: wavelengths beyond original_context / low_freq_factor are scaled by the
    // factor, those below original_context / high_freq_factor kept, those between blended
    // (Llama 3.1's values, its Hugging Face config's rope_scaling: 1, 4, 8192).
    double rope_scaling_low_freq_factor = 1.0;
    double rope_scaling_high_freq_factor = 4.0;
    double rope_scaling_original_context = 8192.0;
    double norm_epsilon = 1e-5;       // LayerNorm / RMSNorm epsilon
    std::string source;          // "native" or "huggingface:<model_type>"

    int q_size() const { return num_attention_heads * head_dim; }
    int kv_size() const { return num_kv_heads * head_dim; }
    bool has_qkv_bias() const { return linear_bias || qkv_bias; }
    bool has_out_bias() const { return linear_bias || out_bias; }
    bool has_mlp_bias() const { return linear_bias || mlp_bias; }
    bool gated_mlp() const { return activation != Activation::gelu; }
    // Share of the layers whose attention is windowed (when there is a window): all but the
    // num_layers / pattern (rounded down) global ones.
    double windowed_layer_fraction() const {
        if (sliding_window <= 0) return 0.0;
        if (full_attention_layers >= 0 && num_layers > 0)
            return double(num_layers - std::min(full_attention_layers, num_layers)) / num_layers;
        if (sliding_window_pattern <= 1 || num_layers <= 0) return 1.0;
        return double(num_layers - pattern_global_layers()) / num_layers;
    }
    // Layers the pattern keeps global: num_layers / pattern, rounded down (0 without a pattern).
    int pattern_global_layers() const { return sliding_window_pattern > 1 ? num_layers / sliding_window_pattern : 0; }
    // Keys a query at the end of a `seq`-token sequence attends to, averaged over the layers.
    double attended_keys(double seq) const {
        const double windowed = sliding_window > 0 && sliding_window < seq ? sliding_window : seq;
        const double f = windowed_layer_fraction();
        return f * windowed + (1.0 - f) * seq;
    }
    // KV width one of `tp` tensor-parallel ranks holds: its share of the KV heads, at least one
    // head (with fewer KV heads than ranks, each head is replicated).
    double kv_size_per_tp_rank(int tp) const { return (num_kv_heads > tp ? double(num_kv_heads) / tp : 1.0) * head_dim; }
    // Weights of the Q norm and of the K norm of one layer: one head_dim vector shared by the
    // heads, or one weight per channel of the projection (0 without QK norm).
    std::int64_t q_norm_width() const { return qk_norm_width(q_size()); }
    std::int64_t k_norm_width() const { return qk_norm_width(kv_size()); }
    std::int64_t qk_norm_weights() const { return q_norm_width() + k_norm_width(); }
    std::int64_t qk_norm_width(std::int64_t projection) const {
        switch (qk_norm) {
            case QkNorm::per_head: return head_dim;
            case QkNorm::full_width: return projection;
            case QkNorm::none: break;
        }
        return 0;
    }
};

// The largest sizes a model file may give (the simulator walks the layers one by one and lays out
// tensors of these sizes); `tessel validate` holds a published row to them as well.
inline constexpr int kMaxNumLayers = 100000;
inline constexpr int kMaxHiddenSize = 1 << 22;
inline constexpr int kMaxHeads = 1 << 16;
inline constexpr int kMaxFfnHiddenSize = 1 << 24;
inline constexpr int kMaxSeqLength = 1 << 24;

// Reads a model from parsed JSON; `file` names it in messages. Detects Hugging Face configs.
ModelSpec parse_model(const json& j, const std::string& file);
bool looks_like_huggingface(const json& j);
// The keys a model file names its head counts by, for the messages of validate_model: the native
// ones, or a config.json's (num_key_value_heads; GPT-2's n_head; Falcon's n_head_kv).
struct HeadKeys {
    std::string heads = "num_attention_heads";
    std::string kv_heads = "num_kv_heads";
};
// Checks the cross-field rules (heads divide, KV heads divide heads, ...); InputError otherwise,
// naming the file's own keys.
void validate_model(const ModelSpec& m, const std::string& file, const HeadKeys& keys = {});
json to_json(const ModelSpec& m);

const char* to_string(Activation a);
const char* to_string(Norm n);
const char* to_string(PositionEmbedding p);
const char* to_string(QkNorm q);

}  // namespace tessel
