#!/usr/bin/env python3
"""What one more attention FLOP cost each series of llm-foundry's benchmark table, from its own figures.

A series is one model on one GPU count and GPU type in one precision mode, measured at several
sequence lengths. Between two lengths s1 < s2 the dense work per token is the same (6N FLOPs, 8N
with activation checkpointing), so the growth of the time per token is the growth of attention's:
the table's own attention count per token, 4 * n_layers * d_model * s per pass (llm-foundry's
attn_flops_per_seq = n_layers * 2 * 2 * d_model * s^2 over s tokens), times 3 passes, or 4 when
the run recomputes its activations (the table's HFU convention). The marginal rate

    (attention FLOPs per token at s2 - at s1) / (seconds per token per GPU at s2 - at s1)

is then what the attention kernel delivered on that step of the sequence, in the table's FLOP
convention (which counts the full s x s, not the causal half, so it reads about twice the kernel's
own causal rate). Every series ran the same Triton FlashAttention, so its rates should agree within
a GPU type; a step whose rate falls far below its GPU type's median spent the added time on
something that is not attention's arithmetic. The microbatch may change between two lengths, which
moves the per-microbatch fixed costs a little: the rates scatter by about 20% for that reason.

Given the JSON that `tessel validate --json` writes for the same rows, each step also shows the rate
the simulator's predicted throughputs imply (published / predicted).

    build/cli/tessel validate --no-cross-validation --out /dev/null --json fit.json
    build/cli/tessel validate llm_foundry_table --no-cross-validation --out /dev/null --json table.json
    tools/validation/marginal_attention_rate.py fit.json table.json \
      > reports/llm-foundry-marginal-attention.md
"""
import collections
import json
import os
import re
import statistics
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FILES = ["configs/validation/published_runs.json", "configs/validation/llm_foundry_table.json"]
NAME = re.compile(r"llm-foundry (MPT-\S+) seq(\d+) (\d+)x(\S+) (\S+) mb(\d+)x(\d+)")
# A step whose rate is below this share of its GPU type's median is listed as an outlier.
OUTLIER_SHARE = 0.5


def series_of(paths, predicted):
    series = collections.defaultdict(dict)
    for path in paths:
        with open(os.path.join(ROOT, path)) as f:
            data = json.load(f)
        for row in data["runs"] if isinstance(data, dict) else data:
            m = NAME.match(row["name"])
            if not m:
                continue
            model, seq, gpus, gpu, precision, _, _ = m.groups()
            recompute = "full" in str(row.get("activation_recompute") or "")
            key = (model, int(gpus), gpu, precision, recompute)
            series[key][int(seq)] = (row["tokens_per_sec_per_gpu"], predicted.get(row["name"]),
                                     row["num_layers"], row["hidden_size"])
    return series


def predictions(paths):
    """Predicted tokens/s per GPU by row name, from `tessel validate --json` files."""
    found = {}
    for path in paths:
        with open(path) as f:
            for row in json.load(f)["rows"]:
                if row.get("modelled") and row.get("metric") == "tokens/s/GPU":
                    found[row["name"]] = row["predicted"]
    return found


def parameters_of(model):
    """MPT-125m -> 125e6, MPT-30b -> 30e9: sorts the series by model size."""
    size = model.split("-")[1]
    return float(size[:-1]) * (1e9 if size.endswith("b") else 1e6)


def rate(added_flops, t1, t2):
    added_seconds = 1.0 / t2 - 1.0 / t1
    return added_flops / added_seconds / 1e12 if added_seconds > 0 else None


def steps(points, recompute):
    passes = 4 if recompute else 3
    lengths = sorted(points)
    for s1, s2 in zip(lengths, lengths[1:]):
        (t1, p1, layers, d), (t2, p2, _, _) = points[s1], points[s2]
        added_flops = passes * 4 * layers * d * (s2 - s1)
        simulated = rate(added_flops, p1, p2) if p1 and p2 else None
        yield s1, s2, rate(added_flops, t1, t2), simulated


def main():
    series = series_of(FILES, predictions(sys.argv[1:]))
    by_gpu = collections.defaultdict(list)
    simulated_by_gpu = collections.defaultdict(list)
    table = []
    for key in sorted(series, key=lambda k: (k[2], k[3], parameters_of(k[0]), k[1])):
        model, gpus, gpu, precision, recompute = key
        found = list(steps(series[key], recompute))
        for _, _, published, simulated in found:
            if published is not None:
                by_gpu[(gpu, precision.endswith("fp8"))].append(published)
            if simulated is not None:
                simulated_by_gpu[(gpu, precision.endswith("fp8"))].append(simulated)
        if found:
            table.append((key, found))

    medians = {k: statistics.median(v) for k, v in by_gpu.items()}
    print("# Marginal attention rate of llm-foundry's benchmark table\n")
    print("Generated by `tools/validation/marginal_attention_rate.py` from the llm-foundry rows of "
          "`configs/validation/published_runs.json` and `configs/validation/llm_foundry_table.json` "
          "(the table of mosaicml/llm-foundry at 4952183, 2024-04-22). Each cell is the attention rate, in "
          "TFLOP/s per GPU in the table's own FLOP convention, that the growth of the measured time per token "
          "implies from one sequence length to the next (the script's docstring derives it). '-' marks a step "
          "whose time per token did not grow." + (" After the slash, the rate the simulator's predictions for "
          "the same rows imply (`tessel validate --json`)." if len(sys.argv) > 1 else "") + "\n")
    print("| GPU, precision | steps | median rate TFLOP/s | simulated median |")
    print("|---|---|---|---|")
    for (gpu, fp8), rates in sorted(by_gpu.items()):
        simulated = simulated_by_gpu.get((gpu, fp8))
        shown = f"{statistics.median(simulated):.0f}" if simulated else "-"
        print(f"| {gpu} {'fp8' if fp8 else '16-bit'} | {len(rates)} | {medians[(gpu, fp8)]:.0f} | {shown} |")
    print("\n| series | recompute | rate per step (s1 -> s2: TFLOP/s) |")
    print("|---|---|---|")
    outliers = []
    for (model, gpus, gpu, precision, recompute), found in table:
        median = medians.get((gpu, precision.endswith("fp8")))
        cells = []
        for s1, s2, published, simulated in found:
            cell = f"{s1}->{s2}: {published:.0f}" if published is not None else f"{s1}->{s2}: -"
            if len(sys.argv) > 1:
                cell += f" / {simulated:.0f}" if simulated is not None else " / -"
            cells.append(cell)
            if published is not None and median and published < OUTLIER_SHARE * median:
                outliers.append((f"{model} on {gpus}x {gpu} {precision}", s1, s2, published, median))
        print(f"| {model} {gpus}x {gpu} {precision} | {'full' if recompute else 'none'} | {'; '.join(cells)} |")
    print(f"\nSteps below {OUTLIER_SHARE:.0%} of their GPU type's median:\n")
    for name, s1, s2, published, median in outliers:
        print(f"- {name}, {s1} -> {s2} tokens: {published:.0f} TFLOP/s against a median of {median:.0f} "
              f"({published / median:.0%})")


if __name__ == "__main__":
    main()
