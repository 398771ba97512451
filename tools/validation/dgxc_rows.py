#!/usr/bin/env python3
"""Writes configs/validation/dgxc_benchmarking.json: NVIDIA's DGX Cloud Benchmarking recipes on H100
(and one on GB200).

NVIDIA/dgxc-benchmarking at commit 8f5cbb3799ea8cc031ed2c2cee1cbdbc15b240ad (2025-05-21) publishes,
per workload, the training step time its recipe measured on DGX H100 systems at 8 to 2048 GPUs
(weak scaling: the global batch grows with the GPU count), in BF16 and FP8:
llama3.1/README_8b.md and README_70b.md, nemo_megatron/README_175b.md, nemotron/README_15b.md and
README_340b.md ("Training step time (seconds per step)"). The figures below are transcribed from those
tables, the smallest and the largest scale of each; the layout and flags from the same commit's
recipe configuration (the *.yaml files, with the overrides of configure.sh and launch.sh). The
405B table of that commit is left out: its columns (32 and 96 GPUs for TP 8 x PP 9) do not match
its layout. Llama 3.1 405B on H100 comes from the later commit 6be5ea0e19 (2025-09-05,
llama3.1/README.md and launch.sh), whose recipes run NeMo 2.0's performance scripts in container
25.04.01; Nemotron-4 340B on GB200 NVL72 from the same commit (nemotron/README.md and launch.sh,
container 25.04.00): the weak-scaling table's smallest and largest scale, whose NVLink domains are
taken as 64 GPUs of each 72-GPU rack (the validator's rule for counts that fill no whole rack).

    tools/validation/dgxc_rows.py > configs/validation/dgxc_benchmarking.json
"""
import json

COMMIT = "8f5cbb3799ea8cc031ed2c2cee1cbdbc15b240ad"
DATE = "2025-05-21"
GPU = "H100-SXM5-80GB (DGX H100)"

# Common to every recipe: NeMo's Megatron-Core GPT with Transformer Engine, the distributed optimizer
# with overlapped gradient reduce-scatter and parameter all-gather, no dropout unless stated,
# synthetic data (no input pipeline), 100 or 50 steps of which the last is the figure.
COMMON = ("distributed optimizer with overlap_grad_sync and overlap_param_sync "
          "(--overlap-grad-reduce --overlap-param-gather)")

WORKLOADS = [
    {
        "key": "Llama3.1-8B", "file": "llama3.1/README_8b.md", "container": "24.12",
        "shape": dict(num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8,
                      ffn_hidden_size=14336, vocab_size=128256, seq_length=8192, activation="swiglu",
                      parameters_b=8.0),
        "layout": dict(tp=1, pp=1, cp=2, vp=None, mbs=1, sp=False, recompute="none"),
        "flags": COMMON + ", optim.grad_sync_dtype bf16 (Megatron-Core's grad_reduce_in_fp32 false), "
                 "ub_tp_comm_overlap false, cross_entropy_loss_fusion true (--cross-entropy-loss-fusion), "
                 "no activation checkpointing; llama3.1/llama3.1_8b.yaml",
        "family": "Llama 3.1 8B as released (rotary, RMSNorm, SwiGLU, no biases, untied embeddings); no dropout.",
        # (gpus, global batch, bf16 s, fp8 s)
        "points": [(8, 128, 12.78, 9.44), (128, 2048, 13.16, 9.73)],
    },
    {
        "key": "Llama3.1-70B", "file": "llama3.1/README_70b.md", "container": "24.12",
        "shape": dict(num_layers=80, hidden_size=8192, num_attention_heads=64, num_kv_heads=8,
                      ffn_hidden_size=28672, vocab_size=128256, seq_length=8192, activation="swiglu",
                      parameters_b=70.6),
        "layout": dict(tp=4, pp=4, cp=2, vp=5, mbs=1, sp=True, recompute="none"),
        "flags": COMMON + ", optim.grad_sync_dtype bf16 (Megatron-Core's grad_reduce_in_fp32 false), "
                 "sequence_parallel true, ub_tp_comm_overlap true (--tp-comm-overlap), overlap_p2p_comm true "
                 "(--overlap-p2p-communication), cross_entropy_loss_fusion true (--cross-entropy-loss-fusion), "
                 "no activation checkpointing; llama3.1/llama3.1_70b.yaml",
        "family": "Llama 3.1 70B as released (rotary, RMSNorm, SwiGLU, no biases, untied embeddings); no dropout.",
        "points": [(64, 128, 14.61, 10.46), (2048, 4096, 14.84, 10.99)],
    },
    {
        "key": "GPT3-175B", "file": "nemo_megatron/README_175b.md", "container": "24.12",
        "shape": dict(num_layers=96, hidden_size=12288, num_attention_heads=96, num_kv_heads=96,
                      ffn_hidden_size=49152, vocab_size=50257, seq_length=2048, activation="gelu",
                      parameters_b=175),
        # The README's table header says VP=12; the recipe's gpt3_175b_hydra.yaml, which configure.sh
        # does not override, sets 6.
        "layout": dict(tp=4, pp=8, cp=1, vp=6, mbs=1, sp=True, recompute="none"),
        "flags": COMMON + ", optim.grad_sync_dtype bf16 (Megatron-Core's grad_reduce_in_fp32 false), "
                 "sequence_parallel true, ub_tp_comm_overlap true (--tp-comm-overlap), overlap_p2p_comm true "
                 "(--overlap-p2p-communication), no activation checkpointing, hidden and attention dropout 0.1; "
                 "virtual pipeline 6 as nemo_megatron/gpt3_175b_hydra.yaml sets it (the README's header says 12)",
        "family": "GPT-3 175B as NeMo configures it (learned positions, LayerNorm, GELU, biases, tied embeddings, "
                  "GPT-2 BPE vocabulary of 50257).",
        "points": [(128, 256, 8.309, 5.626), (2048, 4096, 8.49, 5.96)],
    },
    {
        "key": "Nemotron4-15B", "file": "nemotron/README_15b.md", "container": "24.12",
        "shape": dict(num_layers=32, hidden_size=6144, num_attention_heads=48, num_kv_heads=8,
                      ffn_hidden_size=24576, vocab_size=256000, seq_length=4096, activation="squared-relu",
                      parameters_b=15.6),
        "layout": dict(tp=4, pp=1, cp=1, vp=None, mbs=4, sp=True, recompute="none"),
        "flags": "Megatron-Core's distributed optimizer (mcore_distributed_optim) with overlap_grad_sync and "
                 "overlap_param_sync (--overlap-grad-reduce --overlap-param-gather), sequence_parallel true, "
                 "ub_tp_comm_overlap true (--tp-comm-overlap), cross_entropy_loss_fusion true "
                 "(--cross-entropy-loss-fusion), no activation checkpointing, NVTE_FUSED_ATTN=1 (cuDNN's fused "
                 "attention); nemotron/nemotron4-15b-synth.yaml and nemotron/configure.sh",
        "family": "Nemotron-4 15B (arXiv 2402.16819: rotary, no biases, untied embeddings, no dropout, squared "
                  "ReLU, LayerNorm1p).",
        "points": [(16, 64, 2.812, 2.039), (2048, 8192, 2.887, 2.12)],
    },
    {
        "key": "Nemotron4-340B", "file": "nemotron/README_340b.md", "container": "24.09",
        "shape": dict(num_layers=96, hidden_size=18432, num_attention_heads=96, num_kv_heads=8,
                      ffn_hidden_size=73728, vocab_size=256000, seq_length=4096, activation="squared-relu",
                      parameters_b=341),
        # configure.sh runs BF16 with CP 2 and FP8 with CP 1 (the README's header gives the FP8 layout).
        "layout": dict(tp=8, pp=8, cp=None, vp=12, mbs=1, sp=True, recompute="selective"),
        "flags": COMMON + ", optim.grad_sync_dtype bf16 (Megatron-Core's grad_reduce_in_fp32 false), "
                 "sequence_parallel true, ub_tp_comm_overlap true (--tp-comm-overlap; configure.sh overrides the "
                 "yaml's false), overlap_p2p_comm true (--overlap-p2p-communication), cross_entropy_loss_fusion true "
                 "(--cross-entropy-loss-fusion), activations_checkpoint_granularity selective, NVTE_FUSED_ATTN=0 "
                 "(FlashAttention-2 through Transformer Engine); context parallel 2 in BF16 and 1 in FP8 "
                 "(nemotron/configure.sh); nemotron/nemotron4-340b-synth.yaml",
        "family": "Nemotron-4 340B (arXiv 2406.11704: rotary, no biases, untied embeddings, no dropout, squared "
                  "ReLU).",
        "points": [(128, 32, 4.61, 3.16), (2048, 512, 4.84, 3.49)],
    },
    {
        "key": "Nemotron4-340B", "file": "nemotron/README.md", "container": "25.04.00",
        "commit": ("6be5ea0e19c583ee4d445a1cd65a3ff2fcb4e58b", "2025-09-05"),
        "gpu": ("GB200 (NVL72, 186GB HBM3e)", None),
        "shape": dict(num_layers=96, hidden_size=18432, num_attention_heads=96, num_kv_heads=8,
                      ffn_hidden_size=73728, vocab_size=256000, seq_length=4096, activation="squared-relu",
                      parameters_b=341),
        "layout": dict(tp=8, pp=4, cp=1, vp=12, mbs=1, sp=True, recompute="none"),
        "flags": "NeMo 2.0's scripts/performance/llm/pretrain_nemotron4_340b over pretrain_recipe(performance_mode=True) "
                 "(NVIDIA/NeMo scripts/performance/utils.py set_primary_perf_configs and "
                 "recommended_model_configs/model_configs_gb200.csv, v2.3.0): " + COMMON +
                 ", sequence parallel and MegatronCommOverlapCallback tp_comm_overlap=True (--tp-comm-overlap), "
                 "overlap_p2p_comm with the interleaved pipeline (--overlap-p2p-communication), no activation "
                 "recompute, GPTConfig cross_entropy_loss_fusion True (--cross-entropy-loss-fusion), the layers "
                 "captured in CUDA graphs (the simulator charges each kernel its launch gap); layout from "
                 "nemotron/launch.sh (GB200: TP 8, PP 4, CP 1, VP 12, MBS 1, GBS = GPUs / 4)",
        "fp8_flags": "; the FP8 runs set grad_reduce_in_fp32 false, so gradients are reduced in bf16",
        "family": "Nemotron-4 340B (arXiv 2406.11704: rotary, no biases, untied embeddings, no dropout, squared "
                  "ReLU).",
        "points": [(128, 32, 2.189, 1.483), (512, 128, 2.229, 1.549)],
    },
    {
        "key": "Llama3.1-405B", "file": "llama3.1/README.md", "container": "25.04.01",
        "commit": ("6be5ea0e19c583ee4d445a1cd65a3ff2fcb4e58b", "2025-09-05"),
        "shape": dict(num_layers=126, hidden_size=16384, num_attention_heads=128, num_kv_heads=8,
                      ffn_hidden_size=53248, vocab_size=128256, seq_length=8192, activation="swiglu",
                      parameters_b=405),
        "layout": dict(tp=8, pp=8, cp=2, vp=8, mbs=1, sp=True, recompute="none"),
        "flags": "NeMo 2.0's scripts/performance/llm/pretrain_llama31_405b over pretrain_recipe(performance_mode=True) "
                 "(NVIDIA/NeMo scripts/performance/utils.py set_primary_perf_configs, v2.3.0): " + COMMON +
                 ", sequence parallel and MegatronCommOverlapCallback tp_comm_overlap=True (--tp-comm-overlap), "
                 "overlap_p2p_comm with the interleaved pipeline (--overlap-p2p-communication), no activation "
                 "recompute, GPTConfig cross_entropy_loss_fusion True (--cross-entropy-loss-fusion); layout from "
                 "llama3.1/launch.sh (H100: TP 8, PP 8, CP 2, VP 8, MBS 1, GBS = GPUs / 2)",
        "fp8_flags": "; the FP8 runs set grad_reduce_in_fp32 false, so gradients are reduced in bf16",
        "family": "Llama 3.1 405B as released (rotary, RMSNorm, SwiGLU, no biases, untied embeddings); no dropout; "
                  "126 layers over 8 x 8 virtual stages, the first and last holding one (Megatron-Core counts the "
                  "embedding and the loss as a layer each).",
        "points": [(512, 256, 19.810, 13.020)],
    },
]


def row(w, gpus, gbs, precision, step_s):
    commit, date = w.get("commit", (COMMIT, DATE))
    flags = w["flags"] + (w.get("fp8_flags", "") if precision == "fp8" else "")
    gpu, gpus_per_node = w.get("gpu", (GPU, 8))
    lay = dict(w["layout"])
    cp = lay["cp"] if lay["cp"] is not None else (2 if precision == "bf16" else 1)
    dp = gpus // (lay["tp"] * lay["pp"] * cp)
    shape = w["shape"]
    gpu_short = "GB200" if gpu.startswith("GB200") else "H100"
    name = (f"DGXC NeMo {w['container']} {w['key']} {precision} ({gpus}x {gpu_short}) "
            f"tp{lay['tp']} pp{lay['pp']} cp{cp}" + (f" vp{lay['vp']}" if lay["vp"] else ""))
    return {
        "name": name,
        "source": (f"NVIDIA/dgxc-benchmarking {w['file']} (commit {commit[:10]}, {date}), 'Expected Performance', "
                   f"{'BF16' if precision == 'bf16' else 'FP8'} table, {gpus}x {gpu_short} (GBS={gbs}): training step time "
                   f"{step_s} s; container nvcr.io/nvidia/nemo:{w['container']} (NeMo, Megatron-Core with Transformer "
                   f"Engine)"),
        "source_kind": "official benchmark table",
        "gpu_type": gpu,
        "num_gpus": gpus,
        "gpus_per_node": gpus_per_node,
        "interconnect": None,
        **shape,
        "tensor_parallel": lay["tp"],
        "pipeline_parallel": lay["pp"],
        "data_parallel": dp,
        "context_parallel": cp,
        "expert_parallel": None,
        "virtual_pipeline": lay["vp"],
        "sequence_parallel": lay["sp"],
        "zero_or_fsdp": "distributed optimizer (ZeRO-1)",
        "microbatch_size": lay["mbs"],
        "global_batch_size": gbs,
        "global_batch_tokens": gbs * shape["seq_length"],
        "activation_recompute": lay["recompute"],
        "precision": precision,
        "iteration_time_s": step_s,
        "tflops_per_gpu": None,
        "mfu_percent": None,
        "hfu_percent": None,
        "tokens_per_sec_per_gpu": None,
        "memory_gb": None,
        "throughput_definition": ("Training step time as the table prints it: the recipe's last logged "
                                  "train_step_timing of a short run on synthetic data. Options from the recipe: "
                                  + flags),
        "derived": {"data_parallel": f"{gpus} / ({lay['tp']} x {lay['pp']} x {cp})"},
        "notes": w["family"] + " Added as an out-of-sample set after the simulator's parameters were fitted.",
    }


rows = []
for w in WORKLOADS:
    for gpus, gbs, bf16_s, fp8_s in w["points"]:
        rows.append(row(w, gpus, gbs, "bf16", bf16_s))
        rows.append(row(w, gpus, gbs, "fp8", fp8_s))
print(json.dumps(rows, indent=1, ensure_ascii=False))
