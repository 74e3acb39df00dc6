-- examples/extending/backend_lua.lua — a new backend "npu" from Lua: one kernel of its own
-- (add.out), DefaultBackend for the rest of add, then the CPU fallback for everything else.
-- Run from the repository root:
--   LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" lua5.4 examples/extending/backend_lua.lua
local sk = require "sk"

local function assert_same(got, want)
  assert(#got == #want, "length differs")
  for i = 1, #want do
    assert(got[i] == want[i], string.format("element %d: got %s, want %s", i, got[i], want[i]))
  end
end

-- 1. the backend: a device type and a dispatch key named "npu". Its tensors live in host
--    memory; empty, fill_ and copies to and from the CPU come with it.
sk.backends.register("npu")

-- 2. one kernel of its own, in Lua: add.out. `out` arrives sized (DefaultBackend allocated it,
--    or it is self for add_); the kernel writes it and returns it.
local lib = sk.library("npu_kernels")
local add_calls = 0
lib:impl("aten::add.out", "npu", function(self, other, alpha, out)
  add_calls = add_calls + 1
  local a, b = self:cpu():totable(), other:cpu():totable() -- 1-d, same length, in this example
  local r = {}
  for i = 1, #a do r[i] = a[i] + alpha * b[i] end
  out:copy_(sk.tensor(r, {dtype = out:dtype()}))
  return out
end)

local a = sk.tensor({1.0, 2.0, 3.0}):to("npu")
local b = sk.ones(3, {device = "npu"})
print("a on", a:device(), "b on", b:device())

-- functional and in-place add reach add.out through DefaultBackend
local c = sk.add(a, b, {alpha = 10})
print("sk.add(a, b, {alpha = 10}) =", c)
assert(c:device() == "npu:0")
assert_same(c:cpu():totable(), {11, 12, 13})
assert(a:add_(b) == a)
assert_same(a:cpu():totable(), {2, 3, 4})
assert(add_calls == 2)
assert(sk.dispatch_table("aten::add.Tensor").npu.source == "DefaultBackend")

-- 3. any other op has no kernel on "npu", and says so
local ok, err = pcall(sk.mul, a, b)
print("before the fallback:", err)
assert(not ok and err:find("no kernel for 'aten::mul.out' on backend 'npu'", 1, true))

-- 4. the boxed CPU fallback: copy the arguments to the CPU, run the CPU kernel, copy back
lib:fallback("npu", sk.cpu_fallback)
sk.fallback.reset("npu")
local p = sk.mul(a, b)
local s = sk.sum(a)
local mm = sk.matmul(a:view(1, 3), b:view(3, 1)) -- view is DefaultBackend: no fallback needed
print("mul:", p, "sum:", s:item(), "matmul:", mm:item())
assert(p:device() == "npu:0" and mm:device() == "npu:0")
assert_same(p:cpu():totable(), {2, 3, 4})
assert(s:item() == 2 + 3 + 4 and mm:item() == 2 + 3 + 4)

local counts = sk.fallback.counts("npu")
for op, n in pairs(counts) do print("fell back:", op, n) end
assert(counts["aten::mul.out"] == 1 and counts["aten::sum.IntList_out"] == 1 and counts["aten::mm.out"] == 1)
assert(counts["aten::add.out"] == nil) -- the backend's own kernel wins over the fallback

-- 5. observability and policy: a log hook, then a deny rule
local seen = {}
sk.fallback.set_log(function(op, key) seen[#seen + 1] = op .. " on " .. key end)
sk.fallback.deny("npu", "aten::mul.out")
ok, err = pcall(sk.mul, a, b)
print("denied:", err)
assert(not ok and err:find("'aten::mul.out' may not run through the CPU fallback on 'npu' (denied)", 1, true))
sk.fallback.clear("npu", "aten::mul.out")
sk.mul(a, b)
sk.fallback.set_log(nil)
print("log hook saw:", table.concat(seen, ", "))
assert(#seen == 1 and seen[1] == "aten::mul.out on npu")

-- an allow rule turns the policy into an allow list
sk.fallback.allow("npu", "aten::mul.out")
ok, err = pcall(sk.sum, a)
assert(not ok and err:find("(not in the allow list)", 1, true))
sk.fallback.clear("npu", "aten::mul.out")
assert(sk.sum(a):item() == 9)

print("stats:", sk.backends.stats("npu").allocated, "bytes allocated on npu")

-- 6. clean up: the registrations first, then the tensors, then the backend
ok, err = pcall(sk.backends.unregister, "npu")
print("too early:", err)
assert(not ok)
lib:close()
a, b, c, p, s, mm = nil, nil, nil, nil, nil, nil
collectgarbage()
sk.backends.unregister("npu")
assert(not pcall(sk.zeros, {1}, {device = "npu"}))
print("npu unregistered")
