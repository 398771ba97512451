#!/usr/bin/env python3
"""bf16 and fp8 GEMM speed on one GPU through PyTorch (cuBLASLt): the ceilings the simulator's
matmul_efficiency stands for, per precision.

bf16: torch.matmul. fp8: torch._scaled_mm with e4m3 operands and one fp32 scale per tensor (the
tensor-wise scaling Transformer Engine's delayed scaling and torchao's Float8Linear use by
default), bf16 output; with fp32 accumulation promoted as usual, and with use_fast_accum (the
tensor cores' own accumulator, which Transformer Engine and torchao use for the forward GEMM and
not for the two backward ones). Square sizes 2048..16384 and the GEMMs of a Llama 3.1 8B / 70B layer at
8192 tokens (forward, and the backward's data and weight gradients) and of the two smallest models of Megatron-Core's H100 weak-scaling table at 4096.
Random operands (a constant fill draws less power and runs faster), each timing a run of
back-to-back calls. One JSON object per line; fractions of the datasheet's dense peaks (H100/H200 SXM:
989 bf16, 1979 fp8).
Usage: python3 tools/gpu/gemm_speed.py [--bf16-peak 989] [--fp8-peak 1979]
"""
import argparse
import json
import sys

import torch

from cuda_timing import warm_and_time_once_ms


def time_ms(fn, reps=5, batch=None):
    """Median over `reps` of the mean time of `batch` back-to-back calls (launch gaps hidden, the
    GPU held busy as in a training step), after a warm-up of the same length."""
    once = warm_and_time_once_ms(fn)
    batch = batch or max(5, min(200, int(50.0 / once)))  # about 50 ms per timed batch
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(batch):
        fn()
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / batch)
    times.sort()
    return times[len(times) // 2]


def shapes():
    for n in (2048, 4096, 8192, 16384):
        yield "square", n, n, n
    # (name, m = tokens, n = output features, k = input features) for a layer's forward GEMMs;
    # per tensor-parallel rank where tp > 1.
    for model, tokens, h, qkv, ffn_in, ffn_out, tp in (
            ("llama3.1-8b", 8192, 4096, 6144, 28672, 14336, 1),
            ("llama3.1-70b", 8192, 8192, 10240, 57344, 28672, 1),
            ("gpt-1.7b (Megatron-Core table, 4096 tokens)", 4096, 2048, 6144, 8192, 8192, 1),
            ("gpt-7.1b (Megatron-Core table, 4096 tokens, tp2)", 4096, 4096, 12288, 16384, 16384, 2)):
        for name, n, k in (("qkv", qkv // tp, h), ("proj", h, h // tp), ("fc1", ffn_in // tp, h),
                           ("fc2", h, ffn_out // tp)):
            yield f"{model} {name}", tokens, n, k
            yield f"{model} {name} dgrad", tokens, k, n   # dX = dY W
            yield f"{model} {name} wgrad", n, k, tokens   # dW = dY^T X, reduced over the tokens


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bf16-peak", type=float, default=989.0)
    ap.add_argument("--fp8-peak", type=float, default=1979.0)
    args = ap.parse_args()
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "cuda": torch.version.cuda}), flush=True)
    for name, m, n, k in shapes():
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        flops = 2.0 * m * n * k
        row = {"shape": name, "m": m, "n": n, "k": k}
        t = time_ms(lambda: torch.matmul(a, b.t()))
        row["bf16_ms"] = round(t, 4)
        row["bf16_tflops"] = round(flops / t / 1e9, 1)
        row["bf16_fraction_of_peak"] = round(row["bf16_tflops"] / args.bf16_peak, 3)
        try:
            a8 = a.to(torch.float8_e4m3fn)
            b8 = b.to(torch.float8_e4m3fn)
            one = torch.ones((), device="cuda", dtype=torch.float32)
            # _scaled_mm wants the second operand column-major: b8.t() of a row-major (n, k).
            for key, fast in (("fp8", False), ("fp8_fast_accum", True)):
                t8 = time_ms(lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                      use_fast_accum=fast))
                row[f"{key}_ms"] = round(t8, 4)
                row[f"{key}_tflops"] = round(flops / t8 / 1e9, 1)
                row[f"{key}_fraction_of_peak"] = round(row[f"{key}_tflops"] / args.fp8_peak, 3)
        except (RuntimeError, AttributeError) as e:
            row["fp8_error"] = str(e).splitlines()[0][:200]
        print(json.dumps(row), flush=True)
        del a, b
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
