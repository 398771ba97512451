// The whole model on one rank (no MPI: the one-rank communicator). Its backward is checked
// against central finite differences of its own forward for every tensor of a GPT, a Llama and a
// Qwen3 layout (per-head QK norms, a query width unlike the hidden width); recomputation must not
// change a single bit; and training lowers the loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "core/presets.h"
#include "executor/model_chunk.h"
#include "executor/rotary.h"
#include "executor/timed_backend.h"
#include "executor/token_data.h"
#include "executor/trainer.h"
#include "kernels/cpu/cpu_backend.h"

namespace tessel {

namespace {

ModelSpec small_model(const std::string& preset) {
    ModelSpec m = load_model(preset);
    const bool qwen = preset == "tiny-qwen3";
    m.num_layers = 2;
    m.hidden_size = 16;
    m.num_attention_heads = qwen ? 4 : 2;  // Qwen3: 4 heads of 8 over a width of 16
    m.num_kv_heads = preset == "tiny-gpt" ? 2 : qwen ? 2 : 1;
    m.head_dim = 8;
    m.ffn_hidden_size = 24;
    m.vocab_size = 32;
    m.seq_length = 8;
    m.max_position_embeddings = 8;
    return m;
}

struct OneRankModel {
    ModelSpec m;
    Plan plan;
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    MemoryTracker tracker;
    std::unique_ptr<Communicator> tp = make_self_communicator();
    LayerContext ctx;
    std::unique_ptr<ModelChunk> chunk;
    MicrobatchTokens tokens;

    explicit OneRankModel(const std::string& preset) : m(small_model(preset)) {
        plan.microbatch_size = 2;
        plan.global_batch_size = 2;
        plan.seq_length = 8;
        ctx.backend = backend.get();
        ctx.mem = {backend.get(), &tracker};
        ctx.tp = tp.get();
        ctx.model = &m;
        ctx.dims = {2, 8, 16, 16, 16, m.num_attention_heads, m.num_kv_heads, 8, 24, 0, 32};
        chunk = std::make_unique<ModelChunk>(m, plan, ChunkPlacement{0, 1, 0, 2}, 1, 0);
        chunk->materialize(ctx.mem, 0, nullptr, 42);
        TokenSource data = TokenSource::synthetic(m.vocab_size, 3);
        tokens.inputs.resize(16);
        tokens.targets.resize(16);
        for (int b = 0; b < 2; ++b) data.sample(b, 8, tokens.inputs.data() + 8 * b, tokens.targets.data() + 8 * b);
    }
    // Mean token loss of a forward; its backward (which also clears the saved activations)
    // accumulates the gradients into the buffers.
    double loss() {
        double sum = 0;
        chunk->forward(ctx, 0, {}, tokens, 1.0f / 16, &sum);
        chunk->backward(ctx, 0, {});
        return sum / 16;
    }
};

void check_gradients(const std::string& preset) {
    OneRankModel model(preset);
    model.loss();
    std::vector<std::vector<float>> all_grads;
    for (ParamBuffer* buf : model.chunk->buffers()) {
        all_grads.emplace_back(buf->count());
        model.backend->download(all_grads.back().data(), buf->owned_grads(), buf->count() * sizeof(float));
    }
    int checked = 0;
    for (std::size_t b = 0; b < all_grads.size(); ++b) {
        ParamBuffer* buf = model.chunk->buffers()[b];
        const std::vector<float>& grads = all_grads[b];
        for (std::size_t t = 0; t < buf->tensors().size(); ++t) {
            const TensorSlot s = buf->slots()[t];
            // The entry with the largest gradient, and two fixed others.
            std::vector<std::size_t> picks = {s.offset, s.offset + s.count / 2};
            picks.push_back(std::size_t(std::max_element(grads.begin() + s.offset, grads.begin() + s.offset + s.count,
                                                         [](float a, float b) { return std::abs(a) < std::abs(b); }) -
                                        grads.begin()));
            for (std::size_t i : picks) {
                float* p = buf->owned_params() + i;
                const float saved = *p, h = 1e-2f;
                *p = saved + h;
                const double up = model.loss();
                *p = saved - h;
                const double down = model.loss();
                *p = saved;
                const double fd = (up - down) / (2 * h);
                EXPECT_NEAR(grads[i], fd, 2e-4 + 0.03 * std::abs(fd))
                    << buf->tensors()[t].name << " [" << i - s.offset << "]";
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 30);
}

TrainOptions tiny_run(const char* model, Recompute recompute) {
    TrainOptions o;
    o.model = load_model(model);
    o.plan.global_batch_size = 8;
    o.plan.microbatch_size = 2;  // 4 microbatches: gradients accumulate
    o.plan.seq_length = 32;
    o.plan.recompute = recompute;
    o.steps = 10;
    o.peak_tflops = 1.0;
    return o;
}

}  // namespace

TEST(SingleRankModel, GptGradientsMatchFiniteDifferences) { check_gradients("tiny-gpt"); }
TEST(SingleRankModel, LlamaGradientsMatchFiniteDifferences) { check_gradients("tiny-llama"); }
TEST(SingleRankModel, Qwen3GradientsMatchFiniteDifferences) { check_gradients("tiny-qwen3"); }

// AdamW's decay groups as Megatron-LM (biases and norm weights exempt, get_param_groups) and
// nanoGPT (every parameter of two or more dimensions) draw them: every matrix decays, the
// embedding tables too, so a tied GPT-2 head decays like Llama's untied one; no vector does.
TEST(SingleRankModel, WeightDecayOnEveryMatrixAndNoVector) {
    for (const std::string preset : {"tiny-gpt", "tiny-llama", "tiny-qwen3"}) {
        OneRankModel model(preset);
        int matrices = 0, vectors = 0;
        for (ParamBuffer* buf : model.chunk->buffers())
            for (const TensorSpec& t : buf->tensors()) {
                if (t.sources.empty()) continue;
                const TensorSource& s = t.sources[0];
                const bool matrix = s.full_cols > 1 && s.rows.size() > 1;
                (matrix ? matrices : vectors) += 1;
                EXPECT_EQ(t.weight_decay, matrix) << preset << ": " << t.name;
            }
        // Token table (+ position table for GPT), per layer q, k, v, out, up (gate_up), down (+ Llama's head).
        EXPECT_EQ(matrices, preset == "tiny-gpt" ? 2 + 2 * 6 : 1 + 2 * 6 + 1) << preset;
        EXPECT_GT(vectors, 0) << preset;
    }
}

// The learned position table holds the model's max_position_embeddings rows, as the simulator and
// Megatron-LM count it, even when a run reads fewer: a run at sequence 8 of a 16-position model
// holds 16 x 16 values (it held 8 x 16, and compare showed its weights 3% off the simulation's).
// The rows it reads are the same values as a table of exactly 8 rows (a counter-based init).
TEST(SingleRankModel, PositionTableHoldsEveryPositionOfTheModel) {
    std::vector<std::vector<float>> tables;
    for (int positions : {8, 16}) {
        OneRankModel model("tiny-gpt");
        model.m.max_position_embeddings = positions;
        ModelChunk chunk(model.m, model.plan, ChunkPlacement{0, 1, 0, 2}, 1, 0);
        chunk.materialize(model.ctx.mem, 0, nullptr, 42);
        for (ParamBuffer* buf : chunk.buffers())
            if (buf->name() == "embedding.wpe") tables.push_back(buf->download_params());
    }
    ASSERT_EQ(tables.size(), 2u);
    EXPECT_EQ(tables[0].size(), 8u * 16);
    EXPECT_EQ(tables[1].size(), 16u * 16);  // hidden 16
    EXPECT_TRUE(std::equal(tables[0].begin(), tables[0].end(), tables[1].begin()));
}

TEST(SingleRankModel, RecomputationChangesNoBitAndLossFalls) {
    for (const char* model : {"tiny-gpt", "tiny-llama", "tiny-qwen3"}) {
        const RunResult none = train(tiny_run(model, Recompute::none), make_self_communicator());
        const RunResult selective = train(tiny_run(model, Recompute::selective), make_self_communicator());
        const RunResult full = train(tiny_run(model, Recompute::full), make_self_communicator());
        EXPECT_EQ(none.losses, selective.losses) << model;
        EXPECT_EQ(none.losses, full.losses) << model;
        EXPECT_LT(none.losses.back(), none.losses.front() - 0.1) << model;
        EXPECT_NEAR(none.losses.front(), std::log(1024.0), 0.1) << model;  // near-uniform at initialisation
        // Recomputation trades memory for compute: less activation memory at the peak.
        EXPECT_LT(full.memory.activations, none.memory.activations) << model;
        // Recomputing only the first layer of the chunk (Megatron's block method) keeps the rest.
        TrainOptions block = tiny_run(model, Recompute::full);
        block.plan.recompute_layers = 1;
        const RunResult partial = train(block, make_self_communicator());
        EXPECT_EQ(none.losses, partial.losses) << model;
        EXPECT_LT(partial.memory.activations, none.memory.activations) << model;
        EXPECT_GT(partial.memory.activations, full.memory.activations) << model;
    }
}

// Every norm divides by sqrt(mean square + epsilon). With the model's epsilon at 1e12 each norm's
// output is ~1e-6 of its input, so the LM head sees ~0 and the first loss is ln(vocab) to float
// precision; with the default 1e-5 the random initialisation moves it off ln(vocab) (by ~0.03 here).
// A runtime that kept its own epsilon would give the default's loss both times.
TEST(SingleRankModel, NormsUseTheModelsEpsilon) {
    for (const char* model : {"tiny-gpt", "tiny-llama", "tiny-qwen3"}) {
        TrainOptions o = tiny_run(model, Recompute::none);
        o.steps = 1;
        const double uniform = std::log(double(o.model.vocab_size));
        const RunResult usual = train(o, make_self_communicator());
        EXPECT_GT(std::abs(usual.losses.front() - uniform), 1e-3) << model;
        o.model.norm_epsilon = 1e12;
        const RunResult flat = train(o, make_self_communicator());
        EXPECT_NEAR(flat.losses.front(), uniform, 1e-5) << model;
    }
}

TEST(SingleRankModel, SequencesBeyondASlidingWindowAreRefused) {
    // The executor's attention has no window: a sequence within it runs as full causal attention
    // (the same thing); a longer one is bad input naming the plan's key.
    ModelSpec m = load_model("tiny-llama");
    m.sliding_window = 64;
    Plan p;
    p.global_batch_size = 2;
    p.microbatch_size = 2;
    p.seq_length = 64;
    EXPECT_NO_THROW(check_executable(m, p, 1, "plan.json"));
    p.seq_length = 128;
    try {
        check_executable(m, p, 1, "plan.json");
        FAIL();
    } catch (const InputError& e) {
        const std::string s = e.what();
        EXPECT_NE(s.find("plan.json"), std::string::npos) << s;
        EXPECT_NE(s.find("seq_length"), std::string::npos) << s;
        EXPECT_NE(s.find("sliding window of 64"), std::string::npos) << s;
    }
}

TEST(SingleRankModel, LayersTheExecutorLacksAreRefused) {
    for (const char* key : {"activation", "sandwich_norms", "logit_softcap", "rotary_percent", "parallel_residual"}) {
        ModelSpec m = load_model("tiny-llama");
        if (std::string(key) == "activation") m.activation = Activation::geglu;
        if (std::string(key) == "sandwich_norms") m.sandwich_norms = true;
        if (std::string(key) == "logit_softcap") m.logit_softcap = true;
        if (std::string(key) == "rotary_percent") m.rotary_percent = 0.25;     // Pythia
        if (std::string(key) == "parallel_residual") m.parallel_residual = true;  // GPT-NeoX, Falcon
        try {
            check_model_executable(m, "model/config.json");
            FAIL() << key;
        } catch (const InputError& e) {
            const std::string s = e.what();
            EXPECT_NE(s.find("model/config.json"), std::string::npos) << s;
            EXPECT_NE(s.find(key), std::string::npos) << s;
        }
    }
}

// Llama 3.1's RoPE scaling reaches the kernels: with a pretraining context so long that every
// wavelength (at most 2 pi theta) lies in the kept band, the run is the unscaled one bit for bit;
// with an 8-token context, whose bands scale nearly every pair, the losses move. Scalings the
// kernels lack (YaRN also rescales the attention) are refused, naming the key.
TEST(SingleRankModel, RopeScalingReachesTheKernels) {
    const RunResult plain = train(tiny_run("tiny-llama", Recompute::none), make_self_communicator());
    TrainOptions kept = tiny_run("tiny-llama", Recompute::none);
    kept.model.rope_scaling_type = "llama3";
    kept.model.rope_scaling_factor = 8;
    kept.model.rope_scaling_original_context = 1e9;
    EXPECT_EQ(train(kept, make_self_communicator()).losses, plain.losses);
    TrainOptions scaled = kept;
    scaled.model.rope_scaling_original_context = 8;
    EXPECT_NE(train(scaled, make_self_communicator()).losses, plain.losses);
    TrainOptions linear = tiny_run("tiny-llama", Recompute::none);
    linear.model.rope_scaling_type = "linear";
    linear.model.rope_scaling_factor = 4;
    EXPECT_NE(train(linear, make_self_communicator()).losses, plain.losses);
    EXPECT_EQ(rope_frequencies(linear.model).scaling, RopeScaling::linear);
    EXPECT_EQ(rope_frequencies(linear.model).factor, 4.0);

    ModelSpec yarn = load_model("tiny-llama");
    yarn.rope_scaling_type = "yarn";
    yarn.rope_scaling_factor = 4;
    try {
        check_model_executable(yarn, "model/config.json");
        FAIL() << "yarn";
    } catch (const InputError& e) {
        const std::string s = e.what();
        EXPECT_NE(s.find("model/config.json"), std::string::npos) << s;
        EXPECT_NE(s.find("rope_scaling_type"), std::string::npos) << s;
        EXPECT_NE(s.find("yarn"), std::string::npos) << s;
    }
}

TEST(SingleRankModel, TheBreakdownAddsUpToTheStepTime) {
    // step_time_s is the median of the counted steps; the parts are their mean split scaled to it,
    // so a slow step does not make the parts outgrow the step they break down.
    TrainOptions o = tiny_run("tiny-gpt", Recompute::none);
    o.steps = 6;
    const RunResult r = train(o, make_self_communicator());
    EXPECT_NEAR(r.time_per_rank[0].total(), r.step_time_s, 1e-6 * r.step_time_s);
    const json j = to_json(r);
    EXPECT_NEAR(j["time_s"]["total"].get<double>(), j["step_time_s"].get<double>(), 1e-6 * r.step_time_s);
}

TEST(SingleRankModel, KernelTimesSplitByKindWithinTheComputeTheyTimed) {
    TrainOptions o = tiny_run("tiny-gpt", Recompute::none);
    o.steps = 4;
    KernelTimes times;
    o.kernel_times = &times;
    const RunResult r = train(o, make_self_communicator());
    ASSERT_TRUE(r.kernel_time_s.has_value());
    const KernelKindTimes& k = *r.kernel_time_s;
    EXPECT_GT(k.gemm, 0.0);
    EXPECT_GT(k.attention, 0.0);
    EXPECT_GT(k.memory_bound, 0.0);
    // Per step: the kernels ran inside the compute and optimizer time the step measured around them.
    const StepBreakdown& b = r.time_per_rank[0];
    EXPECT_LE(k.total(), b.compute + b.optimizer);
    // The tally of the counted steps, less the batch's upload and the loss's download, scaled as
    // the breakdown is from the steps' mean time to their median.
    double mean_step = 0;
    for (int i = r.warmup_steps; i < r.steps; ++i) mean_step += r.step_times_s[std::size_t(i)] / (r.steps - r.warmup_steps);
    const double tallied = times.in_step_seconds() / (r.steps - r.warmup_steps) * r.step_time_s / mean_step;
    EXPECT_LE(k.total(), tallied * (1 + 1e-12));
    EXPECT_GT(k.total(), 0.5 * tallied);
    const json j = to_json(r);
    EXPECT_DOUBLE_EQ(j["kernel_time_s"]["gemm"].get<double>(), k.gemm);
    // Without the timer the run has no split to report.
    EXPECT_FALSE(train(tiny_run("tiny-gpt", Recompute::none), make_self_communicator()).kernel_time_s.has_value());
}

}  // namespace tessel
