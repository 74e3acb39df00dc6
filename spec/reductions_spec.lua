-- spec/reductions_spec.lua — the reductions and scans of issue 13: nansum, nanmean, count_nonzero,
-- aminmax, var_mean/std_mean, diff, trace, dist, renorm, trapezoid, cumulative_trapezoid,
-- logcumsumexp, cummax/cummin, median/nanmedian, kthvalue, mode, quantile/nanquantile.
-- Expected values are hand-worked or come from plain-Lua reference loops (sorting, counting,
-- running extrema) over deterministic data.
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local FLOATS = { "float16", "bfloat16", "float32", "float64" }
local INTS = { "uint8", "int8", "int16", "int32", "int64" }
local NUM = { "float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64" }
local nan, inf = 0 / 0, math.huge
local function isnan(x) return x ~= x end

-- {==== Plain-Lua references ====
-- rows x cols of small integers (exact in every dtype, with ties), from an LCG
local function int_grid(rows, cols, seed, hi)
  local r = h.lcg(seed)
  return h.grid(rows, cols, function() return math.floor(r(0, hi or 6)) end)
end

-- (value, index) pairs of a row sorted stably, NaN last
local function sorted_pairs(row)
  local p = {}
  for i, v in ipairs(row) do p[i] = { v = v, i = i - 1 } end
  table.sort(p, function(a, b)
    local an, bn = isnan(a.v), isnan(b.v)
    if an ~= bn then return bn end
    if not an and a.v ~= b.v then return a.v < b.v end
    return a.i < b.i
  end)
  return p
end

local function count_nan(row)
  local n = 0
  for _, v in ipairs(row) do if isnan(v) then n = n + 1 end end
  return n
end

local function ref_median(row, ignore_nan)
  local p, k = sorted_pairs(row), count_nan(row)
  local pos
  if ignore_nan then pos = #row - k > 0 and (#row - k - 1) // 2 or 0
  else pos = k > 0 and #row - k or (#row - 1) // 2 end
  return p[pos + 1].v, p[pos + 1].i
end

local function ref_mode(row)
  local p = sorted_pairs(row)
  local best, freq, run = 1, 0, 0
  for i = 1, #p do
    run = run + 1
    if i == #p or p[i].v ~= p[i + 1].v then
      if run > freq then freq, best = run, i end
      run = 0
    end
  end
  return p[best].v, p[best].i
end

-- running max / min with PyTorch's rule: NaN takes over, ties move to the later index
local function ref_cum(row, is_max)
  local vals, idx, best = {}, {}, 1
  for i = 1, #row do
    local x, b = row[i], row[best]
    if i == 1 or isnan(x) or (not isnan(b) and (is_max and x >= b or (not is_max and x <= b))) then best = i end
    vals[i], idx[i] = row[best], best - 1
  end
  return vals, idx
end

-- quantile of a row (no NaN) by sorting, each interpolation by its definition
local function ref_quantile(row, q, mode)
  local s = {}
  for i, v in ipairs(row) do s[i] = v end
  table.sort(s)
  local rank = q * (#s - 1)
  local lo, hi = math.floor(rank), math.ceil(rank)
  if mode == "lower" then return s[lo + 1] end
  if mode == "higher" then return s[hi + 1] end
  if mode == "nearest" then
    local f = rank - lo
    local r = (f > 0.5 or (f == 0.5 and lo % 2 == 1)) and hi or lo -- half to even
    return s[r + 1]
  end
  if mode == "midpoint" then return (s[lo + 1] + s[hi + 1]) / 2 end
  return s[lo + 1] + (s[hi + 1] - s[lo + 1]) * (rank - lo)
end

local function col(t, j) local c = {} for i = 1, #t do c[i] = t[i][j] end return c end
-- }====

describe("nansum and nanmean", function()
  it("read NaN as zero, over everything and over dims, with keepdim and dtype", function()
    local x = T({ { 1, nan, 2 }, { nan, nan, 4 } }, { dtype = "float64" })
    assert.equal(7, sk.nansum(x):item())
    assert.same({ 1, 0, 6 }, sk.nansum(x, 0):totable())
    assert.same({ { 3 }, { 4 } }, x:nansum({ 1 }, true):totable())
    assert.equal("float64", sk.nansum(T({ 1, nan }, { dtype = "float32" }), { dtype = "float64" }):dtype())
    assert.same({ 1.5, 4 }, sk.nanmean(x, 1):totable())
    local m = sk.nanmean(x, 0):totable()
    assert.equal(1, m[1]); assert.is_true(isnan(m[2])); assert.equal(3, m[3])
  end)

  it("sum integers and bool as sum does (int64), in every dtype", function()
    for _, dt in ipairs(INTS) do
      local r = sk.nansum(T({ 1, 2, 3 }, { dtype = dt }))
      assert.equal("int64", r:dtype()); assert.equal(6, r:item())
    end
    assert.equal(2, sk.nansum(T({ true, false, true })):item())
    for _, dt in ipairs(FLOATS) do assert.equal(3, sk.nansum(T({ 1, nan, 2 }, { dtype = dt })):item()) end
  end)

  it("write out= and refuse nanmean of integers with PyTorch's text", function()
    local o = sk.empty({ 2 })
    sk.nansum(T({ { 1, nan }, { 2, 3 } }), 1, { out = o })
    assert.same({ 1, 5 }, o:totable())
    sk.nanmean(T({ { 1, nan }, { 2, 3 } }), 1, { out = o })
    assert.same({ 1, 2.5 }, o:totable())
    assert.matches("nanmean%(%): expected input to have floating point dtype but got Long", h.err(sk.nanmean, T({ 1, 2 })))
  end)

  it("give 0 and NaN over empty dims", function()
    assert.same({ 0, 0, 0 }, sk.nansum(sk.zeros({ 0, 3 }), 0):totable())
    assert.is_true(isnan(sk.nanmean(sk.zeros({ 0 })):item()))
  end)
end)

describe("count_nonzero", function()
  it("counts in every dtype, over one dim, a list of dims or everything", function()
    local g = { { 0, 1, 2 }, { 3, 0, 0 } }
    for _, dt in ipairs(NUM) do
      local x = T(g, { dtype = dt })
      assert.equal(3, sk.count_nonzero(x):item())
      assert.same({ 1, 1, 1 }, sk.count_nonzero(x, 0):totable())
      assert.same({ 2, 1 }, x:count_nonzero(1):totable())
      assert.equal(3, sk.count_nonzero(x, { 0, 1 }):item())
      assert.equal("int64", sk.count_nonzero(x):dtype())
    end
    assert.equal(2, sk.count_nonzero(T({ true, false, true })):item())
    assert.equal(1, sk.count_nonzero(T({ nan, 0 })):item()) -- NaN is not zero
    assert.matches("dim 0 appears multiple times", h.err(sk.count_nonzero, T(g), { 0, 0 }))
  end)
end)

describe("aminmax", function()
  it("gives min and max over everything or one dim, with keepdim, in every dtype", function()
    local g = int_grid(3, 4, 7)
    for _, dt in ipairs(NUM) do
      local x = T(g, { dtype = dt })
      local lo, hi = sk.aminmax(x)
      assert.equal(sk.amin(x):item(), lo:item()); assert.equal(sk.amax(x):item(), hi:item())
      lo, hi = x:aminmax({ dim = 1, keepdim = true })
      for i = 1, 3 do
        assert.equal(math.min(table.unpack(g[i])), lo:totable()[i][1])
        assert.equal(math.max(table.unpack(g[i])), hi:totable()[i][1])
      end
    end
    local lo, hi = sk.aminmax(T({ true, false }))
    assert.is_false(lo:item()); assert.is_true(hi:item())
    lo = sk.aminmax(T({ { 1, 2 } }), { keepdim = true })
    assert.same({ 1, 1 }, lo:shape())
  end)

  it("keeps a 0-d input's shape [] with dim and keepdim (PyTorch 1.13 gives [1] for keepdim)", function()
    for _, keep in ipairs { false, true } do
      local lo, hi = sk.aminmax(T(3.5), { dim = 0, keepdim = keep })
      assert.same({}, lo:shape()); assert.same({}, hi:shape())
      assert.equal(3.5, lo:item()); assert.equal(3.5, hi:item())
    end
    local lo = sk.aminmax(T(-2), { dim = -1, keepdim = true })
    assert.same({}, lo:shape())
  end)

  it("writes both outs and refuses empty reductions with PyTorch's texts", function()
    local a, b = sk.empty({ 2 }), sk.empty({ 2 })
    sk.aminmax(T({ { 1, 5 }, { -2, 0 } }), { dim = 1, min = a, max = b })
    assert.same({ 1, -2 }, a:totable()); assert.same({ 5, 0 }, b:totable())
    assert.matches("aminmax%(%): cannot compute aminmax over an empty dimension as the operation has no identity",
                   h.err(sk.aminmax, sk.zeros({ 0, 3 })))
    assert.matches("aminmax: Expected reduction dim 0 to have non%-zero size", h.err(sk.aminmax, sk.zeros({ 0, 3 }), { dim = 0 }))
    local lo = sk.aminmax(sk.zeros({ 0, 3 }), { dim = 1 })
    assert.same({ 0 }, lo:shape())
  end)
end)

describe("var_mean and std_mean", function()
  it("give var/std and mean together (unbiased, dims, correction, keepdim)", function()
    local x = T({ { 1, 2, 4 }, { 0, 0, 3 } }, { dtype = "float64" })
    local v, m = sk.var_mean(x)
    h.assert_close(v:item(), 8 / 3)   -- mean 5/3; squares about it sum to 40/3; / 5
    h.assert_close(m:item(), 10 / 6)
    v, m = sk.var_mean(x, { 1 }, false)
    h.assert_close(v:totable(), { 14 / 9, 2 }); h.assert_close(m:totable(), { 7 / 3, 1 })
    local s
    s, m = sk.std_mean(x, { 0 }, { correction = 0, keepdim = true })
    h.assert_close(s:totable(), { { 0.5, 1, 0.5 } }); h.assert_close(m:totable(), { { 0.5, 1, 3.5 } })
    s = sk.std_mean(x, false)
    h.assert_close(s:item(), math.sqrt(40 / 18))
  end)

  it("refuse integers with PyTorch's texts", function()
    assert.matches("var_mean only support floating point and complex dtypes", h.err(sk.var_mean, T({ 1, 2 })))
    assert.matches("std_mean only support floating point and complex dtypes", h.err(sk.std_mean, T({ 1, 2 })))
  end)
end)

describe("diff", function()
  it("takes n-th differences along dim, with prepend and append", function()
    local x = T({ 1, 4, 9, 16, 25 })
    assert.same({ 3, 5, 7, 9 }, sk.diff(x):totable())
    assert.same({ 2, 2, 2 }, x:diff(2):totable())
    assert.same({ 0 }, sk.diff(x, 4):shape() and { sk.diff(x, 4):item() }) -- 25 - 4*16 + 6*9 - 4*4 + 1
    assert.same({ 0 }, sk.diff(x, 7):shape()) -- n past the length leaves nothing
    assert.same({ 1, 4, 9, 16, 25 }, sk.diff(x, 0):totable())
    local m = T({ { 1, 2 }, { 5, 3 } })
    assert.same({ { 4, 1 } }, sk.diff(m, 1, 0):totable())
    assert.same({ { -1, 1, 1, 4 }, { -5, -2, -2, 7 } }, sk.diff(m, 1, 1, T({ { 2 }, { 10 } }), T({ { 3, 7 }, { 1, 8 } })):totable())
  end)

  it("n = 0 returns the input unchanged, without prepend and append (PyTorch, NumPy)", function()
    local x = T({ 1, 2, 4 })
    assert.same({ 1, 2, 4 }, sk.diff(x, 0, 0, T({ 9 }), T({ 7 })):totable())
    assert.same({ true, false }, sk.diff(T({ true, false }), 0, 0, T({ true })):totable())
    local r = sk.diff(T({ { 1, 2 } }), 0, 1, T({ { 5 } }))
    assert.same({ { 1, 2 } }, r:totable())
    assert.matches("diff expects prepend or append to be the same dimension as input", h.err(sk.diff, x, 0, 0, T({ { 9 } })))
  end)

  it("uses logical_xor for bool and keeps every numeric dtype", function()
    assert.same({ true, false, true }, sk.diff(T({ true, false, false, true })):totable())
    for _, dt in ipairs(NUM) do
      local r = sk.diff(T({ 1, 3, 6 }, { dtype = dt }))
      assert.equal(dt, r:dtype()); assert.same({ 2, 3 }, r:totable())
    end
  end)

  it("writes out= and refuses bad inputs with PyTorch's texts", function()
    local o = sk.empty({ 0 })
    sk.diff(T({ 1., 2, 4 }), { out = o })
    assert.same({ 1, 2 }, o:totable())
    assert.matches("diff expects input to be at least one%-dimensional", h.err(sk.diff, T(1)))
    assert.matches("order must be non%-negative but got %-1", h.err(sk.diff, T({ 1, 2 }), -1))
    assert.matches("diff expects prepend or append to be the same dimension as input",
                   h.err(sk.diff, T({ { 1, 2 } }), 1, 1, T({ 0 })))
  end)
end)

describe("trace, dist, renorm", function()
  it("trace sums the main diagonal (int64 for integers) and wants a matrix", function()
    assert.equal(5, sk.trace(T({ { 1, 2 }, { 3, 4 } })):item())
    assert.equal(6, T({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "int8" }):trace():item())
    assert.equal("int64", sk.trace(T({ { 1 } }, { dtype = "int16" })):dtype())
    h.assert_close(sk.trace(T({ { 0.5, 9 }, { 9, 0.25 } })):item(), 0.75)
    assert.equal(0, sk.trace(sk.zeros({ 0, 3 })):item())
    assert.matches("trace: expected a matrix, but got tensor with dim 1", h.err(sk.trace, T({ 1, 2 })))
    assert.matches("\"trace\" not implemented for 'Bool'", h.err(sk.trace, T({ { true } })))
  end)

  it("dist is the p-norm of the difference, broadcasting", function()
    local a, b = T({ { 1., 2 }, { 3, 4 } }), T({ 1., 0 })
    h.assert_close(sk.dist(a, b):item(), math.sqrt(0 + 4 + 4 + 16))
    h.assert_close(a:dist(b, 1):item(), 8)
    h.assert_close(sk.dist(a, b, math.huge):item(), 4)
    h.assert_close(sk.dist(a, b, 0):item(), 3)
    assert.matches("norm%(%): input dtype should be either floating point or complex", h.err(sk.dist, T({ 1 }), T({ 2 })))
  end)

  it("renorm scales each slice whose norm exceeds maxnorm, in place and into out", function()
    local x = T({ { 3, 4 }, { 0.3, 0.4 } }, { dtype = "float64" })
    local s = 1 / (5 + 1e-7)
    h.assert_close(sk.renorm(x, 2, 0, 1):totable(), { { 3 * s, 4 * s }, { 0.3, 0.4 } }, 1e-12)
    -- over dim 1 the columns' norms are sqrt(9.09) and sqrt(16.16)
    local c1, c2 = math.sqrt(9.09), math.sqrt(16.16)
    h.assert_close(x:renorm(2, 1, 2):totable(), { { 3 * 2 / (c1 + 1e-7), 4 * 2 / (c2 + 1e-7) }, { 0.3 * 2 / (c1 + 1e-7), 0.4 * 2 / (c2 + 1e-7) } }, 1e-12)
    h.assert_close(sk.renorm(x, 1, 0, 0.7):totable()[2], { 0.3, 0.4 }, 1e-12) -- a norm equal to maxnorm stays
    h.assert_close(sk.renorm(x, 1, 0, 0.5):totable()[2], { 0.3 * 0.5 / (0.7 + 1e-7), 0.4 * 0.5 / (0.7 + 1e-7) }, 1e-12)
    local y = x:clone()
    y:renorm_(2, 0, 1)
    h.assert_close(y:totable(), sk.renorm(x, 2, 0, 1):totable(), 1e-12)
    local o = sk.empty({ 2, 2 }, { dtype = "float64" })
    sk.renorm(x, 2, 0, 1, { out = o })
    h.assert_close(o:totable(), y:totable(), 1e-12)
    for _, dt in ipairs(FLOATS) do assert.equal(dt, sk.renorm(T({ { 1, 2 } }, { dtype = dt }), 2, 0, 1):dtype()) end
    assert.matches("renorm: input needs at least 2 dimensions, got 1 dimensions", h.err(sk.renorm, T({ 1., 2 }), 2, 0, 1))
    assert.matches("renorm: non%-positive%-norm not supported", h.err(sk.renorm, x, 0, 0, 1))
    assert.matches("renorm: expected maxnorm to be >= 0 but got %-1", h.err(sk.renorm, x, 2, 0, -1))
  end)
end)

describe("trapezoid and cumulative_trapezoid", function()
  it("integrate with spacing dx or sample points x, along dim", function()
    local y = T({ { 1, 2, 4 }, { 0, 1, 1 } })
    h.assert_close(sk.trapezoid(y):totable(), { 4.5, 1.5 })
    h.assert_close(sk.trapezoid(y, { dx = 2 }):totable(), { 9, 3 })
    h.assert_close(sk.trapezoid(y, { dim = 0 }):totable(), { 0.5, 1.5, 2.5 })
    h.assert_close(sk.trapezoid(y, T({ 0., 1, 3 })):totable(), { 1.5 + 6, 0.5 + 2 })
    h.assert_close(sk.trapezoid(y, T({ { 0., 1, 3 }, { 0, 2, 2 } })):totable(), { 7.5, 1 })
    h.assert_close(sk.cumulative_trapezoid(y):totable(), { { 1.5, 4.5 }, { 0.5, 1.5 } })
    h.assert_close(sk.cumulative_trapezoid(y, { dx = 0.5, dim = 0 }):totable(), { { 0.25, 0.75, 1.25 } })
    h.assert_close(sk.cumulative_trapezoid(y, T({ 0., 1, 3 })):totable(), { { 1.5, 7.5 }, { 0.5, 2.5 } })
  end)

  it("give zeros for no samples, float results for integers, and PyTorch's errors", function()
    assert.same({ 0, 0 }, sk.trapezoid(sk.zeros({ 2, 0 })):totable())
    assert.same({ 2, 0 }, sk.cumulative_trapezoid(sk.zeros({ 2, 0 })):shape())
    for _, dt in ipairs(INTS) do
      local r = sk.trapezoid(T({ 1, 2, 4 }, { dtype = dt }), { dx = 2 })
      assert.equal("float32", r:dtype()); assert.equal(9, r:item())
    end
    assert.matches("trapezoid: There must be one `x` value for each sample point",
                   h.err(sk.trapezoid, T({ 1., 2, 4 }), T({ 0., 1 })))
    assert.matches("cumulative_trapezoid: There must be one `x` value for each sample point",
                   h.err(sk.cumulative_trapezoid, T({ 1., 2, 4 }), T({ 0., 1 })))
    assert.matches("bool is not supported", h.err(sk.trapezoid, T({ true, false })))
    assert.matches("Dimension specified as %-1 but tensor has no dimensions", h.err(sk.trapezoid, T(1.)))
  end)
end)

describe("logcumsumexp", function()
  it("is log(cumsum(exp)) computed without overflow, and keeps infinities", function()
    local r = sk.logcumsumexp(T({ -1000, 0, -inf, 1000 }, { dtype = "float64" }), 0):totable()
    assert.equal(-1000, r[1]); h.assert_close(r[2], 0); h.assert_close(r[3], 0); h.assert_close(r[4], 1000)
    local x = T({ { 0.5, -1, 2 }, { 1, 1, 1 } }, { dtype = "float64" })
    local want = {}
    for i = 1, 2 do
      local row, s = x:totable()[i], 0
      want[i] = {}
      for j = 1, 3 do s = s + math.exp(row[j]); want[i][j] = math.log(s) end
    end
    h.assert_close(x:logcumsumexp(1):totable(), want, 1e-12)
    h.assert_close(sk.logcumsumexp(x, 0):totable()[2][1], math.log(math.exp(0.5) + math.exp(1)), 1e-12)
    assert.same({ -inf, -inf }, sk.logcumsumexp(T({ -inf, -inf }), 0):totable())
    assert.same({ inf, inf }, sk.logcumsumexp(T({ inf, 1 }), 0):totable())
    assert.is_true(isnan(sk.logcumsumexp(T({ 1, nan, 2 }), 0):totable()[3]))
  end)

  it("takes every float dtype, writes out=, refuses integers", function()
    for _, dt in ipairs(FLOATS) do
      local r = sk.logcumsumexp(T({ 0, 0 }, { dtype = dt }), 0)
      assert.equal(dt, r:dtype()); h.assert_close(r:totable(), { 0, math.log(2) }, 1e-2)
    end
    local o = sk.empty({ 2 })
    sk.logcumsumexp(T({ 0., 0 }), 0, { out = o })
    h.assert_close(o:totable(), { 0, math.log(2) })
    assert.matches("\"logcumsumexp\" not implemented for 'Long'", h.err(sk.logcumsumexp, T({ 1, 2 }), 0))
    assert.equal(3, sk.logcumsumexp(T(3.), 0):item())
  end)
end)

describe("cummax and cummin", function()
  it("match a running extremum, in every dtype, over every dim of a non-contiguous input", function()
    local g = int_grid(4, 5, 11)
    for _, dt in ipairs(NUM) do
      local x = T(g, { dtype = dt })
      for _, is_max in ipairs { true, false } do
        local f = is_max and sk.cummax or sk.cummin
        local v, i = f(x, 1)
        for r = 1, 4 do
          local wv, wi = ref_cum(g[r], is_max)
          assert.same(wv, v:totable()[r]); assert.same(wi, i:totable()[r])
        end
        v, i = f(x:t(), 1) -- rows of the transpose are g's columns
        for c = 1, 5 do
          local wv, wi = ref_cum(col(g, c), is_max)
          assert.same(wv, v:totable()[c]); assert.same(wi, i:totable()[c])
        end
      end
    end
  end)

  it("propagate NaN with the last NaN's index, and take bool", function()
    local v, i = sk.cummax(T({ 1, 3, 3, 2, 3, nan, 1 }), 0)
    assert.same({ 0, 1, 2, 2, 4, 5, 5 }, i:totable())
    assert.is_true(isnan(v:totable()[7]))
    v, i = sk.cummin(T({ nan, 1, nan }), 0)
    assert.same({ 0, 0, 2 }, i:totable())
    v, i = T({ true, false, true }):cummax(0)
    assert.same({ true, true, true }, v:totable()); assert.same({ 0, 0, 2 }, i:totable())
  end)

  it("handle 0-dim and empty inputs, out=, and bad dims", function()
    local v, i = sk.cummax(T(5.), 0)
    assert.equal(5, v:item()); assert.equal(0, i:item())
    v = sk.cummin(sk.zeros({ 0, 3 }), 0)
    assert.same({ 0, 3 }, v:shape())
    local ov, oi = sk.empty({ 3 }), sk.empty({ 3 }, { dtype = "int64" })
    sk.cummin(T({ 2., 1, 3 }), 0, { values = ov, indices = oi })
    assert.same({ 2, 1, 1 }, ov:totable()); assert.same({ 0, 1, 1 }, oi:totable())
    assert.matches("dimension out of range", h.err(sk.cummax, T({ 1 }), 1))
  end)
end)

describe("median, nanmedian, kthvalue, mode", function()
  it("match sorting references in every dtype, over each dim, keepdim", function()
    local g = int_grid(4, 5, 3)
    for _, dt in ipairs(NUM) do
      local x = T(g, { dtype = dt })
      local v, i = sk.median(x, 1)
      local kv, ki = sk.kthvalue(x, 2, 1)
      local mv, mi = x:mode(1)
      for r = 1, 4 do
        local wv, wi = ref_median(g[r])
        assert.equal(wv, v:totable()[r]); assert.equal(wi, i:totable()[r])
        local p = sorted_pairs(g[r])
        assert.equal(p[2].v, kv:totable()[r]); assert.equal(p[2].i, ki:totable()[r])
        wv, wi = ref_mode(g[r])
        assert.equal(wv, mv:totable()[r]); assert.equal(wi, mi:totable()[r])
      end
      v, i = x:median(0, true)
      assert.same({ 1, 5 }, v:shape())
      for c = 1, 5 do
        local wv, wi = ref_median(col(g, c))
        assert.equal(wv, v:totable()[1][c]); assert.equal(wi, i:totable()[1][c])
      end
      v = sk.nanmedian(x:t(), 1)
      for c = 1, 5 do assert.equal((ref_median(col(g, c), true)), v:totable()[c]) end
    end
  end)

  it("median over everything is the lower middle; NaN propagates; nanmedian skips NaN", function()
    assert.equal(2, sk.median(T({ { 4, 1 }, { 2, 3 } })):item())
    assert.equal(3, T({ 3., 1, 4, 1, 5, 9 }):median():item())
    assert.is_true(isnan(sk.median(T({ 1, nan, 2 })):item()))
    assert.equal(1, sk.nanmedian(T({ 1, nan, 2, nan })):item())
    assert.is_true(isnan(sk.nanmedian(T({ nan, nan })):item()))
    assert.is_true(isnan(sk.median(sk.zeros({ 0 })):item()))
    local v, i = sk.median(T({ 1, nan, 2, nan }), 0)
    assert.is_true(isnan(v:item())); assert.equal(1, i:item()) -- the first NaN
    v, i = sk.nanmedian(T({ nan, 1, nan, 2, 3 }), 0)
    assert.equal(2, v:item()); assert.equal(3, i:item())
    v, i = sk.nanmedian(T({ nan, nan }), 0)
    assert.is_true(isnan(v:item())); assert.equal(0, i:item())
    v, i = sk.kthvalue(T({ 1, nan, 2 }), 3)
    assert.is_true(isnan(v:item())); assert.equal(1, i:item()) -- NaN ranks above everything
  end)

  it("mode takes the smallest of equally frequent values, at its last index; bool too", function()
    local v, i = sk.mode(T({ 1, 2, 2, 3, 3, 1 }))
    assert.equal(1, v:item()); assert.equal(5, i:item())
    v, i = sk.mode(T({ true, false, true }))
    assert.is_true(v:item()); assert.equal(2, i:item())
  end)

  it("handle 0-dim inputs, empty non-reduced dims and out=", function()
    local v, i = sk.median(T(7.), 0)
    assert.equal(7, v:item()); assert.equal(0, i:item())
    v, i = sk.kthvalue(T(7.), 1, 0, true)
    assert.equal(7, v:item())
    v = sk.mode(sk.zeros({ 0, 3 }), 1)
    assert.same({ 0 }, v:shape())
    local ov, oi = sk.empty({ 0 }), sk.empty({ 0 }, { dtype = "int64" })
    sk.kthvalue(T({ { 5., 1, 3 }, { 2, 2, 0 } }), 3, 1, { values = ov, indices = oi })
    assert.same({ 5, 2 }, ov:totable()); assert.same({ 0, 1 }, oi:totable())
    sk.median(T({ { 5., 1, 3 }, { 2, 2, 0 } }), 1, { values = ov, indices = oi })
    assert.same({ 3, 2 }, ov:totable()); assert.same({ 2, 0 }, oi:totable())
  end)

  it("refuse empty reduced dims, bad k and bool (median) with PyTorch's texts", function()
    assert.matches("median%(%): Expected reduction dim 0 to have non%-zero size", h.err(sk.median, sk.zeros({ 0, 3 }), 0))
    assert.matches("nanmedian%(%): Expected reduction dim 0 to have non%-zero size", h.err(sk.nanmedian, sk.zeros({ 0 }), 0))
    assert.matches("mode%(%): Expected reduction dim 1 to have non%-zero size", h.err(sk.mode, sk.zeros({ 2, 0 }), 1))
    assert.matches("kthvalue%(%): selected number k out of range for dimension 0", h.err(sk.kthvalue, T({ 1., 2 }), 3))
    assert.matches("kthvalue%(%): selected number k out of range for dimension 0", h.err(sk.kthvalue, T({ 1., 2 }), 0))
    assert.matches("\"median\" not implemented for 'Bool'", h.err(sk.median, T({ true }), 0))
  end)
end)

describe("quantile and nanquantile", function()
  local modes = { "linear", "lower", "higher", "midpoint", "nearest" }

  it("match a sorting reference for every interpolation, q Scalar and Tensor", function()
    local r = h.lcg(5)
    local row = {}
    for i = 1, 7 do row[i] = r(-3, 3) end
    local x = T(row, { dtype = "float64" })
    local qs = { 0, 0.1, 0.25, 0.5, 0.6, 0.75, 1 }
    for _, m in ipairs(modes) do
      local got = sk.quantile(x, T(qs, { dtype = "float64" }), { interpolation = m }):totable()
      for k, q in ipairs(qs) do
        h.assert_close(got[k], ref_quantile(row, q, m), 1e-12)
        h.assert_close(x:quantile(q, { interpolation = m }):item(), ref_quantile(row, q, m), 1e-12)
      end
    end
    -- nearest rounds half to even: ranks 1.5 and 2.5 of 0..4 both pick 2
    assert.same({ 0, 2, 2, 2 }, sk.quantile(T({ 0., 1, 2, 3, 4 }), T({ 0.1, 0.375, 0.625, 0.5 }), { interpolation = "nearest" }):totable())
  end)

  it("put q's dim first, reduce dim with keepdim, or everything", function()
    local x = sk.arange(6.):reshape({ 2, 3 })
    local q = T({ 0.25, 0.5 })
    assert.same({ 2, 2, 1 }, sk.quantile(x, q, 1, true):shape())
    h.assert_close(sk.quantile(x, q, 1):totable(), { { 0.5, 3.5 }, { 1, 4 } })
    h.assert_close(sk.quantile(x, q):totable(), { 1.25, 2.5 })
    assert.same({ 1, 3 }, sk.quantile(x, 0.5, 0, true):shape())
    assert.same({ 1, 1 }, sk.quantile(x, 0.5, nil, true):shape())
    h.assert_close(sk.quantile(x, 0.5, 0):totable(), { 1.5, 2.5, 3.5 })
    local o = sk.empty({ 0 })
    sk.quantile(x, q, 1, { out = o })
    h.assert_close(o:totable(), { { 0.5, 3.5 }, { 1, 4 } })
  end)

  it("quantile gives NaN for rows with NaN; nanquantile ignores them", function()
    local x = T({ { 1, nan, 2 }, { 3, 1, 2 } })
    local r = sk.quantile(x, 0.5, 1):totable()
    assert.is_true(isnan(r[1])); assert.equal(2, r[2])
    assert.same({ 1.5, 2 }, sk.nanquantile(x, 0.5, 1):totable())
    assert.is_true(isnan(sk.nanquantile(T({ nan, nan }), 0.5):item()))
  end)

  it("refuse bad inputs with PyTorch's texts", function()
    local x = T({ 1., 2 })
    assert.matches("quantile%(%) q must be in the range %[0, 1%] but got 1.5", h.err(sk.quantile, x, 1.5))
    assert.matches("nanquantile%(%) q must be in the range %[0, 1%] but got %-0.5", h.err(sk.nanquantile, x, -0.5))
    assert.matches("quantile%(%) q values must be in the range %[0, 1%]", h.err(sk.quantile, x, T({ 0.5, 1.5 })))
    assert.matches("quantile%(%) input tensor must be non%-empty", h.err(sk.quantile, sk.zeros({ 0 }), 0.5))
    assert.matches("quantile%(%) q must be a scalar or 1D tensor", h.err(sk.quantile, x, T({ { 0.5 } })))
    assert.matches("quantile%(%) input tensor must be either float or double dtype", h.err(sk.quantile, T({ 1, 2 }), 0.5))
    assert.matches("quantile%(%) q tensor must be same dtype as the input tensor",
                   h.err(sk.quantile, x, T({ 0.5 }, { dtype = "float64" })))
    assert.matches("quantile%(%) interpolation must be one of linear, lower, higher, midpoint or nearest, but got foo",
                   h.err(sk.quantile, x, 0.5, { interpolation = "foo" }))
  end)
end)

describe("Meta shapes of the block", function()
  it("match the CPU's shapes and dtypes", function()
    local cases = {
      { "nansum", function(mk) return sk.nansum(mk({ 2, 3 }), 1, true) end },
      { "nanmean", function(mk) return sk.nanmean(mk({ 2, 3 }), 0) end },
      { "count_nonzero", function(mk) return sk.count_nonzero(mk({ 2, 3 }), 1) end },
      { "aminmax", function(mk) return (sk.aminmax(mk({ 2, 3 }), { dim = 0 })) end },
      { "var_mean", function(mk) return select(2, sk.var_mean(mk({ 2, 3 }), { 1 })) end },
      { "diff", function(mk) return sk.diff(mk({ 2, 5 }), 2) end },
      { "trace", function(mk) return sk.trace(mk({ 3, 3 })) end },
      { "dist", function(mk) return sk.dist(mk({ 2, 3 }), mk({ 3 })) end },
      { "renorm", function(mk) return sk.renorm(mk({ 2, 3 }), 2, 1, 1) end },
      { "trapezoid", function(mk) return sk.trapezoid(mk({ 2, 3 }), mk({ 3 })) end },
      { "cumulative_trapezoid", function(mk) return sk.cumulative_trapezoid(mk({ 2, 3 }), { dim = 0 }) end },
      { "logcumsumexp", function(mk) return sk.logcumsumexp(mk({ 2, 3 }), 1) end },
      { "cummax", function(mk) return select(2, sk.cummax(mk({ 2, 3 }), 0)) end },
      { "median.dim", function(mk) return (sk.median(mk({ 2, 3 }), 1, true)) end },
      { "kthvalue", function(mk) return select(2, sk.kthvalue(mk({ 2, 3 }), 2)) end },
      { "mode", function(mk) return (sk.mode(mk({ 2, 3 }), 0)) end },
      { "quantile", function(mk) return sk.quantile(mk({ 2, 3 }), mk({ 4 }), 1, true) end },
      { "nanquantile", function(mk) return sk.nanquantile(mk({ 2, 3 }), 0.5, 0) end },
    }
    h.assert_meta_like_cpu(cases, function(s) return sk.rand(s) * 0.5 end, function(s) return sk.empty(s, { device = "meta" }) end)
  end)
end)

-- {==== Counting references ====
-- the sorted distinct values of a list, with counts and each element's group (NaN: each its own)
local function ref_unique(list)
  local p = sorted_pairs(list)
  local vals, counts, inv = {}, {}, {}
  for k, e in ipairs(p) do
    if k == 1 or isnan(e.v) or isnan(p[k - 1].v) or e.v ~= p[k - 1].v then vals[#vals + 1], counts[#vals + 1] = e.v, 0 end
    counts[#vals] = counts[#vals] + 1
    inv[e.i + 1] = #vals - 1
  end
  return vals, inv, counts
end
-- }====

describe("unique and unique_consecutive", function()
  it("match a sorting reference in every dtype, with inverse and counts", function()
    local r = h.lcg(21)
    local list = {}
    for i = 1, 12 do list[i] = math.floor(r(0, 5)) end
    local wv, wi, wc = ref_unique(list)
    for _, dt in ipairs(NUM) do
      local u, i, c = sk.unique(T(list, { dtype = dt }), { return_inverse = true, return_counts = true })
      assert.same(wv, u:totable()); assert.same(wi, i:totable()); assert.same(wc, c:totable())
      assert.equal(dt, u:dtype())
    end
    local u, c = sk.unique(T({ true, false, true }), { return_counts = true })
    assert.same({ false, true }, u:totable()); assert.same({ 1, 2 }, c:totable())
  end)

  it("keeps NaNs apart, gives self's shape to the inverse, and empty results for the parts not asked", function()
    local u = sk.unique(T({ nan, 1, nan }))
    local t = u:totable()
    assert.equal(3, #t); assert.equal(1, t[1]); assert.is_true(isnan(t[2]) and isnan(t[3]))
    local _, i = T({ { 1, 2 }, { 3, 1 } }):unique({ return_inverse = true })
    assert.same({ { 0, 1 }, { 2, 0 } }, i:totable())
    local a, b, c = sk._unique2(T({ 3, 1 }))
    assert.same({ 1, 3 }, a:totable()); assert.same({ 0 }, b:shape()); assert.same({ 0 }, c:shape())
    assert.same({ 3 }, sk.unique(T(3)):totable())
    a, b, c = sk._unique2(sk.zeros({ 0 }), true, true, true)
    assert.same({ 0 }, a:shape()); assert.same({ 0 }, b:shape()); assert.same({ 0 }, c:shape())
  end)

  it("finds unique slices along dim", function()
    local u, i, c = sk.unique(T({ { 1, 2 }, { 1, 2 }, { 0, 5 } }), { dim = 0, return_inverse = true, return_counts = true })
    assert.same({ { 0, 5 }, { 1, 2 } }, u:totable()); assert.same({ 1, 1, 0 }, i:totable()); assert.same({ 1, 2 }, c:totable())
    u, i, c = sk.unique_dim(T({ { 1, 2, 1 }, { 3, 0, 3 } }), 1, true, true, true)
    assert.same({ { 1, 2 }, { 3, 0 } }, u:totable()); assert.same({ 0, 1, 0 }, i:totable()); assert.same({ 2, 1 }, c:totable())
    u = sk.unique(sk.zeros({ 0, 3 }), { dim = 0 })
    assert.same({ 0, 3 }, u:shape())
    assert.matches("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied",
                   h.err(sk.unique, sk.zeros({ 2, 0 }), { dim = 0 }))
    assert.matches("Dimension specified as 0 but tensor has no dimensions", h.err(sk.unique, T(1), { dim = 0 }))
  end)

  it("unique_consecutive collapses runs, over everything or along dim", function()
    local u, i, c = sk.unique_consecutive(T({ 1, 1, 2, 2, 3, 1, 1, 2 }), true, true)
    assert.same({ 1, 2, 3, 1, 2 }, u:totable()); assert.same({ 0, 0, 1, 1, 2, 3, 3, 4 }, i:totable())
    assert.same({ 2, 2, 1, 2, 1 }, c:totable())
    u, i, c = sk.unique_consecutive(T({ { 1, 1 }, { 1, 1 }, { 2, 3 } }), true, true, 0)
    assert.same({ { 1, 1 }, { 2, 3 } }, u:totable()); assert.same({ 0, 0, 1 }, i:totable()); assert.same({ 2, 1 }, c:totable())
    u, i = sk.unique_consecutive(T({ { 1, 2 }, { 1, 2 } }), true)
    assert.same({ 1, 2, 1, 2 }, u:totable()); assert.same({ { 0, 1 }, { 2, 3 } }, i:totable())
  end)

  it("is refused on Meta: the shape depends on the values", function()
    local m = sk.empty({ 3 }, { device = "meta" })
    assert.matches("the shape of the result depends on the values", h.err(sk.unique, m))
    assert.matches("the shape of the result depends on the values", h.err(sk.unique_consecutive, m))
    assert.matches("the shape of the result depends on the values", h.err(sk.bincount, sk.empty({ 3 }, { device = "meta", dtype = "int64" })))
  end)
end)

describe("bincount", function()
  it("counts each value, with weights and minlength, in every integer dtype", function()
    local list = { 0, 1, 1, 3, 1, 0 }
    for _, dt in ipairs(INTS) do
      local c = sk.bincount(T(list, { dtype = dt }))
      assert.equal("int64", c:dtype()); assert.same({ 2, 3, 0, 1 }, c:totable())
    end
    assert.same({ 2, 3, 0, 1, 0, 0 }, T(list):bincount(nil, 6):totable())
    local w = sk.bincount(T(list), T({ 0.5, 1, 1, 2, 0.25, 1 }))
    assert.equal("float32", w:dtype()); assert.same({ 1.5, 2.25, 0, 2 }, w:totable())
    assert.equal("float64", sk.bincount(T(list), T({ 1, 1, 1, 1, 1, 1 })):dtype())
    assert.same({ 0, 0, 0 }, sk.bincount(T({}, { dtype = "int64" }), { minlength = 3 }):totable())
  end)

  it("refuses bad inputs with PyTorch's texts", function()
    assert.matches("bincount only supports 1%-d non%-negative integral inputs%.", h.err(sk.bincount, T({ -1, 1 })))
    assert.matches("bincount only supports 1%-d non%-negative integral inputs%.", h.err(sk.bincount, T({ { 1 } })))
    assert.matches("minlength should be >= 0", h.err(sk.bincount, T({ 1 }), { minlength = -1 }))
    assert.matches("weights should be 1%-d and have the same length as input", h.err(sk.bincount, T({ 1, 2 }), T({ 1. })))
    assert.matches("\"bincount_cpu\" not implemented for 'Float'", h.err(sk.bincount, T({ 1. })))
  end)
end)

describe("histc and histogram", function()
  -- counts of xs in nb equal bins over [lo, hi], hi in the last
  local function ref_hist(xs, nb, lo, hi, ws)
    local hgt = {}
    for b = 1, nb do hgt[b] = 0 end
    for k, x in ipairs(xs) do
      if x >= lo and x <= hi then
        local b = math.min(math.floor((x - lo) / (hi - lo) * nb), nb - 1)
        hgt[b + 1] = hgt[b + 1] + (ws and ws[k] or 1)
      end
    end
    return hgt
  end

  it("histc matches a counting reference, takes its range from the data when min == max", function()
    local r = h.lcg(9)
    local xs = {}
    for i = 1, 40 do xs[i] = r(-2, 2) end
    for _, dt in ipairs { "float32", "float64" } do
      local x = T(xs, { dtype = dt })
      assert.same(ref_hist(x:totable(), 7, -1, 1.5), sk.histc(x, 7, -1, 1.5):totable())
      local v = x:totable()
      local lo, hi = math.min(table.unpack(v)), math.max(table.unpack(v))
      assert.same(ref_hist(v, 5, lo, hi), x:histc(5):totable())
    end
    assert.same({ 0, 2, 1, 0 }, sk.histc(T({ 1., 2, 1, 4 }), 4, 0, 3):totable())
    assert.same({ 0, 2 }, sk.histc(T({ 2., 2 }), 2):totable()) -- an empty range widens to [1, 3]
    assert.same({ 1, 1 }, sk.histc(T({ 1., nan, 0 }), 2, 0, 2):totable())
    local o = sk.empty({ 3 }, { dtype = "float64" })
    sk.histc(T({ 1., 2, 3 }, { dtype = "float64" }), 3, 1, 3, { out = o })
    assert.same({ 1, 1, 1 }, o:totable())
    assert.same({ 4 }, sk.histc(sk.empty({ 6 }, { device = "meta" }), 4):shape())
  end)

  it("histc refuses bad inputs with PyTorch's texts", function()
    assert.matches("bins must be > 0, but got 0", h.err(sk.histc, T({ 1. }), 0))
    assert.matches("sk.histc: max must be larger than min", h.err(sk.histc, T({ 1. }), 2, 3, 1))
    assert.matches("sk.histc: range of %[nan, nan%] is not finite", h.err(sk.histc, T({ 1., nan }), 2))
    assert.matches("not implemented for 'Long'", h.err(sk.histc, T({ 1, 2 }), 2))
  end)

  it("histogram gives counts and edges, weighted and as a density", function()
    local hgt, e = sk.histogram(T({ 1., 2, 1 }), 4, { range = { 0, 3 } })
    assert.same({ 0, 2, 1, 0 }, hgt:totable()); assert.same({ 0, 0.75, 1.5, 2.25, 3 }, e:totable())
    hgt, e = sk.histogram(T({ 2., 2 }), 2)
    assert.same({ 0, 2 }, hgt:totable()); assert.same({ 1.5, 2, 2.5 }, e:totable())
    hgt, e = T({ 1., 2, 1, 2.5 }):histogram(T({ 0., 1, 2, 4 }), { weight = T({ 1., 2, 4, 8 }), density = true })
    -- bins [0, 1) [1, 2) [2, 4]: weights 0, 5, 10 of 15; widths 1, 1, 2
    h.assert_close(hgt:totable(), { 0, 1 / 3, 1 / 3 }); assert.same({ 0, 1, 2, 4 }, e:totable())
    local r = h.lcg(4)
    local xs, ws = {}, {}
    for i = 1, 30 do xs[i], ws[i] = r(-1, 1), r(0, 2) end
    local x = T(xs, { dtype = "float64" })
    hgt = sk.histogram(x, 6, { weight = T(ws, { dtype = "float64" }) })
    local lo, hi = math.min(table.unpack(xs)), math.max(table.unpack(xs))
    h.assert_close(hgt:totable(), ref_hist(xs, 6, lo, hi, ws), 1e-9)
    local oh, oe = sk.empty({ 0 }), sk.empty({ 0 })
    sk.histogram(T({ 1., 2 }), 2, { range = { 0, 2 }, hist = oh, bin_edges = oe })
    assert.same({ 0, 2 }, oh:totable()); assert.same({ 0, 1, 2 }, oe:totable())
    hgt, e = sk.histogram(sk.empty({ 5 }, { device = "meta" }), 3)
    assert.same({ 3 }, hgt:shape()); assert.same({ 4 }, e:shape())
  end)

  it("histogram refuses bad inputs with PyTorch's texts", function()
    assert.matches("torch.histogram%(%): bins must be > 0, but got 0 for dimension 0", h.err(sk.histogram, T({ 1. }), 0))
    assert.matches("min should not exceed max, but got min 3 max 1", h.err(sk.histogram, T({ 1. }), 2, { range = { 3, 1 } }))
    assert.matches("\"histogramdd\" not implemented for 'Long'", h.err(sk.histogram, T({ 1 }), 2))
    assert.matches("same shape as the input", h.err(sk.histogram, T({ 1., 2 }), 2, { weight = T({ 1. }) }))
    assert.matches("should have the same dtype", h.err(sk.histogram, T({ 1., 2 }), T({ 0, 1 }, { dtype = "float64" })))
  end)
end)

describe("scatter_reduce", function()
  local self_ = { { 1, 2, 3 }, { 4, 5, 6 } }
  local index = { { 0, 1, 0 }, { 1, 1, 0 } }
  local src = { { 10, 20, 30 }, { 40, 50, 60 } }
  -- a plain loop over index positions along dim 0
  local function ref(red, include)
    local out, n = {}, {}
    for i = 1, 2 do out[i], n[i] = {}, {} for j = 1, 3 do out[i][j], n[i][j] = self_[i][j], include and 1 or 0 end end
    local touched = {}
    for i = 1, 2 do for j = 1, 3 do
      local t = index[i][j] + 1
      if not include and not touched[t .. ":" .. j] then
        out[t][j] = ({ sum = 0, mean = 0, prod = 1, amax = -inf, amin = inf })[red]
        touched[t .. ":" .. j] = true
      end
      local a, b = out[t][j], src[i][j]
      out[t][j] = (red == "sum" or red == "mean") and a + b or red == "prod" and a * b or red == "amax" and math.max(a, b) or math.min(a, b)
      n[t][j] = n[t][j] + 1
    end end
    if red == "mean" then
      for i = 1, 2 do for j = 1, 3 do if n[i][j] > 0 then out[i][j] = out[i][j] / n[i][j] end end end
    end
    return out
  end

  it("matches a reference loop for every reduction, with and without self, in every dtype", function()
    for _, red in ipairs { "sum", "prod", "mean", "amax", "amin" } do
      for _, inc in ipairs { true, false } do
        local want = ref(red, inc)
        for _, dt in ipairs { "float32", "float64", "int32", "int64" } do
          local got = T(self_, { dtype = dt }):scatter_reduce(0, T(index), T(src, { dtype = dt }), red, { include_self = inc })
          if dt:sub(1, 3) == "int" then
            for i = 1, 2 do for j = 1, 3 do want[i][j] = math.floor(want[i][j]) end end
          end
          assert.same(want, got:totable())
        end
      end
    end
  end)

  it("floors integer means, propagates NaN through amax, writes in place and out=", function()
    local got = T({ { 1, 2, 3 }, { -4, 5, 6 } }):scatter_reduce(0, T(index), T({ { 10, 21, 30 }, { -41, 50, 60 } }), "mean")
    assert.same({ { 5, 2, 31 }, { -23, 25, 6 } }, got:totable())
    local r = sk.scatter_reduce(T({ 1., 2 }), 0, T({ 0 }), T({ nan }), "amax")
    assert.is_true(isnan(r:totable()[1]))
    local x = T(self_, { dtype = "float32" })
    x:scatter_reduce_(0, T(index), T(src, { dtype = "float32" }), "sum")
    assert.same(ref("sum", true), x:totable())
    local o = sk.empty({ 2, 3 })
    sk.scatter_reduce(T(self_, { dtype = "float32" }), 0, T(index), T(src, { dtype = "float32" }), "amin", { out = o })
    assert.same(ref("amin", true), o:totable())
    assert.same({ true, true }, sk.scatter_reduce(T({ false, true }), 0, T({ 0 }), T({ true }), "sum"):totable())
  end)

  it("refuses bad inputs with PyTorch's texts", function()
    local s = T(self_, { dtype = "float32" })
    assert.matches("reduce argument must be either sum, prod, mean, amax or amin", h.err(sk.scatter_reduce, s, 0, T(index), s, "max"))
    assert.matches("index 2 is out of bounds for dimension 0 with size 2", h.err(sk.scatter_reduce, s, 0, T({ { 2 } }), s, "sum"))
    assert.matches("Expected dtype int64 for index", h.err(sk.scatter_reduce, s, 0, T({ { 0 } }, { dtype = "int32" }), s, "sum"))
    assert.matches("Expected self.dtype to be equal to src.dtype", h.err(sk.scatter_reduce, s, 0, T(index), T(src), "sum"))
    local m = sk.scatter_reduce(sk.empty({ 2, 3 }, { device = "meta" }), 0, sk.empty({ 2, 3 }, { device = "meta", dtype = "int64" }),
                                sk.empty({ 2, 3 }, { device = "meta" }), "prod")
    assert.same({ 2, 3 }, m:shape())
  end)
end)

describe("segment_reduce", function()
  local d, L = T({ 1, 2, 3, 4, 5, 6 }, { dtype = "float64" }), T({ 2, 0, 3, 1 })

  it("reduces consecutive segments given by lengths, empty ones to the identity or initial", function()
    assert.same({ 3, 0, 12, 6 }, sk.segment_reduce(d, "sum", { lengths = L }):totable())
    local m = sk.segment_reduce(d, "mean", { lengths = L }):totable()
    assert.equal(1.5, m[1]); assert.is_true(isnan(m[2])); assert.same({ 4, 6 }, { m[3], m[4] })
    assert.same({ 2, -inf, 5, 6 }, sk.segment_reduce(d, "max", { lengths = L }):totable())
    assert.same({ 1, inf, 3, 6 }, sk.segment_reduce(d, "min", { lengths = L }):totable())
    assert.same({ 2, 1, 60, 6 }, sk.segment_reduce(d, "prod", { lengths = L }):totable())
    -- initial starts each reduction; mean divides the total by the segment's length
    assert.same({ 13, 10, 22, 16 }, sk.segment_reduce(d, "sum", { lengths = L, initial = 10 }):totable())
    h.assert_close(sk.segment_reduce(d, "mean", { lengths = L, initial = 10 }):totable(), { 6.5, 10, 22 / 3, 16 })
    assert.same({ 10, 10, 10, 10 }, sk.segment_reduce(d, "max", { lengths = L, initial = 10 }):totable())
    assert.same({ 20, 10, 600, 60 }, sk.segment_reduce(d, "prod", { lengths = L, initial = 10 }):totable())
  end)

  it("takes offsets, batched lengths along axis, trailing dims, and every float dtype", function()
    assert.same({ 3, 0, 12, 6 }, sk.segment_reduce(d, "sum", { offsets = T({ 0, 2, 2, 5, 6 }) }):totable())
    local x = sk.arange(12.):reshape({ 2, 6 })
    assert.same({ { 1, 14 }, { 21, 30 } }, sk.segment_reduce(x, "sum", { lengths = T({ { 2, 4 }, { 3, 3 } }), axis = 1 }):totable())
    assert.same({ { 2, 3 }, { 10, 11 } }, sk.segment_reduce(x:reshape({ 6, 2 }), "max", { lengths = T({ 2, 4 }) }):totable())
    for _, dt in ipairs(FLOATS) do
      local r = sk.segment_reduce(T({ 1, 2, 3 }, { dtype = dt }), "sum", { lengths = T({ 1, 2 }, { dtype = "int32" }) })
      assert.equal(dt, r:dtype()); assert.same({ 1, 5 }, r:totable())
    end
    assert.same({ 2, 3 }, sk.segment_reduce(sk.empty({ 2, 5 }, { device = "meta" }), "sum",
                                            { lengths = sk.empty({ 2, 3 }, { device = "meta", dtype = "int64" }), axis = 1 }):shape())
  end)

  it("gives zero gradient to positions outside every segment", function()
    local x = T({ 1, 2, 3, 4 }, { dtype = "float64", requires_grad = true })
    sk.segment_reduce(x, "sum", { offsets = T({ 1, 2, 3 }) }):sum():backward()
    assert.same({ 0, 1, 1, 0 }, x.grad:totable())
  end)

  it("refuses bad inputs with PyTorch's texts", function()
    assert.matches("unsupported reduction given! foo", h.err(sk.segment_reduce, d, "foo", { lengths = L }))
    assert.matches("Either lengths or offsets must be defined", h.err(sk.segment_reduce, d, "sum"))
    assert.matches("Expected all rows of lengths along axis to sum to data.size", h.err(sk.segment_reduce, d, "sum", { lengths = T({ 2, 2 }) }))
    assert.matches("lengths contains negative value!", h.err(sk.segment_reduce, d, "sum", { lengths = T({ -1, 7 }) }))
    assert.matches("indices based reduction is not supported yet", h.err(sk.segment_reduce, d, "sum", { lengths = L, indices = L }))
    assert.matches("Expected data.dim%(%) >= lengths_value.dim%(%)", h.err(sk.segment_reduce, d, "sum", { lengths = T({ { 6 } }) }))
    assert.matches("\"_segment_reduce_cpu\" not implemented for 'Long'", h.err(sk.segment_reduce, T({ 1, 2 }), "sum", { lengths = T({ 2 }) }))
    assert.matches("offsets must not decrease", h.err(sk.segment_reduce, d, "sum", { offsets = T({ 0, 4, 2 }) }))
  end)
end)
