#!/usr/bin/python3
"""bench/nn_peers.py THREADS — PyTorch's side of bench/bench_nn.lua: the same cases and shapes,
one line per case: name, nanoseconds per call (bench/peer_timer.py's best of rounds)."""
import os
import re
import sys

from peer_timer import best

import torch
import torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)

CONVS = [
    ("conv2d 64-64 3x3 56x56 b32", (32, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1),
    ("conv2d 128-128 3x3 28x28 b32", (32, 128, 28, 28), (128, 128, 3, 3), 1, 1, 1),
    ("conv2d 3-64 7x7/2 224x224 b32", (32, 3, 224, 224), (64, 3, 7, 7), 2, 3, 1),
    ("conv2d 1x1 256-64 56x56 b32", (32, 256, 56, 56), (64, 256, 1, 1), 1, 0, 1),
    ("conv2d depthwise 64 3x3 56x56 b32", (32, 64, 56, 56), (64, 1, 3, 3), 1, 1, 64),
]


ONLY = os.environ.get("ONLY")  # bench_nn.lua's filter: Lua patterns here are plain text or '%' escapes


def row(name, reps, fn):
    if ONLY and not re.search(re.escape(ONLY.replace("%", "")), name):
        return
    print("%s\t%.1f" % (name, best(reps, fn)), flush=True)


for name, xs, ws, stride, pad, groups in CONVS:
    x, w = torch.randn(xs), torch.randn(ws)
    with torch.no_grad():
        row(name + " fwd", 2, lambda: F.conv2d(x, w, None, stride, pad, 1, groups))
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()

    def step():
        y = F.conv2d(xg, wg, None, stride, pad, 1, groups)
        y.backward(torch.ones_like(y))
        xg.grad, wg.grad = None, None
    row(name + " fwd+bwd", 1, step)

stem = torch.randn(32, 64, 112, 112)
with torch.no_grad():
    row("max_pool2d 3x3/2 [32,64,112,112]", 3, lambda: F.max_pool2d(stem, 3, 2, 1))
sg = stem.clone().requires_grad_()


def pool_step():
    y = F.max_pool2d(sg, 3, 2, 1)
    y.backward(torch.ones_like(y))
    sg.grad = None
row("max_pool2d 3x3/2 fwd+bwd", 2, pool_step)
tail, mid = torch.randn(32, 512, 7, 7), torch.randn(32, 64, 56, 56)
with torch.no_grad():
    row("adaptive_avg_pool2d 1x1 [32,512,7,7]", 20, lambda: F.adaptive_avg_pool2d(tail, 1))
    row("adaptive_avg_pool2d 7x7 [32,64,56,56]", 5, lambda: F.adaptive_avg_pool2d(mid, 7))
    row("avg_pool2d 2x2/2 [32,64,56,56]", 5, lambda: F.avg_pool2d(mid, 2))
bx, bw, bb = torch.randn(32, 64, 56, 56), torch.ones(64), torch.zeros(64)
brm, brv = torch.zeros(64), torch.ones(64)
with torch.no_grad():
    row("batch_norm train [32,64,56,56]", 5, lambda: torch.batch_norm(bx, bw, bb, brm, brv, True, 0.1, 1e-5, False))
    row("batch_norm eval [32,64,56,56]", 5, lambda: torch.batch_norm(bx, bw, bb, brm, brv, False, 0.1, 1e-5, False))
bxg, bwg, bbg = bx.clone().requires_grad_(), bw.clone().requires_grad_(), bb.clone().requires_grad_()


def bn_step():
    y = torch.batch_norm(bxg, bwg, bbg, brm, brv, True, 0.1, 1e-5, False)
    y.backward(torch.ones_like(y))
    bxg.grad, bwg.grad, bbg.grad = None, None, None
row("batch_norm train fwd+bwd", 3, bn_step)
gw, gb = torch.ones(64), torch.zeros(64)
with torch.no_grad():
    row("group_norm 32 groups [32,64,56,56]", 5, lambda: F.group_norm(bx, 32, gw, gb))
s128, s4096 = torch.randn(8, 4, 128, 128), torch.randn(256, 4096)
row("softmax last dim 128 [8,4,128,128]", 20, lambda: torch.softmax(s128, -1))
row("softmax last dim 4096 [256,4096]", 20, lambda: torch.softmax(s4096, -1))
row("log_softmax last dim 128 [8,4,128,128]", 20, lambda: torch.log_softmax(s128, -1))
row("log_softmax last dim 4096 [256,4096]", 20, lambda: torch.log_softmax(s4096, -1))
eq, ek = torch.randn(8, 12, 128, 64), torch.randn(8, 12, 128, 64)
row("einsum bhqd,bhkd->bhqk [8,12,128,64]", 20, lambda: torch.einsum("bhqd,bhkd->bhqk", eq, ek))
ca, cb, cc = torch.randn(512, 64), torch.randn(64, 512), torch.randn(512, 512)
row("einsum ij,jk,kl->il [512,64][64,512][512,512]", 10, lambda: torch.einsum("ij,jk,kl->il", ca, cb, cc))
v = torch.randn(1 << 20)
row("gelu 1M", 20, lambda: F.gelu(v))
row("gelu tanh 1M", 20, lambda: F.gelu(v, approximate="tanh"))
row("silu 1M", 20, lambda: F.silu(v))
for d in (768, 128):
    x = torch.randn(8, 128, d)
    g, b = torch.ones(d), torch.zeros(d)
    with torch.no_grad():
        row("layer_norm over %d [8,128,%d]" % (d, d), 20, lambda: F.layer_norm(x, (d,), g, b))
    xg, gg, bg = x.clone().requires_grad_(), g.clone().requires_grad_(), b.clone().requires_grad_()

    def ln_step():
        y = F.layer_norm(xg, (d,), gg, bg)
        y.backward(torch.ones_like(y))
        xg.grad, gg.grad, bg.grad = None, None, None
    row("layer_norm over %d fwd+bwd" % d, 10, ln_step)
