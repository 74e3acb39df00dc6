-- bench/bench_cuda.lua — the CUDA backend against the device's limits (needs a GPU)
-- Elementwise add against device-to-device copy bandwidth, matmul against cuBLAS
-- called directly (build/cublas_direct), and the per-call cost of a small op.
local sk = require "sk"
local now = require("util").now
local ok, why = sk.cuda.is_available()
if not ok then print("bench_cuda: skipped — " .. why) return end

local function best(reps, fn)
  fn(); sk.cuda.synchronize()
  local t = math.huge
  for _ = 1, 5 do
    local t0 = now()
    for _ = 1, reps do fn() end
    sk.cuda.synchronize()
    t = math.min(t, (now() - t0) / reps)
  end
  return t
end

local failed = false
local function row(name, v, unit, note) print(string.format("%-46s %10.2f %-8s %s", name, v, unit, note or "")) end

local n = 256 * 1024 * 1024
local a, b, c = sk.rand(n, {device = "cuda"}), sk.rand(n, {device = "cuda"}), sk.empty({n}, {device = "cuda"})
local copy = best(10, function() c:copy_(a) end)
local copy_gbs = 2 * 4 * n / copy / 1e9
row("device copy, 256M float32", copy_gbs, "GB/s")
local out = best(10, function() sk.add(a, b, {out = c}) end)
row("add out=, 256M float32", 3 * 4 * n / out / 1e9, "GB/s", string.format("%.0f%% of copy (target >= 85)", 100 * 3 * 4 * n / out / 1e9 / copy_gbs))
local fun = best(10, function() local _ = a + b end)
row("a + b, 256M float32", 3 * 4 * n / fun / 1e9, "GB/s", string.format("%.0f%% of copy", 100 * 3 * 4 * n / fun / 1e9 / copy_gbs))
local sum = best(10, function() local _ = a:sum() end)
row("full sum, 256M float32", 4 * n / sum / 1e9, "GB/s", string.format("%.0f%% of copy (target >= 80)", 100 * 4 * n / sum / 1e9 / copy_gbs))
a, b, c = nil, nil, nil
collectgarbage()
sk.cuda.empty_cache()

local m = 8192
for _, dt in ipairs { "float32", "float16", "bfloat16" } do
  local x, y = sk.rand(m, m, {device = "cuda"}):to(dt), sk.rand(m, m, {device = "cuda"}):to(dt)
  local t = best(3, function() local _ = sk.matmul(x, y) end)
  local p = assert(io.popen("build/cublas_direct " .. m .. " " .. dt))
  local direct = tonumber(p:read("l"))
  p:close()
  local mine = 2 * m ^ 3 / t / 1e12
  if direct then
    row("matmul 8192^3 " .. dt, mine, "TFLOP/s", string.format("cuBLAS direct %.2f (%.0f%%, target >= 95)", direct, 100 * mine / direct))
  else -- no baseline is a failed row, never a dropped one
    row("matmul 8192^3 " .. dt, mine, "TFLOP/s", "FAILED: build/cublas_direct gave no figure (see its error above)")
    failed = true
  end
end

local s1, s2 = sk.ones(1, {device = "cuda"}), sk.ones(1, {device = "cuda"})
local small = best(10000, function() local _ = s1 + s2 end)
row("a + b, 1-element, from Lua", small * 1e6, "us/call", "target < 10")
if failed then os.exit(1) end
