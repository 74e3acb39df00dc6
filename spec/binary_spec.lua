-- spec/binary_spec.lua — pointwise binary and ternary ops: fmod, pow's Scalar variants, atan2,
-- hypot, maximum, minimum, logical_*, bitwise_*, shifts, Scalar comparisons, lerp, addcmul,
-- addcdiv, clamp by tensors, clamp_min, clamp_max. Expected values come from plain Lua.
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local FLOATS = { "float16", "bfloat16", "float32", "float64" }
local INTS = { "uint8", "int8", "int16", "int32", "int64" }
local BITS = { uint8 = 8, int8 = 8, int16 = 16, int32 = 32, int64 = 64 }
local NAN = 0 / 0

-- f applied elementwise to equal-length lists (or a list and a number, either side).
local function map(f, a, b, c)
  local n = math.max(type(a) == "table" and #a or 1, type(b) == "table" and #b or 1, type(c) == "table" and #c or 1)
  local function at(x, i)
    if type(x) == "table" then return x[i] end
    return x
  end
  local r = {}
  for i = 1, n do r[i] = f(at(a, i), at(b, i), at(c, i)) end
  return r
end

-- A Lua integer wrapped into dtype dt's range, as C stores it.
local function wrap(v, dt)
  local bits = BITS[dt]
  if bits == 64 then return v end
  v = v & ((1 << bits) - 1)
  if dt ~= "uint8" and v >= 1 << (bits - 1) then v = v - (1 << bits) end
  return v
end

local function is_nan(x) return x ~= x end

local function meta(shape, dtype) return sk.empty(shape, { device = "meta", dtype = dtype }) end

describe("fmod", function()
  it("takes the sign of the dividend, on every integer and float dtype", function()
    local a, b = { 7, -7, 7, -7, 6 }, { 3, 3, -3, -3, 4 }
    for _, dt in ipairs(INTS) do
      local x, y = T(dt == "uint8" and { 7, 9, 200 } or a, { dtype = dt }), T(dt == "uint8" and { 3, 4, 7 } or b, { dtype = dt })
      local r = sk.fmod(x, y)
      assert.equal(dt, r:dtype())
      assert.same(map(math.fmod, x:totable(), y:totable()), r:totable())
    end
    for _, dt in ipairs(FLOATS) do
      local x, y = T({ 7.5, -7.5, 7.5, -7.5, 1.0 }, { dtype = dt }), T({ 2.0, 2.0, -2.0, -2.0, 0.0 }, { dtype = dt })
      local r = x:fmod(y):totable()
      assert.same({ 1.5, -1.5, 1.5, -1.5 }, { r[1], r[2], r[3], r[4] })
      assert.is_true(is_nan(r[5]))
    end
  end)
  it("takes a Scalar, promoting like a wrapped number", function()
    local r = sk.fmod(T({ 7, -7 }), 2.5)
    assert.equal("float32", r:dtype())
    assert.same({ 2, -2 }, r:totable())
    assert.equal("int32", sk.fmod(T({ 7 }, { dtype = "int32" }), 2):dtype())
    assert.same({ 1, -1 }, T({ 7, -7 }):fmod(3):totable())
  end)
  it("has in-place and out variants for both overloads", function()
    local a = T({ 7.0, -7.0 })
    assert.equal(a, a:fmod_(T({ 4.0 })))
    assert.same({ 3, -3 }, a:totable())
    a:fmod_(2)
    assert.same({ 1, -1 }, a:totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.fmod(T({ 9, -9 }), T({ 4, 4 }), { out = out }))
    assert.same({ 1, -1 }, out:totable())
    sk.fmod(T({ 9, -9 }), 5, { out = out })
    assert.same({ 4, -4 }, out:totable())
  end)
  it("refuses integer division by zero, never traps on INT_MIN by -1", function()
    assert.matches("sk.fmod: ZeroDivisionError .*argument 'other'", h.err(sk.fmod, T({ 1, 2 }), T({ 1, 0 })))
    assert.matches("ZeroDivisionError", h.err(sk.fmod, T({ 1, 2 }), 0))
    local a = T({ 1, 2 })
    h.err(function() return a:fmod_(0) end)
    assert.same({ 1, 2 }, a:totable())
    assert.same({ 0 }, sk.fmod(T({ math.mininteger }), -1):totable())
    assert.same({ 0 }, sk.fmod(T({ -128 }, { dtype = "int8" }), T({ -1 }, { dtype = "int8" })):totable())
    assert.same({ 0 }, sk.fmod(sk.empty({ 0 }, { dtype = "int64" }), T({ 0 })):shape())
  end)
  it("refuses bool, naming the argument", function()
    assert.matches("sk.fmod: \"fmod_cpu\" not implemented for 'Bool' %(argument 'self' has dtype bool%)",
      h.err(sk.fmod, T({ true }), T({ true })))
  end)
end)

describe("pow's Scalar variants", function()
  it("pow_ with a Scalar exponent, out with a Scalar on either side", function()
    local a = T({ 1.0, 2.0, 3.0 })
    assert.equal(a, a:pow_(2))
    assert.same({ 1, 4, 9 }, a:totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.pow(T({ 2, 3 }), 3, { out = out }))
    assert.same({ 8, 27 }, out:totable())
    assert.equal(out, sk.pow(2, T({ 2, 3 }), { out = out }))
    assert.same({ 4, 8 }, out:totable())
    assert.matches("can't be cast to the desired output type int64", h.err(sk.pow, T({ 2, 3 }), 0.5, { out = out }))
    assert.matches("can't be cast", h.err(function() return T({ 1, 2 }):pow_(0.5) end))
  end)

  it("takes PyTorch's special cases for 1, 2, 3, 0.5, -0.5, -1, -2 with their signed zeros and NaNs", function()
    -- PyTorch 1.13's values (x*x, sqrt, 1/sqrt ...), where plain pow would differ: pow(-0, 0.5)
    -- is +0 and pow(-inf, 0.5) is +inf, but sqrt gives -0 and NaN.
    local inf, nan = math.huge, 0 / 0
    local x = { -inf, -0.0, 0.0, -4.0, 3.0, nan, inf }
    local want = {
      [1] = { -inf, -0.0, 0.0, -4.0, 3.0, nan, inf },
      [2] = { inf, 0.0, 0.0, 16.0, 9.0, nan, inf },
      [3] = { -inf, -0.0, 0.0, -64.0, 27.0, nan, inf },
      [0.5] = { nan, -0.0, 0.0, nan, math.sqrt(3), nan, inf },
      [-0.5] = { nan, -inf, inf, nan, 1 / math.sqrt(3), nan, 0.0 },
      [-1] = { -0.0, -inf, inf, -0.25, 1 / 3, nan, 0.0 },
      [-2] = { 0.0, inf, inf, 0.0625, 1 / 9, nan, 0.0 },
    }
    local function same(a, b) -- bit-for-bit up to float32 rounding: NaN = NaN, -0 ~= +0
      if a ~= a or b ~= b then return a ~= a and b ~= b end
      if b == 0 or b == math.huge or b == -math.huge then return a == b and 1 / a == 1 / b end
      return math.abs(a - b) <= 1e-7 * math.abs(b)
    end
    for _, dt in ipairs { "float32", "float64" } do
      for e, w in pairs(want) do
        for _, exponent in ipairs { e, T(e, { dtype = dt }) } do
          local got = T(x, { dtype = dt }):pow(exponent):totable()
          for i = 1, #x do
            assert(same(got[i], w[i]), string.format("%s pow(%s, %s) = %s, want %s", dt, x[i], e, got[i], w[i]))
          end
        end
      end
    end
    assert.same({ 9 }, T({ 3 }):pow(2):totable()) -- integers keep their own loop
    assert.equal("int64", T({ 3 }):pow(2):dtype())
  end)
end)

describe("atan2 and hypot", function()
  it("atan2 promotes integers to float32 and follows the quadrants", function()
    local y, x = { 1, 1, -1, -1, 0 }, { 1, -1, 1, -1, -1 }
    local r = sk.atan2(T(y), T(x))
    assert.equal("float32", r:dtype())
    h.assert_close(r:totable(), map(math.atan, y, x))
    assert.equal("float64", sk.atan2(T(y, { dtype = "float64" }), T(x, { dtype = "int32" })):dtype())
    for _, dt in ipairs(FLOATS) do
      h.assert_close(T({ 1, -1 }, { dtype = dt }):atan2(T({ 2, 2 }, { dtype = dt })):totable(), map(math.atan, { 1, -1 }, 2), 1e-2)
    end
    local a = T({ 1.0, -1.0 })
    a:atan2_(T({ 0.0 }))
    h.assert_close(a:totable(), { math.pi / 2, -math.pi / 2 })
    assert.matches("result type float32 can't be cast", h.err(function() return T({ 1 }):atan2_(T({ 1 })) end))
  end)
  it("hypot on float dtypes only", function()
    for _, dt in ipairs(FLOATS) do
      local r = sk.hypot(T({ 3, 5, -8 }, { dtype = dt }), T({ 4, 12, 6 }, { dtype = dt }))
      assert.equal(dt, r:dtype())
      assert.same({ 5, 13, 10 }, r:totable())
    end
    local a = T({ 3.0 })
    a:hypot_(T({ 4.0 }))
    assert.same({ 5 }, a:totable())
    assert.matches("sk.hypot: \"hypot_cpu\" not implemented for 'Long' %(argument 'self' has dtype int64%)",
      h.err(sk.hypot, T({ 3 }), T({ 4 })))
    assert.matches("\"hypot_cpu\" not implemented for 'Long' %(argument 'other' has dtype int64%)", h.err(sk.hypot, T({ true }), T({ 4 })))
  end)
end)

describe("maximum and minimum", function()
  it("propagate NaN from either side and promote", function()
    local r = sk.maximum(T({ 1.0, NAN, 3.0, -1.0 }), T({ 2.0, 1.0, NAN, -2.0 })):totable()
    assert.equal(2, r[1]); assert.is_true(is_nan(r[2])); assert.is_true(is_nan(r[3])); assert.equal(-1, r[4])
    r = sk.minimum(T({ 1.0, NAN, 3.0, -1.0 }), T({ 2.0, 1.0, NAN, -2.0 })):totable()
    assert.equal(1, r[1]); assert.is_true(is_nan(r[2])); assert.is_true(is_nan(r[3])); assert.equal(-2, r[4])
    assert.equal("float32", sk.maximum(T({ 1 }), T({ 0.5 })):dtype())
    assert.same({ 1, 2.5 }, sk.maximum(T({ 1, 2 }), T({ 0.5, 2.5 })):totable())
  end)
  it("work on every integer dtype and on bool (or / and)", function()
    for _, dt in ipairs(INTS) do
      local a, b = T({ 1, 5, 0 }, { dtype = dt }), T({ 3, 2, 0 }, { dtype = dt })
      assert.same({ 3, 5, 0 }, a:maximum(b):totable())
      assert.same({ 1, 2, 0 }, a:minimum(b):totable())
    end
    assert.same({ -1, math.mininteger }, sk.minimum(T({ -1, 5 }), T({ 3, math.mininteger })):totable())
    local p, q = T({ true, true, false, false }), T({ true, false, true, false })
    assert.same({ true, true, true, false }, sk.maximum(p, q):totable())
    assert.same({ true, false, false, false }, sk.minimum(p, q):totable())
    assert.equal("bool", sk.maximum(p, q):dtype())
  end)
  it("write into out", function()
    local out = sk.zeros({ 2 }, { dtype = "float64" })
    sk.maximum(T({ 1, 4 }), T({ 3, 2 }), { out = out })
    assert.same({ 3, 4 }, out:totable())
  end)
end)

describe("logical_and / logical_or / logical_xor", function()
  local a, b = { 0, 1, 2, 0 }, { 0, 0, -3, 5 }
  local truth = function(x) return x ~= 0 end
  local ref = {
    logical_and = function(x, y) return truth(x) and truth(y) end,
    logical_or = function(x, y) return truth(x) or truth(y) end,
    logical_xor = function(x, y) return truth(x) ~= truth(y) end,
  }
  it("give bool for any input dtypes", function()
    for op, f in pairs(ref) do
      for _, dt in ipairs { "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" } do
        local r = sk[op](T(a, { dtype = dt }), T(b, { dtype = "float32" }))
        assert.equal("bool", r:dtype())
        assert.same(map(f, a, b), r:totable())
      end
      assert.same(map(f, { 0, 1, 2, 0 }, { 0, 0, 3, 5 }), sk[op](T({ 0, 1, 2, 0 }, { dtype = "uint8" }), T({ false, false, true, true })):totable())
    end
    assert.same({ true, false }, sk.logical_and(T({ NAN, -0.0 }), T({ 1.0, 1.0 })):totable())
    assert.same({ false, true }, sk.logical_or(T({ 0, 1 }), 0):totable())
  end)
  it("in place keep self's dtype; out may have any dtype", function()
    local x = T({ 0.0, 2.0, 3.0 })
    assert.equal(x, x:logical_and_(T({ 1, 1, 0 })))
    assert.equal("float32", x:dtype())
    assert.same({ 0, 1, 0 }, x:totable())
    local y = T({ 0, 7 }, { dtype = "int32" })
    y:logical_xor_(T({ true, true }))
    assert.same({ 1, 0 }, y:totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    sk.logical_or(T({ 0, 0, 3 }), T({ 0, 2, 0 }), { out = out })
    assert.same({ 0, 1, 1 }, out:totable())
    local bout = sk.empty({ 3 }, { dtype = "bool" })
    sk.logical_or(T({ 0, 0, 3 }), T({ 0, 2, 0 }), { out = bout })
    assert.same({ false, true, true }, bout:totable())
  end)
end)

describe("bitwise_and / bitwise_or / bitwise_xor", function()
  local ref = { bitwise_and = function(x, y) return x & y end, bitwise_or = function(x, y) return x | y end,
                bitwise_xor = function(x, y) return x ~ y end }
  local bref = { bitwise_and = function(x, y) return x and y end, bitwise_or = function(x, y) return x or y end,
                 bitwise_xor = function(x, y) return x ~= y end }
  it("compute on every integer dtype, with a Tensor or a Scalar on either side", function()
    for op, f in pairs(ref) do
      for _, dt in ipairs(INTS) do
        local a, b = dt == "uint8" and { 12, 255, 0 } or { 12, -1, -128 }, { 10, 85, 127 }
        local x, y = T(a, { dtype = dt }), T(b, { dtype = dt })
        local want = map(function(p, q) return wrap(f(p, q), dt) end, a, b)
        assert.equal(dt, sk[op](x, y):dtype())
        assert.same(want, sk[op](x, y):totable())
        assert.same(want, x[op](x, y):totable())
        assert.same(map(function(p) return wrap(f(p, 6), dt) end, a), sk[op](x, 6):totable())
        assert.equal(dt, sk[op](x, 6):dtype())
        assert.same(map(function(p) return wrap(f(6, p), dt) end, a), sk[op](6, x):totable())
      end
    end
  end)
  it("compute on bool as logic", function()
    local p, q = { true, true, false, false }, { true, false, true, false }
    for op, f in pairs(bref) do
      local r = sk[op](T(p), T(q))
      assert.equal("bool", r:dtype())
      assert.same(map(f, p, q), r:totable())
      assert.same(map(function(x) return f(x, true) end, p), sk[op](T(p), true):totable())
    end
    assert.equal("int64", sk.bitwise_and(T({ true }), T({ 3 })):dtype())
  end)
  it("have in-place and out variants for both overloads", function()
    local a = T({ 12, 10 }, { dtype = "int16" })
    assert.equal(a, a:bitwise_and_(T({ 6, 6 }, { dtype = "int16" })))
    assert.same({ 4, 2 }, a:totable())
    assert.equal(a, a:bitwise_or_(1))
    assert.same({ 5, 3 }, a:totable())
    a:bitwise_xor_(T({ 1 }, { dtype = "int16" }))
    assert.same({ 4, 2 }, a:totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.bitwise_xor(T({ 5, 3 }), T({ 1, 1 }), { out = out }))
    assert.same({ 4, 2 }, out:totable())
    assert.equal(out, sk.bitwise_and(T({ 5, 3 }), 1, { out = out }))
    assert.same({ 1, 1 }, out:totable())
  end)
  it("refuse float dtypes, naming the argument", function()
    assert.matches("sk.bitwise_and: \"bitwise_and_cpu\" not implemented for 'Float' %(argument 'self' has dtype float32%)",
      h.err(sk.bitwise_and, T({ 1.0 }), T({ 1 })))
    assert.matches("\"bitwise_or_cpu\" not implemented for 'Float' %(argument 'other' has dtype float64%)",
      h.err(sk.bitwise_or, T({ 1 }), 1.5))
    assert.matches("bitwise_xor_cpu", h.err(sk.bitwise_xor, T({ 1.0 }, { dtype = "float16" }), T({ 1 })))
    assert.matches("not implemented for 'Float'", h.err(sk.bitwise_and, meta({ 2 }), meta({ 2 }, "int64")))
  end)
end)

describe("bitwise_left_shift / bitwise_right_shift", function()
  -- PyTorch's rules: a count outside [0, bits) gives 0 to the left, the sign fill to the right.
  local function lshift(a, b, dt)
    if b < 0 or b >= BITS[dt] then return 0 end
    return wrap(a << b, dt)
  end
  local function rshift(a, b, dt)
    local bits = BITS[dt]
    if dt == "uint8" then return (b < 0 or b >= bits) and 0 or a >> b end
    if b < 0 or b >= bits - 1 then return a < 0 and -1 or 0 end
    return a // (1 << b)
  end
  it("follow PyTorch for every count, on every integer dtype", function()
    for _, dt in ipairs(INTS) do
      local bits = BITS[dt]
      local vals = dt == "uint8" and { 1, 255, 5, 128 } or { 1, -1, 5, dt == "int64" and math.mininteger or -(1 << (bits - 1)) }
      local counts = dt == "uint8" and { 0, 1, bits - 1, bits, bits + 1, 200 } or { 0, 1, bits - 2, bits - 1, bits, bits + 1, -1 }
      local a, b = {}, {}
      for _, v in ipairs(vals) do for _, c in ipairs(counts) do a[#a + 1], b[#b + 1] = v, c end end
      local x, y = T(a, { dtype = dt }), T(b, { dtype = dt })
      local lw, rw = {}, {}
      for i = 1, #a do
        local c = dt == "uint8" and wrap(b[i], "int8") or b[i] -- PyTorch reads the count as signed
        lw[i], rw[i] = lshift(a[i], c, dt), rshift(a[i], c, dt)
      end
      assert.same(lw, sk.bitwise_left_shift(x, y):totable())
      assert.same(rw, x:bitwise_right_shift(y):totable())
      assert.equal(dt, sk.bitwise_left_shift(x, 3):dtype())
    end
  end)
  it("take a Scalar on either side, in place and into out", function()
    assert.same({ 8, -8 }, sk.bitwise_left_shift(T({ 1, -1 }), 3):totable())
    assert.same({ 2, -2, -1 }, sk.bitwise_right_shift(T({ 16, -16, -1 }), 3):totable())
    assert.same({ 2, 4, 0 }, sk.bitwise_left_shift(1, T({ 1, 2, 64 })):totable())
    assert.same({ 32, 0 }, sk.bitwise_right_shift(64, T({ 1, 70 })):totable())
    local a = T({ 1, 2 }, { dtype = "int32" })
    assert.equal(a, a:bitwise_left_shift_(4))
    assert.same({ 16, 32 }, a:totable())
    a:bitwise_right_shift_(T({ 1, 2 }, { dtype = "int32" }))
    assert.same({ 8, 8 }, a:totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    sk.bitwise_left_shift(T({ 3 }), 2, { out = out })
    assert.same({ 12 }, out:totable())
    sk.bitwise_right_shift(T({ 12 }), T({ 2 }), { out = out })
    assert.same({ 3 }, out:totable())
  end)
  it("refuse bool and floats, naming the argument", function()
    assert.matches("sk.bitwise_left_shift: \"lshift_cpu\" not implemented for 'Bool' %(argument 'self' has dtype bool%)",
      h.err(sk.bitwise_left_shift, T({ true }), T({ true })))
    assert.matches("\"rshift_cpu\" not implemented for 'Float' %(argument 'other' has dtype float64%)",
      h.err(sk.bitwise_right_shift, T({ 1 }), 1.0))
  end)
end)

describe("comparisons with a Scalar", function()
  local ops = { eq = function(a, b) return a == b end, ne = function(a, b) return a ~= b end,
                lt = function(a, b) return a < b end, le = function(a, b) return a <= b end,
                gt = function(a, b) return a > b end, ge = function(a, b) return a >= b end }
  it("compare every dtype with an int, a float and NaN", function()
    for op, f in pairs(ops) do
      for _, dt in ipairs { "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" } do
        local x = T({ 1, 2, 3 }, { dtype = dt })
        assert.same(map(f, { 1, 2, 3 }, 2), sk[op](x, 2):totable())
        assert.same(map(f, { 1, 2, 3 }, 2.5), x[op](x, 2.5):totable())
      end
      assert.same(map(f, { 1.5, NAN }, NAN), sk[op](T({ 1.5, NAN }), NAN):totable())
      assert.same(map(f, { 1, 0 }, 1), sk[op](T({ true, false }), true):totable())
    end
  end)
  it("write into out and compare in place, keeping self's dtype", function()
    local out = sk.empty({ 0 }, { dtype = "bool" })
    assert.equal(out, sk.lt(T({ 1, 5 }), 3, { out = out }))
    assert.same({ true, false }, out:totable())
    local f = sk.empty({ 2 }, { dtype = "float32" })
    sk.ge(T({ 1, 5 }), 3, { out = f })
    assert.same({ 0, 1 }, f:totable())
    local a = T({ 1.0, 2.0, 3.0 })
    assert.equal(a, a:eq_(2))
    assert.equal("float32", a:dtype())
    assert.same({ 0, 1, 0 }, a:totable())
    local b = T({ 1, 2, 3 })
    assert.equal(b, b:gt_(T({ 2, 2, 2 })))
    assert.same({ 0, 0, 1 }, b:totable())
    for _, op in ipairs { "ne_", "lt_", "le_", "ge_" } do
      local c = T({ 1.0, 2.0, 3.0 })
      c[op](c, 2)
      assert.same(map(function(x) return ops[op:sub(1, 2)](x, 2) and 1 or 0 end, { 1, 2, 3 }), c:totable())
    end
  end)
end)

describe("lerp", function()
  local function lerp(a, b, w)
    if math.abs(w) < 0.5 then return a + w * (b - a) end
    return b - (b - a) * (1 - w)
  end
  it("with a Scalar or a Tensor weight, on every float dtype", function()
    for _, dt in ipairs(FLOATS) do
      local a, b = T({ 0, 1, -2, 4 }, { dtype = dt }), T({ 8, 5, 2, 4 }, { dtype = dt })
      assert.same(map(lerp, { 0, 1, -2, 4 }, { 8, 5, 2, 4 }, 0.25), sk.lerp(a, b, 0.25):totable())
      local w = { 0, 0.25, 0.75, 1 }
      assert.same(map(lerp, { 0, 1, -2, 4 }, { 8, 5, 2, 4 }, w), a:lerp(b, T(w, { dtype = dt })):totable())
      assert.equal(dt, sk.lerp(a, b, 0.5):dtype())
    end
    h.assert_close(sk.lerp(T({ 1.0 }), T({ 3.0 }), 2.0):totable(), { 5 })
  end)
  it("broadcast the weight and end, in place and into out", function()
    local a = T({ { 0.0, 0.0 }, { 4.0, 4.0 } })
    assert.same({ { 0, 2 }, { 4, 4 } }, sk.lerp(a, T({ 0.0, 8.0 }), T({ { 0.25 }, { 0.0 } })):totable())
    assert.equal(a, a:lerp_(T({ 8.0 }), 0.5))
    assert.same({ { 4, 4 }, { 6, 6 } }, a:totable())
    a:lerp_(T({ 0.0 }), T({ 0.5, 1.0 }))
    assert.same({ { 2, 0 }, { 3, 0 } }, a:totable())
    local out = sk.empty({ 0 })
    sk.lerp(T({ 0.0, 2.0 }), T({ 4.0, 6.0 }), 0.5, { out = out })
    assert.same({ 2, 4 }, out:totable())
    sk.lerp(T({ 0.0, 2.0 }), T({ 4.0, 6.0 }), T({ 0.0, 1.0 }), { out = out })
    assert.same({ 0, 6 }, out:totable())
  end)
  it("refuse mixed dtypes and integers, naming the argument", function()
    assert.matches("sk.lerp: expected dtype float32 for `end` but got dtype float64",
      h.err(sk.lerp, T({ 1.0 }), T({ 1.0 }, { dtype = "float64" }), 0.5))
    assert.matches("expected dtype float32 for `weight` but got dtype float64",
      h.err(sk.lerp, T({ 1.0 }), T({ 1.0 }), T({ 0.5 }, { dtype = "float64" })))
    assert.matches("\"lerp_kernel_scalar\" not implemented for 'Long' %(argument 'self' has dtype int64%)",
      h.err(sk.lerp, T({ 1 }), T({ 2 }), 0.5))
    assert.matches("\"lerp_kernel_tensor\" not implemented for 'Long'", h.err(sk.lerp, T({ 1 }), T({ 2 }), T({ 0 })))
  end)
end)

describe("addcmul and addcdiv", function()
  it("addcmul: self + value * tensor1 * tensor2 on every numeric dtype", function()
    for _, dt in ipairs(INTS) do
      local r = sk.addcmul(T({ 1, 2 }, { dtype = dt }), T({ 3, 4 }, { dtype = dt }), T({ 5, 6 }, { dtype = dt }))
      assert.equal(dt, r:dtype())
      assert.same({ 16, 26 }, r:totable())
    end
    assert.same({ wrap(1 + 2 * 100 * 100, "int8") }, sk.addcmul(T({ 1 }, { dtype = "int8" }), T({ 100 }, { dtype = "int8" }),
      T({ 100 }, { dtype = "int8" }), { value = 2 }):totable())
    for _, dt in ipairs(FLOATS) do
      local r = sk.addcmul(T({ 1, 2 }, { dtype = dt }), T({ 3, 4 }, { dtype = dt }), T({ 0.5, 6 }, { dtype = dt }), { value = -0.5 })
      assert.same({ 1 - 0.5 * 3 * 0.5, 2 - 0.5 * 4 * 6 }, r:totable())
    end
    assert.equal("float32", sk.addcmul(T({ 1 }), T({ 1.5 }), T({ 2 })):dtype())
    assert.matches("sk.addcmul: \"addcmul_cpu_out\" not implemented for 'Bool' %(argument 'self' has dtype bool%)",
      h.err(sk.addcmul, T({ true }), T({ true }), T({ true })))
  end)
  it("addcdiv: self + value * tensor1 / tensor2, floats only", function()
    for _, dt in ipairs(FLOATS) do
      local r = sk.addcdiv(T({ 1, 2 }, { dtype = dt }), T({ 3, 4 }, { dtype = dt }), T({ 2, 8 }, { dtype = dt }), { value = 2 })
      assert.same({ 1 + 2 * 3 / 2, 2 + 2 * 4 / 8 }, r:totable())
    end
    local r = sk.addcdiv(T({ 1 }), T({ 3 }), T({ 2.0 }))
    assert.equal("float32", r:dtype())
    assert.same({ 2.5 }, r:totable())
    assert.matches("sk.addcdiv: Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true division of tensor1 and tensor2%.",
      h.err(sk.addcdiv, T({ 1.0 }), T({ 3 }), T({ true })))
  end)
  it("broadcast, write in place and into out", function()
    local a = T({ { 1.0, 1.0 }, { 2.0, 2.0 } })
    assert.same({ { 4, 7 }, { 5, 8 } }, sk.addcmul(a, T({ 1.0, 2.0 }), T({ 3.0 })):totable())
    assert.equal(a, a:addcmul_(T({ { 1.0 }, { 2.0 } }), T({ 1.0, 2.0 }), { value = 2 }))
    assert.same({ { 3, 5 }, { 6, 10 } }, a:totable())
    a:addcdiv_(T({ 2.0 }), T({ 4.0 }))
    assert.same({ { 3.5, 5.5 }, { 6.5, 10.5 } }, a:totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    sk.addcmul(T({ 1, 2 }), T({ 2 }), T({ 3 }), { out = out })
    assert.same({ 7, 8 }, out:totable())
    local fout = sk.empty({ 2 }, { dtype = "float64" })
    sk.addcdiv(T({ 1.0, 2.0 }), T({ 1.0 }), T({ 4.0 }), { value = 4, out = fout })
    assert.same({ 2, 3 }, fout:totable())
    assert.matches("can't be cast to the desired output type int64",
      h.err(sk.addcdiv, T({ 1.0 }), T({ 1.0 }), T({ 4.0 }), { out = out }))
  end)
end)

describe("clamp by tensors, clamp_min, clamp_max", function()
  local function clamp(x, lo, hi)
    if x ~= x or (lo and lo ~= lo) or (hi and hi ~= hi) then return NAN end
    if lo and x < lo then x = lo end
    if hi and x > hi then x = hi end
    return x
  end
  local function same_nan(want, got)
    assert.equal(#want, #got)
    for i = 1, #want do
      if is_nan(want[i]) then assert.is_true(is_nan(got[i]), "element " .. i) else assert.equal(want[i], got[i]) end
    end
  end
  it("clamp with tensor bounds: NaN from either side, min > max gives max", function()
    local x, lo, hi = { 1, 5, 9, NAN, 4, 4, 3 }, { 2, 2, 2, 0, NAN, 0, 5 }, { 6, 6, 6, 1, 9, NAN, 1 }
    same_nan(map(clamp, x, lo, hi), sk.clamp(T(x), T(lo), T(hi)):totable())
    same_nan(map(function(a, b) return clamp(a, b) end, x, lo), sk.clamp(T(x), T(lo)):totable())
    same_nan(map(function(a, b) return clamp(a, nil, b) end, x, hi), T(x):clamp({ max = T(hi) }):totable())
    for _, dt in ipairs(INTS) do
      local r = sk.clamp(T({ 1, 5, 9, 3 }, { dtype = dt }), T({ 2, 2, 2, 5 }, { dtype = dt }), T({ 6 }, { dtype = dt }))
      assert.equal(dt, r:dtype())
      assert.same({ 2, 5, 6, 5 }, r:totable())
    end
    for _, dt in ipairs(FLOATS) do
      assert.same({ 2, 5, 6 }, sk.clamp(T({ 1, 5, 9 }, { dtype = dt }), T({ 2 }, { dtype = dt }), T({ 6 }, { dtype = dt })):totable())
    end
  end)
  it("clamp_min and clamp_max with a Scalar or a Tensor", function()
    local x = { 1, 5, 9, NAN }
    same_nan(map(function(a) return clamp(a, 4) end, x), sk.clamp_min(T(x), 4):totable())
    same_nan(map(function(a) return clamp(a, nil, 4) end, x), T(x):clamp_max(4):totable())
    same_nan({ NAN, NAN }, sk.clamp_min(T({ 1.0, 2.0 }), NAN):totable())
    same_nan({ 1, NAN }, sk.clamp_max(T({ 1.0, 2.0 }), T({ 3.0, NAN })):totable())
    same_nan({ 3, 5 }, sk.clamp_min(T({ 1.0, 5.0 }), T({ 3.0 })):totable())
    for _, dt in ipairs(INTS) do
      local t = T({ 1, 5, 9 }, { dtype = dt })
      assert.same({ 4, 5, 9 }, t:clamp_min(4):totable())
      assert.same({ 1, 5, 6 }, t:clamp_max(T({ 6 }, { dtype = dt })):totable())
      assert.equal(dt, t:clamp_max(6):dtype())
    end
    local r = sk.clamp_min(T({ 1, 5 }), 2.5)
    assert.equal("float32", r:dtype())
    assert.same({ 2.5, 5 }, r:totable())
  end)
  it("in place and into out; in-place promotion that cannot cast back is refused", function()
    local a = T({ 1.0, 5.0, 9.0 })
    assert.equal(a, a:clamp_(T({ 2.0 }), T({ 6.0 })))
    assert.same({ 2, 5, 6 }, a:totable())
    assert.equal(a, sk.clamp_min_(a, 3))
    assert.same({ 3, 5, 6 }, a:totable())
    a:clamp_max_(T({ 4.0, 4.0, 4.0 }))
    assert.same({ 3, 4, 4 }, a:totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    sk.clamp(T({ 1, 5, 9 }), T({ 2 }), nil, { out = out })
    assert.same({ 2, 5, 9 }, out:totable())
    sk.clamp_max(T({ 1, 5, 9 }), 4, { out = out })
    assert.same({ 1, 4, 4 }, out:totable())
    sk.clamp_min(T({ 1, 5, 9 }), T({ 6 }), { out = out })
    assert.same({ 6, 6, 9 }, out:totable())
    local i = T({ 1, 2 })
    assert.matches("result type float32 can't be cast to the desired output type int64", h.err(function() return i:clamp_min_(1.5) end))
    assert.matches("can't be cast", h.err(function() return i:clamp_(T({ 0.5 })) end))
    assert.same({ 1, 2 }, i:totable())
  end)
  it("refuse bool Scalar bounds, two bool tensor bounds, and no bound at all", function()
    assert.matches("sk.clamp: At least one of 'min' or 'max' must not be None",
      h.err(sk.clamp, T({ 1.0 }), nil, nil))
    assert.matches("\"clamp_min_cpu\" not implemented for 'Bool' %(argument 'self' has dtype bool%)",
      h.err(sk.clamp_min, T({ true }), false))
    assert.matches("\"clamp_max_scalar_cpu\" not implemented for 'Bool'", h.err(sk.clamp_max, T({ true }), false))
    assert.matches("\"clamp_cpu\" not implemented for 'Bool'", h.err(sk.clamp, T({ true }), T({ false }), T({ true })))
  end)
end)

describe("the binary family on any layout", function()
  -- A 3x4 int64 matrix and its transpose as a non-contiguous input.
  local m = sk.arange(12):view(3, 4)
  local mt = m:t()          -- [4, 3], non-contiguous
  local mv = m:totable()
  local function tr(t)
    local r = {}
    for j = 1, #t[1] do r[j] = {} for i = 1, #t do r[j][i] = t[i][j] end end
    return r
  end
  local function map2d(f, a, b, c)
    local r = {}
    for i = 1, #a do
      local function row(x)
        if type(x) == "table" then return x[i] end
        return x
      end
      r[i] = map(f, a[i], row(b), row(c))
    end
    return r
  end
  it("reads transposed, narrowed and expanded inputs", function()
    local t = tr(mv)
    assert.same(map2d(function(x, y) return x & y end, t, t), sk.bitwise_and(mt, mt:contiguous()):totable())
    assert.same(map2d(function(x) return x > 4 and x or 4 end, t), sk.maximum(mt, T({ 4 })):totable())
    assert.same(map2d(function(x) return x << 1 end, t), sk.bitwise_left_shift(mt, 1):totable())
    local nar = m:narrow(1, 1, 2)  -- [3, 2], rows of stride 4
    local nv = { { 1, 2 }, { 5, 6 }, { 9, 10 } }
    assert.same(map2d(math.fmod, nv, 4), sk.fmod(nar, 4):totable())
    assert.same(map2d(function(x) return x >= 5 end, nv), nar:ge(5):totable())
    local col = T({ { 1 }, { 2 }, { 3 } }):expand({ 3, 4 })
    assert.same(map2d(function(x, y) return x + 2 * y * x end, mv, { { 1, 1, 1, 1 }, { 2, 2, 2, 2 }, { 3, 3, 3, 3 } }),
      sk.addcmul(m, col, m, { value = 2 }):totable())
    local f = m:to("float32")
    assert.same({ { 2, 2, 2, 3 }, { 5, 5, 6, 7 }, { 8, 9, 9, 9 } },
      sk.clamp(f, T({ { 2.0 }, { 5.0 }, { 0.0 } }):expand({ 3, 4 }), T({ 9.0 }):expand({ 4 })):totable())
    assert.same(map2d(function(x) return x * 0.5 end, t), sk.lerp(f:t(), T({ 0.0 }):expand({ 4, 3 }), 0.5):totable())
  end)
  it("keeps empty and 0-dim shapes", function()
    local e = sk.empty({ 0, 3 }, { dtype = "int64" })
    assert.same({ 0, 3 }, sk.bitwise_xor(e, T({ 1, 2, 3 })):shape())
    assert.same({ 0, 3 }, sk.fmod(e, 0):shape())
    assert.same({ 0, 3 }, sk.logical_or(e, e):shape())
    assert.same({ 0, 3 }, sk.lerp(sk.empty({ 0, 3 }), sk.empty({ 3 }), 0.5):shape())
    assert.same({ 0, 3 }, sk.addcdiv(sk.empty({ 0, 3 }), sk.empty({ 1 }), sk.empty({ 3 })):shape())
    local s = T(5)
    assert.same({}, sk.fmod(s, 3):shape())
    assert.equal(2, sk.fmod(s, 3):item())
    assert.equal(4, sk.bitwise_and(s, T(6)):item())
    assert.equal(true, sk.lt(s, 6):item())
    assert.equal(5, sk.clamp_min(s, T(1)):item())
    assert.same({}, sk.hypot(T(3.0), T(4.0)):shape())
    assert.same({ 2 }, sk.maximum(T(3), T({ 1, 5 })):shape())
  end)
  it("runs past the parallel grain", function()
    local n = 70000
    local a = sk.arange(n)
    local r = sk.bitwise_and(a, 7)
    assert.same({ 0, 1, 7, 0 }, { r:select(0, 0):item(), r:select(0, 1):item(), r:select(0, 7):item(), r:select(0, n - 8):item() })
    assert.equal(n - 1, sk.maximum(a, T({ 0 })):select(0, n - 1):item())
  end)
end)

describe("meta tensors", function()
  -- Each case builds its inputs with mk(shape, dtype); the Meta result must match the CPU one.
  local cases = {
    { "fmod", function(mk) return sk.fmod(mk({ 2, 3 }, "int32"), mk({ 3 }, "int64")) end },
    { "fmod.Scalar", function(mk) return sk.fmod(mk({ 2, 3 }, "int32"), 2.5) end },
    { "atan2", function(mk) return sk.atan2(mk({ 2, 1 }, "int64"), mk({ 3 }, "int64")) end },
    { "hypot", function(mk) return sk.hypot(mk({ 3 }, "float64"), mk({ 2, 1 }, "float32")) end },
    { "maximum", function(mk) return sk.maximum(mk({ 3 }, "int8"), mk({ 2, 3 }, "float16")) end },
    { "minimum", function(mk) return sk.minimum(mk({ 3 }, "bool"), mk({ 3 }, "bool")) end },
    { "logical_xor", function(mk) return sk.logical_xor(mk({ 4, 1 }, "float32"), mk({ 2 }, "int64")) end },
    { "bitwise_or", function(mk) return sk.bitwise_or(mk({ 2, 2 }, "int16"), mk({ 2 }, "uint8")) end },
    { "bitwise_and.Scalar", function(mk) return sk.bitwise_and(mk({ 2 }, "bool"), true) end },
    { "bitwise_left_shift", function(mk) return sk.bitwise_left_shift(mk({ 2 }, "int32"), mk({ 3, 1 }, "int32")) end },
    { "bitwise_right_shift.Scalar", function(mk) return sk.bitwise_right_shift(mk({ 2 }, "int8"), 1) end },
    { "eq.Scalar", function(mk) return sk.eq(mk({ 2, 3 }, "float32"), 1) end },
    { "ge.Scalar", function(mk) return sk.ge(mk({ 3 }, "int64"), 1.5) end },
    { "lerp.Scalar", function(mk) return sk.lerp(mk({ 2, 3 }, "float32"), mk({ 3 }, "float32"), 0.5) end },
    { "lerp.Tensor", function(mk) return sk.lerp(mk({ 3 }, "float64"), mk({ 3 }, "float64"), mk({ 4, 1 }, "float64")) end },
    { "addcmul", function(mk) return sk.addcmul(mk({ 3 }, "int64"), mk({ 2, 1 }, "int32"), mk({ 3 }, "float32")) end },
    { "addcdiv", function(mk) return sk.addcdiv(mk({ 3 }, "float16"), mk({ 2, 1 }, "float16"), mk({ 3 }, "float16")) end },
    { "clamp.Tensor", function(mk) return sk.clamp(mk({ 3 }, "int32"), mk({ 2, 1 }, "int32"), mk({ 3 }, "float32")) end },
    { "clamp_min", function(mk) return sk.clamp_min(mk({ 3 }, "int32"), 2.5) end },
    { "clamp_max.Tensor", function(mk) return sk.clamp_max(mk({ 3 }, "int16"), mk({ 2, 1 }, "int16")) end },
  }
  local function cpu(shape, dtype)
    local z = sk.zeros(shape, { dtype = dtype })
    return dtype == "bool" and z or z + 1
  end
  it("give the CPU result's shape and dtype", function()
    h.assert_meta_like_cpu(cases, cpu, meta)
  end)
  it("check dtypes and shapes as on the CPU", function()
    assert.matches("not broadcastable", h.err(sk.logical_and, meta({ 2 }), meta({ 3 })))
    assert.matches("expected dtype float32 for `end`", h.err(sk.lerp, meta({ 2 }), meta({ 2 }, "float64"), 0.5))
    assert.matches("Integer division with addcdiv", h.err(sk.addcdiv, meta({ 2 }), meta({ 2 }, "int64"), meta({ 2 }, "int64")))
    assert.matches("lshift_cpu", h.err(sk.bitwise_left_shift, meta({ 2 }, "bool"), meta({ 2 }, "bool")))
    assert.equal("int64", sk.bitwise_left_shift(meta({ 2 }, "bool"), 1):dtype()) -- the wrapped int promotes bool
  end)
end)

describe("isclose", function()
  -- PyTorch 1.13's results for these calls (worked out from its definition and checked there)
  local inf, nan = math.huge, 0 / 0
  local a = T({ 1, 1 + 1e-6, inf, -inf, inf, nan, nan, 1e10 })
  local b = T({ 1, 1, inf, inf, -inf, nan, 1, 1.00001e10 })
  it("is |a - b| <= atol + rtol |b|, with infinities equal to themselves and NaN never close", function()
    assert.same({ true, true, true, false, false, false, false, false }, sk.isclose(a, b):totable())
    assert.same({ true, true, true, false, false, true, false, false }, a:isclose(b, { equal_nan = true }):totable())
    assert.same({ true, false, true, false, false, false, false, false }, sk.isclose(a, b, 0, 0):totable())
    assert.same({ true, false }, sk.isclose(T({ 1.0, 2.0 }), T({ 1.0 })):totable()) -- broadcasts
    assert.equal("bool", sk.isclose(a, b):dtype())
  end)
  it("computes integers and bool in float32, without wrapping", function()
    local u8 = function(v) return T(v, { dtype = "uint8" }) end
    assert.same({ true, true, false }, sk.isclose(u8({ 1, 2, 255 }), u8({ 1, 3, 0 }), 0.5, 0):totable())
    assert.same({ false, true, true }, sk.isclose(T({ 5, -3, 1000000000 }), T({ 6, -3, 1000000040 }), 0.1, 0):totable())
    assert.same({ true, false }, sk.isclose(T({ true, false }), T({ true, true })):totable())
  end)
  it("refuses other dtypes and negative tolerances with PyTorch's texts", function()
    assert.matches("isclose: argument 'other' %(float64%) did not match 'self' %(float32%)",
      h.err(sk.isclose, a, T({ 1.0 }, { dtype = "float64" })))
    assert.matches("rtol must be greater than or equal to zero, but got %-1", h.err(sk.isclose, a, b, -1))
    assert.matches("atol must be greater than or equal to zero, but got %-0.5", h.err(sk.isclose, a, b, 0, -0.5))
  end)
end)

describe("allclose and equal", function()
  -- PyTorch 1.13's results for these calls
  it("allclose is isclose's all(), as a Lua boolean", function()
    assert.is_true(sk.allclose(T({ 1.0, 2 }), T({ 1, 2.00001 })))
    assert.is_false(T({ 1, 0 / 0 }):allclose(T({ 1, 0 / 0 })))
    assert.is_true(sk.allclose(T({ 1, 0 / 0 }), T({ 1, 0 / 0 }), { equal_nan = true }))
    assert.is_false(sk.allclose(T({ 1.0, 2 }), T({ 1.0 }))) -- broadcast: [true, false]
    assert.matches("did not match", h.err(sk.allclose, T({ 1.0 }), T({ 1 }, { dtype = "float64" })))
  end)
  it("equal wants the same sizes and values, after promotion; NaN is not equal to itself", function()
    assert.is_true(sk.equal(T({ 1, 2 }), T({ 1, 2 })))
    assert.is_false(sk.equal(T({ 1, 2 }), T({ 1, 2, 3 })))
    assert.is_false(sk.equal(T({ 1, 1 }), T({ 1 })))        -- no broadcasting
    assert.is_false(T({ 0 / 0 }):equal(T({ 0 / 0 })))
    assert.is_true(sk.equal(T({ 1.0, 2 }), T({ 1, 2 }, { dtype = "float64" })))
    assert.is_true(sk.equal(T({ 1, 2 }), T({ 1.0, 2 })))
    assert.is_true(sk.equal(sk.empty({ 0, 3 }), sk.empty({ 0, 3 })))
  end)
end)
