#include "executor/calibrate_layer.h"

#include <algorithm>

#include "executor/device_buffer.h"

namespace tessel {

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
    auto x = array(tc, 0.1f), ln1 = array(tc, 0), mean1 = array(T, 0), rstd1 = array(T, 1);
    auto q = array(tc, 0), k = array(tc, 0), v = array(tc, 0), att = array(tc, 0), lse = array(std::size_t(B) * H * S, 0);
    auto proj = array(tc, 0), x2 = array(tc, 0), ln2 = array(tc, 0), mean2 = array(T, 0), rstd2 = array(T, 1);
    auto up = array(tf, 0), act = array(tf, 0), down = array(tc, 0), out = array(tc, 0);
    auto dout = array(tc, 0.01f), dact = array(tf, 0), dup = array(tf, 0), dln2 = array(tc, 0), dx2 = array(tc, 0);
    auto datt = array(tc, 0), dq = array(tc, 0), dk = array(tc, 0), dv = array(tc, 0), dln1 = array(tc, 0), dx = array(tc, 0);

    // The executor's GPT layer (executor/layers), kernel by kernel: forward, then backward with
    // its zeroed gradient buffers.
    const std::vector<std::function<void()>> kernels = {
        [&] { be.layernorm_forward(ln1.data(), mean1.data(), rstd1.data(), x.data(), ln1w.data(), ln1b.data(), T, C); },
        [&] { be.matmul_forward(q.data(), ln1.data(), wq.data(), bq.data(), T, C, C); },
        [&] { be.matmul_forward(k.data(), ln1.data(), wk.data(), bk.data(), T, C, C); },
        [&] { be.matmul_forward(v.data(), ln1.data(), wv.data(), bv.data(), T, C, C); },
        [&] { be.attention_forward(att.data(), lse.data(), q.data(), k.data(), v.data(), B, S, H, H, D); },
        [&] { be.matmul_forward(proj.data(), att.data(), wo.data(), bo.data(), T, C, C); },
        [&] { be.add(x2.data(), proj.data(), x.data(), tc); },
        [&] { be.layernorm_forward(ln2.data(), mean2.data(), rstd2.data(), x2.data(), ln2w.data(), ln2b.data(), T, C); },
        [&] { be.matmul_forward(up.data(), ln2.data(), wup.data(), bup.data(), T, C, F); },
        [&] { be.gelu_forward(act.data(), up.data(), tf); },
        [&] { be.matmul_forward(down.data(), act.data(), wdown.data(), bdown.data(), T, F, C); },
        [&] { be.add(out.data(), down.data(), x2.data(), tc); },
        [&] { be.fill_zero(dact.data(), dact.bytes()); },
        [&] { be.matmul_backward(dact.data(), g_wdown.data(), g_bdown.data(), dout.data(), act.data(), wdown.data(), T, F, C); },
        [&] { be.fill_zero(dup.data(), dup.bytes()); },
        [&] { be.gelu_backward(dup.data(), up.data(), dact.data(), tf); },
        [&] { be.fill_zero(dln2.data(), dln2.bytes()); },
        [&] { be.matmul_backward(dln2.data(), g_wup.data(), g_bup.data(), dup.data(), ln2.data(), wup.data(), T, C, F); },
        [&] { be.copy(dx2.data(), dout.data(), dx2.bytes()); },
        [&] {
            be.layernorm_backward(dx2.data(), g_ln2w.data(), g_ln2b.data(), dln2.data(), x2.data(), ln2w.data(),
                                  mean2.data(), rstd2.data(), T, C);
        },
        [&] { be.fill_zero(datt.data(), datt.bytes()); },
        [&] { be.matmul_backward(datt.data(), g_wo.data(), g_bo.data(), dx2.data(), att.data(), wo.data(), T, C, C); },
        [&] {
            be.fill_zero(dq.data(), dq.bytes());
            be.fill_zero(dk.data(), dk.bytes());
            be.fill_zero(dv.data(), dv.bytes());
        },
        [&] {
            be.attention_backward(dq.data(), dk.data(), dv.data(), datt.data(), q.data(), k.data(), v.data(), att.data(),
                                  lse.data(), B, S, H, H, D);
        },
        [&] { be.fill_zero(dln1.data(), dln1.bytes()); },
        [&] { be.matmul_backward(dln1.data(), g_wq.data(), g_bq.data(), dq.data(), ln1.data(), wq.data(), T, C, C); },
        [&] { be.matmul_backward(dln1.data(), g_wk.data(), g_bk.data(), dk.data(), ln1.data(), wk.data(), T, C, C); },
        [&] { be.matmul_backward(dln1.data(), g_wv.data(), g_bv.data(), dv.data(), ln1.data(), wv.data(), T, C, C); },
        [&] { be.copy(dx.data(), dx2.data(), dx.bytes()); },
        [&] {
            be.layernorm_backward(dx.data(), g_ln1w.data(), g_ln1b.data(), dln1.data(), x.data(), ln1w.data(),
                                  mean1.data(), rstd1.data(), T, C);
        },
    };
    LayerSequenceSample s{T, C, H, 0, 0};
    for (const auto& kernel : kernels) s.isolated_seconds += call_seconds(be, kernel, timing).median;
    s.sequence_seconds = call_seconds(
                             be, [&] {
                                 for (const auto& kernel : kernels) kernel();
                             },
                             timing)
                             .median;
    return s;
}

}  // namespace tessel
