#!/usr/bin/python3
"""bench/linalg_peers.py THREADS — PyTorch's side of bench/bench_linalg.lua: the same cases and
shapes, one line per case: name, nanoseconds per call (bench/peer_timer.py's best of rounds)."""
import os
import re
import sys

from peer_timer import best

import torch

torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)
ONLY = os.environ.get("ONLY")


def row(name, reps, fn):
    if ONLY and not re.search(re.escape(ONLY.replace("%", "")), name):
        return
    print("%s\t%.1f" % (name, best(reps, fn)), flush=True)


with torch.no_grad():
    n = 1024
    a = torch.randn(n, n) + torch.eye(n) * n
    spd = a @ a.t()
    b1, bn = torch.randn(n, 1), torch.randn(n, n)
    row("linalg.solve 1024² b=1024x1", 3, lambda: torch.linalg.solve(a, b1))
    row("linalg.solve 1024² b=1024²", 2, lambda: torch.linalg.solve(a, bn))
    row("linalg.inv 1024²", 2, lambda: torch.linalg.inv(a))
    row("linalg.cholesky 1024²", 3, lambda: torch.linalg.cholesky(spd))
    row("linalg.det 1024²", 3, lambda: torch.linalg.det(a))
    row("linalg.qr 1024²", 1, lambda: torch.linalg.qr(a))
    row("linalg.svd 1024²", 1, lambda: torch.linalg.svd(a))
    row("linalg.svdvals 1024²", 1, lambda: torch.linalg.svdvals(a))
    row("linalg.eigh 1024²", 1, lambda: torch.linalg.eigh(spd))
    sa = torch.randn(4096, 8, 8) + torch.eye(8) * 8
    sb = torch.randn(4096, 8, 1)
    row("linalg.solve 4096 x 8x8", 5, lambda: torch.linalg.solve(sa, sb))
    row("linalg.inv 4096 x 8x8", 5, lambda: torch.linalg.inv(sa))
