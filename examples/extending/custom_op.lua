-- examples/extending/custom_op.lua — a new op defined from Lua: schema, CPU kernel, meta function.
-- Run from the repository root:
--   LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" lua5.4 examples/extending/custom_op.lua
local sk = require "sk"

-- softplus(x) = log(1 + exp(beta * x)) / beta, in plain Lua, to check against
local function softplus_ref(values, beta)
  local out = {}
  for i, v in ipairs(values) do out[i] = math.log(1 + math.exp(beta * v)) / beta end
  return out
end

local function assert_close(got, want)
  assert(#got == #want, "length differs")
  for i = 1, #want do
    assert(math.abs(got[i] - want[i]) <= 1e-5 * math.max(1, math.abs(want[i])),
           string.format("element %d: got %.7g, want %.7g", i, got[i], want[i]))
  end
end

local lib = sk.library("myops")

-- 1. the op: PyTorch's schema language; `beta` is optional (default 1)
local name = lib:define("softplus(Tensor self, float beta=1) -> Tensor")
print("defined", name)                                    --> myops::softplus

-- 2. a CPU kernel: receives the arguments in schema order (defaults filled in),
--    returns the schema's results; it may call any sk op
lib:impl("softplus", "CPU", function(self, beta)
  return ((self * beta):exp() + 1):log() / beta
end)

-- 3. a meta function: declares output 0 (0-based) from the inputs' shapes and dtypes
lib:meta("softplus", function(m, self, beta)
  m:set_output(0, self:shape(), self:dtype())
end)

-- 4. call it like a built-in: by position or with a trailing options table
local x = sk.tensor({-2.0, 0.0, 1.0, 3.0})
local y1 = sk.ops.myops.softplus(x)
local y2 = sk.ops.myops.softplus(x, {beta = 2})
print("softplus(x)           =", y1)
print("softplus(x, beta = 2) =", y2)
assert_close(y1:totable(), softplus_ref({-2, 0, 1, 3}, 1))
assert_close(y2:totable(), softplus_ref({-2, 0, 1, 3}, 2))
assert_close(sk.ops.myops.softplus(x, 2):totable(), softplus_ref({-2, 0, 1, 3}, 2))

-- 5. Meta tensors go through the meta function: shapes and dtypes, no data
local m = sk.ops.myops.softplus(sk.empty({128, 64}, {device = "meta"}), {beta = 2})
print("on meta:", m:device(), table.concat(m:shape(), "x"), m:dtype())
assert(m:device() == "meta" and m:shape()[1] == 128 and m:shape()[2] == 64 and m:dtype() == "float32")

-- 6. the dispatch table shows where each key's kernel comes from
local tbl = sk.dispatch_table("myops::softplus")
print("dispatch: CPU", tbl.CPU.source, tbl.CPU.origin, "| Meta", tbl.Meta.source)
assert(tbl.CPU.source == "direct" and tbl.Meta.source == "direct")

-- 7. close: the op and its kernels are gone
lib:close()
assert(not pcall(function() return sk.ops.myops.softplus end))
print("closed: sk.ops.myops.softplus no longer exists")
