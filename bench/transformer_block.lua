-- bench/transformer_block.lua — the transformer block the benchmarks share: pre-norm attention
-- and a GELU MLP, d = 256, 4 heads, sequence 128, batch 8 (bench/autograd_peers.py builds the
-- same in PyTorch). make(grad) returns forward(x), its parameters (requiring grad when grad is
-- true) and an input; parameters take PyTorch's Linear init, U(-1/sqrt(in), 1/sqrt(in)).
local sk = require "sk"
local M = { d = 256, heads = 4, seq = 128, batch = 8 }

function M.make(grad)
  sk.manual_seed(0)
  local d, heads, seq, batch = M.d, M.heads, M.seq, M.batch
  local dh = d // heads
  local params = {}
  local function param(t)
    if grad then t:requires_grad_() end
    params[#params + 1] = t
    return t
  end
  local function linear(i, o)
    local b = 1 / math.sqrt(i)
    return param(sk.rand(i, o) * (2 * b) - b), param(sk.rand(o) * (2 * b) - b)
  end
  local wq, bq = linear(d, d)
  local wk, bk = linear(d, d)
  local wv, bv = linear(d, d)
  local wo, bo = linear(d, d)
  local w1, b1 = linear(d, 4 * d)
  local w2, b2 = linear(4 * d, d)
  local g1, be1, g2, be2 = param(sk.ones(d)), param(sk.zeros(d)), param(sk.ones(d)), param(sk.zeros(d))
  local function split(t) return t:view({ batch, seq, heads, dh }):transpose(1, 2) end
  local function forward(x)
    local hn = sk.layer_norm(x, { d }, g1, be1)
    local q, k, v = split(hn:matmul(wq) + bq), split(hn:matmul(wk) + bk), split(hn:matmul(wv) + bv)
    local att = sk.softmax(q:matmul(k:transpose(-2, -1)) / math.sqrt(dh), -1)
    local o = att:matmul(v):transpose(1, 2):reshape({ batch, seq, d })
    local h = x + (o:matmul(wo) + bo)
    return h + (sk.gelu(sk.layer_norm(h, { d }, g2, be2):matmul(w1) + b1):matmul(w2) + b2)
  end
  return forward, params, sk.randn(batch, seq, d)
end

return M
