#!/usr/bin/env python3
"""Does a bf16 GEMM run faster inside a training step than back to back? Times one GEMM kernel
at a time (CUDA events around each call) while the stream alternates it with a bandwidth-bound
copy that takes a set share of the time, as a step's norms, activations and optimizer do. With no
copy the GPU draws full tensor-core power and the clock settles at what the power limit allows;
with copies between the GEMMs the average power falls. Also varies the operands' values (random
normal activations against a Linear layer's default uniform weights), since the power a GEMM draws
depends on its data.

Each configuration runs for about --seconds, and the median GEMM time of its second half is
reported (after the clock has settled). One JSON object per line: fraction of the dense bf16
peak (H100/H200 SXM: 989 TFLOP/s), and the copy's share of the time between GEMMs.
Usage: python3 tools/gpu/gemm_duty_cycle.py [--bf16-peak 989] [--seconds 2]
"""
import argparse
import json
import math
import statistics
import time

import torch


def run(a, b, out, filler, seconds):
    """Median GEMM time (ms) and median filler share over the second half of a `seconds` run."""
    gemm_ms, share = [], []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        events = [torch.cuda.Event(enable_timing=True) for _ in range(3 * 50)]
        for i in range(50):
            events[3 * i].record()
            torch.matmul(a, b.t(), out=out)
            events[3 * i + 1].record()
            if filler:
                filler()
            events[3 * i + 2].record()
        torch.cuda.synchronize()
        for i in range(50):
            g = events[3 * i].elapsed_time(events[3 * i + 1])
            f = events[3 * i + 1].elapsed_time(events[3 * i + 2])
            gemm_ms.append(g)
            share.append(f / (g + f))
    half = len(gemm_ms) // 2
    return statistics.median(gemm_ms[half:]), statistics.median(share[half:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bf16-peak", type=float, default=989.0)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__}), flush=True)
    # (name, tokens m, output features n, input features k): the GPT-1.7B layer of Megatron-Core's
    # weak-scaling table at 4096 tokens (QKV and the MLP's second GEMM), and a square one.
    shapes = (("gpt-1.7b qkv", 4096, 6144, 2048), ("gpt-1.7b fc2", 4096, 2048, 8192),
              ("square 8192", 8192, 8192, 8192))
    for name, m, n, k in shapes:
        flops = 2.0 * m * n * k
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w_random = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        bound = 1.0 / math.sqrt(k)  # torch.nn.Linear's default initialisation
        w_linear = torch.empty(n, k, device="cuda", dtype=torch.bfloat16).uniform_(-bound, bound)
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        alone, _ = run(x, w_random, out, None, 0.5)
        for operands, w in (("randn x randn", w_random), ("randn x Linear init", w_linear)):
            for target in (0.0, 0.3, 0.5):
                filler = None
                if target > 0:
                    # a copy of `elements` bf16 values (read + write) lasting about target/(1-target) GEMMs
                    copy_ms = alone * target / (1 - target)
                    elements = int(copy_ms * 1e-3 * 3.0e12 / 4)
                    src = torch.randn(elements, device="cuda", dtype=torch.bfloat16)
                    dst = torch.empty_like(src)
                    filler = lambda: dst.copy_(src)
                ms, share = run(x, w, out, filler, args.seconds)
                print(json.dumps({"shape": name, "m": m, "n": n, "k": k, "operands": operands,
                                  "copy_share": round(share if filler else 0.0, 3), "gemm_ms": round(ms, 4),
                                  "fraction_of_peak": round(flops / (ms * 1e-3) / (args.bf16_peak * 1e12), 3)}),
                      flush=True)


if __name__ == "__main__":
    main()
