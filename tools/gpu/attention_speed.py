#!/usr/bin/env python3
"""PyTorch SDPA attention speed at head dim 128 on one GPU: what the simulator's flash efficiencies
stand for (the dgx-h100 / dgx-h200 presets' flash_forward_efficiency and flash_backward_efficiency,
taken from the FlashAttention-2 README's H100 benchmark) and what a context-parallel rank runs.

Three groups of shapes, each timed with every SDPA backend this PyTorch offers for it:
  readme   batch 16384/seq, 16 heads, seq 512..16k, causal and not: the FlashAttention-2 README's
           benchmark grid, so the preset's source can be checked on this GPU;
  long     batch 1, 32 heads (Llama 3.1 8B), causal, seq 32k..128k: the long-context rows;
  ring     batch 1, 32 heads, the three kernels of load-balanced ring attention with chunks of
           c = 16384 tokens (torchtitan's Llama 3.1 8B context-parallel rows: 32768 local tokens):
           the diagonal step (2c x 2c causal), and the off-diagonal steps (2c queries x c keys, and
           c queries x 2c keys, not causal);
  dropout  the readme grid's causal shapes at 2k-8k tokens with attention dropout 0.1 (GPT-family
           runs; compare with the readme rows at dropout 0).
FLOPs: forward 4*b*h*sq*sk*d, halved for a causal square; backward 2.5x forward (the
FlashAttention-2 paper's accounting). One JSON object per line on stdout.
Usage: python3 tools/gpu/attention_speed.py [--peak-tflops 989] [--groups readme long ring]
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from cuda_timing import warm_and_time_once_ms

BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
}


def shapes(groups):
    out = []
    if "readme" in groups:
        for seq in (512, 1024, 2048, 4096, 8192, 16384):
            for causal in (True, False):
                out.append(("readme", 16384 // seq, 16, seq, seq, causal))
    if "long" in groups:
        for seq in (32768, 65536, 131072):
            out.append(("long", 1, 32, seq, seq, True))
    if "dropout" in groups:  # the same kernels with attention dropout 0.1 (GPT-family runs)
        for seq in (2048, 4096, 8192):
            out.append(("dropout", 16384 // seq, 16, seq, seq, True))
    if "ring" in groups:
        c = 16384
        out.append(("ring-diagonal", 1, 32, 2 * c, 2 * c, True))
        out.append(("ring-earlier", 1, 32, 2 * c, c, False))
        out.append(("ring-later", 1, 32, c, 2 * c, False))
    return out


def time_ms(fn, budget_s=0.6):
    """Median of repeated calls, after one warm-up; as many repeats as fit the budget (3 to 20)."""
    reps = max(3, min(20, int(budget_s * 1000 / warm_and_time_once_ms(fn))))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def measure(group, b, h, sq, sk, causal, backend, peak, d=128):
    p = 0.1 if group == "dropout" else 0.0
    q = torch.randn(b, h, sq, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, h, sk, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, h, sk, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    # SDPA's is_causal masks the top-left square; for the square shapes measured causally the mask
    # is the usual one.
    with sdpa_kernel([BACKENDS[backend]]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, dropout_p=p)
        grad = torch.randn_like(out)
        fwd = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, dropout_p=p))

        def fwd_bwd():
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, dropout_p=p)
            torch.autograd.grad(o, (q, k, v), grad)

        both = time_ms(fwd_bwd)
    flops_f = 4.0 * b * h * sq * sk * d * (0.5 if causal and sq == sk else 1.0)
    bwd = max(both - fwd, 1e-9)
    row = {
        "group": group, "backend": backend, "dropout_p": p, "batch": b, "heads": h, "seq_q": sq, "seq_kv": sk,
        "head_dim": d, "causal": causal,
        "forward_ms": round(fwd, 4), "backward_ms": round(bwd, 4), "forward_backward_ms": round(both, 4),
        "forward_tflops": round(flops_f / fwd / 1e9, 1),
        "backward_tflops": round(2.5 * flops_f / bwd / 1e9, 1),
        "forward_backward_tflops": round(3.5 * flops_f / both / 1e9, 1),
    }
    row["forward_fraction_of_peak"] = round(row["forward_tflops"] / peak, 3)
    row["backward_fraction_of_peak"] = round(row["backward_tflops"] / peak, 3)
    row["forward_backward_fraction_of_peak"] = round(row["forward_backward_tflops"] / peak, 3)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peak-tflops", type=float, default=989.0,
                    help="dense bf16 peak the fractions are taken of (H100/H200 SXM datasheet: 989)")
    ap.add_argument("--groups", nargs="+", default=["readme", "long", "ring", "dropout"])
    ap.add_argument("--backends", nargs="+", default=list(BACKENDS))
    args = ap.parse_args()
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "cuda": torch.version.cuda, "peak_tflops": args.peak_tflops}), flush=True)
    for shape in shapes(args.groups):
        for backend in args.backends:
            try:
                print(json.dumps(measure(*shape, backend, args.peak_tflops)), flush=True)
            except RuntimeError as e:  # a backend that does not take this shape
                print(json.dumps({"group": shape[0], "backend": backend, "seq_q": shape[3],
                                  "seq_kv": shape[4], "causal": shape[5],
                                  "error": str(e).splitlines()[0][:200]}), flush=True)
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
