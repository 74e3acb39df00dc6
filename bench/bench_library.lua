-- bench/bench_library.lua — the cost of extending sk from Lua (run with `make bench`)
-- Figures drift between runs on these VMs: compare ratios within one run.
local sk = require "sk"
local time = require("util").best

local function row(name, value, unit, note)
  print(string.format("%-52s %10.1f %-8s %s", name, value, unit, note or ""))
end

-- A Lua-defined structured op (Lua meta + Lua CPU impl) against the built-in of the same shape.
local lib = sk.library("bench")
lib:structured {
  out = "myadd.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
  meta = function(m, self, other) m:set_output(0, self:shape(), self:dtype()) end,
  impl = { CPU = function(out, self, other) sk.add(self, other, {out = out}) end },
}
lib:define("plain(Tensor self, Tensor other) -> Tensor")
lib:impl("plain", "CPU", function(a, b) return a + b end)
local a, b = sk.tensor({1.0}), sk.tensor({2.0})
local myadd, plain, add = sk.ops.bench.myadd, sk.ops.bench.plain, sk.add
local builtin = time(200000, function() local _ = add(a, b) end)
local structured = time(200000, function() local _ = myadd(a, b) end)
local kernel = time(200000, function() local _ = plain(a, b) end)
row("built-in sk.add, 1-element", builtin * 1e9, "ns/call")
row("Lua structured op (Lua meta + Lua impl), 1-element", structured * 1e9, "ns/call", "goal <= 1500")
row("Lua kernel for a defined op, 1-element", kernel * 1e9, "ns/call")
lib:close()

-- The CPU fallback on a host-memory backend against the CPU kernel itself.
sk.backends.register("benchdev")
local fb = sk.library("bench_fallback")
fb:fallback("benchdev", sk.cpu_fallback)
for _, n in ipairs { 1, 1000000 } do
  local x, y = sk.rand(n), sk.rand(n)
  local xd, yd = x:to("benchdev"), y:to("benchdev")
  local reps = n == 1 and 100000 or 50
  local direct = time(reps, function() local _ = x + y end)
  local fallback = time(reps, function() local _ = xd + yd end)
  local label = n == 1 and "1-element" or "1M-element"
  row("add on CPU, " .. label, direct * 1e9, "ns/call")
  row("add through the CPU fallback, " .. label, fallback * 1e9, "ns/call", string.format("(%.1fx)", fallback / direct))
end
fb:close()
collectgarbage()
collectgarbage()
sk.backends.unregister("benchdev")
