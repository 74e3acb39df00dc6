-- bench/bench_nn.lua — the nn ops of issue 13 against PyTorch 1.13, same machine and threads,
-- in one run: rounds of sk's rows alternate with runs of bench/nn_peers.py (the same cases,
-- same shapes), best of each. Convolutions at ResNet-style shapes (batch 32), forward under
-- no_grad and forward+backward (input and weight require grad, backward of a ones gradient);
-- pooling at ResNet's shapes; softmax, log_softmax, GELU, SiLU and layer_norm at the sizes the issue names.
-- `lua5.4 bench/bench_nn.lua [threads...]` (default 1 and 2); rows print torch / sk (> 1: sk faster).
-- ROUNDS sets the rounds (default 3); ONLY, a Lua pattern, keeps the rows whose names match it.
local sk = require "sk"
local util = require "util"
local ROUNDS = tonumber(os.getenv("ROUNDS") or "3")

-- name, reps, make() -> fn
local CONVS = {
  { "conv2d 64-64 3x3 56x56 b32", { 32, 64, 56, 56 }, { 64, 64, 3, 3 }, 1, 1, 1 },
  { "conv2d 128-128 3x3 28x28 b32", { 32, 128, 28, 28 }, { 128, 128, 3, 3 }, 1, 1, 1 },
  { "conv2d 3-64 7x7/2 224x224 b32", { 32, 3, 224, 224 }, { 64, 3, 7, 7 }, 2, 3, 1 },
  { "conv2d 1x1 256-64 56x56 b32", { 32, 256, 56, 56 }, { 64, 256, 1, 1 }, 1, 0, 1 },
  { "conv2d depthwise 64 3x3 56x56 b32", { 32, 64, 56, 56 }, { 64, 1, 3, 3 }, 1, 1, 64 },
}

local function cases()
  local rows = {}
  local only = os.getenv("ONLY") -- a Lua pattern: only the rows whose names match it
  local function add(name, reps, fn, scope)
    if not only or name:match(only) then rows[#rows + 1] = { name, reps, fn, scope } end
  end
  sk.manual_seed(0)
  for _, c in ipairs(CONVS) do
    local x, w = sk.randn(c[2]), sk.randn(c[3])
    add(c[1] .. " fwd", 2, function() return sk.conv2d(x, w, nil, c[4], c[5], 1, c[6]) end, sk.no_grad)
    local xg, wg = x:clone():requires_grad_(), w:clone():requires_grad_()
    add(c[1] .. " fwd+bwd", 1, function()
      local y = sk.conv2d(xg, wg, nil, c[4], c[5], 1, c[6])
      y:backward(sk.ones_like(y))
      xg.grad, wg.grad = nil, nil
    end)
  end
  local stem = sk.randn({ 32, 64, 112, 112 })
  add("max_pool2d 3x3/2 [32,64,112,112]", 3, function() return sk.max_pool2d(stem, 3, 2, 1) end, sk.no_grad)
  local sg = stem:clone():requires_grad_()
  add("max_pool2d 3x3/2 fwd+bwd", 2, function()
    local y = sk.max_pool2d(sg, 3, 2, 1)
    y:backward(sk.ones_like(y))
    sg.grad = nil
  end)
  local tail, mid = sk.randn({ 32, 512, 7, 7 }), sk.randn({ 32, 64, 56, 56 })
  add("adaptive_avg_pool2d 1x1 [32,512,7,7]", 20, function() return sk.adaptive_avg_pool2d(tail, 1) end, sk.no_grad)
  add("adaptive_avg_pool2d 7x7 [32,64,56,56]", 5, function() return sk.adaptive_avg_pool2d(mid, 7) end, sk.no_grad)
  add("avg_pool2d 2x2/2 [32,64,56,56]", 5, function() return sk.avg_pool2d(mid, 2) end, sk.no_grad)
  local bx, bw, bb = sk.randn({ 32, 64, 56, 56 }), sk.ones(64), sk.zeros(64)
  local brm, brv = sk.zeros(64), sk.ones(64)
  add("batch_norm train [32,64,56,56]", 5, function() return sk.batch_norm(bx, bw, bb, brm, brv, true, 0.1, 1e-5, false) end, sk.no_grad)
  add("batch_norm eval [32,64,56,56]", 5, function() return sk.batch_norm(bx, bw, bb, brm, brv, false, 0.1, 1e-5, false) end, sk.no_grad)
  local bxg, bwg, bbg = bx:clone():requires_grad_(), bw:clone():requires_grad_(), bb:clone():requires_grad_()
  add("batch_norm train fwd+bwd", 3, function()
    local y = sk.batch_norm(bxg, bwg, bbg, brm, brv, true, 0.1, 1e-5, false)
    y:backward(sk.ones_like(y))
    bxg.grad, bwg.grad, bbg.grad = nil, nil, nil
  end)
  local gw, gb = sk.ones(64), sk.zeros(64)
  add("group_norm 32 groups [32,64,56,56]", 5, function() return sk.group_norm(bx, 32, gw, gb) end, sk.no_grad)
  local s128, s4096 = sk.randn({ 8, 4, 128, 128 }), sk.randn({ 256, 4096 })
  add("softmax last dim 128 [8,4,128,128]", 20, function() return sk.softmax(s128, -1) end)
  add("softmax last dim 4096 [256,4096]", 20, function() return sk.softmax(s4096, -1) end)
  add("log_softmax last dim 128 [8,4,128,128]", 20, function() return sk.log_softmax(s128, -1) end)
  add("log_softmax last dim 4096 [256,4096]", 20, function() return sk.log_softmax(s4096, -1) end)
  local eq, ek = sk.randn({ 8, 12, 128, 64 }), sk.randn({ 8, 12, 128, 64 })
  add("einsum bhqd,bhkd->bhqk [8,12,128,64]", 20, function() return sk.einsum("bhqd,bhkd->bhqk", eq, ek) end)
  local ca, cb, cc = sk.randn({ 512, 64 }), sk.randn({ 64, 512 }), sk.randn({ 512, 512 })
  add("einsum ij,jk,kl->il [512,64][64,512][512,512]", 10, function() return sk.einsum("ij,jk,kl->il", ca, cb, cc) end)
  local v = sk.randn({ 1 << 20 })
  add("gelu 1M", 20, function() return sk.gelu(v) end)
  add("gelu tanh 1M", 20, function() return sk.gelu(v, { approximate = "tanh" }) end)
  add("silu 1M", 20, function() return sk.silu(v) end)
  for _, d in ipairs({ 768, 128 }) do
    local x = sk.randn({ 8, 128, d })
    local g, b = sk.ones(d), sk.zeros(d)
    add("layer_norm over " .. d .. " [8,128," .. d .. "]", 20, function() return sk.layer_norm(x, { d }, g, b) end, sk.no_grad)
    local xg, gg, bg = x:clone():requires_grad_(), g:clone():requires_grad_(), b:clone():requires_grad_()
    add("layer_norm over " .. d .. " fwd+bwd", 10, function()
      local y = sk.layer_norm(xg, { d }, gg, bg)
      y:backward(sk.ones_like(y))
      xg.grad, gg.grad, bg.grad = nil, nil, nil
    end)
  end
  return rows
end

local threads = {}
for i = 1, #arg do threads[i] = tonumber(arg[i]) end
if #threads == 0 then threads = { 1, 2 } end
for _, n in ipairs(threads) do
  sk.set_num_threads(n)
  local rows = cases()
  local mine, peer = util.interleaved(rows, "bench/nn_peers.py", n, ROUNDS)
  print(string.format("\n%d thread%s — ms per call, best of %d rounds alternating with the peer's; torch / sk (> 1: sk faster)",
    n, n == 1 and "" or "s", ROUNDS))
  print(string.format("%-46s %10s %10s %9s", "case", "sk", "torch", "ratio"))
  for _, r in ipairs(rows) do
    local t, pt = mine[r[1]] * 1e3, peer[r[1]] and peer[r[1]][1] and peer[r[1]][1] / 1e6
    print(string.format("%-46s %10.3f %10s %9s", r[1], t, pt and string.format("%10.3f", pt) or "-",
      pt and string.format("%8.2fx", pt / t) or "-"))
  end
end
