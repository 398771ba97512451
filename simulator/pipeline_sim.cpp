#include "simulator/pipeline_sim.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/schedule.h"

namespace tessel {

namespace {
constexpr double kUnknown = -1.0;

// A transfer's window on its link, so a wait can be split into "waiting for the link" and
// "waiting for the sender's compute".
struct Arrival {
    double send_start = kUnknown;
    double arrive = kUnknown;
};

std::string action_name(const PipelineAction& a, int virtual_stages) {
    std::string s = fmt::format("{}{}", a.op == PipelineOp::forward ? 'F' : 'B', a.microbatch);
    if (virtual_stages > 1) s += fmt::format(".c{}", a.chunk);
    return s;
}
}  // namespace

PipelineOutput simulate_pipeline(const PipelineInput& in) {
    const int pp = in.pp, m = in.microbatches;
    const int v = in.schedule == Schedule::interleaved ? in.virtual_stages : 1;
    const int stages = pp * v;
    const auto schedule = pipeline_schedule(in.schedule, pp, m, v, in.all_forwards_first_at_m_equal_pp);

    // arrivals[s][mb]: input of stage s for microbatch mb (forward: from s-1; backward: from s+1).
    // Reused between calls: the planner simulates thousands of plans, and fresh buffers of this
    // size go back to the kernel on every free.
    thread_local std::vector<Arrival> fwd_in, bwd_in;
    thread_local std::vector<double> fwd_done;
    fwd_in.assign(std::size_t(stages) * m, Arrival{});
    bwd_in.assign(std::size_t(stages) * m, Arrival{});
    fwd_done.assign(std::size_t(stages) * m, kUnknown);
    auto at = [m](int stage, int mb) { return std::size_t(stage) * m + mb; };

    // The last backward of each stage releases its gradient buckets.
    std::vector<int> last_backward(stages, -1);
    for (int r = 0; r < pp; ++r)
        for (int i = 0; i < int(schedule[r].size()); ++i)
            if (schedule[r][i].op == PipelineOp::backward) last_backward[schedule[r][i].chunk * pp + r] = i;

    PipelineOutput out;
    out.ranks.assign(pp, {});
    std::vector<std::size_t> next(pp, 0);
    std::vector<double> clock(pp, 0.0), dp_free(pp, 0.0);
    std::vector<double> link_fwd_free(pp, 0.0), link_bwd_free(pp, 0.0);  // rank r's outgoing links
    auto track = [](int r, const char* what) {
        return what[0] ? fmt::format("pp stage {} / {}", r, what) : fmt::format("pp stage {}", r);
    };
    // Queues a stage's buckets on the rank's data-parallel stream as its backward [start, start +
    // duration] produces them; returns the compute slowdown of that backward while they run beside it.
    auto release_buckets = [&](int r, int stage, double start, double duration) {
        if (in.buckets_s.empty() || !in.overlap_grad_reduce) return 0.0;
        const auto& buckets = in.buckets_s[stage];
        const int nb = int(buckets.size());
        double overlap = 0;
        for (int k = 0; k < nb; ++k) {
            // Bucket k fills when the backward has covered its share of the chunk's layers.
            const double ready = start + duration * (k + 1) / nb;
            const double s = std::max(ready, dp_free[r]);
            dp_free[r] = s + buckets[k];
            overlap += std::max(0.0, std::min(dp_free[r], start + duration) - s);
            if (in.record_trace) out.trace.push_back({fmt::format("grad bucket {}.{}", stage, k), track(r, "dp comm"), s, buckets[k]});
        }
        return in.interference * overlap;
    };

    // Without p2p overlap the stream is held until the rank's own send has landed.
    auto block_on_send = [&](int r, double arrive) {
        if (in.overlap_p2p || arrive <= clock[r]) return;
        out.ranks[r].pp_wait_s += arrive - clock[r];
        clock[r] = arrive;
    };

    std::size_t remaining = 0;
    for (const auto& s : schedule) remaining += s.size();
    while (remaining > 0) {
        bool progressed = false;
        for (int r = 0; r < pp; ++r) {
            while (next[r] < schedule[r].size()) {
                const PipelineAction& a = schedule[r][next[r]];
                const int stage = a.chunk * pp + r;
                const bool forward = a.op == PipelineOp::forward;
                Arrival dep{0.0, 0.0};
                if (forward && stage > 0) dep = fwd_in[at(stage, a.microbatch)];
                if (!forward) {
                    if (stage < stages - 1) dep = bwd_in[at(stage, a.microbatch)];
                    else dep = {fwd_done[at(stage, a.microbatch)], fwd_done[at(stage, a.microbatch)]};
                }
                if (dep.arrive == kUnknown) break;

                const ActionParts& parts = forward ? in.forward[stage] : in.backward[stage];
                const double start = std::max(clock[r], dep.arrive);
                // Gradient buckets this backward releases, and the compute they slow beside it.
                const bool releases = !forward && (in.reduce_every_microbatch || int(next[r]) == last_backward[stage]);
                const double slowdown = releases ? release_buckets(r, stage, start, parts.total()) : 0.0;
                const double duration = parts.total() + slowdown;
                RankTimeline& tl = out.ranks[r];
                if (start > clock[r]) {
                    const double gap = start - clock[r];
                    const double on_link = std::max(0.0, std::min(start, dep.arrive) - std::max(clock[r], dep.send_start));
                    tl.pp_wait_s += std::min(gap, on_link);
                    tl.bubble_s += gap - std::min(gap, on_link);
                }
                const double end = start + duration;
                clock[r] = end;
                tl.busy_s += duration;
                tl.parts.compute += parts.compute + slowdown;
                tl.parts.recompute += parts.recompute;
                tl.parts.tp_comm += parts.tp_comm;
                tl.parts.cp_comm += parts.cp_comm;
                tl.parts.dp_comm += parts.dp_comm;

                if (in.record_trace) {
                    out.trace.push_back({action_name(a, v), track(r, ""), start, duration});
                    const int layers = in.layers.empty() ? 0 : in.layers[stage];
                    const auto& comm = forward ? in.forward_comm : in.backward_comm;
                    if (std::size_t(stage) < comm.size())
                        for (const CommSpan& c : comm[stage])
                            out.trace.push_back({c.name + " " + action_name(a, v), track(r, "dp comm"), start + c.offset_s, c.duration_s});
                    // Each layer's collectives, spread evenly over the layers: the part hidden
                    // beside the compute ("(hidden)") and then the exposed part the compute waits
                    // for, together placed at `at` of the layer's share of the action (0.5:
                    // centred, 1: ending with it); places within a layer are nominal.
                    auto per_layer = [&](const char* kind, const char* what, double exposed, double hidden, double at) {
                        if (exposed + hidden <= 0 || layers <= 0) return;
                        const double seg = duration / layers, shown = exposed / layers, beside = hidden / layers;
                        const std::string name = std::string(kind) + " " + action_name(a, v);
                        for (int l = 0; l < layers; ++l) {
                            const double from = start + (l + at) * seg - at * (shown + beside);
                            if (beside > 0) out.trace.push_back({name + " (hidden)", track(r, what), from, beside});
                            if (shown > 0) out.trace.push_back({name, track(r, what), from + beside, shown});
                        }
                    };
                    // TP time at the end of each layer; the context-parallel ring exchange beside
                    // the attention, early in the layer, at its middle.
                    per_layer("tp", "tp comm", parts.tp_comm, parts.tp_comm_hidden, 1.0);
                    per_layer("cp", "cp comm", parts.cp_comm, parts.cp_comm_hidden, 0.5);
                }
                if (forward) {
                    fwd_done[at(stage, a.microbatch)] = end;
                    if (stage < stages - 1) {
                        const double s = std::max(end, link_fwd_free[r]);
                        const double arrive = s + in.send_forward_s[stage];
                        link_fwd_free[r] = arrive;
                        fwd_in[at(stage + 1, a.microbatch)] = {s, arrive};
                        block_on_send(r, arrive);
                        if (in.record_trace && in.send_forward_s[stage] > 0)
                            out.trace.push_back({"send " + action_name(a, v), track(r, "p2p forward"), s, in.send_forward_s[stage]});
                    }
                } else {
                    if (stage > 0) {
                        const double s = std::max(end, link_bwd_free[r]);
                        const double arrive = s + in.send_backward_s[stage];
                        link_bwd_free[r] = arrive;
                        bwd_in[at(stage - 1, a.microbatch)] = {s, arrive};
                        block_on_send(r, arrive);
                        if (in.record_trace && in.send_backward_s[stage] > 0)
                            out.trace.push_back({"send " + action_name(a, v), track(r, "p2p backward"), s, in.send_backward_s[stage]});
                    }
                }
                ++next[r];
                --remaining;
                progressed = true;
            }
        }
        if (!progressed) throw InputError("pipeline schedule deadlocks: an action waits for one that never runs");
    }

    for (int r = 0; r < pp; ++r) {
        RankTimeline& tl = out.ranks[r];
        tl.compute_end_s = clock[r];
        if (!in.overlap_grad_reduce) {
            // Every bucket waits for the whole backward.
            for (int c = 0; c < v; ++c) {
                const int stage = c * pp + r;
                if (in.buckets_s.empty()) continue;
                for (std::size_t k = 0; k < in.buckets_s[stage].size(); ++k) {
                    const double s = std::max(clock[r], dp_free[r]);
                    dp_free[r] = s + in.buckets_s[stage][k];
                    if (in.record_trace)
                        out.trace.push_back({fmt::format("grad bucket {}.{}", stage, k), track(r, "dp comm"), s, in.buckets_s[stage][k]});
                }
            }
        }
        tl.dp_end_s = std::max(dp_free[r], tl.compute_end_s);
    }
    // The first and the last rank hold the tied embedding: they start its all-reduce together.
    const bool tied_sync = in.tied_embedding_sync_s > 0 && pp > 1;
    const double sync_start = tied_sync ? std::max(out.ranks[0].dp_end_s, out.ranks[pp - 1].dp_end_s) : 0.0;
    for (int r = 0; r < pp; ++r) {
        RankTimeline& tl = out.ranks[r];
        double t = tl.dp_end_s;
        if (tied_sync && (r == 0 || r == pp - 1)) {
            tl.sync_wait_s = sync_start - tl.dp_end_s;
            tl.sync_s = in.tied_embedding_sync_s;
            t = sync_start + tl.sync_s;
            if (in.record_trace)
                out.trace.push_back({"tied-embedding all-reduce", track(r, "dp comm"), sync_start, tl.sync_s});
        }
        const double comm = in.after_comm_s.empty() ? 0.0 : in.after_comm_s[r];
        const double opt = in.optimizer_s.empty() ? 0.0 : in.optimizer_s[r];
        if (in.record_trace) {
            if (comm > 0) out.trace.push_back({"exposed dp comm", track(r, "dp comm"), t, comm});
            if (opt > 0) out.trace.push_back({"optimizer", track(r, ""), t + comm, opt});
        }
        tl.end_s = t + comm + opt;
        if (tl.end_s > out.step_s) {
            out.step_s = tl.end_s;
            out.critical_rank = r;
        }
    }
    return out;
}

}  // namespace tessel
