-- spec/lua_indexing_spec.lua — t[i], t[{...}], t[mask], t[idx] and assignment through them (lua/sk/indexing.lua).
-- Expected values are read off Lua tables by hand or with plain loops.
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local DTYPES = { "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" }

-- x = arange(12) as [3, 4] and the same as a Lua table
local function x34() return sk.arange(12):view(3, 4) end
local X = { { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 9, 10, 11 } }

-- the columns cols (0-based list) of rows rows of X
local function pick(rows, cols)
  local t = {}
  for a, i in ipairs(rows) do
    t[a] = {}
    for b, j in ipairs(cols) do t[a][b] = X[i + 1][j + 1] end
  end
  return t
end

describe("t[i]", function()
  it("selects along dim 0, counting negatives from the end, as a view", function()
    local x = x34()
    assert.same(X[2], x[1]:totable())
    assert.same(X[3], x[-1]:totable())
    assert.same(X[1], x[-3]:totable())
    assert.equal(5, x[1][1]:item())
    assert.equal(3, x[0][-1]:item())
    assert.is_true(x[2]:shares_storage(x))
    x[2][0]:fill_(-1)
    assert.equal(-1, x[{ 2, 0 }]:item())
    assert.equal(2.0, T({ 1.5, 2.0 })[1.0]:item())
  end)
  it("reads non-contiguous and empty tensors, Meta tensors, every dtype", function()
    local x = x34()
    assert.same({ 1, 5, 9 }, x:t()[1]:totable())
    assert.same({ 0 }, sk.empty({ 2, 0 })[1]:shape())
    local m = sk.empty({ 3, 4 }, { device = "meta" })[1]
    assert.equal("meta", m:device())
    assert.same({ 4 }, m:shape())
    for _, dt in ipairs(DTYPES) do
      local r = T({ 0, 1 }, { dtype = dt })[1]
      assert.equal(dt, r:dtype())
      assert.same(T(1, { dtype = dt }):item(), r:item())
    end
  end)
  it("reports a bad index", function()
    local x = x34()
    assert.matches("select%(%): index 3 out of range for tensor of size %[3, 4%] at dimension 0", h.err(function() return x[3] end))
    assert.matches("select%(%) cannot be applied to a 0%-dim tensor", h.err(function() return T(1)[0] end))
    assert.matches("sk: index 1.5 is not an integer", h.err(function() return x[1.5] end))
    assert.matches("sk: a tensor index must be an integer, a table or a tensor, got boolean", h.err(function() return x[true] end))
  end)
end)

describe("t[{...}]", function()
  it("selects several dims and slices with Python's start:stop:step", function()
    local x = x34()
    assert.equal(6, x[{ 1, 2 }]:item())
    assert.equal(11, x[{ -1, -1 }]:item())
    assert.same(X[2], x[{ 1 }]:totable())
    assert.same(pick({ 1, 2 }, { 0, 1, 2, 3 }), x[{ { 1, 3 } }]:totable())
    assert.same(pick({ 0, 1, 2 }, { 0, 2 }), x[{ {}, { 0, -1, 2 } }]:totable())
    assert.same(pick({ 1, 2 }, { 1, 2, 3 }), x[{ { 1 }, { 1 } }]:totable())
    assert.same(pick({ 0, 1 }, { 3 }), x[{ { nil, -1 }, { -1 } }]:totable())
    assert.same(pick({ 0, 2 }, { 1 }), x[{ { 0, 3, 2 }, { 1, 2 } }]:totable())
    assert.same({ 1, 5, 9 }, x[{ {}, 1 }]:totable())
    assert.same({ 0, 4 }, x[{ { 2, 1 } }]:shape())
    assert.same({ 3, 0 }, x[{ {}, { 10, 20 } }]:shape())
    assert.same(X, x[{}]:totable())
    assert.is_true(x[{ {}, { 1, 3 } }]:shares_storage(x))
  end)
  it("reads non-contiguous tensors and Meta tensors", function()
    local x = x34():t()
    assert.same({ { 1, 5 }, { 2, 6 } }, x[{ { 1, 3 }, { 0, 2 } }]:totable())
    assert.same({ 3, 7, 11 }, x[{ -1 }]:totable())
    local m = sk.empty({ 3, 4 }, { device = "meta" })[{ { 1, 3 }, 2 }]
    assert.equal("meta", m:device())
    assert.same({ 2 }, m:shape())
  end)
  it("takes tensors as advanced indices, placed as PyTorch places them", function()
    local x = x34()
    assert.same(pick({ 0, 1, 2 }, { 3, 0 }), x[{ {}, T({ 3, 0 }) }]:totable())
    assert.same({ 1, 11 }, x[{ T({ 0, 2 }), T({ 1, 3 }) }]:totable())
    assert.same({ { 1, 3 }, { 9, 11 } }, x[{ T({ { 0 }, { 2 } }), T({ 1, 3 }) }]:totable())
    assert.same({ 3, 9 }, x[{ T({ 0, 2 }), T({ 3, 1 }) }]:totable())
    local y = sk.arange(24):view(2, 3, 4)
    -- adjacent tensor entries stay in place: [2, 2] = y[:, [0, 2], [1, 3]]
    assert.same({ { 1, 11 }, { 13, 23 } }, y[{ {}, T({ 0, 2 }), T({ 1, 3 }) }]:totable())
    -- separated ones go first: [2, 3] = y[[0, 1], :, [1, 3]]
    assert.same({ { 1, 5, 9 }, { 15, 19, 23 } }, y[{ T({ 0, 1 }), {}, T({ 1, 3 }) }]:totable())
    -- an integer between two tensors leaves them adjacent
    assert.same({ 9, 23 }, y[{ T({ 0, 1 }), -1, T({ 1, 3 }) }]:totable())
    -- a bool mask inside the table
    assert.same({ { 4, 6 }, { 16, 18 } }, y[{ {}, 1, T({ true, false, true, false }) }]:totable())
    local m34 = T({ { true, false, false, false }, { false, false, true, false }, { false, false, false, true } })
    assert.same({ { 0, 6, 11 }, { 12, 18, 23 } }, y[{ {}, m34 }]:totable())
    assert.matches("The shape of the mask %[2, 3%] at index 0 does not match the shape of the indexed tensor %[2, 3, 4%] at index 1",
      h.err(function() return y[{ {}, T({ { true, false, true }, { false, true, false } }) }] end))
    assert.same({ 0, 3 }, sk.empty({ 2, 3 })[{ T({}, { dtype = "int64" }), {} }]:shape())
  end)
  it("reports too many indices and bad entries", function()
    local x = x34()
    assert.matches("sk: too many indices for tensor of dimension 2 %(got 3%)", h.err(function() return x[{ 0, 0, 0 }] end))
    assert.matches('sk: index entry 2 must be an integer, a table, a tensor, sk.newaxis or "...", got the string "a"',
      h.err(function() return x[{ 0, "a" }] end))
    assert.matches("slice step must be positive", h.err(function() return x[{ { 0, 3, -1 } }] end))
    assert.matches("shape mismatch: indexing tensors could not be broadcast together with shapes %[2%], %[3%]",
      h.err(function() return x[{ T({ 0, 1 }), T({ 0, 1, 2 }) }] end))
    assert.matches("index 4 is out of bounds for dimension 1 with size 4", h.err(function() return x[{ {}, T({ 4 }) }] end))
  end)
end)

describe("sk.newaxis and the ellipsis", function()
  -- y = arange(60) as [3, 4, 5]: element (i, j, k) is 20i + 5j + k
  local function y345() return sk.arange(60):view(3, 4, 5) end
  local function val(i, j, k) return 20 * i + 5 * j + k end

  it("sk.newaxis adds a dim of size 1 where it stands, taking no dim of t", function()
    local y = y345()
    assert.same({ 1, 3, 4, 5 }, y[sk.newaxis]:shape())
    assert.same({ 1, 3, 4, 5 }, y[{ sk.newaxis }]:shape())
    local r = y[{ {}, sk.newaxis, 2 }] -- [3, 1, 5]: y[:, None, 2]
    assert.same({ 3, 1, 5 }, r:shape())
    for i = 0, 2 do for k = 0, 4 do assert.equal(val(i, 2, k), r[{ i, 0, k }]:item()) end end
    assert.same({ 1, 1, 4, 5 }, y[{ sk.newaxis, 1, sk.newaxis }]:shape()) -- y[None, 1, None]
    assert.same({ 3, 4, 5, 1 }, y[{ {}, {}, {}, sk.newaxis }]:shape())
    assert.same({ 1 }, sk.tensor(7)[sk.newaxis]:shape())
    -- a view: writes reach y
    y[{ sk.newaxis, 1 }]:fill_(-1)
    assert.equal(-20, y[1]:sum():item())
  end)

  it('"..." stands for the dims the other entries leave, as PyTorch\'s Ellipsis', function()
    local y = y345()
    local function same_as(a, b) assert.same(b:shape(), a:shape()); assert.same(b:totable(), a:totable()) end
    same_as(y[{ "...", 0 }], y:select(2, 0))
    same_as(y[{ 1, "..." }], y:select(0, 1))
    same_as(y[{ 1, "...", 3 }], y:select(0, 1):select(1, 3))
    same_as(y[{ "..." }], y)
    same_as(y[{ 0, 1, 2, "..." }], sk.tensor(val(0, 1, 2))) -- covering no dims
    same_as(y[{ sk.ellipsis, { 1, 3 } }], y:slice(2, 1, 3))
    assert.same({ 3, 4, 5, 1 }, y[{ "...", sk.newaxis }]:shape())
    assert.same({ 1, 3, 4, 5, 1 }, y[{ sk.newaxis, "...", sk.newaxis }]:shape())
    -- with tensor entries: y[None, [0, 2]] is [1, 2, 4, 5]; y[..., [0, 2]] indexes the last dim
    local a = y[{ sk.newaxis, T({ 0, 2 }) }]
    assert.same({ 1, 2, 4, 5 }, a:shape())
    assert.equal(val(2, 3, 4), a[{ 0, 1, 3, 4 }]:item())
    local b = y[{ "...", T({ 0, 2 }) }]
    assert.same({ 3, 4, 2 }, b:shape())
    assert.equal(val(1, 3, 2), b[{ 1, 3, 1 }]:item())
  end)

  it("writes through both", function()
    local y = y345()
    y[{ "...", 0 }] = 100
    assert.equal(100 * 12, y:select(2, 0):sum():item())
    y[{ sk.newaxis, 2, "..." }] = sk.zeros({ 4, 5 }, { dtype = "int64" })
    assert.equal(0, y[2]:abs():sum():item())
    y[{ "...", T({ 1 }) }] = -3
    assert.equal(-3 * 12, y:select(2, 1):sum():item())
  end)

  it("refuses two ellipses, too many indices and other strings", function()
    local y = y345()
    assert.matches("sk: an index can only have a single ellipsis %('%.%.%.'%)", h.err(function() return y[{ "...", 0, "..." }] end))
    assert.matches("sk: too many indices for tensor of dimension 3 %(got 4%)", h.err(function() return y[{ 0, 0, 0, 0, "..." }] end))
    assert.matches("sk: too many indices for tensor of dimension 3 %(got 4%)", h.err(function() return y[{ 0, sk.newaxis, 0, 0, 0 }] end))
    assert.matches('got the string "%.%."', h.err(function() return y[{ ".." }] end))
    assert.matches("sk.newaxis is read%-only", h.err(function() sk.newaxis.x = 1 end))
  end)
end)

describe("t[mask], t[idx]", function()
  it("a mask of t's shape is masked_select", function()
    local x = x34()
    assert.same({ 7, 8, 9, 10, 11 }, x[x:gt(T(6))]:totable())
    assert.same({ 0, 0 }, { x[x:gt(T(100))]:numel(), x[x:gt(T(100))]:dim() - 1 })
    assert.same({ 4, 1 }, x:t()[x:t():eq(T(1)):logical_or(x:t():eq(T(4)))]:totable()) -- C order of x^T
  end)
  it("a mask over leading dims picks along them, as PyTorch", function()
    local x = x34()
    assert.same({ X[1], X[3] }, x[T({ true, false, true })]:totable())
  end)
  it("an int64 / int32 index tensor is index_select along dim 0", function()
    local x = x34()
    assert.same({ X[3], X[1], X[3] }, x[T({ 2, 0, 2 })]:totable())
    assert.same({ X[2] }, x[T({ 1 }, { dtype = "int32" })]:totable())
    assert.same(X[3], x[T(2)]:totable())
    assert.same({ { X[1], X[2] }, { X[3], X[3] } }, x[T({ { 0, 1 }, { 2, 2 } })]:totable())
    assert.matches("index 3 is out of bounds for dimension 0 with size 3", h.err(function() return x[T({ 3 })] end))
    local m = sk.empty({ 3, 4 }, { device = "meta" })[sk.empty({ 5 }, { device = "meta", dtype = "int64" })]
    assert.same({ 5, 4 }, m:shape())
  end)
end)

describe("assignment", function()
  it("copies numbers and tensors into the view, broadcasting and converting", function()
    local x = x34()
    x[{ 0, {} }] = 5
    assert.same({ 5, 5, 5, 5 }, x[0]:totable())
    x[1] = T({ 1.9, 2.0, 3.0, 4.0 })
    assert.same({ 1, 2, 3, 4 }, x[1]:totable())
    x[{ {}, 0 }] = T({ 7 })
    assert.same({ 7, 7, 7 }, x[{ {}, 0 }]:totable())
    x[{ { 1, 3 }, { 2 } }] = T({ { 0 }, { -1 } })
    assert.same({ { 7, 5, 5, 5 }, { 7, 2, 0, 0 }, { 7, 9, -1, -1 } }, x:totable())
    x[{ -1, -1 }] = 42
    assert.equal(42, x[{ 2, 3 }]:item())
    local y = x34():t()
    y[0] = 100
    assert.same({ 100, 1, 2, 3 }, y:t()[0]:totable())
    assert.same({ 100, 100, 100 }, y:t()[{ {}, 0 }]:totable())
    local b = T({ false, false })
    b[1] = true
    assert.same({ false, true }, b:totable())
  end)
  it("writes through masks: masked_fill_ for a scalar, index_put_ for values", function()
    local x = x34()
    local v0 = x:version()
    x[x:gt(T(8))] = 0
    assert.same({ { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 0, 0, 0 } }, x:totable())
    assert.is_true(x:version() > v0)
    x[x:eq(T(0))] = T({ 10, 20, 30, 40 })
    assert.same({ { 10, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 20, 30, 40 } }, x:totable())
    x[T({ false, true, false })] = -1
    assert.same({ -1, -1, -1, -1 }, x[1]:totable())
    x[x:lt(T(0))] = T(2.5)
    assert.same({ 2, 2, 2, 2 }, x[1]:totable())
  end)
  it("writes through index tensors with index_put_", function()
    local x = x34()
    x[T({ 0, 2 })] = 0
    assert.same({ { 0, 0, 0, 0 }, X[2], { 0, 0, 0, 0 } }, x:totable())
    x[T({ 1 })] = T({ 9, 8, 7, 6 })
    assert.same({ 9, 8, 7, 6 }, x[1]:totable())
    x[{ {}, T({ 3 }) }] = T({ { 1 }, { 2 }, { 3 } })
    assert.same({ 1, 2, 3 }, x[{ {}, 3 }]:totable())
    x[{ T({ 0, 2 }), T({ 0, 1 }) }] = T({ 5.0, 6.0 })
    assert.same({ 5, 6 }, { x[{ 0, 0 }]:item(), x[{ 2, 1 }]:item() })
    x[T(2)] = 4
    assert.same({ 4, 4, 4, 4 }, x[2]:totable())
  end)
  it("places values as PyTorch's result shape for adjacent and separated tensor entries", function()
    local y = sk.zeros({ 2, 3, 4 }, { dtype = "int64" })
    -- adjacent, not first: the result is [2 (dim 0), 2 (indices)]
    y[{ {}, T({ 0, 2 }), T({ 1, 3 }) }] = T({ { 1, 2 }, { 3, 4 } })
    assert.same({ 1, 2, 3, 4 }, { y[{ 0, 0, 1 }]:item(), y[{ 0, 2, 3 }]:item(), y[{ 1, 0, 1 }]:item(), y[{ 1, 2, 3 }]:item() })
    -- separated: the result is [2 (indices), 3 (dim 1)]
    local z = sk.zeros({ 2, 3, 4 }, { dtype = "int64" })
    z[{ T({ 0, 1 }), {}, T({ 1, 3 }) }] = T({ { 1, 2, 3 }, { 4, 5, 6 } })
    assert.same({ 1, 2, 3 }, z[{ 0, {}, 1 }]:totable())
    assert.same({ 4, 5, 6 }, z[{ 1, {}, 3 }]:totable())
    assert.equal(21, z:sum():item())
  end)
  it("keeps methods reachable and refuses fields", function()
    local x = x34()
    assert.equal(66, x:sum():item())
    assert.equal("int64", x:dtype())
    assert.is_function(x.add)
    assert.is_nil(x.no_such_method)
    assert.same({ 3, 8 }, x["repeat"](x, 1, 2):shape())
    assert.matches("sk: cannot set field 'foo' of a tensor", h.err(function() x.foo = 1 end))
    assert.matches("a tensor element can be set from a number, a boolean or a tensor, got string",
      h.err(function() x[0] = "a" end))
    assert.equal(3, #x)
  end)
  it("raises indexing errors at the caller's line, through the C __index", function()
    local x = x34()
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, e = pcall(function() return x[7] end)
    assert.is_false(ok)
    assert.matches("lua_indexing_spec%.lua:" .. line .. ": Tensor:select: select%(%): index 7 out of range", e)
    ok, e = pcall(function() return x[true] end)
    assert.matches("lua_indexing_spec%.lua:" .. (line + 3) .. ": sk: a tensor index must be an integer", e)
    local m = sk.Tensor.numel
    sk.Tensor.numel = function() return -1 end -- methods stay a table others may change
    assert.equal(-1, x:numel())
    sk.Tensor.numel = m
    assert.equal(12, x:numel())
  end)
  it("works on every dtype and on Meta tensors", function()
    for _, dt in ipairs(DTYPES) do
      local x = sk.zeros({ 2, 2 }, { dtype = dt })
      x[{ 1, 0 }] = 1
      x[x:eq(T(1, { dtype = dt }))] = 1
      x[{ 0, {} }] = T({ 1, 0 }, { dtype = dt })
      assert.same(T({ { 1, 0 }, { 1, 0 } }, { dtype = dt }):totable(), x:totable())
    end
    local m = sk.empty({ 3, 4 }, { device = "meta" })
    m[0] = 1
    m[{ {}, 1 }] = sk.empty({ 3 }, { device = "meta" })
    assert.same({ 3, 4 }, m:shape())
  end)
end)
