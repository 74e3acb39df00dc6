#!/usr/bin/python3
"""bench/linalg_peers.py THREADS INPUTS.npz — PyTorch's side of bench/bench_linalg.lua: the same
cases on the same matrices (the .npz sk saved), one line per case: name, nanoseconds per call
(bench/peer_timer.py's best of rounds)."""
import os
import re
import sys

from peer_timer import best

import numpy
import torch

torch.set_num_threads(int(sys.argv[1]))
INPUTS = {k: torch.from_numpy(v) for k, v in numpy.load(sys.argv[2]).items()}
ONLY = os.environ.get("ONLY")


def row(name, reps, fn):
    if ONLY and not re.search(re.escape(ONLY.replace("%", "")), name):
        return
    print("%s\t%.1f" % (name, best(reps, fn)), flush=True)


with torch.no_grad():
    a, spd, b1, bn = INPUTS["a"], INPUTS["spd"], INPUTS["b1"], INPUTS["bn"]
    row("linalg.solve 1024² b=1024x1", 3, lambda: torch.linalg.solve(a, b1))
    row("linalg.solve 1024² b=1024²", 2, lambda: torch.linalg.solve(a, bn))
    row("linalg.inv 1024²", 2, lambda: torch.linalg.inv(a))
    row("linalg.cholesky 1024²", 3, lambda: torch.linalg.cholesky(spd))
    row("linalg.det 1024²", 3, lambda: torch.linalg.det(a))
    row("linalg.qr 1024²", 1, lambda: torch.linalg.qr(a))
    row("linalg.svd 1024²", 1, lambda: torch.linalg.svd(a))
    row("linalg.svdvals 1024²", 1, lambda: torch.linalg.svdvals(a))
    row("linalg.eigh 1024²", 1, lambda: torch.linalg.eigh(spd))
    sa, sb = INPUTS["sa"], INPUTS["sb"]
    row("linalg.solve 4096 x 8x8", 5, lambda: torch.linalg.solve(sa, sb))
    row("linalg.inv 4096 x 8x8", 5, lambda: torch.linalg.inv(sa))
