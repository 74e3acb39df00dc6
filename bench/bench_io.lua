-- bench/bench_io.lua — sk.save / sk.load of a 1 GiB .safetensors file against the system's
-- own copies on the same disk, in one run: `cat file > /dev/null` (reading from the page
-- cache) for sk.load, `dd` writing the same bytes for sk.save; and the O(1) mapped load.
--   LUA_PATH="lua/?.lua;lua/?/init.lua;bench/?.lua;;" LUA_CPATH="build/?.so;;" lua5.4 bench/bench_io.lua [MiB] [dir]
-- Each figure is the best of ROUNDS (default 5); the file is written once before timing, so
-- every read finds it in the page cache, as a model loaded twice does.
package.path = "lua/?.lua;lua/?/init.lua;bench/?.lua;" .. package.path
local sk = require "sk"
local now = require("bench.util").now
local MIB = tonumber(arg[1]) or 1024
local DIR = arg[2] or os.getenv("TMPDIR") or "/tmp"
local ROUNDS = tonumber(os.getenv("ROUNDS")) or 5
local path, copy = DIR .. "/sk_bench_io.safetensors", DIR .. "/sk_bench_io.dd"

-- 16 float32 tensors of MIB/16 MiB each, as a model's weights
local tensors = {}
for i = 1, 16 do tensors["layer." .. i .. ".weight"] = sk.full({ MIB * 262144 // 16 }, i, { dtype = "float32" }) end

local function best(fn)
  local t = math.huge
  for _ = 1, ROUNDS do
    collectgarbage()
    local t0 = now()
    fn()
    t = math.min(t, now() - t0)
  end
  return t
end
local function sh(cmd) assert(os.execute(cmd), cmd) end

local save = best(function() sk.save(tensors, path) end)
local size = io.open(path, "rb"):seek("end")
local dd = best(function() sh(string.format("dd if=%s of=%s bs=4M status=none", path, copy)) end)
local cat = best(function() sh(string.format("cat %s > /dev/null", path)) end)
local load = best(function() local t = sk.load(path); assert(t["layer.16.weight"]:numel() > 0) end)
local mapped = best(function() local t = sk.load(path, { mmap = true }); assert(t["layer.16.weight"]:numel() > 0) end)
local check = sk.load(path, { mmap = true })
assert(check["layer.7.weight"][{ 5 }]:item() == 7, "the mapped tensors hold what was saved")
os.remove(path)
os.remove(copy)

local gib = size / 2 ^ 30
print(string.format("file: %.2f GiB in %s, best of %d", gib, DIR, ROUNDS))
print(string.format("%-34s %9s %9s %8s", "case", "sk ms", "system ms", "sk/sys"))
print(string.format("%-34s %9.1f %9.1f %7.0f%%", "sk.load (read) vs cat > /dev/null", load * 1e3, cat * 1e3, cat / load * 100))
print(string.format("%-34s %9.1f %9.1f %7.0f%%", "sk.save vs dd of the file", save * 1e3, dd * 1e3, dd / save * 100))
print(string.format("%-34s %9.3f %9s", "sk.load {mmap = true}", mapped * 1e3, "-"))
