#!/usr/bin/python3
"""Generate tests/golden/kernels/torch_golden.h: PyTorch reference outputs for the CPU kernels.

Run with Debian's python3-torch:  /usr/bin/python3 tools/golden/make_kernel_golden.py
Inputs come from deterministic formulas, x[i] = float32(scale * sin(a*i + b)) (or cos), so the
C++ tests regenerate them without files (tessel::test::formula in tests/kernels/check.h). PyTorch
computes in float64 from those float32 inputs; results are rounded to float32 literals. Backward
values are the input gradients of sum(out * dy) for a formula-generated dy.
torch 1.13 has no scaled_dot_product_attention, so attention is written out with matmul +
masked softmax (the same math; is_causal semantics), after repeat_interleave of k/v for GQA.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden",
                   "kernels", "torch_golden.h")


def formula(n, a, b, scale=1.0, use_cos=False):
    f = math.cos if use_cos else math.sin
    vals = torch.tensor([scale * f(a * i + b) for i in range(n)], dtype=torch.float64)
    return vals.to(torch.float32).to(torch.float64)


def leaf(t, shape):
    return t.reshape(shape).clone().requires_grad_(True)


arrays = []  # (name, flat float list)
consts = []  # (name, int or float value)


def emit(name, t):
    arrays.append((name, t.detach().reshape(-1).to(torch.float32).tolist()))


# ---- LayerNorm (N, C), RMSNorm (N, C)
N, C = 4, 16
consts += [("kNormN", N), ("kNormC", C)]
x = formula(N * C, 0.37, 0.1, 2.0)
# w[i] = 1.0f + float32(0.5 sin(0.11 i + 0.2)), rounded to float32 as the C++ side computes it.
w = (formula(C, 0.11, 0.2, 0.5) + 1.0).to(torch.float32).to(torch.float64)
b = formula(C, 0.7, 0.0, 0.1, True)
dy = formula(N * C, 0.23, 0.3, 1.0, True)
xl, wl, bl = leaf(x, (N, C)), leaf(w, (C,)), leaf(b, (C,))
y = F.layer_norm(xl, (C,), wl, bl, eps=1e-5)
(y * dy.reshape(N, C)).sum().backward()
emit("layernorm_out", y)
emit("layernorm_dinp", xl.grad)
emit("layernorm_dweight", wl.grad)
emit("layernorm_dbias", bl.grad)

xl, wl = leaf(x, (N, C)), leaf(w, (C,))
y = xl * torch.rsqrt(xl.pow(2).mean(-1, keepdim=True) + 1e-5) * wl  # HF LlamaRMSNorm
(y * dy.reshape(N, C)).sum().backward()
emit("rmsnorm_out", y)
emit("rmsnorm_dinp", xl.grad)
emit("rmsnorm_dweight", wl.grad)

# ---- GELU tanh (n)
n = 64
consts += [("kGeluN", n)]
x = formula(n, 0.37, 0.1, 4.0)
dy = formula(n, 0.23, 0.3, 1.0, True)
xl = leaf(x, (n,))
y = F.gelu(xl, approximate="tanh")
(y * dy).sum().backward()
emit("gelu_out", y)
emit("gelu_dinp", xl.grad)

# ---- SwiGLU fused (N, 2F) -> (N, F)
N, Fd = 4, 8
consts += [("kSwigluN", N), ("kSwigluF", Fd)]
x = formula(N * 2 * Fd, 0.37, 0.1, 3.0)
dy = formula(N * Fd, 0.23, 0.3, 1.0, True)
xl = leaf(x, (N, 2 * Fd))
gate, up = xl[:, :Fd], xl[:, Fd:]
y = F.silu(gate) * up
(y * dy.reshape(N, Fd)).sum().backward()
emit("swiglu_out", y)
emit("swiglu_dinp", xl.grad)

# ---- causal GQA attention: q (B,T,H,D), k/v (B,T,KH,D)
B, T, H, KH, D = 1, 7, 4, 2, 8
consts += [("kAttnB", B), ("kAttnT", T), ("kAttnH", H), ("kAttnKH", KH), ("kAttnD", D)]
q = leaf(formula(B * T * H * D, 0.37, 0.1), (B, T, H, D))
k = leaf(formula(B * T * KH * D, 0.41, 0.5), (B, T, KH, D))
v = leaf(formula(B * T * KH * D, 0.29, 0.2, 1.0, True), (B, T, KH, D))
dy = formula(B * T * H * D, 0.23, 0.3, 1.0, True).reshape(B, T, H, D)
kk = k.repeat_interleave(H // KH, dim=2)
vv = v.repeat_interleave(H // KH, dim=2)
qh, kh, vh = q.transpose(1, 2), kk.transpose(1, 2), vv.transpose(1, 2)  # (B,H,T,D)
s = qh @ kh.transpose(-1, -2) / math.sqrt(D)
mask = torch.ones(T, T, dtype=torch.bool).triu(1)
p = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
y = (p @ vh).transpose(1, 2)  # (B,T,H,D)
(y * dy).sum().backward()
emit("attention_out", y)
emit("attention_dq", q.grad)
emit("attention_dk", k.grad)
emit("attention_dv", v.grad)

# ---- RoPE rotate-half on (B,T,NH,D), positions pos_offset..pos_offset+T-1
B, T, NH, D, theta, off = 2, 5, 2, 8, 10000.0, 3
consts += [("kRopeB", B), ("kRopeT", T), ("kRopeNH", NH), ("kRopeD", D), ("kRopeOffset", off)]
xl = leaf(formula(B * T * NH * D, 0.37, 0.1), (B, T, NH, D))
dy = formula(B * T * NH * D, 0.23, 0.3, 1.0, True).reshape(B, T, NH, D)
inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
pos = torch.arange(off, off + T, dtype=torch.float64)
freqs = torch.outer(pos, inv_freq)
emb = torch.cat((freqs, freqs), dim=-1)  # (T, D)
cos, sin = emb.cos()[None, :, None, :], emb.sin()[None, :, None, :]


def rotate_half(t):
    return torch.cat((-t[..., D // 2:], t[..., : D // 2]), dim=-1)


y = xl * cos + rotate_half(xl) * sin
(y * dy).sum().backward()
emit("rope_out", y)
emit("rope_dinp", xl.grad)

# ---- cross-entropy (N, V), targets[i] = (7 i + 3) % V, per-row dloss[i] = 0.1 + 0.05 i
N, V = 5, 11
consts += [("kCeN", N), ("kCeV", V)]
logits = leaf(formula(N * V, 0.37, 0.1, 3.0), (N, V))
targets = torch.tensor([(7 * i + 3) % V for i in range(N)])
dloss = torch.tensor([0.1 + 0.05 * i for i in range(N)]).to(torch.float32).to(torch.float64)
loss = F.cross_entropy(logits, targets, reduction="none")
(loss * dloss).sum().backward()
emit("ce_loss", loss)
emit("ce_dlogits", logits.grad)

# ---- AdamW, two steps from zero state
n = 24
lr, b1, b2, eps, wd = 1e-2, 0.9, 0.95, 1e-8, 0.1
consts += [("kAdamN", n)]
p = torch.nn.Parameter(formula(n, 0.37, 0.1).clone())
opt = torch.optim.AdamW([p], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
for step, g in enumerate([formula(n, 0.23, 0.3, 1.0, True), formula(n, 0.53, 0.7, 0.5)]):
    p.grad = g.clone()
    opt.step()
    emit(f"adamw_params_step{step + 1}", p)
st = opt.state[p]
emit("adamw_m_step2", st["exp_avg"])
emit("adamw_v_step2", st["exp_avg_sq"])


def lit(v):
    if v == 0.0:
        return "0.0f"
    s = "%.9g" % v
    if "e" not in s and "." not in s:
        s += ".0"
    return s + "f"


lines = [
    "// Generated by tools/golden/make_kernel_golden.py with PyTorch %s; do not edit." %
    torch.__version__,
    "// Inputs are regenerated by the tests from the formulas in that script (see check.h).",
    "#pragma once",
    "",
    "namespace tessel::golden {",
    "",
]
for name, val in consts:
    lines.append("inline constexpr int %s = %d;" % (name, val))
lines.append("")
for name, vals in arrays:
    lines.append("inline constexpr float %s[%d] = {" % (name, len(vals)))
    for i in range(0, len(vals), 6):
        lines.append("    " + ", ".join(lit(v) for v in vals[i:i + 6]) + ",")
    lines.append("};")
lines += ["", "}  // namespace tessel::golden", ""]
os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w") as f:
    f.write("\n".join(lines))
print("wrote", os.path.normpath(OUT), sum(len(v) for _, v in arrays), "values", file=sys.stderr)
