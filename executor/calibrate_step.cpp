#include "executor/calibrate_step.h"

#include <algorithm>

#include "executor/timed_backend.h"
#include "executor/trainer.h"

namespace tessel {

namespace {

// A model with the shapes calibrate's other samples use: ffn 4h (GPT) or 8h/3 rounded (Llama),
// head dim 32 up to h = 256 and 64 above, a vocabulary of 16h capped at 8192 so the LM head is a
// realistic share of a small model's step.
ModelSpec calibration_model(const std::string& layout, int h, int seq) {
    ModelSpec m;
    m.name = "calibrate-" + layout;
    m.num_layers = 2;
    m.hidden_size = h;
    m.head_dim = h <= 256 ? 32 : 64;
    m.num_attention_heads = m.num_kv_heads = h / m.head_dim;
    m.vocab_size = std::min(16 * h, 8192);
    m.seq_length = seq;
    m.source = "native";
    if (layout == "llama") {
        m.activation = Activation::swiglu;
        m.norm = Norm::rmsnorm;
        m.position_embedding = PositionEmbedding::rope;
        m.ffn_hidden_size = (8 * h / 3 + 31) / 32 * 32;
    } else {
        m.activation = Activation::gelu;
        m.norm = Norm::layernorm;
        m.position_embedding = PositionEmbedding::learned;
        m.ffn_hidden_size = 4 * h;
        m.max_position_embeddings = seq;
        m.linear_bias = true;
        m.tied_embeddings = true;
    }
    return m;
}

}  // namespace

StepKernelSample measure_step_kernels(const std::string& backend, const std::string& layout, int tokens, int hidden,
                                      const StepBenchmark& bench) {
    const int seq = std::min(tokens, 128);
    TrainOptions o;
    o.model = calibration_model(layout, hidden, seq);
    o.plan.microbatch_size = std::max(1, tokens / seq);
    o.plan.global_batch_size = 2 * o.plan.microbatch_size;
    o.plan.seq_length = seq;
    o.plan.precision = Precision::fp32;
    o.plan_origin = "calibrate";
    o.steps = std::max(2, bench.steps);
    o.warmup_steps = 1;
    o.backend = backend;
    o.peak_tflops = 1;  // MFU is not what this measures; skips the start-up GEMM
    KernelTimes times;
    times.replays = std::max(1, bench.replays);
    o.kernel_times = &times;
    const RunResult r = train(o, make_self_communicator());
    const int counted = std::max(1, r.steps - r.warmup_steps);
    StepKernelSample s;
    s.layout = layout;
    s.tokens = o.plan.microbatch_size * seq;
    s.hidden = hidden;
    s.heads = o.model.num_attention_heads;
    s.in_step_seconds = times.in_step_seconds() / counted;
    s.alone_seconds = times.alone_seconds() / counted;
    return s;
}

}  // namespace tessel
