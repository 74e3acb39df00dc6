-- examples/extending/structured_op.lua — a structured op from Lua: one meta function and one
-- CPU impl give the functional, in-place and out variants, Meta and DefaultBackend.
-- Run from the repository root:
--   LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" lua5.4 examples/extending/structured_op.lua
local sk = require "sk"

-- clip(x, lo, hi) in plain Lua, to check against
local function clip_ref(values, lo, hi)
  local out = {}
  for i, v in ipairs(values) do out[i] = math.min(math.max(v, lo), hi) end
  return out
end

local function assert_same(got, want)
  assert(#got == #want, "length differs")
  for i = 1, #want do
    assert(got[i] == want[i], string.format("element %d: got %s, want %s", i, got[i], want[i]))
  end
end

local lib = sk.library("ex")

lib:structured {
  -- the out op; `clip` and `clip_` are derived from it
  out = "clip.out(Tensor self, float lo=-1, float hi=1, *, Tensor(a!) out) -> Tensor(a!)",
  -- checks, then declares each output (0-based): shape, dtype[, strides]
  meta = function(m, self, lo, hi)
    if lo > hi then error(string.format("clip: lo (%g) is greater than hi (%g)", lo, hi)) end
    m:set_output(0, self:shape(), self:dtype())
  end,
  -- the kernel per backend key: writes the outputs (given first), returns nothing
  impl = {
    CPU = function(out, self, lo, hi)
      out:copy_(self:clamp(lo, hi))
    end,
  },
}

local values = {-3.0, -0.5, 0.25, 2.0}
local x = sk.tensor(values)

-- functional: allocates its result
local y = sk.ops.ex.clip(x)
print("clip(x)            =", y)
assert_same(y:totable(), clip_ref(values, -1, 1))
assert_same(sk.ops.ex.clip(x, {lo = 0, hi = 0.5}):totable(), clip_ref(values, 0, 0.5))

-- in-place: writes self, returns it, bumps its version counter once
local z = x:clone()
local v0 = z:version()
assert(sk.ops.ex.clip_(z, {lo = -2, hi = 1}) == z)
print("clip_(z, -2, 1)    =", z, "version", v0, "->", z:version())
assert_same(z:totable(), clip_ref(values, -2, 1))
assert(z:version() == v0 + 1)

-- out: an out with 0 elements is resized to the result's shape ...
local out = sk.empty({0})
assert(sk.ops.ex.clip(x, {out = out}) == out)
print("clip(x, {out = e}) =", out)
assert_same(out:totable(), clip_ref(values, -1, 1))
-- ... a non-empty out of another shape (or dtype) is an error, and stays untouched
local wrong = sk.zeros({3})
local ok, err = pcall(sk.ops.ex.clip, x, {out = wrong})
print("wrong out:", err)
assert(not ok and err:find("argument 'out' has shape [3], but the result has shape [4]", 1, true))
assert_same(wrong:totable(), {0, 0, 0})

-- an error raised by the meta function names the op
ok, err = pcall(sk.ops.ex.clip, x, {lo = 1, hi = 0})
print("bad bounds:", err)
assert(not ok and err:find("lo (1) is greater than hi (0)", 1, true))

-- Meta for free: the meta function alone runs on meta tensors, for all three variants
local mx = sk.empty({8, 3}, {device = "meta"})
local my = sk.ops.ex.clip(mx)
print("on meta:", my:device(), table.concat(my:shape(), "x"), my:dtype())
assert(my:device() == "meta" and my:shape()[1] == 8 and my:shape()[2] == 3)
assert(sk.ops.ex.clip_(mx) == mx)

local tbl = sk.dispatch_table("ex::clip")
print("dispatch of ex::clip: CPU", tbl.CPU.source, "| Meta", tbl.Meta.source, "| CUDA", tbl.CUDA.source)
assert(tbl.CPU.source == "direct" and tbl.Meta.source == "direct" and tbl.CUDA.source == "DefaultBackend")

lib:close()
