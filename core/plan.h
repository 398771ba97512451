// Plan: one way to split a training step over a cluster — the JSON `plan` writes and
// `simulate` / `run` read (DESIGN.md, "Plan").
#pragma once
#include <string>

#include "core/json_io.h"
#include "core/model_spec.h"
#include "core/options.h"

namespace tessel {

struct Plan {
    int tp = 1, pp = 1, dp = 1, cp = 1;
    int zero_stage = 0;
    int microbatch_size = 1;
    int global_batch_size = 1;
    int seq_length = 2048;
    int virtual_stages = 1;  // model chunks per pipeline rank; > 1 implies the interleaved schedule
    bool sequence_parallel = false;
    Recompute recompute = Recompute::none;
    // With full recompute, the layers of each model chunk whose forward the backward repeats, the
    // rest keeping their activations (Megatron's --recompute-method block --recompute-num-layers N,
    // NeMo's recompute_num_layers); 0: every layer.
    int recompute_layers = 0;
    // The LM head (with the loss) counted as this many transformer layers when the layers are split
    // over the pipeline's model chunks: the last chunk holds that many fewer than an even split of
    // num_layers + lm_head_layers gives it, so the stage that also runs the head is not the slowest
    // (Megatron-Core's --account-for-loss-in-pipeline-split counts it as 1, torchtitan's
    // pipeline_parallel_last_stage_less_layers as N). 0: the layers alone are split.
    int lm_head_layers = 0;
    Schedule schedule = Schedule::one_f_one_b;
    Precision precision = Precision::bf16;
    std::string placement = "tp-cp-dp-pp";  // innermost (packed inside a node first) to outermost
    // The software the plan was made for ("megatron", "deepspeed", "torchtitan": `plan --emit`), whose
    // kernels and communication `simulate --plan` then prices as `plan` did; "": the simulator's
    // defaults. `run` executes the plan whatever it names.
    std::string framework;
    // The plan was priced with its TP collectives overlapped with their GEMMs (plan
    // --tp-comm-overlap: Megatron's --tp-comm-overlap, torchtitan's async TP), which the exporters
    // write and `simulate --plan` prices again. Needs sequence parallelism with TP.
    bool tp_comm_overlap = false;

    int world_size() const { return tp * pp * dp * cp; }
    // Microbatches each pipeline runs per optimizer step (Megatron's num_microbatches).
    int num_microbatches() const { return global_batch_size / (dp * microbatch_size); }
    std::string describe() const;  // "tp8 pp8 dp16 zero1 mb1 ..."
};

// Microbatches a pipeline may run per optimizer step: the simulator lays out every one of them as
// events, so a global batch of a billion sequences would take minutes and tens of GiB. Published
// runs use at most a few thousand (BLOOM's reshaped runs: 1024).
inline constexpr int kMaxMicrobatchesPerStep = 1 << 16;
// GPUs a plan may span (tp*pp*dp*cp), as many as a cluster may hold (cluster_spec.h): the products
// of the parallel sizes stay far inside an int.
inline constexpr int kMaxPlanGpus = 1 << 24;

Plan parse_plan(const json& j, const std::string& file);
json to_json(const Plan& p);
// Checks the plan against the model and a world size (0 = do not check the world size); throws
// InputError naming `file`, the key and the rule.
void validate_plan(const Plan& p, const ModelSpec& m, int world_size, const std::string& file);
// Layers on each model chunk, first chunk first (len pp * virtual_stages); uneven splits give the
// extra layers to the middle stages, which the first (embedding) and last (LM head) stages spare,
// and where the middle chunks would then differ, every middle chunk one more than the even share
// and the two ends the rest. With lm_head_layers k: the split of num_layers + k, less k on the last
// chunk (Plan::lm_head_layers).
std::vector<int> layers_per_chunk(int num_layers, int pp, int virtual_stages, int lm_head_layers = 0);
// Whether layers_per_chunk's split is one the frameworks can express: every chunk equal but the
// first (which also holds the embedding) and the last (the LM head), which may hold fewer. That is
// Megatron's --decoder-first/last-pipeline-num-layers without interleaving, its
// --pipeline-model-parallel-layout with it, and torchtitan's pipeline_parallel_layers_per_stage
// with first/last_stage_less_layers; Llama 3 405B trained its 126 layers on 16 stages that way.
// With lm_head_layers k: that of num_layers + k, whose last chunk keeps at least one layer after
// giving up k.
bool pipeline_split_supported(int num_layers, int pp, int virtual_stages, int lm_head_layers = 0);

// Of a model chunk's `chunk_layers` layers, how many run under the plan's recompute mode, first in
// the chunk: all of them, except under full recompute with recompute_layers N > 0 (Megatron's block
// method), which recomputes the first N and leaves the rest keeping every activation.
int layers_in_recompute_mode(const Plan& p, int chunk_layers);
// Share of the model's transformer layers whose forward is recomputed under full recompute (1 when
// recompute_layers is 0): layers_in_recompute_mode of each chunk of layers_per_chunk.
double recomputed_layer_fraction(const Plan& p, int num_layers);

Recompute parse_recompute(const std::string& s);
Schedule parse_schedule(const std::string& s);
Precision parse_precision(const std::string& s);

}  // namespace tessel
