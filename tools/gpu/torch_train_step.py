"""Times a PyTorch training step of a decoder on one GPU, for a side-by-side check of
`tessel simulate` on the same model, batch and precision (scripts/measure-gpu.sh runs both).

The model is written out here in plain PyTorch ops (no Hugging Face, no fused kernels beyond
scaled_dot_product_attention), so what runs is what the simulator's eager-PyTorch options
describe: fp32 parameters under bf16 autocast, SDPA causal attention, fp32 cross entropy, fused
AdamW. A Hugging Face "llama" config gives the Llama layout (RMSNorm, RoPE, SwiGLU, no biases); a
"gpt2" config the GPT layout that Megatron-LM trains (LayerNorm, learned positions, GeLU, a bias on
every linear, and dropout --dropout on the embeddings, the attention probabilities and both residual
branches).

With --compile-blocks only the decoder blocks go through torch.compile (fused elementwise kernels,
dropout included, as Megatron-LM's fused bias-GeLU and bias-dropout-add) and the loss stays the
eager fp32 cross entropy; --compile compiles the loss too. --accumulate N runs N microbatches of
--batch sequences per optimizer step.

With --ballast-GiB the same step runs with that much less free memory (the caching allocator's
behaviour near the limit: it frees its cache and retries, num_alloc_retries). With --recompute-full every block runs under torch.utils.checkpoint (its forward again in the
backward), as `tessel simulate --recompute full` describes.

Usage: python3 torch_train_step.py CONFIG.json --batch B --seq T [--steps N] [--compile] [--profile]
       [--recompute-full]
Prints one JSON line: the median step time and tokens per second; with --profile, first the GPU
kernels of one more step (torch.profiler), the most time first."""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
import torch.utils.checkpoint


class LlamaBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        h, f = c["hidden_size"], c["intermediate_size"]
        self.nh, self.nkv = c["num_attention_heads"], c["num_key_value_heads"]
        self.hd = h // self.nh
        self.qkv = torch.nn.Linear(h, (self.nh + 2 * self.nkv) * self.hd, bias=False)
        self.proj = torch.nn.Linear(h, h, bias=False)
        self.gate_up = torch.nn.Linear(h, 2 * f, bias=False)
        self.down = torch.nn.Linear(f, h, bias=False)
        self.norm1 = torch.nn.RMSNorm(h, eps=c["rms_norm_eps"])
        self.norm2 = torch.nn.RMSNorm(h, eps=c["rms_norm_eps"])

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(
            [self.nh * self.hd, self.nkv * self.hd, self.nkv * self.hd], dim=-1)
        q = rope(q.view(B, T, self.nh, self.hd), cos, sin).transpose(1, 2)
        k = rope(k.view(B, T, self.nkv, self.hd), cos, sin).transpose(1, 2)
        v = v.view(B, T, self.nkv, self.hd).transpose(1, 2)
        if self.nkv != self.nh:  # GQA: each K/V head serves nh/nkv query heads
            k = k.repeat_interleave(self.nh // self.nkv, dim=1)
            v = v.repeat_interleave(self.nh // self.nkv, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, -1))
        g, u = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


class GptBlock(torch.nn.Module):
    def __init__(self, c, dropout):
        super().__init__()
        h, f = c["n_embd"], c.get("n_inner") or 4 * c["n_embd"]
        self.nh, self.hd, self.p = c["n_head"], h // c["n_head"], dropout
        self.norm1, self.norm2 = torch.nn.LayerNorm(h), torch.nn.LayerNorm(h)
        self.qkv, self.proj = torch.nn.Linear(h, 3 * h), torch.nn.Linear(h, h)
        self.fc1, self.fc2 = torch.nn.Linear(h, f), torch.nn.Linear(f, h)

    def forward(self, x, cos=None, sin=None):
        B, T, _ = x.shape
        q, k, v = (t.view(B, T, self.nh, self.hd).transpose(1, 2) for t in self.qkv(self.norm1(x)).chunk(3, dim=-1))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.p if self.training else 0.0)
        x = x + F.dropout(self.proj(a.transpose(1, 2).reshape(B, T, -1)), self.p, self.training)
        return x + F.dropout(self.fc2(F.gelu(self.fc1(self.norm2(x)), approximate="tanh")), self.p, self.training)


def rope(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Decoder(torch.nn.Module):
    def __init__(self, c, dropout=0.0):
        super().__init__()
        self.gpt = c["model_type"] == "gpt2"
        h = c["n_embd"] if self.gpt else c["hidden_size"]
        self.embed = torch.nn.Embedding(c["vocab_size"], h)
        if self.gpt:
            self.positions = torch.nn.Embedding(c["n_positions"], h)
            self.blocks = torch.nn.ModuleList(GptBlock(c, dropout) for _ in range(c["n_layer"]))
            self.norm = torch.nn.LayerNorm(h)
        else:
            self.blocks = torch.nn.ModuleList(LlamaBlock(c) for _ in range(c["num_hidden_layers"]))
            self.norm = torch.nn.RMSNorm(h, eps=c["rms_norm_eps"])
            self.theta = c["rope_theta"]
            self.hd = h // c["num_attention_heads"]
        self.head = torch.nn.Linear(h, c["vocab_size"], bias=False)
        if c.get("tie_word_embeddings", self.gpt):
            self.head.weight = self.embed.weight
        self.p = dropout

    recompute_full = False

    def forward(self, tokens, targets):
        T = tokens.shape[1]
        if self.gpt:
            cos = sin = None
            x = F.dropout(self.embed(tokens) + self.positions(torch.arange(T, device=tokens.device)), self.p, self.training)
        else:
            inv = 1.0 / self.theta ** (torch.arange(0, self.hd, 2, device=tokens.device).float() / self.hd)
            ang = torch.outer(torch.arange(T, device=tokens.device).float(), inv)[None, :, None, :]
            cos, sin = ang.cos(), ang.sin()
            x = self.embed(tokens)
        for b in self.blocks:
            if self.recompute_full:
                x = torch.utils.checkpoint.checkpoint(b, x, cos, sin, use_reentrant=False)
            else:
                x = b(x, cos, sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("config")
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--seq", type=int, required=True)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--compile-blocks", action="store_true")
    p.add_argument("--dropout", type=float, default=0.0, help="GPT layout: dropout probability")
    p.add_argument("--accumulate", type=int, default=1, help="microbatches per optimizer step")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--recompute-full", action="store_true")
    p.add_argument("--ballast-GiB", type=float, default=0.0,
                   help="hold this much GPU memory aside first (the same step with less room)")
    a = p.parse_args()
    c = json.load(open(a.config))
    torch.manual_seed(0)
    ballast = torch.empty(int(a.ballast_GiB * 2**30), dtype=torch.uint8, device="cuda") if a.ballast_GiB else None
    model = Decoder(c, a.dropout).cuda()
    model.recompute_full = a.recompute_full
    if a.compile_blocks:
        for b in model.blocks:
            b.compile()
    step_model = torch.compile(model) if a.compile else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    tokens = torch.randint(0, c["vocab_size"], (a.batch, a.seq + 1), device="cuda")
    def train_step():
        for _ in range(a.accumulate):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = step_model(tokens[:, :-1], tokens[:, 1:])
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = []
    for i in range(a.steps + 3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        train_step()
        torch.cuda.synchronize()
        if i >= 3:  # warm-up: cuBLAS heuristics, allocator, compilation
            times.append(time.perf_counter() - t0)
    if a.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            train_step()
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=60, max_name_column_width=90))
    step = statistics.median(times)
    params = sum(q.numel() for q in model.parameters())
    print(json.dumps({"config": a.config, "batch": a.batch, "seq": a.seq, "compile": a.compile,
                      "compile_blocks": a.compile_blocks, "dropout": a.dropout, "accumulate": a.accumulate,
                      "recompute_full": a.recompute_full,
                      "ballast_GiB": a.ballast_GiB,
                      "alloc_retries": torch.cuda.memory_stats().get("num_alloc_retries", 0),
                      "step_times_s": times,
                      "params": params, "step_time_s": step, "tokens_per_s": a.batch * a.seq * a.accumulate / step,
                      "peak_memory_GiB": torch.cuda.max_memory_allocated() / 2**30,
                      "reserved_GiB": torch.cuda.max_memory_reserved() / 2**30,
                      "torch": torch.__version__, "device": torch.cuda.get_device_name()}))


if __name__ == "__main__":
    main()
