#include "core/plan.h"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

Recompute parse_recompute(const std::string& s) {
    if (s == "none") return Recompute::none;
    if (s == "selective") return Recompute::selective;
    if (s == "full") return Recompute::full;
    throw InputError("recompute: expected one of none | selective | full, got \"" + s + "\"");
}
Schedule parse_schedule(const std::string& s) {
    if (s == "gpipe") return Schedule::gpipe;
    if (s == "1f1b") return Schedule::one_f_one_b;
    if (s == "interleaved") return Schedule::interleaved;
    throw InputError("schedule: expected one of gpipe | 1f1b | interleaved, got \"" + s + "\"");
}
Precision parse_precision(const std::string& s) {
    if (s == "bf16") return Precision::bf16;
    if (s == "fp16") return Precision::fp16;
    if (s == "fp32") return Precision::fp32;
    if (s == "fp8") return Precision::fp8;
    throw InputError("precision: expected one of bf16 | fp16 | fp32 | fp8, got \"" + s + "\"");
}

std::string Plan::describe() const {
    std::string s = fmt::format("tp{} pp{} dp{}", tp, pp, dp);
    if (cp > 1) s += fmt::format(" cp{}", cp);
    s += fmt::format(" zero{} mb{}", zero_stage, microbatch_size);
    if (virtual_stages > 1) s += fmt::format(" v{}", virtual_stages);
    if (sequence_parallel) s += " sp";
    if (recompute != Recompute::none) s += fmt::format(" rc-{}", to_string(recompute));
    if (recompute == Recompute::full && recompute_layers > 0) s += fmt::format("{}", recompute_layers);
    if (lm_head_layers > 0) s += fmt::format(" head{}", lm_head_layers);
    return s;
}

Plan parse_plan(const json& j, const std::string& file) {
    ObjectReader r(j, file);
    Plan p;
    p.tp = int(r.integer("tp", 1, 1, 1 << 16));
    p.pp = int(r.integer("pp", 1, 1, 1 << 16));
    p.dp = int(r.integer("dp", 1, 1, 1 << 24));
    p.cp = int(r.integer("cp", 1, 1, 1 << 16));
    p.zero_stage = int(r.integer("zero_stage", 0, 0, 3));
    p.microbatch_size = int(r.integer("microbatch_size", 1, 1, 1 << 20));
    // The default, one microbatch per replica, is range-checked with the key (validate_plan).
    p.global_batch_size = int(r.integer("global_batch_size", std::min<std::int64_t>(std::int64_t(p.dp) * p.microbatch_size, 1 << 30), 1, 1 << 30));
    p.seq_length = int(r.integer("seq_length", 2048, 1, 1 << 24));
    p.virtual_stages = int(r.integer("virtual_stages", 1, 1, 1024));
    p.sequence_parallel = r.boolean("sequence_parallel", false);
    p.recompute = parse_recompute(r.choice("recompute", {"none", "selective", "full"}, std::string("none")));
    p.recompute_layers = int(r.integer("recompute_layers", 0, 0, 1 << 20));
    if (p.recompute_layers > 0 && p.recompute != Recompute::full)
        throw input_error(file, "recompute_layers", "0 unless recompute is \"full\" (the layers of each chunk it recomputes)",
                          fmt::format("{} with recompute \"{}\"", p.recompute_layers, to_string(p.recompute)));
    p.lm_head_layers = int(r.integer("lm_head_layers", 0, 0, 1 << 20));
    std::string default_schedule = p.virtual_stages > 1 ? "interleaved" : "1f1b";
    p.schedule = parse_schedule(r.choice("schedule", {"gpipe", "1f1b", "interleaved"}, default_schedule));
    if (p.virtual_stages > 1 && p.schedule != Schedule::interleaved)
        throw input_error(file, "schedule", "\"interleaved\" when virtual_stages > 1",
                          fmt::format("\"{}\" with virtual_stages {}", to_string(p.schedule), p.virtual_stages));
    p.precision = parse_precision(r.choice("precision", {"bf16", "fp16", "fp32", "fp8"}, std::string("bf16")));
    p.placement = r.string("placement", std::string("tp-cp-dp-pp"));
    {
        std::set<std::string> seen;
        std::stringstream ss(p.placement);
        std::string tok;
        while (std::getline(ss, tok, '-')) {
            if (tok != "tp" && tok != "cp" && tok != "dp" && tok != "pp")
                throw input_error(file, "placement", "a '-'-joined order of tp, cp, dp and pp (e.g. \"tp-cp-dp-pp\")",
                                  "\"" + p.placement + "\"");
            seen.insert(tok);
        }
        if (seen.size() != 4)
            throw input_error(file, "placement", "each of tp, cp, dp and pp exactly once", "\"" + p.placement + "\"");
    }
    if (r.has("framework")) p.framework = r.choice("framework", {"megatron", "deepspeed", "torchtitan"});
    p.tp_comm_overlap = r.boolean("tp_comm_overlap", false);
    r.ignore({"num_microbatches", "world_size", "description"});
    r.finish();
    return p;
}

json to_json(const Plan& p) {
    json j{{"tp", p.tp},
                {"pp", p.pp},
                {"dp", p.dp},
                {"cp", p.cp},
                {"zero_stage", p.zero_stage},
                {"microbatch_size", p.microbatch_size},
                {"global_batch_size", p.global_batch_size},
                {"seq_length", p.seq_length},
                {"virtual_stages", p.virtual_stages},
                {"sequence_parallel", p.sequence_parallel},
                {"recompute", to_string(p.recompute)},
                {"schedule", to_string(p.schedule)},
                {"precision", to_string(p.precision)},
                {"placement", p.placement}};
    if (p.recompute_layers > 0) j["recompute_layers"] = p.recompute_layers;
    if (p.lm_head_layers > 0) j["lm_head_layers"] = p.lm_head_layers;
    if (!p.framework.empty()) j["framework"] = p.framework;
    if (p.tp_comm_overlap) j["tp_comm_overlap"] = true;
    return j;
}

int layers_in_recompute_mode(const Plan& p, int chunk_layers) {
    return p.recompute == Recompute::full && p.recompute_layers > 0 ? std::min(chunk_layers, p.recompute_layers)
                                                                      : chunk_layers;
}

double recomputed_layer_fraction(const Plan& p, int num_layers) {
    if (p.recompute_layers <= 0 || num_layers <= 0) return 1.0;
    const int v = p.schedule == Schedule::interleaved ? p.virtual_stages : 1;
    int recomputed = 0;
    for (int layers : layers_per_chunk(num_layers, p.pp, v, p.lm_head_layers)) recomputed += layers_in_recompute_mode(p, layers);
    return double(recomputed) / num_layers;
}

std::vector<int> layers_per_chunk(int num_layers, int pp, int v, int lm_head_layers) {
    if (lm_head_layers > 0) {
        std::vector<int> out = layers_per_chunk(num_layers + lm_head_layers, pp, v);
        out.back() -= lm_head_layers;
        return out;
    }
    const int chunks = pp * v;
    std::vector<int> out(chunks, num_layers / chunks);
    int extra = num_layers % chunks;
    // Hand the remainder to the middle chunks, outward from the centre.
    for (int k = 0; extra > 0; ++k) {
        int idx = chunks / 2 + ((k % 2) ? -(k + 1) / 2 : k / 2);
        idx = std::clamp(idx, 0, chunks - 1);
        out[idx]++;
        --extra;
    }
    if (chunks <= 3 || std::all_of(out.begin() + 2, out.end() - 1, [&](int n) { return n == out[1]; })) return out;
    // Some middle chunks got one more than others, which no framework expresses: every middle
    // chunk takes the larger count and the two ends share what is left (81 layers on 4 stages:
    // 20 21 21 19, as --decoder-first/last-pipeline-num-layers writes it), the first the larger half.
    const int middle = num_layers / chunks + 1;
    const int ends = num_layers - (chunks - 2) * middle;
    if (ends < 2) return out;  // the ends would be empty: left unsupported
    std::fill(out.begin() + 1, out.end() - 1, middle);
    out.front() = (ends + 1) / 2;
    out.back() = ends / 2;
    return out;
}

// layers_per_chunk's split without building it (the search asks for every v of every pipeline
// depth, which at 100,000 layers took minutes): with n chunks of q = L / n and e = L % n spare
// layers, the spares fill the middle chunks from the centre out, so the middles come out equal
// when there are none (e = 0) or enough for every middle (e >= n - 2); otherwise every middle takes
// q + 1 and the two ends share the L - (n - 2)(q + 1) = 2q + e - n + 2 left, at least one each.
bool pipeline_split_supported(int num_layers, int pp, int v, int lm_head_layers) {
    if (lm_head_layers > 0) {
        if (pp < 2 || !pipeline_split_supported(num_layers + lm_head_layers, pp, v)) return false;
        return layers_per_chunk(num_layers + lm_head_layers, pp, v).back() > lm_head_layers;
    }
    if (pp < 1 || v < 1 || std::int64_t(pp) * v > num_layers) return false;
    const int n = pp * v, q = num_layers / n, e = num_layers % n;
    return n <= 3 || e == 0 || e >= n - 2 || 2 * q + e - n + 2 >= 2;
}

void validate_plan(const Plan& p, const ModelSpec& m, int world_size, const std::string& file) {
    // Products in 64 bits: each size alone is in range, their product need not be.
    const std::int64_t gpus = std::int64_t(p.tp) * p.pp * p.dp * p.cp;
    if (gpus > kMaxPlanGpus)
        throw input_error(file, "tp,pp,dp,cp", fmt::format("tp*pp*dp*cp at most {} GPUs", kMaxPlanGpus),
                          fmt::format("{}*{}*{}*{} = {}", p.tp, p.pp, p.dp, p.cp, gpus));
    if (world_size > 0 && p.world_size() != world_size)
        throw input_error(file, "tp,pp,dp,cp",
                          fmt::format("tp*pp*dp*cp equal to the world size {}", world_size),
                          fmt::format("{}*{}*{}*{} = {}", p.tp, p.pp, p.dp, p.cp, p.world_size()));
    if (m.num_attention_heads % p.tp != 0)
        throw input_error(file, "tp", fmt::format("a divisor of the model's {} attention heads", m.num_attention_heads),
                          std::to_string(p.tp));
    if (m.num_kv_heads % p.tp != 0 && p.tp % m.num_kv_heads != 0)
        throw input_error(file, "tp", fmt::format("a divisor or multiple of the model's {} KV heads", m.num_kv_heads),
                          std::to_string(p.tp));
    if (m.ffn_hidden_size % p.tp != 0)
        throw input_error(file, "tp", fmt::format("a divisor of ffn_hidden_size {}", m.ffn_hidden_size), std::to_string(p.tp));
    if (p.pp * p.virtual_stages > m.num_layers)
        throw input_error(file, "pp", fmt::format("pp*virtual_stages at most the model's {} layers", m.num_layers),
                          fmt::format("{}*{}", p.pp, p.virtual_stages));
    const bool split_supported = pipeline_split_supported(m.num_layers, p.pp, p.virtual_stages, p.lm_head_layers);
    if (p.lm_head_layers > 0 && !split_supported)
        throw input_error(file, "lm_head_layers",
                          fmt::format("0 without a pipeline, else a count the last of the {} chunks can give up and "
                                      "keep a layer (the {} layers plus it split as for virtual_stages)",
                                      p.pp * p.virtual_stages, m.num_layers),
                          std::to_string(p.lm_head_layers));
    if (p.virtual_stages > 1 && !split_supported)
        throw input_error(file, "virtual_stages",
                          fmt::format("a count that splits the {} layers into pp*virtual_stages equal chunks, or equal "
                                      "but for a shorter first and last chunk",
                                      m.num_layers),
                          std::to_string(p.virtual_stages));
    if (p.virtual_stages > 1 && p.pp < 2)
        throw input_error(file, "virtual_stages", "1 unless pp > 1 (interleaving needs a pipeline)", std::to_string(p.virtual_stages));
    // Megatron interleaves only with --num-layers-per-virtual-pipeline-stage (more than one chunk).
    if (p.schedule == Schedule::interleaved && p.virtual_stages < 2)
        throw input_error(file, "schedule",
                          "\"1f1b\" or \"gpipe\" with virtual_stages 1 (the interleaved schedule runs several model "
                          "chunks per pipeline rank: pp > 1 and virtual_stages > 1)",
                          fmt::format("\"interleaved\" with virtual_stages {} and pp {}", p.virtual_stages, p.pp));
    if (p.recompute_layers > 0 && split_supported) {
        const auto chunks = layers_per_chunk(m.num_layers, p.pp, p.virtual_stages, p.lm_head_layers);
        const int most = *std::max_element(chunks.begin(), chunks.end());
        if (p.recompute_layers > most)
            throw input_error(file, "recompute_layers",
                              fmt::format("at most the {} layers of the plan's largest model chunk (0 recomputes "
                                          "every layer)",
                                          most),
                              std::to_string(p.recompute_layers));
    }
    const std::int64_t per_microbatch_round = std::int64_t(p.dp) * p.microbatch_size;
    if (p.global_batch_size % per_microbatch_round != 0)
        throw input_error(file, "global_batch_size",
                          fmt::format("a multiple of dp*microbatch_size = {}*{} = {}", p.dp, p.microbatch_size,
                                      per_microbatch_round),
                          std::to_string(p.global_batch_size));
    if (p.num_microbatches() > kMaxMicrobatchesPerStep)
        throw input_error(file, "global_batch_size",
                          fmt::format("at most {} microbatches per step (global/(dp*microbatch) = {}: a larger "
                                      "microbatch or more data parallelism takes fewer)",
                                      kMaxMicrobatchesPerStep, p.num_microbatches()),
                          std::to_string(p.global_batch_size));
    if (p.schedule == Schedule::interleaved && p.num_microbatches() % p.pp != 0)
        throw input_error(file, "global_batch_size",
                          fmt::format("microbatches per step (global/(dp*microbatch) = {}) a multiple of pp {} for "
                                      "the interleaved schedule (Megatron's rule)",
                                      p.num_microbatches(), p.pp),
                          std::to_string(p.global_batch_size));
    if (p.cp > 1 && p.seq_length % (2 * p.cp) != 0)
        throw input_error(file, "seq_length", fmt::format("a multiple of 2*cp = {}", 2 * p.cp), std::to_string(p.seq_length));
    if (p.sequence_parallel && p.tp == 1)
        throw input_error(file, "sequence_parallel", "false when tp = 1 (it splits the sequence over the TP group)", "true");
    if (p.tp_comm_overlap && !p.sequence_parallel)
        throw input_error(file, "tp_comm_overlap",
                          "false unless sequence_parallel is on with tp > 1 (the overlap runs sequence parallelism's "
                          "all-gathers and reduce-scatters beside their GEMMs; Megatron requires --sequence-parallel)",
                          "true");
    if (p.sequence_parallel && p.seq_length / p.cp % p.tp != 0)
        throw input_error(file, "seq_length", fmt::format("divisible by tp {} with sequence parallelism", p.tp),
                          std::to_string(p.seq_length));
    if (m.position_embedding == PositionEmbedding::learned && p.seq_length > m.max_position_embeddings)
        throw input_error(file, "seq_length",
                          fmt::format("at most the model's {} learned positions", m.max_position_embeddings),
                          std::to_string(p.seq_length));
}

}  // namespace tessel
