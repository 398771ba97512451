// The exporters: every key they emit is one the target project documents (lists copied from
// shared reference config-formats.md, §B1-B3), and the emitted numbers satisfy the checks each
// project makes at start-up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <unistd.h>

#include "core/errors.h"
#include "core/presets.h"
#include "planner/export_deepspeed.h"
#include "planner/export_megatron.h"
#include "planner/export_torchtitan.h"
#include "planner/search_space.h"
#include "simulator/software_stack.h"
#include "plan_fixtures.h"

using namespace tessel;
using tessel::test::make_plan;

namespace {

// Megatron-Core's --pipeline-model-parallel-layout, unrolled the way its parser documents: commas
// are cosmetic, "(...)*n" repeats a group and "x*n" a character, '|' separates stages. One string
// of layer characters per stage.
std::vector<std::string> expand_megatron_layout(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    auto repeat_count = [&](std::size_t at, std::size_t& end) {
        end = at;
        while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
        return std::stoi(s.substr(at, end - at));
    };
    for (std::size_t open; (open = s.find('(')) != std::string::npos;) {
        const std::size_t close = s.find(')', open);
        std::size_t end = 0;
        const int n = repeat_count(close + 2, end);  // ")*n"
        std::string group, body = s.substr(open + 1, close - open - 1);
        for (int i = 0; i < n; ++i) group += body;
        s = s.substr(0, open) + group + s.substr(end);
    }
    for (std::size_t star; (star = s.find('*')) != std::string::npos;) {
        std::size_t end = 0;
        const int n = repeat_count(star + 1, end);
        s = s.substr(0, star - 1) + std::string(n, s[star - 1]) + s.substr(end);
    }
    std::vector<std::string> stages{""};
    for (char ch : s) {
        if (ch == '|') stages.emplace_back();
        else stages.back() += ch;
    }
    return stages;
}

// config-formats.md §B1: Megatron-LM flags (arguments.py, core_v0.15.0 and HEAD).
const std::set<std::string> kMegatronFlags = {
    "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--num-layers-per-virtual-pipeline-stage",
    "--num-virtual-stages-per-pipeline-rank", "--microbatch-group-size-per-virtual-pipeline-stage",
    "--pipeline-model-parallel-layout", "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
    "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split", "--sequence-parallel",
    "--context-parallel-size", "--cp-comm-type", "--micro-batch-size", "--global-batch-size", "--seq-length",
    "--recompute-activations", "--recompute-granularity", "--recompute-method", "--recompute-num-layers",
    "--recompute-modules", "--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather", "--bf16",
    "--fp16", "--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads", "--kv-channels",
    "--group-query-attention", "--num-query-groups", "--max-position-embeddings", "--position-embedding-type",
    "--rotary-base", "--rotary-percent", "--normalization", "--norm-epsilon", "--swiglu",
    "--untie-embeddings-and-output-weights", "--disable-bias-linear", "--add-qkv-bias",
    "--make-vocab-size-divisible-by", "--vocab-size", "--train-iters", "--expert-model-parallel-size", "--num-experts",
    // Transformer Engine's fp8 (arguments.py: choices e4m3 | hybrid; Megatron-Bridge's
    // scripts/translate_mlm_to_bridge.py maps it to mixed_precision.fp8).
    "--fp8-format",
    // Megatron-Core's q_layernorm / k_layernorm, built over kv_channels (one head); Megatron-Bridge's
    // Qwen3 conversion passes it.
    "--qk-layernorm",
    // megatron/training/arguments.py, _add_regularization_args: both floats, default 0.1.
    "--attention-dropout", "--hidden-dropout",
    // arguments.py (_add_network_size_args): Llama 3.1's RoPE scaling (factor a float, default 8)
    // and linear position interpolation (an int).
    "--use-rope-scaling", "--rope-scaling-factor", "--rotary-seq-len-interpolation-factor",
    // arguments.py, _add_network_size_args: the attention window as Transformer Engine's (left,
    // right) and the full-attention layers' period. The layer implementation, transformer_engine
    // (default) | local: _add_transformer_engine_args at core_v0.15.0, generated from
    // TransformerConfig.transformer_impl at HEAD.
    "--window-size", "--window-attn-skip-freq", "--transformer-impl"};

// config-formats.md §B2: DeepSpeed config keys (deepspeed/runtime/constants.py, zero/config.py, ...).
const std::set<std::string> kDeepSpeedKeys = {
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "gradient_clipping",
    "fp16", "fp16.enabled", "fp16.auto_cast", "fp16.loss_scale", "fp16.initial_scale_power", "fp16.loss_scale_window",
    "fp16.hysteresis", "fp16.consecutive_hysteresis", "fp16.min_loss_scale", "fp16.fp16_master_weights_and_grads",
    "bf16", "bf16.enabled", "bf16.bf16_master_weights_and_grads", "bf16.bf16_optimizer_states",
    "bf16.immediate_grad_update", "bf16.check_grad_overflow", "zero_optimization", "zero_optimization.stage",
    "zero_optimization.overlap_comm", "zero_optimization.contiguous_gradients", "zero_optimization.reduce_scatter",
    "zero_optimization.allgather_partitions", "zero_optimization.reduce_bucket_size",
    "zero_optimization.allgather_bucket_size", "zero_optimization.stage3_prefetch_bucket_size",
    "zero_optimization.stage3_param_persistence_threshold", "zero_optimization.stage3_max_live_parameters",
    "zero_optimization.stage3_max_reuse_distance", "zero_optimization.stage3_gather_16bit_weights_on_model_save",
    "zero_optimization.sub_group_size", "zero_optimization.offload_optimizer",
    "zero_optimization.offload_optimizer.device", "zero_optimization.offload_optimizer.nvme_path",
    "zero_optimization.offload_optimizer.pin_memory", "zero_optimization.offload_optimizer.buffer_count",
    "zero_optimization.offload_optimizer.ratio", "zero_optimization.offload_optimizer.fast_init",
    "zero_optimization.offload_param", "zero_optimization.offload_param.device",
    "zero_optimization.offload_param.nvme_path", "zero_optimization.offload_param.pin_memory",
    "zero_optimization.offload_param.buffer_count", "zero_optimization.offload_param.buffer_size",
    "zero_optimization.offload_param.max_in_cpu", "zero_optimization.cpu_offload", "activation_checkpointing",
    "activation_checkpointing.partition_activations", "activation_checkpointing.cpu_checkpointing",
    "activation_checkpointing.contiguous_memory_optimization", "activation_checkpointing.number_checkpoints",
    "activation_checkpointing.synchronize_checkpoint_boundary", "activation_checkpointing.profile",
    // DeepSpeed docs/_pages/config-json.md, "Data Type options" and "communication_data_type".
    "data_types", "data_types.grad_accum_dtype", "communication_data_type"};

// config-formats.md §B3: torchtitan v0.2.2 job_config.py keys ([parallelism], [activation_checkpoint],
// [training], [model]).
const std::set<std::string> kTorchtitanKeys = {
    "parallelism.data_parallel_replicate_degree", "parallelism.data_parallel_shard_degree",
    "parallelism.fsdp_reshard_after_forward", "parallelism.tensor_parallel_degree",
    "parallelism.disable_loss_parallel", "parallelism.enable_async_tensor_parallel",
    "parallelism.pipeline_parallel_degree", "parallelism.pipeline_parallel_schedule",
    "parallelism.pipeline_parallel_schedule_csv", "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.pipeline_parallel_layers_per_stage", "parallelism.pipeline_parallel_first_stage_less_layers",
    "parallelism.pipeline_parallel_last_stage_less_layers", "parallelism.module_fqns_per_model_part",
    "parallelism.context_parallel_degree", "parallelism.context_parallel_load_balancer",
    "parallelism.context_parallel_rotate_method", "parallelism.expert_parallel_degree",
    "parallelism.expert_tensor_parallel_degree", "activation_checkpoint.mode", "activation_checkpoint.selective_ac_option",
    "activation_checkpoint.memory_budget", "training.local_batch_size", "training.global_batch_size", "training.seq_len",
    "training.steps", "training.max_norm", "training.dataset", "training.mixed_precision_param",
    "training.mixed_precision_reduce", "training.dtype", "training.enable_cpu_offload", "model.name", "model.flavor",
    "model.hf_assets_path", "compile.enable", "compile.components"};

SimulationResult winner(const Plan& p) {
    SimulationResult r;
    r.plan = p;
    r.fits = true;
    r.step_time_s = 1.0;
    r.mfu = 0.5;
    return r;
}

// Flags of the NAME=( ... ) arrays of a bash script, with the value after each (or "").
std::multimap<std::string, std::string> megatron_flags(const std::string& script, int* world) {
    std::multimap<std::string, std::string> flags;
    std::istringstream in(script);
    std::string line;
    bool inside = false;
    int gpus_per_node = 0, nodes = 0;
    while (std::getline(in, line)) {
        if (line.rfind("GPUS_PER_NODE=", 0) == 0) gpus_per_node = std::stoi(line.substr(14));
        if (line.rfind("NNODES=", 0) == 0) nodes = std::stoi(line.substr(7));
        if (line.size() > 2 && line.substr(line.size() - 2) == "=(") {
            inside = true;
            continue;
        }
        if (line == ")") {
            inside = false;
            continue;
        }
        if (!inside) continue;
        std::istringstream words(line);
        std::vector<std::string> w;
        for (std::string x; words >> x;) w.push_back(x);
        for (std::size_t i = 0; i < w.size(); ++i)
            if (w[i].rfind("--", 0) == 0)
                flags.emplace(w[i], i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0 ? w[i + 1] : "");
    }
    *world = gpus_per_node * nodes;
    return flags;
}

int flag_int(const std::multimap<std::string, std::string>& f, const std::string& k, int fallback = -1) {
    auto it = f.find(k);
    return it == f.end() ? fallback : std::stoi(it->second);
}

bool bash_syntax_ok(const std::string& script) {
    if (std::system("command -v bash > /dev/null 2>&1") != 0) return true;  // no bash: nothing to check
    // ctest runs these tests as parallel processes: each writes its own script.
    std::string path = ::testing::TempDir() + "tessel_emit_XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd < 0) return false;
    close(fd);
    std::ofstream(path) << script;
    const bool ok = std::system(("bash -n " + path).c_str()) == 0;
    std::remove(path.c_str());
    return ok;
}

// Megatron's start-up checks (config-formats.md §B1, "Derived values and checks").
void check_megatron(const ModelSpec& m, const Plan& p) {
    SCOPED_TRACE(p.describe());
    const std::string script = export_megatron(m, winner(p), load_cluster("dgx-a100")).text;
    int world = 0;
    const auto f = megatron_flags(script, &world);
    for (const auto& [flag, value] : f) EXPECT_TRUE(kMegatronFlags.count(flag)) << "undocumented flag " << flag;
    EXPECT_TRUE(bash_syntax_ok(script)) << script;
    const int tp = flag_int(f, "--tensor-model-parallel-size"), pp = flag_int(f, "--pipeline-model-parallel-size");
    const int cp = flag_int(f, "--context-parallel-size", 1);
    ASSERT_EQ(world, p.world_size());
    ASSERT_EQ(world % (tp * pp * cp), 0);
    const int dp = world / (tp * pp * cp);
    const int mbs = flag_int(f, "--micro-batch-size"), gbs = flag_int(f, "--global-batch-size");
    // The plan is the reference: every size the script states is the plan's own (the data-parallel
    // size is not a Megatron flag; Megatron derives it as world / (TP x PP x CP)).
    for (const char* k : {"--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size",
                          "--micro-batch-size", "--global-batch-size", "--seq-length"})
        EXPECT_EQ(f.count(k), 1u) << k;
    EXPECT_EQ(tp, p.tp);
    EXPECT_EQ(pp, p.pp);
    EXPECT_EQ(cp, p.cp);
    EXPECT_EQ(dp, p.dp);
    EXPECT_EQ(mbs, p.microbatch_size);
    EXPECT_EQ(gbs, p.global_batch_size);
    EXPECT_EQ(flag_int(f, "--seq-length"), p.seq_length);
    EXPECT_EQ(f.count("--sequence-parallel"), p.sequence_parallel ? 1u : 0u);
    // validate_args asserts CUDA_DEVICE_MAX_CONNECTIONS=1 with TP or CP below Blackwell
    // (arguments.py, core_v0.15.0 and HEAD).
    EXPECT_EQ(script.find("export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}\n") != std::string::npos,
              p.tp > 1 || p.cp > 1)
        << script;
    // An A100 runs Transformer Engine, the default layers.
    EXPECT_EQ(f.count("--transformer-impl"), 0u);
    // Virtual stages: one of the two interleaving forms exactly when the plan interleaves (their
    // counts are compared with p.virtual_stages below).
    EXPECT_EQ(f.count("--num-layers-per-virtual-pipeline-stage") + f.count("--pipeline-model-parallel-layout"),
              p.virtual_stages > 1 ? 1u : 0u);
    // ZeRO-1 and above is Megatron's distributed optimizer (optimizer states sharded over DP).
    EXPECT_EQ(f.count("--use-distributed-optimizer"), p.zero_stage >= 1 ? 1u : 0u);
    // Recompute (Megatron arguments.py): none -> no flag; selective -> --recompute-granularity
    // selective; full -> granularity full with --recompute-method block N for the plan's first N
    // layers of each chunk, or uniform 1 (every layer its own checkpoint) when it recomputes all.
    const auto granularity = f.find("--recompute-granularity");
    const auto method = f.find("--recompute-method");
    switch (p.recompute) {
        case Recompute::none: EXPECT_EQ(granularity, f.end()); break;
        case Recompute::selective:
            ASSERT_NE(granularity, f.end());
            EXPECT_EQ(granularity->second, "selective");
            break;
        case Recompute::full:
            ASSERT_NE(granularity, f.end());
            EXPECT_EQ(granularity->second, "full");
            ASSERT_NE(method, f.end());
            EXPECT_EQ(method->second, p.recompute_layers > 0 ? "block" : "uniform");
            EXPECT_EQ(flag_int(f, "--recompute-num-layers"), p.recompute_layers > 0 ? p.recompute_layers : 1);
            break;
    }
    // Precision: bf16 -> --bf16; fp16 -> --fp16; fp32 -> neither. fp8 keeps --bf16 for everything
    // outside the GEMMs; on this cluster (DGX A100: compute capability 8.0, no fp8 tensor cores,
    // which Transformer Engine needs) it asks for no --fp8-format.
    const bool sixteen_bf = p.precision == Precision::bf16 || p.precision == Precision::fp8;
    EXPECT_EQ(f.count("--bf16"), sixteen_bf ? 1u : 0u);
    EXPECT_EQ(f.count("--fp16"), p.precision == Precision::fp16 ? 1u : 0u);
    EXPECT_EQ(f.count("--fp8-format"), 0u);
    EXPECT_EQ(gbs % (mbs * dp), 0) << "global batch size is not divisible by micro batch size times data parallel size";
    const int layers = flag_int(f, "--num-layers"), heads = flag_int(f, "--num-attention-heads");
    EXPECT_EQ(heads % tp, 0);
    if (f.count("--group-query-attention")) {
        const int groups = flag_int(f, "--num-query-groups");
        EXPECT_TRUE(groups % tp == 0 || tp % groups == 0);
    }
    EXPECT_EQ(f.count("--ffn-hidden-size"), 1u);  // always explicit
    EXPECT_EQ(flag_int(f, "--ffn-hidden-size"), m.ffn_hidden_size);
    const int vpp_forms = int(f.count("--num-layers-per-virtual-pipeline-stage") +
                              f.count("--num-virtual-stages-per-pipeline-rank") +
                              f.count("--pipeline-model-parallel-layout"));
    EXPECT_LE(vpp_forms, 1);
    if (f.count("--num-layers-per-virtual-pipeline-stage")) {
        const int k = flag_int(f, "--num-layers-per-virtual-pipeline-stage");
        ASSERT_EQ(layers % pp, 0);
        ASSERT_EQ((layers / pp) % k, 0);
        const int vpp = layers / pp / k;
        EXPECT_EQ(vpp, p.virtual_stages);
        EXPECT_FALSE(f.count("--decoder-first-pipeline-num-layers") || f.count("--decoder-last-pipeline-num-layers"));
        if (vpp > 1) {
            EXPECT_EQ((gbs / (mbs * dp)) % pp, 0) << "microbatches must be a multiple of PP when interleaving";
        }
    }
    if (f.count("--pipeline-model-parallel-layout")) {
        std::string layout = f.find("--pipeline-model-parallel-layout")->second;
        layout.erase(std::remove(layout.begin(), layout.end(), '"'), layout.end());
        const auto stages = expand_megatron_layout(layout);
        ASSERT_EQ(int(stages.size()) % pp, 0) << layout;  // Megatron: layout divisible by PP
        EXPECT_EQ(int(stages.size()) / pp, p.virtual_stages) << layout;
        EXPECT_EQ(stages.front().front(), 'E') << layout;  // the first layer must be the embedding
        EXPECT_EQ(stages.back().back(), 'L') << layout;    // the last the loss
        std::string all;
        for (const auto& st : stages) all += st;
        EXPECT_EQ(std::count(all.begin(), all.end(), 'E'), 1);
        EXPECT_EQ(std::count(all.begin(), all.end(), 'L'), 1);
        EXPECT_EQ(std::count(all.begin(), all.end(), 't'), layers);
        // What Megatron builds is what the simulator ran: stage k, in model order, is tessel's chunk k.
        const auto chunks = layers_per_chunk(layers, pp, p.virtual_stages);
        for (std::size_t k = 0; k < stages.size(); ++k)
            EXPECT_EQ(std::count(stages[k].begin(), stages[k].end(), 't'), chunks[k]) << layout << " stage " << k;
        EXPECT_FALSE(f.count("--decoder-first-pipeline-num-layers") || f.count("--decoder-last-pipeline-num-layers"));
        if (stages.size() > std::size_t(pp)) {
            EXPECT_EQ((gbs / (mbs * dp)) % pp, 0) << "microbatches must be a multiple of PP when interleaving";
        }
    } else if (f.count("--decoder-first-pipeline-num-layers") || f.count("--decoder-last-pipeline-num-layers")) {
        const int first = flag_int(f, "--decoder-first-pipeline-num-layers", 0);
        const int last = flag_int(f, "--decoder-last-pipeline-num-layers", 0);
        const int middle_stages = pp - (first ? 1 : 0) - (last ? 1 : 0);
        const int rest = layers - first - last;
        ASSERT_GT(middle_stages, 0);
        EXPECT_EQ(rest % middle_stages, 0);
    } else if (!f.count("--num-layers-per-virtual-pipeline-stage")) {
        EXPECT_EQ(layers % pp, 0);
    }
    if (f.count("--sequence-parallel")) {
        EXPECT_GT(tp, 1);
    }
    EXPECT_FALSE(f.count("--bf16") && f.count("--fp16"));
    auto g = f.find("--recompute-granularity");
    if (g != f.end() && g->second == "selective") {
        EXPECT_EQ(f.count("--recompute-method"), 0u);
    }
    if (g != f.end() && g->second == "full") {
        EXPECT_EQ(f.count("--recompute-method"), 1u);
        EXPECT_EQ(f.count("--recompute-num-layers"), 1u);
    }
    if (f.count("--overlap-param-gather")) {
        EXPECT_EQ(f.count("--use-distributed-optimizer"), 1u);
    }
    if (cp > 1) {
        EXPECT_EQ(flag_int(f, "--seq-length") % (2 * cp), 0);
    }
}

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, json>>& out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        out.push_back({key, it.value()});
        if (it.value().is_object()) flatten(it.value(), key, out);
    }
}

void check_deepspeed(const ModelSpec& m, const Plan& p) {
    SCOPED_TRACE(p.describe());
    const Emitted e = export_deepspeed(m, winner(p), load_cluster("dgx-a100"));
    const json j = json::parse(e.text);
    std::vector<std::pair<std::string, json>> keys;
    flatten(j, "", keys);
    for (const auto& [k, v] : keys) {
        EXPECT_TRUE(kDeepSpeedKeys.count(k)) << "undocumented key " << k;
        EXPECT_FALSE(v.is_string() && v.get<std::string>() == "auto") << k;  // concrete values only
    }
    const int micro = j["train_micro_batch_size_per_gpu"], gas = j["gradient_accumulation_steps"];
    EXPECT_EQ(j["train_batch_size"].get<int>(), micro * gas * p.dp);
    EXPECT_EQ(j["train_batch_size"].get<int>(), p.global_batch_size);
    // The plan is the reference: the micro batch is the plan's, and the accumulation steps are
    // global / (micro x DP), the plan's microbatches per step (each data-parallel rank runs them).
    EXPECT_EQ(micro, p.microbatch_size);
    EXPECT_EQ(gas, p.global_batch_size / (p.microbatch_size * p.dp));
    // Precision: fp16 -> fp16.enabled; bf16, and fp8 (whose non-GEMM work is bf16) -> bf16.enabled;
    // fp32 -> neither.
    EXPECT_EQ(j["fp16"]["enabled"].get<bool>(), p.precision == Precision::fp16);
    EXPECT_EQ(j["bf16"]["enabled"].get<bool>(), p.precision == Precision::bf16 || p.precision == Precision::fp8);
    // bf16 gradients accumulate and reduce in fp32, as the planner's DeepSpeed stack prices them;
    // DeepSpeed's defaults for both are the model's bf16.
    const bool bf16 = j["bf16"]["enabled"].get<bool>();
    EXPECT_TRUE(kDeepSpeed.bf16_grads_reduced_in_fp32);
    EXPECT_EQ(j.contains("data_types") && j["data_types"]["grad_accum_dtype"] == "fp32", bf16) << e.text;
    EXPECT_EQ(j.contains("communication_data_type") && j["communication_data_type"] == "fp32", bf16) << e.text;
    // Recompute: DeepSpeed's JSON has no mode, only how deepspeed.checkpointing stores the
    // checkpoints: partitioned over the TP ranks when there are several and the plan recomputes.
    // The mode itself is in the note that says which flag the model must be run with.
    EXPECT_EQ(j["activation_checkpointing"]["partition_activations"].get<bool>(), p.recompute != Recompute::none && p.tp > 1);
    bool recompute_note = false, mode_named = false, flag_named = false, degrees_named = false;
    const std::string mode = p.recompute == Recompute::full ? "full recompute" : "selective recompute";
    const std::string flag =
        p.recompute == Recompute::full ? "--checkpoint-activations" : "--recompute-granularity selective";
    const std::string degrees = "--tensor-model-parallel-size " + std::to_string(p.tp) +
                                " --pipeline-model-parallel-size " + std::to_string(p.pp) + " --micro-batch-size " +
                                std::to_string(p.microbatch_size) + " --global-batch-size " +
                                std::to_string(p.global_batch_size);
    for (const auto& n : e.notes) {
        if (n.find("activation_checkpointing") != std::string::npos) {
            recompute_note = true;
            mode_named |= n.find(mode) != std::string::npos;
            flag_named |= n.find(flag) != std::string::npos;
        }
        // Without pipeline stages Megatron-DeepSpeed must be told not to build its pipeline model
        // (whose engine refuses ZeRO-2/3); the stage travels as --zero-stage too.
        if (n.find(degrees) != std::string::npos) {
            degrees_named = true;
            EXPECT_EQ(n.find("--no-pipeline-parallel") != std::string::npos, p.pp == 1) << n;
            EXPECT_NE(n.find("--zero-stage " + std::to_string(j["zero_optimization"]["stage"].get<int>())),
                      std::string::npos)
                << n;
            EXPECT_NE(n.find("--deepspeed --deepspeed_config"), std::string::npos) << n;
            // Megatron's weights take the config's 16-bit type: its own flag for it.
            const bool bf16 = j["bf16"]["enabled"].get<bool>(), fp16 = j["fp16"]["enabled"].get<bool>();
            EXPECT_EQ(n.find(" --bf16 ") != std::string::npos, bf16) << n;
            EXPECT_EQ(n.find(" --fp16 ") != std::string::npos, fp16) << n;
            // DeepSpeed checks train_batch_size = micro x accumulation x world, its world the
            // data-parallel ranks only when Megatron-DeepSpeed hands it an mpu (config.py,
            // _batch_assertion): plain deepspeed.initialize counts every GPU.
            EXPECT_NE(n.find("count the " + std::to_string(p.dp) + " data-parallel ranks"), std::string::npos) << n;
            EXPECT_NE(n.find("counts all " + std::to_string(p.world_size()) + " GPUs"), std::string::npos) << n;
        }
    }
    EXPECT_EQ(recompute_note, p.recompute != Recompute::none);
    if (p.recompute != Recompute::none) {
        EXPECT_TRUE(mode_named) << mode;
        EXPECT_TRUE(flag_named) << flag;
    }
    // The JSON has no TP/PP degree: the note gives the Megatron-DeepSpeed flags with the plan's.
    EXPECT_EQ(degrees_named, p.tp > 1 || p.pp > 1) << degrees;
    EXPECT_FALSE(j["fp16"]["enabled"].get<bool>() && j["bf16"]["enabled"].get<bool>());
    if (j["zero_optimization"].contains("offload_param")) {
        EXPECT_EQ(j["zero_optimization"]["stage"], 3);
    }
    // bf16 weights with fp32 gradient accumulation need ZeRO on: without it DeepSpeed's
    // _do_optimizer_sanity_check raises (v0.18.5+) or runs BF16_Optimizer, another plan. A ZeRO-0
    // plan is written as ZeRO-1, and a note says so.
    const bool fp32_accumulation = j["bf16"]["enabled"].get<bool>() && j.contains("data_types");
    EXPECT_EQ(j["zero_optimization"]["stage"].get<int>(), fp32_accumulation ? std::max(1, p.zero_stage) : p.zero_stage);
    bool stage_note = false;
    for (const auto& n : e.notes) stage_note |= n.find("ZeRO stage 1 for the plan's 0") != std::string::npos;
    EXPECT_EQ(stage_note, fp32_accumulation && p.zero_stage == 0) << p.describe();
}

std::map<std::string, std::string> torchtitan_values(const std::string& text, bool toml, int* world) {
    std::map<std::string, std::string> v;
    std::istringstream in(text);
    std::string line, section;
    *world = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (toml) {
            if (line.front() == '[') {
                section = line.substr(1, line.find(']') - 1);
                continue;
            }
            const auto eq = line.find(" = ");
            if (eq == std::string::npos) continue;
            std::string value = line.substr(eq + 3);
            if (!value.empty() && value.front() == '"') value = value.substr(1, value.size() - 2);
            v[section + "." + line.substr(0, eq)] = value;
        } else {
            std::istringstream words(line);
            std::vector<std::string> w;
            for (std::string x; words >> x;) w.push_back(x);
            if (!w.empty() && w[0] == "torchrun")
                *world = std::stoi(w[2]) * std::stoi(w[4]);  // --nproc_per_node N --nnodes M
            if (w.size() == 2 && w[0].rfind("--", 0) == 0) v[w[0].substr(2)] = w[1];
            // A bare flag is a boolean (tyro): --section.key on, --section.no_key off.
            if (w.size() == 1 && w[0].rfind("--", 0) == 0) {
                std::string key = w[0].substr(2);
                const auto dot = key.find('.');
                const bool off = dot != std::string::npos && key.compare(dot + 1, 3, "no_") == 0;
                if (off) key.erase(dot + 1, 3);
                v[key] = off ? "false" : "true";
            }
        }
    }
    return v;
}

void check_torchtitan(const ModelSpec& m, const Plan& p, TorchtitanFormat format) {
    SCOPED_TRACE(p.describe());
    const Emitted e = export_torchtitan(m, winner(p), load_cluster("dgx-a100"), format);
    int world = 0;
    const bool toml = format == TorchtitanFormat::toml;
    auto v = torchtitan_values(e.text, toml, &world);
    if (toml) {
        world = p.world_size();
    } else {
        EXPECT_TRUE(bash_syntax_ok(e.text)) << e.text;
    }
    for (const auto& [k, value] : v) EXPECT_TRUE(kTorchtitanKeys.count(k)) << "undocumented key " << k;
    auto num = [&](const std::string& k, int fallback) { return v.count(k) ? std::stoi(v[k]) : fallback; };
    const int replicate = num("parallelism.data_parallel_replicate_degree", 1);
    const int shard = num("parallelism.data_parallel_shard_degree", -1);
    const int tp = num("parallelism.tensor_parallel_degree", 1), pp = num("parallelism.pipeline_parallel_degree", 1);
    const int cp = num("parallelism.context_parallel_degree", 1);
    ASSERT_GT(shard, 0);  // explicit, not "the rest"
    EXPECT_EQ(replicate * shard * cp * tp * pp, world);
    // The plan is the reference: each degree one by one. Data parallelism is FSDP's shard degree
    // where the plan shards weights or gradients (ZeRO 2-3, or ZeRO 1 under pipelining, which
    // torchtitan runs as FSDP keeping the gathered weights), DDP's replicate degree otherwise.
    EXPECT_EQ(tp, p.tp);
    EXPECT_EQ(pp, p.pp);
    EXPECT_EQ(cp, p.cp);
    const bool fsdp = p.zero_stage >= 2 || (p.zero_stage == 1 && p.pp > 1);
    EXPECT_EQ(shard, fsdp ? p.dp : 1);
    EXPECT_EQ(replicate, fsdp ? 1 : p.dp);
    EXPECT_EQ(num("training.seq_len", -1), p.seq_length);
    // torchtitan's local_batch_size is one DP rank's batch: the pipeline splits it into microbatches
    // of pipeline_parallel_microbatch_size (so global / DP), while without stages torchtitan
    // accumulates gradients over global / (local x DP) steps of local = the plan's micro batch.
    EXPECT_EQ(num("training.local_batch_size", -1), p.pp > 1 ? p.global_batch_size / p.dp : p.microbatch_size);
    // Precision: torchtitan's mixed_precision_param is "bfloat16" | "float32" (config-formats.md
    // §B3); fp8 GEMMs keep bf16 parameters.
    const std::string param = v["training.mixed_precision_param"];
    if (p.precision == Precision::fp32) {
        EXPECT_EQ(param, "float32");
    }
    if (p.precision == Precision::bf16 || p.precision == Precision::fp8) {
        EXPECT_EQ(param, "bfloat16");
    }
    // Recompute: torchtitan's activation_checkpoint.mode names the same three modes.
    const std::string expected_mode =
        p.recompute == Recompute::none ? "none" : p.recompute == Recompute::selective ? "selective" : "full";
    EXPECT_EQ(v["activation_checkpoint.mode"], expected_mode);
    EXPECT_EQ(v.count("activation_checkpoint.selective_ac_option"), p.recompute == Recompute::selective ? 1u : 0u);
    const int local = num("training.local_batch_size", 8), global = num("training.global_batch_size", -1);
    const int batch_degree = replicate * shard;
    ASSERT_GT(global, 0);
    EXPECT_EQ(global % (local * batch_degree), 0);
    EXPECT_EQ(global, p.global_batch_size);
    if (pp > 1) {
        const int pp_mb = num("parallelism.pipeline_parallel_microbatch_size", 1);
        EXPECT_EQ(local % pp_mb, 0);
        EXPECT_EQ(pp_mb, p.microbatch_size);
        const int per_stage = num("parallelism.pipeline_parallel_layers_per_stage", 0);
        ASSERT_GT(per_stage, 0);
        // torchtitan's split (pipeline_parallel.py): the embedding and the output count as
        // first/last_stage_less_layers layers (default 1 each); stages = ceil(effective / per
        // stage); generate_llm_fqn_per_model_part cuts the effective layers evenly, the first
        // `extra` stages one more, and takes the weights from the two ends.
        const int first_less = num("parallelism.pipeline_parallel_first_stage_less_layers", 1);
        const int last_less = num("parallelism.pipeline_parallel_last_stage_less_layers", 1);
        const int effective = m.num_layers + first_less + last_less;
        const int stages = (effective + per_stage - 1) / per_stage;
        EXPECT_EQ(stages % pp, 0);  // virtual stages divisible by PP
        EXPECT_EQ(stages / pp, p.virtual_stages);  // the plan's chunks per pipeline rank
        const int base = effective / stages, extra = effective % stages;
        ASSERT_LE(first_less, base);
        ASSERT_LE(last_less, base);
        const auto chunks = layers_per_chunk(m.num_layers, pp, stages / pp);
        for (int s = 0; s < stages; ++s) {
            const int built = base + (s < extra ? 1 : 0) - (s == 0 ? first_less : 0) - (s == stages - 1 ? last_less : 0);
            EXPECT_EQ(built, chunks[s]) << "stage " << s;  // torchtitan builds what the simulator ran
        }
        const bool multi = v["parallelism.pipeline_parallel_schedule"] == "Interleaved1F1B";
        EXPECT_EQ(v["parallelism.pipeline_parallel_schedule"], p.virtual_stages > 1 ? "Interleaved1F1B" : "1F1B");
        if (multi) {
            EXPECT_GE(stages / pp, 2);
        } else {
            EXPECT_EQ(stages / pp, 1);
        }
        EXPECT_EQ(local / pp_mb, p.num_microbatches());
    }
    const std::string mode = v["activation_checkpoint.mode"];
    EXPECT_TRUE(mode == "none" || mode == "selective" || mode == "full") << mode;
}

}  // namespace

TEST(ExportMegatron, GqaInterleavedLlama) {
    const ModelSpec m = load_model("llama3-70b");
    check_megatron(m, make_plan(8, 4, 2, 1, 1, 256, 8192, 5, 1, Recompute::selective, true));
    check_megatron(m, make_plan(4, 2, 8, 1, 2, 256, 8192, 1, 0, Recompute::full, true));
    check_megatron(m, make_plan(8, 1, 4, 2, 1, 256, 8192, 1, 1, Recompute::none, true));
    const std::string s = export_megatron(m, winner(make_plan(8, 4, 2, 1, 1, 256, 8192, 5, 1)), load_cluster("dgx-h100")).text;
    EXPECT_NE(s.find("--group-query-attention --num-query-groups 8"), std::string::npos);
    EXPECT_NE(s.find("--num-layers-per-virtual-pipeline-stage 4"), std::string::npos);  // 80 / (4 x 5)
    EXPECT_NE(s.find("--ffn-hidden-size 28672"), std::string::npos);
    EXPECT_NE(s.find("--swiglu"), std::string::npos);
    EXPECT_NE(s.find("--rotary-base 500000"), std::string::npos) << s;  // Llama 3's RoPE base, not Megatron's 10000
    EXPECT_NE(s.find("--use-distributed-optimizer"), std::string::npos);
    EXPECT_EQ(s.find("--virtual-pipeline-model-parallel-size"), std::string::npos);  // no such flag
}

// Megatron-LM's --attention-dropout and --hidden-dropout default to 0.1: the script turns them off
// for the RoPE models the simulator runs without dropout (Llama's recipe has none) and leaves GPT's.
TEST(ExportMegatron, DropoutFollowsTheSimulatedModel) {
    const Plan p = make_plan(8, 1, 2, 1, 1, 64, 2048);
    const std::string llama = export_megatron(load_model("llama3-8b"), winner(p), load_cluster("dgx-h100")).text;
    EXPECT_NE(llama.find("--attention-dropout 0.0 --hidden-dropout 0.0"), std::string::npos) << llama;
    const std::string gpt = export_megatron(load_model("gpt3-175b"), winner(p), load_cluster("dgx-a100")).text;
    EXPECT_EQ(gpt.find("dropout"), std::string::npos) << gpt;
}

// torchrun counts processes per host: 128 GPUs of two NVL72 racks are 32 hosts of 4.
TEST(Export, LaunchesOnNvl72CountTrays) {
    const ModelSpec m = load_model("llama3-70b");
    const Plan p = make_plan(4, 4, 8, 1, 1, 256, 8192);
    const ClusterSpec rack = with_gpus_per_node(load_cluster("gb200-nvl72"), 64);
    const std::string mg = export_megatron(m, winner(p), rack).text;
    EXPECT_NE(mg.find("GPUS_PER_NODE=4\nNNODES=32\n"), std::string::npos) << mg;
    const std::string tt = export_torchtitan(m, winner(p), rack, TorchtitanFormat::overrides).text;
    EXPECT_NE(tt.find("--nproc_per_node 4 --nnodes 32 "), std::string::npos) << tt;
    const std::string dgx = export_megatron(m, winner(p), load_cluster("dgx-h100")).text;
    EXPECT_NE(dgx.find("GPUS_PER_NODE=8\nNNODES=16\n"), std::string::npos) << dgx;
}

// Pythia rotates a quarter of each head: --rotary-percent; its parallel residual has no flag.
TEST(ExportMegatron, PartialRotaryAndParallelResidual) {
    const ModelSpec m = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/pythia-160m-config.json");
    const Plan p = make_plan(1, 1, 8, 1, 4, 64, 2048);
    check_megatron(m, p);
    const Emitted e = export_megatron(m, winner(p), load_cluster("dgx-h100"));
    EXPECT_NE(e.text.find("--rotary-percent 0.25"), std::string::npos) << e.text;
    bool noted = false;
    for (const auto& n : e.notes) noted = noted || n.find("parallel") != std::string::npos;
    EXPECT_TRUE(noted);
    const std::string llama = export_megatron(load_model("llama3-8b"), winner(p), load_cluster("dgx-h100")).text;
    EXPECT_EQ(llama.find("--rotary-percent"), std::string::npos);
}

TEST(ExportMegatron, RopeScalingFlags) {
    const Plan p = make_plan(1, 1, 8, 1, 4, 64, 8192);
    // Llama 3.1's config.json: rope_scaling llama3, factor 8.
    ModelSpec m = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/llama3.1-8b-config.json");
    check_megatron(m, p);
    auto text_and_notes = [&](const ModelSpec& model) {
        const Emitted e = export_megatron(model, winner(p), load_cluster("dgx-h100"));
        std::string all = e.text;
        for (const auto& n : e.notes) all += "\n" + n;
        return all;
    };
    EXPECT_NE(text_and_notes(m).find("--use-rope-scaling --rope-scaling-factor 8"), std::string::npos) << text_and_notes(m);
    EXPECT_EQ(text_and_notes(m).find("frequency bands"), std::string::npos);  // Llama 3.1's own: no note
    ModelSpec other_bands = m;
    other_bands.rope_scaling_original_context = 4096;
    EXPECT_NE(text_and_notes(other_bands).find("this model's are 1 and 4 over 4096"), std::string::npos)
        << text_and_notes(other_bands);
    // pretrain_gpt.py's builder passes --use-rope-scaling alone: a factor other than GPTModel's
    // default 8 (Llama 3.2's 32) is noted, and so is linear interpolation.
    EXPECT_EQ(text_and_notes(m).find("gpt_builders.py"), std::string::npos);
    ModelSpec llama32 = m;
    llama32.rope_scaling_factor = 32;
    EXPECT_NE(text_and_notes(llama32).find("stays its default 8, not this model's 32"), std::string::npos)
        << text_and_notes(llama32);
    m.rope_scaling_type = "linear";
    m.rope_scaling_factor = 4;
    // From June 2026 Megatron-LM's builder passes the factor (argument_utils.py, 5f884384a7); the
    // releases before it do not, which the note says.
    EXPECT_NE(text_and_notes(m).find("GPTModel without it"), std::string::npos) << text_and_notes(m);
    EXPECT_NE(text_and_notes(m).find("June 2026 GPT builder on"), std::string::npos) << text_and_notes(m);
    check_megatron(m, p);
    EXPECT_NE(text_and_notes(m).find("--rotary-seq-len-interpolation-factor 4"), std::string::npos);
    EXPECT_EQ(text_and_notes(m).find("--use-rope-scaling"), std::string::npos);
    m.rope_scaling_type = "yarn";
    EXPECT_EQ(text_and_notes(m).find("--use-rope-scaling"), std::string::npos);
    EXPECT_NE(text_and_notes(m).find("RoPE scaling \"yarn\" (factor 4)"), std::string::npos) << text_and_notes(m);
    const std::string plain = text_and_notes(load_model("llama3-8b"));
    EXPECT_EQ(plain.find("rope-scaling"), std::string::npos);
    EXPECT_EQ(plain.find("RoPE scaling"), std::string::npos);
}

TEST(ExportMegatron, Gpt3PublishedLayout) {
    const ModelSpec m = load_model("gpt3-175b");
    check_megatron(m, make_plan(8, 12, 4, 1, 1, 1536, 2048, 2, 0, Recompute::full, false));
    const std::string s = export_megatron(m, winner(make_plan(8, 12, 4, 1, 1, 1536, 2048, 2)), load_cluster("dgx-a100")).text;
    EXPECT_NE(s.find("--position-embedding-type learned_absolute"), std::string::npos);
    EXPECT_EQ(s.find("--untie-embeddings-and-output-weights"), std::string::npos);  // GPT-3 ties them
}

TEST(ExportMegatron, UnevenPipelineUsesFirstAndLastStageFlags) {
    // Llama-3-405B: 126 layers on 16 stages -> 7 on the first and last, 8 on the 14 between.
    const ModelSpec m = load_model("llama3-405b");
    const Plan p = make_plan(8, 16, 8, 1, 1, 2048, 8192, 1, 1, Recompute::selective, true);
    check_megatron(m, p);
    const std::string s = export_megatron(m, winner(p), load_cluster("dgx-h100")).text;
    EXPECT_NE(s.find("--decoder-first-pipeline-num-layers 7"), std::string::npos) << s;
    EXPECT_NE(s.find("--decoder-last-pipeline-num-layers 7"), std::string::npos) << s;
}

TEST(ExportMegatron, UnevenInterleavedPipelineIsALayout) {
    // Llama-3-405B's 126 layers on 16 ranks x 2 chunks: 32 chunks, 3 on the first and last and 4
    // on the 30 between (2 x 3 + 30 x 4 = 126): no --num-layers-per-virtual-pipeline-stage can say it.
    const ModelSpec m = load_model("llama3-405b");
    const Plan p = make_plan(8, 16, 8, 1, 1, 2048, 8192, 2, 1, Recompute::selective, true);
    check_megatron(m, p);
    const std::string s = export_megatron(m, winner(p), load_cluster("dgx-h100")).text;
    EXPECT_NE(s.find("--pipeline-model-parallel-layout \"Et*3|(t*4|)*30,t*3L\""), std::string::npos) << s;
    EXPECT_EQ(s.find("--num-layers-per-virtual-pipeline-stage"), std::string::npos) << s;
    EXPECT_EQ(megatron_pipeline_layout({3, 4, 4, 3}), "Et*3|(t*4|)*2,t*3L");
    EXPECT_EQ(megatron_pipeline_layout({1, 2, 1, 2, 2}), "Et|t*2|t|t*2|,t*2L");
}

TEST(ExportTorchtitan, UnevenPipelinesCountTheEndsAsLessLayers) {
    const ModelSpec m = load_model("llama3-405b");
    // 126 = 2 x 3 + 30 x 4 on 32 stages; 126 = 2 x 7 + 14 x 8 on 16.
    for (const auto& [v, per_stage, less] : {std::tuple{2, 4, 1}, std::tuple{1, 8, 1}}) {
        const Plan p = make_plan(8, 16, 8, 1, 1, 2048, 8192, v, 1, Recompute::selective, true);
        check_torchtitan(m, p, TorchtitanFormat::overrides);
        check_torchtitan(m, p, TorchtitanFormat::toml);
        std::map<std::string, std::string> keys;
        for (const auto& k : torchtitan_keys(m, p)) keys[k.section + "." + k.key] = k.value;
        EXPECT_EQ(keys["parallelism.pipeline_parallel_layers_per_stage"], std::to_string(per_stage));
        EXPECT_EQ(keys["parallelism.pipeline_parallel_first_stage_less_layers"], std::to_string(less));
        EXPECT_EQ(keys["parallelism.pipeline_parallel_last_stage_less_layers"], std::to_string(less));
    }
}

TEST(ExportMegatron, ReplicatedKvHeadsSayWhichVersion) {
    const ModelSpec m = load_model("llama3-70b");
    const Emitted e = export_megatron(m, winner(make_plan(16, 1, 4, 1, 1, 256, 8192)), load_cluster("dgx-h100"));
    bool noted = false;
    for (const auto& n : e.notes) noted |= n.find("0.16") != std::string::npos;
    EXPECT_TRUE(noted);
}

TEST(ExportMegatron, Fp8PlansAskForTransformerEnginesFp8) {
    const ModelSpec m = load_model("llama3-8b");
    Plan p = make_plan(2, 1, 8, 1, 1, 64, 8192);
    p.precision = Precision::fp8;
    check_megatron(m, p);
    const std::string s = export_megatron(m, winner(p), load_cluster("dgx-h100")).text;
    EXPECT_NE(s.find("--bf16"), std::string::npos) << s;  // the weights and everything outside the GEMMs
    EXPECT_NE(s.find("--fp8-format hybrid"), std::string::npos) << s;
    // Transformer Engine refuses fp8 below compute capability 8.9: on A100s (no fp8 peak, GEMMs
    // priced at bf16's) the script stays bf16 and its note says why.
    const Emitted a100 = export_megatron(m, winner(p), load_cluster("dgx-a100"));
    EXPECT_EQ(a100.text.find("--fp8-format"), std::string::npos) << a100.text;
    EXPECT_NE(a100.text.find("--bf16"), std::string::npos) << a100.text;
    auto says_no_fp8 = [](const Emitted& e) {
        bool noted = false;
        for (const auto& n : e.notes) noted |= n.find("no fp8 peak") != std::string::npos;
        return noted;
    };
    EXPECT_TRUE(says_no_fp8(a100));
    // The other two exports say the same on A100s rather than what to add for fp8.
    EXPECT_TRUE(says_no_fp8(export_deepspeed(m, winner(p), load_cluster("dgx-a100"))));
    EXPECT_TRUE(says_no_fp8(export_torchtitan(m, winner(p), load_cluster("dgx-a100"), TorchtitanFormat::overrides)));
    EXPECT_FALSE(says_no_fp8(export_torchtitan(m, winner(p), load_cluster("dgx-h100"), TorchtitanFormat::overrides)));
    p.precision = Precision::bf16;
    EXPECT_EQ(export_megatron(m, winner(p), load_cluster("dgx-h100")).text.find("--fp8-format"), std::string::npos);
}

TEST(ExportMegatron, QkNormModelsAskForQkLayernorm) {
    const std::string dir = TESSEL_TEST_DATA_DIR;
    const ModelSpec qwen = load_model(dir + "/hf/qwen3-8b-config.json");
    const Plan p = make_plan(2, 1, 4, 1, 1, 64, 4096);
    check_megatron(qwen, p);
    const Emitted e = export_megatron(qwen, winner(p), load_cluster("dgx-h100"));
    EXPECT_NE(e.text.find("--qk-layernorm"), std::string::npos) << e.text;
    EXPECT_EQ(e.text.find("--add-qkv-bias"), std::string::npos) << e.text;
    for (const auto& n : e.notes) EXPECT_EQ(n.find("OLMo"), std::string::npos) << n;
    // OLMo 2's whole-projection norm has no Megatron flag: the flag is the nearest, and a note says so.
    const Emitted olmo = export_megatron(load_model(dir + "/hf/olmo2-7b-config.json"), winner(p), load_cluster("dgx-h100"));
    EXPECT_NE(olmo.text.find("--qk-layernorm"), std::string::npos);
    bool noted = false;
    for (const auto& n : olmo.notes) noted |= n.find("whole projections") != std::string::npos;
    EXPECT_TRUE(noted);
    EXPECT_EQ(export_megatron(load_model("llama3-8b"), winner(p), load_cluster("dgx-h100")).text.find("--qk-layernorm"),
              std::string::npos);
}

TEST(ExportMegatron, GemmaLayersWithoutFlagsAreNoted) {
    const ModelSpec gemma = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/gemma-2-9b-config.json");
    const Plan p = make_plan(2, 1, 4, 1, 1, 64, 4096);
    check_megatron(gemma, p);
    const Emitted e = export_megatron(gemma, winner(p), load_cluster("dgx-h100"));
    EXPECT_EQ(e.text.find("--swiglu"), std::string::npos) << e.text;  // not SwiGLU
    bool geglu = false, norms = false;
    for (const auto& n : e.notes) {
        geglu |= n.find("GeGLU") != std::string::npos;
        norms |= n.find("post-attention") != std::string::npos;
    }
    EXPECT_TRUE(geglu);
    EXPECT_TRUE(norms);
}

TEST(ExportDeepSpeed, BatchIdentityAndKeys) {
    const ModelSpec m = load_model("llama3-8b");
    for (int zero : {0, 1, 2, 3}) check_deepspeed(m, make_plan(1, 1, 16, 1, 2, 512, 8192, 1, zero, Recompute::full));
    check_deepspeed(m, make_plan(2, 4, 2, 1, 1, 64, 8192, 1, 1, Recompute::selective));
    check_deepspeed(m, make_plan(2, 1, 8, 1, 1, 64, 8192, 1, 3, Recompute::full));  // TP with ZeRO-3, no PP
    Plan fp32 = make_plan(1, 1, 8, 1, 4, 64, 2048);
    fp32.precision = Precision::fp32;
    check_deepspeed(m, fp32);
    Plan fp16 = make_plan(1, 1, 8, 1, 4, 64, 2048);
    fp16.precision = Precision::fp16;
    check_deepspeed(m, fp16);
}

TEST(ExportMegatron, WritesTpCommOverlapWhereItWasPriced) {
    // Megatron-LM's --tp-comm-overlap asserts --sequence-parallel; the flag goes where the search
    // priced the overlap and the plan has TP with sequence parallelism.
    const ModelSpec m = load_model("llama3-70b");
    const ClusterSpec c = load_cluster("dgx-h100");
    auto script = [&](Plan p, bool priced) {
        p.tp_comm_overlap = priced;
        return export_megatron(m, winner(p), c).text;
    };
    const Plan tp_sp = make_plan(4, 4, 4, 1, 1, 64, 8192, 1, 1, Recompute::none, true);
    EXPECT_NE(script(tp_sp, true).find("--sequence-parallel --tp-comm-overlap"), std::string::npos);
    EXPECT_EQ(script(tp_sp, false).find("--tp-comm-overlap"), std::string::npos);
    EXPECT_EQ(script(make_plan(1, 4, 16, 1, 1, 64, 8192, 1, 1), true).find("--tp-comm-overlap"), std::string::npos);
}

TEST(ExportTorchtitan, WritesAsyncTpAndTheCompileItNeedsWhereItWasPriced) {
    // torchtitan raises "Async TP requires 'model' in --compile.components and --compile.enable"
    // (maybe_enable_async_tp): the overlap is priced with the compiled model's fused elementwise
    // kernels, and the config turns on both, as TOML keys or as bare command-line flags.
    const ModelSpec m = load_model("llama3-70b");
    const ClusterSpec c = load_cluster("dgx-h100");
    Plan tp_sp = make_plan(8, 1, 8, 1, 1, 64, 8192, 1, 3, Recompute::full, true);
    tp_sp.tp_comm_overlap = true;
    const std::string toml = export_torchtitan(m, winner(tp_sp), c, TorchtitanFormat::toml).text;
    EXPECT_NE(toml.find("enable_async_tensor_parallel = true"), std::string::npos) << toml;
    EXPECT_NE(toml.find("[compile]\nenable = true"), std::string::npos) << toml;
    const std::string flags = export_torchtitan(m, winner(tp_sp), c, TorchtitanFormat::overrides).text;
    EXPECT_NE(flags.find("  --parallelism.enable_async_tensor_parallel\n"), std::string::npos) << flags;
    EXPECT_NE(flags.find("  --compile.enable\n"), std::string::npos) << flags;
    // Not priced, or no TP to overlap: both keys written off, so that a base config that turns them
    // on (torchtitan v0.2.x's llama3_405b.toml: enable_async_tensor_parallel and compile.enable
    // true) cannot change the step under the overrides.
    Plan unpriced = tp_sp;
    unpriced.tp_comm_overlap = false;
    const std::string off = export_torchtitan(m, winner(unpriced), c, TorchtitanFormat::toml).text;
    EXPECT_NE(off.find("enable_async_tensor_parallel = false"), std::string::npos) << off;
    EXPECT_NE(off.find("[compile]\nenable = false"), std::string::npos) << off;
    const std::string off_flags = export_torchtitan(m, winner(unpriced), c, TorchtitanFormat::overrides).text;
    EXPECT_NE(off_flags.find("  --parallelism.no_enable_async_tensor_parallel\n"), std::string::npos) << off_flags;
    EXPECT_NE(off_flags.find("  --compile.no_enable\n"), std::string::npos) << off_flags;
    EXPECT_EQ(off_flags.find("  --compile.enable\n"), std::string::npos) << off_flags;
    // No override can clear model.converters: the script says the base must list none.
    EXPECT_NE(off_flags.find("must list no model.converters"), std::string::npos) << off_flags;
    Plan no_tp_plan = make_plan(1, 1, 64, 1, 1, 64, 8192, 1, 3, Recompute::full);
    no_tp_plan.tp_comm_overlap = true;
    const std::string no_tp = export_torchtitan(m, winner(no_tp_plan), c, TorchtitanFormat::toml).text;
    EXPECT_NE(no_tp.find("enable_async_tensor_parallel = false"), std::string::npos) << no_tp;
    EXPECT_NE(no_tp.find("[compile]\nenable = false"), std::string::npos) << no_tp;

    // The simulator prices what the config runs: TP overlap and, for torchtitan, fused elementwise
    // kernels where TP runs (the compiled model) and eager ones without TP, as the config leaves
    // compile off there; Megatron's elementwise kernels are fused already; DeepSpeed has no such
    // overlap.
    SimulateOptions tt = simulate_options_for(Framework::torchtitan, Precision::bf16);
    ASSERT_FALSE(tt.fused_elementwise);
    apply_tp_comm_overlap(tt, Framework::torchtitan, "test");
    EXPECT_TRUE(tt.tp_comm_overlap);
    SimulateOptions tt_plain = simulate_options_for(Framework::torchtitan, Precision::bf16), tt_compiled = tt_plain;
    tt_compiled.fused_elementwise = true;
    const ClusterSpec node = resize_cluster(c, 8);
    Plan no_tp_step = make_plan(1, 1, 8, 1, 1, 8, 8192, 1, 3, Recompute::full);
    no_tp_step.zero_stage = 3;
    EXPECT_DOUBLE_EQ(simulate(m, node, no_tp_step, tt).step_time_s, simulate(m, node, no_tp_step, tt_plain).step_time_s);
    Plan tp_step = make_plan(8, 1, 1, 1, 1, 8, 8192, 1, 3, Recompute::full, true);
    tp_step.zero_stage = 0;
    SimulateOptions tt_overlap_compiled = tt;
    tt_overlap_compiled.fused_elementwise = true;
    EXPECT_DOUBLE_EQ(simulate(m, node, tp_step, tt).step_time_s, simulate(m, node, tp_step, tt_overlap_compiled).step_time_s);
    EXPECT_LT(simulate(m, node, tp_step, tt).step_time_s, simulate(m, node, tp_step, tt_plain).step_time_s);
    SimulateOptions mg = simulate_options_for(Framework::megatron, Precision::bf16);
    apply_tp_comm_overlap(mg, Framework::megatron, "test");
    EXPECT_TRUE(mg.tp_comm_overlap && mg.fused_elementwise);
    SimulateOptions ds = simulate_options_for(Framework::deepspeed, Precision::bf16);
    EXPECT_THROW(apply_tp_comm_overlap(ds, Framework::deepspeed, "test"), InputError);
}

TEST(ExportMegatronAndTorchtitan, WriteTheLmHeadsShareOfThePipelineSplit) {
    // 32 layers, head as 2: stages of 17 and 15, as Megatron's first-stage count and torchtitan's
    // layers per stage with the last stage holding 2 fewer.
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = load_cluster("dgx-h100");
    Plan p = make_plan(1, 2, 4, 1, 1, 64, 4096, 1, 1);
    p.lm_head_layers = 2;
    const std::string script = export_megatron(m, winner(p), c).text;
    EXPECT_NE(script.find("--decoder-first-pipeline-num-layers 17"), std::string::npos) << script;
    std::map<std::string, std::string> keys;
    for (const auto& k : torchtitan_keys(m, p)) keys[k.section + "." + k.key] = k.value;
    EXPECT_EQ(keys["parallelism.pipeline_parallel_layers_per_stage"], "17");
    EXPECT_EQ(keys["parallelism.pipeline_parallel_first_stage_less_layers"], "0");
    EXPECT_EQ(keys["parallelism.pipeline_parallel_last_stage_less_layers"], "2");
    // Interleaved, 2 x 3 chunks of 5, 6, 6, 6, 6, 3: Megatron's layout string.
    p.virtual_stages = 3;
    p.schedule = Schedule::interleaved;
    EXPECT_NE(export_megatron(m, winner(p), c).text.find("\"Et*5|(t*6|)*4,t*3L\""), std::string::npos);
}

TEST(ExportDeepSpeed, WritesTheBucketsTheSearchPriced) {
    // A DeepSpeed search prices its gradient reduction in buckets of the stack's size; the config
    // must run those buckets, not DeepSpeed's default 5e8 (whose overlap_comm buffers the memory
    // model does not hold).
    const ModelSpec m = load_model("llama3-8b");
    const double priced = simulate_options_for(Framework::deepspeed, Precision::bf16).grad_bucket_parameters;
    const auto j = json::parse(export_deepspeed(m, winner(make_plan(1, 1, 16, 1, 2, 512, 8192, 1, 1)),
                                                load_cluster("dgx-h100")).text);
    EXPECT_EQ(j["zero_optimization"]["reduce_bucket_size"].get<double>(), priced);
    EXPECT_EQ(j["zero_optimization"]["allgather_bucket_size"].get<double>(), priced);
    EXPECT_LT(priced, 5e8);
}

TEST(ExportDeepSpeed, NotesAnUnevenPipelineSplit) {
    const ModelSpec m = load_model("llama3-70b");  // 80 layers
    auto uneven_note = [&](int pp) {
        for (const auto& n : export_deepspeed(m, winner(make_plan(8, pp, 1, 1, 1, 64, 8192)), load_cluster("dgx-h100")).notes)
            if (n.find("80 layers over " + std::to_string(pp) + " stages") != std::string::npos) return true;
        return false;
    };
    EXPECT_TRUE(uneven_note(3));
    EXPECT_FALSE(uneven_note(4));
}

TEST(ExportTorchtitan, OverridesAndToml) {
    const ModelSpec m = load_model("llama3-8b");
    for (TorchtitanFormat f : {TorchtitanFormat::overrides, TorchtitanFormat::toml}) {
        check_torchtitan(m, make_plan(2, 4, 8, 1, 1, 512, 8192, 2, 3, Recompute::selective, true), f);  // FSDP + TP + interleaved PP
        check_torchtitan(m, make_plan(1, 1, 64, 1, 2, 512, 8192, 1, 2, Recompute::full), f);           // FSDP, accumulation
        check_torchtitan(m, make_plan(2, 2, 4, 2, 1, 64, 8192, 1, 0, Recompute::none, true), f);       // DDP + CP + 1F1B
    }
    const std::string toml = export_torchtitan(m, winner(make_plan(2, 4, 8, 1, 1, 512, 8192, 2, 3)), load_cluster("dgx-h100"),
                                               TorchtitanFormat::toml).text;
    EXPECT_NE(toml.find("[parallelism]"), std::string::npos);
    EXPECT_NE(toml.find("pipeline_parallel_schedule = \"Interleaved1F1B\""), std::string::npos);
    EXPECT_NE(toml.find("flavor = \"8B\""), std::string::npos);
    EXPECT_NE(toml.find("local_batch_size = 64"), std::string::npos);  // 512 / 8 per DP rank, 64 microbatches of 1
    // The launch script starts from the train config torchtitan ships for the flavor.
    const Plan big = make_plan(8, 4, 2, 1, 1, 64, 8192);
    EXPECT_NE(export_torchtitan(load_model("llama3-70b"), winner(big), load_cluster("dgx-h100"), TorchtitanFormat::overrides)
                  .text.find("train_configs/llama3_70b.toml"), std::string::npos);
    EXPECT_NE(export_torchtitan(m, winner(big), load_cluster("dgx-h100"), TorchtitanFormat::overrides)
                  .text.find("train_configs/llama3_8b.toml"), std::string::npos);
    // Except the 405B's, which turns on float8, compile and async TP (torchtitan v0.2.x
    // llama3_405b.toml): the eager bf16 step simulated starts from the 70B's, with the 405B flavor.
    const std::string big405 =
        export_torchtitan(load_model("llama3-405b"), winner(make_plan(8, 8, 8, 1, 1, 512, 8192)), load_cluster("dgx-h100"),
                          TorchtitanFormat::overrides).text;
    EXPECT_NE(big405.find("train_configs/llama3_70b.toml"), std::string::npos) << big405;
    EXPECT_NE(big405.find("--model.flavor 405B"), std::string::npos) << big405;
    // pipeline_parallel_first/last_stage_less_layers are v0.2 keys: the TOML says so.
    EXPECT_NE(toml.find("torchtitan v0.2.x"), std::string::npos) << toml;
    EXPECT_EQ(toml.find("v0.1"), std::string::npos) << toml;
}

TEST(ExportTorchtitan, PipelinedZeroOneIsFsdpThatKeepsTheGatheredWeights) {
    // torchtitan's FSDP under pipelining keeps the gathered weights (reshard_after_forward "default"
    // is off with PP) and syncs gradients after the last microbatch: the planner's ZeRO 1 there.
    const ModelSpec m = load_model("llama3-8b");
    const std::string toml = export_torchtitan(m, winner(make_plan(2, 4, 8, 1, 1, 512, 8192, 1, 1)), load_cluster("dgx-h100"),
                                               TorchtitanFormat::toml).text;
    EXPECT_NE(toml.find("data_parallel_shard_degree = 8"), std::string::npos) << toml;
    EXPECT_NE(toml.find("data_parallel_replicate_degree = 1"), std::string::npos) << toml;
    EXPECT_NE(toml.find("fsdp_reshard_after_forward = \"default\""), std::string::npos) << toml;
    EXPECT_TRUE(simulate_options_for(Framework::torchtitan, Precision::bf16).reduce_after_pipeline_flush);
}

TEST(Export, PlannerSimulatesTheStackTheConfigRuns) {
    const ModelSpec m = load_model("llama3-8b");
    // torchtitan: ZeRO-2 keeps the forward's gathered weights (reshard never), gradients are
    // reduced in fp32, no torch.compile: the simulator's layerwise ZeRO-2, fp32 reduction, eager ops.
    const std::string toml = export_torchtitan(m, winner(make_plan(1, 1, 64, 1, 1, 512, 8192, 1, 2)), load_cluster("dgx-h100"),
                                               TorchtitanFormat::toml).text;
    EXPECT_NE(toml.find("fsdp_reshard_after_forward = \"never\""), std::string::npos) << toml;
    EXPECT_NE(toml.find("mixed_precision_reduce = \"float32\""), std::string::npos) << toml;
    EXPECT_NE(toml.find("[compile]\nenable = false"), std::string::npos) << toml;
    const SimulateOptions tt = simulate_options_for(Framework::torchtitan, Precision::bf16);
    EXPECT_TRUE(tt.zero2_layerwise_gather);
    EXPECT_TRUE(tt.grad_reduce_in_fp32);
    EXPECT_FALSE(tt.fused_elementwise);
    EXPECT_FALSE(tt.eager_rmsnorm);  // nn.RMSNorm is one fused kernel in eager since 2025
    EXPECT_FALSE(tt.gradient_accumulation_fusion);
    // Megatron-LM: the script switches on both overlaps and leaves bf16 gradients in fp32.
    const std::string script = export_megatron(m, winner(make_plan(2, 1, 32, 1, 1, 512, 8192, 1, 1)), load_cluster("dgx-h100")).text;
    EXPECT_NE(script.find("--overlap-grad-reduce"), std::string::npos);
    EXPECT_NE(script.find("--overlap-param-gather"), std::string::npos);
    EXPECT_EQ(script.find("--grad-reduce-in-bf16"), std::string::npos);
    const SimulateOptions mg = simulate_options_for(Framework::megatron, Precision::bf16);
    EXPECT_TRUE(mg.overlap_grad_reduce && mg.overlap_param_gather && mg.grad_reduce_in_fp32 && mg.gradient_accumulation_fusion);
    EXPECT_FALSE(simulate_options_for(Framework::megatron, Precision::fp16).grad_reduce_in_fp32);
    // DeepSpeed: separate accumulation kernels, weights gathered after the step, and with pipeline
    // stages the reduction after the flush.
    const SimulateOptions ds = simulate_options_for(Framework::deepspeed, Precision::bf16);
    EXPECT_FALSE(ds.gradient_accumulation_fusion);
    EXPECT_FALSE(ds.overlap_param_gather);
    EXPECT_TRUE(ds.reduce_after_pipeline_flush);  // the pipeline engine, whatever overlap_comm says
    EXPECT_TRUE(ds.overlap_grad_reduce);           // overlap_comm, without pipeline stages
    EXPECT_TRUE(ds.grad_reduce_in_fp32);           // the bf16 optimizer's fp32 gradient copies
    EXPECT_FALSE(simulate_options_for(Framework::megatron, Precision::bf16).reduce_after_pipeline_flush);
    // Without --emit: the simulator's defaults.
    const SimulateOptions any = simulate_options_for(Framework::any, Precision::bf16);
    const SimulateOptions d;
    EXPECT_EQ(any.gradient_accumulation_fusion, d.gradient_accumulation_fusion);
    EXPECT_EQ(any.grad_reduce_in_fp32, d.grad_reduce_in_fp32);
    EXPECT_EQ(any.fused_elementwise, d.fused_elementwise);
}

// Every precision and recompute mode through the three exporters: the check_* helpers compare
// each emitted degree, batch, sequence length, recompute setting and precision with the plan.
TEST(Export, EmittedValuesAreThePlansForEveryPrecisionAndRecompute) {
    const ModelSpec m = load_model("llama3-8b");
    for (Precision prec : {Precision::bf16, Precision::fp16, Precision::fp32, Precision::fp8}) {
        for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
            Plan p = make_plan(2, 4, 4, 2, 1, 128, 8192, 2, 1, rc, true);
            p.precision = prec;
            check_megatron(m, p);
            check_deepspeed(m, p);
            // torchtitan has no fp16 (mixed_precision_param is bfloat16 | float32).
            if (prec != Precision::fp16) check_torchtitan(m, p, TorchtitanFormat::toml);
        }
    }
    // Full recompute of the first 3 layers of each chunk: Megatron's block method.
    Plan partial = make_plan(4, 2, 8, 1, 2, 256, 4096, 1, 0, Recompute::full);
    partial.recompute_layers = 3;
    check_megatron(m, partial);
    // ZeRO 0 (DDP) and ZeRO 1 without stages stay replicated in torchtitan; ZeRO 3 shards.
    for (int zero : {0, 1, 3}) check_torchtitan(m, make_plan(2, 1, 16, 1, 2, 256, 4096, 1, zero), TorchtitanFormat::overrides);
}

// What torchtitan cannot run is said, not silently changed: fp16 (it has bf16 and fp32 only) and
// full recompute of some layers per chunk (its "full" mode recomputes all). tessel plan never
// exports either; a plan written by hand can ask for them.
TEST(ExportTorchtitan, NotesWhatItCannotExpress) {
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = load_cluster("dgx-h100");
    auto notes_of = [&](const Plan& p) {
        std::string all;
        for (const auto& n : export_torchtitan(m, winner(p), c, TorchtitanFormat::toml).notes) all += n + "\n";
        return all;
    };
    Plan fp16 = make_plan(1, 1, 8, 1, 1, 64, 4096, 1, 0);
    fp16.precision = Precision::fp16;
    EXPECT_NE(notes_of(fp16).find("no fp16"), std::string::npos) << notes_of(fp16);
    Plan bf16 = fp16;
    bf16.precision = Precision::bf16;
    EXPECT_EQ(notes_of(bf16).find("fp16"), std::string::npos) << notes_of(bf16);
    Plan partial = make_plan(1, 1, 8, 1, 1, 64, 4096, 1, 0, Recompute::full);
    partial.recompute_layers = 3;
    EXPECT_NE(notes_of(partial).find("recomputes 3 per chunk"), std::string::npos) << notes_of(partial);
    partial.recompute_layers = 0;
    EXPECT_EQ(notes_of(partial).find("per chunk"), std::string::npos) << notes_of(partial);
}

TEST(ExportTorchtitan, NotesRopeOtherThanLlama31s) {
    // torchtitan v0.2.x rotates every llama3 flavor with Llama 3.1's scaling (RoPEScalingArgs: 8, 1,
    // 4, 8192): Llama 3.1's config needs no note, Llama 3's plain RoPE and Llama 3.2's factor 32 do.
    const ClusterSpec c = load_cluster("dgx-h100");
    const Plan p = make_plan(1, 1, 8, 1, 1, 64, 8192, 1, 0);
    auto rope_note = [&](const ModelSpec& m) {
        for (const auto& n : export_torchtitan(m, winner(p), c, TorchtitanFormat::toml).notes)
            if (n.find("RoPEScalingArgs") != std::string::npos) return n;
        return std::string();
    };
    ModelSpec llama31 = load_model(std::string(TESSEL_TEST_DATA_DIR) + "/hf/llama3.1-8b-config.json");
    EXPECT_EQ(rope_note(llama31), "");
    EXPECT_NE(rope_note(load_model("llama3-8b")).find("where this model has none"), std::string::npos)
        << rope_note(load_model("llama3-8b"));
    llama31.rope_scaling_factor = 32;
    EXPECT_NE(rope_note(llama31).find("llama3 factor 32"), std::string::npos) << rope_note(llama31);
}

TEST(ExportTorchtitan, NotesBf16WithoutFsdpTrainsInFp32) {
    // torchtitan's maybe_enable_amp: bf16 through FSDP (shard > 1 or CP > 1), or autocast without
    // TP and PP; TP or PP without FSDP runs fp32.
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = load_cluster("dgx-h100");
    auto fp32_note = [&](const Plan& p) {
        for (const auto& n : export_torchtitan(m, winner(p), c, TorchtitanFormat::toml).notes)
            if (n.find("trains in fp32") != std::string::npos) return true;
        return false;
    };
    EXPECT_TRUE(fp32_note(make_plan(2, 4, 1, 1, 1, 64, 8192, 1, 1)));   // TP and PP, DP 1
    EXPECT_TRUE(fp32_note(make_plan(8, 1, 1, 1, 1, 64, 8192, 1, 3)));   // ZeRO 3 over one rank shards nothing
    EXPECT_FALSE(fp32_note(make_plan(2, 4, 2, 1, 1, 64, 8192, 1, 1)));  // FSDP over DP 2
    EXPECT_FALSE(fp32_note(make_plan(2, 1, 1, 2, 1, 64, 8192, 1, 2)));  // FSDP over CP 2
    EXPECT_FALSE(fp32_note(make_plan(1, 1, 8, 1, 1, 64, 8192, 1, 0)));  // DDP: autocast
    Plan fp32 = make_plan(2, 4, 1, 1, 1, 64, 8192, 1, 1);
    fp32.precision = Precision::fp32;
    EXPECT_FALSE(fp32_note(fp32));
}

TEST(ExportDeepSpeed, RecomputeNoteNamesTheFlagOfItsMode) {
    // Megatron-DeepSpeed's --checkpoint-activations is full, uniform recompute (its validate_args).
    const ModelSpec m = load_model("llama3-8b");
    const ClusterSpec c = load_cluster("dgx-h100");
    auto notes_of = [&](Recompute rc) {
        std::string all;
        for (const auto& n : export_deepspeed(m, winner(make_plan(1, 1, 8, 1, 1, 64, 4096, 1, 1, rc)), c).notes)
            all += n + "\n";
        return all;
    };
    EXPECT_NE(notes_of(Recompute::full).find("--checkpoint-activations"), std::string::npos);
    EXPECT_EQ(notes_of(Recompute::selective).find("--checkpoint-activations"), std::string::npos);
    EXPECT_NE(notes_of(Recompute::selective).find("--recompute-granularity selective"), std::string::npos);
}

TEST(ExportTorchtitan, ParsesFormat) {
    EXPECT_EQ(parse_torchtitan_format("toml"), TorchtitanFormat::toml);
    EXPECT_THROW(parse_torchtitan_format("yaml"), InputError);
}

TEST(ExportTorchtitan, ModelsItsLlama3CannotBuildAreNamedAndOthersGetTheirOwnFlavor) {
    // torchtitan v0.2.x's llama3 model: RMSNorm, SwiGLU, RoPE, no biases, untied, head dim =
    // hidden / heads. GPT-3 has none of the five it can differ in; Llama 3 8B none of them.
    EXPECT_TRUE(torchtitan_llama3_gaps(load_model("llama3-8b")).empty());
    EXPECT_EQ(torchtitan_llama3_gaps(load_model("gpt3-175b")),
              (std::vector<std::string>{"a non-SwiGLU MLP", "LayerNorm", "learned positions", "tied embeddings",
                                        "linear biases"}));
    const auto qwen3 = torchtitan_llama3_gaps(load_model("tiny-qwen3"));
    EXPECT_NE(std::find(qwen3.begin(), qwen3.end(), "QK norms"), qwen3.end());
    // A Llama-shaped model torchtitan does not ship: its own flavor name, not the base config's 8B.
    const auto keys = torchtitan_keys(load_model("llama2-70b"), make_plan(8, 1, 8, 1, 1, 64, 4096, 1, 3));
    std::map<std::string, std::string> v;
    for (const auto& k : keys) v[k.section + "." + k.key] = k.value;
    EXPECT_EQ(v["model.name"], "\"llama3\"");
    EXPECT_EQ(v["model.flavor"], "\"llama2-70b\"");
}

// torchtitan v0.2.x FeedForward.__init__ (models/llama3/model/model.py), rewritten from its source:
// hidden = int(2 * (4 * dim) / 3); with a multiplier, int(multiplier * hidden); then rounded up to
// a multiple of multiple_of.
long long torchtitan_ffn_width(long long dim, long long multiple_of, double multiplier) {
    long long hidden = static_cast<long long>(2.0 * (4 * dim) / 3.0);
    if (multiplier > 0) hidden = static_cast<long long>(multiplier * hidden);
    return multiple_of * ((hidden + multiple_of - 1) / multiple_of);
}

TEST(ExportTorchtitan, FlavorEntryRebuildsTheModelsFfnWidth) {
    auto field = [](const std::string& entry, const std::string& name) -> std::string {
        const auto at = entry.find(name + "=");
        if (at == std::string::npos) return "";
        const auto start = at + name.size() + 1;
        return entry.substr(start, entry.find_first_of(",)", start) - start);
    };
    // Llama 2 7B: torchtitan's default rounding gives 11008 (4096 -> 10922 -> 43 x 256).
    const ModelSpec l2 = load_model("llama2-7b");
    const std::string e7 = torchtitan_flavor_entry(l2);
    EXPECT_EQ(e7.rfind("\"llama2-7b\": TransformerModelArgs(", 0), 0u) << e7;
    EXPECT_EQ(field(e7, "multiple_of"), "256") << e7;
    EXPECT_EQ(field(e7, "ffn_dim_multiplier"), "") << e7;
    EXPECT_EQ(field(e7, "dim"), "4096");
    EXPECT_EQ(field(e7, "n_layers"), "32");
    EXPECT_EQ(field(e7, "n_kv_heads"), "32");
    EXPECT_EQ(field(e7, "vocab_size"), "32000");
    EXPECT_EQ(field(e7, "rope_theta"), "10000");
    // Every width, narrower or wider than 8/3 of the hidden size, comes back out of the formula.
    for (int dim : {1024, 4096, 5120, 8192}) {
        for (int ffn : {2816, 3072, 11008, 13824, 14336, 28672, 53248, 1000, 7}) {
            ModelSpec m = l2;
            m.hidden_size = dim;
            m.ffn_hidden_size = ffn;
            const std::string e = torchtitan_flavor_entry(m);
            const std::string mult = field(e, "ffn_dim_multiplier");
            EXPECT_EQ(torchtitan_ffn_width(dim, std::stoll(field(e, "multiple_of")), mult.empty() ? 0.0 : std::stod(mult)), ffn)
                << e;
        }
    }
    // Every note stands in both forms of the file as a comment, before the first command or section.
    for (TorchtitanFormat f : {TorchtitanFormat::toml, TorchtitanFormat::overrides}) {
        const Emitted both = export_torchtitan(l2, winner(make_plan(2, 2, 2, 1, 1, 64, 4096, 1, 2)), load_cluster("dgx-h100"), f);
        ASSERT_GE(both.notes.size(), 2u);
        const auto first = f == TorchtitanFormat::toml ? both.text.find("\n[") : both.text.find("set -euo pipefail");
        for (const auto& n : both.notes) {
            const auto at = both.text.find("# note: " + n + "\n");
            EXPECT_NE(at, std::string::npos) << n;
            EXPECT_LT(at, first) << n;
        }
        if (f == TorchtitanFormat::overrides) EXPECT_TRUE(bash_syntax_ok(both.text)) << both.text;
    }
    // The note that names the flavor carries the entry.
    const Emitted ex = export_torchtitan(l2, winner(make_plan(1, 1, 8, 1, 1, 64, 4096, 1, 2)), load_cluster("dgx-h100"),
                                         TorchtitanFormat::toml);
    bool carried = false;
    for (const auto& n : ex.notes) carried |= n.find(e7) != std::string::npos;
    EXPECT_TRUE(carried);
}

TEST(ExportMegatron, LayerFlagsFollowTheModelAndTheGpu) {
    const Plan p = make_plan(2, 1, 4, 1, 1, 64, 4096, 1, 2);
    const ClusterSpec a100 = load_cluster("dgx-a100");
    auto script = [&](const ModelSpec& m, const ClusterSpec& c) { return export_megatron(m, winner(p), c); };
    ModelSpec m = load_model("llama2-7b");
    // Biases on every linear layer are Megatron's default (add_bias_linear): no bias flag, no note.
    m.qkv_bias = m.out_bias = m.mlp_bias = true;
    Emitted e = script(m, a100);
    EXPECT_EQ(e.text.find("--disable-bias-linear"), std::string::npos) << e.text;
    EXPECT_EQ(e.text.find("--add-qkv-bias"), std::string::npos) << e.text;
    for (const auto& n : e.notes) EXPECT_EQ(n.find("biases on"), std::string::npos) << n;
    // Q, K and V alone: the flag pair; the output alone: no flag, and a note (in the script too).
    m.out_bias = m.mlp_bias = false;
    EXPECT_NE(script(m, a100).text.find("--disable-bias-linear --add-qkv-bias"), std::string::npos);
    m.qkv_bias = false;
    m.out_bias = true;
    e = script(m, a100);
    EXPECT_NE(e.text.find("--disable-bias-linear"), std::string::npos);
    EXPECT_EQ(e.text.find("--add-qkv-bias"), std::string::npos);
    EXPECT_NE(e.text.find("# note: biases on the attention output alone have no Megatron-LM flag"), std::string::npos)
        << e.text;
    m.out_bias = false;
    // A window of w keys, the query itself among them, is Transformer Engine's (w - 1, 0); a
    // pattern of n keeps every n-th layer full (Megatron-Core: layer_number % n == 0, 1-based;
    // Gemma 3's 1-in-6).
    m.sliding_window = 4096;
    e = script(m, a100);
    EXPECT_NE(e.text.find(" --window-size 4095,0"), std::string::npos) << e.text;
    EXPECT_EQ(e.text.find("--window-attn-skip-freq"), std::string::npos) << e.text;
    m.sliding_window_pattern = 6;
    EXPECT_NE(script(m, a100).text.find(" --window-size 4095,0 --window-attn-skip-freq 6"), std::string::npos);
    m.sliding_window = m.sliding_window_pattern = 0;
    // A GPU without FlashAttention (V100, compute capability 7.0) has no Transformer Engine either:
    // Megatron's local layers, whose attention is the unfused one the plan priced there.
    const ClusterSpec v100 = load_cluster("dgx2-v100");
    ASSERT_FALSE(v100.gpu.flash_attention);
    EXPECT_NE(script(m, v100).text.find(" --transformer-impl local"), std::string::npos);
    EXPECT_EQ(script(m, a100).text.find("--transformer-impl"), std::string::npos);
    // Its RMSNorm (WrappedTorchNorm) asserts persist_layer_norm off, which Megatron defaults on.
    {
        ModelSpec rms = m;
        rms.norm = Norm::rmsnorm;
        EXPECT_NE(script(rms, v100).text.find(" --transformer-impl local --no-persist-layer-norm"), std::string::npos);
        ModelSpec ln = m;
        ln.norm = Norm::layernorm;
        EXPECT_EQ(script(ln, v100).text.find("--no-persist-layer-norm"), std::string::npos);  // LayerNorm: fused
        EXPECT_EQ(script(rms, a100).text.find("--no-persist-layer-norm"), std::string::npos);
    }
    // Every note stands in the script as a comment before its first command.
    m.out_bias = true;
    e = script(m, a100);
    ASSERT_FALSE(e.notes.empty());
    const auto first_command = e.text.find("set -euo pipefail");
    for (const auto& n : e.notes) {
        const auto at = e.text.find("# note: " + n + "\n");
        EXPECT_NE(at, std::string::npos) << n;
        EXPECT_LT(at, first_command) << n;
    }
    EXPECT_TRUE(bash_syntax_ok(e.text)) << e.text;
}
