-- spec/unary_spec.lua — unary pointwise ops: values against plain-Lua math for every dtype,
-- layout and instruction-set level (SK_CPU_ISA), every variant, the dtype rules, errors, Meta
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor
local inf, nan = math.huge, 0 / 0
local abs, exp, log, sqrt = math.abs, math.exp, math.log, math.sqrt

-- {==== Plain-Lua references (double precision, a few ULP at most) ====
local R = {}

function R.expm1(x)
  if x ~= x or x == 0 then return x end
  if abs(x) < 0.5 then -- Taylor series
    local term, sum, k = x, x, 1
    repeat k = k + 1; term = term * x / k; sum = sum + term until abs(term) <= 1e-17 * abs(sum)
    return sum
  end
  return exp(x) - 1
end

function R.log1p(x)
  if x ~= x or x == inf then return x end
  local u = 1 + x
  if u == 1 then return x end
  if u == 0 then return -inf end
  return log(u) * x / (u - 1) -- Goldberg: the rounding of 1 + x cancels
end

function R.sinh(x)
  if x ~= x or x == 0 then return x end
  if abs(x) < 1 then -- odd Taylor series
    local term, sum, k, x2 = x, x, 1, x * x
    repeat term = term * x2 / ((k + 1) * (k + 2)); k = k + 2; sum = sum + term until abs(term) <= 1e-17 * abs(sum)
    return sum
  end
  local e = exp(abs(x) / 2) -- e^|x| / 2 without overflowing early
  local r = (e / 2) * e - 0.5 / e / e
  return x < 0 and -r or r
end

function R.cosh(x)
  if x ~= x then return x end
  local e = exp(abs(x) / 2)
  return (e / 2) * e + 0.5 / e / e
end

function R.tanh(x)
  if x ~= x or x == 0 then return x end
  if abs(x) > 20 then return x > 0 and 1.0 or -1.0 end
  local e = R.expm1(2 * abs(x))
  local r = e / (e + 2)
  return x < 0 and -r or r
end

function R.asinh(x)
  if x ~= x or x == 0 or abs(x) == inf then return x end
  local a = abs(x)
  local r = a > 1e150 and log(a) + log(2) or R.log1p(a + a * a / (1 + sqrt(1 + a * a)))
  return x < 0 and -r or r
end

function R.acosh(x)
  if x ~= x or x < 1 then return nan end
  if x == inf then return x end
  if x > 1e150 then return log(x) + log(2) end
  local t = x - 1
  return R.log1p(t + sqrt(2 * t + t * t))
end

function R.atanh(x)
  if x ~= x or abs(x) > 1 then return nan end
  if x == 0 then return x end
  if abs(x) == 1 then return x * inf end
  return 0.5 * R.log1p(2 * x / (1 - x))
end

-- erf as exp(-x^2) * sum 2^n x^(2n+1) / (1*3*...*(2n+1)) (no cancellation); erfc by its
-- continued fraction where it is small.
local function erf_series(x)
  local x2 = x * x
  local term, sum, k = x, x, 0
  repeat k = k + 1; term = term * 2 * x2 / (2 * k + 1); sum = sum + term until term <= 1e-17 * sum
  return 2 / sqrt(math.pi) * exp(-x2) * sum
end

local function erfc_cf(x) -- x >= 2
  local f = 0
  for k = 200, 1, -1 do f = (k / 2) / (x + f) end
  return exp(-x * x) / sqrt(math.pi) / (x + f)
end

function R.erf(x)
  if x ~= x or x == 0 then return x end
  local a = abs(x)
  local r = a >= 6 and 1.0 or a < 2 and erf_series(a) or 1 - erfc_cf(a)
  return x < 0 and -r or r
end

function R.erfc(x)
  if x ~= x then return x end
  if x >= 2 then return erfc_cf(x) end
  if x <= -6 then return 2.0 end
  return 1 - R.erf(x)
end

-- Rounding to an integral value; a zero result keeps x's sign (C99).
local function integral(f)
  return function(x)
    if x ~= x or x == 0 or abs(x) == inf or abs(x) >= 2 ^ 52 then return x end
    local r = f(x) + 0.0
    if r == 0 and x < 0 then return -0.0 end
    return r
  end
end
R.floor = integral(math.floor)
R.ceil = integral(math.ceil)
R.trunc = integral(function(x) return x < 0 and math.ceil(x) or math.floor(x) end)
R.round = integral(function(x) -- half to even
  local f = math.floor(x)
  local d = x - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then return f + 1 end
  return f
end)

local BETA, KAPPA = sqrt(2 / math.pi), 0.044715

-- Nearest float32 (ties to even); beyond the largest finite float, infinity.
local function f32(x)
  if x ~= x or abs(x) == inf then return x end
  if abs(x) >= 3.4028235677973366e38 then return x > 0 and inf or -inf end
  return (string.unpack("f", string.pack("f", x)))
end
-- }====

-- {==== The math ops, their inputs and tolerances ====
-- n points spread over [lo, hi], off any round number.
local function span(lo, hi, n)
  local t = {}
  for i = 0, n - 1 do t[#t + 1] = lo + (hi - lo) * (i + 0.3141) / n end
  return t
end

local function join(...)
  local t = {}
  for _, list in ipairs { ... } do for _, v in ipairs(list) do t[#t + 1] = v end end
  return t
end

local SPECIAL = { 0.0, -0.0, inf, -inf, nan }
local MAGNITUDES = { 1e-30, 1e-5, 0.1, 0.5, 0.999, 1, 1.001, 2, 10, 1e5, 1e30 }
local HALVES = { 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.49999997, -0.49999997, 4194304.5, -4194304.5, 1e20, -1e20 }

-- name; call (Lua source over `t`, default sk.<name>(t)); ref; inputs; scale: error relative
-- to max(|want|, scale(x)) where the formula cancels (gelu); exact: no rounding error allowed.
local MATH = {
  { "exp", ref = exp, xs = join(span(-100, 100, 41), { 1e-10, -1e-10 }) },
  { "exp2", ref = function(x) return 2.0 ^ x end, xs = join(span(-140, 140, 41), { 0.5, -0.5, 1e-10 }) },
  { "expm1", ref = R.expm1, xs = join(span(-20, 20, 41), { 1e-8, -1e-8, 1e-30 }) },
  { "log", ref = log, xs = join(MAGNITUDES, span(0.01, 100, 30), { -1, -1e-30 }) },
  { "log2", ref = function(x) return log(x, 2) end, xs = join(MAGNITUDES, span(0.01, 100, 30), { -1, 1024, 0.125 }) },
  { "log10", ref = function(x) return log(x, 10) end, xs = join(MAGNITUDES, span(0.01, 100, 30), { -1, 1000 }) },
  { "log1p", ref = R.log1p, xs = join(span(-0.999, 10, 33), { -1, -2, 1e-8, -1e-8, 1e-30, 1e10, 1e30 }) },
  { "sin", ref = math.sin, xs = join(span(-10, 10, 37), { 100, -1000, 1e4, 1.5707963267948966 }) },
  { "cos", ref = math.cos, xs = join(span(-10, 10, 37), { 100, -1000, 1e4, 1.5707963267948966 }) },
  { "tan", ref = math.tan, xs = join(span(-10, 10, 37), { 100, -1000, 1e4, 1.5 }) },
  { "asin", ref = math.asin, xs = join(span(-1, 1, 37), { 1, -1, 1.0001, -2, 1e-10 }) },
  { "acos", ref = math.acos, xs = join(span(-1, 1, 37), { 1, -1, 1.0001, -2, 1e-10 }) },
  { "atan", ref = math.atan, xs = join(span(-50, 50, 37), { 1e10, -1e10, 1e-10 }) },
  { "sinh", ref = R.sinh, xs = join(span(-80, 80, 41), { 1e-9, -1e-9, 95, -95 }) },
  { "cosh", ref = R.cosh, xs = join(span(-80, 80, 41), { 1e-9, 95, -95 }) },
  { "tanh", ref = R.tanh, xs = join(span(-20, 20, 41), { 1e-9, -1e-9, 50, -50 }) },
  { "asinh", ref = R.asinh, xs = join(span(-100, 100, 37), { 1e-9, -1e-9, 1e15, -1e15 }) },
  { "acosh", ref = R.acosh, xs = join(span(1, 100, 37), { 1, 1.0001, 1e15, 0.5, -1 }) },
  { "atanh", ref = R.atanh, xs = join(span(-0.999, 0.999, 37), { 1, -1, 1.5, -2, 1e-9 }) },
  { "erf", ref = R.erf, xs = join(span(-6, 6, 41), { 1e-9, -1e-9, 10, -10 }) },
  { "erfc", ref = R.erfc, xs = join(span(-6, 10, 41), { 1e-9, 26, 30, -10 }) },
  { "sigmoid", ref = function(x) return 1 / (1 + exp(-x)) end, xs = span(-100, 100, 41) },
  -- PyTorch's formula: silu(-inf) = -inf / inf = NaN
  { "silu", ref = function(x) return x / (1 + exp(-x)) end, xs = span(-100, 100, 41) },
  { "gelu", ref = function(x) return x * 0.5 * R.erfc(-x / sqrt(2)) end, xs = span(-10, 10, 41), scale = abs },
  { "gelu_tanh", call = "sk.gelu(t, {approximate = 'tanh'})", xs = span(-10, 10, 41), scale = abs,
    ref = function(x) return 0.5 * x * (1 + R.tanh(BETA * (x + KAPPA * (x * x * x)))) end },
  { "sqrt", ref = sqrt, xs = join(MAGNITUDES, span(0, 100, 30), { -1, -1e-30 }), exact = true },
  { "rsqrt", ref = function(x) return 1 / sqrt(x) end, xs = join(MAGNITUDES, span(0, 100, 30), { -1 }) },
  { "floor", ref = R.floor, xs = join(span(-10, 10, 37), HALVES), exact = true },
  { "ceil", ref = R.ceil, xs = join(span(-10, 10, 37), HALVES), exact = true },
  { "trunc", ref = R.trunc, xs = join(span(-10, 10, 37), HALVES), exact = true },
  { "round", ref = R.round, xs = join(span(-10, 10, 37), HALVES), exact = true },
  { "frac", ref = function(x) return x - R.trunc(x) end, xs = join(span(-10, 10, 37), HALVES), exact = true },
}
for _, op in ipairs(MATH) do
  op.name = op[1]
  op.call = op.call or ("sk." .. op.name .. "(t)")
  op.fn = load("local sk = ...; return function(t) return " .. op.call .. " end")(sk)
  op.xs = join(op.xs, SPECIAL)
end

-- rtol ~ a few ULP of the dtype; atol: what underflow (subnormals) may lose; exact: the
-- exact ops are exact (the half types round their results).
local TOL = {
  float32 = { rtol = 1e-6, atol = 2 ^ -126, round = f32, exact = true },
  float64 = { rtol = 1e-12, atol = 2 ^ -1022, round = function(x) return x end, exact = true },
  float16 = { rtol = 2e-3, atol = 2 ^ -14, round = function(x) return x end },
  bfloat16 = { rtol = 1e-2, atol = 2 ^ -126, round = function(x) return x end },
}

-- nil when got matches want for input x, else why not.
local function mismatch(op, dt, x, got, want)
  local tol = TOL[dt]
  if want ~= want or got ~= got then
    if want == want then return "got NaN" elseif got == got then return "want NaN" end
    return nil
  end
  if abs(want) == inf or abs(got) == inf then
    if got ~= want then return "infinities differ" end
    return nil
  end
  if x == 0 and want == 0 then -- C99 fixes the sign of a zero result at ±0
    if 1 / got ~= 1 / want then return "sign of zero" end
    return nil
  end
  local exact = op.exact and tol.exact
  local rtol, atol = exact and 0 or tol.rtol, exact and 0 or tol.atol
  local scale = math.max(abs(want), op.scale and op.scale(x) or 0)
  if abs(got - want) > rtol * scale + atol then return "off by " .. abs(got - want) / scale end
  return nil
end

-- Fails with every input where got (results of op on dtype dt over inputs xs) is wrong.
local function check_values(op, dt, xs, got, where)
  local bad = {}
  for i, x in ipairs(xs) do
    local want = TOL[dt].round(op.ref(x))
    local why = mismatch(op, dt, x, got[i], want)
    if why then bad[#bad + 1] = string.format("x=%.17g got=%.17g want=%.17g (%s)", x, got[i], want, why) end
  end
  if #bad > 0 then
    error(string.format("%s on %s%s:\n  %s", op.name, dt, where or "", table.concat(bad, "\n  ", 1, math.min(#bad, 8))), 2)
  end
end
-- }====

describe("unary math ops", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("match plain-Lua math on contiguous " .. dt .. " (vector loops and their tails)", function()
      for _, op in ipairs(MATH) do
        local t = T(op.xs, { dtype = dt })
        local r = op.fn(t)
        assert.equal(dt, r:dtype())
        check_values(op, dt, t:totable(), r:totable())
      end
    end)

    it("match plain-Lua math on strided " .. dt .. " inputs and outputs", function()
      for _, op in ipairs(MATH) do
        local n = #op.xs
        local base = sk.zeros({ n, 2 }, { dtype = dt })
        base:select(1, 0):copy_(T(op.xs, { dtype = dt }))
        local x = base:select(1, 0) -- every other element
        assert.is_false(x:is_contiguous())
        check_values(op, dt, x:totable(), op.fn(x):totable(), " (strided input)")
        if op.name ~= "gelu_tanh" then
          local out = sk.zeros({ n, 3 }, { dtype = dt }):select(1, 2)
          sk[op.name](x, { out = out })
          check_values(op, dt, x:totable(), out:totable(), " (strided out)")
        end
      end
    end)
  end

  for _, dt in ipairs { "float16", "bfloat16" } do
    it("compute " .. dt .. " in float and round back", function()
      for _, op in ipairs(MATH) do
        local xs = {}
        for _, x in ipairs(op.xs) do if not (abs(x) > 8) then xs[#xs + 1] = x end end
        local t = T(xs, { dtype = dt })
        local r = op.fn(t)
        assert.equal(dt, r:dtype())
        check_values(op, dt, t:totable(), r:totable())
      end
    end)
  end

  it("agree between the vector body, the tail and the scalar loop at every length", function()
    for _, n in ipairs { 1, 7, 8, 9, 15, 16, 17, 31, 33 } do
      for _, dt in ipairs { "float32", "float64" } do
        local xs = span(-3, 3, n)
        local t = T(xs, { dtype = dt })
        for _, name in ipairs { "exp", "tanh", "gelu", "floor" } do
          local op
          for _, o in ipairs(MATH) do if o.name == name then op = o end end
          check_values(op, dt, t:totable(), op.fn(t):totable(), " (n=" .. n .. ")")
        end
      end
    end
  end)

  it("split large tensors across threads without losing elements", function()
    local n = 40000
    local x = sk.arange(n, { dtype = "float32" }):div(n / 20):sub(10)
    local xs, got = x:totable(), x:sigmoid():totable()
    check_values({ name = "sigmoid", ref = function(v) return 1 / (1 + exp(-v)) end }, "float32", xs, got)
  end)

  it("give the C99 results at signed zeros, infinities and NaN", function()
    local function v(name, x) return sk[name](T({ x }, { dtype = "float64" })):totable()[1] end
    local function is_neg_zero(z) return z == 0 and 1 / z < 0 end
    for _, name in ipairs { "expm1", "log1p", "sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh",
                            "erf", "sqrt", "floor", "ceil", "trunc", "round" } do
      assert.is_true(is_neg_zero(v(name, -0.0)), name .. "(-0) is -0")
    end
    assert.equal(-inf, v("log", 0.0)); assert.equal(-inf, v("log", -0.0)); assert.is_true(v("log", -1) ~= v("log", -1))
    assert.equal(-inf, v("log1p", -1)); assert.equal(inf, v("atanh", 1)); assert.equal(-inf, v("atanh", -1))
    assert.equal(inf, v("rsqrt", 0.0)); assert.equal(-inf, v("rsqrt", -0.0)); assert.equal(0, v("rsqrt", inf))
    assert.equal(0, v("acosh", 1)); assert.equal(1, v("tanh", inf)); assert.equal(-1, v("tanh", -inf))
    assert.equal(1, v("erf", inf)); assert.equal(0, v("erfc", inf)); assert.equal(2, v("erfc", -inf))
    assert.equal(0, v("exp", -inf)); assert.equal(-1, v("expm1", -inf)); assert.equal(math.pi / 2, v("atan", inf))
    assert.equal(0, v("sigmoid", -inf)); assert.equal(1, v("sigmoid", inf)); assert.equal(inf, v("silu", inf))
    assert.is_true(v("sin", inf) ~= v("sin", inf)); assert.is_true(v("acosh", 0.5) ~= v("acosh", 0.5))
    local s = v("silu", -inf)
    assert.is_true(s ~= s, "silu(-inf) is NaN, as PyTorch's x / (1 + exp(-x))")
    assert.equal(inf, v("gelu", inf))
    assert.same({ 0, -0.5, 0.25, 0 }, T({ 3.0, -1.5, 2.25, -1.0 }):frac():totable())
    local f = T({ inf, -inf, nan }):frac():totable()
    for i = 1, 3 do assert.is_true(f[i] ~= f[i]) end
  end)
end)

-- {==== The same values under every instruction-set level ====
local LEVELS = { "baseline", "avx2", "avx512" }

local function lua_number(x)
  if x ~= x then return "0/0" end
  if x == inf then return "1/0" elseif x == -inf then return "-1/0" end
  return string.format("%a", x)
end

local function parse_number(s)
  if s == "inf" then return inf elseif s == "-inf" then return -inf end
  if s == "nan" or s == "-nan" then return nan end
  return assert(tonumber(s), s)
end

-- A script that prints, for each op and dtype, "op/dtype v1 v2 ..." (hex floats), after the level.
local function child_script()
  local lines = {
    'package.path = "lua/?.lua;lua/?/init.lua;" .. package.path',
    'package.cpath = (os.getenv("SK_BUILD") or "build") .. "/?.so;" .. package.cpath',
    'local sk = require "sk"',
    'local out = { sk.cpu_isa and sk.cpu_isa() or "?" }',
    "local function run(key, dt, fn, xs)",
    "  local r = fn(sk.tensor(xs, { dtype = dt })):totable()",
    '  for i, v in ipairs(r) do r[i] = string.format("%a", v) end',
    '  out[#out + 1] = key .. " " .. table.concat(r, " ")',
    "end",
  }
  for _, op in ipairs(MATH) do
    local xs = {}
    for i, x in ipairs(op.xs) do xs[i] = lua_number(x) end
    for _, dt in ipairs { "float32", "float64" } do
      lines[#lines + 1] = string.format("run(%q, %q, function(t) return %s end, { %s })", op.name .. "/" .. dt, dt,
                                        op.call, table.concat(xs, ", "))
    end
  end
  lines[#lines + 1] = 'io.write(table.concat(out, "\\n"), "\\n")'
  return table.concat(lines, "\n")
end

-- Runs the script with SK_CPU_ISA=level (nil: unset); returns the level it reported and
-- results[key], a list of numbers whose field text is the line as printed.
local function run_child(path, level)
  local env = level and ("SK_CPU_ISA=" .. level .. " ") or "env -u SK_CPU_ISA "
  local p = assert(io.popen(env .. "lua5.4 " .. path .. " 2>&1"))
  local text = p:read("a")
  assert(p:close(), "the child failed:\n" .. text)
  local reported, results = nil, {}
  for line in text:gmatch("[^\n]+") do
    if not reported then reported = line
    else
      local key, rest = line:match("^(%S+) (.*)$")
      local vals = { text = rest }
      for tok in rest:gmatch("%S+") do vals[#vals + 1] = parse_number(tok) end
      results[key] = vals
    end
  end
  return reported, results
end

describe("instruction-set levels", function()
  it("compute the same values at baseline, AVX2 and AVX-512 (SK_CPU_ISA), each matching plain Lua", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(child_script())
    f:close()
    local runs = {}
    for _, level in ipairs(LEVELS) do runs[#runs + 1] = { level, run_child(path, level) } end
    local _, default = run_child(path, nil)
    os.remove(path)
    local rank = { baseline = 1, avx2 = 2, avx512 = 3 }
    for _, run in ipairs(runs) do
      local level, reported = run[1], run[2]
      if reported ~= "?" then -- sk.cpu_isa() exposed: never above what was asked for
        assert.is_truthy(rank[reported], reported)
        assert.is_true(rank[reported] <= rank[level], level .. " reported " .. reported)
      end
    end
    for _, op in ipairs(MATH) do
      for _, dt in ipairs { "float32", "float64" } do
        local key = op.name .. "/" .. dt
        local xs = T(op.xs, { dtype = dt }):totable()
        for _, run in ipairs(runs) do
          local level, results = run[1], run[3]
          check_values(op, dt, xs, results[key], " (SK_CPU_ISA=" .. level .. ")")
          -- the levels agree with one another as closely as each agrees with the reference
          local base = runs[1][3][key]
          for i = 1, #xs do
            local a, b = results[key][i], base[i]
            local ok = (a ~= a and b ~= b) or a == b or
              (not op.exact and abs(a - b) <= 2 * TOL[dt].rtol * math.max(abs(b), op.scale and op.scale(xs[i]) or 0)
                + TOL[dt].atol)
            assert.is_true(ok, string.format("%s x=%.17g: %s %.17g, baseline %.17g", key, xs[i], level, a, b))
          end
        end
        assert.equal(runs[#runs][3][key].text, default[key].text) -- unset means the best level
      end
    end
  end)
end)
-- }====

-- {==== Variants, dtypes, layouts ====
-- name, how the in-place variant is called, sample input (float64)
local METHOD_INPLACE, FUNCTION_INPLACE = "method", "function"
local ALL = {}
for _, name in ipairs { "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "reciprocal", "sin", "cos", "tan", "asin",
                        "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "floor", "ceil",
                        "trunc", "round", "frac", "nan_to_num", "relu", "exp", "log", "sqrt", "tanh", "sigmoid" } do
  ALL[#ALL + 1] = { name, both = true }
end
for _, name in ipairs { "sign", "square", "logical_not", "bitwise_not" } do ALL[#ALL + 1] = { name, both = false } end
for _, name in ipairs { "gelu", "silu" } do ALL[#ALL + 1] = { name, fn_only = true } end

local function sample(name)
  if name == "acosh" then return T({ 1.0, 1.5, 3.0, 10.0 }, { dtype = "float64" }) end
  if name == "bitwise_not" then return T({ 0, 5, -7, 100 }, { dtype = "int32" }) end
  return T({ 0.25, 0.5, 0.75, 0.125 }, { dtype = "float64" })
end

describe("variants", function()
  for _, op in ipairs(ALL) do
    local name = op[1]
    it(name .. ": functional, in-place (same values, bumps the version) and out", function()
      local x = sample(name)
      local r = sk[name](x)
      if not op.fn_only then assert.same(r:totable(), x[name](x):totable()) end
      local y = x:clone()
      local v0 = y:version()
      local back
      if op.fn_only then back = sk[name .. "_"](y) else back = y[name .. "_"](y) end
      assert.equal(y, back)
      assert.equal(v0 + 1, y:version())
      local want = r:totable()
      if name == "logical_not" then -- in place keeps self's dtype: 1 / 0
        for i, b in ipairs(want) do want[i] = b and 1 or 0 end
      end
      assert.same(want, y:totable())
      if name ~= "relu" then -- relu has no out variant, as in PyTorch
        local out = sk.empty({ 0 }, { dtype = r:dtype() })
        assert.equal(out, sk[name](x, { out = out }))
        assert.same(r:totable(), out:totable())
      end
    end)
  end

  it("take round's decimals and gelu's approximate as options", function()
    local xs = { 1.2345, -2.675, 1234.5678, 0.125, -0.004 }
    local x = T(xs, { dtype = "float64" })
    local function want(d) -- PyTorch's formula: x * 10^d rounded half to even, / 10^d (d < 0: / then *)
      local t = {}
      for i, v in ipairs(xs) do t[i] = d >= 0 and R.round(v * 10 ^ d) / 10 ^ d or R.round(v / 10 ^ -d) * 10 ^ -d end
      return t
    end
    assert.same({ 1.23, -2.68, 1234.57, 0.12, -0.0 }, want(2)) -- -2.675 * 100 is -267.5 in binary
    assert.same(want(2), x:round({ decimals = 2 }):totable())
    assert.same(want(-2), sk.round(x, { decimals = -2 }):totable())
    assert.same(x:round():totable(), x:round({ decimals = 0 }):totable())
    local y = x:clone()
    y:round_({ decimals = 1 })
    assert.same(want(1), y:totable())
    local out = sk.empty({ 5 }, { dtype = "float64" })
    sk.round(x, { decimals = 3, out = out })
    assert.same(want(3), out:totable())
    -- float32 rounds in float: 10^d and the product are floats, as PyTorch's opmath
    local f = T({ 0.3 }, { dtype = "float32" }):round({ decimals = 1 }):item()
    assert.equal(f32(R.round(f32(f32(0.3) * 10)) / 10), f)
    local g = T({ 1.0 }, { dtype = "float64" })
    assert.equal(sk.gelu(g):item(), sk.gelu(g, { approximate = "none" }):item())
    assert.is_true(abs(sk.gelu(g, { approximate = "tanh" }):item() - sk.gelu(g):item()) > 1e-5)
  end)

  it("accept non-contiguous and expanded inputs", function()
    local m = T({ { 0.5, 1.5, 2.5 }, { -0.5, -1.5, 3.25 } }, { dtype = "float32" })
    local mt = m:t()
    assert.same({ { 0, -0 }, { 2, -2 }, { 2, 3 } }, mt:round():totable())
    assert.same({ { 1, -1 }, { 1, -1 }, { 1, 1 } }, mt:sign():totable())
    assert.same({ { 0.25, 0.25 }, { 2.25, 2.25 }, { 6.25, 10.5625 } }, mt:square():totable())
    h.assert_close(mt:exp():totable(), { { exp(0.5), exp(-0.5) }, { exp(1.5), exp(-1.5) }, { exp(2.5), exp(3.25) } }, 1e-6)
    local e = T({ 0.5 }):expand(5)
    h.assert_close(e:sin():totable(), { math.sin(0.5), math.sin(0.5), math.sin(0.5), math.sin(0.5), math.sin(0.5) }, 1e-6)
    local n = T({ 1.0, 4.0, 9.0, 16.0, 25.0 }):narrow(0, 1, 3)
    assert.same({ 2, 3, 4 }, n:sqrt():totable())
    assert.same({ 0.5, f32(1 / 3), 0.25 }, n:rsqrt():totable())
  end)

  it("keep the shape of empty and 0-dim tensors", function()
    for _, op in ipairs(ALL) do
      local name = op[1]
      local dt = name == "bitwise_not" and "int64" or "float32"
      local e = sk[name](sk.zeros({ 0, 3 }, { dtype = dt }))
      assert.same({ 0, 3 }, e:shape())
      local z = sk[name](T(0.75, { dtype = dt }))
      assert.same({}, z:shape())
    end
    assert.equal(0.75, T(0.75):frac():item())
    assert.equal(-1, T(-2.5):sign():item())
    h.assert_close({ T(0.75):exp2():item() }, { 2 ^ 0.75 }, 1e-6)
  end)
end)

describe("dtype rules", function()
  it("promote integer and bool inputs of float-valued functions to float32", function()
    for _, name in ipairs { "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "reciprocal", "sin", "cos", "tan",
                            "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc" } do
      for _, dt in ipairs { "uint8", "int8", "int16", "int32", "int64", "bool" } do
        local x = dt == "bool" and T({ true, false }) or T({ 1, 2 }, { dtype = dt })
        assert.equal("float32", sk[name](x):dtype(), name .. " of " .. dt)
      end
    end
    h.assert_close(T({ 1, 4 }):rsqrt():totable(), { 1, 0.5 }, 1e-7)
    assert.same({ 0.25, -0.5, inf }, T({ 4, -2, 0 }):reciprocal():totable())
    assert.same({ 0, -1 }, T({ true, false }):log2():exp2():sub(1):totable())
    assert.same({ 3, 10 }, T({ 8, 1024 }, { dtype = "int16" }):log2():totable())
  end)

  it("sign, square, floor, ceil, trunc, round keep integer dtypes", function()
    local i8 = T({ -128, -3, 0, 7, 127 }, { dtype = "int8" })
    assert.same({ -1, -1, 0, 1, 1 }, i8:sign():totable())
    assert.equal("int8", i8:sign():dtype())
    assert.same({ 0, 1, 1 }, T({ 0, 1, 255 }, { dtype = "uint8" }):sign():totable())
    assert.same({ true, false }, T({ true, false }):sign():totable())
    assert.same({ 9, 0, 49 }, T({ -3, 0, 7 }):square():totable())
    assert.same({ -112, 0 }, T({ 12, 16 }, { dtype = "int8" }):square():totable()) -- wraps: 144 - 256
    assert.same({ 0, 1 }, T({ 16, 255 }, { dtype = "uint8" }):square():totable())
    local b = T({ true, false }):square()
    assert.equal("int64", b:dtype()) -- pow(self, 2): bool promotes with the int exponent
    assert.same({ 1, 0 }, b:totable())
    assert.same({ 0.25, 2.25 }, T({ -0.5, 1.5 }):square():totable())
    local big = T({ 9007199254740993, -5, 0 }, { dtype = "int64" })
    for _, name in ipairs { "floor", "ceil", "trunc", "round" } do
      local r = big[name](big)
      assert.equal("int64", r:dtype())
      assert.same({ 9007199254740993, -5, 0 }, r:totable())
      assert.same({ 200, 3 }, T({ 200, 3 }, { dtype = "uint8" })[name](T({ 200, 3 }, { dtype = "uint8" })):totable())
    end
  end)

  it("relu: clamp at 0, NaN stays, integers keep their dtype", function()
    local r = T({ -1.0, 0.0, 2.5, nan }):relu():totable()
    assert.same({ 0, 0, 2.5 }, { r[1], r[2], r[3] })
    assert.is_true(r[4] ~= r[4])
    local i = T({ -3, 4 }, { dtype = "int32" })
    assert.same({ 0, 4 }, i:relu():totable())
    assert.equal("int32", i:relu():dtype())
    sk.relu_(i)
    assert.same({ 0, 4 }, i:totable())
    assert.same({ 0, 1.5 }, T({ -2, 1.5 }, { dtype = "bfloat16" }):relu():totable())
  end)

  it("gelu and silu keep the float dtype, in float16 and bfloat16 too", function()
    for _, dt in ipairs { "float16", "bfloat16", "float32", "float64" } do
      local x = T({ -1.0, 0.0, 2.0 }, { dtype = dt })
      assert.equal(dt, sk.gelu(x):dtype())
      assert.equal(dt, sk.silu(x):dtype())
      h.assert_close(sk.silu(x):totable(), { -1 / (1 + exp(1)), 0, 2 / (1 + exp(-2)) }, 1e-2)
    end
  end)

  it("nan_to_num: replacements default to 0 and the dtype's largest finite values", function()
    local x = T({ nan, inf, -inf, 1.5, -0.0 }, { dtype = "float32" })
    local fmax = 3.4028234663852886e38
    assert.same({ 0, fmax, -fmax, 1.5, -0.0 }, x:nan_to_num():totable())
    assert.same({ 1, 2, -2, 1.5, 0 }, x:nan_to_num(1, 2, -2):totable())
    assert.same({ 0, 7, -fmax, 1.5, 0 }, x:nan_to_num({ posinf = 7 }):totable())
    assert.same({ 0, inf, -inf, 1.5, 0 }, x:nan_to_num(0, 1e300, -1e300):totable()) -- cast to float32
    local d = T({ nan, inf, -inf }, { dtype = "float64" }):nan_to_num():totable()
    assert.same({ 0, 1.7976931348623157e308, -1.7976931348623157e308 }, d)
    assert.same({ 0, 65504, -65504 }, T({ nan, inf, -inf }, { dtype = "float16" }):nan_to_num():totable())
    assert.same({ 0, 3.3895313892515355e38, -3.3895313892515355e38 },
      T({ nan, inf, -inf }, { dtype = "bfloat16" }):nan_to_num():totable())
    local i = T({ 1, -2 }, { dtype = "int16" })
    assert.same({ 1, -2 }, i:nan_to_num(5):totable())
    assert.equal("int16", i:nan_to_num():dtype())
    assert.same({ true, false }, T({ true, false }):nan_to_num():totable())
    local y = x:clone()
    y:nan_to_num_(-1)
    assert.same({ -1, fmax, -fmax, 1.5, 0 }, y:totable())
    local out = sk.empty({ 5 }, { dtype = "float32" })
    sk.nan_to_num(x, 9, { out = out })
    assert.same({ 9, fmax, -fmax, 1.5, 0 }, out:totable())
  end)

  it("logical_not reads any dtype and writes bool, or the out's dtype", function()
    assert.same({ true, true, false, false, false }, T({ 0.0, -0.0, 1.0, nan, inf }):logical_not():totable())
    assert.same({ true, false, false }, T({ 0, 3, -1 }, { dtype = "int8" }):logical_not():totable())
    assert.same({ false, true }, T({ true, false }):logical_not():totable())
    assert.same({ true, false }, T({ 0, 0.5 }, { dtype = "float16" }):logical_not():totable())
    assert.equal("bool", T({ 1, 2 }):logical_not():dtype())
    local out = sk.empty({ 3 }, { dtype = "float64" })
    sk.logical_not(T({ 0, 1, 2 }), { out = out })
    assert.same({ 1, 0, 0 }, out:totable())
    local m = T({ { 0, 1 }, { 2, 0 } }, { dtype = "int32" }):t()
    assert.same({ { true, false }, { false, true } }, m:logical_not():totable())
  end)

  it("bitwise_not: integers and bool", function()
    assert.same({ -1, 0, -6, 127 }, T({ 0, -1, 5, -128 }, { dtype = "int8" }):bitwise_not():totable())
    assert.same({ 255, 0, 240 }, T({ 0, 255, 15 }, { dtype = "uint8" }):bitwise_not():totable())
    assert.same({ false, true }, T({ true, false }):bitwise_not():totable())
    assert.same({ -9007199254740994 }, T({ 9007199254740993 }, { dtype = "int64" }):bitwise_not():totable())
    local x = T({ 1, 2 }, { dtype = "int32" })
    x:bitwise_not_()
    assert.same({ -2, -3 }, x:totable())
  end)

  it("isnan, isinf, isfinite give bool tensors", function()
    for _, dt in ipairs { "float32", "float64", "float16", "bfloat16" } do
      local x = T({ nan, inf, -inf, 0.0, -2.5 }, { dtype = dt })
      assert.same({ true, false, false, false, false }, x:isnan():totable())
      assert.same({ false, true, true, false, false }, x:isinf():totable())
      assert.same({ false, false, false, true, true }, sk.isfinite(x):totable())
      assert.equal("bool", x:isinf():dtype())
    end
    for _, x in ipairs { T({ 1, -2 }, { dtype = "int32" }), T({ true, false }), T({ 0, 255 }, { dtype = "uint8" }) } do
      assert.same({ false, false }, x:isnan():totable())
      assert.same({ false, false }, x:isinf():totable())
      assert.same({ true, true }, x:isfinite():totable())
    end
    assert.same({ { false, true }, { false, false } }, T({ { 1.0, 0.0 }, { inf, 2.0 } }):t():isinf():totable())
    assert.same({}, T(2.0):isfinite():shape())
  end)
end)

describe("errors", function()
  it("name the argument or the dtype the kernel refuses, and write nothing", function()
    assert.matches("sk.gelu: approximate argument must be either none or tanh%.", h.err(sk.gelu, T({ 1.0 }), { approximate = "erf" }))
    assert.matches('"bitwise_not_cpu" not implemented for \'Float\'', h.err(function() return T({ 1.5 }):bitwise_not() end))
    assert.matches('"frac_cpu" not implemented for \'Long\'', h.err(function() return T({ 1 }):frac() end))
    assert.matches('"silu_cpu" not implemented for \'Int\'', h.err(sk.silu, T({ 1 }, { dtype = "int32" })))
    assert.matches('"GeluKernelImpl" not implemented for \'Long\'', h.err(sk.gelu, T({ 1 })))
    assert.matches('"floor_vml_cpu" not implemented for \'Bool\'', h.err(function() return T({ true }):floor() end))
    assert.matches('"round_cpu" not implemented for \'Long\'', h.err(function() return T({ 1 }):round({ decimals = 1 }) end))
    assert.matches("Boolean inputs not supported for relu", h.err(function() return T({ true }):relu() end))
    local out = sk.zeros({ 2 }, { dtype = "float64" })
    assert.matches("sk.nan_to_num: dtype of out: float64 should be same as input: float32",
      h.err(sk.nan_to_num, T({ nan, 1 }, { dtype = "float32" }), { out = out }))
    assert.same({ 0, 0 }, out:totable())
    local i = T({ 1, 2 })
    assert.matches("result type float32 can't be cast to the desired output type int64",
      h.err(function() return i:sin_() end))
    assert.same({ 1, 2 }, i:totable())
    assert.matches("result type int64 can't be cast to the desired output type bool",
      h.err(function() return T({ true }):square_() end))
    assert.matches("sk.exp2: argument 'out' has shape %[2%], but the result has shape %[3%]",
      h.err(sk.exp2, T({ 1.0, 2.0, 3.0 }), { out = sk.zeros({ 2 }) }))
  end)
end)

describe("Meta tensors", function()
  it("give the CPU result's shape and dtype for every op and input dtype", function()
    local ops = {}
    for _, op in ipairs(ALL) do ops[#ops + 1] = op[1] end
    for _, name in ipairs { "isnan", "isinf", "isfinite" } do ops[#ops + 1] = name end
    for _, name in ipairs(ops) do
      for _, dt in ipairs { "float32", "float64", "float16", "int32", "uint8", "bool" } do
        local ok, cpu = pcall(sk[name], sk.zeros({ 2, 3 }, { dtype = dt }))
        if ok then
          local meta = sk[name](sk.empty({ 2, 3 }, { dtype = dt, device = "meta" }))
          assert.equal("meta", meta:device())
          assert.same(cpu:shape(), meta:shape())
          assert.equal(cpu:dtype(), meta:dtype(), name .. " of " .. dt)
        end
      end
    end
    local m = sk.empty({ 4 }, { device = "meta" })
    assert.equal("float32", sk.gelu(m, { approximate = "tanh" }):dtype())
    assert.same({ 4 }, m:round({ decimals = 2 }):shape())
    assert.equal("float32", m:nan_to_num(0):dtype())
    assert.matches("approximate argument must be either none or tanh", h.err(sk.gelu, m, { approximate = "x" }))
  end)
end)
-- }====

describe("float32 erf and GELU", function()
  -- sk's own float32 erf (kernels/cpu/sk_cpu_unary_simd.c) against the float64 ops, at every
  -- instruction-set level: a dense sweep of [-6, 6] and of tiny magnitudes, in a child per level.
  local script = [[
    local sk = require "sk"
    local function ulps(r32, r64) -- |r32 - r64| in float32 ulps of r64, the largest
      local a = r64:abs():clamp(2 ^ -126)
      local ulp = (a:log2():floor() - 23):exp2()
      return ((r32:to("float64") - r64):abs() / ulp):max():item()
    end
    local xs = sk.cat({ sk.linspace(-6, 6, 1 << 20, { dtype = "float64" }),
                        sk.logspace(-30, 0, 1 << 16, { dtype = "float64" }),
                        -sk.logspace(-30, 0, 1 << 16, { dtype = "float64" }) }):to("float32")
    local x64 = xs:to("float64")
    io.write(sk.cpu_isa(), " ", ulps(sk.erf(xs), sk.erf(x64)))
    -- GELU and its gradient: within a few ulps of the value plus the rounding of 1 + erf (or
    -- 1 + tanh) near -1 that float32 GELU has everywhere (PyTorch's too), 2^-23 of the scale
    -- |x| (|g| (1 + |x|) for the gradient)
    local function err(r32, r64, scale)
      local a = r64:abs():clamp(2 ^ -126)
      local ulp = (a:log2():floor() - 23):exp2()
      return ((r32:to("float64") - r64):abs() / (ulp + scale * 2 ^ -23)):max():item()
    end
    local g = sk.randn(xs:shape(), { dtype = "float32" })
    local g64 = g:to("float64")
    for _, approx in ipairs { "none", "tanh" } do
      io.write(" ", err(sk.gelu(xs, { approximate = approx }), sk.gelu(x64, { approximate = approx }), x64:abs()))
      io.write(" ", err(sk.gelu_backward(g, xs, { approximate = approx }),
                        sk.gelu_backward(g64, x64, { approximate = approx }), g64:abs() * (x64:abs() + 1)))
    end
    -- exact GELU's relative error where x·Φ(x) is small, x in [-5.6, 0): Φ is erfc(-x/√2)/2 on
    -- every path, never 1 + erf (PyTorch 1.13's float32 GELU is off by 5 % at -4, 100 % at -5.5);
    -- likewise tanh GELU's 0.5·(1 + tanh y) is the logistic function of 2y (PyTorch's: 30 % off at -5)
    local neg = sk.logical_and(x64:lt(0), x64:gt(-5.6))
    for _, approx in ipairs { "none", "tanh" } do
      local want = sk.gelu(x64[neg], { approximate = approx })
      io.write(" ", ((sk.gelu(xs[neg], { approximate = approx }):to("float64") - want) / want):abs():max():item())
    end
    io.write("\n")
  ]]
  it("erf is within 2 ulps, GELU and its gradient within 2 (ulps plus the rounding of 1 + erf), at every level; GELU within 2e-6 relative over [-5.6, 0), tanh GELU within 1e-5", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(script)
    f:close()
    for _, level in ipairs(LEVELS) do
      local p = assert(io.popen("SK_CPU_ISA=" .. level .. " lua5.4 " .. path .. " 2>&1"))
      local text = p:read("a")
      assert(p:close(), text)
      local isa, e, g, gb, gt, gtb, rel, relt = text:match("^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (%S+)")
      assert(isa, text)
      local where = " at SK_CPU_ISA=" .. level .. " (" .. isa .. ")"
      assert(tonumber(e) <= 2, "erf off by " .. e .. " ulps" .. where)
      for name, v in pairs { gelu = g, gelu_backward = gb, ["gelu tanh"] = gt, ["gelu_backward tanh"] = gtb } do
        assert(tonumber(v) <= 2, name .. " off by " .. v .. " ulps" .. where)
      end
      assert(tonumber(rel) <= 2e-6, "gelu's relative error below 0 is " .. rel .. where)
      assert(tonumber(relt) <= 1e-5, "tanh gelu's relative error below 0 is " .. relt .. where)
    end
    os.remove(path)
  end)
end)
