-- spec/pool_spec.lua — pooling: max (with indices), avg, adaptive avg and max, max_unpool,
-- lp_pool, in 1, 2 and 3 spatial dims, against plain-Lua loops over explicit windows; PyTorch's
-- rules (NaN wins a max, ceil_mode's last window, count_include_pad, divisor_override,
-- integer averages truncate), Meta shapes, errors with PyTorch's texts, and the nn modules.
local h = require "spec.helper"
local sk = h.sk

-- {==== The reference: one plane [H, W] (a 1-d pool is H = 1), flat row-major tables ====
local function windows(n_in, k, s, p, d, ceil)
  local out = math.floor((n_in + 2 * p - d * (k - 1) - 1 + (ceil and s - 1 or 0)) / s) + 1
  if ceil and (out - 1) * s >= n_in + p then out = out - 1 end
  local w = {}
  for o = 0, out - 1 do
    local idx = {}
    for j = 0, k - 1 do idx[#idx + 1] = o * s - p + j * d end
    w[o + 1] = idx
  end
  return w
end

-- max over each window of a [H, W] plane: values and flat indices
local function ref_max(plane, H, W, k, s, p, d, ceil)
  local wh, ww = windows(H, k[1], s[1], p[1], d[1], ceil), windows(W, k[2], s[2], p[2], d[2], ceil)
  local v, ix = {}, {}
  for _, rows in ipairs(wh) do
    for _, cols in ipairs(ww) do
      local best, bi = -math.huge, nil
      for _, r in ipairs(rows) do
        for _, c in ipairs(cols) do
          if r >= 0 and r < H and c >= 0 and c < W then
            local x = plane[r * W + c + 1]
            bi = bi or r * W + c
            if x > best or x ~= x then best, bi = x, r * W + c end
          end
        end
      end
      v[#v + 1], ix[#ix + 1] = best, bi
    end
  end
  return v, ix, #wh, #ww
end

-- avg over each window, PyTorch's divisor rules
local function ref_avg(plane, H, W, k, s, p, ceil, include_pad, divisor)
  local wh, ww = windows(H, k[1], s[1], p[1], 1, ceil), windows(W, k[2], s[2], p[2], 1, ceil)
  local v = {}
  for _, rows in ipairs(wh) do
    for _, cols in ipairs(ww) do
      local sum, n, full = 0, 0, 0
      for _, r in ipairs(rows) do
        for _, c in ipairs(cols) do
          if r < H + p[1] and c < W + p[2] then full = full + 1 end -- a window ends at in + pad
          if r >= 0 and r < H and c >= 0 and c < W then sum, n = sum + plane[r * W + c + 1], n + 1 end
        end
      end
      v[#v + 1] = sum / (divisor or (include_pad and full or n))
    end
  end
  return v, #wh, #ww
end

-- adaptive windows: [floor(o·in/out), ceil((o+1)·in/out))
local function ref_adaptive(plane, H, W, oh, ow, max)
  local v, ix = {}, {}
  for i = 0, oh - 1 do
    local r0, r1 = (i * H) // oh, -((-(i + 1) * H) // oh)
    for j = 0, ow - 1 do
      local c0, c1 = (j * W) // ow, -((-(j + 1) * W) // ow)
      local acc, n, bi = max and -math.huge or 0, 0, r0 * W + c0
      for r = r0, r1 - 1 do
        for c = c0, c1 - 1 do
          local x = plane[r * W + c + 1]
          if max then if x > acc or x ~= x then acc, bi = x, r * W + c end else acc = acc + x end
          n = n + 1
        end
      end
      v[#v + 1], ix[#ix + 1] = max and acc or acc / n, bi
    end
  end
  return v, ix
end

local function planes(t) -- [N, C, H, W] -> list of flat planes
  local s = t:shape()
  local r = {}
  for n = 0, s[1] - 1 do for c = 0, s[2] - 1 do r[#r + 1] = t:select(0, n):select(0, c):flatten():totable() end end
  return r
end
local function flat(list) local r = {} for _, p in ipairs(list) do for _, v in ipairs(p) do r[#r + 1] = v end end return r end
local function rand(shape, dtype) -- values on a grid, all distinct (one maximum per window)
  local n = 1
  for _, v in ipairs(shape) do n = n * v end
  sk.manual_seed(n)
  return (sk.randperm(n, { dtype = "float64" }) * 0.25 - n / 8):reshape(shape):to(dtype or "float64")
end
-- }====

describe("max_pool", function()
  local cases = {
    { k = { 3, 3 }, s = { 2, 2 }, p = { 1, 1 }, d = { 1, 1 }, ceil = false, shape = { 2, 3, 7, 6 } },
    { k = { 3, 2 }, s = { 2, 1 }, p = { 1, 0 }, d = { 2, 1 }, ceil = true, shape = { 1, 2, 9, 7 } },
    { k = { 2, 2 }, s = { 2, 2 }, p = { 1, 1 }, d = { 1, 1 }, ceil = true, shape = { 1, 1, 5, 5 } },
  }
  for i, c in ipairs(cases) do
    for _, dt in ipairs({ "float64", "float32", "bfloat16" }) do
      it("2-d case " .. i .. " (" .. dt .. ") matches explicit windows, values and indices", function()
        local x = rand(c.shape, dt)
        local v, ix = sk.max_pool2d_with_indices(x, c.k, c.s, c.p, c.d, c.ceil)
        local wv, wi = {}, {}
        local oh, ow
        for _, pl in ipairs(planes(x:double())) do
          local a, b
          a, b, oh, ow = ref_max(pl, c.shape[3], c.shape[4], c.k, c.s, c.p, c.d, c.ceil)
          wv[#wv + 1], wi[#wi + 1] = a, b
        end
        assert.same({ c.shape[1], c.shape[2], oh, ow }, v:shape())
        assert.equal(dt, v:dtype())
        assert.equal("int64", ix:dtype())
        h.assert_close(v:double():flatten():totable(), flat(wv), 0)
        assert.same(flat(wi), ix:flatten():totable())
      end)
    end
  end

  it("takes NaN as the maximum, and 1-d and 3-d inputs", function()
    local x = sk.tensor({ { { 1, 0 / 0, 3, 2 } } })
    local v, i = sk.max_pool1d_with_indices(x, 2)
    assert.is_true(v:isnan():select(2, 0):item())
    assert.same({ { { 1, 2 } } }, i:totable())
    assert.equal(3, v:select(2, 1):item())
    -- 3-d: the maximum of each 2x2x2 block of an arange is its last corner
    local a = sk.arange(64, { dtype = "float32" }):reshape({ 1, 1, 4, 4, 4 })
    local m, mi = sk.max_pool3d_with_indices(a, 2)
    assert.same({ 21, 23, 29, 31, 53, 55, 61, 63 }, m:flatten():totable())
    assert.same({ 21, 23, 29, 31, 53, 55, 61, 63 }, mi:flatten():totable())
    -- unbatched [C, H, W]
    assert.same({ 3, 3, 3 }, sk.max_pool2d(rand({ 3, 6, 6 }), 2):shape())
  end)

  it("sends the gradient to the maximum, and max_unpool puts values back at their indices", function()
    local x = (rand({ 2, 2, 4, 4 }):abs() + 1):requires_grad_()
    local v, i = sk.max_pool2d_with_indices(x, 2)
    v:sum():backward()
    -- each 2x2 block has one 1 in the gradient, where the maximum is
    local g = x.grad:reshape({ 2, 2, 2, 2, 2, 2 }):permute({ 0, 1, 2, 4, 3, 5 }):reshape({ 2, 2, 2, 2, 4 })
    assert.same({ 2, 2, 2, 2 }, g:sum(-1):shape())
    h.assert_close(g:sum(-1):flatten():totable(), { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 0)
    local u = sk.max_unpool2d(v:detach(), i, { 4, 4 })
    h.assert_close(sk.max_pool2d(u, 2):flatten():totable(), v:detach():flatten():totable(), 0)
    assert.equal(16, (u:ne(0)):sum():item())
    assert.matches("Found an invalid max index: 16 %(output volumes are of size 4x4%)",
      h.err(sk.max_unpool2d, v:detach(), i * 0 + 16, { 4, 4 }))
    assert.same({ 2, 3, 6 }, sk.max_unpool1d(sk.ones({ 2, 3, 3 }), sk.tensor({ 0, 2, 5 }):expand({ 2, 3, 3 }):contiguous(), { 6 }):shape())
  end)

  it("gives PyTorch's errors", function()
    local x = rand({ 2, 3, 5, 5 })
    local cases = {
      { "max_pool2d: kernel_size must either be a single int, or a tuple of two ints", function() return sk.max_pool2d(x, { 2, 2, 2 }) end },
      { "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints", function() return sk.max_pool2d(x, 2, { 1, 1, 1 }) end },
      { "max_pool2d: padding must be either be a single int, or a tuple of two ints", function() return sk.max_pool2d(x, 2, 2, { 1, 1, 1 }) end },
      { "max_pool2d: dilation must be either a single int, or a tuple of two ints", function() return sk.max_pool2d(x, 2, 2, 0, { 1, 1, 1 }) end },
      { "kernel size should be greater than zero, but got kH: 0 kW: 0", function() return sk.max_pool2d(x, 0) end },
      { "stride should be greater than zero, but got dH: 0 dW: 0", function() return sk.max_pool2d(x, 2, 0) end },
      { "dilation should be greater than zero, but got dilationH: 0 dilationW: 0", function() return sk.max_pool2d(x, 2, 2, 0, 0) end },
      { "pad should be at most half of kernel size, but got pad=2 and kernel_size=3", function() return sk.max_pool2d(x, 3, 2, 2) end },
      { "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 0, 5, 5]", function() return sk.max_pool2d(sk.zeros({ 2, 0, 5, 5 }), 2) end },
      { "Given input size: (3x1x1). Calculated output size: (3x0x0). Output size is too small", function() return sk.max_pool2d(sk.zeros({ 2, 3, 1, 1 }), 2) end },
      { "\"max_pool2d\" not implemented for 'Long'", function() return sk.max_pool2d(x:long(), 2) end },
      { "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:[3]", function() return sk.max_pool1d(sk.zeros({ 3 }), 2) end },
      { "Expected 4D or 5D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 3, 4]", function() return sk.max_pool3d(sk.zeros({ 2, 3, 4 }), 2) end },
      { "divisor must be not zero", function() return sk.avg_pool2d(x, 2, 2, 0, false, true, 0) end },
      { "Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 'self' (while checking arguments for avg_pool1d)", function() return sk.avg_pool1d(sk.zeros({ 3 }), 2) end },
      { "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 5]", function() return sk.adaptive_avg_pool2d(sk.zeros({ 5, 5 }), 2) end },
      { "adaptive_avg_pool2d: output_size must be 2", function() return sk.adaptive_avg_pool2d(x, { 2, 2, 2 }) end },
      { "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes [2, 3, 0, 5] with dimension 2 being empty", function() return sk.adaptive_max_pool2d(sk.zeros({ 2, 3, 0, 5 }), 2) end },
      { "\"adaptive_avg_pool2d\" not implemented for 'Long'", function() return sk.adaptive_avg_pool2d(x:long(), 2) end },
      { "elements in indices should be type int64 but got: Float", function() return sk.max_unpool2d(x:float(), x:float(), { 10, 10 }) end },
    }
    for _, c in ipairs(cases) do
      local msg = h.err(c[2])
      assert.equal(c[1], msg:sub(-#c[1]))
      assert.matches("^spec/pool_spec%.lua:%d+: sk%.[%w_]+: ", msg)
    end
  end)
end)

describe("avg_pool and adaptive pools", function()
  it("avg_pool2d follows count_include_pad, divisor_override and ceil_mode", function()
    local x = rand({ 2, 2, 5, 6 })
    for _, o in ipairs({ { true, true }, { false, true }, { true, false }, { false, false } }) do
      local ceil, inc = o[1], o[2]
      local y = sk.avg_pool2d(x, 3, 2, 1, ceil, inc)
      local want, oh, ow = {}, nil, nil
      for _, pl in ipairs(planes(x)) do
        local v
        v, oh, ow = ref_avg(pl, 5, 6, { 3, 3 }, { 2, 2 }, { 1, 1 }, ceil, inc)
        want[#want + 1] = v
      end
      assert.same({ 2, 2, oh, ow }, y:shape())
      h.assert_close(y:flatten():totable(), flat(want), 1e-12)
    end
    local want = {}
    for _, pl in ipairs(planes(x)) do want[#want + 1] = ref_avg(pl, 5, 6, { 2, 3 }, { 1, 2 }, { 1, 1 }, false, true, 5) end
    h.assert_close(sk.avg_pool2d(x, { 2, 3 }, { 1, 2 }, 1, false, true, 5):flatten():totable(), flat(want), 1e-12)
    -- integers: the sum divided, truncated toward zero (PyTorch's)
    local xi = sk.tensor({ { { { 1, 2 }, { 4, 4 } }, { { -1, -2 }, { -4, -4 } } } })
    assert.same({ { { { 2 } }, { { -2 } } } }, sk.avg_pool2d(xi, 2):totable())
    -- 1-d and 3-d: a 3-d pool over a depth-1 volume is the 2-d pool
    local v1 = sk.avg_pool1d(x:select(2, 0), 3, 2, 1)
    h.assert_close(v1:flatten():totable(), sk.avg_pool2d(x:narrow(2, 0, 1), { 1, 3 }, { 1, 2 }, { 0, 1 }):flatten():totable(), 1e-12)
    local v3 = sk.avg_pool3d(x:unsqueeze(2), { 1, 3, 3 }, { 1, 2, 2 }, { 0, 1, 1 })
    h.assert_close(v3:flatten():totable(), sk.avg_pool2d(x, 3, 2, 1):flatten():totable(), 1e-12)
  end)

  it("adaptive avg and max use PyTorch's windows; a 1x1 output is the mean", function()
    local x = rand({ 2, 3, 7, 5 })
    for _, os in ipairs({ { 3, 2 }, { 7, 5 }, { 4, 4 }, { 1, 3 } }) do
      local wa, wm, wi = {}, {}, {}
      for _, pl in ipairs(planes(x)) do
        wa[#wa + 1] = ref_adaptive(pl, 7, 5, os[1], os[2], false)
        local m, i = ref_adaptive(pl, 7, 5, os[1], os[2], true)
        wm[#wm + 1], wi[#wi + 1] = m, i
      end
      h.assert_close(sk.adaptive_avg_pool2d(x, os):flatten():totable(), flat(wa), 1e-12)
      local m, i = sk.adaptive_max_pool2d(x, os)
      h.assert_close(m:flatten():totable(), flat(wm), 0)
      assert.same(flat(wi), i:flatten():totable())
    end
    h.assert_close(sk.adaptive_avg_pool2d(x, 1):flatten():totable(), x:mean({ 2, 3 }):flatten():totable(), 1e-12)
    assert.same({ 2, 3, 1, 1 }, sk.adaptive_avg_pool2d(x, 1):shape())
    assert.same({ 2, 3, 4 }, sk.adaptive_avg_pool1d(x:select(3, 0), 4):shape())
    assert.same({ 2, 3, 2, 2, 2 }, sk.adaptive_max_pool3d(x:unsqueeze(2):expand({ 2, 3, 4, 7, 5 }), 2):shape())
    -- an output larger than the input repeats elements
    h.assert_close(sk.adaptive_avg_pool1d(sk.tensor({ { { 1, 3 } } }, { dtype = "float32" }), 4):totable(), { { { 1, 1, 3, 3 } } }, 0)
  end)

  it("lp_pool is (Σ x^p)^(1/p) over each window", function()
    local x = rand({ 1, 2, 4, 4 }):abs() + 0.5
    local y = sk.lp_pool2d(x, 3, 2)
    local want = ((x ^ 3):reshape({ 1, 2, 2, 2, 2, 2 }):sum({ 3, 5 })) ^ (1 / 3)
    h.assert_close(y:flatten():totable(), want:flatten():totable(), 1e-12)
    assert.same({ 1, 2, 2 }, sk.lp_pool1d(x:select(2, 0), 2, 2):shape())
  end)

  it("gives Meta shapes", function()
    local m = h.meta({ 2, 3, 7, 6 })
    assert.same({ 2, 3, 4, 3 }, sk.max_pool2d(m, 3, 2, 1):shape())
    local v, i = sk.max_pool2d_with_indices(m, 2)
    assert.equal("int64", i:dtype())
    assert.equal("meta", v:device())
    assert.same({ 2, 3, 4, 4 }, sk.avg_pool2d(m, 3, 2, 1, true):shape())
    assert.same({ 2, 3, 3, 2 }, sk.adaptive_avg_pool2d(m, { 3, 2 }):shape())
    assert.same({ 2, 3, 1, 1 }, sk.adaptive_avg_pool2d(m, 1):shape())
    assert.same({ 2, 3, 3, 2 }, (sk.adaptive_max_pool2d(m, { 3, 2 })):shape())
    assert.same({ 1, 2, 2, 2, 2 }, sk.max_pool3d(h.meta({ 1, 2, 4, 4, 4 }), 2):shape())
  end)
end)

describe("sk.nn pooling modules", function()
  it("MaxPool, AvgPool, AdaptiveAvgPool, AdaptiveMaxPool, LPPool, MaxUnpool call their ops", function()
    local nn = sk.nn
    local x = rand({ 2, 3, 8, 8 }, "float32")
    h.assert_close(nn.MaxPool2d(3, { stride = 2, padding = 1 })(x):totable(), sk.max_pool2d(x, 3, 2, 1):totable(), 0)
    local v, i = nn.MaxPool2d(2, { return_indices = true })(x)
    h.assert_close(nn.MaxUnpool2d(2)(v, i):totable(), sk.max_unpool2d(v, i, { 8, 8 }):totable(), 0)
    h.assert_close(nn.AvgPool2d(2, { count_include_pad = false })(x):totable(), sk.avg_pool2d(x, 2):totable(), 1e-6)
    h.assert_close(nn.AdaptiveAvgPool2d({ 3, 3 })(x):totable(), sk.adaptive_avg_pool2d(x, { 3, 3 }):totable(), 1e-6)
    h.assert_close(nn.AdaptiveMaxPool2d(3)(x):totable(), (sk.adaptive_max_pool2d(x, 3)):totable(), 0)
    h.assert_close(nn.LPPool2d(2, 2)(x:abs()):totable(), sk.lp_pool2d(x:abs(), 2, 2):totable(), 1e-6)
    assert.same({ 2, 3, 4 }, nn.MaxPool1d(2)(x:select(3, 0)):shape())
    assert.same({ 2, 3, 2, 4, 4 }, nn.AvgPool3d(2)(x:unsqueeze(2):expand({ 2, 3, 4, 8, 8 })):shape())
    assert.same({ 2, 3, 5 }, nn.AdaptiveAvgPool1d(5)(x:select(3, 0)):shape())
  end)
end)
