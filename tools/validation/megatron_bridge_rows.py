#!/usr/bin/env python3
"""Writes configs/validation/megatron_bridge_perf.json: the dense Llama lines of NVIDIA's NeMo 25.09
performance table (Megatron-Bridge) on DGX-H100, DGX-B200 and GB200 NVL72.

NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md at commit fa0315ae2 (2025-10-10, "update 25.09
performance summary"; the same figures are kept in docs/performance-summary-archive.md, "25.09 NeMo
Container") gives tokens/s per GPU for Llama 3 8B, Llama 3 70B and Llama 3.1 405B pretraining on each
system, with the layout (GBS, MBS, FSDP, TP, PP, CP, VP). The main figure is FP8 with per-tensor
current scaling (the 25.11 table labels the same lines FP8-CS; its layout is the recipe's fp8_cs entry,
see below); the figure in parentheses is MXFP8 ("32x32" block scales, Blackwell only), with the layout
in parentheses where it differs. The flags come from the same commit's performance scripts:
scripts/performance/configs/llama3/llama3_{8b,70b}_llm_pretrain.yaml and
llama31/llama31_405b_llm_pretrain.yaml (perf_matrix per GPU and precision: layout, CUDA graphs,
Megatron-FSDP, recompute, CPU offloading; mixed_precision.grad_reduce_in_fp32 false;
cross_entropy_fusion_impl "te"), scripts/performance/utils/helpers.py (sequence_parallel = TP > 1;
the userbuffers TP-overlap configurations for 70B and 405B) and the Llama 3 recipe
src/megatron/bridge/recipes/llama/llama3.py (distributed optimizer with overlap_grad_reduce and
overlap_param_gather; CommOverlapConfig(tp_comm_overlap=True), which with an interleaved pipeline
sets overlap_p2p_comm, src/megatron/bridge/training/comm_overlap.py).

The GB200 FP8-CS lines of 70B and 405B run Megatron-FSDP and offload the activations of their first
40 and 95 layers to the Grace CPU (cpu_offloading_num_layers; added after the rest, once the simulator
modelled the offload). Left out: every MoE line (R14); the 70B line on B200, which the 25.09 table does
not print.

    tools/validation/megatron_bridge_rows.py > configs/validation/megatron_bridge_perf.json

With --table 26.04.01 it writes configs/validation/megatron_bridge_perf_2026.json instead: the dense
Llama lines of the "26.04.01 NeMo Container" table (docs/performance-summary.md at commit 21d102f5e,
2026-05-27), the first with GB300 NVL72 (Blackwell Ultra) beside GB200 NVL72 and DGX-H100 on one stack.
Their layouts are the same commit's V2 presets (GBS 256 for 70B, 1536 for 405B) in
scripts/performance/configs/llama/llama3_workload_base_configs.py and llama31_workload_base_configs.py,
applied by scripts/performance/utils/overrides.py (set_workload_base_configs: sequence_parallel = TP > 1,
cross_entropy_fusion_impl "te"); llama3_llm_pretrain.py and llama31_llm_pretrain.py set
grad_reduce_in_fp32 False and the userbuffers TP-overlap configurations; the recipes
(src/megatron/bridge/recipes/llama/llama3.py) keep cuda_graph_impl "none", no recompute, the distributed
optimizer with overlap_grad_reduce and overlap_param_gather, and CommOverlapConfig(tp_comm_overlap=True).
The 70B FP8 lines on GB300 and GB200 run Megatron-FSDP (llama3_llm_pretrain.py: fsdp_double_buffer,
gradient_accumulation_fusion False) and offload 20 and 40 layers' activations to the Grace CPU
(cpu_offloading_num_layers). Left out there: the NVFP4 lines (R5: not modelled), and the 405B
MXFP8 line on GB200, whose 16 stages x 8 virtual stages = 128 chunks outnumber the 126 layers (Megatron's
split counts the embedding and the loss as layers; tessel's needs a layer in every chunk).

    tools/validation/megatron_bridge_rows.py --table 26.04.01 > configs/validation/megatron_bridge_perf_2026.json
"""
import argparse
import json

COMMIT = "fa0315ae2"
DATE = "2025-10-10"

LLAMA3_8B = dict(num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                 ffn_hidden_size=14336, vocab_size=128256, seq_length=8192, activation="swiglu",
                 parameters_b=8.0)
LLAMA3_70B = dict(num_layers=80, hidden_size=8192, num_attention_heads=64, num_kv_heads=8,
                  ffn_hidden_size=28672, vocab_size=128256, seq_length=8192, activation="swiglu",
                  parameters_b=70.6)
LLAMA31_405B = dict(num_layers=126, hidden_size=16384, num_attention_heads=128, num_kv_heads=8,
                    ffn_hidden_size=53248, vocab_size=128256, seq_length=8192, activation="swiglu",
                    parameters_b=405)

SYSTEMS = {
    "H100": ("H100-SXM5-80GB (DGX-H100)", "DGX-H100",
             "Architecture from the model family's published configuration."),
    "B200": ("B200 (DGX-B200)", "DGX-B200",
             "Architecture from the model family's published configuration."),
    "GB300": ("GB300 (DGX GB300 NVL72)", "DGX-GB300",
              "NVL72: 72 Blackwell Ultra GPUs share one NVLink domain per rack; a run of up to 64 GPUs is taken as "
              "that many GPUs of one rack's NVLink domain, a larger one as 64 of each rack. Architecture from the "
              "model family's published configuration."),
    "GB200": ("GB200 (DGX GB200 NVL72, 186GB HBM3e)", "DGX-GB200",
              "NVL72: 72 GPUs share one NVLink domain per rack; the recipe's num_gpus_per_node 4 is the compute "
              "tray, and a run of up to 64 GPUs is taken as that many GPUs of one rack's NVLink domain, a larger "
              "one as 64 of each rack. Architecture from the model family's published configuration."),
}

COMMON = ("distributed optimizer with overlap_grad_reduce and overlap_param_gather (--overlap-grad-reduce "
          "--overlap-param-gather), mixed_precision.grad_reduce_in_fp32 false (gradients reduced in bf16), "
          "no activation recompute, cross_entropy_fusion_impl te (--cross-entropy-loss-fusion), no dropout "
          "(Llama 3 has none)")
PIPELINED = (", sequence_parallel (TP > 1) and CommOverlapConfig tp_comm_overlap=True with the userbuffers "
             "configuration of helpers.py (--tp-comm-overlap), overlap_p2p_comm with the interleaved pipeline "
             "(--overlap-p2p-communication)")
GRAPHS = (", the layers captured in CUDA graphs (cuda_graphs true), which the simulator does not model (it "
          "charges each kernel its launch gap)")

def fsdp_offload(layers, fusion=None):
    return (", Megatron-FSDP (use_megatron_fsdp: parameters, gradients and optimizer state sharded, ZeRO-3)"
            + (f", gradient_accumulation_fusion {fusion}" if fusion else "")
            + f", cpu_offloading_num_layers {layers} (the first {layers} layers' activations offloaded to the Grace CPU)")


# (model key, shape, system, precision label, gpus, gbs, mbs, fsdp, tp, pp, cp, vp, tokens/s/GPU, extra flags)
LINES = [
    ("LLAMA3_8B", LLAMA3_8B, "GB200", "FP8-CS", 8, 128, 2, False, 1, 1, 1, None, 31357, GRAPHS),
    ("LLAMA3_8B", LLAMA3_8B, "GB200", "MXFP8", 8, 128, 2, False, 1, 1, 1, None, 29925, GRAPHS),
    ("LLAMA3_70B", LLAMA3_70B, "GB200", "MXFP8", 64, 128, 1, False, 2, 4, 1, 5, 3546, PIPELINED),
    ("LLAMA3.1_405B", LLAMA31_405B, "GB200", "MXFP8", 128, 64, 1, False, 4, 8, 2, 8, 578, PIPELINED),
    ("LLAMA3_8B", LLAMA3_8B, "B200", "FP8-CS", 8, 128, 2, False, 1, 1, 1, None, 29994, GRAPHS),
    ("LLAMA3_8B", LLAMA3_8B, "B200", "MXFP8", 8, 128, 2, False, 1, 1, 1, None, 29388, GRAPHS),
    ("LLAMA3.1_405B", LLAMA31_405B, "B200", "FP8-CS", 128, 64, 1, False, 4, 8, 2, 8, 664, PIPELINED),
    ("LLAMA3.1_405B", LLAMA31_405B, "B200", "MXFP8", 128, 64, 1, False, 4, 8, 2, 8, 622, PIPELINED),
    ("LLAMA3_70B", LLAMA3_70B, "GB200", "FP8-CS", 64, 128, 2, True, 1, 1, 1, None, 3986, fsdp_offload(40)),
    ("LLAMA3.1_405B", LLAMA31_405B, "GB200", "FP8-CS", 128, 64, 1, True, 2, 1, 1, None, 729,
     ", sequence_parallel (TP > 1) and CommOverlapConfig tp_comm_overlap=True with the userbuffers configuration "
     "of helpers.py (--tp-comm-overlap)" + fsdp_offload(95)),
    ("LLAMA3_8B", LLAMA3_8B, "H100", "FP8-CS", 8, 128, 1, True, 1, 1, 1, None, 14079,
     ", Megatron-FSDP (use_megatron_fsdp, parameters, gradients and optimizer state sharded: ZeRO-3) with NCCL "
     "user buffers (nccl_ub)"),
    ("LLAMA3_70B", LLAMA3_70B, "H100", "FP8-CS", 64, 128, 1, False, 4, 8, 1, 5, 1619, PIPELINED),
    ("LLAMA3.1_405B", LLAMA31_405B, "H100", "FP8-CS", 1024, 512, 1, False, 8, 8, 2, 8, 302, PIPELINED),
]

# The 26.04.01 table's dense lines (precision "FP8" is the presets' FP8_CS: per-tensor current scaling).
LINES_2026 = [
    ("LLAMA3_70B", LLAMA3_70B, "GB300", "FP8-CS", 64, 256, 2, True, 1, 1, 1, None, 5248, fsdp_offload(20, "false")),
    ("LLAMA3_70B", LLAMA3_70B, "GB300", "MXFP8", 64, 256, 1, False, 1, 4, 1, 5, 4864, PIPELINED),
    ("LLAMA3_70B", LLAMA3_70B, "GB200", "FP8-CS", 64, 256, 2, True, 1, 1, 1, None, 4224, fsdp_offload(40, "false")),
    ("LLAMA3_70B", LLAMA3_70B, "GB200", "MXFP8", 64, 256, 1, False, 2, 4, 1, 5, 3712, PIPELINED),
    ("LLAMA3_70B", LLAMA3_70B, "H100", "FP8-CS", 64, 256, 1, False, 4, 8, 1, 5, 1664, PIPELINED),
    ("LLAMA3.1_405B", LLAMA31_405B, "GB300", "FP8-CS", 256, 1536, 1, False, 4, 8, 1, 4, 1024, PIPELINED),
    ("LLAMA3.1_405B", LLAMA31_405B, "GB300", "MXFP8", 256, 1536, 1, False, 2, 8, 2, 4, 960, PIPELINED),
    ("LLAMA3.1_405B", LLAMA31_405B, "GB200", "FP8-CS", 256, 1536, 1, False, 4, 16, 1, 4, 864, PIPELINED),
    ("LLAMA3.1_405B", LLAMA31_405B, "H100", "FP8-CS", 1024, 1536, 1, False, 8, 8, 2, 8, 328, PIPELINED),
]

TABLES = {
    "25.09": dict(commit=COMMIT, date=DATE, lines=LINES, train_iters=25),
    # overrides.py's _set_common_perf_overrides: train_iters 50.
    "26.04.01": dict(commit="21d102f5e", date="2026-05-27", lines=LINES_2026, train_iters=50),
}

YAML = {"LLAMA3_8B": "llama3/llama3_8b_llm_pretrain.yaml", "LLAMA3_70B": "llama3/llama3_70b_llm_pretrain.yaml",
        "LLAMA3.1_405B": "llama31/llama31_405b_llm_pretrain.yaml"}


def flag_files_2026(model, system, label):
    preset = {"FP8-CS": "FP8_CS", "MXFP8": "FP8_MX"}[label]
    family = "llama31" if model == "LLAMA3.1_405B" else "llama3"
    size = "405B" if model == "LLAMA3.1_405B" else "70B"
    return (f"scripts/performance/configs/llama/{family}_workload_base_configs.py "
            f"({family.upper()}_{size}_PRETRAIN_CONFIG_{system}_{preset}_V2), "
            f"scripts/performance/configs/llama/{family}_llm_pretrain.py, scripts/performance/utils/overrides.py")


def row(table, model, shape, system, label, gpus, gbs, mbs, fsdp, tp, pp, cp, vp, tokens, extra):
    gpu_type, system_name, notes = SYSTEMS[system]
    commit, date = TABLES[table]["commit"], TABLES[table]["date"]
    dp = gpus // (tp * pp * cp)
    ga = gbs // (dp * mbs)
    name = (f"Megatron-Bridge {table} {model} {label} ({gpus}x {system}) "
            f"{'fsdp ' if fsdp else ''}tp{tp} pp{pp} cp{cp}" + (f" vp{vp}" if vp else ""))
    if table == "25.09":
        scaling = ("per-tensor current scaling" if label == "FP8-CS" else
                   "MXFP8, 32-element block scales (the figure in parentheses)")
        flags = (f"scripts/performance/configs/{YAML[model]} (perf_matrix {system.lower()}), "
                 f"scripts/performance/utils/helpers.py")
    else:
        scaling = ("precision 'FP8': per-tensor current scaling" if label == "FP8-CS" else
                   "MXFP8, 32-element block scales")
        flags = flag_files_2026(model, system, label)
    if tp == 1:  # no tensor parallelism: nothing to overlap it with
        extra = extra.replace(PIPELINED, ", overlap_p2p_comm with the interleaved pipeline (--overlap-p2p-communication)")
    return {
        "name": name,
        "source": (f"NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md (commit {commit}, {date}), '{table} NeMo "
                   f"Container', 'Pre-Training Performance', System: {system_name}, line {model}: {tokens} tokens/s per GPU "
                   f"({scaling}); flags from the same commit's {flags} and "
                   f"src/megatron/bridge/recipes/llama/llama3.py (Megatron-Core with Transformer Engine)"),
        "source_kind": "official benchmark table",
        "gpu_type": gpu_type,
        "num_gpus": gpus,
        "gpus_per_node": min(gpus, 64) if system in ("GB200", "GB300") else 8,
        "interconnect": None,
        **shape,
        "tensor_parallel": tp,
        "pipeline_parallel": pp,
        "data_parallel": dp,
        "context_parallel": cp,
        "expert_parallel": None,
        "virtual_pipeline": vp,
        "sequence_parallel": tp > 1,
        "zero_or_fsdp": "FSDP (Megatron-FSDP)" if fsdp else "distributed optimizer (ZeRO-1)",
        "microbatch_size": mbs,
        "global_batch_size": gbs,
        "global_batch_tokens": gbs * shape["seq_length"],
        "activation_recompute": "none",
        "precision": "fp8",
        "iteration_time_s": None,
        "tflops_per_gpu": None,
        "mfu_percent": None,
        "hfu_percent": None,
        "tokens_per_sec_per_gpu": tokens,
        "memory_gb": None,
        "throughput_definition": ("Tokens / sec / GPU as the table prints it, from a short run on mock data "
                                  f"(train_iters {TABLES[table]['train_iters']}). Options from the recipe: " + COMMON + extra),
        "derived": {"data_parallel": f"{gpus} / ({tp} x {pp} x {cp})",
                    "gradient_accumulation": f"{gbs} / ({dp} x {mbs}) = {ga}"},
        "notes": notes + " Added as an out-of-sample set after the simulator's parameters were fitted.",
    }


parser = argparse.ArgumentParser(description="Megatron-Bridge performance-table rows for tessel validate")
parser.add_argument("--table", choices=sorted(TABLES), default="25.09", help="the NeMo container's table")
args = parser.parse_args()
print(json.dumps([row(args.table, *line) for line in TABLES[args.table]["lines"]], indent=1, ensure_ascii=False))
