#include "simulator/memory_model.h"

#include <algorithm>

#include "core/accounting.h"
#include "core/schedule.h"
#include "core/units.h"
#include "simulator/simulate.h"

namespace tessel {

namespace {
// Bytes of one activation element: 16-bit formats store 2, fp32 training 4; fp8 runs keep their
// activations in bf16 (only the GEMM inputs are cast).
double activation_bytes(Precision p) { return p == Precision::fp32 ? 4.0 : 2.0; }

// Bytes of one element of a GEMM input kept for the backward. Transformer Engine keeps the fp8 cast
// it made for the forward GEMM (or its transpose, for the weight gradient) instead of the bf16
// input (transformer_engine/pytorch/module/linear.py, saved_inputmat_t, v1.13; likewise
// LayerNormLinear's ln_out and LayerNormMLP's fc1 and fc2 inputs).
double gemm_input_bytes(Precision p, const ActivationOptions& o) {
    return p == Precision::fp8 && o.fp8_saves_gemm_inputs ? 1.0 : activation_bytes(p);
}
}  // namespace

double ring_attention_buffer_bytes(const ModelSpec& m, const Plan& p, const ActivationOptions& opt) {
    const double E = activation_bytes(p.precision);
    const double tokens = double(p.seq_length) / p.cp * p.microbatch_size;
    const double q_elements = tokens * m.q_size() / p.tp;
    if (opt.all_gather_context_parallel) {
        // The all-gather way: the backward's dK/dV of the whole sequence (cp ranks' worth), the
        // copy in rank order the reduce-scatter sends, and its result.
        const double kv_bytes = 2.0 * tokens * m.kv_size_per_tp_rank(p.tp) * E;
        return (2.0 * p.cp + 1.0) * kv_bytes;
    }
    if (!opt.torch_context_parallel) {
        // Transformer Engine's ring (layer_cost.h, ring_attention_cost): the forward keeps every
        // step's partial output until the merge (cp outputs of the rank's queries on the rank that
        // uses all of them) beside two K/V buffers (sending and receiving); the backward two
        // buffers of K/V with dK/dV, and the step's dQ.
        const double kv_bytes = 2.0 * tokens * m.kv_size_per_tp_rank(p.tp) * E;
        const double out_bytes = q_elements * E;
        return std::max(p.cp * out_bytes + 2.0 * kv_bytes, 4.0 * kv_bytes + out_bytes);
    }
    // PyTorch's ring, over K/V repeated to the query heads and all-gathered from every rank
    // (ring_attention_cost). Forward: the merged output in fp32, the step's output with its fp32
    // cast, the gathered K/V of the cp ranks and the step's packed copy of the K/V in use.
    // Backward: fp32 dQ and dK/dV accumulators, the step's dQ/dK/dV, the gathered K/V with the
    // packed copy, and the packed fp32 dK/dV being sent and received.
    const double kv_bytes = 2.0 * q_elements * E;
    const double dkv_bytes = 2.0 * q_elements * 4.0;
    const double gathered = (p.cp + 1.0) * kv_bytes;
    const double forward = q_elements * (4.0 + E + 4.0) + gathered;
    const double backward = q_elements * (4.0 + E) + dkv_bytes + kv_bytes + gathered + 2.0 * dkv_bytes;
    return std::max(forward, backward);
}

ActivationOptions default_activation_options(const ModelSpec& m) {
    ActivationOptions o;
    o.flash_attention = true;
    o.dropout = m.position_embedding == PositionEmbedding::learned;
    return o;
}

double layer_activation_bytes(const ModelSpec& m, const Plan& p, const ActivationOptions& o) {
    const double E = activation_bytes(p.precision);
    const double G = gemm_input_bytes(p.precision, o);  // the inputs of QKV, projection, FC1, FC2
    const double t = p.tp;
    const double sb = double(p.seq_length) / p.cp * p.microbatch_size;  // tokens on this GPU
    const double h = m.hidden_size, q = m.q_size(), kv = m.kv_size_per_tp_rank(p.tp);
    const double f = m.ffn_hidden_size, f_up = m.gated_mlp() ? 2.0 * f : f;
    const double heads = double(m.num_attention_heads) / t;
    const double s_kv = p.seq_length;  // keys each query attends over (all of them under cp)
    const double mask = o.dropout ? 1.0 : 0.0;

    // Terms tensor parallelism does not split unless sequence parallelism does; the QKV and MLP
    // inputs stay whole where the backward keeps them gathered.
    double replicated = sb * h * (E /*LN1 input*/ + mask /*attention dropout*/ +
                                  (m.shared_norm ? 0.0 : E) /*LN2 input*/ + mask /*MLP dropout*/ +
                                  (m.sandwich_norms ? 2.0 * E : 0.0) /*post-norm inputs*/);
    double gemm_inputs = sb * h * (G /*QKV input*/ + G /*MLP input*/);
    if (p.sequence_parallel) replicated /= t;
    if (p.sequence_parallel && !o.keeps_gathered_tp_inputs) gemm_inputs /= t;
    replicated += gemm_inputs;
    // Terms split over the tensor-parallel ranks.
    double split = sb * (E * (q / t + kv) /*Q, K*/ + E * kv /*V*/ + G * q / t /*projection input*/ +
                         E * f_up / t /*activation input*/ + G * f / t /*activation output*/);
    // QK norm: its backward reads the projected Q and K before the norm as well.
    if (m.qk_norm != QkNorm::none) split += sb * E * (q / t + kv);
    // Context parallelism the all-gather way keeps the other ranks' K and V, gathered, for the
    // backward (RingAttentionInput::all_gather).
    if (p.cp > 1 && o.all_gather_context_parallel) split += (p.cp - 1.0) * sb * 2.0 * E * kv;
    double attention_core = 0;
    if (o.flash_attention) {
        attention_core = 4.0 * heads * sb;  // fp32 log-sum-exp per query row and head
    } else {
        // softmax output, its dropout mask and the dropout output, per head and key
        attention_core = sb * heads * s_kv * (E + mask * (1.0 + E));
    }
    return replicated + split + attention_core;
}

double layer_stored_activation_bytes(const ModelSpec& m, const Plan& p, const ActivationOptions& o) {
    const double E = activation_bytes(p.precision);
    const double sb = double(p.seq_length) / p.cp * p.microbatch_size;
    switch (p.recompute) {
        case Recompute::full:
            return E * sb * m.hidden_size / (p.sequence_parallel ? p.tp : 1);
        case Recompute::selective: {
            ActivationOptions no_core = o;
            double all = layer_activation_bytes(m, p, o);
            if (!o.flash_attention) {
                no_core.flash_attention = true;  // keeps only the O(s) log-sum-exp instead of s²
                return layer_activation_bytes(m, p, no_core) - 4.0 * m.num_attention_heads / p.tp * sb;
            }
            return all;
        }
        case Recompute::none: break;
    }
    return layer_activation_bytes(m, p, o);
}

ModelStateBytes model_state_bytes(double params, int zero_stage, int shard, Precision precision, bool fp32_gradients) {
    // Rajbhandari et al. 2020 §3.1: mixed-precision Adam keeps 2Ψ + 2Ψ + KΨ with K = 12
    // (fp32 master weights, momentum and variance); plain fp32 Adam keeps 4Ψ + 4Ψ + 8Ψ.
    const bool fp32 = precision == Precision::fp32;
    const double w = fp32 ? 4.0 : 2.0, k = fp32 ? 8.0 : 12.0;
    const double g = fp32 || (fp32_gradients && zero_stage <= 1) ? 4.0 : 2.0;
    const double n = std::max(1, shard);
    ModelStateBytes s;
    s.optimizer = params * k / (zero_stage >= 1 ? n : 1.0);
    s.gradients = params * g / (zero_stage >= 2 ? n : 1.0);
    s.weights = params * w / (zero_stage >= 3 ? n : 1.0);
    return s;
}

double layer_parameters_per_tp_rank(const ModelSpec& m, int tp) {
    const double h = m.hidden_size, q = m.q_size(), f = m.ffn_hidden_size;
    const double kv = m.kv_size_per_tp_rank(tp);
    const double attention = h * (q / tp + 2.0 * kv) + q / tp * h;
    const double mlp = (m.gated_mlp() ? 3.0 : 2.0) * h * f / tp;
    const double matmul_full = double(layer_matmul_weights(m));
    double rest = double(count_parameters(m).per_layer) - matmul_full;  // norms and biases, whole
    // The column-parallel layers' biases (Q, K, V and the MLP's up projection) split with their
    // outputs; the row-parallel ones (output projection, MLP down) and the norms are replicated.
    if (m.has_qkv_bias()) rest += (q / tp + 2.0 * kv) - (q + 2.0 * m.kv_size());
    const double up = (m.gated_mlp() ? 2.0 : 1.0) * f;
    if (m.has_mlp_bias()) rest += up / tp - up;
    return attention + mlp + rest;
}

double vocab_parameters_per_tp_rank(const ModelSpec& m, int tp) { return double(m.vocab_size) * m.hidden_size / tp; }

ModelSpec with_padded_vocabulary(const ModelSpec& m, int tp, int multiple) {
    ModelSpec padded = m;
    if (multiple > 1) {
        const long long unit = static_cast<long long>(multiple) * std::max(1, tp);
        padded.vocab_size = static_cast<int>((m.vocab_size + unit - 1) / unit * unit);
    }
    return padded;
}

double parameters_on_rank(const ModelSpec& m, const Plan& p, int r) {
    const auto pc = count_parameters(m);
    const auto layers = layers_per_chunk(m.num_layers, p.pp, p.virtual_stages, p.lm_head_layers);
    double n_layers = 0;
    for (int c = 0; c < p.virtual_stages; ++c) n_layers += layers[c * p.pp + r];
    double params = n_layers * layer_parameters_per_tp_rank(m, p.tp);
    const double vocab_shard = vocab_parameters_per_tp_rank(m, p.tp);
    if (r == 0) params += vocab_shard + double(pc.position_embedding);
    // The last stage holds the LM head; Megatron keeps a copy of tied embeddings there too.
    if (r == p.pp - 1 && (!m.tied_embeddings || p.pp > 1)) params += vocab_shard;
    if (r == p.pp - 1) params += double(pc.final_norm);
    return params;
}

double chunk_activation_bytes(const Plan& p, int layers, double stored, double full, int offloaded_layers) {
    // Block recompute leaves the chunk's last layers keeping everything.
    const int in_mode = layers_in_recompute_mode(p, layers);
    auto layer = [&](int i) { return i < in_mode ? stored : full; };
    double bytes = 0, in_transit = 0;
    for (int i = 0; i < layers; ++i) {
        if (i < offloaded_layers) in_transit = std::max(in_transit, layer(i));
        else bytes += layer(i);
    }
    return bytes + in_transit;
}

namespace {
// The profile's runtime_reserved_GiB (validated by hardware_efficiency()), read alone: the planner
// asks for memory per candidate and needs no other profile key here.
double runtime_reserved_bytes(const ClusterSpec& c) {
    if (c.profile && c.profile->is_object()) {
        auto it = c.profile->find("runtime_reserved_GiB");
        if (it != c.profile->end() && it->is_number()) return std::max(0.0, it->get<double>()) * units::GiB;
    }
    return kRuntimeReservedBytes;
}
}  // namespace

std::vector<RankMemory> memory_per_rank(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const ActivationOptions& opt) {
    const double E = activation_bytes(p.precision);
    const double sb = double(p.seq_length) / p.cp * p.microbatch_size;
    const double stored = layer_stored_activation_bytes(m, p, opt);
    const double full_layer = layer_activation_bytes(m, p, opt);
    const auto layers = layers_per_chunk(m.num_layers, p.pp, p.virtual_stages, p.lm_head_layers);
    const int chunks = p.pp * p.virtual_stages;
    // The vocabulary-parallel cross entropy keeps the fp32 softmax of each in-flight microbatch; a
    // fused classifier keeps the 16-bit logits (and a log-sum-exp per token).
    const double logits = (opt.fused_cross_entropy ? E : 4.0) * sb * double(m.vocab_size) / p.tp;
    const auto schedule = pipeline_schedule(p.schedule, p.pp, p.num_microbatches(), p.virtual_stages,
                                            opt.all_forwards_first_at_m_equal_pp);
    const int shard = p.dp * p.cp;
    const double layer_params = layer_parameters_per_tp_rank(m, p.tp);
    // What one microbatch's forward leaves stored on each model stage, until its backward.
    std::vector<double> stage_bytes(chunks);
    for (int stage = 0; stage < chunks; ++stage) {
        stage_bytes[stage] = chunk_activation_bytes(p, layers[stage], stored, full_layer, opt.cpu_offload_layers);
        if (stage == chunks - 1) stage_bytes[stage] += logits + E * sb * m.hidden_size;  // final norm input
    }

    std::vector<RankMemory> out(p.pp);
    for (int r = 0; r < p.pp; ++r) {
        RankMemory& mem = out[r];
        mem.states = model_state_bytes(parameters_on_rank(m, p, r), p.zero_stage, shard, p.precision, opt.grad_reduce_in_fp32);
        // While a layer runs under full recompute (its forward, or its recompute in the backward)
        // its full set is live beside the checkpoints.
        const double layer_working = p.recompute == Recompute::full ? full_layer : 0.0;
        const bool holds_loss = r == (chunks - 1) % p.pp;
        // The 16-bit logits exist next to their fp32 copy while the loss is computed. PyTorch's
        // cross entropy is out of place: its backward holds the saved fp32 log-probabilities (stored
        // above) with their incoming gradient and the logits' gradient, 8 bytes per logit more.
        const double loss_working =
            holds_loss ? (opt.torch_cross_entropy ? 8.0 : E) * sb * double(m.vocab_size) / p.tp : 0.0;
        // Walk the schedule: each forward adds its chunk's stored activations, each backward frees
        // them. On the last chunk the loss runs after the layers' forward and its backward before
        // theirs, and frees the saved softmax (autograd releases a node's saved tensors once it has
        // run), so a recomputed layer is live beside the checkpoints but not the logits.
        double live = 0, peak = 0;
        for (const auto& a : schedule[r]) {
            const int stage = a.chunk * p.pp + r;
            const double bytes = stage_bytes[stage];
            const bool loss_here = stage == chunks - 1;
            const double head = loss_here ? logits : 0.0;  // not yet stored in the forward, freed first in the backward
            if (a.op == PipelineOp::forward) {
                peak = std::max(peak, live + bytes - head + layer_working);
                live += bytes;
                if (loss_here) peak = std::max(peak, live + loss_working);
            } else {
                if (loss_here) peak = std::max(peak, live + loss_working);
                peak = std::max(peak, live - head + layer_working);
                live -= bytes;
            }
            peak = std::max(peak, live);
        }
        mem.activations = peak;
        // Logged metrics run after the backward has freed the stored activations: the kept 16-bit
        // logits, one fp32 copy and its log_softmax output are live together.
        if (opt.metric_cross_entropies > 0 && holds_loss)
            mem.activations = std::max(mem.activations, (E + 8.0) * sb * double(m.vocab_size) / p.tp);

        // Buffers: pipeline send/receive of one microbatch each way, the sequence-parallel
        // all-gather output, ZeRO-3's gathered units (the current one and the prefetched next
        // layer, plus the unsharded gradient of the current one, and its fp32 copy when gradients
        // reduce in fp32), and the runtime's own reservation. The vocabulary's weights gather as
        // units of their own (torchtitan's apply_fsdp wraps tok_embeddings and [norm, output];
        // DeepSpeed's estimate_zero3_model_states_mem_needs counts the largest module), larger than
        // a layer for most models: the LM head's backward, at the loss and the activation peak,
        // holds it gathered with its gradient beside the prefetched last layer.
        const double boundary = E * sb * m.hidden_size / (p.sequence_parallel ? p.tp : 1);
        double buffers = runtime_reserved_bytes(c);
        if (p.pp > 1) buffers += 2.0 * boundary;
        if (p.sequence_parallel) buffers += E * sb * m.hidden_size;
        if (p.zero_stage >= 3 && shard > 1) {
            const double vocab_unit = vocab_parameters_per_tp_rank(m, p.tp);
            const double largest_unit = r == 0 || holds_loss ? std::max(layer_params, vocab_unit) : layer_params;
            buffers += largest_unit * (2.0 * E + (opt.grad_reduce_in_fp32 ? 4.0 : 0.0)) + layer_params * E;
        }
        if (p.cp > 1) buffers += ring_attention_buffer_bytes(m, p, opt);
        mem.buffers = buffers;
    }
    return out;
}

MemoryBreakdown estimate_memory(const ModelSpec& m, const ClusterSpec& c, const Plan& p) {
    return peak_memory(m, c, p, default_activation_options(m));
}

MemoryBreakdown estimate_memory(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const SimulateOptions& o) {
    const ModelSpec padded = with_padded_vocabulary(m, p.tp, o.vocab_padding_multiple);
    return peak_memory(padded, c, p, activation_options(padded, o));
}

ActivationOptions activation_options(const ModelSpec& m, const SimulateOptions& o) {
    ActivationOptions a = default_activation_options(m);
    a.dropout = a.dropout && o.model_dropout;
    a.flash_attention = o.fused_attention;
    a.fused_cross_entropy = o.fused_cross_entropy;
    a.torch_cross_entropy = o.torch_cross_entropy && !o.fused_cross_entropy;
    a.metric_cross_entropies = o.metric_cross_entropies;
    a.grad_reduce_in_fp32 = o.grad_reduce_in_fp32;
    a.fp8_saves_gemm_inputs = o.fp8_saves_gemm_inputs;
    a.cpu_offload_layers = o.cpu_offload_layers;
    a.all_forwards_first_at_m_equal_pp = o.all_forwards_first_at_m_equal_pp;
    a.torch_context_parallel = o.torch_context_parallel;
    a.all_gather_context_parallel = o.all_gather_context_parallel;
    // A backward that does not gather the input again keeps it gathered (layer_cost.cpp):
    // PyTorch's tensor parallelism, with or without its async TP.
    a.keeps_gathered_tp_inputs = !o.tp_backward_overlap || (o.tp_comm_overlap && o.tp_overlap_symmetric_memory);
    return a;
}

MemoryBreakdown peak_memory(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const ActivationOptions& opt) {
    const auto ranks = memory_per_rank(m, c, p, opt);
    std::size_t worst = 0;
    for (std::size_t r = 1; r < ranks.size(); ++r)
        if (ranks[r].total() > ranks[worst].total()) worst = r;
    const RankMemory& w = ranks[worst];
    MemoryBreakdown b;
    b.weights = w.states.weights / units::GiB;
    b.gradients = w.states.gradients / units::GiB;
    b.optimizer = w.states.optimizer / units::GiB;
    b.activations = w.activations / units::GiB;
    b.buffers = w.buffers / units::GiB;
    b.peak = w.total() / units::GiB;
    return b;
}

}  // namespace tessel
