#include "simulator/layer_cost.h"

#include <algorithm>

#include "simulator/memory_model.h"

namespace tessel {

PassCost& PassCost::operator+=(const PassCost& o) {
    compute_s += o.compute_s;
    tp_comm_s += o.tp_comm_s;
    cp_comm_s += o.cp_comm_s;
    flops += o.flops;
    gemm_s += o.gemm_s;
    attention_s += o.attention_s;
    memory_bound_s += o.memory_bound_s;
    return *this;
}

namespace {

// Adds kernels and collectives to a pass. A linear layer y = x W (x: T x in, W: in x out) costs
// one GEMM forward and two backward (input gradient and weight gradient).
struct PassBuilder {
    const ComputeModel& gpu;
    const CommGroup& tp;
    const OverlapOptions& overlap;
    bool fp8 = false;  // GEMM inputs are cast to fp8 first (Transformer Engine): a read and a narrower write

    void gemm(PassCost& pass, const GemmShape& g) const {
        pass.compute_s += gpu.gemm_time(g);
        pass.gemm_s += gpu.gemm_time(g);
        pass.flops += g.flops();
    }
    double linear_forward(PassCost& pass, double tokens, double in, double out) const {
        GemmShape g{tokens, out, in};
        gemm(pass, g);
        if (fp8) memory(pass, 3.0 * tokens * in, 0);
        return gpu.gemm_time(g);
    }
    double linear_backward(PassCost& pass, double tokens, double in, double out) const {
        GemmShape dgrad{tokens, in, out}, wgrad{in, out, tokens};
        gemm(pass, dgrad);
        gemm(pass, wgrad);
        if (fp8) memory(pass, 3.0 * tokens * out, 0);  // the output gradient, cast once for both
        return gpu.gemm_time(dgrad);
    }
    void memory(PassCost& pass, double bytes, double kernels = 1) const {
        pass.compute_s += gpu.memory_time(bytes, kernels);
        pass.memory_bound_s += gpu.memory_time(bytes, kernels);
    }
    // A tensor-parallel collective next to a GEMM of `beside_s` seconds it may overlap with.
    void tp_collective(PassCost& pass, Collective c, double bytes, double beside_s = 0) const {
        if (tp.size < 2) return;
        const double t = collective_time(c, bytes, tp);
        if (!overlap.tp_comm_overlap || beside_s <= 0) {
            pass.tp_comm_s += t;
            return;
        }
        const double hidden = std::min(t, beside_s);
        pass.tp_comm_s += t - hidden;
        pass.compute_s += hidden * gpu.efficiency().sm_interference;
    }
};

double element_bytes(Precision p) { return p == Precision::fp32 ? 4.0 : 2.0; }

}  // namespace

BlockModels block_models(const ModelSpec& m, const Plan& p, const ComputeModel& gpu, const CommGroup& tp,
                         const CommGroup& cp, const OverlapOptions& o) {
    const PassBuilder b{gpu, tp, o, p.precision == Precision::fp8};
    const double E = element_bytes(p.precision);
    const double t = p.tp;
    const bool sp = p.sequence_parallel && p.tp > 1;
    const double T = double(p.microbatch_size) * p.seq_length / p.cp;  // tokens on this GPU
    const double Tr = sp ? T / t : T;                                    // tokens of the replicated ops
    const double h = m.hidden_size, q = m.q_size() / t;
    const double kv = std::max(1.0, double(m.num_kv_heads) / t) * m.head_dim;
    const double f = m.ffn_hidden_size / t;
    const double f_up = m.activation == Activation::swiglu ? 2.0 * f : f;
    const double act = T * h * E;  // one full activation tensor, the size of every TP collective

    AttentionShape attn{double(p.microbatch_size) * m.num_attention_heads / t, double(p.seq_length) / p.cp,
                        double(p.seq_length), double(m.head_dim), true, o.attention, o.dropout};
    // Context parallelism: this rank's s/cp queries (a balanced, zig-zag share of the causal
    // work) meet every key block as K and V travel the ring: cp - 1 transfers, each hidden behind
    // one cp-th of the rank's attention.
    const double attn_f = gpu.attention_forward_time(attn);
    const double attn_b = gpu.attention_backward_time(attn);
    auto cp_exposed = [&](double bytes_per_step, double attention_s) {
        if (p.cp < 2) return 0.0;
        const double step = collective_time(Collective::send_recv, bytes_per_step, cp);
        return (p.cp - 1) * std::max(0.0, step - attention_s / p.cp);
    };
    const double kv_step_bytes = 2.0 * T * kv * E;

    BlockModels out;
    // ---- transformer layer ----
    BlockCost& L = out.layer;
    L.name = "layer";
    L.parameters = layer_parameters_per_tp_rank(m, p.tp);
    PassCost fwd;
    b.memory(fwd, 2.0 * Tr * h * E);                                    // norm 1
    const double qkv_f = [&] { PassCost tmp; return b.linear_forward(tmp, T, h, q + 2 * kv); }();
    if (sp) b.tp_collective(fwd, Collective::all_gather, act, qkv_f);
    b.linear_forward(fwd, T, h, q + 2 * kv);                            // QKV
    if (m.position_embedding == PositionEmbedding::rope) b.memory(fwd, 2.0 * T * (q + kv) * E);  // rotary on Q, K
    PassCost attention_fwd;
    attention_fwd.compute_s = attn_f;
    attention_fwd.attention_s = attn_f;
    attention_fwd.flops = attn.forward_flops();
    attention_fwd.cp_comm_s = cp_exposed(kv_step_bytes, attn_f);
    fwd += attention_fwd;
    const double proj_f = b.linear_forward(fwd, T, q, h);               // output projection
    b.tp_collective(fwd, sp ? Collective::reduce_scatter : Collective::all_reduce, act, proj_f);
    b.memory(fwd, 3.0 * Tr * h * E);                                    // bias, dropout, residual add
    b.memory(fwd, 2.0 * Tr * h * E);                                    // norm 2
    const double up_f = [&] { PassCost tmp; return b.linear_forward(tmp, T, h, f_up); }();
    if (sp) b.tp_collective(fwd, Collective::all_gather, act, up_f);
    b.linear_forward(fwd, T, h, f_up);                                  // MLP up (and gate)
    b.memory(fwd, (f_up + f) * T * E);                                  // GeLU / SwiGLU
    const double down_f = b.linear_forward(fwd, T, f, h);               // MLP down
    b.tp_collective(fwd, sp ? Collective::reduce_scatter : Collective::all_reduce, act, down_f);
    b.memory(fwd, 3.0 * Tr * h * E);                                    // bias, dropout, residual add
    L.forward = fwd;

    PassCost bwd;
    // Elementwise backward passes read the saved input and the incoming gradient and write one.
    b.memory(bwd, 2.0 * 3.0 * Tr * h * E, 2);                          // residual branches
    const double down_b = b.linear_backward(bwd, T, f, h);
    // With sequence parallelism the backward gathers the MLP input again for the weight
    // gradient (beside the input-gradient GEMM) and reduce-scatters the input gradient.
    if (sp) b.tp_collective(bwd, Collective::all_gather, act, down_b);
    b.memory(bwd, 2.0 * (f_up + f) * T * E, 2);                         // activation backward
    const double up_b = b.linear_backward(bwd, T, h, f_up);
    b.tp_collective(bwd, sp ? Collective::reduce_scatter : Collective::all_reduce, act, up_b);
    b.memory(bwd, 2.0 * 2.0 * Tr * h * E, 2);                           // norm 2 backward
    const double proj_b = b.linear_backward(bwd, T, q, h);
    if (sp) b.tp_collective(bwd, Collective::all_gather, act, proj_b);
    PassCost attention_bwd;
    attention_bwd.compute_s = attn_b;
    attention_bwd.attention_s = attn_b;
    attention_bwd.flops = attn.backward_flops();
    attention_bwd.cp_comm_s = cp_exposed(2.0 * kv_step_bytes, attn_b);  // K, V out and dK, dV back
    bwd += attention_bwd;
    if (m.position_embedding == PositionEmbedding::rope) b.memory(bwd, 2.0 * T * (q + kv) * E);
    const double qkv_b = b.linear_backward(bwd, T, h, q + 2 * kv);
    b.tp_collective(bwd, sp ? Collective::reduce_scatter : Collective::all_reduce, act, qkv_b);
    b.memory(bwd, 2.0 * 2.0 * Tr * h * E, 2);                           // norm 1 backward
    L.backward = bwd;

    if (p.recompute == Recompute::full) L.recompute = fwd;
    else if (p.recompute == Recompute::selective) L.recompute = attention_fwd;  // the attention core

    // ---- embedding (first stage) ----
    BlockCost& emb = out.embedding;
    emb.name = "embedding";
    emb.parameters = double(m.vocab_size) * h / t;
    b.memory(emb.forward, 2.0 * T * h * E);                             // row gather
    if (m.position_embedding == PositionEmbedding::learned) b.memory(emb.forward, 3.0 * T * h * E);
    // Vocabulary-parallel lookup: each rank holds a slice of the table, partial rows are summed.
    b.tp_collective(emb.forward, sp ? Collective::reduce_scatter : Collective::all_reduce, act);
    if (sp) b.tp_collective(emb.backward, Collective::all_gather, act);
    b.memory(emb.backward, 2.0 * T * h * 4.0);                          // scatter-add into the fp32 gradient

    // ---- final norm, LM head, cross entropy (last stage) ----
    BlockCost& head = out.head;
    head.name = "lm_head";
    head.parameters = double(m.vocab_size) * h / t;
    const double V = double(m.vocab_size) / t;
    b.memory(head.forward, 2.0 * Tr * h * E);                           // final norm
    const double head_f = [&] { PassCost tmp; return b.linear_forward(tmp, T, h, V); }();
    if (sp) b.tp_collective(head.forward, Collective::all_gather, act, head_f);
    b.linear_forward(head.forward, T, h, V);
    // Cross entropy in fp32 over the vocabulary slice: max, sum of exponents, target logit; each
    // summed over the tensor-parallel group (a few bytes per token).
    b.memory(head.forward, T * V * (E + 4.0 + 4.0), 3);
    for (int i = 0; i < 3; ++i) b.tp_collective(head.forward, Collective::all_reduce, 4.0 * T);
    b.memory(head.backward, T * V * (4.0 + E));                         // softmax minus one-hot
    const double head_b = b.linear_backward(head.backward, T, h, V);
    b.tp_collective(head.backward, sp ? Collective::reduce_scatter : Collective::all_reduce, act, head_b);
    b.memory(head.backward, 2.0 * 2.0 * Tr * h * E, 2);                 // final norm backward
    return out;
}

double optimizer_time(double parameters, Precision precision, const ComputeModel& gpu) {
    // Mixed-precision Adam reads the fp32 gradient, master weight and both moments (16 bytes),
    // writes the last three (12) and the 16-bit weight (2); the gradient-norm pass reads the
    // gradient again (4). fp32 training has no 16-bit copy.
    const double bytes_per_param = precision == Precision::fp32 ? 32.0 : 34.0;
    // Multi-tensor kernels: a handful of launches however many tensors.
    return gpu.memory_time(parameters * bytes_per_param, 8);
}

}  // namespace tessel
