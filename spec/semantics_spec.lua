-- PyTorch semantics found with PyTorch's OpInfo samples: overloads, integer
-- rules, ranges, low-precision accuracy, wrapped numbers and error texts.
-- Every expected value below was worked out by hand or measured on PyTorch 1.13
-- and written here as a literal.
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local INTS = { "int8", "int16", "int32", "int64" }

describe("Tensor:to(other)", function()
  it("takes other's dtype, truncating or testing as a cast does", function()
    local x = T({ 1.7, -1.7, 0.0, 2.5 })
    for _, dt in ipairs(INTS) do
      local y = x:to(sk.empty({ 0 }, { dtype = dt }))
      assert.equal(dt, y:dtype())
      assert.same({ 1, -1, 0, 2 }, y:totable())
    end
    assert.same({ true, true, false, true }, x:to(sk.empty({ 3 }, { dtype = "bool" })):totable())
    assert.same({ 1, 255, 0, 2 }, x:to(sk.empty({ 0 }, { dtype = "uint8" })):totable())
    for _, dt in ipairs({ "float16", "bfloat16", "float64" }) do
      local y = T({ 0.5, -2.0 }):to(sk.ones({ 2, 2 }, { dtype = dt }))
      assert.equal(dt, y:dtype())
      assert.same({ 0.5, -2.0 }, y:totable())
    end
  end)
  it("returns self when dtype and device already match, a copy with copy = true", function()
    local x, other = T({ 1.0, 2.0 }), sk.zeros({ 5 })
    assert.is_true(x:to(other):shares_storage(x))
    local c = x:to(other, false, true)
    assert.is_false(c:shares_storage(x))
    assert.same({ 1.0, 2.0 }, c:totable())
    c = x:to(other, { copy = true, non_blocking = true })
    assert.is_false(c:shares_storage(x))
  end)
  it("handles 0-dim, empty and non-contiguous selves", function()
    local i64 = sk.empty({ 0 }, { dtype = "int64" })
    assert.same({}, T(3.9):to(i64):shape())
    assert.equal(3, T(3.9):to(i64):item())
    assert.same({ 0, 3 }, sk.empty({ 0, 3 }):to(i64):shape())
    local m = T({ { 1.5, 2.5 }, { 3.5, 4.5 } }):t()
    assert.same({ { 1, 3 }, { 2, 4 } }, m:to(i64):totable())
  end)
  it("is aten::to.other, Math on every backend", function()
    local y = sk.call("aten::to.other", T({ 1.5 }), sk.empty({ 0 }, { dtype = "int32" }))
    assert.equal("int32", y:dtype())
    local mt = sk.empty({ 2 }, { device = "meta" }):to(sk.empty({ 0 }, { dtype = "float64", device = "meta" }))
    h.same_meta(sk.empty({ 2 }, { dtype = "float64" }), mt)
  end)
end)

describe("narrow with a 0-dim tensor start", function()
  local x = sk.arange(6)
  it("reads start from an integer tensor of any integer dtype, negative from the end", function()
    for _, dt in ipairs({ "uint8", "int8", "int16", "int32", "int64" }) do
      assert.same({ 1, 2 }, x:narrow(0, T(1, { dtype = dt }), 2):totable())
    end
    assert.same({ 4, 5 }, sk.narrow(x, 0, T(-2), 2):totable())
    assert.same({}, x:narrow(0, T(6), 0):totable())
  end)
  it("is a view, also of a non-contiguous self", function()
    local m = sk.arange(12):view(3, 4):t() -- [4, 3]
    local v = m:narrow(1, T(1), 2)
    assert.same({ { 4, 8 }, { 5, 9 }, { 6, 10 }, { 7, 11 } }, v:totable())
    v:fill_(0)
    assert.same({ 0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0 }, m:t():reshape({ 12 }):totable())
  end)
  it("refuses a start that is not a 0-dim integer tensor with a value, and bad ranges", function()
    local msg = "start must be an 0%-dim integral Tensor"
    assert.matches("Tensor:narrow: " .. msg .. "%. %(argument 'start' has dtype float32 and 0 dims%)",
      h.err(function() return x:narrow(0, T(1.0), 2) end))
    assert.matches(msg, h.err(sk.narrow, x, 0, T(true), 2))
    assert.matches(msg .. "%. %(argument 'start' has dtype int64 and 1 dims%)", h.err(sk.narrow, x, 0, T({ 1 }), 2))
    assert.matches("sk.narrow: argument 'start' is a meta tensor: its values are needed",
      h.err(sk.narrow, x, 0, sk.empty({}, { dtype = "int64", device = "meta" }), 2))
    assert.matches("start %(5%) %+ length %(2%) exceeds dimension size %(6%)", h.err(sk.narrow, x, 0, T(5), 2))
    assert.matches("start out of range", h.err(sk.narrow, x, 0, T(7), 0))
  end)
end)

describe("integer pow with negative exponents", function()
  it("a Tensor exponent gives PyTorch's powi: 1 for base 1, -1 or 1 for base -1, else 0", function()
    for _, dt in ipairs(INTS) do
      local o = { dtype = dt }
      local e = T({ -1, -2, -3 }, o)
      assert.same({ 1, 1, 1 }, sk.pow(T({ 1, 1, 1 }, o), e):totable())
      assert.same({ -1, 1, -1 }, sk.pow(T({ -1, -1, -1 }, o), e):totable())
      assert.same({ 0, 0, 0 }, sk.pow(T({ 2, 2, 2 }, o), e):totable())
      assert.same({ 0, 0, 0 }, sk.pow(T({ 0, 0, 0 }, o), e):totable())
      assert.same({ 0, 0, 0 }, sk.pow(T({ -2, -2, -2 }, o), e):totable())
      assert.equal(dt, sk.pow(T({ 2 }, o), e):dtype())
    end
    -- uint8 base, int8 exponent: computed in int16
    local r = sk.pow(T({ 1, 2, 3 }, { dtype = "uint8" }), T({ -1, -1, 2 }, { dtype = "int8" }))
    assert.equal("int16", r:dtype())
    assert.same({ 1, 0, 9 }, r:totable())
    -- mixed signs, a minimum exponent, broadcast, 0-dim, non-contiguous, empty
    assert.same({ -1, 1 }, sk.pow(T({ -1, -1 }), T({ math.mininteger + 1, math.mininteger })):totable())
    assert.same({ { 1, 0 }, { 4, 1 } }, sk.pow(T({ { 1, 2 }, { 2, 1 } }), T({ { -1, -1 }, { 2, -5 } })):totable())
    assert.equal(-1, sk.pow(T(-1), T(-7)):item())
    local e = T({ { -1, 3 }, { 2, -2 } }):t() -- {{-1, 2}, {3, -2}}
    assert.same({ { 0, 4 }, { 8, 0 } }, sk.pow(T({ { 2, 2 }, { 2, 2 } }), e):totable())
    assert.same({ 0 }, sk.pow(sk.empty({ 0 }, { dtype = "int64" }), T({ -1 })):shape())
  end)
  it("a Scalar base goes the same way: pow(2, t), pow(-1, t), pow(1, t)", function()
    assert.same({ 0, 0 }, sk.pow(2, T({ -1, -2 })):totable())
    assert.same({ -1, 1 }, sk.pow(-1, T({ -1, -2 })):totable())
    assert.same({ 1, 1 }, sk.pow(1, T({ -1, -2 })):totable())
    assert.same({ 0, 0 }, sk.pow(0, T({ -1, -2 })):totable())
  end)
  it("a negative integer Scalar exponent is refused, as PyTorch's Tensor_Scalar (even for base 1)", function()
    local msg = "Integers to negative integer powers are not allowed%."
    for _, dt in ipairs({ "uint8", "int8", "int16", "int32", "int64", "bool" }) do
      assert.matches("sk.pow: " .. msg, h.err(sk.pow, T({ 1 }, { dtype = dt }), -1))
    end
    local a = T({ 1, 2 })
    assert.matches(msg, h.err(function() return a:pow_(-2) end))
    assert.same({ 1, 2 }, a:totable())
    assert.matches(msg, h.err(sk.pow, a, -1, { out = sk.empty({ 0 }, { dtype = "int64" }) }))
    assert.matches(msg, h.err(function() return a ^ -1 end))
    -- a float exponent or a float base computes in float
    assert.same({ 0.5, 0.25 }, sk.pow(T({ 2, 4 }), -1.0):totable())
    assert.same({ 0.5 }, sk.pow(T({ 2.0 }), -1):totable())
  end)
end)

describe("arange and linspace on integer and low-precision dtypes (PyTorch 1.13's values)", function()
  local function values(t) return t:to("float64"):totable() end
  it("arange truncates start, end and step to the integer dtype; int64 counts exactly, others in double", function()
    local cases = {
      { 0.5, 5, 1, "int64", { 0, 1, 2, 3, 4 } }, { 0, 5.5, 1, "int64", { 0, 1, 2, 3, 4 } },
      { 0, 5, 1.5, "int64", { 0, 1, 2, 3, 4 } }, { 5, 0, -1.5, "int64", { 5, 4, 3, 2, 1 } },
      { 5.5, 0, -1, "int64", { 5, 4, 3, 2, 1 } }, { -3.7, 3.2, 1.3, "int64", { -3, -2, -1, 0, 1, 2 } },
      { 0, 10, 3, "int8", { 0, 3, 6, 9 } }, { 10, -10, -3, "int16", { 10, 7, 4, 1, -2, -5, -8 } },
      { 0.9, 3.9, 1, "int64", { 0, 1, 2 } }, { 0.9, 3.9, 1, "int32", { 0, 1, 2 } },
      { 0, 2.0000000001, 1, "int64", { 0, 1 } }, { 0, 2.0000000001, 1, "int32", { 0, 1, 2 } },
      { 3, -3, -2.5, "int8", { 3, 1, -1 } }, { 0, 10, 3.9, "int32", { 0, 3, 6 } },
      { 10.9, 0.1, -3.9, "int32", { 10, 7, 4 } }, { 0, 300, 100, "int8", { 0, 100, -56 } },
      { 250, 260, 3, "uint8", { 250, 253, 0, 3 } }, { -5, 5, 3, "uint8", { 251, 254, 1, 4 } },
      { 0, 1, 0.25, "float16", { 0.0, 0.25, 0.5, 0.75 } }, { 1, 2.5, 0.5, "float32", { 1.0, 1.5, 2.0 } },
      { 0, 1, 0.1, "bfloat16", { 0.0, 0.10009765625, 0.2001953125, 0.30078125, 0.400390625, 0.5, 0.6015625,
        0.69921875, 0.80078125, 0.8984375 } },
      { 0, 1, 0.1, "float16", { 0.0, 0.0999755859375, 0.199951171875, 0.300048828125, 0.39990234375, 0.5,
        0.60009765625, 0.7001953125, 0.7998046875, 0.89990234375 } },
    }
    for _, c in ipairs(cases) do
      local t = sk.arange(c[1], c[2], c[3], { dtype = c[4] })
      assert.equal(c[4], t:dtype())
      assert.same(c[5], values(t), string.format("arange(%s, %s, %s, %s)", c[1], c[2], c[3], c[4]))
    end
  end)
  it("empty ranges are empty whatever the step's sign; wrong-sign and zero steps are errors", function()
    for _, c in ipairs({ { 1.1, 1.1, -1.0, "float32" }, { 1.1, 1.1, 1.0, "float32" }, { 1, 1, -1, "int64" },
      { 1, 1, 1, "int64" }, { 1.1, 1.1, -1.0, "int64" }, { 2, 2, -3, "uint8" }, { 0.5, 0.5, 0.5, "bfloat16" } }) do
      local t = sk.arange(c[1], c[2], c[3], { dtype = c[4] })
      assert.same({ 0 }, t:shape())
      assert.equal(c[4], t:dtype())
    end
    assert.same({ 0 }, sk.arange(1.1, 1.1, -1.0):shape())
    assert.equal("float32", sk.arange(1.1, 1.1, -1.0):dtype())
    local sign = "sk.arange: upper bound and larger bound inconsistent with step sign"
    assert.matches(sign, h.err(sk.arange, 1, 5, -1))
    assert.matches(sign, h.err(sk.arange, 5.0, 1.0, 0.5))
    assert.matches(sign, h.err(sk.arange, 5, 1, 1, { dtype = "int8" }))
    assert.matches("sk.arange: step must be nonzero", h.err(sk.arange, 1, 5, 0))
    assert.matches("step must be nonzero", h.err(sk.arange, 0.0, 1.0, 0.0))
    -- the step truncates to 0 on an integer dtype
    assert.matches("step must be nonzero", h.err(sk.arange, 0, 5, 0.7, { dtype = "int64" }))
    assert.matches("step must be nonzero", h.err(sk.arange, -2.5, 2.5, 0.5, { dtype = "int32" }))
    assert.matches("sk.arange: argument 'dtype' must not be bool", h.err(sk.arange, 0, 2, 1, { dtype = "bool" }))
  end)
  it("linspace truncates start and end first on integer dtypes, then each value", function()
    -- sizes below PyTorch's vector width, where its values do not depend on its CPU capability
    local cases = {
      { 0, 10, 5, "int64", { 0, 2, 5, 7, 10 } }, { 0, 10, 4, "int64", { 0, 3, 6, 10 } },
      { 0, 1, 5, "int64", { 0, 0, 0, 0, 1 } }, { -1, 1, 5, "int64", { -1, 0, 0, 0, 1 } },
      { 10, 0, 4, "int64", { 10, 6, 3, 0 } }, { 0.5, 9.5, 4, "int64", { 0, 3, 6, 9 } },
      { -5.5, 5.5, 7, "int32", { -5, -3, -1, 0, 1, 3, 5 } }, { 0, 255, 7, "uint8", { 0, 42, 85, 127, 170, 212, 255 } },
      { 3, 3, 3, "int64", { 3, 3, 3 } }, { 0, 7, 1, "int64", { 0 } }, { 0, -7, 4, "int8", { 0, -2, -4, -7 } },
      { 1, 10, 4, "int16", { 1, 4, 7, 10 } }, { -10, 10, 6, "int64", { -10, -6, -2, 2, 6, 10 } },
      { 0, 100, 7, "int64", { 0, 16, 33, 50, 66, 83, 100 } }, { 2, -3, 6, "int64", { 2, 1, 0, -1, -2, -3 } },
      { -7.9, 7.9, 7, "int64", { -7, -4, -2, 0, 2, 4, 7 } },
      { 0, 1, 5, "float16", { 0.0, 0.25, 0.5, 0.75, 1.0 } }, { -3, 5, 9, "float64", { -3, -2, -1, 0, 1, 2, 3, 4, 5 } },
    }
    for _, c in ipairs(cases) do
      local t = sk.linspace(c[1], c[2], c[3], { dtype = c[4] })
      assert.equal(c[4], t:dtype())
      assert.same(c[5], values(t), string.format("linspace(%s, %s, %s, %s)", c[1], c[2], c[3], c[4]))
    end
    assert.same({ 0 }, sk.linspace(0, 7, 0, { dtype = "int64" }):shape())
    assert.matches("sk.linspace: argument 'dtype' must not be bool",
      h.err(sk.linspace, 0, 1, 3, { dtype = "bool" }))
    assert.matches("number of steps must be non%-negative", h.err(sk.linspace, 0, -10, -1))
  end)
  it("float linspace rounds the double value once: at least as close as PyTorch's float steps", function()
    -- PyTorch 1.13: float32 value 4 of linspace(0, 1, 7) is 0.6666666269302368, bfloat16 0.6640625
    local f = values(sk.linspace(0, 1, 7))
    assert.is_true(math.abs(f[5] - 2 / 3) <= math.abs(0.6666666269302368 - 2 / 3))
    assert.equal(0.6666666865348816, f[5])
    local b = values(sk.linspace(0, 1, 7, { dtype = "bfloat16" }))
    assert.equal(0.66796875, b[5])
  end)
end)

describe("clamp_min and clamp_max on bool", function()
  local b = T({ true, false })
  it("a bool tensor bound is maximum / minimum and stays bool", function()
    local r = sk.clamp_min(b, T({ false, true }))
    assert.equal("bool", r:dtype())
    assert.same({ true, true }, r:totable())
    assert.same({ false, false }, sk.clamp_max(b, T(false)):totable())
    assert.same({ true, false }, sk.clamp_max(b, T({ true, true })):totable())
    assert.same({ true, true }, sk.clamp(b, T(true)):totable())
    assert.same({ false, false }, sk.clamp(b, nil, T(false)):totable())
    local nc = T({ { true, false }, { false, false } }):t() -- {{true, false}, {false, false}}
    assert.same({ { true, true }, { false, true } }, sk.clamp_min(nc, T({ false, true })):totable())
    local out = sk.empty({ 0 }, { dtype = "bool" })
    sk.clamp_min(b, T(false), { out = out })
    assert.same({ true, false }, out:totable())
  end)
  it("a number bound promotes as a wrapped number", function()
    local r = sk.clamp_min(b, 2)
    assert.equal("int64", r:dtype())
    assert.same({ 2, 2 }, r:totable())
    assert.same({ 1, 0 }, sk.clamp_min(b, -1):totable())
    assert.same({ -1, -1 }, sk.clamp_max(b, -1):totable())
    assert.same({ 0.5, 0.0 }, sk.clamp_max(b, 0.5):totable())
    assert.same({ 1, 2 }, sk.clamp_min(b, T({ 0, 2 })):totable())
  end)
  it("a bool Scalar bound and two bool tensor bounds are refused with PyTorch's kernel names", function()
    assert.matches("sk.clamp_min: \"clamp_min_cpu\" not implemented for 'Bool'", h.err(sk.clamp_min, b, true))
    assert.matches("sk.clamp_max: \"clamp_max_scalar_cpu\" not implemented for 'Bool'", h.err(sk.clamp_max, b, false))
    assert.matches("\"clamp_cpu\" not implemented for 'Bool'", h.err(sk.clamp, b, b, b))
    assert.matches("can't be cast to the desired output type bool", h.err(function() return b:clone():clamp_min_(2) end))
  end)
end)

describe("index dtypes of gather, scatter, scatter_add and index_select (PyTorch 1.13)", function()
  local x = T({ 1.0, 2.0, 3.0 })
  it("gather and the scatters take int64 only", function()
    local i = T({ 2, 0 })
    assert.same({ 3.0, 1.0 }, sk.gather(x, 0, i):totable())
    assert.same({ 9.0, 2.0, 9.0 }, sk.scatter(x, 0, i, 9):totable())
    assert.same({ 2.0, 2.0, 4.0 }, sk.scatter_add(x, 0, i, T({ 1.0, 1.0 })):totable())
    for _, dt in ipairs({ "bool", "uint8", "int8", "int16", "int32" }) do
      local bad = T({ 0, 1 }):to(dt)
      local has = "%(argument 'index' has dtype " .. dt .. "%)"
      assert.matches("sk.gather: gather%(%): Expected dtype int64 for index " .. has, h.err(sk.gather, x, 0, bad))
      assert.matches("sk.scatter: scatter%(%): Expected dtype int64 for index " .. has, h.err(sk.scatter, x, 0, bad, 1))
      assert.matches("scatter%(%): Expected dtype int64 for index", h.err(sk.scatter, x, 0, bad, T({ 0.0, 0.0 })))
      assert.matches("sk.scatter_add: scatter_add%(%): Expected dtype int64 for index " .. has,
        h.err(sk.scatter_add, x, 0, bad, T({ 1.0, 1.0 })))
    end
  end)
  it("index_select takes int32 and int64", function()
    assert.same({ 3.0, 3.0 }, sk.index_select(x, 0, T({ 2, 2 }, { dtype = "int32" })):totable())
    for _, dt in ipairs({ "bool", "uint8", "int8", "int16" }) do
      assert.matches("index_select%(%): Expected dtype int32 or int64 for index %(argument 'index' has dtype " .. dt,
        h.err(sk.index_select, x, 0, T({ 0, 1 }):to(dt)))
    end
  end)
end)

describe("half-precision results are at least as close to float64 as PyTorch's", function()
  -- Inputs from a closed form, rounded to the dtype; the float64 reference is a Lua loop over the rounded inputs.
  local function inp(n, a, b, c)
    local t = {}
    for i = 0, n - 1 do t[#t + 1] = (((i * a + b) % c) - c / 2) / (c / 4) + i / 97.0 end
    return T(t, { dtype = "float64" })
  end
  local function flat(t) return t:to("float64"):reshape({ -1 }):totable() end
  local function no_worse(got, ref, pt, what)
    for i = 1, #ref do
      assert.is_true(math.abs(got[i] - ref[i]) <= math.abs(pt[i] - ref[i]),
        string.format("%s[%d]: sk %.10g, PyTorch %.10g, float64 %.10g", what, i, got[i], pt[i], ref[i]))
    end
  end

  it("bfloat16 mm and matmul (PyTorch 1.13 has no float16 mm on the CPU)", function()
    local A = inp(96, 7, 3, 13):view(2, 48):to("bfloat16")
    local B = inp(96, 5, 1, 11):view(48, 2):to("bfloat16")
    local a, b = A:to("float64"):totable(), B:to("float64"):totable()
    local ref = {}
    for r = 1, 2 do
      for c = 1, 2 do
        local s = 0
        for k = 1, 48 do s = s + a[r][k] * b[k][c] end
        ref[#ref + 1] = s
      end
    end
    local pt = { -1.6875, 4.84375, 2.8125, 28.625 } -- torch.mm(A, B), PyTorch 1.13
    no_worse(flat(sk.mm(A, B)), ref, pt, "mm")
    no_worse(flat(sk.matmul(A, B)), ref, pt, "matmul")
    no_worse(flat(A:t():t():contiguous():mm(B:t():contiguous():t())), ref, pt, "mm of a transposed operand")
  end)

  it("bfloat16 layer_norm", function()
    local x = inp(80, 3, 2, 17):view(2, 40):to("bfloat16")
    local w, bb = inp(40, 2, 1, 7):to("bfloat16"), inp(40, 4, 3, 9):to("bfloat16")
    local xs, ws, bs = x:to("float64"):totable(), w:to("float64"):totable(), bb:to("float64"):totable()
    local got = sk.layer_norm(x, { 40 }, w, bb, 1e-5):to("float64"):totable()
    local worst = 0
    for r = 1, 2 do
      local mean, var = 0, 0
      for k = 1, 40 do mean = mean + xs[r][k] / 40 end
      for k = 1, 40 do var = var + (xs[r][k] - mean) ^ 2 / 40 end
      for k = 1, 40 do
        local ref = (xs[r][k] - mean) / math.sqrt(var + 1e-5) * ws[k] + bs[k]
        worst = math.max(worst, math.abs(got[r][k] - ref))
      end
    end
    assert.is_true(worst <= 0.014769943162776578, "sk's worst error " .. worst) -- PyTorch 1.13's worst error
  end)

  it("float16 and bfloat16 fmod and floor_divide", function()
    local pt = {
      float16 = {
        fmod = { -0.154296875, 0.147216796875, -0.03125, 0.039764404296875, -0.197265625, 0.26513671875, -0.66015625,
          -0.49462890625, 0.650390625, -0.08447265625, 0.015625, -0.59375, 0.054443359375, -0.689453125,
          0.004608154296875, -0.7490234375 },
        floor_divide = { 49, 294, 28, -1272, -18, -295, -5, 179, 15, 103, 56, 62, 169, 37, 2570, -24 },
      },
      bfloat16 = {
        fmod = { -0.15625, 0.1708984375, -0.09375, 0.0283203125, -0.1484375, 0.29296875, -0.65625, -0.171875,
          0.6796875, -0.7109375, 0.03125, -0.53125, 0.189453125, -0.7109375, 0.014892578125, -0.7421875 },
        floor_divide = { 49, 292, 28, -1272, -18, -296, -5, 180, 15, 102, 56, 62, 169, 37, 2560, -24 },
      },
    }
    for dt, want in pairs(pt) do
      local a = (inp(16, 7, 3, 13) * 50):to(dt)
      local b = (inp(16, 5, 1, 11) * 0.7 + 0.05):to(dt)
      local av, bv = a:to("float64"):totable(), b:to("float64"):totable()
      local rf, rd = {}, {}
      for i = 1, 16 do
        rf[i] = math.fmod(av[i], bv[i])
        rd[i] = math.floor(av[i] / bv[i])
      end
      no_worse(flat(sk.fmod(a, b)), rf, want.fmod, dt .. " fmod")
      no_worse(flat(sk.floor_divide(a, b)), rd, want.floor_divide, dt .. " floor_divide")
      no_worse(flat(a // b), rd, want.floor_divide, dt .. " //")
    end
  end)
end)

describe("numbers in a Tensor position (sk's wrapped-number convenience)", function()
  it("binary ops take a Lua number on either side, promoting as a wrapped number", function()
    local t = T({ 1, 2, 3 }, { dtype = "int8" })
    assert.same({ false, true, false }, sk.eq(2, t):totable())
    assert.same({ true, false, true }, sk.ne(t, 2):totable())
    local m = sk.maximum(t, 2)
    assert.equal("int8", m:dtype())
    assert.same({ 2, 2, 3 }, m:totable())
    local f = sk.minimum(2.5, t)
    assert.equal("float32", f:dtype())
    assert.same({ 1.0, 2.0, 2.5 }, f:totable())
    assert.same({ 1, 0, 1 }, sk.bitwise_and(t, 1):totable())
    assert.same({ 0.5, 1.0, 1.5 }, sk.div(t, 2):totable())
    h.assert_close(sk.div(2, t):to("float64"):totable(), { 2.0, 1.0, 2.0 / 3.0 }, 1e-7)
    assert.same({ true, false, false }, sk.lt(t, T(2)):totable())
    assert.same({ 1.0, 1.0, 1.0 }, sk.atan2(sk.ones(3), 1):mul(4):div(math.pi):totable())
    assert.same({ { 3, 4, 5 } }, sk.add(2, t:view(1, 3)):totable())
    assert.same({}, sk.eq(T(2), 2):shape())
    assert.is_true(sk.eq(T(2), 2):item())
  end)
end)

describe("error texts name sk dtypes and the user's arguments", function()
  it("mm-family dtype mismatches print sk's dtype names", function()
    local i, f = sk.ones({ 3, 4 }, { dtype = "int64" }), sk.ones({ 4, 2 })
    assert.matches("sk.mm: expected self and mat2 to have the same dtype, but got: int64 != float32", h.err(sk.mm, i, f))
    assert.matches("sk.bmm: expected self and mat2 to have the same dtype, but got: float32 != float64",
      h.err(sk.bmm, sk.ones({ 1, 2, 2 }), sk.ones({ 1, 2, 2 }, { dtype = "float64" })))
    assert.matches("sk.addmm: expected self and mat2 to have the same dtype, but got: float32 != bfloat16",
      h.err(sk.addmm, sk.ones({ 2, 2 }), sk.ones({ 2, 2 }, { dtype = "bfloat16" }), sk.ones({ 2, 2 }, { dtype = "bfloat16" })))
    assert.matches("sk.lerp: expected dtype float32 for `end` but got dtype float64",
      h.err(sk.lerp, sk.ones(2), sk.ones(2, { dtype = "float64" }), 0.5))
  end)
  it("matmul checks its own arguments: 'self' and 'other' with their shapes, never mm's names", function()
    local function m(a, b) return h.err(sk.matmul, sk.ones(a), sk.ones(b)) end
    local cannot = "sk.matmul: argument 'self' and 'other' shapes cannot be multiplied "
    assert.matches(cannot .. "%(%[2, 3%] and %[2, 3%]%)", m({ 2, 3 }, { 2, 3 }))
    assert.matches(cannot .. "%(%[3%] and %[4%]%)", m({ 3 }, { 4 }))
    assert.matches(cannot .. "%(%[3%] and %[4, 2%]%)", m({ 3 }, { 4, 2 }))
    assert.matches(cannot .. "%(%[2, 3%] and %[4%]%)", m({ 2, 3 }, { 4 }))
    assert.matches(cannot .. "%(%[2, 2, 3%] and %[4, 5%]%)", m({ 2, 2, 3 }, { 4, 5 }))
    assert.matches(cannot .. "%(%[2, 2, 3%] and %[3, 4, 5%]%)", m({ 2, 2, 3 }, { 3, 4, 5 }))
    assert.matches("sk.matmul: The size of argument 'self' %(2%) must match the size of argument 'other' %(3%) at "
      .. "non%-singleton batch dimension 0", m({ 2, 2, 3 }, { 3, 3, 4 }))
    assert.matches("sk.matmul: expected self and other to have the same dtype, but got: int64 != float32",
      h.err(sk.matmul, sk.ones({ 2, 3 }, { dtype = "int64" }), sk.ones({ 3, 2 })))
    assert.matches("Tensor:matmul: expected self and other", h.err(function()
      return sk.ones({ 3 }, { dtype = "float64" }):matmul(sk.ones({ 3 }))
    end))
    assert.is_false(m({ 2, 3 }, { 2, 3 }):find("mat2", 1, true) ~= nil)
  end)
  it("integer division by zero names the operation and the argument", function()
    local t = T({ 1, 2 })
    local ok, e = pcall(function() return t // 0 end)
    assert.is_false(ok)
    assert.matches("ZeroDivisionError %(integer floor division // by zero in argument 'other'%)", tostring(e))
    assert.matches("sk.floor_divide: ZeroDivisionError %(integer floor division // by zero in argument 'other'%)",
      h.err(sk.floor_divide, t, T({ 1, 0 })))
    assert.matches("sk.div: ZeroDivisionError %(integer division by zero in argument 'other'%)",
      h.err(sk.div, t, 0, { rounding_mode = "trunc" }))
    assert.matches("sk.remainder: ZeroDivisionError %(integer remainder %% by zero in argument 'other'%)",
      h.err(function() return sk.remainder(t, 0) end))
    assert.matches("ZeroDivisionError %(integer remainder", h.err(function() return t % 0 end))
    -- floats divide by zero as IEEE does
    assert.same({ math.huge, math.huge }, (T({ 1.0, 2.0 }) // 0):totable())
  end)
end)
