#include "compare/validate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "compare/published_cluster.h"
#include "compare/text_match.h"
#include "core/accounting.h"
#include "core/plan_choices.h"
#include "core/errors.h"
#include "core/presets.h"
#include "core/units.h"
#include "simulator/software_stack.h"

namespace tessel {

// The rules that turn a published row into a simulation. Each applies to every row alike; a
// row's own text only ever switches on what the row itself states (a flag it names, the
// mixed-precision mode it names). The report prints them.
const std::vector<std::string>& validation_rules() {
    static const std::vector<std::string> rules = {
        "R1 model: null num_kv_heads = num_attention_heads; null ffn_hidden_size = 4 x hidden for an ungated MLP, "
        "and for a gated one the width that gives the row's parameters_b (untied embeddings, attention, three "
        "matrices per layer; to a multiple of 256), else 2/3 of 4h rounded up to 256; null activation = "
        "gelu. Ungated activations (GeLU, ReLU, squared ReLU) are the GPT family (two-matrix MLP, LayerNorm, "
        "learned positions, tied embeddings, attention and hidden dropout 0.1 where the stack applies it: Megatron-LM "
        "and DeepSpeed do, llm.c has none and llm-foundry's MPT configurations set it to 0); gated ones (SwiGLU, SiLU, GeGLU: a name with 'glu' or "
        "'silu', or swish) the Llama family (three-matrix MLP, RMSNorm, RoPE, untied, no dropout); a null activation "
        "with the MLP width and parameter count stated takes the family whose layout counts closer to those "
        "parameters. A row that names rotary "
        "embeddings, no biases, untied embeddings or no dropout has them whatever its family. Null vocab_size = "
        "GPT-2's 50257 BPE tokens. Every vocabulary is padded to a multiple of 128 x tp, as Megatron-LM does "
        "(--make-vocab-size-divisible-by 128) and llm.c does (50304).",
        "R2 layout: null tensor/pipeline/context parallel = 1; null data_parallel = GPUs / (tp pp cp); null "
        "virtual_pipeline = 1 (interleaved when > 1); null microbatch = 1 (Megatron's default); null global_batch_size = "
        "global_batch_tokens / seq_length; a global batch that dp x microbatch does not divide, within 2% of one "
        "it does, is rounded to that one. A number written as text (\"2\") is that number, and a degree of "
        "parallelism written \"none\", \"no\" or \"off\" is 1; a null microbatch_size that the notes give "
        "(\"micro-batch size 2\", --micro-batch-size 2) takes it.",
        "R3 memory sharding: \"ZeRO-k\" (also \"ZeRO k\", \"ZeRO stage k\", zero_stage k, or a stage named beside "
        "ZeRO: \"ZeRO++ (stage 3)\") = stage k; FSDP / FULL_SHARD / HYBRID_SHARD / HSDP / \"fully sharded\" = ZeRO-3 (FSDP the text "
        "denies is none: \"FSDP: 0\" or \"FSDP 0\" as NVIDIA's tables print their 0/1 column, \"no FSDP\", \"FSDP off\", "
        "use_megatron_fsdp=False), Colossal-AI's Gemini = ZeRO-3, "
        "SHARD_GRAD_OP, _HYBRID_SHARD_ZERO2 and FSDP2's reshard_after_forward false = ZeRO-2, NO_SHARD = 0; \"stage k\" "
        "as the field's first words or beside DeepSpeed's name, a stage in words (\"ZeRO stage two\") or a bare "
        "digit = stage k; Megatron's distributed optimizer (--use-distributed-optimizer, "
        "NeMo's distributed_fused_adam, dist-opt) and fairscale's optimizer state sharding (OSS) = ZeRO-1; \"none\" = 0; null "
        "= 0, except that --overlap-param-gather (which Megatron accepts only with --use-distributed-optimizer) "
        "implies ZeRO-1. CPU or NVMe offload (ZeRO-Offload, ZeRO-Infinity) is not modelled: such a row is listed "
        "as not modelled (offload the text denies, \"no CPU offload\" or cpu_offload=False, is none).",
        "R4 recompute: \"full...\" = full, \"selective...\" = selective (Megatron: the attention core), \"none\" "
        "(or no, false, off, \"no activation checkpointing\") or null = none; checkpointing named without a "
        "granularity (--checkpoint-activations, \"activation checkpointing\", --recompute-method uniform/block, "
        "true, enabled, \"grad ckpt\", \"AC every layer\", remat) = full; torchtitan's SAC = selective; a recompute "
        "or checkpointing granularity, method or layer count set to nothing (activations_checkpoint_method: null, "
        "recompute_granularity None, \"recompute layers = 0\") = none, other keys that only configure it "
        "(activation_checkpointing_reentrant: false) not; a granularity or checkpointing the text denies (\"w/o recomputation\", \"full "
        "recomputation is not used\") is not taken; with --recompute-method block and --recompute-num-layers N "
        "(Megatron-LM's earlier --activations-checkpoint-method/-num-layers, NeMo's recompute_layers N or "
        "activations_checkpoint_* keys, or in words: \"block method, 4 layers\") only the first N layers of each "
        "model chunk are recomputed and the rest keep their activations, also when R15 fills other fields. "
        "torchtitan's selective checkpointing (op: every other matmul; layer: every other layer, "
        "its documented defaults) re-runs about half a forward: simulated as the midpoint of none and full. "
        "cpu_offloading_num_layers N (Megatron-Core) offloads the first N layers' activations to host memory "
        "over the GPU's host link (the preset's gpu.host_bandwidth_GBps).",
        "R5 precision: the narrowest format the text names: a 4- or 6-bit float (NVFP4, MXFP4) or an integer "
        "format has no costs here, so the row is listed as not modelled; else any fp8 (MXFP8, FP8-CS, float8, "
        "e4m3) = fp8 (GEMMs at the fp8 peak, the rest in bf16), bf16 (bfloat16) = bf16, fp16 (float16, half) = "
        "fp16 (and PyTorch Lightning's 16-mixed); a format the text denies (\"FP8 not used\") is not named; only where "
        "none of those is named, TF32 is not modelled and fp32 (float32, single or full "
        "precision) = fp32; a text naming no format (null, \"mixed\", \"amp\") takes the GPU's own 16-bit "
        "format: bf16, or fp16 on a GPU without bf16 (V100). An fp8 run gathers its sharded weights in fp8 (half "
        "the bytes) only where the row sets --fp8-param-gather, fp8_param_gather or enable_fsdp_float8_all_gather.",
        "R6 sequence parallelism: true/false (or yes/no, on/off, 1/0); null = off (Megatron's default) unless the row names --tp-comm-overlap, which "
        "Megatron requires it for; on whenever tp > 1 for torchtitan, whose tensor-parallel plan shards the norms "
        "along the sequence.",
        "R7 overlap: the row's flags (--overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap or async TP in "
        "words (\"AsyncTP\", \"asynchronous tensor parallelism\"), "
        "--overlap-p2p-communication, or their configuration keys with a value: overlap_grad_reduce/overlap_grad_sync, "
        "overlap_param_gather/overlap_param_sync, tp_comm_overlap/ub_tp_comm_overlap (torchtitan's async TP: "
        "enable_async_tensor_parallel), overlap_p2p_comm = true/false) and its "
        "DDP implementation ('local' all-reduces after the backward, 'torch' overlaps buckets); FSDP, llm.c and "
        "torchtitan reduce during the backward by design; Megatron's default is not to, and DeepSpeed's pipeline "
        "engine reduces after the last microbatch; FSDP's SHARD_GRAD_OP gathers the weights layer by layer in "
        "each forward, not after the optimizer step, and ZeRO-1/2 gather them beside the next forward except in "
        "Megatron (unless the row names --overlap-param-gather) and DeepSpeed. Pipeline sends hold the "
        "compute stream until they land unless the row names --overlap-p2p-communication (interleaved only).",
        "R8 gradient precision on the wire: fp32 where the framework's documented default is fp32 for 16-bit "
        "training (Megatron-LM and DeepSpeed with bf16, and fp8, whose weights are bf16; FSDP mixed precision DEFAULT / amp_*; torchtitan's "
        "mixed_precision_reduce = float32), 16-bit otherwise (fp16 Megatron, FSDP PURE, llm.c, and a row naming "
        "Megatron-Core's DistributedDataParallelConfig grad_reduce_in_fp32 false, as NeMo's fp8 recipes set it); a row "
        "naming grad_reduce_in_fp32 or accumulate_allreduce_grads_in_fp32 true reduces in fp32.",
        "R9 cluster: the GPU names the preset (V100 -> dgx2-v100, a DGX-2H's 450 W V100 at its 130 FP16 TFLOP/s, A100 PCIe -> pcie-a100, A100 40GB -> "
        "dgx-a100-40gb, other A100 -> dgx-a100, H100 PCIe -> pcie-h100, other H100 -> dgx-h100, H200 -> dgx-h200, GH200 -> dgx-h200 with the GH200's 96 GB (or 144 GB HBM3e) and NVLink-C2C to its CPU, H100 NVL and H200 NVL -> that preset with the NVL card's datasheet peaks, memory and PCIe between GPUs, B200 -> dgx-b200, GB200 -> gb200-nvl72, B300 -> dgx-b300, GB300 -> gb300-nvl72), with the row's gpus_per_node (for a GB200 or GB300 NVL72 rack, the GPUs a run takes of its NVLink domain: a compute tray's 4, or 72 that the GPU count does not fill, is read as unstated) and the node network its "
        "interconnect states (NIC count and rate in bits per second, 400G and 100GbE and Tb/s included, a whole-node "
        "figure, the port rate of HDR/NDR/EDR InfiniBand or Omni-Path where no rate is stated, or a rate alone as a "
        "port's, where it stands in the technology's own clause (not a storage network's in another); a count in words "
        "(\"four HCAs\", \"a single NIC\"), up to six words before the adapters or two before \"per node\", standing "
        "apart (not \"2-tier\", a decimal or a rate) and never an adapter's model number (ConnectX-6); a stated "
        "oversubscription such as \"2:1 oversubscribed\") in place of the preset's, resized to the row's GPU count (a count that fills no whole number of the "
        "preset's nodes, with gpus_per_node null, takes the largest share of each node that divides it). A memory size (\"96GB\"), HBM "
        "bandwidth (\"2.4 TB/s\") or power cap (\"500 W\") the gpu_type states replaces the preset's; a cap below "
        "the TDP lowers the compute ceilings by (cap/TDP)^(1/3). Read as written: the 40 GB A100 in any spelling "
        "(40GB, 40 GB, 40G); the NVL card only where NVL is a word of its own (not NVLink, NVL8 or NVL72) in a "
        "text that names no SXM, HGX or DGX; a size above 288 GB (the most HBM any GPU has: B300) is a node's or "
        "superchip's total and no GPU's, and so is a size beside host memory (host, CPU, DDR); a TB/s beside "
        "NVLink is the link's, not the HBM's; an adapter count after the rate (\"200 Gb/s x 4\") or beside the "
        "technology (\"4 EDR HCAs\", \"2 x HDR200\", \"4 ports\"); \"8 HCAs per node\" or \"8 GPUs per node\" "
        "is a count, not a whole-node rate; a port per GPU (\"400 Gb/s per GPU\", \"1 NIC per GPU\") is one for "
        "each of the node's GPUs; a port's rate beside the node's total (\"400 Gb/s (3.2 Tb/s per node)\") "
        "divides the total.",
        "R10 metric: tokens/s per GPU where published, else the iteration time, else TFLOP/s per GPU under the "
        "source's own FLOP count (a definition that says it counts recomputation: includes ... recomputation, "
        "incl. recomputation, counting the recomputed forward, HFU-like, hardware FLOPs, Megatron's eq. 3 cited or "
        "written out (96 B s l h^2 ..., Megatron's or Narayanan's \"eq. (3)\", four passes, counting the extra forward "
        "pass, not where that pass is excluded or omitted), in "
        "a clause that does not define HFU or MFU, and nowhere \"without\" or \"excluding\" recomputation) is "
        "compared with tessel's hardware FLOPs, which equal Megatron's eq. 3; otherwise model FLOPs), else MFU, "
        "else HFU (MFU times hardware over model FLOPs); an fp8 run's MFU or HFU is taken against the fp8 peak "
        "unless the definition names the BF16 peak and no fp8 one; a utilization of at most 1 is read as a "
        "fraction, and one above 100%, or a figure that is not a positive number, makes the row not modelled, "
        "with the key named.",
        "R11 attention kernel: runs whose sources date from before FlashAttention (Dao et al., arXiv 2205.14135, "
        "May 2022) used unfused attention (Megatron-LM's batched GEMMs around a fused softmax); later runs a "
        "fused flash-style kernel. The date is the latest one the row's source names: a full date, or the first day of "
        "a month (2021-04), of an arXiv identifier's month (2104.04473) or of a year named alone; a date the "
        "text marks as when it was read (accessed, retrieved, visited, fetched or downloaded, in the same clause "
        "or bracket) is not the run's. A row that "
        "names its attention says which: \"unfused attention\", or a fused kernel R12 names, else PyTorch's own ops "
        "(standard, naive, eager or vanilla PyTorch attention, math SDPA) or FlashAttention named only to be denied "
        "(\"no FlashAttention\", \"FlashAttention was not used\", quoted or not) for the unfused one. Unnamed on a GPU "
        "that runs no fused kernel (the cluster's gpu.flash_attention false: Volta), unfused.",
        "R12 kernels of the stack (the framework the source names first, a publisher's name (MosaicML) only "
        "where it names no software: DeepSpeed or GPT-NeoX, which runs "
        "DeepSpeed's engine; Megatron or NeMo, which runs Megatron-Core; llm-foundry, Composer or MosaicML; "
        "torchtitan; llm.c; otherwise the simulator's defaults), from the framework's documented configuration "
        "unless the row names them: "
        "the fused attention kernel (FlashAttention-2 class: torchtitan's SDPA, whose cuDNN backend PyTorch made "
        "opt-in in October 2024; cuDNN's fused attention: Megatron-LM, whose Transformer Engine prefers it to "
        "FlashAttention on Hopper and newer, and llm.c built with cuDNN, each at FlashAttention-2's speed on a GPU "
        "with no faster cuDNN figures (the A100 presets); FlashAttention-1 class: llm-foundry's benchmark "
        "configurations, which run attn_impl \"triton\", the Triton FlashAttention; a row naming FlashAttention-2, "
        "cuDNN or attn_impl flash/triton says which); fused elementwise kernels (Megatron-LM, llm.c) or eager PyTorch "
        "ops (llm-foundry, torchtitan without torch.compile); the loss as a fused kernel (llm.c's classifier, "
        "llm-foundry's default flash-attn xentropy, and Megatron-LM where the row names --cross-entropy-loss-fusion, "
        "which NeMo 2.0's GPTConfig sets) or the eager fp32 cross entropy (Megatron-LM, torchtitan); "
        "RMSNorm as one kernel unless the row names an eager one (torchtitan's norm_type rmsnorm without "
        "torch.compile: fp32 PyTorch ops); "
        "llm-foundry's trainer (Composer) also evaluates its two logged training metrics, LanguageCrossEntropy and "
        "LanguagePerplexity, each an eager cross entropy over the logits, after every microbatch's backward. "
        "torchtitan's FSDP (FSDP2's fully_shard) copies each block's gathered weights out of the all-gather "
        "buffer into its parameters on the compute stream before the block runs; FSDP1 (llm-foundry), DeepSpeed "
        "and Megatron-FSDP gather into the parameters' own storage. "
        "GPT-family models (R1) have biases on every linear.",
        "R13 gradient accumulation: the wgrad GEMM adds into the accumulator in place for Megatron-LM sources "
        "dated from 2022-02-13 (commit 83b1e42f30 added --gradient-accumulation-fusion, on by default) unless "
        "the row names --no-gradient-accumulation-fusion, and for llm.c (its matmul backward accumulates); "
        "otherwise a separate add per parameter tensor and microbatch (earlier Megatron-LM; DeepSpeed, whose bf16 "
        "optimizer adds each 16-bit gradient to an fp32 copy; llm-foundry and torchtitan, whose FSDP adds each "
        "reduced shard). DeepSpeed rows (Megatron-DeepSpeed) otherwise take Megatron-LM's kernels (R12). The "
        "gradient buffer is zeroed once per step where the framework keeps one (Megatron-LM's zero_grad_buffer, "
        "DeepSpeed's bf16 optimizer's clear_hp_grads, llm.c's memset: one write of the rank's gradients in "
        "the accumulation precision); llm-foundry and torchtitan free theirs (set_to_none). Megatron-LM's gradient "
        "buckets hold max(40M, 1M x DP) parameters for sources dated from 2024-04-11 (commit 0fda386c04), 40M "
        "before; other frameworks' buckets keep their fixed size. Megatron-LM's column-parallel linears reduce "
        "their input gradient beside the weight-gradient GEMM (and, with sequence parallelism, gather their input "
        "again beside the input-gradient GEMM) for sources dated from 2021-09-07 (merge b462d2545d: "
        "--no-async-tensor-model-parallel-allreduce turns it off) unless the row names that flag; DeepSpeed and "
        "torchtitan wait for the reduction.",
        "R14 scope: a row with expert parallelism or more than one expert (a mixture-of-experts model) is listed "
        "as not modelled rather than predicted as a dense model; so is one whose name says it is one (MoE, "
        "mixture-of-experts, Mixtral, DBRX, DeepSeek-V2/V3) or whose notes count its experts (\"8 experts\", "
        "num_experts 8, \"top-2 routing\"), unless the row calls its model dense.",
        "R15 unstated knobs that do not fit: the run fitted its GPUs, so where the defaults above for its null "
        "virtual_pipeline, microbatch_size, activation_recompute, zero_or_fsdp or sequence_parallel need more memory "
        "than the GPU has, those fields take the values that fit with the fastest simulated step, as `tessel plan` "
        "would choose them, among what the framework can express (Megatron-LM and llm.c shard to ZeRO-1 at most; "
        "DeepSpeed's pipeline engine neither interleaves nor shards past ZeRO-1 with pipeline stages, and has no "
        "Megatron-style sequence parallelism; Megatron-LM, and a run whose framework is not named, may recompute "
        "only the first layers of each chunk, the fewest that fit, as the planner searches it). The row's "
        "assumptions name the values taken. Where no setting fits either, the one that needs least memory is taken "
        "(nearer the run than the defaults), and the row is reported as not fitting.",
        "R16 memory: a row's memory_gb is the peak memory per GPU its source measured, in GiB where the row's "
        "notes or throughput definition name GiB (torchtitan prints the allocator's peak reservation in GiB), "
        "else in GB (10^9 bytes); it is compared with the predicted peak, never used to predict, and a value "
        "that is not a positive number, or that exceeds the memory of the row's GPU, makes the row not modelled, "
        "with the key named. A measured peak of "
        "PyTorch's caching allocator also holds freed blocks it keeps for reuse, which the memory model does not.",
        "R17 text: a field whose whole text says its value is not known (unknown, N/A, not stated, ?, with at "
        "most a bracketed remark) is null; a name the row's own clause denies is not a statement of it: no, not "
        "(not \"not only\"), without, w/o, never or disabled up to two words before it, \"non-\" right before "
        "it, a value set on it (=false, : none), or not used, disabled, off (not \"off by default\"), false or "
        "none up to two words after it that are not another setting; a turn (but, instead, a colon) ends a "
        "denial, and the fields are read as separate clauses.",
    };
    return rules;
}

namespace {

// The frameworks a row's source names (simulator/software_stack.h holds what each runs by
// default, with the sources). DeepSpeed is matched before Megatron-LM, whose name
// Megatron-DeepSpeed sources also carry.
struct KnownStack {
    const char* match;  // found in the row's `source`
    const SoftwareStack* stack;
    bool publisher = false;  // a company's name: its stack only where the source names no software
};
const KnownStack kKnownStacks[] = {
    {"DeepSpeed", &kDeepSpeed},
    {"GPT-NeoX", &kDeepSpeed},  // EleutherAI's trainer runs DeepSpeed's pipeline engine and ZeRO
    {"Megatron", &kMegatronLM},
    {"NeMo", &kMegatronLM},  // NVIDIA NeMo trains with Megatron-Core
    {"llm-foundry", &kLlmFoundry},
    {"Composer", &kLlmFoundry},  // MosaicML's trainer under llm-foundry
    {"MosaicML", &kLlmFoundry, true},
    {"torchtitan", &kTorchtitan},
    {"llm.c", &kLlmC},
};
// Without a known framework: the simulator's defaults, and every knob the planner searches without
// --emit open to R15 (block recompute included, as SearchLimits has it).
const SoftwareStack kUnknownStack{.block_recompute = true};

bool contains(const std::string& text, const std::string& word) { return contains_ignoring_case(text, word); }

// libstdc++'s std::regex matches recursively, a stack frame per character of a run it scans, and
// overflows the stack on runs of tens of thousands. Published rows' texts run to about a thousand
// characters: validation_case refuses longer ones, and text_of folds every run of whitespace into
// one space, so that fields joined into one text cannot make a longer run.
constexpr std::size_t kMaxRowText = 8192;

std::string text_of(const json& row, const char* key) {
    if (!row.contains(key) || row[key].is_null()) return "";
    const std::string raw = row[key].is_string() ? row[key].get<std::string>() : row[key].dump();
    std::string text;
    text.reserve(raw.size());
    for (char ch : raw) {
        const bool space = std::isspace(static_cast<unsigned char>(ch)) != 0;
        if (!space) text += ch;
        else if (text.empty() || text.back() != ' ') text += ' ';
    }
    return says_unstated(text) ? "" : text;  // "unknown", "N/A": the row's null
}

// Degrees of parallelism a row may state in words: "none" or "off" is no split, a degree of 1.
bool is_degree_key(const std::string& key) {
    for (const char* k : {"tensor_parallel", "pipeline_parallel", "data_parallel", "context_parallel", "virtual_pipeline",
                          "expert_parallel"})
        if (key == k) return true;
    return false;
}

// The row's number at `key`, or nullopt when absent or null.
// A number written as text ("2") is read as one; a text that says the value is unknown ("unknown",
// "N/A") is null; a degree of parallelism written "none", "no", "off" or "disabled" is 1.
std::optional<double> number_of(const json& row, const char* key, const std::string& origin, const std::string& name) {
    if (!row.contains(key) || row[key].is_null()) return std::nullopt;
    const json& v = row[key];
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
        const std::string t = text_of(row, key);
        if (t.empty()) return std::nullopt;
        static const std::regex no_split(R"(^\s*(?:none|no|off|disabled|not used)\s*$)", std::regex::icase);
        if (is_degree_key(key) && std::regex_match(t, no_split)) return 1.0;
        static const std::regex number(R"(^\s*[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\s*$)");
        // Past double's range ("1e999") stod throws: no number a row can mean.
        if (std::regex_match(t, number) && t.size() < 32) {
            const double x = std::strtod(t.c_str(), nullptr);
            if (std::isfinite(x)) return x;
        }
    }
    throw input_error(origin, fmt::format("{}.{}", name, key), "a number or null", describe_json_value(v));
}

// A row's yes/no field (sequence_parallel): true or false, or the words for them; nullopt when
// null, absent or unknown.
std::optional<bool> flag_of(const json& row, const char* key, const std::string& origin, const std::string& name) {
    if (!row.contains(key) || row[key].is_null()) return std::nullopt;
    const json& v = row[key];
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number() && (v.get<double>() == 0 || v.get<double>() == 1)) return v.get<double>() == 1;
    if (v.is_string()) {
        const std::string t = text_of(row, key);
        if (t.empty()) return std::nullopt;
        static const std::regex yes(R"(^\s*(?:true|yes|on|enabled?|used|1|--sequence-parallel)(?:\W|$))", std::regex::icase);
        static const std::regex no(R"(^\s*(?:false|no|off|disabled?|none|unused|not\s+used|not\s+enabled|0)\b)", std::regex::icase);
        if (std::regex_search(t, yes)) return true;
        if (std::regex_search(t, no)) return false;
    }
    throw input_error(origin, fmt::format("{}.{}", name, key), "true, false or null", describe_json_value(v));
}

// The latest date a text names, as YYYYMMDD (0 when none).
int latest_date(const std::string& text) {
    // A full date (2021-04-08); a month (2021-04) or an arXiv identifier (2104.04473: submitted in
    // April 2021) as its first day; a year alone (2019, within 2015-2030, closing a clause as in
    // "et al. 2019," or "(2019)") as its first day, so counts and sizes (2048 tokens, 2016 nodes)
    // are not read as years.
    int best = 0;
    static const std::regex patterns[] = {
        std::regex(R"((?:^|[^\d.-])(20\d\d)-(\d\d)-(\d\d)(?![\d]))"),
        std::regex(R"((?:^|[^\d.-])(20\d\d)-(\d\d)(?![\d-]))"),
        std::regex(R"(arXiv[: ]*(\d\d)(\d\d)\.\d{4,5})", std::regex::icase),
        std::regex(R"((?:^|[\s(,])(20[12]\d)(?=[),.;\]]|\s*[(\[]|\s*$))"),
    };
    // The day a page was read ("accessed 2025-03-01", "(accessed March 1, 2025)", "retrieved from
    // <address> on 2025-03-01") dates the reading, not the run: a date in a clause or bracket that
    // names the reading.
    static const std::regex reading(R"(\b(?:accessed|retrieved|visited|fetched|downloaded)\b[^;()\[\]]*$)", std::regex::icase);
    for (int k = 0; k < 4; ++k)
        for (std::sregex_iterator it(text.begin(), text.end(), patterns[k]), end; it != end; ++it) {
            const auto& m = *it;
            const std::size_t at = std::size_t(m.position(1));
            const std::size_t from = at > 200 ? at - 200 : 0;
            if (std::regex_search(text.substr(from, at - from), reading))
                continue;
            int year = std::stoi(m[1]), month = 1, day = 1;
            if (k == 2) year += 2000;
            if (k <= 2) month = std::stoi(m[2]);
            if (k == 0) day = std::stoi(m[3]);
            if (k == 3 && (year < 2015 || year > 2030)) continue;
            if (month < 1 || month > 12 || day < 1 || day > 31) continue;
            best = std::max(best, year * 10000 + month * 100 + day);
        }
    return best;
}
}  // namespace

// FSDP's forms of ZeRO-2, which shard gradients and optimizer states and keep each layer's gathered
// weights from its forward to its backward: FSDP1's SHARD_GRAD_OP and _HYBRID_SHARD_ZERO2, FSDP2's
// fully_shard with reshard_after_forward False.
bool fsdp_shards_gradients_only(const std::string& text) {
    static const std::regex kept(R"(reshard_after_forward\s*[:=]?\s*false)", std::regex::icase);
    return contains(text, "SHARD_GRAD_OP") || contains(text, "HYBRID_SHARD_ZERO2") || std::regex_search(text, kept);
}

// R3: the ZeRO stage a row's zero_or_fsdp text names, in the words the frameworks use.
std::optional<int> stated_zero_stage(const std::string& text) {
    if (fsdp_shards_gradients_only(text)) return 2;  // FSDP's ZeRO-2: gradients and optimizer sharded
    if (contains(text, "NO_SHARD")) return 0;        // FSDP as plain DDP
    // HYBRID_SHARD (sharded inside a node, replicated across) is taken as ZeRO-3 over every rank,
    // which understates its memory: the simulator has no shard group smaller than data parallelism.
    // FSDP counts where the text does not deny it: not "FSDP: 0" or "FSDP 0" (the 0/1 column of
    // NVIDIA's performance tables), "no FSDP", "FSDP off", "use_megatron_fsdp=False".
    static const std::regex fsdp_zero(R"(fsdp(?:\s+column)?\s*[:=]?\s*(?:0|false|off|none)\b)", std::regex::icase);
    const bool fsdp_named = !std::regex_search(text, fsdp_zero) && affirmed(text, R"(fsdp|\bhsdp\b|fully[\s_-]shard)");
    // Colossal-AI's Gemini shards parameters, gradients and optimizer states in chunks: ZeRO-3.
    if (fsdp_named || contains(text, "FULL_SHARD") || contains(text, "HYBRID_SHARD") || affirmed(text, R"(\bgemini\b)"))
        return 3;
    // The leftmost stage named: "ZeRO-1", "ZeRO 3", "ZeRO stage 2", "zero_stage: 1", "ZeRO3"; in a
    // text that names ZeRO, a stage named apart from it ("ZeRO++ (stage 3)", "ZeRO-Offload, stage 2").
    // The stage in words too ("ZeRO stage two"); a bare stage number is the field's whole text ("2").
    static const std::regex stage(R"(\bzero[\s_-]*(?:stage[\s_:=-]*)?([0-3]|zero|one|two|three)\b)", std::regex::icase);
    static const std::regex stage_apart(R"(\bstage[\s_:=-]*([0-3]|one|two|three)\b)", std::regex::icase);
    static const std::regex bare(R"(^\s*([0-3])\s*$)");
    const auto number = [](std::string w) {
        w = lowercase(w);
        if (w == "zero") return 0;
        if (w == "one") return 1;
        if (w == "two") return 2;
        if (w == "three") return 3;
        return std::stoi(w);
    };
    std::smatch m;
    if (std::regex_search(text, m, stage)) return number(m[1]);
    // A stage apart from ZeRO's name counts beside it or DeepSpeed's, or as the field's first word
    // ("stage 2"); a pipeline stage is no ZeRO stage.
    static const std::regex leading_stage(R"(^\s*stage\b)", std::regex::icase);
    if ((contains(text, "zero") || contains(text, "deepspeed") || std::regex_search(text, leading_stage)) &&
        std::regex_search(text, m, stage_apart))
        return number(m[1]);
    if (std::regex_search(text, m, bare)) return std::stoi(m[1]);
    // fairscale's optimizer state sharding (OSS) shards the optimizer state: ZeRO-1.
    static const std::regex oss(R"(optimi[sz]er state shard|\bOSS\b)", std::regex::icase);
    if (std::regex_search(text, oss)) return 1;
    // Megatron's distributed optimizer (--use-distributed-optimizer; NeMo's mcore_distributed_optim
    // and distributed_fused_adam) shards the optimizer state: ZeRO-1.
    if (affirmed(text, R"(distributed[\s_-]optim|distributed_fused_adam|\bdist[-_]?opt\b)")) return 1;
    return std::nullopt;
}

namespace {
// A setting a row's text names: its command-line flag (true), or a configuration key followed by a
// value ("tp_comm_overlap=False", "overlap_grad_sync: true", "grad_reduce_in_fp32 false"). The flag
// wins; nullopt when neither is named.
std::optional<bool> named_setting(const std::string& text, const char* flag, std::initializer_list<const char*> keys) {
    if (flag && affirmed(text, flag)) return true;
    for (const char* key : keys) {
        const std::regex setting(std::string(R"((?:^|[^A-Za-z0-9_]))") + key + R"(\s*[:=]?\s*(true|false)\b)",
                                 std::regex::icase);
        std::smatch m;
        if (std::regex_search(text, m, setting)) return lowercase(m[1].str()) == "true";
    }
    return std::nullopt;
}
}  // namespace

// R4: the recompute an activation_recompute text names.
std::optional<Recompute> stated_recompute(const std::string& text) {
    if (text.empty()) return std::nullopt;
    // A granularity counts where the text does not deny it ("full recomputation is not used").
    if (affirmed(text, R"(\bfull)")) return Recompute::full;
    if (affirmed(text, R"(\bselective|\bsel\.|\bsac\b)")) return Recompute::selective;  // torchtitan's SAC
    static const std::regex negated(R"(^\s*(none|no|false|off|disabled|0)\b|\bno (activation|recompute|checkpoint))",
                                    std::regex::icase);
    if (std::regex_search(text, negated)) return Recompute::none;
    // The granularity, method or layer count set to nothing: NeMo's activations_checkpoint_granularity
    // / _method null, Megatron's recompute_granularity None, "recompute layers = 0" (not other keys
    // that only configure the checkpointing: activation_checkpointing_reentrant: false).
    static const std::regex unset(
        R"((?:checkpoint|recompute)[\w ]{0,12}?(?:granularity|method|layers)\s*[:=]?\s*(?:null|none|0|false|off)\b)",
        std::regex::icase);
    if (std::regex_search(text, unset)) return Recompute::none;
    // Checkpointing named without a granularity: Megatron's --checkpoint-activations and its
    // --recompute-method uniform/block re-run whole layers, as DeepSpeed's and FSDP's wrappers do.
    if (affirmed(text, R"(checkpoint|\bckpt|recompute|recomputation|rematerial|\bremat\b|\buniform\b|\bblock\b|\bac\b|every\s+(?:layer|block)|^\s*(true|yes|on|enabled?)\b)"))
        return Recompute::full;
    return Recompute::none;
}

StatedPrecision stated_precision(const std::string& text) {
    // The GEMMs run in the narrowest format a text names ("bf16 with fp8 GEMMs" is fp8; "fp32 master
    // weights, bf16 compute" is bf16); TF32 and fp32 count only where no narrower one is named.
    const auto names = [&](std::initializer_list<const char*> words) {
        for (const char* w : words)
            if (affirmed(text, w)) return std::string(w);  // not "bf16 (fp8 not used)"
        return std::string();
    };
    StatedPrecision stated;
    if (std::string w = names({"fp4", "float4", "fp6", "int4", "int8"}); !w.empty()) stated.unmodelled = w;
    else if (!names({"fp8", "float8", "e4m3"}).empty()) stated.format = Precision::fp8;
    else if (!names({"bf16", "bfloat16"}).empty()) stated.format = Precision::bf16;
    else if (!names({"fp16", "float16", "half", "16-mixed"}).empty()) stated.format = Precision::fp16;  // Lightning's "16-mixed"
    else if (!names({"tf32"}).empty()) stated.unmodelled = "tf32";
    else if (!names({"fp32", "float32", "single precision", "full precision"}).empty()) stated.format = Precision::fp32;
    return stated;
}

int stated_block_recompute_layers(const std::string& text) {
    // Megatron's --recompute-num-layers N counts layers per chunk only with --recompute-method block
    // (uniform recomputes every layer, N at a time); NeMo's recompute_layers N is that block count.
    // Megatron-LM's flags before 2022 and NeMo 1's keys say activations_checkpoint for recompute; a
    // text may say it in words ("block method, 4 layers", "block (4 layers)").
    static const std::regex megatron_count(R"((?:recompute|activations?[-_ ]checkpoint)[-_ ]num[-_ ]layers\W{0,3}(\d+))",
                                           std::regex::icase);
    static const std::regex block(R"((?:recompute|activations?[-_ ]checkpoint)[-_ ]method\W{0,3}block|\bblock\b)",
                                  std::regex::icase);
    static const std::regex nemo_count(R"(\brecompute_layers\W{0,3}(\d+))", std::regex::icase);
    static const std::regex in_words(R"(\bblock\b[^;.]{0,30}?\b(\d+)\s*layers?\b)", std::regex::icase);
    std::smatch m;
    if (std::regex_search(text, m, megatron_count) && std::regex_search(text, block)) return std::stoi(m[1].str().substr(0, 7));
    if (std::regex_search(text, m, nemo_count)) return std::stoi(m[1].str().substr(0, 7));
    if (std::regex_search(text, m, in_words)) return std::stoi(m[1].str().substr(0, 7));
    return 0;
}

namespace {

// FlashAttention's first public release (arXiv 2205.14135, 2022-05-27).
constexpr int kFlashAttentionDate = 20220527;

// R10: whether a throughput definition counts the recomputed forward in its FLOPs: "INCLUDES the
// extra forward pass of full activation recomputation", "incl. recomputation", "HFU-like",
// "hardware FLOPs", "Megatron eq. 3". "Includes data loading" or "checkpoint saving" says nothing of it.
bool counts_recomputation(const std::string& definition) {
    // "... without the recompute term", "excluding recomputation": the model count.
    static const std::regex without(
        R"((?:without|excluding|excludes|exclude|omitting|omits|omit|no)\s+(?:the\s+)?(?:activation\s+recomput|recomput|extra\s+forward\s+pass)|)"
        R"(extra\s+forward\s+pass\s+(?:is\s+|are\s+)?(?:excluded|omitted|not\s+counted))",
        std::regex::icase);
    if (std::regex_search(definition, without)) return false;
    // A clause that defines HFU or MFU ("HFU = ... incl. recomputation", "HFU would include it")
    // describes that ratio, not the TFLOP/s figure.
    std::string about_tflops;
    static const std::regex ratio_clause(R"(^\s*(?:hfu|mfu)\s*(?:=|:|is\b|would\b|uses\b|counts\b|includes\b))", std::regex::icase);
    std::size_t from = 0;
    while (from <= definition.size()) {
        const std::size_t to = std::min(definition.find(';', from), definition.size());
        const std::string clause = definition.substr(from, to - from);
        if (!std::regex_search(clause, ratio_clause)) about_tflops += clause + "; ";
        from = to + 1;
    }
    return affirmed(about_tflops,
                    R"(includ\w*\s+(?:\S+\s+){0,8}?(?:recomput|rematerial|activation\s+checkpoint)|\bincl\.?\s+(?:\S+\s+){0,3}?recomput|)"
                    R"(\bcount\w*\s+(?:the\s+)?recomput|\bhfu[- ](?:like|style|type)|\bhardware\s+(?:t(?:era)?)?flop|megatron\S*\s+eq\.?\s*\(?3\b|)"
                    // Narayanan et al. 2021's eq. (3), 96 B s l h^2 (...): four passes, the recomputed forward among them.
                    R"(\b96\s*\*?\s*b\s*\*?\s*s\s*\*?\s*l\s*\*?\s*h|(?:megatron|narayanan)[^;]{0,60}\beq(?:uation)?\.?\s*\(3\)|)"
                    R"(narayanan[^;]{0,40}\b(?:4|four)\s+passes|count\w*\s+(?:the\s+)?extra\s+forward\s+pass)");
}

// Implied MFU of a step time, under tessel's FLOP count (accounting.h) and the plan's peak.
double implied_mfu(const ValidationCase& c, double step_s) {
    const auto f = flops_per_token(c.model, c.plan.seq_length);
    const double tokens = double(c.plan.global_batch_size) * c.plan.seq_length;
    return f.model * tokens / (step_s * c.plan.world_size() * c.cluster.gpu.peak(c.plan.precision) * units::TFLOP);
}

}  // namespace

const char* to_string(PublishedMetric m) {
    switch (m) {
        case PublishedMetric::tokens_per_s_per_gpu: return "tokens/s/GPU";
        case PublishedMetric::iteration_time_s: return "iteration s";
        case PublishedMetric::hardware_tflops_per_gpu: return "TFLOP/s/GPU (incl. recompute)";
        case PublishedMetric::model_tflops_per_gpu: return "TFLOP/s/GPU (model)";
        case PublishedMetric::mfu: return "MFU";
        case PublishedMetric::hfu: return "HFU";
    }
    return "?";
}

// R1's width of a gated MLP the row does not state: the one that gives the row's stated parameter
// count (untied embeddings, attention, three MLP matrices per layer; norms are a rounding error),
// to a multiple of 256. Without a count, or where the count implies less than h or more than 8h,
// 2/3 of 4h rounded up to 256: SwiGLU at the parameters of a 4h two-matrix MLP (Shazeer 2020, "GLU
// Variants Improve Transformer"), as Llama's configurations set it (multiple_of 256).
namespace {
// How messages name a row: its name, cut at 80 characters.
std::string row_where(const std::string& name) {
    return name.size() <= 80 ? fmt::format("row '{}'", name) : fmt::format("row '{}...'", name.substr(0, 80));
}

int gated_ffn_width(const ModelSpec& m, double vocab, std::optional<double> parameters_billion) {
    const double h = m.hidden_size;
    auto to_256 = [](double w) { return std::max(256, int(std::lround(w / 256.0)) * 256); };
    const int convention = (int(std::ceil(8.0 * h / 3.0)) + 255) / 256 * 256;
    if (!parameters_billion || m.num_layers <= 0) return convention;
    ModelSpec no_mlp = m;  // the layer's attention weights: its GEMM weights without an MLP
    no_mlp.ffn_hidden_size = 0;
    const double attention = double(layer_matmul_weights(no_mlp));
    const double per_layer = (*parameters_billion * 1e9 - 2.0 * vocab * h) / m.num_layers;
    const double width = (per_layer - attention) / (3.0 * h);
    if (!(width >= h && width <= 8.0 * h)) return convention;
    return to_256(width);
}

// R1: whether a row that names no activation has a gated MLP: with its MLP width and parameter
// count stated, the family whose layout counts closer to the parameters (the Llama family: three
// matrices, untied embeddings; the GPT family: two, tied). Without them, no.
bool parameters_say_gated(const ModelSpec& m, double layers, std::optional<std::int64_t> ffn, double vocab,
                          std::optional<double> parameters_billion) {
    if (!ffn || !parameters_billion || layers <= 0) return false;
    ModelSpec llama = m, gpt = m;
    llama.ffn_hidden_size = gpt.ffn_hidden_size = int(*ffn);
    llama.activation = Activation::swiglu;
    gpt.activation = Activation::gelu;
    const double h = m.hidden_size;
    const double gated = layers * double(layer_matmul_weights(llama)) + 2.0 * vocab * h;
    const double ungated = layers * double(layer_matmul_weights(gpt)) + vocab * h;
    const double stated = *parameters_billion * 1e9;
    return std::abs(gated - stated) < std::abs(ungated - stated);
}
}  // namespace

ValidationCase validation_case(const json& row, const std::string& origin) {
    if (!row.is_object()) throw input_error(origin, "(row)", "a JSON object per published run", describe_json_value(row));
    ValidationCase c;
    c.name = text_of(row, "name");
    if (c.name.empty()) throw input_error(origin, "name", "a run name in every row");
    const std::string where = row_where(c.name);
    for (auto it = row.begin(); it != row.end(); ++it)
        if (it->is_string() && it->get_ref<const std::string&>().size() > kMaxRowText)
            throw input_error(origin, fmt::format("{}.{}", where, it.key()),
                              fmt::format("a text of at most {} characters", kMaxRowText),
                              fmt::format("{} characters", it->get_ref<const std::string&>().size()));
    auto get = [&](const char* key) { return number_of(row, key, origin, where); };
    // parameters_b only guides R1's guesses: a count written "6.7B" is read, and one that is not a
    // positive number is ignored rather than refusing the row.
    const std::optional<double> parameters_b = [&]() -> std::optional<double> {
        static const std::regex billions(R"(^\s*([0-9]+(?:\.[0-9]+)?)\s*[bB]?\s*$)");
        std::smatch m;
        const std::string t = text_of(row, "parameters_b");
        if (row.contains("parameters_b") && row["parameters_b"].is_number()) {
            const double x = row["parameters_b"].get<double>();
            return x > 0 ? std::optional<double>(x) : std::nullopt;
        }
        if (std::regex_match(t, m, billions) && std::stod(m[1]) > 0) return std::stod(m[1]);
        return std::nullopt;
    }();
    // Counts (GPUs, layers, sizes, degrees) must be whole numbers a plan can hold.
    auto count = [&](const char* key) -> std::optional<int> {
        auto v = get(key);
        if (!v) return std::nullopt;
        if (!(*v >= 0 && *v <= 1e9 && *v == std::floor(*v)))
            throw input_error(origin, fmt::format("{}.{}", where, key), "a whole number from 0 to 1e9", fmt::format("{}", *v));
        return int(*v);
    };
    auto need_count = [&](const char* key) {
        auto v = count(key);
        if (!v) throw input_error(origin, fmt::format("{}.{}", where, key), "a number (this field has no default)", "null");
        return *v;
    };
    // Sizes and degrees divide one another: zero is no value for them (an integer division by it
    // stopped the program).
    for (const char* key : {"num_gpus", "num_layers", "hidden_size", "num_attention_heads", "num_kv_heads",
                            "ffn_hidden_size", "vocab_size", "seq_length", "tensor_parallel", "pipeline_parallel",
                            "data_parallel", "context_parallel", "virtual_pipeline", "microbatch_size",
                            "global_batch_size", "global_batch_tokens", "gpus_per_node"})
        if (auto v = count(key); v && *v < 1)  // count first: a negative or fractional one is no whole number
            throw input_error(origin, fmt::format("{}.{}", where, key), "at least 1, or null", fmt::format("{}", *v));
    // A model file's bounds (core/model_spec.h): a billion layers would be simulated one by one, in
    // minutes and tens of GiB.
    for (const auto& [key, most] : {std::pair{"num_layers", kMaxNumLayers}, std::pair{"hidden_size", kMaxHiddenSize},
                                    std::pair{"num_attention_heads", kMaxHeads}, std::pair{"num_kv_heads", kMaxHeads},
                                    std::pair{"ffn_hidden_size", kMaxFfnHiddenSize}, std::pair{"seq_length", kMaxSeqLength}})
        if (auto v = count(key); v && *v > most)
            throw input_error(origin, fmt::format("{}.{}", where, key), fmt::format("at most {}", most), std::to_string(*v));
    const std::string source = text_of(row, "source");
    const SoftwareStack* fw = &kUnknownStack;
    {
        // The framework the source names first ("PyTorch FSDP, compared with Megatron-LM" is not
        // Megatron's run); Megatron-DeepSpeed is DeepSpeed's pipeline engine.
        std::string named = lowercase(source);
        for (std::size_t at; (at = named.find("megatron-deepspeed")) != std::string::npos;) named.replace(at, 9, "");
        std::size_t first = std::string::npos;
        for (bool publishers : {false, true}) {
            for (const auto& k : kKnownStacks)
                if (const std::size_t at = named.find(lowercase(k.match)); k.publisher == publishers && at < first) {
                    first = at;
                    fw = k.stack;
                }
            if (first != std::string::npos) break;
        }
    }
    // The fields joined as clauses of their own: one field's last word is no denial of the next's first.
    // The row's notes and derived figures, where a field it leaves null may be stated in words.
    const std::string noted = text_of(row, "notes") + "; " + text_of(row, "derived");
    const std::string stated = text_of(row, "zero_or_fsdp") + "; " + text_of(row, "throughput_definition") + "; " +
                               text_of(row, "notes") + "; " + text_of(row, "activation_recompute") + "; " +
                               text_of(row, "precision");
    auto assume = [&](std::string s) { c.assumptions.push_back(std::move(s)); };
    c.framework = fw->name;
    c.stack = fw;

    // R2 (tp first: R1 pads the vocabulary by it)
    const int num_gpus = need_count("num_gpus");
    Plan& p = c.plan;
    p.tp = count("tensor_parallel").value_or(1);
    p.pp = count("pipeline_parallel").value_or(1);
    p.cp = count("context_parallel").value_or(1);
    // Mixture-of-experts layers (expert parallelism, routed tokens, all-to-all) are not modelled:
    // a dense stand-in would predict another model, so such a row is reported, not predicted.
    for (const char* key : {"expert_parallel", "num_experts"})
        if (auto e = get(key); e && *e > 1)
            throw input_error(origin, fmt::format("{}.{}", where, key),
                              "1 or null (mixture-of-experts layers are not modelled)", fmt::format("{}", *e));
    // A row may leave expert_parallel 1 or null and say so in words: its name ("Mixtral 8x7B",
    // "DeepSeek-V3", "MoE") or an expert count in its notes ("8 experts, top-2").
    {
        static const std::string moe_name = R"(\bmoe\b|mixture[- ]of[- ]experts|\bmixtral\b|\bdbrx\b|deepseek-?v[23]\b)";
        static const std::string experts =
            R"(\b(?:[2-9]|[1-9]\d+)\s+(?:routed\s+)?experts\b|num_?experts\W{0,3}(?:[2-9]|[1-9]\d+)\b|\btop-?[1-8]\s+(?:expert\s+)?rout)";
        // A row that calls its model dense is one, whatever MoE runs it is set beside.
        const bool dense = affirmed(c.name + "; " + noted, R"(\bdense\b)");
        const bool named_moe = !dense && affirmed(c.name, moe_name);
        if (named_moe || (!dense && affirmed(noted, experts)))
            throw input_error(origin, where + (named_moe ? ".name" : ".notes"),
                              "a dense model (mixture-of-experts layers are not modelled)", "a row that names experts");
    }
    if (auto dp = count("data_parallel")) p.dp = *dp;
    else {
        p.dp = num_gpus / std::max(1, p.tp * p.pp * p.cp);
        assume(fmt::format("dp {} = GPUs/(tp pp cp)", p.dp));
    }

    // R1
    ModelSpec& m = c.model;
    m.name = c.name;
    m.source = "published run";
    m.num_layers = need_count("num_layers");
    m.hidden_size = need_count("hidden_size");
    m.num_attention_heads = need_count("num_attention_heads");
    m.head_dim = m.hidden_size / std::max(1, m.num_attention_heads);
    m.num_kv_heads = count("num_kv_heads").value_or(m.num_attention_heads);
    if (!get("num_kv_heads")) assume("kv heads = heads");
    const std::string act = text_of(row, "activation");
    // A gated MLP (three weight matrices) whatever its gate's nonlinearity: the FLOPs follow the matrices.
    bool gated = contains(act, "glu") || contains(act, "silu") || contains(act, "swish") || contains(act, "gated");
    if (act.empty()) {
        gated = parameters_say_gated(m, get("num_layers").value_or(0), count("ffn_hidden_size"),
                                     double(count("vocab_size").value_or(50257)), parameters_b);
        assume(gated ? "gated MLP, Llama family (its parameter count)" : "GeLU (GPT family)");
    }
    m.activation = gated ? Activation::swiglu : Activation::gelu;
    const bool gpt = m.activation == Activation::gelu;
    m.norm = gpt ? Norm::layernorm : Norm::rmsnorm;
    m.position_embedding = gpt ? PositionEmbedding::learned : PositionEmbedding::rope;
    m.tied_embeddings = gpt;
    m.linear_bias = gpt;
    m.seq_length = need_count("seq_length");
    // Where the row says its model departs from its family's layout (Nemotron-4: squared ReLU with
    // rotary embeddings, no biases, untied embeddings), the row wins.
    // Whole words: "property" holds "rope", "unbiased" holds "bias".
    static const std::regex rotary(R"(\b(rotary|rope)\b)", std::regex::icase);
    if (std::regex_search(stated, rotary)) m.position_embedding = PositionEmbedding::rope;
    static const std::regex no_bias(R"(\bno bias(es)?\b)", std::regex::icase);
    if (std::regex_search(stated, no_bias)) m.linear_bias = false;
    if (contains(stated, "untied")) m.tied_embeddings = false;
    m.max_position_embeddings = m.position_embedding == PositionEmbedding::learned ? m.seq_length : 0;
    std::int64_t vocab = count("vocab_size").value_or(50257);
    if (!get("vocab_size")) assume("vocab 50257 (GPT-2 BPE)");
    const std::int64_t multiple = 128LL * p.tp;
    m.vocab_size = (vocab + multiple - 1) / multiple * multiple;
    if (auto ffn = count("ffn_hidden_size")) m.ffn_hidden_size = *ffn;
    else if (gpt) {
        m.ffn_hidden_size = 4 * m.hidden_size;
        assume("ffn 4h");
    } else {
        m.ffn_hidden_size = gated_ffn_width(m, double(vocab), parameters_b);
        assume(fmt::format("ffn {}{}", m.ffn_hidden_size, parameters_b ? " (from the parameter count)" : " (2/3 of 4h)"));
    }
    validate_model(m, origin + ": " + where);

    p.virtual_stages = count("virtual_pipeline").value_or(1);
    c.unstated.virtual_pipeline = !get("virtual_pipeline") && p.pp > 1 && fw->interleaves;
    p.schedule = p.virtual_stages > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    p.microbatch_size = count("microbatch_size").value_or(1);
    c.unstated.microbatch = !get("microbatch_size");
    if (c.unstated.microbatch) {
        // A size the notes give ("micro-batch size 2", --micro-batch-size 2, micro_batch_size: 2).
        static const std::regex in_notes(R"(micro[-_ ]?batch[-_ ]?size\W{0,3}(?:of\s+|is\s+)?(\d{1,5})\b(?!\s*(?:tokens|k\b)))", std::regex::icase);
        std::smatch mb;
        if (std::regex_search(noted, mb, in_notes) && std::stoi(mb[1]) >= 1) {
            p.microbatch_size = std::stoi(mb[1]);
            c.unstated.microbatch = false;
            assume(fmt::format("microbatch {} (from the notes)", p.microbatch_size));
        } else
            assume("microbatch 1");
    }
    if (get("global_batch_size") || !get("global_batch_tokens")) p.global_batch_size = need_count("global_batch_size");
    else {
        p.global_batch_size = int(std::llround(*get("global_batch_tokens") / m.seq_length));
        assume(fmt::format("batch {} = tokens / sequence", p.global_batch_size));
    }
    // A batch the layout does not divide (a paper's rounded count of sequences) within 2% of one
    // it does: that one, whose per-token figures are the same. Further off, validate_plan refuses it.
    if (const int unit = p.dp * p.microbatch_size; unit > 0 && p.global_batch_size % unit != 0) {
        const int rounded = std::max(unit, int(std::lround(double(p.global_batch_size) / unit)) * unit);
        if (std::abs(rounded - p.global_batch_size) <= 0.02 * p.global_batch_size) {
            assume(fmt::format("global batch {} rounded to {}, a multiple of dp x microbatch", p.global_batch_size, rounded));
            p.global_batch_size = rounded;
        }
    }
    p.seq_length = m.seq_length;

    // R3
    const std::string zero = text_of(row, "zero_or_fsdp");
    // ZeRO-Offload and ZeRO-Infinity run the optimizer on the CPU and stream states over PCIe or
    // from NVMe: no cost here describes that, so the row is reported, not predicted (as R14).
    if (affirmed(zero, R"(offload|\binfinity\b|\bnvme\b)"))  // not "ZeRO-3 (no CPU offload)"
        throw input_error(origin, where + ".zero_or_fsdp", "sharding on the GPUs (CPU and NVMe offload are not modelled)",
                          "\"" + zero + "\"");
    if (const std::optional<int> stage = stated_zero_stage(zero)) p.zero_stage = *stage;
    else if (zero.empty() && affirmed(stated, "--overlap-param-gather")) {
        p.zero_stage = 1;
        assume("ZeRO-1 (--overlap-param-gather needs the distributed optimizer)");
    } else {
        p.zero_stage = 0;
        c.unstated.zero = zero.empty();
    }
    // With pipeline stages torchtitan's FSDP keeps the gathered weights and the unsharded gradients
    // through the step: the memory and traffic of ZeRO-1 (its stack reduces after the last microbatch).
    if (fw->pipeline_gathers_once && p.pp > 1 && p.zero_stage >= 2) p.zero_stage = 1;

    // R4
    const std::string rc = text_of(row, "activation_recompute");
    p.recompute = stated_recompute(rc).value_or(Recompute::none);
    if (p.recompute == Recompute::selective) c.half_recompute = fw->half_forward_selective;
    if (p.recompute == Recompute::full) p.recompute_layers = stated_block_recompute_layers(stated);
    if (rc.empty()) assume("no recompute");
    c.unstated.recompute = rc.empty();

    // R9 (R5's default depends on the GPU)
    int inferred_gpus_per_node = 0;
    c.cluster = published_cluster(text_of(row, "gpu_type"), text_of(row, "interconnect"),
                                  count("gpus_per_node").value_or(0), num_gpus, origin, where, &inferred_gpus_per_node);
    if (inferred_gpus_per_node > 0)
        assume(fmt::format("{} GPUs per node ({} does not fill whole nodes)", inferred_gpus_per_node, num_gpus));

    // R5
    const std::string prec = text_of(row, "precision");
    const StatedPrecision stated_format = stated_precision(prec);
    // A stand-in format would predict another run, so such a row is reported, not predicted (as R14).
    if (!stated_format.unmodelled.empty())
        throw input_error(origin, where + ".precision",
                          fmt::format("fp32, bf16, fp16 or fp8 (training in {} is not modelled)", stated_format.unmodelled),
                          "\"" + prec + "\"");
    if (stated_format.format) p.precision = *stated_format.format;
    else {
        p.precision = default_precision(c.cluster.gpu);
        assume(to_string(p.precision));
    }

    // R6
    // The flag or key, else async TP in words ("2D + AsyncTP", "async TP on"); a key set false wins.
    const std::optional<bool> overlap_setting =
        named_setting(stated, "--tp-comm-overlap", {"tp_comm_overlap", "ub_tp_comm_overlap", "enable_async_tensor_parallel"});
    const bool tp_overlap = overlap_setting ? *overlap_setting
                                            : affirmed(stated, R"(\basync(?:hronous)?[\s-]?tp\b|\basync(?:hronous)?\s+tensor\s+parallel(?:ism)?\b(?!\s*(?:all-?reduce|communication)))");
    if (const std::optional<bool> sp = flag_of(row, "sequence_parallel", origin, where)) p.sequence_parallel = *sp;
    else {
        p.sequence_parallel = (tp_overlap || fw->sequence_parallel_with_tp) && p.tp > 1;
        if (p.sequence_parallel && !fw->sequence_parallel_with_tp) assume("sequence parallel (required by --tp-comm-overlap)");
        c.unstated.sequence_parallel = p.tp > 1 && !tp_overlap && !fw->sequence_parallel_with_tp && fw->megatron_sequence_parallel;
    }

    // R7
    SimulateOptions& o = c.options;
    o = stack_defaults(*fw, p.precision);  // R8's and R12's defaults too; what the row states follows
    o.tp_comm_overlap = tp_overlap;
    if (auto v = named_setting(stated, "--overlap-grad-reduce", {"overlap_grad_reduce", "overlap_grad_sync"})) o.overlap_grad_reduce = *v;
    if (contains(zero, "'torch'")) o.overlap_grad_reduce = true;
    if (contains(zero, "'local'")) o.overlap_grad_reduce = false;
    c.stated_param_gather_overlap =
        named_setting(stated, "--overlap-param-gather", {"overlap_param_gather", "overlap_param_sync"}).value_or(o.overlap_param_gather);
    o.overlap_param_gather = c.stated_param_gather_overlap || p.zero_stage >= 3;
    o.overlap_p2p_comm = named_setting(stated, "--overlap-p2p-communication", {"overlap_p2p_comm"}).value_or(false);
    // R4: activations of the first N layers offloaded to the CPU (Megatron-Core's
    // cpu_offloading_num_layers).
    {
        static const std::regex offloaded(R"(cpu_offloading_num_layers\s*[:=]?\s*(\d+))", std::regex::icase);
        std::smatch m;
        if (std::regex_search(stated, m, offloaded)) {
            o.cpu_offload_layers = std::stoi(m[1].str().substr(0, 7));
            if (p.pp > 1 || o.cpu_offload_layers >= c.model.num_layers)
                throw input_error(origin, where + ".cpu_offloading_num_layers",
                                  fmt::format("fewer layers than the model's {} and no pipeline parallelism "
                                              "(Megatron-Core offloads activations only without it)",
                                              c.model.num_layers),
                                  fmt::format("{} layers with {} pipeline stages", m[1].str().substr(0, 12), p.pp));
        }
    }
    // R5: an fp8 run's sharded weights gathered in fp8 where the row sets it.
    o.fp8_weight_gather = named_setting(stated, "--fp8-param-gather",
                                        {"fp8_param_gather", "enable_fsdp_float8_all_gather"}).value_or(false);
    o.zero2_layerwise_gather = fsdp_shards_gradients_only(zero);

    // R8
    const bool sixteen_bit = p.precision != Precision::fp32;
    const auto fp32_reduce = named_setting(stated, nullptr, {"grad_reduce_in_fp32", "accumulate_allreduce_grads_in_fp32"});
    if (contains(stated, "mode PURE") || fp32_reduce == false) o.grad_reduce_in_fp32 = false;
    else if (contains(stated, "mode DEFAULT") || contains(prec, "amp") || fp32_reduce == true) o.grad_reduce_in_fp32 = sixteen_bit;
    // Otherwise the framework's default (stack_defaults): fp8 runs keep bf16 weights and gradients
    // (R5: only the GEMMs run in fp8), so they take its bf16 default.

    // The fused attention kernels a row may name (R12), which R11 reads too.
    const bool names_flash2 = affirmed(stated, "FlashAttention-2|attn_impl: flash");
    const bool names_cudnn = affirmed(stated, "cuDNN");
    const bool names_flash1 = affirmed(stated, "attn_impl: triton|Triton FlashAttention");

    // R11
    const int date = latest_date(source);
    o.fused_attention = !(date > 0 && date < kFlashAttentionDate);
    // The row's own statement outranks its date: a run may keep an older stack after a source's date.
    // Unfused where the row says so, or names FlashAttention only to deny it ("FlashAttention was
    // not used", "no FlashAttention").
    static const char* kFlashAttention = R"(flash[\s_-]?att(?:ention|n))";
    static const std::regex flash_named(kFlashAttention, std::regex::icase);
    const bool flash_denied = std::regex_search(stated, flash_named) && !affirmed(stated, kFlashAttention);
    static const std::regex unfused_kernel(R"(unfused attention|attention\s*[:=]\s*unfused)", std::regex::icase);
    // PyTorch's own attention ops (the math path), where no fused kernel is named.
    const bool eager_attention =
        affirmed(stated, R"((?:standard|naive|eager|vanilla)\s+pytorch\s+attention|\b(?:naive|eager)\s+attention\b|\bmath\s+sdpa\b)");
    if (std::regex_search(stated, unfused_kernel)) o.fused_attention = false;
    else if (names_flash2 || names_cudnn || names_flash1) o.fused_attention = true;
    else if (flash_denied || eager_attention) o.fused_attention = false;
    else if (!o.fused_attention) assume(fmt::format("unfused attention (source dated {})", date));
    else if (!c.cluster.gpu.flash_attention) {  // no fused kernel runs on the GPU (Volta)
        o.fused_attention = false;
        assume(fmt::format("unfused attention (no fused kernel on the {})", c.cluster.gpu.name));
    }

    // R12: the framework's kernels, unless the row names them.
    if (names_flash2 || names_cudnn) o.flash_attention_version = 2;
    if (names_flash2) o.cudnn_attention = false;
    if (names_cudnn) o.cudnn_attention = true;
    if (names_flash1) o.flash_attention_version = 1;
    o.fused_elementwise = o.fused_elementwise || affirmed(stated, R"(torch\.compile)");
    if (contains(stated, "no dropout")) o.model_dropout = false;  // R1: the row's own statement
    if (auto v = named_setting(stated, "--cross-entropy-loss-fusion", {"cross_entropy_loss_fusion"})) o.fused_cross_entropy = *v;
    // An eager RMSNorm only where the row names it (torchtitan's norm_type "rmsnorm"); compiled
    // blocks fuse it. Unnamed: one kernel (Megatron, Transformer Engine, torch.compile, and the
    // Triton fused_rmsnorm that torchtitan's April 2024 Llama 8B/13B configurations set).
    o.eager_rmsnorm = !o.fused_elementwise && (contains(stated, "norm_type rmsnorm") || contains(stated, "eager RMSNorm"));

    // R13
    if (fw->fuses_grad_accumulation && date > 0 && date < fw->grad_accumulation_fusion_date) {
        o.gradient_accumulation_fusion = false;
        assume(fmt::format("unfused gradient accumulation (source dated {})", date));
    }
    if (fw->grad_buckets_grow_with_dp && date > 0 && date < fw->grad_buckets_grow_with_dp_date)
        o.grad_buckets_grow_with_dp = false;  // the stack of its date: 40M-parameter buckets at any DP size
    if (auto v = named_setting(stated, nullptr, {"gradient_accumulation_fusion"})) o.gradient_accumulation_fusion = *v;
    if (contains(stated, "--no-gradient-accumulation-fusion")) o.gradient_accumulation_fusion = false;
    if (fw->overlaps_tp_backward && date > 0 && date < fw->tp_backward_overlap_date) {
        o.tp_backward_overlap = false;  // the stack of its date: the input gradient's all-reduce waited for
        if (p.tp > 1) assume(fmt::format("TP backward all-reduce not overlapped (source dated {})", date));
    }
    if (contains(stated, "--no-async-tensor-model-parallel-allreduce")) o.tp_backward_overlap = false;
    if (date > 0 && date < fw->p2p_scatter_gather_until) o.p2p_scatter_gather = true;  // the stack of its date
    if (date > 0 && date < fw->all_forwards_first_until) o.all_forwards_first_at_m_equal_pp = true;

    validate_plan(p, m, num_gpus, origin + ": " + where);
    // A precision the GPU has no peak for (bf16 on a V100) is the row's error, not the file's.
    check_precision_peak(c.cluster, p.precision, origin + ": " + where);
    return c;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
    auto ranks = [](const std::vector<double>& x) {
        std::vector<std::size_t> idx(x.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::sort(idx.begin(), idx.end(), [&](auto i, auto j) { return x[i] < x[j]; });
        std::vector<double> r(x.size());
        for (std::size_t i = 0; i < idx.size();) {
            std::size_t j = i;
            while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]]) ++j;
            for (std::size_t k = i; k <= j; ++k) r[idx[k]] = (i + j) / 2.0 + 1.0;
            i = j + 1;
        }
        return r;
    };
    if (a.size() != b.size() || a.size() < 2) return 0;
    const auto ra = ranks(a), rb = ranks(b);
    const double n = double(a.size());
    const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < ra.size(); ++i) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

namespace {

// Memory per GPU of a case: torchtitan's half recompute keeps half the layers' full activations,
// judged by the checkpointed half plus one live layer, between none and full.
MemoryBreakdown case_memory(const ValidationCase& c) {
    if (!c.half_recompute) return estimate_memory(c.model, c.cluster, c.plan, c.options);
    Plan none = c.plan, full = c.plan;
    none.recompute = Recompute::none;
    full.recompute = Recompute::full;
    const MemoryBreakdown mn = estimate_memory(c.model, c.cluster, none, c.options);
    MemoryBreakdown m = estimate_memory(c.model, c.cluster, full, c.options);
    const double activations = 0.5 * (mn.activations + m.activations);
    m.peak += activations - m.activations;
    m.activations = activations;
    return m;
}

// The simulated step of a case and the result it comes from (R4's half recompute: the mean of
// the steps without and with full recompute).
struct CaseOutcome {
    SimulationResult result;
    double step_s = 0;
};
CaseOutcome simulate_case(const ValidationCase& c) {
    CaseOutcome out{simulate(c.model, c.cluster, c.plan, c.options), 0};
    out.step_s = out.result.step_time_s;
    if (c.half_recompute) {
        Plan none = c.plan, full = c.plan;
        none.recompute = Recompute::none;
        full.recompute = Recompute::full;
        out.step_s = 0.5 * (simulate(c.model, c.cluster, none, c.options).step_time_s +
                            simulate(c.model, c.cluster, full, c.options).step_time_s);
        out.result.memory_GiB = case_memory(c);
        out.result.fits = out.result.memory_GiB.peak <= c.cluster.gpu.memory_GiB;
    }
    return out;
}

// R15's knobs, and the case with them set and the rules that follow from them applied again (R3's
// pipelined FSDP, R4's half recompute, R7's weight-gather overlap); nullopt where the plan is not
// one the model can be split into.
struct Knobs {
    int virtual_stages = 1, microbatch_size = 1, zero_stage = 0;
    Recompute recompute = Recompute::none;
    bool sequence_parallel = false;
    int recompute_layers = 0;  // with full recompute: the first N layers of each chunk (0: all)
};
std::optional<ValidationCase> with_knobs(const ValidationCase& base, const Knobs& k) {
    ValidationCase c = base;
    Plan& p = c.plan;
    p.virtual_stages = k.virtual_stages;
    p.schedule = k.virtual_stages > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    p.microbatch_size = k.microbatch_size;
    p.zero_stage = k.zero_stage;
    p.recompute = k.recompute;
    p.recompute_layers = k.recompute == Recompute::full ? k.recompute_layers : 0;
    p.sequence_parallel = k.sequence_parallel;
    c.half_recompute = k.recompute == Recompute::selective && c.stack->half_forward_selective;
    c.options.overlap_param_gather = c.stated_param_gather_overlap || p.zero_stage >= 3;
    try {
        validate_plan(p, c.model, p.world_size(), c.name);
    } catch (const InputError&) {
        return std::nullopt;
    }
    return c;
}

// R15: a published run fitted its GPUs, so where the defaults of its null fields do not fit, those
// fields held something else. The fastest setting of the unstated knobs that fits, among what the
// framework can express (as the planner would choose them); nullopt when none fits.
std::optional<ValidationCase> fill_unstated_to_fit(const ValidationCase& c, double default_peak_GiB) {
    const ValidationCase::Unstated& u = c.unstated;
    const Plan& p = c.plan;
    const SoftwareStack& fw = *c.stack;
    const std::vector<int> vps = u.virtual_pipeline ? virtual_stage_counts(c.model.num_layers, p.pp)
                                                    : std::vector<int>{p.virtual_stages};
    std::vector<int> mbs = u.microbatch ? microbatch_sizes(p.global_batch_size, p.dp) : std::vector<int>{p.microbatch_size};
    const std::vector<Recompute> rcs = u.recompute ? std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full}
                                                   : std::vector<Recompute>{p.recompute};
    std::vector<int> zeros{p.zero_stage};
    if (u.zero) {
        zeros.clear();
        int top = std::min(fw.max_zero_stage, p.pp > 1 ? fw.max_zero_stage_with_pipeline : 3);
        if (fw.pipeline_gathers_once && p.pp > 1) top = std::min(top, 1);  // R3: its ZeRO-2/3 act as 1 there
        for (int z = 0; z <= top; ++z) zeros.push_back(z);
    }
    const std::vector<bool> sps = u.sequence_parallel ? std::vector<bool>{false, true} : std::vector<bool>{p.sequence_parallel};
    std::optional<ValidationCase> best, least;
    double best_step = 0, least_peak = 0;
    auto fits = [](const ValidationCase& x) { return case_memory(x).peak <= x.cluster.gpu.memory_GiB; };
    // Where no setting fits (the model's memory above what the run held), the one that needs least
    // is the nearest to the run: not the defaults, which need more.
    auto consider = [&](std::optional<ValidationCase> candidate) {
        if (!candidate) return;
        const double peak = case_memory(*candidate).peak;
        if (peak > candidate->cluster.gpu.memory_GiB) {
            if (!best && (!least || peak < least_peak)) least = candidate, least_peak = peak;
            return;
        }
        const double step = simulate_case(*candidate).step_s;
        if (!best || step < best_step) best = std::move(candidate), best_step = step;
    };
    // Block recompute where the framework has it, as the planner searches it: full recompute of the
    // fewest leading layers of each chunk that make the layout fit. Only where the layout does not
    // fit without recompute (there, no recompute is faster) and needs fewer than all its layers.
    auto block_recompute = [&](const Knobs& k) -> std::optional<ValidationCase> {
        Knobs none = k;
        none.recompute = Recompute::none;
        const auto bare = with_knobs(c, none);
        if (!bare || fits(*bare)) return std::nullopt;
        const auto chunks = layers_per_chunk(c.model.num_layers, c.plan.pp, k.virtual_stages, c.plan.lm_head_layers);
        auto with_layers = [&](int layers) {
            Knobs b = k;
            b.recompute = Recompute::full;
            b.recompute_layers = layers;
            return with_knobs(c, b);
        };
        const int layers = fewest_block_recompute_layers(*std::max_element(chunks.begin(), chunks.end()), [&](int n) {
            const auto x = with_layers(n);
            return x && fits(*x);
        });
        if (layers == 0) return std::nullopt;
        return with_layers(layers);
    };
    for (int vp : vps)
        for (int mb : mbs)
            for (int zero : zeros)
                for (bool sp : sps) {
                    // A stated recompute keeps its stated block of layers (--recompute-num-layers).
                    for (Recompute rc : rcs)
                        consider(with_knobs(c, Knobs{vp, mb, zero, rc, sp, u.recompute ? 0 : p.recompute_layers}));
                    if (u.recompute && fw.block_recompute) consider(block_recompute(Knobs{vp, mb, zero, Recompute::full, sp}));
                }
    const bool none_fits = !best;
    if (none_fits) {
        if (!least || least_peak >= default_peak_GiB) return std::nullopt;
        best = std::move(least);
    }
    // Its words replace the defaults' ("microbatch 1", "no recompute").
    std::vector<std::string> kept;
    for (const auto& a : best->assumptions)
        if (!(u.microbatch && a == "microbatch 1") && !(u.recompute && a == "no recompute")) kept.push_back(a);
    std::vector<std::string> knobs;
    const Plan& b = best->plan;
    if (u.virtual_pipeline) knobs.push_back(b.virtual_stages > 1 ? fmt::format("{} virtual stages", b.virtual_stages) : "no interleaving");
    if (u.microbatch) knobs.push_back(fmt::format("microbatch {}", b.microbatch_size));
    if (u.recompute)
        knobs.push_back(b.recompute == Recompute::none ? "no recompute"
                        : b.recompute == Recompute::full && b.recompute_layers > 0
                            ? fmt::format("full recompute of the first {} of each chunk",
                                          b.recompute_layers == 1 ? std::string("layer") : fmt::format("{} layers", b.recompute_layers))
                            : fmt::format("{} recompute", to_string(b.recompute)));
    if (u.zero) knobs.push_back(fmt::format("ZeRO-{}", b.zero_stage));
    if (u.sequence_parallel) knobs.push_back(b.sequence_parallel ? "sequence parallel" : "no sequence parallel");
    std::string list;
    for (const auto& k : knobs) list += (list.empty() ? "" : ", ") + k;
    if (none_fits)
        kept.push_back(fmt::format("R15: defaults need {:.0f} GiB and no setting fits; least memory ({:.0f} GiB) {}",
                                   default_peak_GiB, least_peak, list));
    else
        kept.push_back(fmt::format("R15: defaults need {:.0f} GiB; fastest fitting {}", default_peak_GiB, list));
    best->assumptions = std::move(kept);
    return best;
}

// R15 for a prepared row whose cluster's profile is set: its case with the unstated knobs filled
// where the defaults do not fit. Run once per row, before the fit's grid: the layout a run had does
// not change with the parameters fitted.
void fill_row_to_fit(ValidationRow& v) {
    if (!v.setup.unstated.any()) return;
    const double peak = case_memory(v.setup).peak;
    if (peak <= v.setup.cluster.gpu.memory_GiB) return;
    if (auto filled = fill_unstated_to_fit(v.setup, peak)) v.setup = std::move(*filled);
}

// The row's name, source and case, its cluster's profile set (the given one, when given) and R15
// applied; `skipped_because` when the rules cannot build a case.
ValidationRow prepare_row(const json& row, const std::string& origin, const std::optional<json>& profile) {
    ValidationRow v;
    v.name = text_of(row, "name");
    v.source = text_of(row, "source");
    try {
        v.setup = validation_case(row, origin);
        v.framework = v.setup.framework;
    } catch (const InputError& e) {
        v.skipped_because = e.what();
        return v;
    }
    if (profile) v.setup.cluster.profile = *profile;
    try {
        fill_row_to_fit(v);
    } catch (const InputError& e) {  // as in evaluate_row: the row's error, not the file's
        v.skipped_because = fmt::format("{}: {}: {}", origin, row_where(v.name), e.what());
    }
    return v;
}

// Simulates a prepared row (its cluster's profile already set, R15 applied) and compares it with
// the figure the source published (R10).
void evaluate_row(ValidationRow& v, const json& row, const std::string& origin) {
    if (!v.skipped_because.empty()) return;
    CaseOutcome outcome;
    try {
        outcome = simulate_case(v.setup);
    } catch (const InputError& e) {  // a combination simulate() refuses is this row's, not the file's
        v.skipped_because = fmt::format("{}: {}: {}", origin, row_where(v.name), e.what());
        return;
    }
    const ValidationCase& c = v.setup;
    const SimulationResult& r = outcome.result;
    const double step = outcome.step_s;
    v.result = r;
    v.step_time_s = step;
    v.fits = r.fits;
    v.memory_GiB = r.memory_GiB.peak;
    const double gpus = c.plan.world_size();
    const double tokens = double(c.plan.global_batch_size) * c.plan.seq_length;
    const std::string def = text_of(row, "throughput_definition");
    // R10: the published figure and the step time it implies. A figure that is not a positive number
    // is the row's error, as a field validation_case cannot read is: the file's other rows still run.
    std::optional<double> tps, it, tf, mfu, hfu;
    try {
        const std::string where = row_where(v.name);
        auto positive = [&](const char* key) {
            const std::optional<double> x = number_of(row, key, origin, where);
            if (x && !(*x > 0))
                throw input_error(origin, fmt::format("{}.{}", where, key), "a positive figure or null", fmt::format("{}", *x));
            return x;
        };
        tps = positive("tokens_per_sec_per_gpu");
        it = positive("iteration_time_s");
        tf = positive("tflops_per_gpu");
        mfu = positive("mfu_percent");
        hfu = positive("hfu_percent");
        // R16
        if (const std::optional<double> gb = positive("memory_gb")) {
            const std::string said = text_of(row, "notes") + " " + def;
            v.published_memory_GiB = said.find("GiB") != std::string::npos ? *gb : *gb * 1e9 / units::GiB;
            // A measured peak cannot exceed the memory the GPU has: such a figure is a unit or typing slip.
            const double capacity = c.cluster.gpu.memory_GiB;
            if (capacity > 0 && v.published_memory_GiB > capacity)
                throw input_error(origin, fmt::format("{}.memory_gb", where),
                                  fmt::format("at most the {} GiB of one {}", capacity, c.cluster.gpu.name),
                                  fmt::format("{} ({:.1f} GiB)", *gb, v.published_memory_GiB));
        }
    } catch (const InputError& e) {
        v.skipped_because = e.what();
        return;
    }
    // A utilization "percent" of at most 1 is a fraction: no published run used 1% of its GPUs.
    // One above 100% is a slip in the row.
    for (const auto& [key, x] : {std::pair{"mfu_percent", mfu}, std::pair{"hfu_percent", hfu}})
        if (x && *x > 100) {
            v.skipped_because = fmt::format("{}: key '{}.{}': expected a utilization of at most 100%, got {}", origin,
                                            row_where(v.name), key, *x);
            return;
        }
    auto utilization = [&](double x, const char* key) {
        if (x > 1.0) return x / 100.0;
        v.setup.assumptions.push_back(fmt::format("{} {} read as a fraction", key, x));
        return x;
    };
    // An fp8 run's utilization is taken against the fp8 peak unless the definition names the BF16
    // one (torchtitan's and NeMo's MFU divide by the dense BF16 peak whatever the GEMMs run in).
    double peak_ratio = 1;
    if (c.plan.precision == Precision::fp8 && affirmed(def, R"(bf16[^;]{0,40}peak|peak[^;]{0,40}bf16)") &&
        !affirmed(def, R"(fp8[^;]{0,40}peak|peak[^;]{0,40}fp8)"))
        peak_ratio = c.cluster.gpu.peak(Precision::fp8) / c.cluster.gpu.peak(Precision::bf16);
    double published_step = 0;
    if (tps) {
        v.metric = PublishedMetric::tokens_per_s_per_gpu;
        v.published = *tps;
        v.predicted = tokens / step / gpus;
        published_step = tokens / (*tps * gpus);
    } else if (it) {
        v.metric = PublishedMetric::iteration_time_s;
        v.published = *it;
        v.predicted = step;
        published_step = *it;
    } else if (tf) {
        const bool with_recompute = counts_recomputation(def);
        v.metric = with_recompute ? PublishedMetric::hardware_tflops_per_gpu : PublishedMetric::model_tflops_per_gpu;
        const auto f = flops_per_token(c.model, c.plan);
        const double flops = (with_recompute ? f.hardware : f.model) * tokens;
        v.published = *tf;
        v.predicted = flops / (step * gpus) / units::TFLOP;
        published_step = flops / (*tf * units::TFLOP * gpus);
    } else if (mfu) {
        v.metric = PublishedMetric::mfu;
        v.published = utilization(*mfu, "mfu_percent");
        v.predicted = implied_mfu(c, step) * peak_ratio;
        published_step = implied_mfu(c, 1.0) * peak_ratio / v.published;
    } else if (hfu) {
        // Hardware FLOPs count what recomputation runs again: HFU = MFU x hardware / model FLOPs.
        const auto f = flops_per_token(c.model, c.plan);
        const double hardware_per_model = f.hardware / f.model;
        v.metric = PublishedMetric::hfu;
        v.published = utilization(*hfu, "hfu_percent");
        v.predicted = implied_mfu(c, step) * hardware_per_model * peak_ratio;
        published_step = implied_mfu(c, 1.0) * hardware_per_model * peak_ratio / v.published;
    } else {
        v.skipped_because = "no throughput figure (tokens/s, iteration time, TFLOP/s, MFU or HFU)";
        return;
    }
    v.modelable = true;
    v.error = (v.predicted - v.published) / v.published;
    v.published_mfu = implied_mfu(c, published_step);
    v.predicted_mfu = implied_mfu(c, step);
}

// The relative error of the row's published metric if the step took `step_s`.
double error_at_step(const ValidationRow& v, double step_s) {
    // Throughputs scale with 1 / step; an iteration time with step.
    const double ratio = v.step_time_s / step_s;  // predicted-metric multiplier for a throughput
    const double predicted = v.metric == PublishedMetric::iteration_time_s ? step_s : v.predicted * ratio;
    return (predicted - v.published) / v.published;
}

}  // namespace

ValidationSummary summarize(const std::vector<ValidationRow>& rows) {
    ValidationSummary s;
    s.rows = int(rows.size());
    std::vector<double> pub_mfu, pred_mfu;
    double sum_abs = 0;
    int fitting = 0;
    for (const auto& v : rows) {
        if (!v.modelable) continue;
        if (v.published_memory_GiB > 0) {
            const double e = v.memory_GiB / v.published_memory_GiB - 1.0;
            ++s.memory_rows;
            s.memory_bias += e;
            s.memory_mape += std::abs(e);
        }
        pub_mfu.push_back(v.published_mfu);
        pred_mfu.push_back(v.predicted_mfu);
        sum_abs += std::abs(v.error);
        if (v.fits) ++fitting;
        ++s.modelable;
        if (std::abs(v.error) <= 0.15) ++s.within_15_percent;
        if (std::abs(v.error) > std::abs(s.worst_error) || s.worst_row.empty()) {
            s.worst_error = v.error;
            s.worst_row = v.name;
        }
    }
    if (s.modelable > 0) {
        s.mape = sum_abs / s.modelable;
        s.fit_share = double(fitting) / s.modelable;
        s.spearman = spearman(pub_mfu, pred_mfu);
    }
    if (s.memory_rows > 0) {
        s.memory_bias /= s.memory_rows;
        s.memory_mape /= s.memory_rows;
    }
    return s;
}

const json& published_run_list(const json& file, const std::string& origin) {
    if (file.is_array()) return file;
    // A file may wrap its rows as {"runs": [...], ...} beside other metadata.
    if (file.is_object() && file.contains("runs") && file["runs"].is_array()) return file["runs"];
    throw input_error(origin, "(top level)", "an array of published runs (or an object whose \"runs\" is one)",
                      describe_json_value(file));
}

ValidationReport validate_runs(const json& file, const std::string& origin, const std::optional<json>& profile) {
    const json& runs = published_run_list(file, origin);
    ValidationReport rep;
    for (const auto& row : runs) {
        ValidationRow v = prepare_row(row, origin, profile);
        evaluate_row(v, row, origin);
        rep.rows.push_back(std::move(v));
    }
    rep.summary = summarize(rep.rows);
    return rep;
}

const std::vector<FittedParameter>& fitted_parameters() {
    // The grids the fit searches; the defaults in simulator/hardware_efficiency.h are its result
    // on configs/validation/published_runs.json.
    static const std::vector<FittedParameter> params = [] {
        auto range = [](double lo, double hi, double step) {
            std::vector<double> v;
            for (int i = 0; lo + i * step <= hi + 1e-9; ++i) v.push_back(lo + i * step);
            return v;
        };
        const HardwareEfficiency d;
        return std::vector<FittedParameter>{
            {"sustained_clock_fraction", range(0.80, 1.00, 0.02), d.sustained_clock_fraction},
            {"memory_bandwidth_efficiency", range(0.50, 0.90, 0.05), d.memory_bandwidth_efficiency},
            {"attention_v1_scale", range(1.0, 1.6, 0.1), d.attention_v1_scale},
        };
    }();
    return params;
}

CrossValidation cross_validate(const json& file, const std::string& origin, const std::optional<json>& profile, int folds) {
    const json& runs = published_run_list(file, origin);
    const auto& params = fitted_parameters();
    // Every grid point, every row: the row's |error|.
    std::vector<std::vector<double>> points;  // parameter values per grid point
    for (double a : params[0].grid)
        for (double b : params[1].grid)
            for (double c : params[2].grid) points.push_back({a, b, c});
    std::vector<ValidationRow> prepared;
    std::vector<const json*> source;
    for (const auto& row : runs) {
        prepared.push_back(prepare_row(row, origin, profile));
        source.push_back(&row);
    }
    std::vector<std::vector<ValidationRow>> at(points.size());
    // Grid points are independent: spread them over the cores (the simulator's shared caches lock).
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto work = [&] {
        try {
            for (std::size_t g; (g = next++) < points.size();) {
                json prof = profile ? *profile : json::object();
                for (std::size_t k = 0; k < params.size(); ++k) prof[params[k].name] = points[g][k];
                for (std::size_t i = 0; i < prepared.size(); ++i) {
                    ValidationRow v = prepared[i];
                    if (v.skipped_because.empty()) v.setup.cluster.profile = prof;
                    evaluate_row(v, *source[i], origin);
                    at[g].push_back(std::move(v));
                }
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(failure_mutex);
            if (!failure) failure = std::current_exception();
            next = points.size();
        }
    };
    const unsigned workers = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
    const std::size_t n = prepared.size();
    std::vector<std::size_t> modelled;
    for (std::size_t i = 0; i < n; ++i)
        if (at[0][i].modelable) modelled.push_back(i);
    // The grid point with the least mean |error| over `train` (the first on ties: grids run
    // upwards, so a tie goes to the lower value).
    auto fit = [&](const std::vector<std::size_t>& train) {
        std::size_t best = 0;
        double best_mape = 1e300;
        for (std::size_t g = 0; g < points.size(); ++g) {
            double sum = 0;
            for (std::size_t i : train) sum += std::abs(at[g][i].error);
            const double mape = train.empty() ? 0.0 : sum / train.size();
            if (mape < best_mape - 1e-12) best_mape = mape, best = g;
        }
        return best;
    };
    CrossValidation cv;
    cv.folds = folds;
    for (const auto& p : params) cv.parameters.push_back(p.name);
    const std::size_t all = fit(modelled);
    cv.in_sample = points[all];
    {
        std::vector<ValidationRow> rows;
        for (std::size_t i = 0; i < n; ++i) rows.push_back(at[all][i]);
        cv.in_sample_summary = summarize(rows);
    }
    // Held-out: each row predicted with the parameters fitted on the rows outside its fold.
    auto held_out = [&](auto fold_of, std::vector<CrossValidation::Fold>& out) {
        std::vector<ValidationRow> predicted(prepared.begin(), prepared.end());
        std::map<std::string, std::vector<std::size_t>> members;
        for (std::size_t i : modelled) members[fold_of(i)].push_back(i);
        for (const auto& [name, test] : members) {
            std::vector<std::size_t> train;
            for (std::size_t i : modelled)
                if (fold_of(i) != name) train.push_back(i);
            const std::size_t g = fit(train);
            CrossValidation::Fold f;
            f.name = name;
            f.fitted = points[g];
            std::vector<ValidationRow> rows;
            for (std::size_t i : test) {
                predicted[i] = at[g][i];
                rows.push_back(at[g][i]);
            }
            f.summary = summarize(rows);
            out.push_back(f);
        }
        std::vector<ValidationRow> rows;
        for (std::size_t i = 0; i < n; ++i)
            if (at[0][i].modelable) rows.push_back(predicted[i]);
        return summarize(rows);
    };
    cv.by_framework_summary = held_out([&](std::size_t i) { return prepared[i].framework; }, cv.by_framework);
    // k folds by position in the file (row i in fold i mod k): rows of one source sit together in
    // the file, so each fold holds a spread of sources.
    std::map<std::size_t, std::size_t> position;
    for (std::size_t j = 0; j < modelled.size(); ++j) position[modelled[j]] = j;
    cv.k_fold_summary = held_out([&](std::size_t i) { return fmt::format("fold {}", position[i] % folds + 1); }, cv.k_fold);

    // Baseline: one constant MFU for every row (fitted the same way), against the same figures.
    std::vector<double> grid;
    for (double u = 0.10; u <= 0.80 + 1e-9; u += 0.0025) grid.push_back(u);
    auto baseline_rows = [&](double u) {
        std::vector<ValidationRow> rows;
        for (std::size_t i : modelled) {
            ValidationRow v = at[all][i];
            const double step = implied_mfu(v.setup, 1.0) / u;
            v.error = error_at_step(v, step);
            v.predicted_mfu = u;
            rows.push_back(v);
        }
        return rows;
    };
    auto baseline_fit = [&](const std::vector<std::size_t>& train) {
        double best_u = grid[0], best = 1e300;
        for (double u : grid) {
            double sum = 0;
            for (std::size_t i : train) {
                const ValidationRow& v = at[all][i];
                sum += std::abs(error_at_step(v, implied_mfu(v.setup, 1.0) / u));
            }
            if (sum < best - 1e-12) best = sum, best_u = u;
        }
        return best_u;
    };
    cv.baseline_mfu = baseline_fit(modelled);
    cv.baseline_summary = summarize(baseline_rows(cv.baseline_mfu));
    {
        std::vector<ValidationRow> rows;
        std::map<std::string, std::vector<std::size_t>> members;
        for (std::size_t i : modelled) members[prepared[i].framework].push_back(i);
        for (const auto& [name, test] : members) {
            std::vector<std::size_t> train;
            for (std::size_t i : modelled)
                if (prepared[i].framework != name) train.push_back(i);
            const double u = baseline_fit(train);
            for (std::size_t i : test) {
                ValidationRow v = at[all][i];
                v.error = error_at_step(v, implied_mfu(v.setup, 1.0) / u);
                v.predicted_mfu = u;
                rows.push_back(v);
            }
        }
        cv.baseline_by_framework_summary = summarize(rows);
    }
    return cv;
}

std::vector<RowsOnGpu> rows_on_other_gpus(const ValidationReport& rep, const std::string& device) {
    std::map<std::string, int> count;
    for (const auto& row : rep.rows)
        if (row.modelable && row.setup.cluster.gpu.name != device) ++count[row.setup.cluster.gpu.name];
    std::vector<RowsOnGpu> out;
    for (const auto& [gpu, n] : count) out.push_back({gpu, n});
    std::stable_sort(out.begin(), out.end(), [](const RowsOnGpu& a, const RowsOnGpu& b) { return a.rows > b.rows; });
    return out;
}

}  // namespace tessel
