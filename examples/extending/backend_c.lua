-- examples/extending/backend_c.lua — the out-of-tree C backend "cdev"
-- (examples/backend_c/sk_cbackend.c, built by `make build/examples/sk_cbackend.so`).
-- Run from the repository root:
--   LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" lua5.4 examples/extending/backend_c.lua
-- A backend .so loads once per process: a second sk.load_backend of it raises
-- "backend 'cdev' is already registered".
local sk = require "sk"

local function assert_same(got, want)
  assert(#got == #want, "length differs")
  for i = 1, #want do
    assert(got[i] == want[i], string.format("element %d: got %s, want %s", i, got[i], want[i]))
  end
end

sk.load_backend("build/examples/sk_cbackend.so") -- runs its sk_backend_init()

-- factories allocate through its empty.memory_format kernel, `to` copies through its hooks
local a = sk.tensor({1.0, 2.0, 3.0}):to("cdev")
local b = sk.ones(3, {device = "cdev"})
print("a on", a:device(), a:dtype())
assert(a:device() == "cdev:0")

-- add: functional and in-place through DefaultBackend, into its C add.out kernel
local c = sk.add(a, b, {alpha = 2})
print("sk.add(a, b, {alpha = 2}) =", c)
assert(c:device() == "cdev:0")
assert_same(c:totable(), {3, 4, 5})
local v = a:version()
assert(a:add_(b) == a and a:version() > v)
assert_same(a:totable(), {2, 3, 4})
local add_out = sk.dispatch_table("aten::add.out").cdev
print("add.out on cdev:", add_out.source, add_out.origin, add_out.boxed and "boxed" or "unboxed")
assert(sk.dispatch_table("aten::add.Tensor").cdev.source == "DefaultBackend")

-- mul: its boxed mul.out kernel hands the call to the CPU fallback explicitly
sk.fallback.reset("cdev")
local p = sk.mul(a, c)
print("sk.mul(a, c) =", p)
assert(p:device() == "cdev:0")
assert_same(p:totable(), {6, 12, 20})
assert(sk.fallback.counts("cdev")["aten::mul.out"] == 1)

-- other ops have no kernel (and cdev registers no fallback)
local ok, err = pcall(sk.exp, a)
print("exp:", err)
assert(not ok and err:find("no kernel for 'aten::exp.out' on backend 'cdev'", 1, true))

-- its add.out is float32 only, and says so
ok, err = pcall(sk.add, a:to("float64"), a:to("float64"))
print("float64:", err)
assert(not ok and err:find("cdev add.out supports float32 tensors only", 1, true))

-- loading it again in the same process is refused
ok, err = pcall(sk.load_backend, "build/examples/sk_cbackend.so")
assert(not ok and err:find("backend 'cdev' is already registered", 1, true))
