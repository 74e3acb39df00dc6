-- spec/index_spec.lua — gather, scatter, scatter_add, index_select, index, index_put_, masked_fill,
-- masked_select, nonzero, sort, argsort, topk, embedding: values from plain Lua reference loops
-- over nested tables, every variant, every dtype, errors, Meta.
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local DTYPES = { "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" }
local NUMERIC = { "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" }

local meta, same_meta = h.meta, h.same_meta

local grid = h.grid

-- 2-D gather on tables: out[i][j] = x[idx[i][j]][j] (dim 0) or x[i][idx[i][j]] (dim 1)
local function ref_gather(x, dim, idx)
  return grid(#idx, #idx[1], function(i, j)
    local k = idx[i + 1][j + 1]
    return dim == 0 and x[k + 1][j + 1] or x[i + 1][k + 1]
  end)
end

describe("gather", function()
  local x = sk.arange(12):view(3, 4)
  local xt = x:totable()
  it("takes along a dim, as the Lua reference", function()
    local i0 = T({ { 2, 0, 1, 2 }, { 1, 1, 1, 0 } })
    assert.same(ref_gather(xt, 0, i0:totable()), x:gather(0, i0):totable())
    local i1 = T({ { 3, 3 }, { 0, 1 }, { 2, 0 } })
    assert.same(ref_gather(xt, 1, i1:totable()), sk.gather(x, 1, i1):totable())
    assert.same(ref_gather(xt, 1, i1:totable()), sk.gather(x, -1, i1):totable())
    assert.same({ { 0 } }, x:gather(1, T({ { 0 } })):totable())
    assert.same({ { 3, 3, 3, 3, 3 } }, x:gather(1, T({ { 3, 3, 3, 3, 3 } })):totable()) -- longer along dim
  end)
  it("reads non-contiguous self and index", function()
    local xtt = x:t()
    local idx = T({ { 1, 2, 0 }, { 0, 0, 0 } })
    assert.same(ref_gather(xtt:totable(), 0, idx:totable()), xtt:gather(0, idx):totable())
    local e = T({ { 1 }, { 2 }, { 0 } }):expand(3, 4)
    assert.same(ref_gather(xt, 1, e:totable()), x:gather(1, e):totable())
    local n = T({ { 3, 0, 1 }, { 1, 1, 2 }, { 0, 3, 3 }, { 2, 2, 0 } }):t()
    assert.same(ref_gather(xt, 1, n:totable()), x:gather(1, n):totable())
  end)
  it("gathers large tensors (the parallel path)", function()
    local big = sk.arange(60000):view(300, 200)
    local idx = sk.arange(300):view(300, 1):remainder(7):expand(300, 200):contiguous()
    local r = big:gather(1, idx)
    assert.same({ 300, 200 }, r:shape())
    assert.equal(299 * 200 + 299 % 7, r[{ 299, 10 }]:item())
    local r0 = big:gather(0, idx)
    assert.equal((123 % 7) * 200 + 10, r0[{ 123, 10 }]:item())
  end)
  it("keeps every dtype, handles 0-dim and empty", function()
    for _, dt in ipairs(DTYPES) do
      local s = T({ 1, 0, 1 }, { dtype = dt })
      local r = s:gather(0, T({ 1, 2 }))
      assert.equal(dt, r:dtype())
      assert.same(T({ 0, 1 }, { dtype = dt }):totable(), r:totable())
    end
    assert.equal(5, T(5):gather(0, T(0)):item())
    assert.same({ 0, 4 }, x:gather(0, sk.empty({ 0, 4 }, { dtype = "int64" })):shape())
  end)
  it("writes into out and checks indices before writing", function()
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.gather(x, 1, T({ { 1 }, { 2 }, { 3 } }), { out = out }))
    assert.same({ { 1 }, { 6 }, { 11 } }, out:totable())
    assert.matches("sk.gather: index 5 is out of bounds for dimension 1 with size 4",
      h.err(sk.gather, x, 1, T({ { 1 }, { 5 }, { 3 } }), { out = out }))
    assert.same({ { 1 }, { 6 }, { 11 } }, out:totable())
    assert.matches("index %-1 is out of bounds for dimension 0 with size 3", h.err(sk.gather, x, 0, T({ { -1 } })))
    assert.matches("refer to a single memory location", h.err(sk.gather, x, 1, T({ { 0 } }), { out = x:narrow(0, 0, 1):narrow(1, 0, 1) }))
  end)
  it("checks arguments with PyTorch's messages", function()
    assert.matches("gather%(%): Expected dtype int64 for index", h.err(sk.gather, x, 0, T({ { 0 } }, { dtype = "int32" })))
    assert.matches("Index tensor must have the same number of dimensions as input tensor", h.err(sk.gather, x, 0, T({ 0 })))
    assert.matches("Size does not match at dimension 0 expected index %[4, 1%] to be smaller than self %[3, 4%] apart from dimension 1",
      h.err(sk.gather, x, 1, T({ { 0 }, { 0 }, { 0 }, { 0 } })))
    assert.matches("argument 'dim'", h.err(sk.gather, x, 2, T({ { 0 } })))
  end)
  it("gives Meta results the CPU result's shape and dtype", function()
    local idx = T({ { 0, 1 } })
    same_meta(x:gather(1, idx), meta({ 3, 4 }, "int64"):gather(1, meta({ 1, 2 }, "int64")))
  end)
end)

describe("scatter, scatter_add", function()
  -- 2-D scatter on tables: dst[idx[i][j]][j] (dim 0) or dst[i][idx[i][j]] (dim 1) = src[i][j] (or += when add)
  local function ref_scatter(dst, dim, idx, src, add)
    for i = 1, #idx do
      for j = 1, #idx[1] do
        local a, b = i, j
        if dim == 0 then a = idx[i][j] + 1 else b = idx[i][j] + 1 end
        local v = type(src) == "table" and src[i][j] or src
        dst[a][b] = add and dst[a][b] + v or v
      end
    end
    return dst
  end
  local idx = T({ { 2, 0, 1 }, { 0, 1, 2 } })
  local src = T({ { 1.0, 2.0, 3.0 }, { 4.0, 5.0, 6.0 } })
  it("scatter src and value, functional, in place and into out", function()
    local base = sk.zeros({ 3, 3 })
    local want = ref_scatter(base:totable(), 0, idx:totable(), src:totable())
    assert.same(want, base:scatter(0, idx, src):totable())
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } }, base:totable())
    assert.same(ref_scatter(base:totable(), 1, idx:totable(), src:totable()), sk.scatter(base, 1, idx, src):totable())
    assert.same(ref_scatter(base:totable(), 1, idx:totable(), 9), base:scatter(1, idx, 9):totable())
    local v0 = base:version()
    assert.equal(base, base:scatter_(0, idx, src))
    assert.same(want, base:totable())
    assert.equal(v0 + 1, base:version())
    base:scatter_(1, T({ { 0 } }), -1.5)
    assert.equal(-1.5, base[{ 0, 0 }]:item())
    local out = sk.empty({ 0 })
    assert.equal(out, sk.scatter(sk.ones({ 3, 3 }), 0, idx, src, { out = out }))
    assert.same(ref_scatter(sk.ones({ 3, 3 }):totable(), 0, idx:totable(), src:totable()), out:totable())
  end)
  it("scatter_add accumulates duplicates", function()
    local dup = T({ { 0, 0, 0 }, { 0, 0, 1 } })
    local base = sk.ones({ 2, 3 })
    assert.same(ref_scatter(base:totable(), 0, dup:totable(), src:totable(), true), base:scatter_add(0, dup, src):totable())
    assert.same(ref_scatter(base:totable(), 1, dup:totable(), src:totable(), true), sk.scatter_add(base, 1, dup, src):totable())
    base:scatter_add_(1, dup, src)
    assert.same({ { 7, 1, 1 }, { 10, 7, 1 } }, base:totable())
    local out = sk.empty({ 0 })
    sk.scatter_add(sk.zeros({ 4 }), 0, T({ 3, 3 }), T({ 1.0, 2.0 }), { out = out })
    assert.same({ 0, 0, 0, 3 }, out:totable())
    for _, dt in ipairs(NUMERIC) do
      local r = sk.zeros({ 3 }, { dtype = dt }):scatter_add(0, T({ 1, 1, 2 }), T({ 1, 2, 3 }, { dtype = dt }))
      assert.equal(dt, r:dtype())
      assert.same({ 0, 3, 3 }, r:totable())
    end
  end)
  it("reads non-contiguous inputs and writes non-contiguous self", function()
    local base = sk.zeros({ 3, 3 })
    local want = ref_scatter(sk.zeros({ 3, 3 }):totable(), 1, idx:t():totable(), src:t():totable())
    assert.same(want, base:t():scatter(1, idx:t(), src:t()):totable())
    base:t():scatter_(0, idx, src) -- base^T[idx[i][j]][j] = src[i][j]
    local want_t = ref_scatter(sk.zeros({ 3, 3 }):totable(), 0, idx:totable(), src:totable())
    assert.same(grid(3, 3, function(i, j) return want_t[j + 1][i + 1] end), base:totable())
  end)
  it("scatters large tensors and every dtype", function()
    local n = 50000
    local perm = sk.arange(n):flip(0)
    local r = sk.zeros({ n }, { dtype = "int64" }):scatter(0, perm, sk.arange(n))
    assert.equal(n - 1, r[0]:item())
    assert.equal(0, r[n - 1]:item())
    for _, dt in ipairs(DTYPES) do
      local s = sk.zeros({ 3 }, { dtype = dt }):scatter(0, T({ 2 }), T({ 1 }, { dtype = dt }))
      assert.equal(dt, s:dtype())
      assert.same(T({ 0, 0, 1 }, { dtype = dt }):totable(), s:totable())
    end
    assert.same({ 1, 0 }, T({ 0, 0 }):scatter(0, sk.empty({ 0 }, { dtype = "int64" }), 1):add(T({ 1, 0 })):totable())
  end)
  it("checks arguments before writing", function()
    local base = sk.zeros({ 3 })
    assert.matches("scatter_: index 3 is out of bounds for dimension 0 with size 3", h.err(base.scatter_, base, 0, T({ 1, 3 }), 1.0))
    assert.same({ 0, 0, 0 }, base:totable())
    assert.matches("scatter%(%): Expected dtype int64 for index", h.err(sk.scatter, base, 0, T({ 0 }, { dtype = "int32" }), 1))
    assert.matches("scatter%(%): Expected self.dtype to be equal to src.dtype", h.err(sk.scatter, base, 0, T({ 0 }), T({ 1 })))
    assert.matches("scatter_add%(%): Expected dtype int64 for index", h.err(sk.scatter_add, base, 0, T({ 0.0 }), T({ 1.0 })))
    assert.matches("Index tensor must have the same number of dimensions as self tensor", h.err(sk.scatter, base, 0, T({ { 0 } }), 1))
    assert.matches("Expected index %[1, 4%] to be smaller than self %[1, 3%] apart from dimension 1 and to be smaller size than src %[1, 2%]",
      h.err(sk.scatter, sk.zeros({ 3, 1 }):t(), 1, T({ { 0, 1, 2, 0 } }), sk.zeros({ 1, 2 })))
    assert.matches("refer to a single memory location", h.err(base.scatter_, base, 0, T({ 0 }), base:narrow(0, 0, 1)))
  end)
  it("gives Meta results the CPU result's shape and dtype", function()
    same_meta(sk.zeros({ 3, 3 }):scatter(0, idx, src), meta({ 3, 3 }):scatter(0, meta({ 2, 3 }, "int64"), meta({ 2, 3 })))
    same_meta(sk.zeros({ 3 }):scatter_add(0, T({ 0 }), T({ 1.0 })), meta({ 3 }):scatter_add(0, meta({ 1 }, "int64"), meta({ 1 })))
    same_meta(sk.zeros({ 3 }):scatter(0, T({ 0 }), 2), meta({ 3 }):scatter(0, meta({ 1 }, "int64"), 2))
  end)
end)

describe("index_select", function()
  local x = sk.arange(12):view(3, 4)
  local xt = x:totable()
  it("selects rows or columns by an int64 or int32 index", function()
    assert.same({ xt[3], xt[1], xt[3] }, x:index_select(0, T({ 2, 0, 2 })):totable())
    assert.same(grid(3, 2, function(i) return xt[i + 1][4] end),
      sk.index_select(x, 1, T({ 3, 3 }, { dtype = "int32" })):totable())
    assert.same({ 3, 0 }, x:index_select(1, sk.empty({ 0 }, { dtype = "int64" })):shape())
    assert.equal(7, T(7):index_select(0, T({ 0 })):item())
    assert.same({ xt[2] }, x:index_select(0, T(1)):totable())
  end)
  it("reads non-contiguous self and index (the general path)", function()
    local xtt = x:t()
    assert.same(grid(2, 3, function(i, j) return xt[j + 1][(i == 0 and 3 or 1) + 1] end),
      xtt:index_select(0, T({ 3, 1 })):totable())
    assert.same(grid(3, 2, function(i, j) return xt[i + 1][(j == 0 and 2 or 0) + 1] end),
      x:index_select(1, T({ 2, 9, 0, 9 }):narrow(0, 0, 3):slice(0, 0, nil, 2)):totable())
  end)
  it("selects large tensors (row copies and element copies in parallel)", function()
    local big = sk.arange(200000):view(50000, 4)
    local idx = sk.arange(50000):flip(0)
    local r = big:index_select(0, idx)
    assert.same({ 199996, 199997, 199998, 199999 }, r[0]:totable())
    assert.same({ 4 * 12345, 4 * 12345 + 1, 4 * 12345 + 2, 4 * 12345 + 3 }, r[50000 - 1 - 12345]:totable())
    local col = big:index_select(1, T({ 2 }))
    assert.equal(4 * 777 + 2, col[{ 777, 0 }]:item())
    local flat = sk.arange(100000, { dtype = "float32" })
    local s = flat:index_select(0, sk.arange(99999, -1, -2))
    assert.equal(50000, s:numel())
    assert.equal(99999, s[0]:item())
    assert.equal(1, s[-1]:item())
  end)
  it("keeps every dtype and writes into out", function()
    for _, dt in ipairs(DTYPES) do
      local r = T({ 1, 0 }, { dtype = dt }):index_select(0, T({ 1, 0, 0 }))
      assert.equal(dt, r:dtype())
      assert.same(T({ 0, 1, 1 }, { dtype = dt }):totable(), r:totable())
    end
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.index_select(x, 0, T({ 1 }), { out = out }))
    assert.same({ xt[2] }, out:totable())
    local two = sk.zeros({ 2, 4 }, { dtype = "int64" })
    assert.matches("index 3 is out of bounds for dimension 0 with size 3", h.err(sk.index_select, x, 0, T({ 0, 3 }), { out = two }))
    assert.same({ { 0, 0, 0, 0 }, { 0, 0, 0, 0 } }, two:totable())
  end)
  it("checks arguments", function()
    assert.matches("sk.index_select: index 4 is out of bounds for dimension 1 with size 4", h.err(sk.index_select, x, 1, T({ 4 })))
    assert.matches("index %-1 is out of bounds for dimension 0 with size 3", h.err(sk.index_select, x, 0, T({ -1 })))
    assert.matches("index_select%(%): Index is supposed to be a vector", h.err(sk.index_select, x, 0, T({ { 0 } })))
    assert.matches("index_select%(%): Expected dtype int32 or int64 for index", h.err(sk.index_select, x, 0, T({ 0.0 })))
    assert.matches("index_select%(%): Index to scalar can have only 1 value, got 2 value%(s%)",
      h.err(sk.index_select, T(1), 0, T({ 0, 0 })))
    assert.matches("refer to a single memory location", h.err(sk.index_select, x, 0, T({ 0 }), { out = x:narrow(0, 0, 1) }))
  end)
  it("gives Meta results the CPU result's shape and dtype", function()
    same_meta(x:index_select(1, T({ 0, 1 })), meta({ 3, 4 }, "int64"):index_select(1, meta({ 2 }, "int64")))
  end)
end)

describe("index (advanced indexing)", function()
  local x = sk.arange(24):view(2, 3, 4)
  local xt = x:totable()
  local function at(i, j, k) return xt[i + 1][j + 1][k + 1] end
  it("broadcasts index tensors and keeps adjacent indexed dims in place", function()
    local r = x:index({ T({ 1, 0 }), T({ 2, 1 }) })
    assert.same({ { table.unpack(xt[2][3]) }, { table.unpack(xt[1][2]) } }, r:totable())
    local b = sk.index(x, { T({ { 0 }, { 1 } }), T({ 0, 2 }) })
    assert.same({ 2, 2, 4 }, b:shape())
    assert.same(xt[2][3], b:totable()[2][2])
    local all3 = sk.index(x, { T({ 1 }), T({ 2 }), T({ -1 }) })
    assert.same({ at(1, 2, 3) }, all3:totable())
    assert.same({ 2, 4 }, sk.index(x, { T(1), T({ 0, 1 }) }):shape())
  end)
  it("takes bool masks and int32 indices", function()
    local m = T({ { true, false, true }, { false, false, true } })
    assert.same({ xt[1][1], xt[1][3], xt[2][3] }, sk.index(x, { m }):totable())
    assert.same({ xt[2] }, sk.index(x, { T({ false, true }) }):totable())
    assert.same({ xt[2] }, sk.index(x, { T({ 1 }, { dtype = "int32" }) }):totable())
    assert.same({ 0, 3, 4 }, sk.index(x, { T({ false, false }) }):shape())
    assert.same({ 1, 3, 4 }, sk.index(x, { T({ 0, 1 }, { dtype = "uint8" }) }):shape())
  end)
  it("reads non-contiguous self, writes into out, keeps every dtype", function()
    local xtt = sk.arange(6):view(2, 3):t()
    assert.same({ { 2, 5 }, { 0, 3 } }, xtt:index({ T({ 2, 0 }) }):totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.index(x, { T({ 1 }), T({ 1 }), T({ 1 }) }, { out = out }))
    assert.same({ at(1, 1, 1) }, out:totable())
    for _, dt in ipairs(DTYPES) do
      local r = T({ 1, 0 }, { dtype = dt }):index({ T({ 1, 0 }) })
      assert.equal(dt, r:dtype())
      assert.same(T({ 0, 1 }, { dtype = dt }):totable(), r:totable())
    end
    local big = sk.arange(100000)
    assert.equal(99999, big:index({ sk.arange(100000):flip(0) })[0]:item())
  end)
  it("checks indices with PyTorch's messages", function()
    assert.matches("sk.index: index 2 is out of bounds for dimension 0 with size 2", h.err(sk.index, x, { T({ 2 }) }))
    assert.matches("index %-4 is out of bounds for dimension 1 with size 3", h.err(sk.index, x, { T({ 0 }), T({ -4 }) }))
    assert.matches("too many indices for tensor of dimension 3 %(got 4%)",
      h.err(sk.index, x, { T({ 0 }), T({ 0 }), T({ 0 }), T({ 0 }) }))
    assert.matches("shape mismatch: indexing tensors could not be broadcast together with shapes %[2%], %[3%]",
      h.err(sk.index, x, { T({ 0, 1 }), T({ 0, 1, 2 }) }))
    assert.matches("tensors used as indices must be long, int, byte or bool tensors", h.err(sk.index, x, { T({ 0.0 }) }))
    assert.matches("The shape of the mask %[3%] at index 0 does not match the shape of the indexed tensor %[2, 3, 4%] at index 0",
      h.err(sk.index, x, { T({ true, false, true }) }))
  end)
  it("gives Meta results the CPU result's shape, except for masks", function()
    same_meta(sk.index(x, { T({ 0, 1 }), T({ 0, 1 }) }), sk.index(meta({ 2, 3, 4 }, "int64"), { meta({ 2 }, "int64"), meta({ 2 }, "int64") }))
    assert.matches("boolean mask index on meta has a data%-dependent result shape",
      h.err(sk.index, meta({ 2, 3, 4 }), { meta({ 2 }, "bool") }))
  end)
end)

describe("index_put_, index_put", function()
  it("writes values at the indexed positions, broadcasting them", function()
    local x = sk.zeros({ 3, 4 })
    assert.equal(x, x:index_put_({ T({ 0, 2 }) }, T({ 1.0, 2.0, 3.0, 4.0 })))
    assert.same({ { 1, 2, 3, 4 }, { 0, 0, 0, 0 }, { 1, 2, 3, 4 } }, x:totable())
    sk.index_put_(x, { T({ 1 }), T({ -1 }) }, T(9.0))
    assert.equal(9, x[{ 1, 3 }]:item())
    x:index_put_({ T({ { true, false, false, false }, { false, false, false, false }, { false, false, false, true } }) }, T({ 5.0, 6.0 }))
    assert.same({ 5, 6 }, { x[{ 0, 0 }]:item(), x[{ 2, 3 }]:item() })
    local y = sk.zeros({ 2, 3 }):t()
    y:index_put_({ T({ 2 }) }, T({ 7.0, 8.0 }))
    assert.same({ { 0, 0, 7 }, { 0, 0, 8 } }, y:t():totable())
  end)
  it("accumulates duplicates when asked, keeps self in the functional form", function()
    local x = sk.zeros({ 3 }, { dtype = "int64" })
    x:index_put_({ T({ 0, 0, 2, 0 }) }, T({ 1, 2, 3, 4 }), true)
    assert.same({ 7, 0, 3 }, x:totable())
    local r = sk.index_put(x, { T({ 1 }) }, T(5), { accumulate = true })
    assert.same({ 7, 5, 3 }, r:totable())
    assert.same({ 7, 0, 3 }, x:totable())
    for _, dt in ipairs(NUMERIC) do
      local s = sk.zeros({ 2 }, { dtype = dt })
      s:index_put_({ T({ 1, 1 }) }, T({ 2, 3 }, { dtype = dt }), true)
      assert.same({ 0, 5 }, s:totable())
    end
    local b = T({ false, false }):index_put({ T({ 1 }) }, T(true))
    assert.same({ false, true }, b:totable())
  end)
  it("checks dtypes, shapes and indices before writing", function()
    local x = sk.zeros({ 3 })
    assert.matches("Index put requires the source and destination dtypes match, got float32 for the destination and int64 for the source.",
      h.err(x.index_put_, x, { T({ 0 }) }, T(1)))
    assert.matches("shape mismatch: value tensor of shape %[2%] cannot be broadcast to indexing result of shape %[3%]",
      h.err(x.index_put_, x, { T({ 0, 1, 2 }) }, T({ 1.0, 2.0 })))
    assert.matches("index 3 is out of bounds for dimension 0 with size 3", h.err(x.index_put_, x, { T({ 0, 3 }) }, T(1.0)))
    assert.same({ 0, 0, 0 }, x:totable())
    assert.matches("refer to a single memory location", h.err(x.index_put_, x, { T({ 0 }) }, x:narrow(0, 1, 1)))
  end)
  it("checks Meta arguments", function()
    local m = meta({ 3, 4 })
    assert.equal(m, m:index_put_({ meta({ 2 }, "int64") }, meta({ 4 })))
    assert.matches("cannot be broadcast", h.err(m.index_put_, m, { meta({ 2 }, "int64") }, meta({ 3 })))
    same_meta(sk.zeros({ 3, 4 }):index_put({ T({ 0 }) }, T(1.0)), sk.index_put(m, { meta({ 1 }, "int64") }, meta({})))
  end)
end)

describe("masked_fill", function()
  local mask = T({ { true, false, true }, { false, false, true } })
  it("fills where the mask is true, in place or into a new tensor", function()
    local x = sk.arange(6):view(2, 3)
    assert.same({ { -1, 1, -1 }, { 3, 4, -1 } }, x:masked_fill(mask, -1):totable())
    assert.same({ { 0, 1, 2 }, { 3, 4, 5 } }, x:totable())
    local v0 = x:version()
    assert.equal(x, x:masked_fill_(mask, 7))
    assert.same({ { 7, 1, 7 }, { 3, 4, 7 } }, x:totable())
    assert.equal(v0 + 1, x:version())
    x:masked_fill_(T({ true, false, false }), T(0))
    assert.same({ { 0, 1, 7 }, { 0, 4, 7 } }, x:totable())
    assert.same({ { 2, 2, 2 }, { 0, 4, 7 } }, sk.masked_fill(x, T({ { true }, { false } }):expand(2, 3):narrow(1, 0, 1), T(2)):totable())
  end)
  it("broadcasts self with the mask in the functional form, casts the value", function()
    local r = T({ 1, 2, 3 }):masked_fill(T({ { true }, { false } }), 0)
    assert.same({ { 0, 0, 0 }, { 1, 2, 3 } }, r:totable())
    assert.same({ 2, 5 }, T({ 1, 5 }):masked_fill(T({ true, false }), 2.7):totable())
    assert.equal("int64", T({ 1, 5 }):masked_fill(T({ true, false }), 2.7):dtype())
    assert.same({ 0.5, 5 }, T({ 1.0, 5.0 }):masked_fill(T({ true, false }), T(0.5)):totable())
    local x = sk.zeros({ 3, 3 }):t()
    x:masked_fill_(T({ true, false, true }), 1)
    assert.same({ { 1, 0, 1 }, { 1, 0, 1 }, { 1, 0, 1 } }, x:totable())
    local big = sk.zeros({ 100000 })
    big:masked_fill_(sk.arange(100000):remainder(2):eq(T(0)), 1)
    assert.equal(50000, big:sum():item())
  end)
  it("works on every dtype and 0-dim tensors", function()
    for _, dt in ipairs(DTYPES) do
      local r = sk.zeros({ 3 }, { dtype = dt }):masked_fill(T({ false, true, false }), 1)
      assert.equal(dt, r:dtype())
      assert.same(T({ 0, 1, 0 }, { dtype = dt }):totable(), r:totable())
    end
    assert.equal(4, T(3):masked_fill(T(true), 4):item())
  end)
  it("checks arguments", function()
    local x = sk.zeros({ 2, 3 })
    assert.matches("masked_fill_ only supports boolean masks, but got mask with dtype int64", h.err(sk.masked_fill, x, T({ 1, 0, 1 }), 1))
    assert.matches("argument 'mask' %(shape %[2%]%) is not broadcastable to shape %[2, 3%]", h.err(x.masked_fill_, x, T({ true, false }), 1))
    assert.matches("masked_fill_ only supports a 0%-dimensional value tensor, but got tensor with 1 dimension%(s%).",
      h.err(x.masked_fill_, x, mask, T({ 1.0 })))
    local e = T({ 0.0 }):expand(3)
    assert.matches("more than one element of the written%-to tensor", h.err(e.masked_fill_, e, T({ true, false, true }), 1))
  end)
  it("checks Meta tensors and gives the CPU result's shape", function()
    local m = meta({ 2, 3 })
    assert.equal(m, m:masked_fill_(meta({ 3 }, "bool"), 1))
    same_meta(sk.zeros({ 3 }):masked_fill(T({ { true }, { false } }), 1), meta({ 3 }):masked_fill(meta({ 2, 1 }, "bool"), 1))
    assert.matches("only supports boolean masks", h.err(m.masked_fill_, m, meta({ 3 }), 1))
  end)
end)

describe("masked_select, nonzero", function()
  it("masked_select takes the true positions in order, broadcasting", function()
    local x = sk.arange(6):view(2, 3)
    assert.same({ 0, 2, 5 }, x:masked_select(T({ { true, false, true }, { false, false, true } })):totable())
    assert.same({ 0, 2, 3, 5 }, sk.masked_select(x, T({ true, false, true })):totable())
    assert.same({ 1, 1, 1 }, sk.masked_select(T(1), T({ true, true, true })):totable())
    assert.same({ 0, 3, 2, 5 }, x:t():masked_select(T({ { true, true }, { false, false }, { true, true } })):totable())
    assert.same({ 0 }, x:masked_select(T(false)):shape())
    for _, dt in ipairs(DTYPES) do
      local r = T({ 1, 0 }, { dtype = dt }):masked_select(T({ false, true }))
      assert.equal(dt, r:dtype())
      assert.same(T({ 0 }, { dtype = dt }):totable(), r:totable())
    end
    local n = 100000
    local big = sk.arange(n):masked_select(sk.arange(n):remainder(3):eq(T(0)))
    assert.equal((n + 2) // 3, big:numel())
    assert.equal(99999, big[-1]:item())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.masked_select(x, T({ true, false, false }), { out = out }))
    assert.same({ 0, 3 }, out:totable())
  end)
  it("nonzero lists coordinates of nonzero elements (NaN counts, -0.0 does not)", function()
    local x = T({ { 0, 1, 0 }, { 2, 0, 3 } })
    assert.same({ { 0, 1 }, { 1, 0 }, { 1, 2 } }, x:nonzero():totable())
    assert.same({ { 2 }, { 3 } }, T({ 0.0, -0.0 * 1, 0 / 0, 1.5 }):nonzero():totable())
    assert.same({ { 0, 1 }, { 1, 0 }, { 2, 1 } }, x:t():nonzero():totable())
    assert.same({ 1, 0 }, T(5):nonzero():shape())
    assert.same({ 0, 0 }, T(0):nonzero():shape())
    assert.same({ 0, 2 }, sk.zeros({ 2, 3 }):nonzero():shape())
    for _, dt in ipairs(DTYPES) do assert.same({ { 1 } }, T({ 0, 1 }, { dtype = dt }):nonzero():totable()) end
    local big = sk.arange(100000):remainder(1000):eq(T(999)):nonzero()
    assert.same({ 100, 1 }, big:shape())
    assert.equal(99999, big[{ 99, 0 }]:item())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.nonzero(x, { out = out }))
    assert.same({ 3, 2 }, out:shape())
  end)
  it("check arguments; Meta tensors cannot run them", function()
    assert.matches("masked_select: expected BoolTensor for mask", h.err(sk.masked_select, T({ 1 }), T({ 1 })))
    assert.matches("argument 'mask' %(shape %[3%]%) is not broadcastable to shape %[2%]", h.err(sk.masked_select, T({ 1, 2 }), T({ true, true, true })))
    assert.matches("self and result must have the same scalar type",
      h.err(sk.masked_select, T({ 1, 2 }), T({ true, true }), { out = sk.empty({ 0 }) }))
    assert.matches("argument 'out' has dtype float32, expected int64", h.err(sk.nonzero, T({ 1 }), { out = sk.empty({ 0 }) }))
    assert.matches("argument 'out' has shape %[5%], but the result has shape %[1, 1%]",
      h.err(sk.nonzero, T({ 1 }), { out = sk.empty({ 5 }, { dtype = "int64" }) }))
    assert.matches("sk.nonzero: the shape of the result depends on the values of 'self'", h.err(sk.nonzero, meta({ 3 })))
    assert.matches("masked_select: the shape of the result depends on the values of 'mask'",
      h.err(sk.masked_select, meta({ 3 }), meta({ 3 }, "bool")))
  end)
end)

-- Exact equality of float lists, NaN equal to NaN.
local function same_floats(want, got)
  assert.equal(#want, #got)
  for k = 1, #want do
    local a, b = want[k], got[k]
    if not (a == b or (a ~= a and b ~= b)) then
      error(string.format("element %d differs: got %s, want %s", k, tostring(b), tostring(a)), 2)
    end
  end
end

-- Stable reference sort of a Lua list: NaN greater than everything; returns values and 0-based indices.
local function ref_sort(list, descending)
  local order = {}
  for i = 1, #list do order[i] = i end
  local function less(a, b)
    local x, y = list[a], list[b]
    local xn, yn = x ~= x, y ~= y
    if descending then x, y, xn, yn = y, x, yn, xn end
    if xn or yn then
      if xn == yn then return a < b end
      return yn
    end
    if x ~= y then return x < y end
    return a < b
  end
  table.sort(order, less)
  local vals, idx = {}, {}
  for i, o in ipairs(order) do vals[i], idx[i] = list[o], o - 1 end
  return vals, idx
end

describe("sort, argsort", function()
  it("sorts along the last dim by default, stable, NaN last (first descending)", function()
    local x = T({ 3.0, 0 / 0, 1.0, -0.0, 0.0, 1.0, -math.huge })
    local v, i = x:sort()
    local want_v, want_i = ref_sort(x:totable())
    same_floats(want_v, v:totable())
    assert.same(want_i, i:totable())
    v, i = x:sort(0, true)
    want_v, want_i = ref_sort(x:totable(), true)
    same_floats(want_v, v:totable())
    assert.same(want_i, i:totable())
    assert.equal("int64", i:dtype())
    v, i = sk.sort(T({ 2, 1, 2, 1 }), { stable = true, descending = true })
    assert.same({ 2, 2, 1, 1 }, v:totable())
    assert.same({ 0, 2, 1, 3 }, i:totable())
  end)
  it("sorts along any dim of non-contiguous tensors", function()
    local x = T({ { 3, 1, 2 }, { 0, 5, 4 } })
    local v, i = x:sort(0)
    assert.same({ { 0, 1, 2 }, { 3, 5, 4 } }, v:totable())
    assert.same({ { 1, 0, 0 }, { 0, 1, 1 } }, i:totable())
    v, i = x:t():sort(1, true)
    assert.same({ { 3, 0 }, { 5, 1 }, { 4, 2 } }, v:totable())
    assert.same({ { 0, 1 }, { 1, 0 }, { 1, 0 } }, i:totable())
    v, i = sk.sort(x, { dim = -1 })
    assert.same({ { 1, 2, 3 }, { 0, 4, 5 } }, v:totable())
    assert.same({ { 1, 2, 0 }, { 0, 2, 1 } }, i:totable())
    local s, j = T(4):sort()
    assert.same({ 4, 0 }, { s:item(), j:item() })
    assert.same({ 0, 3 }, sk.empty({ 0, 3 }):sort(0):shape())
  end)
  it("matches the reference on every dtype, long slices (radix) and many slices", function()
    math.randomseed(7)
    for _, dt in ipairs(DTYPES) do
      local list = {}
      for k = 1, 300 do
        if dt == "bool" then list[k] = math.random(2) == 1 else list[k] = math.random(-60, 60) end
      end
      if dt == "uint8" then for k = 1, 300 do list[k] = math.abs(list[k]) end end
      local x = T(list, { dtype = dt })
      local vals = x:totable()
      if dt == "bool" then for k = 1, #vals do vals[k] = vals[k] and 1 or 0 end end
      for _, desc in ipairs({ false, true }) do
        local v, i = x:sort(0, desc)
        local _, want_i = ref_sort(vals, desc)
        assert.equal(dt, v:dtype())
        assert.same(want_i, i:totable())
      end
    end
    local list = {}
    for k = 1, 5000 do list[k] = (math.random() - 0.5) * 1e6 end
    list[17], list[4000], list[100] = 0 / 0, 0 / 0, list[99]
    for _, dt in ipairs({ "float32", "float64" }) do
      local x = T(list, { dtype = dt })
      local v, i = x:sort(0, true)
      local want_v, want_i = ref_sort(x:totable(), true)
      assert.same(want_i, i:totable())
      same_floats(want_v, v:totable())
    end
    local rows = {}
    for r = 1, 2000 do rows[r] = { math.random(9), math.random(9), math.random(9) } end
    local v = T(rows):sort(1)
    for r = 1, 2000, 97 do
      local want = ref_sort(rows[r])
      assert.same(want, v[r - 1]:totable())
    end
  end)
  it("sorts one long slice on every thread, stable, as the reference", function()
    math.randomseed(3)
    local list = {}
    for k = 1, 66000 do list[k] = math.random(-300, 300) / 4 end -- past the 65536 of the threaded path
    list[5], list[60000] = 0 / 0, -0.0
    for _, dt in ipairs({ "float32", "int64" }) do
      local x = T(list, { dtype = dt == "int64" and "float32" or dt })
      if dt == "int64" then x = (x * 4):to("int64") end
      local vals = x:totable()
      for _, desc in ipairs({ false, true }) do
        local v, i = x:view(1, -1):t():sort(0, desc)
        local want_v, want_i = ref_sort(vals, desc)
        assert.same(want_i, i:view(-1):totable())
        same_floats(want_v, v:view(-1):totable())
      end
    end
    local v, i = sk.arange(70000):flip(0):topk(3, { largest = false })
    assert.same({ 0, 1, 2 }, v:totable())
    assert.same({ 69999, 69998, 69997 }, i:totable())
  end)
  it("writes values and indices into out tensors", function()
    local vals, idx = sk.empty({ 0 }), sk.empty({ 0 }, { dtype = "int64" })
    local a, b = sk.sort(T({ 3.0, 1.0, 2.0 }), 0, false, { values = vals, indices = idx })
    assert.equal(vals, a)
    assert.equal(idx, b)
    assert.same({ 1, 2, 3 }, vals:totable())
    assert.same({ 1, 2, 0 }, idx:totable())
    sk.sort(T({ 5.0, 4.0, 6.0 }), { stable = true, out = { vals, idx } })
    assert.same({ 1, 0, 2 }, idx:totable())
    local v2 = sk.zeros({ 3, 2 }):t()
    sk.sort(T({ { 2.0, 1.0, 3.0 }, { 6.0, 5.0, 4.0 } }), 1, true, { values = v2, indices = sk.empty({ 0 }, { dtype = "int64" }) })
    assert.same({ { 3, 2, 1 }, { 6, 5, 4 } }, v2:totable())
    assert.matches("argument 'indices' has dtype float32, expected int64",
      h.err(sk.sort, T({ 1.0 }), { values = sk.empty({ 0 }), indices = sk.empty({ 0 }) }))
  end)
  it("argsort returns the indices", function()
    assert.same({ { 1, 2, 0 }, { 0, 2, 1 } }, T({ { 3, 1, 2 }, { 0, 5, 4 } }):argsort():totable())
    assert.same({ { 0, 2, 1 }, { 1, 2, 0 } }, T({ { 3, 1, 2 }, { 0, 5, 4 } }):argsort(1, true):totable())
    assert.same({ 0, 2, 1, 3 }, sk.argsort(T({ 2, 1, 2, 1 }), { stable = true, descending = true }):totable())
    assert.matches("argument 'dim'", h.err(sk.argsort, T({ 1 }), 1))
  end)
  it("gives Meta results the CPU result's shape and dtype", function()
    local x = T({ { 3.0, 1.0 } })
    local v, i = x:sort(0)
    local mv, mi = meta({ 1, 2 }):sort(0)
    same_meta(v, mv)
    same_meta(i, mi)
    same_meta(x:argsort(), meta({ 1, 2 }):argsort())
  end)
end)

describe("topk", function()
  it("returns the k largest (or smallest) in order, ties in index order", function()
    local x = T({ 1, 3, 3, 2, 5 })
    local v, i = x:topk(3)
    assert.same({ 5, 3, 3 }, v:totable())
    assert.same({ 4, 1, 2 }, i:totable())
    v, i = x:topk(2, { largest = false })
    assert.same({ 1, 2 }, v:totable())
    assert.same({ 0, 3 }, i:totable())
    v, i = T({ 1.0, 0 / 0, 2.0 }):topk(2)
    assert.is_true(v:totable()[1] ~= v:totable()[1])
    assert.same({ 1, 2 }, i:totable())
    assert.same({ 0 }, x:topk(0):shape())
    v = sk.topk(T({ { 1, 9 }, { 8, 2 } }), 1, 0)
    assert.same({ { 8, 9 } }, v:totable())
    v = T({ { 1, 9 }, { 8, 2 } }):t():topk(1)
    assert.same({ { 8 }, { 9 } }, v:totable())
  end)
  it("matches the reference on random data and every numeric dtype", function()
    math.randomseed(11)
    local list = {}
    for k = 1, 1000 do list[k] = math.random(-50, 50) end
    local x = T(list)
    local v, i = x:topk(10)
    local want_v, want_i = ref_sort(list, true)
    assert.same({ table.unpack(want_v, 1, 10) }, v:totable())
    assert.same({ table.unpack(want_i, 1, 10) }, i:totable())
    for _, dt in ipairs(NUMERIC) do
      local r = T({ 1, 4, 2 }, { dtype = dt }):topk(2)
      assert.equal(dt, r:dtype())
      assert.same({ 4, 2 }, r:totable())
    end
  end)
  it("writes into out tensors, checks k, works on Meta tensors", function()
    local vals, idx = sk.empty({ 0 }, { dtype = "int64" }), sk.empty({ 0 }, { dtype = "int64" })
    sk.topk(T({ 1, 3, 2 }), 2, { out = { vals, idx } })
    assert.same({ 3, 2 }, vals:totable())
    assert.same({ 1, 2 }, idx:totable())
    assert.matches("sk.topk: selected index k out of range", h.err(sk.topk, T({ 1, 2 }), 3))
    assert.matches("selected index k out of range", h.err(sk.topk, T({ 1, 2 }), -1))
    local v, i = sk.topk(meta({ 4, 5 }), 2)
    same_meta(sk.zeros({ 4, 2 }), v)
    assert.equal("int64", i:dtype())
  end)
end)

describe("embedding", function()
  local w = sk.arange(8, { dtype = "float32" }):view(4, 2)
  it("looks rows of weight up by index, keeping the index shape", function()
    assert.same({ { { 6, 7 }, { 0, 1 } }, { { 2, 3 }, { 2, 3 } } }, sk.embedding(w, T({ { 3, 0 }, { 1, 1 } })):totable())
    assert.same({ { 4, 5 } }, sk.embedding(w, T({ 2 }, { dtype = "int32" })):totable())
    assert.same({ 4, 5 }, sk.embedding(w, T(2)):totable())
    assert.same({ { 2, 3 } }, sk.embedding(w:t():contiguous():t(), T({ 1 }), { padding_idx = 0 }):totable())
  end)
  it("checks weight and indices", function()
    assert.matches("'weight' must be 2%-D", h.err(sk.embedding, T({ 1.0 }), T({ 0 })))
    assert.matches("'indices' to have one of the following scalar types: Long, Int", h.err(sk.embedding, w, T({ 0.0 })))
    assert.matches("index 4 is out of bounds for dimension 0 with size 4", h.err(sk.embedding, w, T({ 4 })))
    same_meta(sk.embedding(w, T({ { 1 } })), sk.embedding(meta({ 4, 2 }), meta({ 1, 1 }, "int64")))
  end)
end)
