-- spec/reduce_spec.lua — prod, var/std, norm, amin, argmin, max/min, all/any, logsumexp,
-- cumsum/cumprod: values from plain-Lua reference loops, every variant, dtype, layout and error
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local FLOATS = { "float16", "bfloat16", "float32", "float64" }
local INTS = { "uint8", "int8", "int16", "int32", "int64" }
local nan, inf = 0 / 0, math.huge

-- {==== Plain-Lua references ====
local lcg = h.lcg

local function numel(shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return n
end

-- Nested table of the given shape, leaf(idx) at each 1-based index list (C order).
local function nest(shape, leaf)
  local idx = {}
  local function rec(level)
    if level > #shape then return leaf(idx) end
    local t = {}
    for i = 1, shape[level] do idx[level] = i; t[i] = rec(level + 1) end
    return t
  end
  return rec(1)
end

local function at(a, idx)
  for i = 1, #idx do a = a[idx[i]] end
  return a
end

local function random_table(shape, seed, lo, hi)
  local r = lcg(seed)
  return nest(shape, function() return r(lo or -2, hi or 2) end)
end

-- fold(values) over the dims in `dims` (0-based; empty = all), values in C order of the
-- reduced indices; the result has the kept dims (nested), or is a number.
local function ref_reduce(a, shape, dims, fold)
  local red = {}
  if #dims == 0 then for i = 1, #shape do red[i] = true end end
  for _, d in ipairs(dims) do red[(d % #shape) + 1] = true end
  local groups, kept = {}, {}
  for i = 1, #shape do if not red[i] then kept[#kept + 1] = shape[i] end end
  if numel(shape) > 0 then
    nest(shape, function(idx)
      local key = {}
      for i = 1, #shape do if not red[i] then key[#key + 1] = idx[i] end end
      local k = table.concat(key, ",")
      groups[k] = groups[k] or {}
      table.insert(groups[k], at(a, idx))
    end)
  end
  return nest(kept, function(idx) return fold(groups[table.concat(idx, ",")] or {}) end)
end

local function fsum(v) local s = 0 for _, x in ipairs(v) do s = s + x end return s end
local function fprod(v) local s = 1 for _, x in ipairs(v) do s = s * x end return s end
local function fvar(correction)
  return function(v)
    local m = fsum(v) / #v
    local s = 0
    for _, x in ipairs(v) do s = s + (x - m) ^ 2 end
    return s / math.max(0, #v - correction)
  end
end
local function fnorm(p)
  return function(v)
    if p == inf or p == -inf then
      local m = p == inf and 0 or inf
      for _, x in ipairs(v) do m = p == inf and math.max(m, math.abs(x)) or math.min(m, math.abs(x)) end
      return m
    end
    if p == 0 then local c = 0 for _, x in ipairs(v) do if x ~= 0 then c = c + 1 end end return c end
    local s = 0
    for _, x in ipairs(v) do s = s + math.abs(x) ^ p end
    return s ^ (1 / p)
  end
end
local function fext(better) -- (value, first index), NaN wins
  return function(v)
    local bi = 1
    for i = 2, #v do
      local x, b = v[i], v[bi]
      if b == b and (x ~= x or better(x, b)) then bi = i end
    end
    return { v[bi], bi - 1 }
  end
end
local fmax = fext(function(x, b) return x > b end)
local fmin = fext(function(x, b) return x < b end)
local function first(f) return function(v) return f(v)[1] end end
local function second(f) return function(v) return f(v)[2] end end
local function flse(v)
  local m = -inf
  for _, x in ipairs(v) do m = math.max(m, x) end
  if m == -inf or m == inf then return m end
  local s = 0
  for _, x in ipairs(v) do s = s + math.exp(x - m) end
  return m + math.log(s)
end
-- }====

describe("prod", function()
  local m = T({{1, 2, 3}, {4, 5, 6}}, {dtype = "float32"})
  it("multiplies everything, or along a dim with keepdim", function()
    assert.equal(720, m:prod():item())
    assert.same({}, m:prod():shape())
    assert.same({6, 120}, m:prod(1):totable())
    assert.same({4, 10, 18}, sk.prod(m, 0):totable())
    assert.same({{6}, {120}}, m:prod(-1, true):totable())
    assert.same({{4, 10, 18}}, m:prod({dim = 0, keepdim = true}):totable())
  end)
  it("accumulates integers and bools in int64, or in the dtype asked for", function()
    local big = T({1000, 1000, 1000}, {dtype = "int16"})
    assert.equal("int64", big:prod():dtype())
    assert.equal(1000000000, big:prod():item())
    assert.equal("int64", T({true, true}):prod():dtype())
    assert.equal(0, T({true, false}):prod(0):item())
    assert.equal("float64", m:prod({dtype = "float64"}):dtype())
    assert.equal("float32", T({1, 2}, {dtype = "int32"}):prod(0, {dtype = "float32"}):dtype())
    for _, dt in ipairs(INTS) do assert.equal(24, T({1, 2, 3, 4}, {dtype = dt}):prod():item()) end
    for _, dt in ipairs(FLOATS) do
      local r = T({1.5, 2, -3}, {dtype = dt}):prod(0)
      assert.equal(dt, r:dtype())
      assert.equal(-9, r:item())
    end
  end)
  it("gives 1 for an empty product and reduces 0-dim tensors", function()
    assert.equal(1, sk.zeros({0}):prod():item())
    assert.same({1, 1, 1}, sk.zeros({0, 3}):prod(0):totable())
    assert.same({0}, sk.zeros({0, 3}):prod(1):shape())
    assert.equal(7, T(7.0):prod():item())
    assert.equal(7, T(7.0):prod(0):item())
    assert.equal(7, T(7.0):prod(-1):item())
  end)
  it("reads non-contiguous and expanded inputs", function()
    assert.same({4, 10, 18}, m:t():prod(1):totable())
    assert.same({3, 6}, m:narrow(1, 2, 1):prod(1):totable())
    assert.equal(16, T({2.0}):expand(4):prod():item())
    assert.equal(720, m:t():prod():item())
  end)
  it("writes into out and checks it", function()
    local out = sk.empty({0})
    assert.equal(out, sk.prod(m, 1, {out = out}))
    assert.same({6, 120}, out:totable())
    local i64 = sk.zeros({2}, {dtype = "int64"})
    sk.prod(m, 1, {out = i64}) -- like sum, the out's dtype is the result's
    assert.same({6, 120}, i64:totable())
    assert.matches("argument 'out' has dtype int64, expected float64",
      h.err(sk.prod, m, 1, {dtype = "float64", out = sk.zeros({2}, {dtype = "int64"})}))
    assert.matches("argument .dim.: dimension out of range", h.err(sk.prod, m, 2))
  end)
  it("runs on Meta tensors", function()
    local M = sk.empty({2, 3}, {device = "meta", dtype = "int32"})
    assert.equal("meta", M:prod(1):device())
    assert.same({2}, M:prod(1):shape())
    assert.equal("int64", M:prod():dtype())
    assert.same({}, M:prod():shape())
  end)
end)

describe("var and std", function()
  local rows = random_table({4, 7}, 11)
  local x = T(rows, {dtype = "float64"})
  it("match the two-pass formula over all elements, dims, and corrections", function()
    h.assert_close(x:var():item(), ref_reduce(rows, {4, 7}, {}, fvar(1)), 1e-12)
    h.assert_close(x:var(false):item(), ref_reduce(rows, {4, 7}, {}, fvar(0)), 1e-12)
    h.assert_close(x:var(1):totable(), ref_reduce(rows, {4, 7}, {1}, fvar(1)), 1e-12)
    h.assert_close(x:var(0, false):totable(), ref_reduce(rows, {4, 7}, {0}, fvar(0)), 1e-12)
    h.assert_close(sk.var(x, {dim = 1, correction = 2}):totable(), ref_reduce(rows, {4, 7}, {1}, fvar(2)), 1e-12)
    h.assert_close(sk.var(x, {correction = 0}):item(), ref_reduce(rows, {4, 7}, {}, fvar(0)), 1e-12)
    h.assert_close(sk.var(x, {0, 1}, true, true):totable(), { { ref_reduce(rows, {4, 7}, {}, fvar(1)) } }, 1e-12)
    local sd = ref_reduce(rows, {4, 7}, {0}, fvar(1))
    for i = 1, #sd do sd[i] = math.sqrt(sd[i]) end
    h.assert_close(x:std(0):totable(), sd, 1e-12)
    h.assert_close(sk.std(x, {dim = 0, correction = 1}):totable(), sd, 1e-12)
    h.assert_close(x:std():item(), math.sqrt(ref_reduce(rows, {4, 7}, {}, fvar(1))), 1e-12)
    assert.same({4, 1}, sk.std(x, {dim = 1, keepdim = true}):shape())
  end)
  it("give nan for one element with correction 1 and for empty inputs, without error", function()
    local v = T({5.0}):var():item()
    assert.is_true(v ~= v)
    v = T({5.0}):std(0):item()
    assert.is_true(v ~= v)
    assert.equal(0, sk.var(T({5.0}), {correction = 0}):item())
    v = sk.zeros({0}):var():item()
    assert.is_true(v ~= v)
    assert.same({3}, sk.zeros({0, 3}):var(0):shape())
  end)
  it("stay accurate with a large offset, along rows, columns and long split reductions", function()
    -- values 1e6 + small: a sum-of-squares formula would lose every digit
    local small = random_table({3, 5000}, 5, 0, 1)
    local off = nest({3, 5000}, function(idx) return 1e6 + at(small, idx) end)
    local t = T(off, {dtype = "float64"})
    h.assert_close(t:var(1):totable(), ref_reduce(small, {3, 5000}, {1}, fvar(1)), 1e-9)
    h.assert_close(t:t():contiguous():var(0):totable(), ref_reduce(small, {3, 5000}, {1}, fvar(1)), 1e-9)
    h.assert_close(t:var():item(), ref_reduce(small, {3, 5000}, {}, fvar(1)), 1e-9)
    local f = T(off, {dtype = "float32"})
    h.assert_close(f:var(1):totable(), t:var(1):totable(), 1e-3)
  end)
  it("take every floating dtype and refuse integers", function()
    for _, dt in ipairs(FLOATS) do
      local r = T({1, 2, 3, 4}, {dtype = dt}):var()
      assert.equal(dt, r:dtype())
      h.assert_close(r:item(), 5 / 3, 1e-2)
    end
    for _, dt in ipairs(INTS) do
      assert.matches("std and var only support floating point and complex dtypes",
        h.err(function() return T({1, 2}, {dtype = dt}):var() end))
    end
    assert.matches("std and var only support floating point", h.err(sk.std, T({true})))
  end)
  it("read non-contiguous inputs and write out", function()
    h.assert_close(x:t():var(0):totable(), ref_reduce(rows, {4, 7}, {1}, fvar(1)), 1e-12)
    local out = sk.empty({0}, {dtype = "float64"})
    assert.equal(out, sk.var(x, 1, {out = out}))
    h.assert_close(out:totable(), ref_reduce(rows, {4, 7}, {1}, fvar(1)), 1e-12)
    local out2 = sk.empty({0}, {dtype = "float64"})
    sk.std(x, {dim = 1, correction = 0, out = out2})
    local want = ref_reduce(rows, {4, 7}, {1}, fvar(0))
    for i = 1, #want do want[i] = math.sqrt(want[i]) end
    h.assert_close(out2:totable(), want, 1e-12)
  end)
  it("run on Meta tensors", function()
    local M = sk.empty({2, 3}, {device = "meta"})
    assert.same({2}, M:var(1):shape())
    assert.same({}, M:std():shape())
    assert.same({1, 3}, sk.var(M, {dim = 0, keepdim = true, correction = 0}):shape())
  end)
end)

describe("norm", function()
  local rows = random_table({3, 4}, 3)
  local x = T(rows, {dtype = "float64"})
  it("computes p = 2, 1, inf, -inf, 0 and other p over everything and over dims", function()
    for _, p in ipairs({ 2, 1, inf, -inf, 0, 3, 0.5, -1 }) do
      h.assert_close(x:norm(p):item(), ref_reduce(rows, {3, 4}, {}, fnorm(p)), 1e-12)
      h.assert_close(x:norm(p, 1):totable(), ref_reduce(rows, {3, 4}, {1}, fnorm(p)), 1e-12)
      h.assert_close(sk.norm(x, p, {0}):totable(), ref_reduce(rows, {3, 4}, {0}, fnorm(p)), 1e-12)
    end
    h.assert_close(x:norm():item(), ref_reduce(rows, {3, 4}, {}, fnorm(2)), 1e-12)
    assert.same({3, 1}, x:norm(2, 1, true):shape())
    assert.same({3, 1}, sk.norm(x, {p = 1, dim = -1, keepdim = true}):shape())
    h.assert_close(x:norm(2, {}):item(), ref_reduce(rows, {3, 4}, {}, fnorm(2)), 1e-12)
    assert.equal(5, T({3.0, -4.0}):norm():item())
    assert.equal(2, T({0.0, -4.0, 1e-30}):norm(0):item())
    assert.equal(0, T({3.0, 0.0}):norm(-1):item())
  end)
  it("propagates NaN", function()
    local v = T({1.0, nan}):norm(math.huge):item()
    assert.is_true(v ~= v)
    v = T({1.0, nan}):norm(2):item()
    assert.is_true(v ~= v)
  end)
  it("keeps the floating dtype and refuses integers", function()
    for _, dt in ipairs(FLOATS) do
      local r = T({3, 4}, {dtype = dt}):norm()
      assert.equal(dt, r:dtype())
      assert.equal(5, r:item())
    end
    assert.matches("norm%(%): input dtype should be either floating point or complex. Got Long instead.",
      h.err(function() return T({1, 2}):norm() end))
  end)
  it("has no inf or negative norm of an empty tensor, as linalg.vector_norm", function()
    assert.matches("cannot compute the inf norm on an empty tensor",
      h.err(function() return sk.zeros({0}):norm(math.huge) end))
    assert.matches("cannot compute the %-1 norm on the dimension 1",
      h.err(function() return sk.zeros({2, 0}):norm(-1, 1) end))
    assert.same({0}, sk.zeros({2, 0}):norm(-1, 0):shape())
    assert.equal(0, sk.zeros({0}):norm():item())
  end)
  it("linalg.vector_norm of a 0-d tensor is the norm of its one element for every ord (ord 0 counts)", function()
    -- PyTorch 1.13: ord 0 of -2.5 is 1 (a nonzero), of 0 is 0; every other ord is |x|
    for _, o in ipairs({ inf, -inf, 0, 1, 2, 3.5, -1 }) do
      local want = o == 0 and 1 or 2.5
      assert.equal(want, sk.linalg.vector_norm(T(-2.5), o):item(), tostring(o))
      assert.equal(0, sk.linalg.vector_norm(T(0.0), o):item(), tostring(o))
      local k = sk.linalg.vector_norm(T(-2.5), o, { 0 }, true)
      assert.same({}, k:shape()); assert.equal(want, k:item())
    end
    assert.equal("float64", sk.linalg.vector_norm(T(3.0), 0, nil, false, { dtype = "float64" }):dtype())
  end)
  it("reads non-contiguous inputs, writes out, runs on Meta", function()
    h.assert_close(x:t():norm(1, 0):totable(), ref_reduce(rows, {3, 4}, {1}, fnorm(1)), 1e-12)
    local out = sk.empty({0}, {dtype = "float64"})
    sk.norm(x, 2, 1, {out = out})
    h.assert_close(out:totable(), ref_reduce(rows, {3, 4}, {1}, fnorm(2)), 1e-12)
    local M = sk.empty({2, 3}, {device = "meta", dtype = "float16"})
    assert.same({3}, M:norm(2, 0):shape())
    assert.equal("float16", M:norm():dtype())
  end)
end)

describe("amin, argmin, max and min", function()
  local rows = { { 3, 1, 4, 1 }, { 5, 9, 2, 6 }, { 5, 3, 5, 9 } }
  local x = T(rows, {dtype = "float32"})
  it("amin reduces dims like amax", function()
    assert.equal(1, x:amin():item())
    assert.same(ref_reduce(rows, {3, 4}, {1}, first(fmin)), x:amin(1):totable())
    assert.same(ref_reduce(rows, {3, 4}, {0}, first(fmin)), x:amin(0):totable())
    assert.same({{1}}, x:amin({0, 1}, true):totable())
  end)
  it("argmin and max/min with dim give the first index of ties", function()
    assert.equal(1, x:argmin():item())
    assert.same(ref_reduce(rows, {3, 4}, {1}, second(fmin)), x:argmin(1):totable())
    assert.same(ref_reduce(rows, {3, 4}, {0}, second(fmin)), x:argmin(0):totable())
    local v, i = x:max(1)
    assert.same(ref_reduce(rows, {3, 4}, {1}, first(fmax)), v:totable())
    assert.same(ref_reduce(rows, {3, 4}, {1}, second(fmax)), i:totable())
    v, i = sk.min(x, 0)
    assert.same(ref_reduce(rows, {3, 4}, {0}, first(fmin)), v:totable())
    assert.same(ref_reduce(rows, {3, 4}, {0}, second(fmin)), i:totable())
    assert.equal("float32", v:dtype())
    assert.equal("int64", i:dtype())
    v, i = x:max({dim = -1, keepdim = true})
    assert.same({3, 1}, v:shape())
    assert.same({{2}, {1}, {3}}, i:totable())
  end)
  it("reduce everything to a 0-dim tensor", function()
    assert.equal(9, x:max():item())
    assert.same({}, x:max():shape())
    assert.equal(1, sk.min(x):item())
    assert.equal(7, T(7):max():item())
    local v, i = T(7.0):max(0)
    assert.equal(7, v:item())
    assert.equal(0, i:item())
  end)
  it("let NaN win and report its first index", function()
    local n = T({1, nan, 3, nan})
    local v, i = n:max(0)
    assert.is_true(v:item() ~= v:item())
    assert.equal(1, i:item())
    v, i = n:min(0)
    assert.equal(1, i:item())
    assert.equal(1, n:argmin():item())
    local a = n:amin():item()
    assert.is_true(a ~= a)
    a = n:max():item()
    assert.is_true(a ~= a)
  end)
  it("take every dtype", function()
    for _, dt in ipairs(INTS) do
      local t = T({{3, 7}, {8, 1}}, {dtype = dt})
      local v, i = t:max(1)
      assert.equal(dt, v:dtype())
      assert.same({7, 8}, v:totable())
      assert.same({1, 0}, i:totable())
      assert.same({3, 1}, t:amin(0):totable())
      assert.same({0, 1}, t:argmin(1):totable())
      assert.equal(1, t:min():item())
    end
    assert.same({-128, 127}, { T({5, -128, 127}, {dtype = "int8"}):min():item(), T({5, -128, 127}, {dtype = "int8"}):max():item() })
    for _, dt in ipairs(FLOATS) do
      local t = T({{3, 7}, {-8, 1}}, {dtype = dt})
      assert.same({-8, 1}, t:amin(0):totable())
      local v, i = t:min(1)
      assert.same({3, -8}, v:totable())
      assert.same({0, 0}, i:totable())
    end
    local v, i = T({{false, true}, {false, false}}):max(1)
    assert.same({true, false}, v:totable())
    assert.same({1, 0}, i:totable())
  end)
  it("refuse empty reductions with PyTorch's messages", function()
    assert.matches("max%(%): Expected reduction dim to be specified for input.numel%(%) == 0. Specify the reduction dim with the 'dim' argument.",
      h.err(function() return sk.zeros({0}):max() end))
    assert.matches("min%(%): Expected reduction dim to be specified", h.err(function() return sk.zeros({0}):min() end))
    assert.matches("amin%(%): Expected reduction dim 0 to have non%-zero size.", h.err(function() return sk.zeros({0, 2}):amin(0) end))
    assert.matches("argmin%(%): Expected reduction dim to be specified for input.numel%(%) == 0.", h.err(function() return sk.zeros({0}):argmin() end))
    assert.matches("max%(%): Expected reduction dim 1 to have non%-zero size.", h.err(function() return sk.zeros({2, 0}):max(1) end))
    local v, i = sk.zeros({0, 3}):max(1)
    assert.same({0}, v:shape())
    assert.same({0}, i:shape())
    assert.same({0}, sk.zeros({2, 0}):amin(0):shape())
    assert.matches("argument .dim.: dimension out of range", h.err(function() return x:max(2) end))
  end)
  it("read non-contiguous and expanded inputs", function()
    local v, i = x:t():max(0)
    assert.same(ref_reduce(rows, {3, 4}, {1}, first(fmax)), v:totable())
    assert.same(ref_reduce(rows, {3, 4}, {1}, second(fmax)), i:totable())
    assert.same(ref_reduce(rows, {3, 4}, {1}, second(fmin)), x:t():argmin(0):totable())
    assert.same({1, 2, 3}, x:narrow(1, 1, 2):amin(1):totable())
    assert.equal(0, T({2.0}):expand(5):argmin():item())
  end)
  -- The outs keep PyTorch's names (max, max_values; min, min_indices); the Lua binding
  -- reaches out overloads through an 'out' option only, so these go through sk.call.
  it("write out tensors (values and indices) and check their dtypes", function()
    local v, i = sk.empty({0}), sk.empty({0}, {dtype = "int64"})
    local rv, ri = sk.call("aten::max.dim_max", x, 1, {max = v, max_values = i})
    assert.equal(v, rv)
    assert.equal(i, ri)
    assert.same({4, 9, 9}, v:totable())
    assert.same({2, 1, 3}, i:totable())
    local mv, mi = sk.empty({0}), sk.empty({0}, {dtype = "int64"})
    sk.call("aten::min.dim_min", x, 0, {min = mv, min_indices = mi})
    assert.same({3, 1, 2, 1}, mv:totable())
    assert.same({0, 0, 1, 0}, mi:totable())
    assert.matches("argument 'max_values' has dtype int32, expected int64",
      h.err(sk.call, "aten::max.dim_max", x, 1, {max = sk.empty({0}), max_values = sk.empty({0}, {dtype = "int32"})}))
    local o = sk.empty({0}, {dtype = "int64"})
    sk.argmin(x, 1, {out = o})
    assert.same({1, 2, 1}, o:totable())
    local a = sk.empty({0})
    sk.amin(x, 0, {out = a})
    assert.same({3, 1, 2, 1}, a:totable())
  end)
  it("run on Meta tensors", function()
    local M = sk.empty({2, 3}, {device = "meta"})
    local v, i = M:max(1, true)
    assert.same({2, 1}, v:shape())
    assert.equal("float32", v:dtype())
    assert.equal("int64", i:dtype())
    assert.same({}, M:min():shape())
    assert.same({3}, M:amin(0):shape())
    assert.equal("int64", M:argmin(0):dtype())
  end)
end)

describe("all and any", function()
  it("test every element, over everything or one dim", function()
    local b = T({{true, false, true}, {true, true, true}})
    assert.is_false(b:all():item())
    assert.is_true(b:any():item())
    assert.same({true, false, true}, b:all(0):totable())
    assert.same({false, true}, b:all(1):totable())
    assert.same({true, true}, b:any(1):totable())
    assert.same({{false}, {true}}, b:all(1, true):totable())
    assert.same({{false}, {true}}, sk.all(b, {dim = -1, keepdim = true}):totable())
  end)
  it("give bool results, uint8 for uint8 inputs", function()
    for _, dt in ipairs({ "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" }) do
      local t = T({{0, 2}, {3, 4}}, {dtype = dt})
      assert.equal("bool", t:all():dtype())
      assert.same({false, true}, t:all(1):totable())
      assert.same({true, true}, t:any(0):totable())
    end
    local u = T({0, 5}, {dtype = "uint8"})
    assert.equal("uint8", u:all():dtype())
    assert.equal(0, u:all():item())
    assert.equal(1, u:any():item())
    assert.is_true(T({nan, 1}):all():item())
    assert.is_true(T({-0.5, 0.0}):any():item())
  end)
  it("are true and false for empty inputs, and reduce 0-dim tensors", function()
    assert.is_true(sk.zeros({0}):all():item())
    assert.is_false(sk.zeros({0}):any():item())
    assert.same({true, true}, sk.zeros({2, 0}):all(1):totable())
    assert.is_true(T(3):all():item())
    assert.is_false(T(0):any(0):item())
  end)
  it("read non-contiguous inputs, write bool or uint8 outs and refuse others", function()
    local t = T({{1, 0}, {1, 1}})
    assert.same({true, false}, t:t():all(1):totable())
    assert.same({false, true}, t:narrow(1, 1, 1):all(1):totable())
    local o = sk.empty({0}, {dtype = "bool"})
    sk.all(t, 0, {out = o})
    assert.same({true, false}, o:totable())
    local u = sk.empty({}, {dtype = "uint8"})
    sk.any(t, {out = u})
    assert.equal(1, u:item())
    assert.matches("all only supports bool tensor for result, got: Float",
      h.err(sk.all, t, {out = sk.empty({})}))
    assert.matches("any only supports bool tensor for result, got: Long",
      h.err(sk.any, t, 0, {out = sk.empty({2}, {dtype = "int64"})}))
  end)
  it("run on Meta tensors", function()
    local M = sk.empty({2, 3}, {device = "meta", dtype = "uint8"})
    assert.equal("uint8", M:all():dtype())
    assert.same({2}, M:any(1):shape())
    assert.equal("bool", sk.empty({2}, {device = "meta"}):any():dtype())
  end)
end)

describe("logsumexp", function()
  local rows = random_table({3, 5}, 7, -5, 5)
  local x = T(rows, {dtype = "float64"})
  it("matches log(sum(exp)) over dims, with keepdim", function()
    h.assert_close(x:logsumexp(1):totable(), ref_reduce(rows, {3, 5}, {1}, flse), 1e-12)
    h.assert_close(x:logsumexp(0):totable(), ref_reduce(rows, {3, 5}, {0}, flse), 1e-12)
    h.assert_close(x:logsumexp({0, 1}):item(), ref_reduce(rows, {3, 5}, {}, flse), 1e-12)
    assert.same({3, 1}, x:logsumexp(1, true):shape())
    h.assert_close(x:t():logsumexp(0):totable(), ref_reduce(rows, {3, 5}, {1}, flse), 1e-12)
  end)
  it("is stable for large values and handles infinities and NaN", function()
    h.assert_close(T({1000.0, 1000.0}):logsumexp(0):item(), 1000 + math.log(2), 1e-6)
    h.assert_close(T({-1000.0, -1000.0}):logsumexp(0):item(), -1000 + math.log(2), 1e-6)
    assert.equal(-inf, T({-inf, -inf}):logsumexp(0):item())
    assert.equal(inf, T({inf, 1}):logsumexp(0):item())
    assert.equal(inf, T({{inf, 1}, {inf, inf}}):t():logsumexp(0):totable()[1])
    local v = T({nan, 1}):logsumexp(0):item()
    assert.is_true(v ~= v)
    assert.equal(-inf, sk.zeros({0}):logsumexp(0):item())
  end)
  it("promotes integers to float32 and keeps floating dtypes", function()
    local r = T({1, 2, 3}):logsumexp(0)
    assert.equal("float32", r:dtype())
    h.assert_close(r:item(), math.log(math.exp(1) + math.exp(2) + math.exp(3)), 1e-6)
    for _, dt in ipairs(FLOATS) do assert.equal(dt, T({1, 2}, {dtype = dt}):logsumexp(0):dtype()) end
  end)
  it("writes a floating out and refuses an integer one; runs on Meta", function()
    local o = sk.empty({0}, {dtype = "float64"})
    sk.logsumexp(x, 1, {out = o})
    h.assert_close(o:totable(), ref_reduce(rows, {3, 5}, {1}, flse), 1e-12)
    assert.matches("logsumexp%(%): Expected floating point type for result tensor, but got: Long",
      h.err(sk.logsumexp, x, 1, {out = sk.empty({3}, {dtype = "int64"})}))
    local M = sk.empty({2, 3}, {device = "meta", dtype = "int32"})
    assert.equal("float32", M:logsumexp(1):dtype())
    assert.same({2}, M:logsumexp(1):shape())
  end)
end)

describe("cumsum and cumprod", function()
  local rows = { { 1, 2, 3 }, { 4, 5, 6 } }
  local x = T(rows, {dtype = "float32"})
  it("scan along a dim, negative dims included", function()
    assert.same({{1, 3, 6}, {4, 9, 15}}, x:cumsum(1):totable())
    assert.same({{1, 2, 3}, {5, 7, 9}}, x:cumsum(0):totable())
    assert.same({{1, 2, 6}, {4, 20, 120}}, x:cumprod(-1):totable())
    assert.same({{1, 2, 3}, {4, 10, 18}}, sk.cumprod(x, -2):totable())
  end)
  it("turn integers and bools into int64, or into the dtype asked for", function()
    local i = T({100, 100, 100}, {dtype = "int8"})
    assert.equal("int64", i:cumsum(0):dtype())
    assert.same({100, 200, 300}, i:cumsum(0):totable())
    assert.same({100, -56, 44}, i:cumsum(0, {dtype = "int8"}):totable())
    assert.same({1, 2, 2}, T({true, true, false}):cumsum(0):totable())
    assert.equal("float64", x:cumsum(1, {dtype = "float64"}):dtype())
    for _, dt in ipairs(FLOATS) do
      local r = T({1, 2, 3}, {dtype = dt}):cumprod(0)
      assert.equal(dt, r:dtype())
      assert.same({1, 2, 6}, r:totable())
    end
  end)
  it("write in place (keeping self's dtype) and into out", function()
    local a = T({1, 2, 3}, {dtype = "int32"})
    local v0 = a:version()
    assert.equal(a, a:cumsum_(0))
    assert.same({1, 3, 6}, a:totable())
    assert.equal("int32", a:dtype())
    assert.equal(v0 + 1, a:version())
    local b = T({{1.0, 2.0}, {3.0, 4.0}})
    b:t():cumprod_(1)
    assert.same({{1, 2}, {3, 8}}, b:totable())
    local o = sk.empty({0}, {dtype = "int64"})
    assert.equal(o, sk.cumsum(T({1, 2, 3}), 0, {out = o}))
    assert.same({1, 3, 6}, o:totable())
    assert.matches("argument 'self' has dtype int32, but the in%-place result has dtype int64",
      h.err(function() return T({1, 2}, {dtype = "int32"}):cumsum_(0, {dtype = "int64"}) end))
  end)
  it("read non-contiguous inputs, scan wide outer dims in blocks, keep 0-dim and empty shapes", function()
    assert.same({{1, 4}, {3, 9}, {6, 15}}, x:t():cumsum(0):totable())
    assert.same({{2, 5}, {5, 11}}, x:narrow(1, 1, 2):cumsum(1):totable())
    assert.same({2, 4, 6}, T({2.0}):expand(3):cumsum(0):totable())
    local w = sk.ones({3, 1500})
    local c = w:cumsum(0)
    assert.same({1500}, c:select(0, 2):shape())
    assert.equal(3 * 1500 * 2, c:sum():item())
    assert.equal(3, c:select(1, 1499):select(0, 2):item())
    assert.equal(5, T(5.0):cumsum(0):item())
    assert.same({}, T(5.0):cumprod(-1):shape())
    assert.same({0, 3}, sk.zeros({0, 3}):cumsum(1):shape())
    assert.matches("argument .dim.: dimension out of range", h.err(function() return x:cumsum(2) end))
  end)
  it("run on Meta tensors", function()
    local M = sk.empty({2, 3}, {device = "meta", dtype = "int16"})
    assert.equal("int64", M:cumsum(1):dtype())
    assert.same({2, 3}, M:cumprod(0):shape())
  end)
end)

describe("reduction strategies", function()
  it("agree across rows, columns, split chunks and threads", function()
    local nr, nc = 37, 1800
    local rows = random_table({nr, nc}, 21)
    local x = T(rows, {dtype = "float64"})
    local cols, flat = {}, {}
    for j = 1, nc do cols[j] = {} end
    for i = 1, nr do
      for j = 1, nc do cols[j][i] = rows[i][j]; flat[#flat + 1] = rows[i][j] end
    end
    local function over_cols(f) local r = {} for j = 1, nc do r[j] = f(cols[j]) end return r end
    -- over dim 0 of a contiguous tensor: column blocks; of its transpose: rows
    h.assert_close(x:sum(0):totable(), over_cols(fsum), 1e-9)
    h.assert_close(x:t():sum(1):totable(), over_cols(fsum), 1e-9)
    h.assert_close(x:var(0):totable(), over_cols(fvar(1)), 1e-9)
    h.assert_close(x:t():var(1):totable(), over_cols(fvar(1)), 1e-9)
    h.assert_close(x:amin(0):totable(), over_cols(first(fmin)), 0)
    assert.same(over_cols(second(fmax)), x:argmax(0):totable())
    local v, i = x:min(0)
    assert.same(over_cols(second(fmin)), i:totable())
    h.assert_close(v:totable(), over_cols(first(fmin)), 0)
    h.assert_close(x:logsumexp(0):totable(), over_cols(flse), 1e-9)
    h.assert_close(x:norm(3, 0):totable(), over_cols(fnorm(3)), 1e-9)
    h.assert_close(x:prod(0):totable(), over_cols(fprod), 1e-9)
    -- one output over 66600 elements: chunks reduced apart and combined in order
    h.assert_close(x:sum():item(), fsum(flat), 1e-9)
    h.assert_close(x:var():item(), fvar(1)(flat), 1e-9)
    h.assert_close(x:logsumexp({0, 1}):item(), flse(flat), 1e-9)
    h.assert_close(x:norm(1):item(), fnorm(1)(flat), 1e-9)
    local mx = fmax(flat)
    assert.equal(mx[2], x:argmax():item())
    assert.equal(mx[1], x:max():item())
    local nt = sk.get_num_threads()
    local before = { x:sum(1):totable(), x:var():item(), x:sum():item() }
    sk.set_num_threads(1)
    local after = { x:sum(1):totable(), x:var():item(), x:sum():item() }
    sk.set_num_threads(nt)
    assert.same(before, after)
  end)
end)
