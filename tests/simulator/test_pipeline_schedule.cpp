// The schedule simulated event by event against the closed forms of Narayanan et al. 2021 §2.2:
// with free communication and equal stages, the bubble of 1F1B (and GPipe) is (p-1)/(m+p-1) of
// the step, and interleaving v chunks per rank shrinks it to (p-1)/(v m + p - 1).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "core/presets.h"
#include "simulator/pipeline_sim.h"
#include "simulator/simulate.h"
#include "test_clusters.h"

using namespace tessel;

namespace {
// Equal stages: forward f, backward b per microbatch and whole stage; v chunks split both.
PipelineInput balanced(Schedule s, int pp, int m, int v, double f = 1.0, double b = 2.0) {
    PipelineInput in;
    in.schedule = s;
    in.pp = pp;
    in.virtual_stages = v;
    in.microbatches = m;
    const int stages = pp * v;
    in.forward.assign(stages, ActionParts{});
    in.backward.assign(stages, ActionParts{});
    for (int i = 0; i < stages; ++i) {
        in.forward[i].compute = f / v;
        in.backward[i].compute = b / v;
    }
    in.send_forward_s.assign(stages, 0.0);
    in.send_backward_s.assign(stages, 0.0);
    return in;
}
}  // namespace

TEST(PipelineSchedule, OneFOneBBubbleMatchesClosedForm) {
    for (int pp : {2, 4, 8})
        for (int m : {1, 4, 8, 32}) {
            const auto out = simulate_pipeline(balanced(Schedule::one_f_one_b, pp, m, 1));
            // Hand derivation: every rank does m (f + b) of work; the last one starts p-1
            // forwards late and the first one ends p-1 backwards late.
            const double ideal = m * 3.0;
            EXPECT_NEAR(out.step_s, (m + pp - 1) * 3.0, 1e-9) << "pp " << pp << " m " << m;
            EXPECT_NEAR((out.step_s - ideal) / out.step_s, double(pp - 1) / (m + pp - 1), 1e-9);
            EXPECT_NEAR(out.ranks[0].bubble_s, (pp - 1) * 3.0, 1e-9);
        }
}

TEST(PipelineSchedule, GPipeTakesAsLongAsOneFOneB) {
    for (int pp : {2, 4, 8})
        for (int m : {1, 3, 8, 16}) {
            const auto gpipe = simulate_pipeline(balanced(Schedule::gpipe, pp, m, 1));
            const auto f1b1 = simulate_pipeline(balanced(Schedule::one_f_one_b, pp, m, 1));
            EXPECT_NEAR(gpipe.step_s, f1b1.step_s, 1e-9) << "pp " << pp << " m " << m;
        }
}

TEST(PipelineSchedule, InterleavingShrinksTheBubbleByV) {
    for (int pp : {2, 4})
        for (int v : {2, 3})
            for (int m : {pp, 2 * pp, 4 * pp}) {
                const auto out = simulate_pipeline(balanced(Schedule::interleaved, pp, m, v));
                const double work = m * 3.0;
                const double bubble = out.step_s - work;
                EXPECT_NEAR(bubble / out.step_s, double(pp - 1) / (v * m + pp - 1), 1e-9)
                    << "pp " << pp << " v " << v << " m " << m;
            }
}

TEST(PipelineSchedule, UnevenChunksLieBetweenTheirEvenBounds) {
    // With a fixed order of work on every rank, the step is the longest path through the schedule's
    // dependency graph, so it cannot shrink when a chunk grows: 1, 2, 2, 1 layers per chunk (6 on
    // 2 ranks x 2 chunks, core's split with shorter ends) take at least as long as 1 layer in every
    // chunk and at most as long as 2, and never less than one rank's own work.
    const double f = 1.0, b = 2.0;  // per layer
    for (int m : {2, 4, 8}) {
        auto chunks = [&](std::vector<int> layers) {
            PipelineInput in = balanced(Schedule::interleaved, 2, m, 2);
            for (std::size_t c = 0; c < layers.size(); ++c) {
                in.forward[c].compute = layers[c] * f;
                in.backward[c].compute = layers[c] * b;
            }
            return simulate_pipeline(in).step_s;
        };
        const double uneven = chunks({1, 2, 2, 1});
        EXPECT_GE(uneven, chunks({1, 1, 1, 1}) - 1e-9) << m;
        EXPECT_LE(uneven, chunks({2, 2, 2, 2}) + 1e-9) << m;
        EXPECT_LT(uneven, chunks({2, 2, 2, 2})) << m;  // the short ends are worth something
        EXPECT_GE(uneven, m * 3 * (f + b) - 1e-9) << m;  // each rank holds 3 layers
    }
}

TEST(PipelineSchedule, TransfersDelayTheNextStage) {
    // One microbatch through two stages: F0, send, F1, B1, send back, B0.
    auto in = balanced(Schedule::one_f_one_b, 2, 1, 1);
    in.send_forward_s = {0.25, 0.0};
    in.send_backward_s = {0.0, 0.5};
    const auto out = simulate_pipeline(in);
    EXPECT_NEAR(out.step_s, 1.0 + 0.25 + 1.0 + 2.0 + 0.5 + 2.0, 1e-9);
    EXPECT_NEAR(out.ranks[1].pp_wait_s, 0.25, 1e-9);
    EXPECT_NEAR(out.ranks[0].pp_wait_s, 0.5, 1e-9);
}

TEST(PipelineSchedule, BlockingSendsHoldTheSendersStream) {
    // Two microbatches, GPipe: stage 0 forwards 1 s and backwards 2 s each, stage 1 costs nothing,
    // the activation takes 0.25 s to stage 1. Overlapped, stage 0 runs F0 F1 back to back; the
    // last activation lands at 2.25 and both backwards follow: 2.25 + 2 + 2. Blocking, each
    // forward is followed by its own send: 2 x (1 + 0.25) + 2 + 2.
    auto in = balanced(Schedule::gpipe, 2, 2, 1);
    in.forward[1].compute = in.backward[1].compute = 0.0;
    in.send_forward_s = {0.25, 0.0};
    EXPECT_NEAR(simulate_pipeline(in).step_s, 6.25, 1e-9);
    in.overlap_p2p = false;
    const auto blocking = simulate_pipeline(in);
    EXPECT_NEAR(blocking.step_s, 6.5, 1e-9);
    EXPECT_NEAR(blocking.ranks[0].pp_wait_s, 0.5, 1e-9);  // its two sends, nothing else
}

TEST(PipelineSchedule, GradientBucketsOverlapTheLastBackward) {
    auto in = balanced(Schedule::one_f_one_b, 1, 2, 1);
    in.buckets_s = {{0.5, 0.5}};  // two buckets, released half-way and at the end of the last backward
    const auto overlapped = simulate_pipeline(in);
    // Work 6; the first bucket runs [5, 5.5] beside the backward, the second [6, 6.5].
    EXPECT_NEAR(overlapped.step_s, 6.5, 1e-9);
    in.overlap_grad_reduce = false;
    EXPECT_NEAR(simulate_pipeline(in).step_s, 7.0, 1e-9);
}

TEST(PipelineSchedule, TiedEmbeddingSyncWaitsForBothEnds) {
    // 1F1B, p 3, m 2, f 1, b 2: the last rank's backwards end at 2 + 2 x 3 = 8 (its first forward
    // waits for two upstream ones), the first rank's at (m + p - 1) x 3 = 12. The embedding's
    // all-reduce (0.5) starts at 12 on both ends; the middle rank does not take part.
    auto in = balanced(Schedule::one_f_one_b, 3, 2, 1);
    in.tied_embedding_sync_s = 0.5;
    in.optimizer_s = {0.25, 0.25, 4.0};  // the last rank's step outlasts the first's
    const auto out = simulate_pipeline(in);
    EXPECT_NEAR(out.ranks[2].dp_end_s, 8.0, 1e-9);
    EXPECT_NEAR(out.ranks[0].dp_end_s, 12.0, 1e-9);
    EXPECT_NEAR(out.ranks[2].sync_wait_s, 4.0, 1e-9);
    EXPECT_NEAR(out.ranks[0].sync_wait_s, 0.0, 1e-9);
    EXPECT_NEAR(out.ranks[1].sync_s, 0.0, 1e-9);
    EXPECT_NEAR(out.ranks[0].end_s, 12.75, 1e-9);
    EXPECT_NEAR(out.ranks[2].end_s, 12.0 + 0.5 + 4.0, 1e-9);
    EXPECT_NEAR(out.step_s, 16.5, 1e-9);
    EXPECT_EQ(out.critical_rank, 2);
}

// gpt2-1.5b with a 128-token vocabulary (small end stages) on 8 GPUs where communication is free,
// as pp 4 x dp 2 with 16 microbatches of 1024 tokens.
namespace {
struct FreePipeline {
    ModelSpec m = load_model("gpt2-1.5b");
    ClusterSpec c = test::free_communication_cluster(8);
    Plan p;
    FreePipeline() {
        m.vocab_size = 128;
        p.pp = 4;
        p.dp = 2;
        p.microbatch_size = 1;
        p.global_batch_size = 32;  // 16 microbatches
        p.seq_length = 1024;
    }
};
}  // namespace

TEST(Simulate, FreeCommunicationBubbleFollowsTheSchedule) {
    // The end-to-end simulator on a cluster where communication is free: its bubble on the
    // critical rank is (p-1)/(m+p-1) up to the small imbalance the embedding and LM head add to
    // the end stages (a 128-token vocabulary keeps them small).
    FreePipeline f;
    const ModelSpec& m = f.m;
    const ClusterSpec& c = f.c;
    Plan& p = f.p;
    const auto r = simulate(m, c, p);
    const double expected = 3.0 / (16 + 3);
    EXPECT_NEAR(r.time_s.bubble / r.step_time_s, expected, 0.05 * expected);
    EXPECT_LT(r.time_s.tp_comm_exposed + r.time_s.pp_comm_exposed + r.time_s.dp_comm_exposed, 1e-3 * r.step_time_s);
}

TEST(Simulate, FreeCommunicationInterleavedBubbleFollowsTheSchedule) {
    // The same with the interleaved schedule, v = 2 chunks per rank (gpt2-1.5b's 48 layers: 8
    // chunks of 6): Narayanan et al. 2021 (SC21, sec. 2.2.2) give the bubble fraction
    // (p-1)/(v m + p-1) of the step, 3 / (2 x 16 + 3) = 3/35, up to the same end-stage imbalance.
    FreePipeline f;
    const ModelSpec& m = f.m;
    const ClusterSpec& c = f.c;
    Plan& p = f.p;
    p.virtual_stages = 2;
    p.schedule = Schedule::interleaved;
    const auto r = simulate(m, c, p);
    const double expected = 3.0 / 35;
    EXPECT_NEAR(r.time_s.bubble / r.step_time_s, expected, 0.05 * expected);
    EXPECT_LT(r.time_s.tp_comm_exposed + r.time_s.pp_comm_exposed + r.time_s.dp_comm_exposed, 1e-3 * r.step_time_s);
}

TEST(Simulate, TraceHasOneTrackPerStage) {
    const ModelSpec m = load_model("gpt2-1.5b");
    const ClusterSpec c = load_cluster("dgx-a100");
    Plan p;
    p.tp = 2;
    p.pp = 4;
    p.dp = 2;
    p.microbatch_size = 1;
    p.global_batch_size = 16;
    p.seq_length = 1024;
    SimulateOptions o;
    o.record_trace = true;
    const auto r = simulate(m, resize_cluster(c, 16), p, o);
    std::set<std::string> stage_tracks, comm_tracks;
    for (const auto& e : r.trace) {
        if (e.track.find('/') == std::string::npos) stage_tracks.insert(e.track);
        else comm_tracks.insert(e.track);
    }
    EXPECT_EQ(stage_tracks.size(), 4u);
    EXPECT_TRUE(stage_tracks.count("pp stage 0") && stage_tracks.count("pp stage 3"));
    EXPECT_TRUE(comm_tracks.count("pp stage 0 / tp comm"));
    EXPECT_TRUE(comm_tracks.count("pp stage 0 / p2p forward"));
    EXPECT_TRUE(comm_tracks.count("pp stage 0 / dp comm"));
    const json trace = to_chrome_trace(r);
    ASSERT_TRUE(trace.contains("traceEvents"));
    int spans = 0;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "X") ++spans;
    EXPECT_EQ(spans, int(r.trace.size()));
}

namespace {
// The traced step of one pipeline stage of `layers` layers whose every action is `parts`.
PipelineOutput one_stage_trace(const ActionParts& parts, int layers, int microbatches) {
    PipelineInput in;
    in.pp = 1;
    in.microbatches = microbatches;
    in.forward = {parts};
    in.backward = {parts};
    in.layers = {layers};
    in.send_forward_s = {0.0};
    in.send_backward_s = {0.0};
    in.record_trace = true;
    return simulate_pipeline(in);
}
}  // namespace

TEST(PipelineSchedule, TraceDrawsEachLayersExposedCommunicationInsideItsAction) {
    // One stage of 4 layers, 2 microbatches: each 1 s action carries 0.2 s of exposed TP and
    // 0.4 s of exposed CP communication, drawn per layer (0.05 s and 0.1 s) inside the action.
    ActionParts parts;
    parts.compute = 0.4;
    parts.tp_comm = 0.2;
    parts.cp_comm = 0.4;
    const PipelineOutput out = one_stage_trace(parts, 4, 2);
    std::vector<TraceEvent> actions;
    for (const auto& e : out.trace)
        if (e.track == "pp stage 0") actions.push_back(e);
    ASSERT_EQ(actions.size(), 4u);
    for (const char* kind : {"tp comm", "cp comm"}) {
        const double per_layer = kind[0] == 't' ? 0.05 : 0.1;
        int n = 0;
        for (const auto& e : out.trace) {
            if (e.track != std::string("pp stage 0 / ") + kind) continue;
            ++n;
            EXPECT_NEAR(e.duration_s, per_layer, 1e-12);
            int inside = 0;
            for (const auto& a : actions)
                inside += e.start_s >= a.start_s - 1e-12 && e.start_s + e.duration_s <= a.start_s + a.duration_s + 1e-12;
            EXPECT_EQ(inside, 1) << kind << " at " << e.start_s;
        }
        EXPECT_EQ(n, 4 * 4) << kind;
    }
}

TEST(PipelineSchedule, TraceDrawsHiddenCommunicationBeforeTheExposedPart) {
    // One stage of 2 layers, one microbatch: a 1 s action whose TP collectives take 0.6 s, 0.2 s
    // exposed and 0.4 s beside the compute. Each layer draws 0.2 s hidden, then 0.1 s exposed,
    // ending with the layer (at 0.5 s and 1.0 s).
    ActionParts parts;
    parts.compute = 0.8;
    parts.tp_comm = 0.2;
    parts.tp_comm_hidden = 0.4;
    const PipelineOutput out = one_stage_trace(parts, 2, 1);
    std::vector<TraceEvent> forward_tp;
    for (const auto& e : out.trace)
        if (e.track == "pp stage 0 / tp comm" && e.start_s < 1.0 - 1e-9) forward_tp.push_back(e);
    ASSERT_EQ(forward_tp.size(), 4u);
    const double expected[4][2] = {{0.2, 0.4}, {0.4, 0.5}, {0.7, 0.9}, {0.9, 1.0}};
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(forward_tp[i].name, i % 2 == 0 ? "tp F0 (hidden)" : "tp F0");
        EXPECT_NEAR(forward_tp[i].start_s, expected[i][0], 1e-12) << i;
        EXPECT_NEAR(forward_tp[i].start_s + forward_tp[i].duration_s, expected[i][1], 1e-12) << i;
    }
    // Hidden time is drawn only: the step is the compute and the exposed part, twice.
    EXPECT_NEAR(out.step_s, 2.0, 1e-12);
}

TEST(Simulate, TraceShowsTheSameTensorParallelCollectivesWithOrWithoutOverlap) {
    // Overlapping TP collectives with their GEMMs changes what the step waits for, not the
    // collectives: the tp comm track holds the same seconds either way, and what is hidden is drawn
    // as such: without userbuffers the backward's re-gathers and reduce-scatters beside their GEMMs
    // (Megatron's asynchronous TP communication), with them most of the rest too.
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 8);
    Plan p;
    p.tp = 8;
    p.microbatch_size = 1;
    p.global_batch_size = 1;
    p.seq_length = 8192;
    p.sequence_parallel = true;
    auto drawn = [&](bool overlap) {
        SimulateOptions o;
        o.record_trace = true;
        o.tp_comm_overlap = overlap;
        const SimulationResult r = simulate(m, c, p, o);
        double all = 0, hidden = 0;
        for (const auto& e : r.trace) {
            if (e.track.find("/ tp comm") == std::string::npos) continue;
            all += e.duration_s;
            if (e.name.find("(hidden)") != std::string::npos) hidden += e.duration_s;
        }
        EXPECT_NEAR(all - hidden, r.time_s.tp_comm_exposed, 1e-9 * all);
        return std::pair{all, hidden};
    };
    const auto [plain, plain_hidden] = drawn(false);
    const auto [overlapped, overlapped_hidden] = drawn(true);
    EXPECT_GT(plain, 0);
    EXPECT_GT(plain_hidden, 0);
    EXPECT_GT(overlapped_hidden, plain_hidden);
    EXPECT_GT(overlapped_hidden, 0.5 * overlapped);
    EXPECT_NEAR(overlapped, plain, 1e-9 * plain);
}

TEST(Simulate, TensorParallelOverlapNeedsSequenceParallelInsideANode) {
    // Transformer Engine overlaps the all-gathers and reduce-scatters of sequence parallelism with
    // their GEMMs over NVLink: Llama 3 70B at tp 8 hides most of what it waited for (at 8B's
    // narrower GEMMs a ring-exchange chunk's transfer outlasts its GEMM). Without sequence
    // parallelism, or with a TP group across nodes, the overlap flag changes nothing.
    auto step = [&](const char* model, int tp, bool sp, bool overlap) {
        Plan p;
        p.tp = tp;
        p.microbatch_size = 1;
        p.global_batch_size = 1;
        p.seq_length = 8192;
        p.sequence_parallel = sp;
        SimulateOptions o;
        o.tp_comm_overlap = overlap;
        return simulate(load_model(model), resize_cluster(load_cluster("dgx-h100"), tp), p, o).time_s.tp_comm_exposed;
    };
    EXPECT_LT(step("llama3-70b", 8, true, true), 0.5 * step("llama3-70b", 8, true, false));
    EXPECT_LT(step("llama3-8b", 8, true, true), step("llama3-8b", 8, true, false));
    EXPECT_DOUBLE_EQ(step("llama3-8b", 8, false, true), step("llama3-8b", 8, false, false));
    EXPECT_GT(step("llama3-8b", 16, true, false), 0.0);  // two nodes of 8
    EXPECT_DOUBLE_EQ(step("llama3-8b", 16, true, true), step("llama3-8b", 16, true, false));
}

TEST(Simulate, SparingTheLmHeadStageLayersShortensTheStep) {
    // Llama 3 8B on 2 stages: the LM head (4096 x 128256 weights, 2.4 layers' worth) makes the last
    // stage the slowest of an even 16 + 16 split; 17 + 15 takes two layers off it and, with the
    // stages closer, the step (about m x the slowest stage) shortens.
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = resize_cluster(load_cluster("dgx-h100"), 8);
    Plan p;
    p.pp = 2;
    p.dp = 4;
    p.microbatch_size = 1;
    p.global_batch_size = 64;
    p.seq_length = 4096;
    const SimulationResult even = simulate(m, c, p, SimulateOptions{});
    p.lm_head_layers = 2;
    const SimulationResult spared = simulate(m, c, p, SimulateOptions{});
    EXPECT_LT(spared.step_time_s, even.step_time_s);
    // Two layers' time saved per microbatch on the last stage bounds the saving.
    EXPECT_GT(spared.step_time_s, 0.8 * even.step_time_s);
}
