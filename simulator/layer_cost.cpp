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
    // fp8 GEMMs through Transformer Engine: each GEMM operand is cast to fp8 with its scale (the
    // amax is taken in the same kernel), and Hopper's fp8 GEMMs take only the "TN" layout, so the
    // cast writes a transposed fp8 copy too: per element one 16-bit read and two 1-byte writes.
    // Forward: the input and the weight (every microbatch); backward: the output gradient.
    bool fp8 = false;
    static constexpr double kFp8CastBytes = 2.0 + 2.0;
    bool sixteen_bit = false;  // GEMMs on the 16-bit tensor cores even in an fp8 plan (the LM head)

    void gemm(PassCost& pass, const GemmShape& g) const {
        pass.compute_s += gpu.gemm_time(g);
        pass.gemm_s += gpu.gemm_time(g);
        pass.flops += g.flops();
    }
    double linear_forward(PassCost& pass, double tokens, double in, double out) const {
        GemmShape g{tokens, out, in};
        g.sixteen_bit = sixteen_bit;
        gemm(pass, g);
        if (fp8) memory(pass, kFp8CastBytes * (tokens * in + in * out), 2);
        return gpu.gemm_time(g);
    }
    double linear_backward(PassCost& pass, double tokens, double in, double out) const {
        GemmShape dgrad{tokens, in, out}, wgrad{in, out, tokens};
        dgrad.sixteen_bit = wgrad.sixteen_bit = sixteen_bit;
        gemm(pass, dgrad);
        gemm(pass, wgrad);
        if (fp8) memory(pass, kFp8CastBytes * tokens * out, 1);  // the output gradient, cast once for both
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
    // Elementwise traffic, in bytes, by the stack's kernels (OverlapOptions::fused_elementwise).
    // A pass reads and writes each tensor once; `Tr` tokens for what sequence parallelism splits.
    const bool eager = !o.fused_elementwise;
    const bool swiglu = m.activation == Activation::swiglu;
    const bool rope = m.position_embedding == PositionEmbedding::rope;
    const double mask = o.dropout ? Tr * h : 0.0;  // a 1-byte dropout mask per element
    // Bias, dropout and residual add after a projection: fused, one kernel reads the branch and
    // the residual and writes the sum (and the mask); eager adds a separate dropout pass.
    const double branch_f = 3.0 * Tr * h * E + mask + (eager && o.dropout ? 2.0 * Tr * h * E : 0.0);
    // Backward: the residual gradient is accumulated where the stream forks (read two, write one),
    // and dropout's backward reads its mask (eager: as a separate pass).
    const double branch_b = 3.0 * Tr * h * E + mask + (eager && o.dropout ? 2.0 * Tr * h * E : 0.0);
    // Norm: forward reads x, writes y. Backward reads x and dy and writes dx; eager PyTorch reads x
    // and dy once more in a second kernel for the weight (and bias) gradient.
    const double norm_f = 2.0 * Tr * h * E;
    const double norm_b = (eager ? 5.0 : 4.0) * Tr * h * E;
    // Activation: GeLU reads f and writes f; backward reads dy and x, writes dx. SwiGLU fused reads
    // gate and up (2f) and writes f, backward reads dy and both inputs, writes both gradients;
    // eager runs silu and the product as two ops each way.
    const double act_f = (swiglu ? (eager ? 5.0 : 3.0) : 2.0) * T * f * E;
    const double act_b = (swiglu ? (eager ? 8.0 : 5.0) : 3.0) * T * f * E;
    // Rotary embedding on Q and K: fused reads and writes them once; eager (complex arithmetic in
    // fp32) casts up (read E, write 4), multiplies (read 4, write 4) and casts back (read 4, write E).
    const double rope_bytes = !rope ? 0.0 : T * (q + kv) * (eager ? 2.0 * E + 16.0 : 2.0 * E);
    // Eager autograd assembles the input gradient of the Q/K/V projections (a concatenation of the
    // three gradients, or the sum of three input gradients): one more read and write.
    const double qkv_grad_b = eager ? 2.0 * T * (q + 2 * kv) * E : 0.0;
    // Bias gradients: a reduction over the tokens reads each biased output gradient once.
    const double bias_b = m.linear_bias ? T * ((q + 2 * kv) + h + f_up + h) * E : 0.0;
    const double k = eager ? 2.0 : 1.0;  // kernels per elementwise group

    PassCost fwd;
    b.memory(fwd, norm_f);                                              // norm 1
    const double qkv_f = [&] { PassCost tmp; return b.linear_forward(tmp, T, h, q + 2 * kv); }();
    if (sp) b.tp_collective(fwd, Collective::all_gather, act, qkv_f);
    b.linear_forward(fwd, T, h, q + 2 * kv);                            // QKV
    if (rope) b.memory(fwd, rope_bytes, eager ? 6 : 1);                // rotary on Q, K
    PassCost attention_fwd;
    attention_fwd.compute_s = attn_f;
    attention_fwd.attention_s = attn_f;
    attention_fwd.flops = attn.forward_flops();
    attention_fwd.cp_comm_s = cp_exposed(kv_step_bytes, attn_f);
    fwd += attention_fwd;
    const double proj_f = b.linear_forward(fwd, T, q, h);               // output projection
    b.tp_collective(fwd, sp ? Collective::reduce_scatter : Collective::all_reduce, act, proj_f);
    b.memory(fwd, branch_f, k);                                         // bias, dropout, residual add
    b.memory(fwd, norm_f);                                              // norm 2
    const double up_f = [&] { PassCost tmp; return b.linear_forward(tmp, T, h, f_up); }();
    if (sp) b.tp_collective(fwd, Collective::all_gather, act, up_f);
    b.linear_forward(fwd, T, h, f_up);                                  // MLP up (and gate)
    b.memory(fwd, act_f, swiglu ? k : 1);                               // GeLU / SwiGLU
    const double down_f = b.linear_forward(fwd, T, f, h);               // MLP down
    b.tp_collective(fwd, sp ? Collective::reduce_scatter : Collective::all_reduce, act, down_f);
    b.memory(fwd, branch_f, k);                                         // bias, dropout, residual add
    L.forward = fwd;

    PassCost bwd;
    b.memory(bwd, 2.0 * branch_b, 2 * k);                               // residual branches
    const double down_b = b.linear_backward(bwd, T, f, h);
    // With sequence parallelism the backward gathers the MLP input again for the weight
    // gradient (beside the input-gradient GEMM) and reduce-scatters the input gradient.
    if (sp) b.tp_collective(bwd, Collective::all_gather, act, down_b);
    b.memory(bwd, act_b, swiglu ? 2 * k : 1);                           // activation backward
    const double up_b = b.linear_backward(bwd, T, h, f_up);
    b.tp_collective(bwd, sp ? Collective::reduce_scatter : Collective::all_reduce, act, up_b);
    b.memory(bwd, norm_b, k);                                           // norm 2 backward
    const double proj_b = b.linear_backward(bwd, T, q, h);
    if (sp) b.tp_collective(bwd, Collective::all_gather, act, proj_b);
    PassCost attention_bwd;
    attention_bwd.compute_s = attn_b;
    attention_bwd.attention_s = attn_b;
    attention_bwd.flops = attn.backward_flops();
    attention_bwd.cp_comm_s = cp_exposed(2.0 * kv_step_bytes, attn_b);  // K, V out and dK, dV back
    bwd += attention_bwd;
    if (rope) b.memory(bwd, rope_bytes, eager ? 6 : 1);
    if (qkv_grad_b > 0) b.memory(bwd, qkv_grad_b);                     // Q/K/V gradients assembled
    const double qkv_b = b.linear_backward(bwd, T, h, q + 2 * kv);
    b.tp_collective(bwd, sp ? Collective::reduce_scatter : Collective::all_reduce, act, qkv_b);
    b.memory(bwd, norm_b, k);                                           // norm 1 backward
    if (bias_b > 0) b.memory(bwd, bias_b, 4);                           // bias gradients
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
    // The LM head stays a 16-bit GEMM in fp8 training (Transformer Engine converts the transformer
    // layers' linears; Megatron's output layer and a tied embedding matrix are plain 16-bit GEMMs).
    PassBuilder hb = b;
    hb.fp8 = false;
    hb.sixteen_bit = true;
    b.memory(head.forward, norm_f);                                     // final norm
    const double head_f = [&] { PassCost tmp; return hb.linear_forward(tmp, T, h, V); }();
    if (sp) b.tp_collective(head.forward, Collective::all_gather, act, head_f);
    hb.linear_forward(head.forward, T, h, V);
    // Cross entropy over the vocabulary slice; max, sum of exponents and target logit are each
    // summed over the tensor-parallel group (a few bytes per token). Fused: the classifier kernel
    // reads the 16-bit logits, then reads them again and writes their gradient in place. Eager
    // (Megatron's vocab_parallel_cross_entropy, PyTorch's F.cross_entropy on .float()): cast to
    // fp32 (read E, write 4), max (read 4), shift in place (8), exp in place (8), sum (4),
    // normalise in place (8); backward: scale the softmax in place (8), cast back (read 4, write E).
    if (o.fused_cross_entropy) {
        b.memory(head.forward, T * V * E, 1);
        b.memory(head.backward, T * V * 2.0 * E, 1);
    } else {
        b.memory(head.forward, T * V * (E + 36.0), 6);
        b.memory(head.backward, T * V * (12.0 + E), 2);
    }
    for (int i = 0; i < 3; ++i) b.tp_collective(head.forward, Collective::all_reduce, 4.0 * T);
    const double head_b = hb.linear_backward(head.backward, T, h, V);
    b.tp_collective(head.backward, sp ? Collective::reduce_scatter : Collective::all_reduce, act, head_b);
    b.memory(head.backward, norm_b, k);                                 // final norm backward
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
