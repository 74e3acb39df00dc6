#!/usr/bin/python3
"""bench/compare_peers.py THREADS — the peers' side of bench/compare.lua.

Runs the same cases with PyTorch and NumPy (when installed) and prints one
line per case: name, then nanoseconds per call for torch and numpy ("-" when
a peer lacks the case or is missing). Best of 5 rounds, like the Lua side.
"""
import os, sys

from peer_timer import best

threads = int(sys.argv[1])
try:
    import torch
    torch.set_num_threads(threads)
except ImportError:
    torch = None
try:
    import numpy as np
except ImportError:
    np = None



def cases_torch():
    c = {}
    a1, b1 = torch.ones(1), torch.ones(1)
    c["add 1-element functional"] = (200000, lambda: a1 + b1)
    c["add_ 1-element in-place"] = (200000, lambda: a1.add_(b1))
    for n, name in ((1 << 20, "1M"), (1 << 24, "16M")):
        a, b, o = torch.rand(n), torch.rand(n), torch.empty(n)
        reps = 200 if n == 1 << 20 else 10
        c["add %s functional" % name] = (reps, lambda a=a, b=b: a + b)
        c["add %s out=" % name] = (reps, lambda a=a, b=b, o=o: torch.add(a, b, out=o))
        c["add_ %s in-place" % name] = (reps, lambda a=a, b=b: a.add_(b))
    x = torch.rand(1 << 24)
    for f in ("exp", "tanh", "sigmoid"):
        c["%s 16M" % f] = (10, lambda f=f: getattr(torch, f)(x))
    m = torch.rand(4096, 4096)
    c["sum last dim 4096x4096"] = (10, lambda: m.sum(-1))
    c["mean last dim 4096x4096"] = (10, lambda: m.mean(-1))
    c["amax last dim 4096x4096"] = (10, lambda: m.amax(-1))
    c["softmax last dim 4096x4096"] = (10, lambda: torch.softmax(m, -1))
    p, q = torch.rand(1024, 1024), torch.rand(1024, 1024)
    c["matmul 1024x1024"] = (10, lambda: p @ q)
    bp, bq = torch.rand(256, 64, 64), torch.rand(256, 64, 64)
    c["bmm 256x64x64"] = (50, lambda: torch.bmm(bp, bq))
    s = torch.rand(1 << 20)
    c["sort 1M float32"] = (10, lambda: torch.sort(s))
    rows = torch.rand(1 << 20, 8)
    idx = torch.randint(0, 1 << 20, (1 << 20,))
    c["index_select 1M rows of 8"] = (10, lambda: torch.index_select(rows, 0, idx))
    gidx = torch.randint(0, 8, (1 << 20, 8))
    c["gather 1M rows of 8"] = (10, lambda: torch.gather(rows, 1, gidx))
    return c


def cases_numpy():
    c = {}
    a1, b1 = np.ones(1, np.float32), np.ones(1, np.float32)
    c["add 1-element functional"] = (200000, lambda: a1 + b1)
    c["add_ 1-element in-place"] = (200000, lambda: np.add(a1, b1, out=a1))
    for n, name in ((1 << 20, "1M"), (1 << 24, "16M")):
        a, b, o = (np.random.rand(n).astype(np.float32) for _ in range(3))
        reps = 200 if n == 1 << 20 else 10
        c["add %s functional" % name] = (reps, lambda a=a, b=b: a + b)
        c["add %s out=" % name] = (reps, lambda a=a, b=b, o=o: np.add(a, b, out=o))
        c["add_ %s in-place" % name] = (reps, lambda a=a, b=b: np.add(a, b, out=a))
    x = np.random.rand(1 << 24).astype(np.float32)
    c["exp 16M"] = (10, lambda: np.exp(x))
    c["tanh 16M"] = (10, lambda: np.tanh(x))
    m = np.random.rand(4096, 4096).astype(np.float32)
    c["sum last dim 4096x4096"] = (10, lambda: m.sum(-1))
    c["mean last dim 4096x4096"] = (10, lambda: m.mean(-1))
    c["amax last dim 4096x4096"] = (10, lambda: m.max(-1))
    p, q = (np.random.rand(1024, 1024).astype(np.float32) for _ in range(2))
    c["matmul 1024x1024"] = (10, lambda: p @ q)
    bp, bq = (np.random.rand(256, 64, 64).astype(np.float32) for _ in range(2))
    c["bmm 256x64x64"] = (50, lambda: bp @ bq)
    s = np.random.rand(1 << 20).astype(np.float32)
    c["sort 1M float32"] = (10, lambda: np.sort(s, kind="stable"))
    rows = np.random.rand(1 << 20, 8).astype(np.float32)
    idx = np.random.randint(0, 1 << 20, 1 << 20)
    c["index_select 1M rows of 8"] = (10, lambda: rows[idx])
    gidx = np.random.randint(0, 8, (1 << 20, 8))
    c["gather 1M rows of 8"] = (10, lambda: np.take_along_axis(rows, gidx, 1))
    return c


results = {}
for peer, make in (("torch", torch and cases_torch), ("numpy", np and cases_numpy)):
    if not make:
        continue
    for name, (reps, fn) in make().items():
        results.setdefault(name, {})[peer] = best(reps, fn)
for name, r in results.items():
    print("%s\t%s\t%s" % (name, "%.1f" % r["torch"] if "torch" in r else "-", "%.1f" % r["numpy"] if "numpy" in r else "-"))
