#include "planner/feasibility.h"

#include <algorithm>

#include "core/schedule.h"
#include "core/units.h"
#include "simulator/memory_model.h"

namespace tessel {

const char* describe(Rule r) {
    switch (r) {
        case Rule::ok: return "ok";
        case Rule::heads_tp: return "TP must divide the attention heads";
        case Rule::kv_heads_tp: return "TP must divide the KV heads, or the KV heads divide TP";
        case Rule::ffn_tp: return "TP must divide the FFN width";
        case Rule::layers_pp:
            return "PP x virtual stages must split the layers into equal chunks, or equal ones but for a shorter "
                   "first and last chunk";
        case Rule::cp_seq: return "the sequence must be a multiple of 2 x CP";
        case Rule::batch_dp: return "the global batch must be a multiple of DP x microbatch";
        case Rule::microbatches: return "at most 65536 microbatches per step (global batch / (DP x microbatch))";
        case Rule::interleave_microbatches: return "interleaving needs the microbatches per step to be a multiple of PP";
        case Rule::sp_seq: return "sequence parallelism needs TP > 1 and TP dividing the sequence per CP rank";
        case Rule::positions: return "the sequence must fit the model's learned position table";
        case Rule::framework:
            return "the --emit target must be able to run the plan (ZeRO stage, CP, interleaving, SP, KV heads per TP rank, "
                   "sequence length per TP and CP rank)";
        case Rule::node_groups:
            return "each parallel group must sit on the nodes as the first does: TP, and each group from TP outward, "
                   "within a node or on whole nodes";
        case Rule::memory: return "the plan must fit in GPU memory with the requested headroom";
    }
    return "?";
}

Rule check_rules(const ModelSpec& m, const Plan& p) {
    if (m.num_attention_heads % p.tp != 0) return Rule::heads_tp;
    if (m.num_kv_heads % p.tp != 0 && p.tp % m.num_kv_heads != 0) return Rule::kv_heads_tp;
    if (m.ffn_hidden_size % p.tp != 0) return Rule::ffn_tp;
    if (!pipeline_split_supported(m.num_layers, p.pp, p.virtual_stages, p.lm_head_layers) || (p.virtual_stages > 1 && p.pp < 2))
        return Rule::layers_pp;
    if (p.cp > 1 && p.seq_length % (2 * p.cp) != 0) return Rule::cp_seq;
    if (p.global_batch_size % (p.dp * p.microbatch_size) != 0) return Rule::batch_dp;
    if (p.num_microbatches() > kMaxMicrobatchesPerStep) return Rule::microbatches;
    if (p.virtual_stages > 1 && p.num_microbatches() % p.pp != 0) return Rule::interleave_microbatches;
    if (p.sequence_parallel && (p.tp < 2 || (p.seq_length / p.cp) % p.tp != 0)) return Rule::sp_seq;
    if (m.position_embedding == PositionEmbedding::learned && p.seq_length > m.max_position_embeddings)
        return Rule::positions;
    return Rule::ok;
}

double memory_lower_bound_GiB(const ModelSpec& m, const Plan& p, const ActivationOptions& opt) {
    return memory_lower_bound_GiB(m, p, opt, parameters_on_rank(m, p, 0), parameters_on_rank(m, p, p.pp - 1));
}

double memory_lower_bound_GiB(const ModelSpec& m, const Plan& p, const ActivationOptions& opt, double params_first,
                              double params_last) {
    const int shard = p.dp * p.cp;
    const double first = model_state_bytes(params_first, p.zero_stage, shard, p.precision).total();
    const double last = model_state_bytes(params_last, p.zero_stage, shard, p.precision).total();
    // Rank 0 runs its warm-up forwards and one more before its first backward frees anything.
    const int v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
    const int microbatches = p.num_microbatches();
    const int in_flight =
        std::min(warmup_forwards(p.schedule, p.pp, 0, microbatches, v, opt.all_forwards_first_at_m_equal_pp) + 1,
                 microbatches * v);
    int fewest = m.num_layers;
    const auto layers = layers_per_chunk(m.num_layers, p.pp, v, p.lm_head_layers);
    for (int c = 0; c < v; ++c) fewest = std::min(fewest, layers[c * p.pp]);
    const double stored = layer_stored_activation_bytes(m, p, opt);
    const double rank0 = first + double(in_flight) * fewest * stored;
    return (std::max(rank0, last) + kRuntimeReservedBytes) / units::GiB;
}

double usable_memory_GiB(const ClusterSpec& c, double headroom) { return c.gpu.memory_GiB * (1.0 - headroom); }

}  // namespace tessel
