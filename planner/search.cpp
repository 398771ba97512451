#include "planner/search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/plan_choices.h"
#include "planner/step_bound.h"
#include "simulator/memory_model.h"

namespace tessel {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();
const char* const kPlacements[] = {"tp-cp-dp-pp", "tp-cp-pp-dp", "tp-pp-cp-dp", "tp-dp-cp-pp", "tp-pp-dp-cp", "tp-dp-pp-cp"};

int placement_index(const std::string& s) {
    for (int i = 0; i < 6; ++i)
        if (s == kPlacements[i]) return i;
    return 0;
}

// Group.recompute beyond Recompute's values: full recompute of the fewest leading layers of each
// chunk that fit (Megatron's --recompute-method block), chosen per ZeRO stage when evaluated.
constexpr std::int8_t kBlockRecompute = 3;

// The plan whose step-time bounds hold for plan p of a group with recompute choice `recompute`:
// block recompute re-runs a subset of full's layers, so the plan without recompute bounds it.
Plan timing_probe(Plan p, std::int8_t recompute) {
    if (recompute == kBlockRecompute) p.recompute = Recompute::none;
    return p;
}

// One point of the space without its ZeRO stage: the unit the bound is computed and sorted on.
struct Group {
    std::int32_t tp, pp, cp, dp, mb, v, lm_head_layers;
    std::int8_t recompute, sp, placement, zeros;  // zeros: bit z set = try ZeRO stage z
    double key;                                   // lower bound on the objective's score
    double step_bound;                            // lower bound on the step time (s)
    double params_first, params_last;             // parameters on the first and last pipeline rank
};

Plan plan_of(const Group& g, const PlanRequest& req, int zero) {
    Plan p;
    p.tp = g.tp;
    p.pp = g.pp;
    p.cp = g.cp;
    p.dp = g.dp;
    p.microbatch_size = g.mb;
    p.virtual_stages = g.v;
    p.lm_head_layers = g.lm_head_layers;
    p.schedule = g.v > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    p.recompute = g.recompute == kBlockRecompute ? Recompute::full : Recompute(g.recompute);
    p.sequence_parallel = g.sp;
    p.placement = kPlacements[int(g.placement)];
    p.zero_stage = zero;
    p.global_batch_size = req.global_batch_size;
    p.seq_length = req.seq_length;
    p.precision = req.precision;
    return p;
}

// ZeRO stages to try, as a bit mask; they only differ when something shards them.
int zero_mask(int tp, int dp, int cp, int pp, const SpaceLimits& l) {
    int mask = 0;
    // torchtitan: ZeRO 1 is what its FSDP does under pipelining, and only there.
    const bool pipelined_fsdp = l.pipeline_fsdp_gathers_once && pp > 1;
    for (int z : l.zero_stages) {
        if (l.pipeline_fsdp_gathers_once && pipelined_fsdp != (z == 1)) continue;
        if (l.shards_over_cp && cp > 1 && z < 2 && !pipelined_fsdp) continue;
        if (l.zero_with_pipeline_max1 && pp > 1 && z > 1) continue;
        if (l.ddp_only_1d && z == 0 && dp > 1 && (tp > 1 || pp > 1 || cp > 1)) continue;
        mask |= 1 << z;
    }
    if (dp * cp == 1) return mask & 1 ? 1 : mask & -mask;  // unsharded: one stage stands for all
    return mask;
}
int count_bits(int mask) { return __builtin_popcount(unsigned(mask)); }
int highest_bit(int mask) { return 31 - __builtin_clz(unsigned(mask)); }

struct Enumeration {
    std::vector<Group> groups;
    long long considered = 0, rejected = 0;
    std::array<long long, kNumRules> rejected_by_rule{};
};

// Enumerates the (tp, pp, cp) shapes numbered shard, shard + shards, ... so that several threads
// can split the work, each with its own StepBound (its caches then need no sharing).
Enumeration enumerate(const ModelSpec& m, const ClusterSpec& c, const PlanRequest& req, const std::vector<int>& worlds,
                      const StepBound& bound, const ActivationOptions& activations, Objective objective,
                      const SpaceLimits& limits, int shard, int shards) {
    Enumeration e;
    long long shape_number = 0;
    std::map<std::tuple<int, int, int, int>, std::vector<std::string>> placements_cache;
    auto placements = [&](const ParallelSizes& s) -> const std::vector<std::string>& {
        auto key = std::make_tuple(s.tp, s.cp, s.dp, s.pp);
        auto it = placements_cache.find(key);
        if (it == placements_cache.end())
            it = placements_cache
                     .emplace(key, limits.placement.empty() ? distinct_placements(s, c.gpus_per_node)
                                                            : std::vector<std::string>{limits.placement})
                     .first;
        return it->second;
    };
    std::map<std::tuple<int, int, int, int>, std::vector<double>> params_cache;
    // The split that spares the last stage the LM head's worth of layers is tried beside the plain
    // one where the framework writes uneven splits.
    const std::vector<int> head_choices = lm_head_layer_choices(m);
    auto reject = [&](Rule r, long long n) {
        e.rejected += n;
        e.rejected_by_rule[int(r)] += n;
    };
    for (int world : worlds)
        for (int tp : divisors(world))
            for (int pp : divisors(world / tp))
                for (int cp : divisors(world / tp / pp)) {
                    if (shape_number++ % shards != shard) continue;
                    if (cp > 1 && !limits.context_parallel) continue;
                    const int dp = world / (tp * pp * cp);
                    const ParallelSizes sizes{tp, cp, dp, pp};
                    // Placements whose groups the simulator's one representative per dimension does
                    // not describe are rejected (groups_sit_alike).
                    const auto& all_orders = placements(sizes);
                    std::vector<std::string> orders;
                    for (const auto& order : all_orders)
                        if (groups_sit_alike(order, sizes, c.gpus_per_node)) orders.push_back(order);
                    const int zeros = zero_mask(tp, dp, cp, pp, limits);
                    std::vector<int> sp_options{0, 1};
                    if (tp == 1 || limits.sequence_parallel == SpaceLimits::SequenceParallel::off) sp_options = {0};
                    else if (limits.sequence_parallel == SpaceLimits::SequenceParallel::with_tp) sp_options = {1};
                    // Block recompute only serves time: it never needs less memory than full.
                    const int recompute_kinds =
                        limits.block_recompute && objective != Objective::memory ? kBlockRecompute + 1 : 3;
                    const long long per_order = (long long)recompute_kinds * (long long)sp_options.size() * count_bits(zeros);
                    const long long per_v = per_order * (long long)orders.size();
                    auto mbs = microbatch_sizes(req.global_batch_size, dp);
                    // (lm_head_layers, v) splits of the layers over the pipeline.
                    std::vector<std::pair<int, int>> splits;
                    for (int head : head_choices) {
                        if (head > 0 && (pp < 2 || !limits.uneven_pipeline)) continue;
                        for (int v : virtual_stage_counts(m.num_layers, pp, head))
                            if (v == 1 || limits.interleaving) splits.emplace_back(head, v);
                    }
                    const long long shapes = (long long)std::max<std::size_t>(1, mbs.size()) * splits.size();
                    const long long subtree = shapes * per_v;
                    e.considered += shapes * per_order * (long long)all_orders.size();
                    if (orders.size() < all_orders.size())
                        reject(Rule::node_groups, shapes * per_order * (long long)(all_orders.size() - orders.size()));
                    if (orders.empty()) continue;
                    if (zeros == 0) {
                        reject(Rule::framework, subtree);
                        continue;
                    }
                    if (!limits.uneven_pipeline && m.num_layers % pp != 0) {
                        reject(Rule::framework, subtree);
                        continue;
                    }
                    if (limits.seq_divisible_by_2_tp_cp && req.seq_length % (2 * tp * cp) != 0) {
                        reject(Rule::framework, subtree);
                        continue;
                    }
                    if (limits.kv_heads_split_by_tp && m.num_kv_heads % tp != 0) {
                        reject(Rule::framework, subtree);
                        continue;
                    }
                    if (limits.mixed_precision_needs_fsdp && req.precision != Precision::fp32 && (tp > 1 || pp > 1) &&
                        dp * cp == 1) {
                        reject(Rule::framework, subtree);
                        continue;
                    }

                    Group g{tp, pp, cp, dp, 1, 1, 0, 0, 0, 0, std::int8_t(zeros), 0, 0, 0, 0};
                    g.sp = std::int8_t(sp_options[0]);
                    Plan probe = plan_of(g, req, 0);
                    // Rules of the (tp, pp, cp) shape first, on its simplest variant.
                    Rule r = check_rules(m, probe);
                    if (r != Rule::ok && r != Rule::layers_pp && r != Rule::batch_dp && r != Rule::microbatches) {
                        reject(r, subtree);
                        continue;
                    }
                    if (mbs.empty()) {
                        reject(Rule::batch_dp, subtree);
                        continue;
                    }
                    for (int mb : mbs)
                        for (const auto& [head, v] : splits) {
                            g.mb = mb;
                            g.v = v;
                            g.lm_head_layers = head;
                            probe = plan_of(g, req, 0);
                            r = check_rules(m, probe);
                            if (r != Rule::ok) {
                                reject(r, per_v);
                                continue;
                            }
                            auto& params = params_cache[std::make_tuple(tp, pp, v, head)];
                            if (params.empty()) params = {parameters_on_rank(m, probe, 0), parameters_on_rank(m, probe, pp - 1)};
                            g.params_first = params[0];
                            g.params_last = params[1];
                            for (int rc = 0; rc < recompute_kinds; ++rc)
                                for (int sp : sp_options) {
                                    g.recompute = std::int8_t(rc);
                                    g.sp = std::int8_t(sp);
                                    if (sp) {
                                        probe = plan_of(g, req, 0);
                                        r = check_rules(m, probe);
                                        if (r != Rule::ok) {
                                            reject(r, (long long)orders.size() * count_bits(zeros));
                                            continue;
                                        }
                                    }
                                    for (const auto& order : orders) {
                                        g.placement = std::int8_t(placement_index(order));
                                        probe = plan_of(g, req, 0);
                                        g.step_bound = bound(timing_probe(probe, g.recompute));
                                        // The key bounds every ZeRO stage: memory's is smallest with
                                        // the most sharding (the last stage tried).
                                        double memory_key = 0;
                                        if (objective == Objective::memory) {
                                            probe.zero_stage = highest_bit(zeros);
                                            memory_key = memory_lower_bound_GiB(m, probe, activations, g.params_first, g.params_last);
                                        }
                                        g.key = score_bound(g.step_bound, memory_key, world, objective);
                                        e.groups.push_back(g);
                                    }
                                }
                        }
                }
    return e;
}

bool same_but_placement(const SimulationResult& a, const SimulationResult& b) {
    const Plan &x = a.plan, &y = b.plan;
    const bool same_plan = std::tie(x.tp, x.pp, x.dp, x.cp, x.zero_stage, x.microbatch_size, x.global_batch_size,
                                    x.seq_length, x.virtual_stages, x.sequence_parallel, x.recompute,
                                    x.recompute_layers, x.lm_head_layers, x.schedule, x.precision) ==
                           std::tie(y.tp, y.pp, y.dp, y.cp, y.zero_stage, y.microbatch_size, y.global_batch_size,
                                    y.seq_length, y.virtual_stages, y.sequence_parallel, y.recompute,
                                    y.recompute_layers, y.lm_head_layers, y.schedule, y.precision);
    return same_plan && std::abs(a.step_time_s - b.step_time_s) <= 1e-9 * a.step_time_s &&
           a.memory_GiB.peak == b.memory_GiB.peak;
}

// The K best simulated so far, and the score a plan must beat to enter them.
class TopK {
public:
    TopK(int k, Objective o) : k_(std::max(1, k)), objective_(o) {}
    double threshold() const { return threshold_.load(std::memory_order_relaxed); }
    void offer(SimulationResult r) {
        std::lock_guard<std::mutex> lock(mutex_);
        // A placement that times exactly like another placement of the same plan adds nothing to
        // the ranking: keep the one that ranks first (Megatron's default order on ties).
        for (auto& b : best_)
            if (same_but_placement(b, r)) {
                if (ranks_before(r, b, objective_)) b = std::move(r);
                return;
            }
        best_.push_back(std::move(r));
        rank(best_, objective_);
        if (int(best_.size()) > k_) best_.resize(k_);
        if (int(best_.size()) == k_) threshold_.store(score(best_.back(), objective_), std::memory_order_relaxed);
        best_score_.store(score(best_.front(), objective_), std::memory_order_relaxed);
    }
    std::vector<SimulationResult> take() { return std::move(best_); }
    double best_score() const { return best_score_.load(std::memory_order_relaxed); }

private:
    int k_;
    Objective objective_;
    std::mutex mutex_;
    std::vector<SimulationResult> best_;
    std::atomic<double> threshold_{kInf};
    std::atomic<double> best_score_{0.0};
};

// The nearest misses by memory, for the message when nothing fits. Plans come with their exact
// peak or only a lower bound on it (those pruned early), so more are kept than are shown:
// throw_no_plan ranks them by the exact peak. Placements of one plan share their memory: one each.
class Misses {
public:
    static constexpr std::size_t kKept = 24;
    void offer(const Plan& p, double peak_GiB) {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto same_plan = [&](const auto& x) { return x.first.describe() == p.describe(); };  // placement aside
        auto it = std::find_if(misses_.begin(), misses_.end(), same_plan);
        if (it != misses_.end()) {
            if (peak_GiB >= it->second) return;
            misses_.erase(it);
        }
        misses_.push_back({p, peak_GiB});
        std::sort(misses_.begin(), misses_.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        if (misses_.size() > kKept) misses_.resize(kKept);
    }
    std::vector<std::pair<Plan, double>> take() { return std::move(misses_); }

private:
    std::mutex mutex_;
    std::vector<std::pair<Plan, double>> misses_;
};

// Exact peak memory, shared by the placements of a plan (memory does not depend on placement).
class MemoryCache {
public:
    double peak_GiB(const ModelSpec& m, const ClusterSpec& c, const Plan& p, const SimulateOptions& o) {
        const auto key = std::make_tuple(p.tp, p.pp, p.cp, p.dp, p.microbatch_size, p.virtual_stages, p.lm_head_layers,
                                         int(p.recompute), p.recompute_layers, p.sequence_parallel, p.zero_stage);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = cache_.find(key);
            if (it != cache_.end()) return it->second;
        }
        const double peak = estimate_memory(m, c, p, o).peak;
        std::lock_guard<std::mutex> lock(mutex_);
        cache_.emplace(key, peak);
        return peak;
    }

private:
    std::mutex mutex_;
    std::map<std::tuple<int, int, int, int, int, int, int, int, int, bool, int>, double> cache_;
};

std::string rule_summary(const SearchResult& r) {
    std::vector<std::pair<long long, int>> counts;
    for (int i = 1; i < kNumRules; ++i)
        if (r.rejected_by_rule[i] > 0) counts.push_back({r.rejected_by_rule[i], i});
    std::sort(counts.rbegin(), counts.rend());
    std::string s;
    for (const auto& [n, rule] : counts) s += fmt::format("\n  {:>10L} plans: {}", n, describe(Rule(rule)));
    return s;
}

// Why nothing fits: the rule that rejected everything, or the nearest misses by memory.
[[noreturn]] void throw_no_plan(const ModelSpec& m, const ClusterSpec& c, const SearchResult& r,
                                const SearchOptions& o, std::vector<std::pair<Plan, double>> misses) {
    const PlanRequest& q = r.request;
    std::string msg = fmt::format("{} on {} GPUs ({}), global batch {}, sequence {}: ", m.name, q.num_gpus, c.name,
                                  q.global_batch_size, q.seq_length);
    if (r.rejected == r.considered) {
        msg += fmt::format("all {} plans considered break a rule:{}", r.considered, rule_summary(r));
        if (r.rejected_by_rule[int(Rule::heads_tp)] > 0 || r.rejected_by_rule[int(Rule::kv_heads_tp)] > 0)
            msg += fmt::format("\n  (the model has {} attention heads and {} KV heads)", m.num_attention_heads, m.num_kv_heads);
        if (r.rejected_by_rule[int(Rule::batch_dp)] > 0)
            msg += fmt::format("\n  (try a --global-batch that is a multiple of the data-parallel sizes the GPU count allows)");
        throw NoPlanFits(msg);
    }
    const double usable = usable_memory_GiB(c, o.memory_headroom);
    msg += fmt::format("{} plans pass the rules but none fits in {:.1f} GiB per GPU ({:.0f} GiB less {:.0f}% headroom)",
                       r.considered - r.rejected, usable, c.gpu.memory_GiB, 100 * o.memory_headroom);
    std::vector<std::pair<Plan, MemoryBreakdown>> closest;
    for (const auto& miss : misses) closest.push_back({miss.first, estimate_memory(m, c, miss.first, o.simulate)});
    std::stable_sort(closest.begin(), closest.end(),
                     [](const auto& a, const auto& b) { return a.second.peak < b.second.peak; });
    if (closest.size() > 3) closest.resize(3);
    if (!closest.empty()) msg += "; the closest:";
    for (const auto& [p, b] : closest) {
        msg += fmt::format(
            "\n  {} ({}): {:.1f} GiB (weights {:.1f}, gradients {:.1f}, optimizer {:.1f}, activations {:.1f}, "
            "buffers {:.1f}) vs {:.1f} usable",
            p.describe(), p.placement, b.peak, b.weights, b.gradients, b.optimizer, b.activations, b.buffers, usable);
    }
    msg += "\n  (more GPUs, a smaller --memory-headroom, a shorter --seq or a smaller model may fit)";
    throw NoPlanFits(msg);
}

}  // namespace

std::vector<int> world_sizes_to_search(const ClusterSpec& c, int num_gpus, Objective o) {
    std::vector<int> out{num_gpus};
    if (o != Objective::tokens_per_dollar) return out;
    const bool within_one_node = num_gpus <= c.gpus_per_node;
    for (int n = num_gpus; n % 2 == 0;) {
        n /= 2;
        if (!within_one_node && n % c.gpus_per_node != 0) break;
        out.push_back(n);
    }
    return out;
}

SearchResult search_plans(const ModelSpec& m, const ClusterSpec& c, const PlanRequest& req, const SearchOptions& o) {
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    if (req.num_gpus < 1 || req.num_gpus > c.num_gpus())
        throw InputError(fmt::format("plan request: {} GPUs asked for but cluster '{}' has {}", req.num_gpus, c.name, c.num_gpus()));
    if (req.global_batch_size < 1) throw InputError("--global-batch: expected a positive number of sequences");
    if (req.seq_length < 1) throw InputError("--seq: expected a positive sequence length");
    if (o.top_k < 1) throw InputError(fmt::format("--top: expected at least 1, got {}", o.top_k));

    SimulateOptions sim = o.simulate;
    sim.memory_headroom = o.memory_headroom;
    const double usable = usable_memory_GiB(c, o.memory_headroom);
    const ActivationOptions activations = activation_options(m, sim);

    SearchResult result;
    result.request = req;
    result.world_sizes = world_sizes_to_search(c, req.num_gpus, o.objective);
    int threads = o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));
    Enumeration e;
    {
        std::vector<Enumeration> parts(threads);
        std::vector<std::thread> pool;
        std::exception_ptr error;
        std::mutex error_mutex;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                try {
                    const StepBound bound(m, c, sim);
                    SpaceLimits limits = limits_for(o.framework);
                    // The overlap needs sequence parallelism's collectives (layer_cost.cpp).
                    if (o.simulate.tp_comm_overlap) limits.sequence_parallel = SpaceLimits::SequenceParallel::with_tp;
                    // Context parallelism runs fused attention kernels on its chunks (simulate()).
                    if (!o.simulate.fused_attention) limits.context_parallel = false;
                    // Megatron's local layers (below compute capability 8.0, where it runs without
                    // Transformer Engine) build RMSNorm as WrappedTorchNorm, which asserts against
                    // sequence parallelism (megatron/core/transformer/torch_norm.py).
                    if (o.framework == Framework::megatron && !c.gpu.flash_attention && m.norm == Norm::rmsnorm)
                        limits.sequence_parallel = SpaceLimits::SequenceParallel::off;
                    parts[t] = enumerate(m, c, req, result.world_sizes, bound, activations, o.objective, limits, t,
                                         threads);
                } catch (...) {
                    std::lock_guard<std::mutex> lock(error_mutex);
                    if (!error) error = std::current_exception();
                }
            });
        for (auto& t : pool) t.join();
        if (error) std::rethrow_exception(error);
        for (auto& part : parts) {
            e.considered += part.considered;
            e.rejected += part.rejected;
            for (int i = 0; i < kNumRules; ++i) e.rejected_by_rule[i] += part.rejected_by_rule[i];
            e.groups.insert(e.groups.end(), part.groups.begin(), part.groups.end());
        }
    }
    result.considered = e.considered;
    result.rejected = e.rejected;
    result.rejected_by_rule = e.rejected_by_rule;
    // Ties in the bound are ordered by the plan's fields, so the visiting order (and with one thread
    // the counts) do not depend on how the enumeration was split.
    std::sort(e.groups.begin(), e.groups.end(), [](const Group& a, const Group& b) {
        if (a.key != b.key) return a.key < b.key;
        return std::tie(a.tp, a.pp, a.cp, a.dp, a.mb, a.v, a.recompute, a.sp, a.placement) <
               std::tie(b.tp, b.pp, b.cp, b.dp, b.mb, b.v, b.recompute, b.sp, b.placement);
    });

    long long total_leaves = 0;
    for (const Group& g : e.groups) total_leaves += count_bits(g.zeros);

    // The memory objective keeps more than K by memory, then ranks those by (memory, time).
    const bool by_memory = o.objective == Objective::memory;
    TopK top(by_memory ? 4 * o.top_k : o.top_k, o.objective);
    Misses misses;
    MemoryCache memory;
    std::atomic<std::size_t> next{0};
    std::atomic<long long> visited{0}, pruned_memory{0}, pruned_bound{0}, simulated{0};
    std::mutex error_mutex;
    std::exception_ptr error;

    // Block recompute of a plan (full recompute, recompute_layers 0): the fewest leading layers of
    // each chunk whose recompute makes it fit (memory falls as layers are added). None when the plan
    // fits without recompute (that plan is faster and is ranked on its own: dominated) or only
    // with every layer recomputed (full recompute's own plan).
    struct BlockChoice {
        int layers = 0;
        bool dominated = false;
    };
    auto fewest_recomputed_layers = [&](const Plan& full) {
        BlockChoice choice;
        Plan p = full;
        p.recompute = Recompute::none;
        if (memory.peak_GiB(m, c, p, sim) <= usable) {
            choice.dominated = true;
            return choice;
        }
        const auto chunks = layers_per_chunk(m.num_layers, full.pp, full.virtual_stages, full.lm_head_layers);
        const int most = *std::max_element(chunks.begin(), chunks.end());
        choice.dominated = most < 2;
        p.recompute = Recompute::full;
        choice.layers = fewest_block_recompute_layers(most, [&](int layers) {
            p.recompute_layers = layers;
            return memory.peak_GiB(m, c, p, sim) <= usable;
        });
        return choice;
    };

    auto evaluate = [&](const Group& g) {
        const int world = g.tp * g.pp * g.cp * g.dp;
        const double threshold = top.threshold();
        if (by_memory ? g.key > threshold : g.key >= threshold) {
            pruned_bound += count_bits(g.zeros);
            return;
        }
        for (int zero = 0; zero < 4; ++zero) {
            if (!(g.zeros & (1 << zero))) continue;
            Plan p = plan_of(g, req, zero);
            const bool block = g.recompute == kBlockRecompute;
            const double t = std::max(g.step_bound, step_time_lower_bound(m, c, timing_probe(p, g.recompute)));
            // Block recompute holds more than full recompute: full's bound holds for it.
            const double mem_lb = memory_lower_bound_GiB(m, p, activations, g.params_first, g.params_last);
            if (mem_lb > usable) {
                ++pruned_memory;
                if (!block) misses.offer(p, mem_lb);
                continue;
            }
            if (by_memory && mem_lb > top.threshold()) {
                ++pruned_bound;
                continue;
            }
            if (!by_memory && score_bound(t, mem_lb, world, o.objective) >= top.threshold()) {
                ++pruned_bound;
                continue;
            }
            if (block) {
                const BlockChoice choice = fewest_recomputed_layers(p);
                if (choice.layers == 0) {
                    ++(choice.dominated ? pruned_bound : pruned_memory);
                    continue;
                }
                p.recompute_layers = choice.layers;
            }
            const double peak = memory.peak_GiB(m, c, p, sim);
            if (peak > usable) {
                ++pruned_memory;
                if (!block) misses.offer(p, peak);
                continue;
            }
            if (by_memory && peak > top.threshold()) {  // ties may still win on time
                ++pruned_bound;
                continue;
            }
            p.tp_comm_overlap = sim.tp_comm_overlap && p.sequence_parallel;  // what the plan was priced with
            SimulationResult r = simulate(m, c, p, sim);
            ++simulated;
            if (!r.fits) {  // the simulator's own verdict wins
                --simulated;
                ++pruned_memory;
                continue;
            }
            top.offer(std::move(r));
        }
    };
    auto worker = [&] {
        try {
            for (;;) {
                const std::size_t i = next.fetch_add(1);
                if (i >= e.groups.size()) return;
                evaluate(e.groups[i]);
                visited += count_bits(e.groups[i].zeros);
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            next = e.groups.size();
        }
    };

    threads = std::max(1, std::min<int>(threads, int(e.groups.size())));
    std::vector<std::thread> pool;
    std::mutex done_mutex;
    std::condition_variable done_cv;
    std::atomic<int> running{threads};
    for (int i = 0; i < threads; ++i)
        pool.emplace_back([&] {
            worker();
            if (--running == 0) {
                std::lock_guard<std::mutex> lock(done_mutex);
                done_cv.notify_all();
            }
        });
    {
        std::unique_lock<std::mutex> lock(done_mutex);
        while (running > 0) {
            done_cv.wait_for(lock, std::chrono::milliseconds(200));
            if (o.progress && running > 0) {
                lock.unlock();
                o.progress({visited.load(), total_leaves, simulated.load(), top.best_score(), elapsed()});
                lock.lock();
            }
        }
    }
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);

    result.pruned_memory = pruned_memory;
    result.pruned_bound = pruned_bound;
    result.simulated = simulated;
    result.best = top.take();
    if (by_memory && int(result.best.size()) > o.top_k) result.best.resize(o.top_k);
    result.search_s = elapsed();
    if (result.best.empty()) throw_no_plan(m, c, result, o, misses.take());
    // The winners must also pass core's own plan rules (the ones `simulate` and `run` apply).
    for (auto& r : result.best) {
        validate_plan(r.plan, m, r.plan.world_size(), "planner");
        // Simulated with that framework's stack: `simulate --plan` prices it the same way.
        if (o.framework != Framework::any) r.plan.framework = to_string(o.framework);
    }
    return result;
}

}  // namespace tessel
