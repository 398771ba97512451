"""Does an FSDP training step slow down when it runs close to the GPU's memory limit?

The validation set's worst row (llm-foundry's MPT-30b at 8192 tokens, FSDP FULL_SHARD, one
sequence per microbatch, activation checkpointing) runs far slower than its siblings at shorter
sequences, and llm-foundry's own code warns that its attention "can trigger alloc retries which
hurts performance". A steady eager step showed no slowdown near the limit (allocator-headroom/),
but FSDP allocates differently: every block's gathered bf16 weights and its reduce-scattered fp32
gradients are allocated and freed again on side streams, block after block.

This script trains MPT-30b-shaped blocks (d_model 7168, 56 heads of 128, MLP 4x with GELU,
LayerNorm, vocabulary 50368) under PyTorch FSDP2 (fully_shard per block, bf16 parameters and fp32
reduction, the mixed-precision mode llm-foundry's rows name) with activation checkpointing, on one
GPU as a one-rank process group (the gather and reduce-scatter are copies, but the allocations are
FSDP's own). It caps the caching allocator at the step's own peak of allocated memory plus a given
headroom (torch.cuda.set_per_process_memory_fraction, which makes the allocator free its cache and
retry as a full GPU does) and times the step at each cap, from the most headroom to the least; the
first cap that runs out of memory ends the sweep (FSDP's state after a failed step is not usable).

Usage: python3 fsdp_headroom.py [--layers L] [--seq T] [--microbatches M] [--headroom-GiB H ...]
Prints one JSON line per cap: headroom, step time, allocator retries and peak memory."""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
import torch.utils.checkpoint


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(d, bias=False)
        self.wqkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.out = torch.nn.Linear(d, d, bias=False)
        self.norm2 = torch.nn.LayerNorm(d, bias=False)
        self.up = torch.nn.Linear(d, 4 * d, bias=False)
        self.down = torch.nn.Linear(4 * d, d, bias=False)

    def attend(self, x):
        B, T, d = x.shape
        q, k, v = self.wqkv(self.norm1(x)).view(B, T, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                           is_causal=True)
        return self.out(a.transpose(1, 2).reshape(B, T, d))

    def forward(self, x):
        x = x + self.attend(x)
        return x + self.down(F.gelu(self.up(self.norm2(x)), approximate="tanh"))


class Checkpointed(torch.nn.Module):
    """Runs its block's forward again in the backward. FSDP wraps this module, so its gathers sit
    outside the checkpointed region, as with torchtitan's and Composer's wrappers."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False)


class Decoder(torch.nn.Module):
    def __init__(self, layers, d, heads, vocab):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Checkpointed(Block(d, heads)) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(d, bias=False)

    def forward(self, tokens, targets):
        x = self.embed(tokens)
        for b in self.blocks:
            x = b(x)
        logits = F.linear(self.norm(x), self.embed.weight)  # MPT ties the head to the embedding
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=7168)
    p.add_argument("--heads", type=int, default=56)
    p.add_argument("--vocab", type=int, default=50368)
    p.add_argument("--seq", type=int, default=8192)
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--headroom-GiB", type=float, nargs="*", default=[6, 4, 3, 2, 1.5, 1, 0.5, 0.25])
    a = p.parse_args()

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    torch.manual_seed(0)
    model = Decoder(a.layers, a.d_model, a.heads, a.vocab).cuda()
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for b in model.blocks:
        fully_shard(b, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, a.vocab, (a.microbatches, 1, a.seq + 1), device="cuda")

    def train_step():
        for m in range(a.microbatches):
            loss = model(tokens[m, :, :-1], tokens[m, :, 1:]) / a.microbatches
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def timed_steps():
        torch.cuda.reset_peak_memory_stats()
        retries0 = torch.cuda.memory_stats().get("num_alloc_retries", 0)
        times = []
        for i in range(a.steps + 1):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            train_step()
            torch.cuda.synchronize()
            if i >= 1:
                times.append(time.perf_counter() - t0)
        s = torch.cuda.memory_stats()
        return {"step_time_s": statistics.median(times), "step_times_s": times,
                "alloc_retries": s.get("num_alloc_retries", 0) - retries0,
                "peak_allocated_GiB": torch.cuda.max_memory_allocated() / 2**30,
                "peak_reserved_GiB": torch.cuda.max_memory_reserved() / 2**30}

    total = torch.cuda.get_device_properties(0).total_memory
    params = sum(q.numel() for q in model.parameters())
    base = dict(layers=a.layers, d_model=a.d_model, heads=a.heads, seq=a.seq, microbatches=a.microbatches,
                params=params, torch=torch.__version__, device=torch.cuda.get_device_name(),
                total_GiB=total / 2**30,
                alloc_conf=os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
    train_step()  # warm-up: optimizer states, cuBLAS heuristics
    free = timed_steps()
    peak = free["peak_allocated_GiB"]
    print(json.dumps({**base, "headroom_GiB": None, "cap_GiB": None, **free}), flush=True)
    for h in a.headroom_GiB:
        cap = (peak + h) * 2**30
        torch.cuda.empty_cache()
        torch.cuda.set_per_process_memory_fraction(min(1.0, cap / total))
        try:
            r = timed_steps()
        except torch.OutOfMemoryError as e:
            r = {"out_of_memory": str(e).splitlines()[0][:200]}
        print(json.dumps({**base, "headroom_GiB": h, "cap_GiB": cap / 2**30, **r}), flush=True)
        if "out_of_memory" in r:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
