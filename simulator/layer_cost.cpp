#include "simulator/layer_cost.h"

#include <algorithm>

#include "simulator/memory_model.h"

namespace tessel {

PassCost& PassCost::operator+=(const PassCost& o) {
    compute_s += o.compute_s;
    tp_comm_s += o.tp_comm_s;
    cp_comm_s += o.cp_comm_s;
    tp_comm_hidden_s += o.tp_comm_hidden_s;
    cp_comm_hidden_s += o.cp_comm_hidden_s;
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
    // Forward: the input (every microbatch) and the weight (weight_cast_share of them: once a step
    // where Transformer Engine caches it); backward: the output gradient.
    bool fp8 = false;
    double weight_cast_share = 1;
    static constexpr double kFp8CastBytes = 2.0 + 2.0;
    bool sixteen_bit = false;  // GEMMs on the 16-bit tensor cores even in an fp8 plan (the LM head)

    // Transformer Engine's userbuffers (Megatron's --tp-comm-overlap) in the layout its
    // initialize_ub() gives every layer unless configured otherwise (transformer_engine/pytorch/
    // module/base.py): the "pipeline" and "bulk" methods hold 16 SMs for their communication
    // kernels and run the GEMM on the rest (num_sm 16, set_sm_margin), and "pipeline" cuts the
    // GEMM into 4 chunks (num_splits 4); "ring_exchange" moves its chunks with the copy engines.
    static constexpr double kUserbufferSms = 16;
    static constexpr double kPipelineSplits = 4;

    // A GEMM of this pass on all but `reserved_sms` SMs; returns its time. `splits` > 1: the GEMM
    // cut into that many chunks of rows, each a kernel of its own with its own waves and fixed cost.
    double gemm(PassCost& pass, const GemmShape& g, double reserved_sms = 0, double splits = 1) const {
        GemmShape chunk = g;
        chunk.m = g.m / splits;
        const double t = splits * gpu.gemm_time(chunk, reserved_sms);
        pass.compute_s += t;
        pass.gemm_s += t;
        pass.flops += g.flops();
        return t;
    }
    double linear_forward(PassCost& pass, double tokens, double in, double out, double reserved_sms = 0,
                          double splits = 1) const {
        GemmShape g{tokens, out, in};
        g.sixteen_bit = sixteen_bit;
        const double t = gemm(pass, g, reserved_sms, splits);
        if (fp8) memory(pass, kFp8CastBytes * (tokens * in + weight_cast_share * in * out), 1 + weight_cast_share);
        return t;
    }
    struct BackwardGemms {
        double dgrad = 0, wgrad = 0;  // seconds
    };
    // `dgrad_splits`: the input-gradient GEMM cut into chunks of rows (see gemm).
    BackwardGemms linear_backward(PassCost& pass, double tokens, double in, double out, double reserved_sms = 0,
                                  double dgrad_splits = 1) const {
        GemmShape dgrad{tokens, in, out}, wgrad{in, out, tokens};
        dgrad.sixteen_bit = wgrad.sixteen_bit = sixteen_bit;
        BackwardGemms t;
        t.dgrad = gemm(pass, dgrad, reserved_sms, dgrad_splits);
        t.wgrad = gemm(pass, wgrad, reserved_sms);
        if (fp8) memory(pass, kFp8CastBytes * tokens * out, 1);  // the output gradient, cast once for both
        return t;
    }
    void memory(PassCost& pass, double bytes, double kernels = 1, std::string_view kernel = {}) const {
        const double t = gpu.memory_time(bytes, kernels, kernel);
        pass.compute_s += t;
        pass.memory_bound_s += t;
    }
    // Transformer Engine's userbuffers serve this pass's TP collectives: a TP group inside one
    // node or NVLink domain (across nodes its collectives run through NCCL).
    bool userbuffers() const { return overlap.tp_comm_overlap && tp.size > 1 && tp.num_nodes == 1; }
    void hide(PassCost& pass, double total, double exposed) const {
        pass.tp_comm_s += exposed;
        pass.tp_comm_hidden_s += total - exposed;
    }

    // A TP collective the compute stream waits for whole.
    void tp_exposed(PassCost& pass, Collective c, double bytes) const {
        if (tp.size < 2) return;
        pass.tp_comm_s += collective_time(c, bytes, tp);
    }
    // A TP collective through NCCL beside a GEMM that does not need it (Megatron's asynchronous
    // TP communication in the backward): hidden up to the GEMM's length; while it runs, NCCL's
    // kernels hold some of the SMs (sm_interference of the hidden time).
    void tp_beside(PassCost& pass, Collective c, double bytes, double beside_s) const {
        if (tp.size < 2) return;
        const double t = collective_time(c, bytes, tp);
        const double hidden = std::min(t, beside_s);
        hide(pass, t, t - hidden);
        pass.compute_s += hidden * gpu.efficiency().sm_interference;
    }
    // Userbuffers' ring exchange: the all-gather into a GEMM as tp point-to-point steps, the GEMM
    // cut into tp chunks of rows, chunk i computing while chunk i+1 arrives (the first is local).
    // Copy engines move the chunks, so the GEMM keeps every SM; a step waits only where a chunk's
    // transfer outlasts a chunk's GEMM.
    void ub_ring_exchange(PassCost& pass, double bytes, double gemm_s) const {
        if (tp.size < 2) return;
        const double t = collective_time(Collective::all_gather, bytes, tp);
        const double step = t / (tp.size - 1), chunk = gemm_s / tp.size;
        hide(pass, t, (tp.size - 1) * std::max(0.0, step - chunk));
    }
    // A pipelined reduce-scatter after a GEMM cut into `splits` chunks: each chunk is
    // reduce-scattered beside the next chunk's GEMM, the last one after the GEMM.
    void pipelined_reduce_scatter(PassCost& pass, double bytes, double gemm_s, double splits) const {
        if (tp.size < 2) return;
        const double t = collective_time(Collective::reduce_scatter, bytes, tp);
        const double rs = t / splits, chunk = gemm_s / splits;
        hide(pass, t, rs + (splits - 1) * std::max(0.0, rs - chunk));
    }
    // Userbuffers' bulk overlap: a whole collective on the reserved SMs beside an independent GEMM
    // on the rest.
    void ub_bulk(PassCost& pass, Collective c, double bytes, double gemm_s) const {
        if (tp.size < 2) return;
        const double t = collective_time(c, bytes, tp);
        hide(pass, t, std::max(0.0, t - gemm_s));
    }
};

double element_bytes(Precision p) { return p == Precision::fp32 ? 4.0 : 2.0; }

// One fused attention kernel over the rank's whole sequence (no context parallelism).
PassCost fused_attention(double seconds, double flops) {
    PassCost c;
    c.compute_s = seconds;
    c.attention_s = seconds;
    c.flops = flops;
    return c;
}

// A bandwidth-bound kernel (copies, merges, accumulations): its time goes to the pass and to
// the pass's memory-bound share.
void add_memory_kernel(PassCost& pass, const ComputeModel& gpu, double bytes, double kernels) {
    const double t = gpu.memory_time(bytes, kernels);
    pass.compute_s += t;
    pass.memory_bound_s += t;
}

}  // namespace

BlockModels block_models(const ModelSpec& m, const Plan& p, const ComputeModel& gpu, const CommGroup& tp,
                         const CommGroup& cp, const OverlapOptions& options) {
    // Transformer Engine overlaps an all-gather into a GEMM or a GEMM into a reduce-scatter: the
    // collectives of sequence parallelism (Megatron refuses --tp-comm-overlap without it).
    OverlapOptions o = options;
    o.tp_comm_overlap = options.tp_comm_overlap && p.sequence_parallel;
    const bool fp8 = p.precision == Precision::fp8;
    const PassBuilder b{gpu, tp, o, fp8, o.fp8_weight_cast_share};
    const double E = element_bytes(p.precision);
    const double t = p.tp;
    const bool sp = p.sequence_parallel && p.tp > 1;
    const double T = double(p.microbatch_size) * p.seq_length / p.cp;  // tokens on this GPU
    const double Tr = sp ? T / t : T;                                    // tokens of the replicated ops
    const double h = m.hidden_size, q = m.q_size() / t;
    const double kv = m.kv_size_per_tp_rank(p.tp);
    const double f = m.ffn_hidden_size / t;
    const double f_up = m.gated_mlp() ? 2.0 * f : f;
    const double act = T * h * E;  // one full activation tensor, the size of every TP collective
    // An all-gathered GEMM input: in an fp8 plan it is cast before it is gathered (Transformer
    // Engine's sequence-parallel layers, torchao's Float8 tensor parallelism), one byte a value.
    const double gathered = T * h * (fp8 ? 1.0 : E);
    // Overlapped TP (implies sequence parallelism): Transformer Engine's userbuffers, or PyTorch's
    // symmetric-memory collective matmuls (torchtitan's async TP), which hold no SMs: the
    // all-gather and the GEMM's reduce-scatter are both cut into tp chunks moved by the copy
    // engines, and the backward keeps the gathered input rather than gathering it again.
    const bool ub = b.userbuffers();
    const bool symmetric = ub && o.tp_overlap_symmetric_memory;
    const double reserved = ub && !symmetric ? PassBuilder::kUserbufferSms : 0.0;  // SMs the overlapped GEMMs give up
    const double rs_splits = symmetric ? double(p.tp) : PassBuilder::kPipelineSplits;
    // PyTorch's collective matmuls run each chunk as an op of its own (torch.ops.symm_mem's
    // fused_all_gather_matmul and fused_matmul_reduce_scatter issue one mm per shard from Python), so
    // each of the tp chunks pays a GEMM's waves and a kernel's fixed cost. Transformer Engine's
    // userbuffers loop over their chunks in C++, back to back, priced as the whole GEMM.
    const double chunks = symmetric ? double(p.tp) : 1.0;

    AttentionShape attn{double(p.microbatch_size) * m.num_attention_heads / t, double(p.seq_length) / p.cp,
                        double(p.seq_length), double(m.head_dim), true, o.attention, o.dropout};
    // Windowed layers (all, or all but every sliding_window_pattern-th) visit only the band; the
    // layer's cost is the average over the layers. Context parallelism's ring (below) still visits
    // every chunk.
    AttentionShape windowed = attn;
    windowed.window = m.sliding_window;
    const double wf = m.windowed_layer_fraction();
    // Context parallelism: the ring attention of ring_attention_cost (its kernels, merges and the
    // part of the K/V exchange the kernels do not hide).
    RingAttentionCost ring;
    if (p.cp > 1) {
        RingAttentionInput r;
        r.tokens = T;
        r.microbatch = p.microbatch_size;
        r.heads = m.num_attention_heads / t;
        r.kv_width = kv;
        r.head_dim = m.head_dim;
        r.element_bytes = E;
        r.cp = p.cp;
        r.kernel = o.attention;
        r.dropout = o.dropout;
        r.torch_ring = o.torch_context_parallel;
        r.all_gather = o.all_gather_context_parallel;
        if (o.torch_context_parallel) r.kv_width = q;  // torchtitan's repeat_kv before SDPA
        ring = ring_attention_cost(r, gpu, cp);
    }
    // The mean over the layers of one attention cost; a model without windows prices one shape.
    auto layer_mean = [&](auto cost) { return wf > 0 ? wf * cost(windowed) + (1.0 - wf) * cost(attn) : cost(attn); };
    const double attn_f = layer_mean([&](const AttentionShape& a) { return gpu.attention_forward_time(a); });
    const double attn_b = layer_mean([&](const AttentionShape& a) { return gpu.attention_backward_time(a); });
    const double attn_flops_f = layer_mean([](const AttentionShape& a) { return a.forward_flops(); });
    const double attn_flops_b = layer_mean([](const AttentionShape& a) { return a.backward_flops(); });

    BlockModels out;
    // ---- transformer layer ----
    BlockCost& L = out.layer;
    L.name = "layer";
    L.parameters = layer_parameters_per_tp_rank(m, p.tp);
    // Elementwise traffic, in bytes, by the stack's kernels (OverlapOptions::fused_elementwise).
    // A pass reads and writes each tensor once; `Tr` tokens for what sequence parallelism splits.
    // PyTorch's async TP (symmetric memory) runs only in a compiled model (torchtitan's
    // maybe_enable_async_tp), whose elementwise ops Inductor fuses, wherever TP runs overlapped.
    const bool compiled_for_async_tp = o.tp_comm_overlap && o.tp_overlap_symmetric_memory && p.tp > 1;
    const bool eager = !o.fused_elementwise && !compiled_for_async_tp;
    const bool swiglu = m.gated_mlp();  // SwiGLU or GeGLU: the same fused gated kernel's traffic
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
    // Eager RMSNorm (OverlapOptions::eager_rmsnorm) streams fp32 copies: forward casts up (E+4),
    // pow (8), mean (4), scale (8), weight (8), cast down (4+E) bytes per element, 6 kernels; the
    // backward casts the gradient up, forms the weight gradient (product and reduction) and the
    // input gradient through the weight, the scale and its per-token reduction, pow's backward and
    // the sum of the two input-gradient paths, and casts back: 2E + 80 bytes, 10 kernels.
    const bool eager_rms = o.eager_rmsnorm && !compiled_for_async_tp && m.norm == Norm::rmsnorm;
    const double norm_f = (eager_rms ? 32.0 + 2.0 * E : 2.0 * E) * Tr * h;
    const double norm_b = (eager_rms ? 80.0 + 2.0 * E : (eager ? 5.0 : 4.0) * E) * Tr * h;
    const double norm_f_kernels = eager_rms ? 6.0 : 1.0;
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
    const double bias_b = T * E *
                          ((m.has_qkv_bias() ? q + 2 * kv : 0.0) + (m.has_out_bias() ? h : 0.0) +
                           (m.has_mlp_bias() ? f_up + h : 0.0));
    const double k = eager ? 2.0 : 1.0;  // kernels per elementwise group
    const double norm_b_kernels = eager_rms ? 10.0 : k;
    // QK norm (Qwen3, OLMo 2): an RMSNorm over this rank's queries and over its keys, each way one
    // kernel per tensor (the same byte counts per element as the layer's norms, eager or fused).
    const double qk_elements = m.qk_norm == QkNorm::none ? 0.0 : T * (q + kv);
    const double qk_norm_f = (eager_rms ? 32.0 + 2.0 * E : 2.0 * E) * qk_elements;
    const double qk_norm_b = (eager_rms ? 80.0 + 2.0 * E : (eager ? 5.0 : 4.0) * E) * qk_elements;
    // The kernels' names in a calibrated profile's streaming table.
    const bool layernorm = m.norm == Norm::layernorm;
    const char* norm_fwd = layernorm ? "layernorm_forward" : "rmsnorm_forward";
    const char* norm_bwd = layernorm ? "layernorm_backward" : "rmsnorm_backward";
    const char* act_fwd = swiglu ? "swiglu_forward" : "gelu_forward";
    const char* act_bwd = swiglu ? "swiglu_backward" : "gelu_backward";

    // Tensor-parallel collectives. Forward: with sequence parallelism an all-gather before each
    // column-parallel GEMM (QKV, MLP up) and a reduce-scatter after each row-parallel one
    // (projection, MLP down); without, an all-reduce after each row-parallel GEMM. Userbuffers
    // (ub) run the gathers as ring exchanges and the reduce-scatters pipelined; otherwise the
    // stream waits for each.
    auto gather_into = [&](PassCost& pass, double gemm_s) {
        if (ub) b.ub_ring_exchange(pass, gathered, gemm_s);
        else if (sp) b.tp_exposed(pass, Collective::all_gather, gathered);
    };
    // PyTorch's matmul-reduce-scatter exchanges the tp partial chunks and sums them in a kernel of
    // its own: it reads the tp partials (T x h in all) and writes the rank's T/tp x h.
    auto symmetric_reduction = [&](PassCost& pass) { b.memory(pass, act * (1.0 + 1.0 / p.tp), 1); };
    auto reduce_after = [&](PassCost& pass, double gemm_s) {
        if (ub) b.pipelined_reduce_scatter(pass, act, gemm_s, rs_splits);
        else b.tp_exposed(pass, sp ? Collective::reduce_scatter : Collective::all_reduce, act);
        if (symmetric) symmetric_reduction(pass);
    };
    // Backward of a row-parallel linear: with sequence parallelism the output gradient is gathered
    // first (the reduce-scatter's backward), into the input-gradient GEMM.
    auto row_parallel_backward = [&](PassCost& pass, double in, double out) {
        gather_into(pass, b.linear_backward(pass, T, in, out, 0, chunks).dgrad);
    };
    // A column-parallel linear's backward collectives through NCCL (column_parallel_backward
    // below, and the LM head: Megatron's own column-parallel linear, never on userbuffers).
    auto nccl_column_backward = [&](PassCost& pass, const PassBuilder::BackwardGemms& g, double gathered_bytes) {
        if (o.tp_backward_overlap) {
            if (sp) b.tp_beside(pass, Collective::all_gather, gathered_bytes, g.dgrad);
            b.tp_beside(pass, sp ? Collective::reduce_scatter : Collective::all_reduce, act, g.wgrad);
        } else {
            b.tp_exposed(pass, sp ? Collective::reduce_scatter : Collective::all_reduce, act);
        }
    };
    // Backward of a column-parallel linear: its input gradient is reduce-scattered (all-reduced
    // without sequence parallelism). Megatron and Transformer Engine keep the layer input sharded
    // and gather it again for the weight gradient, beside the input-gradient GEMM, and send the
    // input gradient beside the weight-gradient GEMM (OverlapOptions::tp_backward_overlap);
    // userbuffers do both as bulk overlaps on their reserved SMs. Stacks without it (PyTorch's
    // tensor parallelism) keep the gathered input and wait for the reduction.
    auto column_parallel_backward = [&](PassCost& pass, double in, double out) {
        const auto g = b.linear_backward(pass, T, in, out, reserved, chunks);
        if (symmetric) {
            b.pipelined_reduce_scatter(pass, act, g.dgrad, rs_splits);
            symmetric_reduction(pass);
        } else if (ub) {
            b.ub_bulk(pass, Collective::all_gather, gathered, g.dgrad);
            b.ub_bulk(pass, Collective::reduce_scatter, act, g.wgrad);
        } else {
            nccl_column_backward(pass, g, gathered);
        }
    };

    PassCost fwd;
    b.memory(fwd, norm_f, norm_f_kernels, norm_fwd);                    // norm 1
    gather_into(fwd, b.linear_forward(fwd, T, h, q + 2 * kv, 0, chunks));  // QKV
    if (qk_elements > 0) b.memory(fwd, qk_norm_f, 2 * norm_f_kernels, "rmsnorm_forward");  // Q, K norms
    if (rope) b.memory(fwd, rope_bytes, eager ? 6 : 1);                // rotary on Q, K
    const PassCost attention_fwd = p.cp > 1 ? ring.forward : fused_attention(attn_f, attn_flops_f);
    fwd += attention_fwd;
    reduce_after(fwd, b.linear_forward(fwd, T, q, h, reserved, chunks));  // output projection
    if (m.sandwich_norms) b.memory(fwd, norm_f, norm_f_kernels, norm_fwd);  // post-attention norm
    b.memory(fwd, branch_f, k, "residual_add");                         // bias, dropout, residual add
    if (!m.shared_norm) b.memory(fwd, norm_f, norm_f_kernels, norm_fwd);  // norm 2
    gather_into(fwd, b.linear_forward(fwd, T, h, f_up, 0, chunks));    // MLP up (and gate)
    b.memory(fwd, act_f, swiglu ? k : 1, act_fwd);                      // GeLU / SwiGLU
    reduce_after(fwd, b.linear_forward(fwd, T, f, h, reserved, chunks));  // MLP down
    if (m.sandwich_norms) b.memory(fwd, norm_f, norm_f_kernels, norm_fwd);  // post-MLP norm
    b.memory(fwd, branch_f, k, "residual_add");                         // bias, dropout, residual add
    L.forward = fwd;

    PassCost bwd;
    b.memory(bwd, 2.0 * branch_b, 2 * k, "residual_add");               // residual branches
    if (m.sandwich_norms) b.memory(bwd, 2.0 * norm_b, 2 * norm_b_kernels, norm_bwd);  // post-norms
    row_parallel_backward(bwd, f, h);                                   // MLP down
    b.memory(bwd, act_b, swiglu ? 2 * k : 1, act_bwd);                  // activation backward
    column_parallel_backward(bwd, h, f_up);                             // MLP up (and gate)
    if (!m.shared_norm) b.memory(bwd, norm_b, norm_b_kernels, norm_bwd);  // norm 2 backward
    row_parallel_backward(bwd, q, h);                                   // output projection
    bwd += p.cp > 1 ? ring.backward : fused_attention(attn_b, attn_flops_b);
    if (rope) b.memory(bwd, rope_bytes, eager ? 6 : 1);
    if (qk_elements > 0) b.memory(bwd, qk_norm_b, 2 * norm_b_kernels, "rmsnorm_backward");
    if (qkv_grad_b > 0) b.memory(bwd, qkv_grad_b);                     // Q/K/V gradients assembled
    column_parallel_backward(bwd, h, q + 2 * kv);                       // QKV
    b.memory(bwd, norm_b, norm_b_kernels, norm_bwd);                    // norm 1 backward
    if (bias_b > 0) b.memory(bwd, bias_b, 4);                           // bias gradients
    L.backward = bwd;

    if (p.recompute == Recompute::full) L.recompute = fwd;
    else if (p.recompute == Recompute::selective) L.recompute = attention_fwd;  // the attention core

    // ---- embedding (first stage) ----
    BlockCost& emb = out.embedding;
    emb.name = "embedding";
    emb.parameters = double(m.vocab_size) * h / t;
    b.memory(emb.forward, 2.0 * T * h * E, 1, "embedding_forward");     // row gather
    if (m.position_embedding == PositionEmbedding::learned) b.memory(emb.forward, 3.0 * T * h * E);
    // Vocabulary-parallel lookup: each rank holds a slice of the table, partial rows are summed.
    b.tp_exposed(emb.forward, sp ? Collective::reduce_scatter : Collective::all_reduce, act);
    if (sp) b.tp_exposed(emb.backward, Collective::all_gather, act);
    b.memory(emb.backward, 2.0 * T * h * 4.0, 1, "embedding_backward"); // scatter-add into the fp32 gradient

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
    b.memory(head.forward, norm_f, norm_f_kernels, norm_fwd);           // final norm
    // The output layer is Megatron's own column-parallel linear, not a Transformer Engine module:
    // no userbuffers; its input is gathered in 16 bits.
    if (sp) b.tp_exposed(head.forward, Collective::all_gather, act);
    hb.linear_forward(head.forward, T, h, V);
    // Cross entropy over the vocabulary slice; max, sum of exponents and target logit are each
    // summed over the tensor-parallel group (a few bytes per token). Fused: the classifier kernel
    // reads the 16-bit logits, then reads them again and writes their gradient in place. Eager
    // (Megatron's vocab_parallel_cross_entropy, PyTorch's F.cross_entropy on .float()): cast to
    // fp32 (read E, write 4), max (read 4), shift in place (8), exp in place (8), sum (4),
    // normalise in place (8); backward: scale the softmax in place (8), cast back (read 4, write E).
    // Logit soft-cap (Gemma 2): c * tanh(x / c) reads and writes the logits; its backward reads
    // the capped logits and their gradient and writes the gradient.
    if (m.logit_softcap) {
        b.memory(head.forward, 2.0 * T * V * E, 1);
        b.memory(head.backward, 3.0 * T * V * E, 1);
    }
    if (o.fused_cross_entropy) {
        b.memory(head.forward, T * V * E, 1, "cross_entropy_forward");
        b.memory(head.backward, T * V * 2.0 * E, 1, "cross_entropy_backward");
    } else {
        b.memory(head.forward, T * V * (E + 36.0), 6, "cross_entropy_forward");
        b.memory(head.backward, T * V * (12.0 + E), 2, "cross_entropy_backward");
    }
    for (int i = 0; i < 3; ++i) b.tp_exposed(head.forward, Collective::all_reduce, 4.0 * T);
    // Logged metrics: they run after the backward on the same stream and read the same logits;
    // each is the cast, log_softmax, the target gather and the count of counted targets.
    if (o.metric_cross_entropies > 0)
        b.memory(head.forward, o.metric_cross_entropies * T * V * (E + 12.0), 4.0 * o.metric_cross_entropies,
                 "metric_cross_entropy");
    nccl_column_backward(head.backward, hb.linear_backward(head.backward, T, h, V), act);
    b.memory(head.backward, norm_b, norm_b_kernels, norm_bwd);          // final norm backward
    return out;
}

RingAttentionCost all_gather_attention_cost(const RingAttentionInput& in, const ComputeModel& gpu,
                                            const CommGroup& group) {
    RingAttentionCost out;
    const int cp = std::max(1, in.cp);
    const double E = in.element_bytes;
    const double T = in.tokens;                     // 2c per sequence
    const double c = T / (2.0 * in.microbatch);     // tokens of one chunk
    const double bh = in.microbatch * in.heads;
    auto chunk = [&](int g) { return AttentionShape{bh, c, (g + 1.0) * c, in.head_dim, true, in.kernel, in.dropout}; };
    out.first_step = chunk(0);
    out.later_step = chunk(2 * cp - 1);
    // Every rank visits the same number of query-key pairs (chunks r and 2cp-1-r: 2cp c^2 for
    // each batch and head, the ring's count); the slowest pair of kernels sets the pace.
    double forward = 0, backward = 0, forward_flops = 0, backward_flops = 0;
    for (int r = 0; r < cp; ++r) {
        double f = 0, b = 0, ff = 0, fb = 0;
        for (int g : {r, 2 * cp - 1 - r}) {
            const AttentionShape s = chunk(g);
            f += gpu.attention_forward_time(s);
            b += gpu.attention_backward_time(s);
            ff += s.forward_flops();
            fb += s.backward_flops();
        }
        if (f + b > forward + backward) {
            forward = f;
            backward = b;
            forward_flops = ff;
            backward_flops = fb;
        }
    }
    const double kv_bytes = 2.0 * T * in.kv_width * E;  // this rank's K and V
    const double whole = cp * kv_bytes;                 // every rank's
    auto exposed = [](PassCost& pass, double kernels, double flops, double comm) {
        pass.compute_s += kernels;
        pass.attention_s += kernels;
        pass.flops += flops;
        pass.cp_comm_s += comm;
    };
    // K and V travel as two collectives each way (Transformer Engine's gather_along_first_dim and
    // reduce_scatter_along_first_dim are called per tensor; so are tessel run's): two latencies.
    exposed(out.forward, forward, forward_flops, 2.0 * collective_time(Collective::all_gather, whole / 2.0, group));
    exposed(out.backward, backward, backward_flops,
            2.0 * collective_time(Collective::reduce_scatter, whole / 2.0, group));
    // The gathered K/V are put in sequence order (a copy: read and write), and the whole
    // sequence's dK/dV back in rank order before the reduce-scatter; its result is added to the
    // rank's own dK/dV (read two, write one).
    add_memory_kernel(out.forward, gpu, 2.0 * whole, 1);
    add_memory_kernel(out.backward, gpu, 2.0 * whole + 3.0 * kv_bytes, 2);
    out.forward_bytes_sent = (cp - 1) * kv_bytes;
    out.backward_bytes_sent = (cp - 1) * kv_bytes;
    return out;
}

RingAttentionCost ring_attention_cost(const RingAttentionInput& in, const ComputeModel& gpu, const CommGroup& ring) {
    if (in.all_gather) return all_gather_attention_cost(in, gpu, ring);
    RingAttentionCost out;
    const int cp = std::max(1, in.cp);
    const double E = in.element_bytes;
    const double T = in.tokens;                     // 2c per sequence
    const double c = T / (2.0 * in.microbatch);     // tokens of one chunk
    const double bh = in.microbatch * in.heads;
    const double q_width = in.heads * in.head_dim;
    out.first_step = {bh, 2.0 * c, 2.0 * c, in.head_dim, true, in.kernel, in.dropout};
    out.earlier_step = {bh, 2.0 * c, c, in.head_dim, false, in.kernel, in.dropout};
    out.later_step = {bh, c, 2.0 * c, in.head_dim, false, in.kernel, in.dropout};
    // Two consecutive steps' kernels run on alternating streams and share the SMs: each step is
    // timed as half of one grid of both (wave quantization over both steps' thread blocks).
    auto paired = [&](AttentionShape a, bool forward) {
        a.batch_heads *= 2.0;
        return 0.5 * (forward ? gpu.attention_forward_time(a) : gpu.attention_backward_time(a));
    };
    const double f0 = gpu.attention_forward_time(out.first_step);
    const double b0 = gpu.attention_backward_time(out.first_step);
    const double f_step = std::max(paired(out.earlier_step, true), paired(out.later_step, true));
    const double b_step = std::max(paired(out.earlier_step, false), paired(out.later_step, false));

    // Memory traffic of the slowest rank (rank cp−1: all 2c queries at every step).
    const double kv_bytes = 2.0 * T * in.kv_width * E;             // its K and V
    // Step i ≥ 1 keeps the first chunk of the received K/V (a contiguous copy: read and write).
    const double half_kv_copy = 0.5 * kv_bytes * 2.0;
    // Merge of one step's output into the result (read both, write one), and the log-sum-exp
    // correction (fp64 running value: read, read the step's fp32, write). PyTorch's: the step's
    // output cast to fp32 (read E, write 4), then out - block (read 4 + 4, write 4), the product
    // with the broadcast sigmoid (read 4, write 4) and the difference (read 4 + 4, write 4).
    const double lse = bh * 2.0 * c * (8.0 + 4.0 + 8.0);
    const double merge = (in.torch_ring ? E + 4.0 + 32.0 : 3.0 * E) * T * q_width + lse;
    // Backward accumulation of the step's dQ (all 2c queries) and dK/dV (the c keys it used):
    // read two, write one, in the 16-bit type, or PyTorch's fp32 accumulators (read 4 and E, write 4).
    const double acc_bytes = in.torch_ring ? 8.0 + E : 3.0 * E;
    const double accumulate = acc_bytes * (T * q_width + 0.5 * T * 2.0 * in.kv_width);
    // The dK/dV so far travel at the accumulators' width.
    const double dkv_bytes = in.torch_ring ? (4.0 / E) * kv_bytes : kv_bytes;
    // PyTorch copies what it sends into one buffer (torch.cat: read and write): the K/V, and in the
    // backward the fp32 dK/dV; its first step casts its output to fp32, and the result is cast back.
    const double kv_pack = 2.0 * kv_bytes, dkv_pack = 2.0 * dkv_bytes;
    const double output_cast = (E + 4.0) * T * q_width;

    // Transformer Engine's ring: forward, iteration i sends what it holds while its kernel runs;
    // the last holds nothing more to send. Backward, iteration i sends K/V (i = 0), K/V with the
    // dK/dV so far, or the dK/dV alone (the last), each beside that iteration's kernel.
    // PyTorch's (its default rotate method, ALL_GATHER, which torchtitan keeps): the first
    // iteration all-gathers every rank's K/V, in the forward and again in the backward, beside
    // that iteration's kernel alone, and the later ones read their block of it; the backward's
    // dK/dV travel round the ring one hop per iteration, each sent after its iteration's kernel
    // and awaited after the next one's, the last after the loop with nothing beside it.
    const double send_kv = collective_time(Collective::send_recv, kv_bytes, ring);
    const double send_both = collective_time(Collective::send_recv, kv_bytes + dkv_bytes, ring);
    const double send_dkv = collective_time(Collective::send_recv, dkv_bytes, ring);
    const double gather_kv = collective_time(Collective::all_gather, cp * kv_bytes, ring);
    const double interference = gpu.efficiency().sm_interference;
    auto add = [&](PassCost& pass, double kernel, double flops, double comm) {
        pass.compute_s += kernel;
        pass.attention_s += kernel;
        pass.flops += flops;
        const double hidden = std::min(kernel, comm);
        pass.cp_comm_s += comm - hidden;
        pass.cp_comm_hidden_s += hidden;
        pass.compute_s += hidden * interference;  // NCCL's kernels beside the attention
    };
    auto memory = [&](PassCost& pass, double bytes, double kernels) { add_memory_kernel(pass, gpu, bytes, kernels); };
    const double step_flops = out.earlier_step.forward_flops();
    for (int i = 0; i < cp; ++i) {
        const bool last = i == cp - 1;
        const double forward_send = in.torch_ring ? (i == 0 ? gather_kv : 0.0) : (last ? 0.0 : send_kv);
        add(out.forward, i == 0 ? f0 : f_step, i == 0 ? out.first_step.forward_flops() : step_flops, forward_send);
        const double backward_send = in.torch_ring ? (i == 0 ? gather_kv : send_dkv) : (i == 0 || last ? send_kv : send_both);
        add(out.backward, i == 0 ? b0 : b_step,
            i == 0 ? out.first_step.backward_flops() : out.earlier_step.backward_flops(), backward_send);
        if (i > 0 && !in.torch_ring) {  // PyTorch passes the half as a view (key.chunk(2)[0])
            memory(out.forward, half_kv_copy, 1);
            memory(out.backward, half_kv_copy, 1);
        }
        if (i > 0 || !in.torch_ring) memory(out.forward, merge, 2);
        memory(out.backward, accumulate, 2);
        if (in.torch_ring) {
            if (!last) {
                memory(out.forward, kv_pack, 1);
                memory(out.backward, kv_pack, 1);
            }
            memory(out.backward, dkv_pack, 1);
        }
    }
    if (in.torch_ring) {
        if (cp > 1) out.backward.cp_comm_s += send_dkv;  // the last iteration's dK/dV, awaited after the loop
        memory(out.forward, 2.0 * output_cast, 2);
        memory(out.backward, 4.0 * (T * q_width + T * 2.0 * in.kv_width), 3);  // the zeroed fp32 accumulators
    }
    out.forward_bytes_sent = (cp - 1) * kv_bytes;
    out.backward_bytes_sent = in.torch_ring ? (cp - 1) * kv_bytes + cp * dkv_bytes : 2.0 * (cp - 1) * kv_bytes;
    return out;
}

double optimizer_time(double parameters, Precision precision, const ComputeModel& gpu) {
    // Mixed-precision Adam reads the fp32 gradient, master weight and both moments (16 bytes),
    // writes the last three (12) and the 16-bit weight (2); the gradient-norm pass reads the
    // gradient again (4). fp32 training has no 16-bit copy.
    const double bytes_per_param = precision == Precision::fp32 ? 32.0 : 34.0;
    // Multi-tensor kernels: a handful of launches however many tensors.
    return gpu.memory_time(parameters * bytes_per_param, 8, "adamw");
}

double gradient_zeroing_time(double parameters, double bytes, const ComputeModel& gpu) {
    return gpu.memory_time(parameters * bytes, 1);
}

double gradient_accumulation_time(double parameters, double tensors, double gradient_bytes, double accumulator_bytes,
                                  const ComputeModel& gpu) {
    // The same read-two-write-one stream as a residual add.
    return gpu.memory_time(parameters * (gradient_bytes + 2.0 * accumulator_bytes), tensors, "residual_add");
}

}  // namespace tessel
