-- bench/compare.lua — sk against PyTorch and NumPy on this machine, 1 and 2 threads
-- The peers run in /usr/bin/python3 (Debian's python3-torch and python3-numpy,
-- optional); each row prints ns per call and sk's speed relative to each peer
-- (> 1 means sk is faster). Cases whose op sk lacks are marked "n/a".
local sk = require "sk"
local util = require "util"
local function best(reps, fn) return util.best(reps, fn) * 1e9 end

local function cases()
  local c, order = {}, {}
  local function add(name, reps, fn) c[name] = { reps, fn }; order[#order + 1] = name end
  local a1, b1 = sk.ones(1), sk.ones(1)
  add("add 1-element functional", 200000, function() return a1 + b1 end)
  add("add_ 1-element in-place", 200000, function() return a1:add_(b1) end)
  for _, size in ipairs { { 1 << 20, "1M", 200 }, { 1 << 24, "16M", 10 } } do
    local n, name, reps = size[1], size[2], size[3]
    local a, b, o = sk.rand(n), sk.rand(n), sk.empty({n})
    add("add " .. name .. " functional", reps, function() return a + b end)
    add("add " .. name .. " out=", reps, function() return sk.add(a, b, {out = o}) end)
    add("add_ " .. name .. " in-place", reps, function() return a:add_(b) end)
  end
  local x = sk.rand(1 << 24)
  for _, f in ipairs { "exp", "tanh", "sigmoid" } do add(f .. " 16M", 10, function() return sk[f](x) end) end
  local m = sk.rand(4096, 4096)
  add("sum last dim 4096x4096", 10, function() return m:sum(-1) end)
  add("mean last dim 4096x4096", 10, function() return m:mean(-1) end)
  add("amax last dim 4096x4096", 10, function() return m:amax(-1) end)
  add("softmax last dim 4096x4096", 10, function() return sk.softmax(m, -1) end)
  local p, q = sk.rand(1024, 1024), sk.rand(1024, 1024)
  add("matmul 1024x1024", 10, function() return sk.matmul(p, q) end)
  local bp, bq = sk.rand(256, 64, 64), sk.rand(256, 64, 64)
  add("bmm 256x64x64", 50, function() return sk.bmm(bp, bq) end)
  local s = sk.rand(1 << 20)
  add("sort 1M float32", 10, function() return sk.sort(s) end)
  local rows = sk.rand(1 << 20, 8)
  local idx = sk.randint(1 << 20, {1 << 20})
  add("index_select 1M rows of 8", 10, function() return sk.index_select(rows, 0, idx) end)
  local gidx = sk.randint(8, {1 << 20, 8})
  add("gather 1M rows of 8", 10, function() return sk.gather(rows, 1, gidx) end)
  return c, order
end

local function peers(threads)
  local out = {}
  for name, v in pairs(util.peers("bench/compare_peers.py", threads)) do out[name] = { torch = v[1], numpy = v[2] } end
  return out
end

local function ratio(peer, mine) return peer and mine and string.format("%6.2fx", peer / mine) or "     -" end

for _, threads in ipairs { 1, 2 } do
  sk.set_num_threads(threads)
  local c, order = cases()
  local peer = peers(threads)
  print(string.format("\n%d thread%s — ns per call; ratios are peer time / sk time (> 1: sk faster)", threads, threads == 1 and "" or "s"))
  print(string.format("%-30s %14s %14s %14s %8s %8s", "case", "sk", "torch", "numpy", "vs torch", "vs numpy"))
  for _, name in ipairs(order) do
    local reps, fn = c[name][1], c[name][2]
    local ok, t = pcall(best, reps, fn)
    local pr = peer[name] or {}
    local fmt = function(v) return v and string.format("%14.1f", v) or string.format("%14s", "-") end
    print(string.format("%-30s %14s %s %s %8s %8s", name, ok and string.format("%14.1f", t) or "n/a", fmt(pr.torch), fmt(pr.numpy),
      ok and ratio(pr.torch, t) or "-", ok and ratio(pr.numpy, t) or "-"))
    collectgarbage()
  end
end
sk.set_num_threads(2)
