-- bench/bench.lua — the foundation's benchmark table (run with `make bench`)
-- Figures drift 20–50 % between runs on these VMs: compare ratios within one run.
local sk = require "sk"
local blas = require "blas_direct"
local time = require("util").best

local rows = {}
local function row(name, value, unit, note) rows[#rows + 1] = string.format("%-44s %10.1f %-8s %s", name, value, unit, note or "") end

local a1, b1 = sk.tensor({1.0}), sk.tensor({2.0})
row("a + b, 1-element float32", time(200000, function() local _ = a1 + b1 end) * 1e9, "ns/call", "target < 400")
row("a:add_(b), 1-element float32", time(200000, function() a1:add_(b1) end) * 1e9, "ns/call")

local n = 16 * 1024 * 1024
local a, b, c = sk.rand(n), sk.rand(n), sk.empty({n})
local bytes = 3 * 4 * n
local t_out = time(10, function() sk.add(a, b, {out = c}) end)
row("sk.add(a, b, {out = c}), 16M float32", bytes / t_out / 1e9, "GB/s")
local t_fun = time(10, function() local _ = a + b end)
row("a + b, 16M float32 (reused blocks)", bytes / t_fun / 1e9, "GB/s")

local m = 1024
local x, y = sk.rand(m, m), sk.rand(m, m)
local flops = 2 * m * m * m
-- interleaved rounds, best of each, so drift hits both sides alike
local t_mm, t_dnnl, t_blas = math.huge, math.huge, math.huge
for _ = 1, 5 do
  t_mm = math.min(t_mm, time(5, function() local _ = sk.matmul(x, y) end, 1))
  t_dnnl = math.min(t_dnnl, blas.sgemm(m, 5, sk.get_num_threads(), "dnnl"))
  t_blas = math.min(t_blas, blas.sgemm(m, 5, sk.get_num_threads()))
end
sk.set_num_threads(sk.get_num_threads()) -- blas_direct set OpenMP's count: give sk's back
row("matmul 1024x1024 float32", flops / t_mm / 1e9, "GFLOP/s")
row("oneDNN sgemm 1024x1024 called directly", flops / t_dnnl / 1e9, "GFLOP/s")
row("OpenBLAS sgemm 1024x1024, its own threads", flops / t_blas / 1e9, "GFLOP/s")
row("matmul / direct oneDNN", 100 * t_dnnl / t_mm, "%", "target >= 90")

-- peak RSS of a loop making 2.4 GB of 4 MiB temporaries, each collector mode in its own lua5.4
for _, mode in ipairs { "generational", "incremental" } do
  local p = assert(io.popen('LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" lua5.4 bench/gc_loop.lua ' .. mode .. " 300 temps"))
  local peak, secs = p:read("a"):match("^(%d+)%s+(%S+)")
  p:close()
  row("peak RSS, 300 x two 4 MiB temporaries, " .. mode, tonumber(peak) / 1024, "MiB", string.format("%.2f s", tonumber(secs)))
end

print(string.format("sk bench — %d thread(s)", sk.get_num_threads()))
for _, r in ipairs(rows) do print(r) end
