"""Puts the PyTorch training steps that scripts/measure-gpu.sh timed beside `tessel simulate` of the
same model, batch and kernels, and prints a Markdown table.

Each torch-*.txt of DIR ends with the JSON line of tools/gpu/torch_train_step.py. The simulator
describes that step with its own options: eager PyTorch runs one kernel per elementwise op
(--eager-elementwise; PyTorch 2.11's nn.RMSNorm is one fused kernel, so no --eager-rmsnorm), and
torch.compile fuses them, the cross entropy included (--fused-cross-entropy), or, with only the
blocks compiled, all but the eager fp32 cross entropy; a GPT-layout step without dropout is
simulated with --no-dropout; a checkpointed run
recomputes every block (--recompute full); several microbatches per step add each one's weight
gradients to .grad in separate kernels (--no-gradient-accumulation-fusion), and zero_grad frees
the gradients rather than zeroing a buffer (--free-gradients). SDPA runs cuDNN's attention (--attention cudnn): PyTorch
2.11 with its cuDNN 9.15+ prefers it on Hopper, and the profiles in the torch-*.txt name its
cudnn_generated_fort_native_sdpa_sm90 kernels. The cluster is a built-in preset (datasheet figures:
dgx-h100 unless --cluster names another, such as dgx-h200), not a calibration of the machine.

Where a run printed its profile (--profile), a second table splits one step's GPU kernel time by
kind against the simulation's kernel_time_s: GEMMs (cuBLAS's nvjet/gemm/cutlass kernels),
attention (the SDPA kernels and cuDNN's helpers), and the bandwidth-bound rest.

Usage: python3 tools/gpu/compare_torch.py DIR [TESSEL] [--cluster PRESET]   (TESSEL default build/cli/tessel)"""
import argparse
import glob
import json
import os
import re
import subprocess
import tempfile

# One row of torch.profiler's key_averages table: the name, then Self CPU %, Self CPU, CPU total %,
# CPU total, CPU time avg, Self CUDA, Self CUDA %, CUDA total, CUDA time avg and # of Calls.
PROFILE_ROW = re.compile(r"\s*(.*?)\s{2,}\S+%\s+\S+\s+\S+%\s+\S+\s+\S+\s+([\d.]+)(ms|us)\s+[\d.]+%")


def kernel_kind(name):
    if re.search(r"nvjet|gemm|cutlass|xmma", name, re.IGNORECASE):
        return "gemm"
    if re.search(r"sdpa|flash|fmha|cudnn", name, re.IGNORECASE):
        return "attention"
    return "memory_bound"


def profiled_kernel_ms(path):
    """GPU time (ms) of the profiled step by kind of kernel, or None without a profile table."""
    totals = {}
    for line in open(path):
        m = PROFILE_ROW.match(line)
        if m and not line.lstrip().startswith(("Name", "-")):
            ms = float(m.group(2)) * (1.0 if m.group(3) == "ms" else 1e-3)
            kind = kernel_kind(m.group(1))
            totals[kind] = totals.get(kind, 0.0) + ms
    return totals or None


def simulate(tessel, cluster, run):
    flags = ["--attention", "cudnn", "--free-gradients"]
    if run["compile"]:
        flags += ["--fused-cross-entropy"]
    elif not run.get("compile_blocks"):
        flags += ["--eager-elementwise"]
    if run.get("recompute_full"):
        flags += ["--recompute", "full"]
    if json.load(open(run["config"]))["model_type"] == "gpt2" and not run.get("dropout"):
        flags += ["--no-dropout"]
    if run.get("accumulate", 1) > 1:
        flags += ["--no-gradient-accumulation-fusion"]
    sequences = run["batch"] * run.get("accumulate", 1)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "sim.json")
        subprocess.run([tessel, "simulate", "--model", run["config"], "--cluster", cluster, "--gpus", "1",
                        "--microbatch-size", str(run["batch"]), "--global-batch-size", str(sequences),
                        "--seq", str(run["seq"]), "--precision", "bf16", *flags, "--json", out],
                       check=True, stdout=subprocess.DEVNULL)
        return json.load(open(out)), flags


def main():
    p = argparse.ArgumentParser()
    p.add_argument("folder")
    p.add_argument("tessel", nargs="?", default="build/cli/tessel")
    p.add_argument("--cluster", default="dgx-h100")
    a = p.parse_args()
    folder, tessel = a.folder, a.tessel
    print("| model | run | microbatches x batch x seq | tessel options | measured step (s) | simulated step (s) | error "
          "| measured peak GiB (allocated) | simulated peak GiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    kinds = []
    for path in sorted(glob.glob(os.path.join(folder, "torch-*.txt"))):
        lines = [l for l in open(path) if l.startswith("{")]
        if not lines:
            continue
        run = json.loads(lines[-1])
        sim, flags = simulate(tessel, a.cluster, run)
        err = sim["step_time_s"] / run["step_time_s"] - 1
        kind = "torch.compile" if run["compile"] else "compiled blocks" if run.get("compile_blocks") else "eager"
        if run.get("dropout"):
            kind += f", dropout {run['dropout']}"
        model = os.path.splitext(os.path.basename(run["config"]))[0]
        print(f"| {model} | {kind} | {run.get('accumulate', 1)} x {run['batch']} x {run['seq']} | `{' '.join(flags)}` | {run['step_time_s']:.4f} "
              f"| {sim['step_time_s']:.4f} | {100 * err:+.1f}% | {run['peak_memory_GiB']:.1f} "
              f"| {sim['memory_GiB']['peak']:.1f} |")
        measured = profiled_kernel_ms(path)
        if measured and "kernel_time_s" in sim:
            kinds.append((f"{model}, {kind}", measured, sim["kernel_time_s"]))
    if kinds:
        print("\nKernel time of one step by kind, measured (profile) / simulated, ms:\n")
        print("| run | GEMM | attention | bandwidth-bound | all kernels |")
        print("|---|---|---|---|---|")
        for name, measured, simulated in kinds:
            cells = [f"{measured.get(k, 0.0):.1f} / {1e3 * simulated[k]:.1f}" for k in ("gemm", "attention", "memory_bound")]
            total = f"{sum(measured.values()):.1f} / {1e3 * sum(simulated.values()):.1f}"
            print(f"| {name} | {' | '.join(cells)} | {total} |")


if __name__ == "__main__":
    main()
