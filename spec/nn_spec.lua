-- spec/nn_spec.lua — softmax, log_softmax, layer_norm, dropout, nll_loss, cross_entropy,
-- mse_loss: values from plain-Lua reference loops, variants, dtypes, layouts, errors, Meta
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local nan, inf = 0 / 0, math.huge

-- {==== Plain-Lua references ====
local lcg = h.lcg

local function random_rows(nr, nc, seed, lo, hi)
  local r, t = lcg(seed), {}
  for i = 1, nr do
    t[i] = {}
    for j = 1, nc do t[i][j] = r(lo or -3, hi or 3) end
  end
  return t
end

local function softmax_vec(v, log)
  local m = -inf
  for _, x in ipairs(v) do m = math.max(m, x) end
  local s = 0
  for _, x in ipairs(v) do s = s + math.exp(x - m) end
  local out = {}
  for i, x in ipairs(v) do out[i] = log and (x - m - math.log(s)) or math.exp(x - m) / s end
  return out
end

-- softmax of each row (dim 1) or of each column (dim 0) of a 2-D table
local function softmax_2d(rows, dim, log)
  local nr, nc = #rows, #rows[1]
  local out = {}
  for i = 1, nr do out[i] = {} end
  if dim == 1 then
    for i = 1, nr do out[i] = softmax_vec(rows[i], log) end
  else
    for j = 1, nc do
      local col = {}
      for i = 1, nr do col[i] = rows[i][j] end
      local s = softmax_vec(col, log)
      for i = 1, nr do out[i][j] = s[i] end
    end
  end
  return out
end

local function transpose(rows)
  local t = {}
  for j = 1, #rows[1] do
    t[j] = {}
    for i = 1, #rows do t[j][i] = rows[i][j] end
  end
  return t
end

-- nll over rows of log-probabilities: reduction "none" | "sum" | "mean"
local function ref_nll(logp, target, weight, reduction, ignore)
  ignore = ignore or -100
  local losses, sum, wsum = {}, 0, 0
  for i, c in ipairs(target) do
    local w = c == ignore and 0 or (weight and weight[c + 1] or 1)
    losses[i] = c == ignore and 0 or -logp[i][c + 1] * w
    sum, wsum = sum + losses[i], wsum + w
  end
  if reduction == "none" then return losses end
  if reduction == "sum" then return sum end
  return sum / wsum
end
-- }====

describe("softmax and log_softmax", function()
  local rows = random_rows(5, 7, 1)
  local x = T(rows, {dtype = "float64"})
  it("match the reference over the last dim and over an outer dim", function()
    h.assert_close(x:softmax(1):totable(), softmax_2d(rows, 1), 1e-12)
    h.assert_close(x:softmax(-1):totable(), softmax_2d(rows, 1), 1e-12)
    h.assert_close(x:softmax(0):totable(), softmax_2d(rows, 0), 1e-12)
    h.assert_close(x:log_softmax(1):totable(), softmax_2d(rows, 1, true), 1e-12)
    h.assert_close(sk.log_softmax(x, 0):totable(), softmax_2d(rows, 0, true), 1e-12)
    local f = T(rows, {dtype = "float32"})
    h.assert_close(f:softmax(1):totable(), softmax_2d(rows, 1), 1e-6)
    h.assert_close(f:log_softmax(0):totable(), softmax_2d(rows, 0, true), 1e-5)
  end)
  it("work over the middle dim of a 3-D tensor and over wide outer dims in blocks", function()
    local a = sk.arange(24, {dtype = "float64"}):view(2, 3, 4):mul(0.25)
    local s = a:softmax(1):totable()
    for b = 1, 2 do
      for k = 1, 4 do
        local col = {}
        for j = 1, 3 do col[j] = (((b - 1) * 12) + (j - 1) * 4 + (k - 1)) * 0.25 end
        local want = softmax_vec(col)
        for j = 1, 3 do h.assert_close(s[b][j][k], want[j], 1e-12) end
      end
    end
    local wide = random_rows(3, 600, 9)
    local w = T(wide, {dtype = "float64"})
    h.assert_close(w:softmax(0):totable(), softmax_2d(wide, 0), 1e-12)
    h.assert_close(w:log_softmax(0):totable(), softmax_2d(wide, 0, true), 1e-12)
  end)
  it("are stable for large inputs and make a NaN row NaN", function()
    h.assert_close(T({1000.0, 1000.0}):softmax(0):totable(), {0.5, 0.5}, 1e-12)
    h.assert_close(T({-1000.0, 0.0}):log_softmax(0):totable(), {-1000, 0}, 1e-12)
    local r = T({{1.0, nan}, {1.0, 2.0}}):softmax(1):totable()
    assert.is_true(r[1][1] ~= r[1][1] and r[1][2] ~= r[1][2])
    h.assert_close(r[2], softmax_vec({1, 2}), 1e-6)
    h.assert_close(T({-inf, 0.0}):softmax(0):totable(), {0, 1}, 0)
  end)
  it("in float32 match the reference at every row length, down to subnormal results", function()
    -- the float32 rows run one fused vector pass (an inline exp): every tail length, spread
    -- inputs whose exps underflow to subnormals (x - max in [-104, -87]) and past them
    for _, n in ipairs({ 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 200, 1029 }) do
      local rows = random_rows(3, n, n, -60, 60)
      rows[3][1] = 0
      for j = 2, n do rows[3][j] = -87 - (j % 20) end -- down to -106
      local f = T(rows) -- float32: the reference reads the same rounded values
      local exact = f:to("float64"):totable()
      local got, lgot = f:softmax(1):totable(), f:log_softmax(1):totable()
      for i = 1, 3 do
        local want, lwant = softmax_vec(exact[i]), softmax_vec(exact[i], true)
        for j = 1, n do
          -- float32's x - max is off by half an ulp of itself: exp's relative error grows with it
          -- (a subnormal result: within 2 of its steps)
          local tol = math.max(2.9e-45, (2e-6 + 1.2e-7 * math.abs(lwant[j])) * want[j])
          assert(math.abs(got[i][j] - want[j]) <= tol, ("n %d row %d col %d: %.9g, want %.9g"):format(n, i, j, got[i][j], want[j]))
          assert(math.abs(lgot[i][j] - lwant[j]) <= 2e-5 * math.max(1, math.abs(lwant[j])), ("log n %d col %d"):format(n, j))
        end
      end
    end
    -- a NaN anywhere (body or tail) makes its row NaN; -inf contributes 0
    for _, pos in ipairs({ 1, 8, 9, 11 }) do
      local row = {}
      for j = 1, 11 do row[j] = j == pos and nan or j / 4 end
      for _, v in ipairs(T({ row }):softmax(1):totable()[1]) do assert.is_true(v ~= v) end
      for _, v in ipairs(T({ row }):log_softmax(1):totable()[1]) do assert.is_true(v ~= v) end
      row[pos] = -inf
      local r = T({ row }):softmax(1):totable()[1]
      assert.equal(0, r[pos])
    end
  end)
  it("convert to dtype first, compute half types in float, refuse integers", function()
    local i = T({{1, 2}, {3, 4}})
    assert.matches('"softmax_lastdim_kernel_impl" not implemented for \'Long\'', h.err(function() return i:softmax(1) end))
    assert.matches('"log_softmax_kernel_impl" not implemented for \'Long\'', h.err(function() return i:log_softmax(0) end))
    local d = i:softmax(1, "float64")
    assert.equal("float64", d:dtype())
    h.assert_close(d:totable(), softmax_2d({{1, 2}, {3, 4}}, 1), 1e-12)
    assert.equal("float32", sk.log_softmax(i, 0, {dtype = "float32"}):dtype())
    for _, dt in ipairs({ "float16", "bfloat16" }) do
      local hs = T(rows, {dtype = dt})
      local got = hs:softmax(1)
      assert.equal(dt, got:dtype())
      h.assert_close(got:totable(), softmax_2d(hs:to("float64"):totable(), 1), 1e-2)
      h.assert_close(hs:log_softmax(0):totable(), softmax_2d(hs:to("float64"):totable(), 0, true), 2e-2)
    end
    assert.matches("softmax with half to float conversion is not supported on CPU",
      h.err(sk._softmax, T({1, 2}, {dtype = "float16"}), 0, true))
  end)
  it("read non-contiguous inputs and keep 0-dim and empty shapes", function()
    h.assert_close(x:t():softmax(0):totable(), transpose(softmax_2d(rows, 1)), 1e-12)
    h.assert_close(x:t():log_softmax(1):totable(), transpose(softmax_2d(rows, 0, true)), 1e-12)
    h.assert_close(x:narrow(1, 2, 3):softmax(1):select(0, 0):totable(), softmax_vec({rows[1][3], rows[1][4], rows[1][5]}), 1e-12)
    h.assert_close(T({2.0}):expand(4):softmax(0):totable(), {0.25, 0.25, 0.25, 0.25}, 1e-12)
    assert.equal(1, T(3.0):softmax(0):item())
    assert.equal(0, T(3.0):log_softmax(-1):item())
    assert.same({0, 3}, sk.zeros({0, 3}):softmax(1):shape())
    assert.matches("argument .dim.: dimension out of range", h.err(function() return x:softmax(2) end))
  end)
  it("write into out", function()
    local o = sk.empty({0}, {dtype = "float64"})
    assert.equal(o, sk.softmax(x, 1, {out = o}))
    h.assert_close(o:totable(), softmax_2d(rows, 1), 1e-12)
    local lo = sk.empty({0}, {dtype = "float64"})
    sk.log_softmax(T({{1, 2}}), 1, "float64", {out = lo})
    h.assert_close(lo:totable(), softmax_2d({{1, 2}}, 1, true), 1e-12)
    local same = T({1.0, 2.0, 3.0})
    sk.softmax(same, 0, {out = same})
    h.assert_close(same:totable(), softmax_vec({1, 2, 3}), 1e-6)
    local lsame = T({1.0, 2.0, 3.0})
    sk.log_softmax(lsame, 0, {out = lsame})
    h.assert_close(lsame:totable(), softmax_vec({1, 2, 3}, true), 1e-6)
    assert.matches("argument 'out' has dtype float32, expected float64",
      h.err(sk.softmax, x, 1, {out = sk.empty({5, 7})}))
  end)
  it("run on Meta tensors", function()
    local M = sk.empty({2, 3}, {device = "meta", dtype = "float16"})
    assert.same({2, 3}, M:softmax(1):shape())
    assert.equal("float16", M:log_softmax(0):dtype())
    assert.equal("float32", M:softmax(0, "float32"):dtype())
    assert.equal("meta", M:softmax(1):device())
  end)
end)

describe("layer_norm", function()
  local rows = random_rows(3, 4, 2)
  local function ref(r, w, b, eps)
    local out = {}
    for i, row in ipairs(r) do
      local m, v = 0, 0
      for _, x in ipairs(row) do m = m + x end
      m = m / #row
      for _, x in ipairs(row) do v = v + (x - m) ^ 2 end
      v = v / #row
      out[i] = {}
      for j, x in ipairs(row) do out[i][j] = (x - m) / math.sqrt(v + (eps or 1e-5)) * (w and w[j] or 1) + (b and b[j] or 0) end
    end
    return out
  end
  local x = T(rows, {dtype = "float64"})
  it("normalizes over the last dims, with weight and bias", function()
    h.assert_close(sk.layer_norm(x, {4}):totable(), ref(rows), 1e-12)
    local w, b = {0.5, 1, 2, -1}, {0, 1, -1, 0.25}
    h.assert_close(sk.layer_norm(x, {4}, T(w, {dtype = "float64"}), T(b, {dtype = "float64"})):totable(), ref(rows, w, b), 1e-12)
    h.assert_close(sk.layer_norm(x, {4}, {bias = T(b, {dtype = "float64"}), eps = 0.1}):totable(), ref(rows, nil, b, 0.1), 1e-12)
    -- over the last two dims: every element of the [3, 4] matrix at once
    local flat = {{}}
    for _, row in ipairs(rows) do for _, v in ipairs(row) do table.insert(flat[1], v) end end
    local got = sk.layer_norm(x:view(1, 3, 4), {3, 4}):view(1, 12):totable()
    h.assert_close(got, ref(flat), 1e-12)
  end)
  it("takes non-contiguous inputs and half types (computed in float32)", function()
    h.assert_close(sk.layer_norm(x:t(), {3}):totable(), ref(transpose(rows)), 1e-12)
    for _, dt in ipairs({ "float16", "bfloat16", "float32" }) do
      local r = sk.layer_norm(T(rows, {dtype = dt}), {4})
      assert.equal(dt, r:dtype())
      h.assert_close(r:totable(), ref(T(rows, {dtype = dt}):to("float64"):totable()), 2e-2)
    end
  end)
  it("checks its arguments with PyTorch's messages", function()
    assert.matches("Given normalized_shape=%[3%], expected input with shape %[%*, 3%], but got input of size%[3, 4%]",
      h.err(sk.layer_norm, x, {3}))
    assert.matches("Expected weight to be of same shape as normalized_shape, but got weight of shape %[3%] and normalized_shape = %[4%]",
      h.err(sk.layer_norm, x, {4}, T({1.0, 1.0, 1.0})))
    assert.matches("Expected bias to be of same shape as normalized_shape",
      h.err(sk.layer_norm, x, {4}, nil, T({1.0})))
    assert.matches("Expected normalized_shape to be at least 1%-dimensional", h.err(sk.layer_norm, x, {}))
    assert.matches('"LayerNormKernelImpl" not implemented for \'Long\'', h.err(sk.layer_norm, T({{1, 2}}), {2}))
  end)
  it("runs on Meta tensors and on empty inputs", function()
    local M = sk.empty({2, 3, 4}, {device = "meta"})
    local r = sk.layer_norm(M, {4}, sk.empty({4}, {device = "meta"}))
    assert.same({2, 3, 4}, r:shape())
    assert.equal("meta", r:device())
    assert.same({0, 4}, sk.layer_norm(sk.zeros({0, 4}), {4}):shape())
  end)
  it("native_layer_norm returns mean and rstd, shaped as the input with the normalized dims 1", function()
    local y, mean, rstd = sk.native_layer_norm(x:view(3, 1, 4), {1, 4}, nil, nil, 1e-5)
    assert.same({3, 1, 1}, mean:shape())
    assert.same({3, 1, 1}, rstd:shape())
    h.assert_close(y:view(3, 4):totable(), ref(rows), 1e-12)
    for i, row in ipairs(rows) do
      local m, v = 0, 0
      for _, e in ipairs(row) do m = m + e end
      m = m / 4
      for _, e in ipairs(row) do v = v + (e - m) ^ 2 end
      h.assert_close(mean:flatten():totable()[i], m, 1e-12)
      h.assert_close(rstd:flatten():totable()[i], 1 / math.sqrt(v / 4 + 1e-5), 1e-12)
    end
    -- an empty row: mean 0, rstd NaN (PyTorch's)
    local _, m0, r0 = sk.native_layer_norm(sk.zeros({2, 0}), {0}, nil, nil, 1e-5)
    assert.same({0, 0}, m0:flatten():totable())
    assert.is_true(r0:isnan():all():item())
    -- into out= tensors, one of them non-contiguous
    local o0, o1, o2 = sk.empty({0}, {dtype = "float64"}), sk.empty({3, 1}, {dtype = "float64"}), sk.zeros({1, 3}, {dtype = "float64"}):t()
    sk.native_layer_norm(x, {4}, nil, nil, 1e-5, {out0 = o0, out1 = o1, out2 = o2})
    h.assert_close(o0:totable(), ref(rows), 1e-12)
    h.assert_close(o2:flatten():totable(), rstd:flatten():totable(), 1e-12)
  end)
  it("native_layer_norm_backward agrees with backward through layer_norm built from elementary ops", function()
    for _, dt in ipairs({ "float64", "float32" }) do
      sk.manual_seed(9)
      local xs = sk.randn({4, 3, 8}, {dtype = dt})
      local w, b, g = sk.randn({3, 8}, {dtype = dt}), sk.randn({3, 8}, {dtype = dt}), sk.randn({4, 3, 8}, {dtype = dt})
      local _, mean, rstd = sk.native_layer_norm(xs, {3, 8}, w, b, 1e-5)
      local gi, gw, gb = sk.native_layer_norm_backward(g, xs, {3, 8}, mean, rstd, w, b, {true, true, true})
      -- the reference: (x - mean) / sqrt(var + eps) * w + b with mean and var as reductions, through autograd
      local xr, wr, br = xs:clone():requires_grad_(), w:clone():requires_grad_(), b:clone():requires_grad_()
      local mu = xr:mean({1, 2}, true)
      local var = (xr - mu):square():mean({1, 2}, true)
      local yr = (xr - mu) / (var + 1e-5):sqrt() * wr + br
      yr:backward(g)
      local tol = dt == "float64" and 1e-10 or 1e-4
      h.assert_close(gi:flatten():totable(), xr.grad:flatten():totable(), tol)
      h.assert_close(gw:flatten():totable(), wr.grad:flatten():totable(), tol)
      h.assert_close(gb:flatten():totable(), br.grad:flatten():totable(), tol)
      local a, c, d = sk.native_layer_norm_backward(g, xs, {3, 8}, mean, rstd, nil, nil, {true, true, true})
      assert.is_nil(c)
      assert.is_nil(d)
      assert.same({4, 3, 8}, a:shape())
    end
    -- larger rows than one block of columns, on 2 threads, half types through float32
    local before = sk.get_num_threads()
    sk.set_num_threads(2)
    local xs, w = sk.randn({300, 200}), sk.randn({200})
    local _, mean, rstd = sk.native_layer_norm(xs, {200}, w, nil, 1e-5)
    local g = sk.randn({300, 200})
    local gi, gw = sk.native_layer_norm_backward(g, xs, {200}, mean, rstd, w, nil, {true, true, false})
    local _, m64, r64 = sk.native_layer_norm(xs:double(), {200}, w:double(), nil, 1e-5)
    local gi64, gw64 = sk.native_layer_norm_backward(g:double(), xs:double(), {200}, m64, r64, w:double(), nil, {true, true, false})
    assert.is_true(((gi:double() - gi64):abs():max()):item() < 1e-4)
    assert.is_true(((gw:double() - gw64):abs():max()):item() < 1e-3)
    local yb = sk.layer_norm(xs:to("bfloat16"), {200})
    assert.equal("bfloat16", yb:dtype())
    sk.set_num_threads(before)
  end)
end)

describe("dropout", function()
  local x = sk.ones({64, 64})
  it("zeros elements with probability p and scales the rest by 1 / (1 - p)", function()
    sk.manual_seed(7)
    local y = sk.dropout(x, 0.25, true):totable()
    local zeros = 0
    for _, row in ipairs(y) do
      for _, v in ipairs(row) do
        if v == 0 then zeros = zeros + 1 else h.assert_close(v, 1 / 0.75, 1e-6) end
      end
    end
    assert.is_true(math.abs(zeros / 4096 - 0.25) < 0.05)
  end)
  it("is reproducible with sk.manual_seed", function()
    sk.manual_seed(3)
    local a = sk.dropout(x, 0.5, true):totable()
    sk.manual_seed(3)
    local b = sk.dropout(x, 0.5, true):totable()
    assert.same(a, b)
    local c = sk.dropout(x, 0.5, true):totable()
    assert.are_not.same(a, c)
  end)
  it("returns the input itself when p is 0 or not training, zeros when p is 1", function()
    local a = T({1.0, 2.0}) -- the result is a itself: writing through it changes a
    sk.dropout(a, 0.0, true):add_(1)
    sk.dropout(a, 0.5, false):add_(1)
    assert.same({3, 4}, a:totable())
    local z = sk.dropout(T({1.0, -2.0}), 1.0, true)
    assert.same({0, 0}, z:totable())
    local n = sk.dropout(T({nan}), 1.0, true):item()
    assert.is_true(n ~= n)
    assert.same({0}, sk.dropout(sk.zeros({0}), 0.5, true):shape())
  end)
  it("refuses p outside [0, 1] and keeps floating dtypes", function()
    assert.matches("dropout probability has to be between 0 and 1, but got 1.5", h.err(sk.dropout, x, 1.5, true))
    assert.matches("dropout probability has to be between 0 and 1, but got %-0.1", h.err(sk.dropout, x, -0.1, false))
    for _, dt in ipairs({ "float16", "bfloat16", "float64" }) do
      local r = sk.dropout(sk.ones({8}, {dtype = dt}), 0.5, true)
      assert.equal(dt, r:dtype())
      for _, v in ipairs(r:totable()) do assert.is_true(v == 0 or v == 2) end
    end
    assert.same({2, 2}, sk.dropout(x:narrow(0, 0, 2):narrow(1, 0, 2), 0.5, true):shape())
  end)
  it("runs on Meta tensors", function()
    local r = sk.dropout(sk.empty({2, 3}, {device = "meta"}), 0.5, true)
    assert.equal("meta", r:device())
    assert.same({2, 3}, r:shape())
  end)
end)

describe("nll_loss", function()
  local logp = random_rows(4, 3, 4, -3, 0)
  local x = T(logp, {dtype = "float64"})
  local tg = {0, 2, 1, 2}
  local t = T(tg)
  local w = {0.5, 2, 1}
  it("reduces by mean, sum or none, with weights", function()
    h.assert_close(sk.nll_loss(x, t):item(), ref_nll(logp, tg, nil, "mean"), 1e-12)
    h.assert_close(sk.nll_loss(x, t, {reduction = "sum"}):item(), ref_nll(logp, tg, nil, "sum"), 1e-12)
    h.assert_close(sk.nll_loss(x, t, {reduction = "none"}):totable(), ref_nll(logp, tg, nil, "none"), 1e-12)
    local wt = T(w, {dtype = "float64"})
    h.assert_close(sk.nll_loss(x, t, wt):item(), ref_nll(logp, tg, w, "mean"), 1e-12)
    h.assert_close(sk.nll_loss(x, t, wt, "sum"):item(), ref_nll(logp, tg, w, "sum"), 1e-12)
    h.assert_close(sk.nll_loss(x, t, wt, "none"):totable(), ref_nll(logp, tg, w, "none"), 1e-12)
  end)
  it("skips ignore_index, and gives nan for a mean over nothing", function()
    local ti = {0, -100, 1, -100}
    h.assert_close(sk.nll_loss(x, T(ti)):item(), ref_nll(logp, ti, nil, "mean"), 1e-12)
    h.assert_close(sk.nll_loss(x, T({0, 2, 2, 1}), {ignore_index = 2, reduction = "none"}):totable(),
      ref_nll(logp, {0, 2, 2, 1}, nil, "none", 2), 1e-12)
    local v = sk.nll_loss(x, T({-100, -100, -100, -100})):item()
    assert.is_true(v ~= v)
    assert.equal(0, sk.nll_loss(x, T({-100, -100, -100, -100}), {reduction = "sum"}):item())
    v = sk.nll_loss(sk.zeros({0, 3}), T({}, {dtype = "int64"})):item()
    assert.is_true(v ~= v)
  end)
  it("takes a 1-D input with a 0-dim target, and [N, C, d] inputs", function()
    h.assert_close(sk.nll_loss(T({-1.0, -2.0, -0.5}), T(1)):item(), 2, 1e-12)
    assert.same({}, sk.nll_loss(T({-1.0, -2.0}), T(1), {reduction = "none"}):shape())
    -- [2, 3, 2]: class dim 1, target [2, 2]
    local a = sk.arange(12, {dtype = "float64"}):view(2, 3, 2):mul(-0.5)
    local tt = T({{0, 2}, {1, -100}})
    local flat, ft = {}, {}
    local av = a:totable()
    for n = 1, 2 do
      for d = 1, 2 do
        flat[#flat + 1] = { av[n][1][d], av[n][2][d], av[n][3][d] }
        ft[#ft + 1] = tt:totable()[n][d]
      end
    end
    h.assert_close(sk.nll_loss(a, tt):item(), ref_nll(flat, ft, nil, "mean"), 1e-12)
    local none = ref_nll(flat, ft, nil, "none")
    h.assert_close(sk.nll_loss(a, tt, {reduction = "none"}):totable(), {{none[1], none[2]}, {none[3], none[4]}}, 1e-12)
    assert.matches("Expected target size %[2, 2%], got %[2, 3%]", h.err(sk.nll_loss, a, T({{0, 1, 2}, {0, 1, 2}})))
  end)
  it("reads non-contiguous inputs, float32 and uint8 targets", function()
    h.assert_close(sk.nll_loss(x:t():contiguous():t(), t):item(), ref_nll(logp, tg, nil, "mean"), 1e-12)
    h.assert_close(sk.nll_loss(T(logp, {dtype = "float32"}), T(tg, {dtype = "uint8"})):item(), ref_nll(logp, tg, nil, "mean"), 1e-6)
    local t2 = T({{0, 9}, {2, 9}, {1, 9}, {2, 9}}):select(1, 0)
    h.assert_close(sk.nll_loss(x, t2):item(), ref_nll(logp, tg, nil, "mean"), 1e-12)
  end)
  it("checks its arguments", function()
    assert.matches("Target 3 is out of bounds.", h.err(sk.nll_loss, x, T({0, 3, 1, 2})))
    assert.matches("Target %-1 is out of bounds.", h.err(sk.nll_loss, x, T({0, -1, 1, 2})))
    assert.matches("argument 'reduction': avg is not a valid value for reduction", h.err(sk.nll_loss, x, t, {reduction = "avg"}))
    assert.matches("expected scalar type Long but found Int %(argument 'target'%)", h.err(sk.nll_loss, x, T(tg, {dtype = "int32"})))
    assert.matches("Expected input batch_size %(4%) to match target batch_size %(2%).", h.err(sk.nll_loss, x, T({0, 1})))
    assert.matches("weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: %[2%]",
      h.err(sk.nll_loss, x, t, T({1.0, 1.0}, {dtype = "float64"})))
    assert.matches("Expected 1 or more dimensions %(got 0%)", h.err(sk.nll_loss, T(1.0), T(0)))
    assert.matches('"nll_loss_out_frame" not implemented for \'Long\'', h.err(sk.nll_loss, T({{1, 2}}), T({0})))
  end)
  it("runs on Meta tensors", function()
    local M = sk.empty({4, 3}, {device = "meta"})
    local mt = sk.empty({4}, {device = "meta", dtype = "int64"})
    assert.same({}, sk.nll_loss(M, mt):shape())
    assert.same({4}, sk.nll_loss(M, mt, {reduction = "none"}):shape())
    local out, tw = sk.nll_loss_forward(M, mt, nil, 1, -100)
    assert.same({}, out:shape())
    assert.same({}, tw:shape())
  end)
end)

describe("cross_entropy", function()
  local rows = random_rows(4, 3, 5)
  local x = T(rows, {dtype = "float64"})
  local tg = {2, 0, 1, 1}
  local t = T(tg)
  local logp = softmax_2d(rows, 1, true)
  it("is nll_loss of log_softmax over the class dim", function()
    for _, red in ipairs({ "mean", "sum", "none" }) do
      h.assert_close(sk.cross_entropy(x, t, {reduction = red}):totable(), ref_nll(logp, tg, nil, red), 1e-12)
    end
    local w = {1, 0.5, 3}
    h.assert_close(sk.cross_entropy(x, t, T(w, {dtype = "float64"})):item(), ref_nll(logp, tg, w, "mean"), 1e-12)
    h.assert_close(sk.cross_entropy(x, T({2, -100, 1, 1})):item(), ref_nll(logp, {2, -100, 1, 1}, nil, "mean"), 1e-12)
    h.assert_close(sk.cross_entropy(T(rows[1], {dtype = "float64"}), T(2)):item(), -logp[1][3], 1e-12)
    h.assert_close(sk.cross_entropy(T(rows, {dtype = "float32"}), t):item(), ref_nll(logp, tg, nil, "mean"), 1e-5)
  end)
  it("smooths labels: (1 - ls) * nll + ls / C * the mean of -log p over classes", function()
    local ls, w = 0.2, {1, 0.5, 3}
    local function ref(red, weight, target)
      local nll = ref_nll(logp, target, weight, red)
      local smooth, wsum = {}, 0
      for i, c in ipairs(target) do
        local s = 0
        for k = 1, 3 do s = s - logp[i][k] * (weight and weight[k] or 1) end
        smooth[i] = c == -100 and 0 or s
        if c ~= -100 then wsum = wsum + (weight and weight[c + 1] or 1) end
      end
      if red == "none" then
        local r = {}
        for i = 1, #target do r[i] = (1 - ls) * nll[i] + ls / 3 * smooth[i] end
        return r
      end
      local tot = 0
      for _, s in ipairs(smooth) do tot = tot + s end
      if red == "mean" then tot = tot / wsum end
      return (1 - ls) * nll + ls / 3 * tot
    end
    local ti = {2, -100, 1, 0}
    for _, red in ipairs({ "mean", "sum", "none" }) do
      h.assert_close(sk.cross_entropy(x, t, {reduction = red, label_smoothing = ls}):totable(), ref(red, nil, tg), 1e-12)
      h.assert_close(sk.cross_entropy(x, T(ti), T(w, {dtype = "float64"}), red, -100, ls):totable(), ref(red, w, ti), 1e-12)
    end
  end)
  it("takes class probabilities as targets", function()
    local probs = { {0.2, 0.3, 0.5}, {1, 0, 0}, {0, 0.5, 0.5}, {0.1, 0.8, 0.1} }
    local pt = T(probs, {dtype = "float64"})
    local function ref(red, weight, ls)
      local per = {}
      for i = 1, 4 do
        local s = 0
        for k = 1, 3 do
          local p = probs[i][k] * (1 - (ls or 0)) + (ls or 0) / 3
          s = s - logp[i][k] * p * (weight and weight[k] or 1)
        end
        per[i] = s
      end
      if red == "none" then return per end
      local tot = per[1] + per[2] + per[3] + per[4]
      return red == "sum" and tot or tot / 4
    end
    h.assert_close(sk.cross_entropy(x, pt):item(), ref("mean"), 1e-12)
    h.assert_close(sk.cross_entropy(x, pt, {reduction = "none"}):totable(), ref("none"), 1e-12)
    local w = {2, 1, 0.5}
    h.assert_close(sk.cross_entropy(x, pt, T(w, {dtype = "float64"}), "sum"):item(), ref("sum", w), 1e-12)
    h.assert_close(sk.cross_entropy(x, pt, {label_smoothing = 0.1}):item(), ref("mean", nil, 0.1), 1e-12)
    assert.matches("ignore_index is not supported for floating point target",
      h.err(sk.cross_entropy, x, pt, {ignore_index = 1}))
    assert.matches("Expected floating point type for target with class probabilities, got Long",
      h.err(sk.cross_entropy, T({1.0, 2.0}), T({0, 1})))
  end)
  it("checks label_smoothing and reduction, and runs on Meta tensors", function()
    assert.matches("label_smoothing must be between 0.0 and 1.0. Got: 1.5", h.err(sk.cross_entropy, x, t, {label_smoothing = 1.5}))
    assert.matches("argument 'reduction': mean2 is not a valid value", h.err(sk.cross_entropy, x, t, {reduction = "mean2"}))
    local M = sk.empty({4, 3}, {device = "meta"})
    local mt = sk.empty({4}, {device = "meta", dtype = "int64"})
    assert.same({}, sk.cross_entropy(M, mt):shape())
    assert.same({4}, sk.cross_entropy(M, mt, {reduction = "none", label_smoothing = 0.1}):shape())
    assert.equal("meta", sk.cross_entropy(M, M):device())
  end)
end)

describe("mse_loss", function()
  local a, b = {{1, 2}, {3, 4}}, {{0.5, 2}, {5, 1}}
  local x, y = T(a, {dtype = "float64"}), T(b, {dtype = "float64"})
  it("averages, sums or keeps the squared differences", function()
    assert.equal((0.25 + 0 + 4 + 9) / 4, sk.mse_loss(x, y):item())
    assert.equal(0.25 + 0 + 4 + 9, sk.mse_loss(x, y, "sum"):item())
    assert.same({{0.25, 0}, {4, 9}}, sk.mse_loss(x, y, {reduction = "none"}):totable())
  end)
  it("broadcasts, promotes, reads non-contiguous inputs", function()
    assert.same({{1, 0}, {1, 4}}, sk.mse_loss(x, T({2.0, 2.0}), "none"):totable())
    assert.equal("float64", sk.mse_loss(T(a, {dtype = "float32"}), y):dtype())
    assert.same({{0.25, 1}, {9, 9}}, sk.mse_loss(x:t(), y, "none"):totable())
    for _, dt in ipairs({ "float16", "bfloat16", "float32" }) do
      local r = sk.mse_loss(T(a, {dtype = dt}), T(b, {dtype = dt}), "sum")
      assert.equal(dt, r:dtype())
      assert.equal(13.25, r:item())
    end
    local e = sk.mse_loss(sk.zeros({0}), sk.zeros({0})):item()
    assert.is_true(e ~= e)
  end)
  it("refuses integers and unknown reductions; runs on Meta", function()
    assert.matches('"mse_cpu" not implemented for \'Long\'', h.err(sk.mse_loss, T({1, 2}), T({1, 2})))
    assert.matches("argument 'reduction': avg is not a valid value", h.err(sk.mse_loss, x, y, "avg"))
    local M = sk.empty({2, 3}, {device = "meta"})
    assert.same({}, sk.mse_loss(M, M):shape())
    assert.same({2, 3}, sk.mse_loss(M, M, "none"):shape())
  end)
end)

describe("batch_norm", function()
  local function f64(v) return T(v, {dtype = "float64"}) end
  -- the reference from reductions: (x - mean) / sqrt(var + eps) * w + b over every dim but 1
  local function ref(x, w, b, mean, var, eps)
    local shape = {1, x:size(1)}
    for _ = 3, x:dim() do shape[#shape + 1] = 1 end
    local y = (x - mean:view(shape)) / (var:view(shape) + eps):sqrt()
    if w then y = y * w:view(shape) end
    if b then y = y + b:view(shape) end
    return y
  end
  it("training: the batch's statistics, running ones moved by momentum (unbiased variance)", function()
    sk.manual_seed(4)
    local x = sk.randn({4, 3, 5, 2}, {dtype = "float64"})
    local w, b = f64({0.5, 2, -1}), f64({1, 0, 0.25})
    local rm, rv = f64({0.1, 0.2, 0.3}), f64({1, 2, 3})
    local y, sm, si = sk.native_batch_norm(x, w, b, rm, rv, true, 0.25, 1e-3)
    local mean = x:mean({0, 2, 3})
    local var = x:var({0, 2, 3}, false)
    h.assert_close(y:flatten():totable(), ref(x, w, b, mean, var, 1e-3):flatten():totable(), 1e-12)
    h.assert_close(sm:totable(), mean:totable(), 1e-12)
    h.assert_close(si:totable(), (1 / (var + 1e-3):sqrt()):totable(), 1e-12)
    local n = 4 * 5 * 2
    h.assert_close(rm:totable(), (f64({0.1, 0.2, 0.3}) * 0.75 + mean * 0.25):totable(), 1e-12)
    h.assert_close(rv:totable(), (f64({1, 2, 3}) * 0.75 + var * (n / (n - 1)) * 0.25):totable(), 1e-12)
    -- float32 in float32, 2-d input [N, C]
    local x2 = sk.tensor({{1, 2}, {3, 6}}, {dtype = "float32"})
    h.assert_close(sk.batch_norm(x2, nil, nil, nil, nil, true, 0.1, 0, false):totable(), {{-1, -1}, {1, 1}}, 1e-6)
  end)
  it("eval: the running statistics, and empty save_mean/save_invstd", function()
    local x = sk.randn({2, 3, 4}, {dtype = "float64"})
    local rm, rv = f64({0.5, -1, 2}), f64({4, 1, 0.25})
    local y, sm, si = sk.native_batch_norm(x, nil, nil, rm, rv, false, 0.1, 0)
    h.assert_close(y:flatten():totable(), ref(x, nil, nil, rm, rv, 0):flatten():totable(), 1e-12)
    assert.same({0}, sm:shape())
    assert.same({0}, si:shape())
    h.assert_close(rm:totable(), {0.5, -1, 2}, 0)
  end)
  it("backward agrees with backward through the reference built from reductions", function()
    for _, train in ipairs({true, false}) do
      sk.manual_seed(5)
      local x = sk.randn({3, 4, 6}, {dtype = "float64"}):requires_grad_()
      local w = sk.randn({4}, {dtype = "float64"}):requires_grad_()
      local b = sk.randn({4}, {dtype = "float64"}):requires_grad_()
      local rm, rv = f64({0, 1, 2, 3}), f64({1, 2, 0.5, 3})
      local g = sk.randn({3, 4, 6}, {dtype = "float64"})
      sk.batch_norm(x, w, b, rm:clone(), rv:clone(), train, 0.1, 1e-5, false):backward(g)
      local xr, wr, br = x:detach():requires_grad_(), w:detach():requires_grad_(), b:detach():requires_grad_()
      local mean = train and xr:mean({0, 2}) or rm
      local var = train and (xr - mean:view({1, 4, 1})):square():mean({0, 2}) or rv
      ref(xr, wr, br, mean, var, 1e-5):backward(g)
      h.assert_close(x.grad:flatten():totable(), xr.grad:flatten():totable(), 1e-10)
      h.assert_close(w.grad:totable(), wr.grad:totable(), 1e-10)
      h.assert_close(b.grad:totable(), br.grad:totable(), 1e-10)
    end
  end)
  it("checks its arguments", function()
    local x = sk.randn({4, 3, 5})
    assert.matches("weight should contain 3 elements not 4", h.err(sk.batch_norm, x, sk.ones({4}), nil, nil, nil, true, 0.1, 1e-5, false))
    assert.matches("running_mean should contain 3 elements not 4",
      h.err(sk.batch_norm, x, nil, nil, sk.zeros({4}), sk.ones({3}), true, 0.1, 1e-5, false))
    assert.matches("running_mean and running_var must be defined in evaluation mode",
      h.err(sk.native_batch_norm, x, nil, nil, nil, nil, false, 0.1, 1e-5))
    assert.matches("Expected more than 1 value per channel when training, got input size %[1, 3%]",
      h.err(sk.batch_norm, sk.randn({1, 3}), nil, nil, nil, nil, true, 0.1, 1e-5, false))
    assert.matches("expected an input of at least 2 dims", h.err(sk.batch_norm, sk.randn({3}), nil, nil, nil, nil, true, 0.1, 1e-5, false))
    assert.matches("\"batch_norm\" not implemented for 'Long'", h.err(sk.batch_norm, x:long(), nil, nil, nil, nil, true, 0.1, 1e-5, false))
    -- an empty batch: an empty output, running statistics untouched (PyTorch divides by zero)
    local rm = sk.zeros({3})
    assert.same({0, 3, 5}, sk.native_batch_norm(sk.zeros({0, 3, 5}), nil, nil, rm, sk.ones({3}), true, 0.1, 1e-5):shape())
    assert.same({0, 0, 0}, rm:totable())
  end)
  it("gives Meta shapes, and nn.BatchNorm keeps its running statistics as buffers", function()
    local y, sm = sk.native_batch_norm(h.meta({2, 3, 4}), nil, nil, nil, nil, true, 0.1, 1e-5)
    assert.equal("meta", y:device())
    assert.same({3}, sm:shape())
    local bn = sk.nn.BatchNorm2d(3, {momentum = 0.5})
    local x = sk.randn({4, 3, 2, 2}) * 3 + 1
    local out = bn(x)
    h.assert_close(bn.running_mean:totable(), (x:mean({0, 2, 3}) * 0.5):totable(), 1e-5)
    assert.equal(1, bn.num_batches_tracked:item())
    local names = {}
    for _, p in ipairs(bn:named_parameters()) do names[#names + 1] = p[1] end
    assert.same({"weight", "bias"}, names)
    assert.truthy(bn:state_dict().running_var)
    bn:eval()
    h.assert_close(bn(x):flatten():totable(),
      ((x - bn.running_mean:view({1, 3, 1, 1})) / (bn.running_var:view({1, 3, 1, 1}) + 1e-5):sqrt()):flatten():totable(), 1e-5)
    assert.same({4, 3, 2, 2}, out:shape())
    assert.matches("expected 4D input %(got 3D input%)", h.err(bn, sk.randn({2, 3, 4})))
    assert.same({5, 3}, sk.nn.BatchNorm1d(3)(sk.randn({5, 3})):shape())
  end)
end)

describe("batch_norm with no channels", function()
  it("trains on an input of 0 channels (a fuzz finding: the per-channel count divided by zero)", function()
    assert.same({2, 0, 3}, sk.batch_norm(sk.zeros({2, 0, 3}), nil, nil, nil, nil, true, 0.1, 1e-5, false):shape())
  end)
end)

describe("group_norm, instance_norm, local_response_norm, normalize", function()
  local function f64(v) return T(v, {dtype = "float64"}) end
  it("group_norm normalizes each group of channels of each sample", function()
    sk.manual_seed(7)
    local x = sk.randn({2, 6, 3, 2}, {dtype = "float64"})
    local w, b = sk.linspace(-1, 2, 6, {dtype = "float64"}), sk.linspace(0.5, -0.5, 6, {dtype = "float64"})
    local y = sk.group_norm(x, 3, w, b, 1e-3)
    local g = x:reshape({2, 3, 12})
    local want = ((g - g:mean(2, true)) / (g:var(2, false, true) + 1e-3):sqrt()):reshape({2, 6, 3, 2})
    want = want * w:view({1, 6, 1, 1}) + b:view({1, 6, 1, 1})
    h.assert_close(y:flatten():totable(), want:flatten():totable(), 1e-12)
    local _, mean, rstd = sk.native_group_norm(x, nil, nil, 2, 6, 6, 3, 1e-3)
    assert.same({2, 3}, mean:shape())
    h.assert_close(mean:flatten():totable(), g:mean(2):flatten():totable(), 1e-12)
    assert.same({2, 3}, rstd:shape())
    assert.matches("Expected number of channels in input to be divisible by num_groups, but got input of shape %[2, 6, 3, 2%] and num_groups=4",
      h.err(sk.group_norm, x, 4))
    assert.matches("Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape %[3%]",
      h.err(sk.group_norm, x, 3, sk.ones({3}, {dtype = "float64"})))
    -- the kernel against the same definition: a transposed input, float32, weight or bias alone,
    -- and the three gradients against autograd through the definition's ops
    local function ref(xx, ww, bb, eps)
      local gg = xx:reshape({xx:size(0), 3, -1})
      local r = ((gg - gg:mean(2, true)) / (gg:var(2, false, true) + eps):sqrt()):reshape(xx:shape())
      if ww then r = r * ww:view({1, 6, 1, 1}) end
      if bb then r = r + bb:view({1, 6, 1, 1}) end
      return r
    end
    local xt = sk.randn({2, 6, 2, 3}, {dtype = "float64"}):transpose(2, 3)
    h.assert_close(sk.group_norm(xt, 3, w, nil):flatten():totable(), ref(xt, w, nil, 1e-5):flatten():totable(), 1e-12)
    h.assert_close(sk.group_norm(xt, 3, nil, b):flatten():totable(), ref(xt, nil, b, 1e-5):flatten():totable(), 1e-12)
    h.assert_close(sk.group_norm(x:float(), 3, w:float(), b:float()):flatten():totable(), ref(x, w, b, 1e-5):flatten():totable(), 1e-5)
    local xs, ws, bs = x:clone():requires_grad_(true), w:clone():requires_grad_(true), b:clone():requires_grad_(true)
    local xr, wr, br = x:clone():requires_grad_(true), w:clone():requires_grad_(true), b:clone():requires_grad_(true)
    local up = sk.linspace(-2, 3, x:numel(), {dtype = "float64"}):reshape(x:shape());
    (sk.group_norm(xs, 3, ws, bs, 1e-3) * up):sum():backward();
    (ref(xr, wr, br, 1e-3) * up):sum():backward()
    for _, p in ipairs({{xs, xr}, {ws, wr}, {bs, br}}) do h.assert_close(p[1].grad:flatten():totable(), p[2].grad:flatten():totable(), 1e-10) end
    local m = sk.nn.GroupNorm(3, 6)
    assert.same({6}, m.weight:shape())
    h.assert_close(m(x):flatten():totable(), sk.group_norm(x, 3, m.weight, m.bias):flatten():totable(), 1e-12)
  end)
  it("instance_norm normalizes each channel of each sample and averages the running statistics over the batch", function()
    local x = sk.randn({3, 2, 5}, {dtype = "float64"})
    local rm, rv = f64({0, 1}), f64({1, 2})
    local y = sk.instance_norm(x, nil, nil, rm, rv, true, 0.5, 1e-5, false)
    local want = (x - x:mean(2, true)) / (x:var(2, false, true) + 1e-5):sqrt()
    h.assert_close(y:flatten():totable(), want:flatten():totable(), 1e-12)
    h.assert_close(rm:totable(), (f64({0, 1}) * 0.5 + x:mean(2):mean(0) * 0.5):totable(), 1e-12)
    h.assert_close(rv:totable(), (f64({1, 2}) * 0.5 + x:var(2, true):mean(0) * 0.5):totable(), 1e-12)
    -- use_input_stats false: the running statistics
    local ye = sk.instance_norm(x, nil, nil, rm, rv, false, 0.5, 1e-5, false)
    h.assert_close(ye:flatten():totable(), ((x - rm:view({1, 2, 1})) / (rv:view({1, 2, 1}) + 1e-5):sqrt()):flatten():totable(), 1e-12)
    assert.matches("Expected running_mean and running_var to be defined when use_input_stats is false",
      h.err(sk.instance_norm, x, nil, nil, nil, nil, false, 0.1, 1e-5, false))
    local m = sk.nn.InstanceNorm1d(2, {affine = true, track_running_stats = true})
    assert.same({3, 2, 5}, m(x:float()):shape())
    assert.truthy(m.running_mean)
    assert.same({2, 3, 4, 4}, sk.nn.InstanceNorm2d(3)(sk.randn({2, 3, 4, 4})):shape())
  end)
  it("local_response_norm divides by (k + alpha * mean of squares over size channels)^beta", function()
    local x = sk.randn({1, 5, 2}, {dtype = "float64"})
    for _, size in ipairs({3, 4}) do
      local y = sk.local_response_norm(x, size, 0.1, 0.75, 2)
      local xs = x:totable()[1]
      for c = 1, 5 do
        for j = 1, 2 do
          local s = 0
          for d = c - size // 2, c - size // 2 + size - 1 do
            if d >= 1 and d <= 5 then s = s + xs[d][j] ^ 2 end
          end
          h.assert_close(y:totable()[1][c][j], xs[c][j] / (2 + 0.1 * s / size) ^ 0.75, 1e-12)
        end
      end
    end
    assert.same({2, 5, 3, 4}, sk.local_response_norm(sk.randn({2, 5, 3, 4}), 2):shape())
    assert.matches("Expected 3D or higher dimensionality input %(got 2 dimensions%)", h.err(sk.local_response_norm, sk.randn({2, 5}), 2))
    assert.same({2, 5, 3}, sk.nn.LocalResponseNorm(3)(sk.randn({2, 5, 3})):shape())
  end)
  it("normalize divides by the p-norm over dim, at least eps", function()
    h.assert_close(sk.normalize(f64({{3, 0}, {4, 0}}), 2, 0):totable(), {{0.6, 0}, {0.8, 0}}, 1e-12)
    h.assert_close(sk.normalize(f64({{1, -3}}), 1, 1):totable(), {{0.25, -0.75}}, 1e-12)
    h.assert_close(sk.normalize(f64({{0, 0}}), 2, 1, 0.5):totable(), {{0, 0}}, 0)
  end)
end)

describe("nn shaping layers", function()
  local f64 = function(t) return sk.tensor(t, {dtype = "float64"}) end
  it("the padding modules call pad with their mode (an int pads every side)", function()
    local x = f64({{{1, 2, 3}}})
    assert.same({{{0, 0, 1, 2, 3, 0, 0}}}, sk.nn.ZeroPad1d(2)(x):totable())
    assert.same({{{9, 1, 2, 3, 9, 9}}}, sk.nn.ConstantPad1d({1, 2}, 9)(x):totable())
    assert.same({{{3, 2, 1, 2, 3, 2}}}, sk.nn.ReflectionPad1d({2, 1})(x):totable())
    assert.same({{{1, 1, 2, 3, 3}}}, sk.nn.ReplicationPad1d(1)(x):totable())
    assert.same({{{3, 1, 2, 3, 1}}}, sk.nn.CircularPad1d(1)(x):totable())
    assert.same({1, 2, 6, 6}, sk.nn.ReflectionPad2d({1, 1, 2, 1})(sk.randn({1, 2, 3, 4})):shape())
    assert.same({1, 4, 4, 5}, sk.nn.ReplicationPad3d(1)(sk.randn({1, 2, 2, 3})):shape())
  end)
  it("Upsample, Unfold/Fold, PixelShuffle and Bilinear are their ops", function()
    local x = sk.randn({1, 2, 3, 4}, {dtype = "float64"})
    h.assert_close(sk.nn.Upsample({scale_factor = 2, mode = "bilinear"})(x):totable(),
      sk.interpolate(x, {scale_factor = 2, mode = "bilinear"}):totable(), 0)
    h.assert_close(sk.nn.UpsamplingBilinear2d({size = {5, 7}})(x):totable(),
      sk.upsample_bilinear2d(x, {5, 7}, true):totable(), 0)
    assert.same(sk.upsample_nearest2d(x, {6, 8}):totable(), sk.nn.UpsamplingNearest2d({scale_factor = 2})(x):totable())
    local cols = sk.nn.Unfold({2, 3}, {padding = 1})(x)
    assert.same(sk.im2col(x, {2, 3}, 1, 1, 1):totable(), cols:totable())
    assert.same(sk.col2im(cols, {3, 4}, {2, 3}, 1, 1, 1):totable(), sk.nn.Fold({3, 4}, {2, 3}, {padding = 1})(cols):totable())
    local p = sk.randn({1, 8, 2, 2})
    assert.same(p:totable(), sk.nn.PixelUnshuffle(2)(sk.nn.PixelShuffle(2)(p)):totable())
    sk.manual_seed(3)
    local b = sk.nn.Bilinear(3, 4, 5)
    assert.same({5, 3, 4}, b.weight:shape())
    assert.is_true(b.weight:abs():max():item() <= 1 / math.sqrt(3))
    local x1, x2 = sk.randn({2, 3}), sk.randn({2, 4})
    h.assert_close(b(x1, x2):totable(), sk.bilinear(x1, x2, b.weight, b.bias):totable(), 1e-6)
    assert.same({2, 5}, sk.nn.Linear(3, 5)(x1):shape())
  end)
  it("a Conv with padding_mode pads with F.pad's mode, then convolves unpadded", function()
    sk.manual_seed(4)
    local c = sk.nn.Conv2d(2, 3, {3, 2}, {padding = {1, 2}, padding_mode = "reflect", dtype = "float64"})
    local x = sk.randn({1, 2, 4, 5}, {dtype = "float64"})
    local want = sk.conv2d(sk.pad(x, {2, 2, 1, 1}, "reflect"), c.weight, c.bias)
    h.assert_close(c(x):flatten():totable(), want:flatten():totable(), 1e-12)
    local s = sk.nn.Conv1d(1, 1, 4, {padding = "same", padding_mode = "circular", bias = false, dtype = "float64"})
    local x1 = sk.randn({1, 1, 6}, {dtype = "float64"})
    h.assert_close(s(x1):totable(), sk.conv1d(sk.pad(x1, {1, 2}, "circular"), s.weight):totable(), 1e-12)
    assert.matches("padding_mode must be one of", h.err(sk.nn.Conv2d, 1, 1, 3, {padding_mode = "mirror"}))
    assert.matches('Only "zeros" padding mode is supported', h.err(sk.nn.ConvTranspose2d, 1, 1, 3, {padding_mode = "reflect"}))
  end)
end)
