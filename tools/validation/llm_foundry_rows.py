#!/usr/bin/env python3
"""Turns llm-foundry's MPT benchmark table into validation rows.

Reads scripts/train/benchmarking/README.md of mosaicml/llm-foundry (the commit named below, or
the commit and date given after the fit set) on stdin, writes one row per table line to stdout in
the format of configs/validation/*.json, and leaves out the lines the fit set
(configs/validation/published_runs.json, given as argument) already holds, or any of the files
given there separated by commas (the 2023 table shares 76 unchanged lines with the 2024 one). The model shapes are
those of the repository's pretrain yamls (mpt-*.yaml). The tables before October 2023 have no
'Model TFLOP' column; their lines have 19 cells instead of 20.

    git -C llm-foundry show COMMIT:scripts/train/benchmarking/README.md \
      | tools/validation/llm_foundry_rows.py configs/validation/published_runs.json \
      > configs/validation/llm_foundry_table.json
    git -C llm-foundry show c6cfb4284d280daef0e79e57b5dce82673dc565e:scripts/train/benchmarking/README.md \
      | tools/validation/llm_foundry_rows.py \
          configs/validation/published_runs.json,configs/validation/llm_foundry_table.json \
          c6cfb4284d280daef0e79e57b5dce82673dc565e 2023-07-21 \
      > configs/validation/llm_foundry_table_2023.json
"""
import json
import sys

COMMIT = "495218376830947dce625efabc4d86be7c47cc45"
DATE = "2024-04-22"
# scripts/train/yamls/pretrain/mpt-<size>.yaml: n_layers, d_model, n_heads (expansion_ratio 4,
# vocab_size 50368 in every one).
SHAPES = {
    "125m": (12, 768, 12), "350m": (24, 1024, 16), "760m": (24, 1536, 12), "1b": (24, 2048, 16),
    "3b": (32, 2560, 20), "7b": (32, 4096, 32), "13b": (40, 5120, 40), "30b": (48, 7168, 56),
    "70b": (80, 8192, 64),
}
GPU = {
    "h100_80gb": "H100-80GB (SXM per MosaicML platform; variant not stated)",
    "a100_80gb": "A100-SXM4-80GB",
    "a100_40gb": "A100-SXM4-40GB",
}
DEFINITION = ("MFU = (3*2N + 3*attn) FLOPs/token * tokens/s / (gpus * peak); HFU uses 4x (one recompute "
              "forward) when activation checkpointing is on; excludes norm/activation/residual FLOPs; peak "
              "H100 989 (BF16) or 1979 (FP8), A100 312. 'Model TFLOP' column = model TFLOP/s per GPU. "
              "Throughput measured over ~12 steps on MosaicML platform")


def rows(text, known, commit, date):
    section = None
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 19:  # no 'Model TFLOP' column
            cells = cells[:6] + [None] + cells[6:]
        if len(cells) != 20 or cells[0] not in SHAPES:
            continue
        (size, seq, gpus, gpu, mfu, hfu, tflop, mb, accum, gbs, _, _, tok_gpu, gbs_tokens, precision, mode,
         sharding, checkpointing, offload, params) = cells
        name = f"llm-foundry MPT-{size} seq{seq} {gpus}x{gpu} {precision} mb{mb}x{accum}"
        if name in known:
            continue
        layers, hidden, heads = SHAPES[size]
        gpus_n, mb_n, accum_n, gbs_n = int(gpus), int(mb), int(accum), int(gbs)
        seconds = float(gbs_tokens) / (float(tok_gpu) * gpus_n)
        yield {
            "name": name,
            "source": f"mosaicml/llm-foundry scripts/train/benchmarking/README.md (commit {commit}, {date}), "
                      f"'MPT Training Benchmarks'; arch from scripts/train/yamls/pretrain/mpt-*.yaml; section "
                      f"'{section}'",
            "source_kind": "official benchmark table",
            "gpu_type": GPU[gpu],
            "num_gpus": gpus_n,
            "gpus_per_node": 8,
            "interconnect": "1600 Gbps node-node interconnect (RoCE)" if "RoCE" in section else None,
            "num_layers": layers,
            "hidden_size": hidden,
            "num_attention_heads": heads,
            "num_kv_heads": heads,
            "ffn_hidden_size": 4 * hidden,
            "vocab_size": 50368,
            "seq_length": int(seq),
            "activation": "gelu",
            "parameters_b": round(int(params) / 1e9, 3),
            "tensor_parallel": 1,
            "pipeline_parallel": 1,
            "data_parallel": gpus_n,
            "context_parallel": None,
            "expert_parallel": None,
            "virtual_pipeline": None,
            "sequence_parallel": None,
            "zero_or_fsdp": f"PyTorch FSDP {sharding} (mixed-precision mode {mode})",
            "microbatch_size": mb_n,
            "global_batch_size": gbs_n,
            "global_batch_tokens": int(gbs_tokens),
            "activation_recompute": "full (activation checkpointing)" if checkpointing == "True" else "none",
            "precision": precision,
            "iteration_time_s": None,
            "tflops_per_gpu": float(tflop) if tflop is not None else None,
            "mfu_percent": float(mfu),
            "hfu_percent": float(hfu),
            "tokens_per_sec_per_gpu": int(tok_gpu),
            "memory_gb": None,
            "throughput_definition": DEFINITION if tflop is not None else DEFINITION.replace(
                " 'Model TFLOP' column = model TFLOP/s per GPU.", ""),
            "derived": {
                "iteration_time_s": round(seconds, 3),
                "grad_accum": accum_n,
                "num_params_exact": int(params),
                "activation_cpu_offload": offload,
            },
            "notes": "FSDP-only (no TP/PP). NumParams column is authoritative (varies slightly with seq len); "
                     "layers/hidden/heads from the pretrain yamls (the benchmark yaml may differ).",
        }


def main():
    known = {r["name"] for path in sys.argv[1].split(",") for r in json.load(open(path))}
    commit, date = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else (COMMIT, DATE)
    out = [r for r in rows(sys.stdin.read(), known, commit, date)
           # The microbatching engine runs uneven last microbatches (GBS not a multiple of mb x GPUs);
           # a plan here has equal ones, so those lines are left out.
           if r["global_batch_size"] % (r["microbatch_size"] * r["num_gpus"]) == 0]
    # One row per line: a diff of a regenerated table shows the rows that changed.
    sys.stdout.write("[\n" + ",\n".join(json.dumps(r) for r in out) + "\n]\n")
    print(f"{len(out)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
