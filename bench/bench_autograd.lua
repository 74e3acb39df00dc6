-- bench/bench_autograd.lua — what autograd costs, sk against PyTorch 1.13 in one run:
-- the forward of a 1-element a + b with and without requires_grad (the recording cost), and
-- one training step (forward, backward, SGD update under no_grad) of a 784-256-256-10 MLP at
-- batch 64 and of a transformer block (d = 256, 4 heads, sequence 128, batch 8), on the same
-- threads. The peer is bench/autograd_peers.py in /usr/bin/python3 (optional).
local sk = require "sk"
local util = require "util"
local ROUNDS = 5

local function linear_init(i, o)
  local b = 1 / math.sqrt(i)
  return (sk.rand(i, o) * (2 * b) - b):requires_grad_(), (sk.rand(o) * (2 * b) - b):requires_grad_()
end

local function sgd(params, lr)
  sk.no_grad(function()
    for _, p in ipairs(params) do
      p:sub_(p.grad, { alpha = lr })
      p.grad = nil
    end
  end)
end

local function mlp_case()
  sk.manual_seed(0)
  local w1, b1 = linear_init(784, 256)
  local w2, b2 = linear_init(256, 256)
  local w3, b3 = linear_init(256, 10)
  local params = { w1, b1, w2, b2, w3, b3 }
  local x, y = sk.randn(64, 784), sk.randint(10, { 64 })
  return function()
    local h = (x:matmul(w1) + b1):relu()
    h = (h:matmul(w2) + b2):relu()
    local loss = sk.cross_entropy(h:matmul(w3) + b3, y)
    loss:backward()
    sgd(params, 0.01)
  end
end

local function block_case()
  local forward, params, x = require("transformer_block").make(true)
  return function()
    local loss = forward(x):pow(2):mean()
    loss:backward()
    sgd(params, 0.01)
  end
end

for _, threads in ipairs { 1, 2 } do
  sk.set_num_threads(threads)
  local a, b = sk.ones(1), sk.ones(1)
  local ga, gb = sk.ones(1, { requires_grad = true }), sk.ones(1, { requires_grad = true })
  local rows = {
    { "a + b 1-element", 200000, function() return a + b end },
    { "a + b 1-element requires_grad", 200000, function() return ga + gb end },
    { "a + b 1-element under no_grad", 200000, function() return ga + gb end, sk.no_grad },
    { "MLP 784-256-256-10 b64 step", 20, mlp_case() },
    { "transformer block d256 h4 s128 b8 step", 5, block_case() },
  }
  local mine, peer = util.interleaved(rows, "bench/autograd_peers.py", threads, ROUNDS)
  print(string.format("\n%d thread%s — ns per call, best of %d rounds alternating with the peer's; torch / sk (> 1: sk faster)",
    threads, threads == 1 and "" or "s", ROUNDS))
  print(string.format("%-42s %14s %14s %9s", "case", "sk", "torch", "ratio"))
  for _, r in ipairs(rows) do
    local t, pt = mine[r[1]] * 1e9, peer[r[1]] and peer[r[1]][1]
    print(string.format("%-42s %14.1f %14s %9s", r[1], t, pt and string.format("%14.1f", pt) or "-",
      pt and string.format("%8.2fx", pt / t) or "-"))
  end
end
sk.set_num_threads(2)
