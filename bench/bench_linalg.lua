-- bench/bench_linalg.lua — sk.linalg against PyTorch 1.13, same machine and threads, in one run:
-- rounds of sk's rows alternate with runs of bench/linalg_peers.py (the same cases on the same
-- matrices: sk saves its inputs to a temporary .npz the peer loads; the time of an iterative
-- driver, SVD's or eigh's, depends on the matrix and not only on its shape), best of each. float32,
-- as PyTorch's default dtype: one 1024² matrix (solve with one and with 1024 right-hand sides, inv,
-- cholesky, det, qr, svd, eigh) and a batch of 4096 small 8x8 ones.
-- `lua5.4 bench/bench_linalg.lua [threads...]` (default 1 and 2); rows print torch / sk (> 1: sk faster).
-- ROUNDS sets the rounds (default 3); ONLY, a Lua pattern, keeps the rows whose names match it.
local sk = require "sk"
local util = require "util"
local ROUNDS = tonumber(os.getenv("ROUNDS") or "3")

local INPUTS = os.tmpname() .. ".npz"

local function cases()
  local rows = {}
  local only = os.getenv("ONLY")
  local function add(name, reps, fn)
    if not only or name:match(only) then rows[#rows + 1] = { name, reps, fn, sk.no_grad } end
  end
  sk.manual_seed(0)
  local n = 1024
  local a = sk.randn({ n, n }) + sk.eye(n) * n -- well conditioned
  local spd = sk.matmul(a, a:t())
  local b1, bn = sk.randn({ n, 1 }), sk.randn({ n, n })
  add("linalg.solve 1024² b=1024x1", 3, function() return sk.linalg.solve(a, b1) end)
  add("linalg.solve 1024² b=1024²", 2, function() return sk.linalg.solve(a, bn) end)
  add("linalg.inv 1024²", 2, function() return sk.linalg.inv(a) end)
  add("linalg.cholesky 1024²", 3, function() return sk.linalg.cholesky(spd) end)
  add("linalg.det 1024²", 3, function() return sk.linalg.det(a) end)
  add("linalg.qr 1024²", 1, function() return sk.linalg.qr(a) end)
  add("linalg.svd 1024²", 1, function() return sk.linalg.svd(a) end)
  add("linalg.svdvals 1024²", 1, function() return sk.linalg.svdvals(a) end)
  add("linalg.eigh 1024²", 1, function() return sk.linalg.eigh(spd) end)
  local sa = sk.randn({ 4096, 8, 8 }) + sk.eye(8) * 8
  local sb = sk.randn({ 4096, 8, 1 })
  sk.save({ a = a, spd = spd, b1 = b1, bn = bn, sa = sa, sb = sb }, INPUTS)
  add("linalg.solve 4096 x 8x8", 5, function() return sk.linalg.solve(sa, sb) end)
  add("linalg.inv 4096 x 8x8", 5, function() return sk.linalg.inv(sa) end)
  return rows
end

local threads = {}
for i = 1, #arg do threads[i] = tonumber(arg[i]) end
if #threads == 0 then threads = { 1, 2 } end
for _, t in ipairs(threads) do
  sk.set_num_threads(t)
  local rows = cases()
  local mine, peer = util.interleaved(rows, "bench/linalg_peers.py", t, ROUNDS, INPUTS)
  print(string.format("\n%d thread%s — ms per call, best of %d rounds alternating with the peer's; torch / sk (> 1: sk faster)",
    t, t == 1 and "" or "s", ROUNDS))
  print(string.format("%-34s %10s %10s %9s", "case", "sk", "torch", "ratio"))
  for _, r in ipairs(rows) do
    local ms, pt = mine[r[1]] * 1e3, peer[r[1]] and peer[r[1]][1] and peer[r[1]][1] / 1e6
    print(string.format("%-34s %10.3f %10s %9s", r[1], ms, pt and string.format("%10.3f", pt) or "-",
      pt and string.format("%8.2fx", pt / ms) or "-"))
  end
end
os.remove(INPUTS)
os.remove(INPUTS:sub(1, -5)) -- the name os.tmpname made
