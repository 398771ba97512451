// Small helpers shared by the planner tests.
#pragma once
#include "core/model_spec.h"
#include "core/plan.h"

namespace tessel::test {

inline Plan make_plan(int tp, int pp, int dp, int cp, int mb, int gbs, int seq, int v = 1, int zero = 0,
                      Recompute rc = Recompute::none, bool sp = false) {
    Plan p;
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.cp = cp;
    p.microbatch_size = mb;
    p.global_batch_size = gbs;
    p.seq_length = seq;
    p.virtual_stages = v;
    p.schedule = v > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    p.zero_stage = zero;
    p.recompute = rc;
    p.sequence_parallel = sp;
    return p;
}

// A Llama-style model with the given head counts and depth, for rule tests.
inline ModelSpec toy_model(int heads, int kv_heads, int layers, int head_dim = 64, int seq = 2048) {
    ModelSpec m;
    m.name = "toy";
    m.num_layers = layers;
    m.num_attention_heads = heads;
    m.num_kv_heads = kv_heads;
    m.head_dim = head_dim;
    m.hidden_size = heads * head_dim;
    m.ffn_hidden_size = 4 * m.hidden_size;
    m.vocab_size = 32000;
    m.seq_length = seq;
    m.max_position_embeddings = seq;
    m.activation = Activation::swiglu;
    m.norm = Norm::rmsnorm;
    m.position_embedding = PositionEmbedding::rope;
    m.source = "native";
    return m;
}

}  // namespace tessel::test
