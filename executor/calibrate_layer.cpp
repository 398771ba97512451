#include "executor/calibrate_layer.h"

#include <algorithm>

#include "executor/device_buffer.h"

namespace tessel {

namespace {
// Microbatches in flight between their forward and backward: a pipeline stage's warm-up depth, or
// a data-parallel rank's accumulation steps. Their activations, not one microbatch's, are what
// the backward reads back.
constexpr int kMicrobatches = 4;
}  // namespace

LayerSequenceSample measure_layer_sequence(Backend& be, int T, int C, const TimingBudget& timing) {
    const DeviceMemory mem{&be, nullptr};
    const int F = 4 * C, D = C <= 256 ? 32 : 64, H = C / D;
    const int S = std::min(T, 128), B = T / S;  // sequences of 128 tokens (T a multiple of it)
    const std::size_t tc = std::size_t(T) * C, tf = std::size_t(T) * F, cc = std::size_t(C) * C, fc = std::size_t(F) * C;
    auto array = [&](std::size_t n, float v) {
        DeviceArray<float> a(mem, std::max<std::size_t>(n, 1), MemoryKind::buffers);
        be.fill(a.data(), v, a.size());
        return a;
    };
    // Weights and their gradients (GPT: biases on every linear), activations, gradients.
    auto ln1w = array(C, 1), ln1b = array(C, 0), ln2w = array(C, 1), ln2b = array(C, 0);
    auto wq = array(cc, 0.02f), wk = array(cc, 0.02f), wv = array(cc, 0.02f), wo = array(cc, 0.02f);
    auto bq = array(C, 0), bk = array(C, 0), bv = array(C, 0), bo = array(C, 0);
    auto wup = array(fc, 0.02f), bup = array(F, 0), wdown = array(fc, 0.02f), bdown = array(C, 0);
    auto g_ln1w = array(C, 0), g_ln1b = array(C, 0), g_ln2w = array(C, 0), g_ln2b = array(C, 0);
    auto g_wq = array(cc, 0), g_wk = array(cc, 0), g_wv = array(cc, 0), g_wo = array(cc, 0);
    auto g_bq = array(C, 0), g_bk = array(C, 0), g_bv = array(C, 0), g_bo = array(C, 0);
    auto g_wup = array(fc, 0), g_bup = array(F, 0), g_wdown = array(fc, 0), g_bdown = array(C, 0);
    // Each microbatch in flight keeps its own activations until its backward; the gradients
    // flowing back are transient.
    struct Acts {
        DeviceArray<float> x, ln1, mean1, rstd1, q, k, v, att, lse, proj, x2, ln2, mean2, rstd2, up, act, down, out;
    };
    std::vector<Acts> acts;
    for (int m = 0; m < kMicrobatches; ++m)
        acts.push_back({array(tc, 0.1f), array(tc, 0), array(T, 0), array(T, 1), array(tc, 0), array(tc, 0), array(tc, 0),
                        array(tc, 0), array(std::size_t(B) * H * S, 0), array(tc, 0), array(tc, 0), array(tc, 0),
                        array(T, 0), array(T, 1), array(tf, 0), array(tf, 0), array(tc, 0), array(tc, 0)});
    auto dout = array(tc, 0.01f), dact = array(tf, 0), dup = array(tf, 0), dln2 = array(tc, 0), dx2 = array(tc, 0);
    auto datt = array(tc, 0), dq = array(tc, 0), dk = array(tc, 0), dv = array(tc, 0), dln1 = array(tc, 0), dx = array(tc, 0);

    // The executor's GPT layer (executor/layers), kernel by kernel: forward, then backward with
    // its zeroed gradient buffers.
    using Kernel = std::function<void(Acts&)>;
    const std::vector<Kernel> forward = {
        [&](Acts& a) { be.layernorm_forward(a.ln1.data(), a.mean1.data(), a.rstd1.data(), a.x.data(), ln1w.data(), ln1b.data(), T, C); },
        [&](Acts& a) { be.matmul_forward(a.q.data(), a.ln1.data(), wq.data(), bq.data(), T, C, C); },
        [&](Acts& a) { be.matmul_forward(a.k.data(), a.ln1.data(), wk.data(), bk.data(), T, C, C); },
        [&](Acts& a) { be.matmul_forward(a.v.data(), a.ln1.data(), wv.data(), bv.data(), T, C, C); },
        [&](Acts& a) { be.attention_forward(a.att.data(), a.lse.data(), a.q.data(), a.k.data(), a.v.data(), B, S, H, H, D); },
        [&](Acts& a) { be.matmul_forward(a.proj.data(), a.att.data(), wo.data(), bo.data(), T, C, C); },
        [&](Acts& a) { be.add(a.x2.data(), a.proj.data(), a.x.data(), tc); },
        [&](Acts& a) { be.layernorm_forward(a.ln2.data(), a.mean2.data(), a.rstd2.data(), a.x2.data(), ln2w.data(), ln2b.data(), T, C); },
        [&](Acts& a) { be.matmul_forward(a.up.data(), a.ln2.data(), wup.data(), bup.data(), T, C, F); },
        [&](Acts& a) { be.gelu_forward(a.act.data(), a.up.data(), tf); },
        [&](Acts& a) { be.matmul_forward(a.down.data(), a.act.data(), wdown.data(), bdown.data(), T, F, C); },
        [&](Acts& a) { be.add(a.out.data(), a.down.data(), a.x2.data(), tc); },
    };
    const std::vector<Kernel> backward = {
        [&](Acts&) { be.fill_zero(dact.data(), dact.bytes()); },
        [&](Acts& a) { be.matmul_backward(dact.data(), g_wdown.data(), g_bdown.data(), dout.data(), a.act.data(), wdown.data(), T, F, C); },
        [&](Acts&) { be.fill_zero(dup.data(), dup.bytes()); },
        [&](Acts& a) { be.gelu_backward(dup.data(), a.up.data(), dact.data(), tf); },
        [&](Acts&) { be.fill_zero(dln2.data(), dln2.bytes()); },
        [&](Acts& a) { be.matmul_backward(dln2.data(), g_wup.data(), g_bup.data(), dup.data(), a.ln2.data(), wup.data(), T, C, F); },
        [&](Acts&) { be.copy(dx2.data(), dout.data(), dx2.bytes()); },
        [&](Acts& a) {
            be.layernorm_backward(dx2.data(), g_ln2w.data(), g_ln2b.data(), dln2.data(), a.x2.data(), ln2w.data(),
                                  a.mean2.data(), a.rstd2.data(), T, C);
        },
        [&](Acts&) { be.fill_zero(datt.data(), datt.bytes()); },
        [&](Acts& a) { be.matmul_backward(datt.data(), g_wo.data(), g_bo.data(), dx2.data(), a.att.data(), wo.data(), T, C, C); },
        [&](Acts&) {
            be.fill_zero(dq.data(), dq.bytes());
            be.fill_zero(dk.data(), dk.bytes());
            be.fill_zero(dv.data(), dv.bytes());
        },
        [&](Acts& a) {
            be.attention_backward(dq.data(), dk.data(), dv.data(), datt.data(), a.q.data(), a.k.data(), a.v.data(),
                                  a.att.data(), a.lse.data(), B, S, H, H, D);
        },
        [&](Acts&) { be.fill_zero(dln1.data(), dln1.bytes()); },
        [&](Acts& a) { be.matmul_backward(dln1.data(), g_wq.data(), g_bq.data(), dq.data(), a.ln1.data(), wq.data(), T, C, C); },
        [&](Acts& a) { be.matmul_backward(dln1.data(), g_wk.data(), g_bk.data(), dk.data(), a.ln1.data(), wk.data(), T, C, C); },
        [&](Acts& a) { be.matmul_backward(dln1.data(), g_wv.data(), g_bv.data(), dv.data(), a.ln1.data(), wv.data(), T, C, C); },
        [&](Acts&) { be.copy(dx.data(), dx2.data(), dx.bytes()); },
        [&](Acts& a) {
            be.layernorm_backward(dx.data(), g_ln1w.data(), g_ln1b.data(), dln1.data(), a.x.data(), ln1w.data(),
                                  a.mean1.data(), a.rstd1.data(), T, C);
        },
    };
    LayerSequenceSample s{T, C, H, 0, 0};
    for (const auto& kernel : forward) s.isolated_seconds += call_seconds(be, [&] { kernel(acts[0]); }, timing).median;
    for (const auto& kernel : backward) s.isolated_seconds += call_seconds(be, [&] { kernel(acts[0]); }, timing).median;
    // A step's order: the forwards of the microbatches in flight, then their backwards.
    s.sequence_seconds = call_seconds(
                             be,
                             [&] {
                                 for (Acts& a : acts)
                                     for (const auto& kernel : forward) kernel(a);
                                 for (auto it = acts.rbegin(); it != acts.rend(); ++it)
                                     for (const auto& kernel : backward) kernel(*it);
                             },
                             timing)
                             .median /
                         kMicrobatches;
    return s;
}

}  // namespace tessel
