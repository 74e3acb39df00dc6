#!/usr/bin/python3
"""bench/autograd_peers.py THREADS — PyTorch's side of bench/bench_autograd.lua.

The same cases, the same models and the same update (SGD without momentum under
no_grad); one line per case: name, nanoseconds per call. Best of 5 rounds.
"""
import math, sys

from peer_timer import best

import torch

threads = int(sys.argv[1])
torch.set_num_threads(threads)



def linear_init(i, o):
    b = 1 / math.sqrt(i)
    return (torch.rand(i, o) * (2 * b) - b).requires_grad_(), (torch.rand(o) * (2 * b) - b).requires_grad_()


def sgd(params, lr):
    with torch.no_grad():
        for p in params:
            p.sub_(p.grad, alpha=lr)
            p.grad = None


def mlp_case():
    torch.manual_seed(0)
    w1, b1 = linear_init(784, 256)
    w2, b2 = linear_init(256, 256)
    w3, b3 = linear_init(256, 10)
    params = [w1, b1, w2, b2, w3, b3]
    x, y = torch.randn(64, 784), torch.randint(10, (64,))

    def step():
        h = (x.matmul(w1) + b1).relu()
        h = (h.matmul(w2) + b2).relu()
        loss = torch.nn.functional.cross_entropy(h.matmul(w3) + b3, y)
        loss.backward()
        sgd(params, 0.01)
    return step


def block_case():
    torch.manual_seed(0)
    d, heads, seq, batch = 256, 4, 128, 8
    dh = d // heads
    wq, bq = linear_init(d, d)
    wk, bk = linear_init(d, d)
    wv, bv = linear_init(d, d)
    wo, bo = linear_init(d, d)
    w1, b1 = linear_init(d, 4 * d)
    w2, b2 = linear_init(4 * d, d)
    g1, be1 = torch.ones(d, requires_grad=True), torch.zeros(d, requires_grad=True)
    g2, be2 = torch.ones(d, requires_grad=True), torch.zeros(d, requires_grad=True)
    params = [wq, bq, wk, bk, wv, bv, wo, bo, w1, b1, w2, b2, g1, be1, g2, be2]
    x = torch.randn(batch, seq, d)
    ln = torch.nn.functional.layer_norm

    def split(t):
        return t.view(batch, seq, heads, dh).transpose(1, 2)

    def step():
        hn = ln(x, (d,), g1, be1)
        q, k, v = split(hn.matmul(wq) + bq), split(hn.matmul(wk) + bk), split(hn.matmul(wv) + bv)
        att = torch.softmax(q.matmul(k.transpose(-2, -1)) / math.sqrt(dh), -1)
        o = att.matmul(v).transpose(1, 2).reshape(batch, seq, d)
        h = x + (o.matmul(wo) + bo)
        f = torch.nn.functional.gelu(ln(h, (d,), g2, be2).matmul(w1) + b1).matmul(w2) + b2
        loss = (h + f).pow(2).mean()
        loss.backward()
        sgd(params, 0.01)
    return step


a, b = torch.ones(1), torch.ones(1)
ga, gb = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
print("a + b 1-element\t%.1f" % best(200000, lambda: a + b))
print("a + b 1-element requires_grad\t%.1f" % best(200000, lambda: ga + gb))
with torch.no_grad():
    print("a + b 1-element under no_grad\t%.1f" % best(200000, lambda: ga + gb))
print("MLP 784-256-256-10 b64 step\t%.1f" % best(20, mlp_case()))
print("transformer block d256 h4 s128 b8 step\t%.1f" % best(5, block_case()))
