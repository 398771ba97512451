#!/usr/bin/env python3
"""Writes torchtitan's H100 performance tables as validation rows.

The figures are those of docs/performance.md in pytorch/torchtitan at the commit named in SRC
(Tables 1-6: Llama 3.1 8B, 70B and 405B from 8 to 512 H100s). What a row does not print is taken
from torchtitan's code at the commit the doc says it measured (9dec370) and its Llama 3.1
configurations: FSDP2 with fp32 gradient reduction, the TP plan's SequenceParallel norms,
reshard_after_forward=False with pipeline stages, as many microbatches as pipeline ranks by default
(build_pipeline_schedule: pipeline_parallel_microbatches, else pipeline_parallel_degree, whatever
the stages per rank; its help text says "the number of pipeline stages"), and
norm_type "rmsnorm" (PyTorch's eager RMSNorm unless the blocks are compiled).

    tools/validation/torchtitan_h100_rows.py > configs/validation/torchtitan_h100_runs.json
"""
import json
import sys

SRC = ("pytorch/torchtitan docs/performance.md (commit d4c86e3758a84cf23e2e879ab3c995cba9d5e410, 2025-01-30), "
       "Tables 1-6, measured with torch 1963fc8 (2024-12-23) and torchtitan 9dec370 (2024-12-26) on Meta's Grand Teton hosts")
GPU = "H100 SXM 96GB HBM2e, 2.4 TB/s, 500 W power limit (Grand Teton)"
NET = "8 x 400 Gb/s backend RDMA network per host (400 Gb/s per GPU)"
COMMON = ("TPS/GPU as printed in the table, read at the 90th iteration. torchtitan at 9dec370: FSDP2 with "
          "mixed_precision_reduce float32; the TP plan shards the norms along the sequence (SequenceParallel); "
          "with pipeline stages FSDP is built with reshard_after_forward=False and the pipeline schedule "
          "syncs gradients only after the last microbatch; pipeline_parallel_microbatches defaults to the pipeline degree (build_pipeline_schedule); "
          "norm_type rmsnorm (PyTorch eager RMSNorm where the blocks are not compiled)")
l8 = dict(num_layers=32, hidden_size=4096, num_attention_heads=32, num_kv_heads=8, ffn_hidden_size=14336, parameters_b=8)
l70 = dict(num_layers=80, hidden_size=8192, num_attention_heads=64, num_kv_heads=8, ffn_hidden_size=28672, parameters_b=70)
l405 = dict(num_layers=126, hidden_size=16384, num_attention_heads=128, num_kv_heads=8, ffn_hidden_size=53248, parameters_b=405)
rows = []
def add(name, arch, table, n, tp, pp, dp, cp, mb, local, seq, ac, prec, tps, mem, features, derived, vp=None):
    r = {"name": "torchtitan H100 " + name,
         "source": SRC + ", " + table,
         "source_kind": "official doc table",
         "gpu_type": GPU, "num_gpus": n, "gpus_per_node": 8, "interconnect": NET}
    r.update(arch)
    r.update({"vocab_size": 128256, "seq_length": seq, "activation": "swiglu",
              "tensor_parallel": tp, "pipeline_parallel": pp, "data_parallel": dp, "context_parallel": cp,
              "expert_parallel": None, "virtual_pipeline": vp, "sequence_parallel": None,
              "zero_or_fsdp": f"FSDP2, {dp * cp} ranks" + (" (shards over dp x cp)" if cp > 1 else ""),
              "microbatch_size": mb, "global_batch_size": local * dp, "global_batch_tokens": local * dp * seq,
              "activation_recompute": ac, "precision": prec,
              "iteration_time_s": None, "tflops_per_gpu": None, "mfu_percent": None, "hfu_percent": None,
              "tokens_per_sec_per_gpu": tps, "memory_gb": mem,
              "throughput_definition": COMMON + ". This row: " + features,
              "derived": derived,
              "notes": "Llama 3.1 architecture as released (vocabulary 128256, GQA with 8 KV heads). Memory(GiB) is the table's maximum over GPUs."})
    rows.append(r)
T1 = "Table 1 (1D FSDP, Llama 3.1 8B, 8 GPUs, local batch 2, selective activation checkpointing)"
T3 = "Table 3 (1D FSDP, Llama 3.1 8B, 128 GPUs, local batch 2, selective activation checkpointing)"
for n, table, vals in ((8, T1, ((5762, 82.4), (6667, 77.0), (8532, 76.8))), (128, T3, ((5605, 67.0), (6514, 62.0), (8380, 61.8)))):
    add(f"Llama3.1-8B {n}x FSDP", l8, table, n, 1, 1, n, 1, 2, 2, 8192, "selective op", "bf16", vals[0][0], vals[0][1], "FSDP, eager PyTorch ops (compile = false)", {"data_parallel": "GPUs"})
    add(f"Llama3.1-8B {n}x FSDP+compile", l8, table, n, 1, 1, n, 1, 2, 2, 8192, "selective op", "bf16", vals[1][0], vals[1][1], "FSDP + torch.compile", {"data_parallel": "GPUs"})
    add(f"Llama3.1-8B {n}x FSDP+compile+Float8", l8, table, n, 1, 1, n, 1, 2, 2, 8192, "selective op", "fp8 (Float8Linear)", vals[2][0], vals[2][1], "FSDP + torch.compile + Float8 linears", {"data_parallel": "GPUs"})
T2 = "Table 2 (FSDP + CP + torch.compile + Float8, Llama 3.1 8B, 8 GPUs, local batch 1, full activation checkpointing)"
for dp, cp, seq, tps, mem in ((8, 1, 32768, 3890, 83.9), (4, 2, 65536, 2540, 84.2), (2, 4, 131072, 1071, 84.0), (1, 8, 262144, 548, 84.5)):
    add(f"Llama3.1-8B 8x FSDP{dp} CP{cp} seq{seq}", l8, T2, 8, 1, 1, dp, cp, 1, 1, seq, "full", "fp8 (Float8Linear)", tps, mem, "FSDP + CP + torch.compile + Float8", {"global_batch_size": "local batch 1 x FSDP degree"})
T4 = "Table 4 (2D FSDP 32 + TP 8 + torch.compile + Float8, Llama 3.1 70B, 256 GPUs, local batch 16, full activation checkpointing)"
add("Llama3.1-70B 256x FSDP32 TP8", l70, T4, 256, 8, 1, 32, 1, 16, 16, 8192, "full", "fp8 (Float8Linear)", 829, 71.9, "2D, torch.compile + Float8", {})
add("Llama3.1-70B 256x FSDP32 TP8 AsyncTP", l70, T4, 256, 8, 1, 32, 1, 16, 16, 8192, "full", "fp8 (Float8Linear)", 876, 67.6, "2D + AsyncTP, torch.compile + Float8", {})
T5 = "Table 5 (3D FSDP 8 + TP 8 + PP 8 + torch.compile + Float8 + AsyncTP, Llama 3.1 405B, 512 GPUs, local batch 32, full activation checkpointing)"
add("Llama3.1-405B 512x FSDP8 TP8 PP8 1F1B", l405, T5, 512, 8, 8, 8, 1, 4, 32, 8192, "full", "fp8 (Float8Linear)", 100, 82.5, "1F1B schedule, AsyncTP, torch.compile + Float8", {"microbatch_size": "local batch 32 / 8 microbatches (default: the pipeline degree)"})
add("Llama3.1-405B 512x FSDP8 TP8 PP8 interleaved 1F1B", l405, T5, 512, 8, 8, 8, 1, 4, 32, 8192, "full", "fp8 (Float8Linear)", 128, 72.7, "interleaved 1F1B schedule (2 stages per rank), AsyncTP, torch.compile + Float8", {"microbatch_size": "local batch 32 / 8 microbatches (default: the pipeline degree, whatever the stages per rank)", "virtual_pipeline": "torchtitan's default of 2 stages per rank for interleaved 1F1B"}, vp=2)
T6 = "Table 6 (4D FSDP + TP 8 + PP 8 + CP + torch.compile + Float8 + AsyncTP + 1F1B, Llama 3.1 405B, 512 GPUs, local batch 8, full activation checkpointing)"
for dp, cp, seq, tps, mem in ((8, 1, 32768, 76, 75.3), (4, 2, 65536, 47, 75.9), (2, 4, 131072, 31, 77.1), (1, 8, 262144, 16, 84.9)):
    add(f"Llama3.1-405B 512x FSDP{dp} TP8 PP8 CP{cp} seq{seq}", l405, T6, 512, 8, 8, dp, cp, 1, 8, seq, "full", "fp8 (Float8Linear)", tps, mem, "1F1B, AsyncTP, torch.compile + Float8", {"microbatch_size": "local batch 8 / 8 microbatches (default: the pipeline degree)"})
json.dump(rows, sys.stdout, indent=1)
sys.stdout.write("\n")
