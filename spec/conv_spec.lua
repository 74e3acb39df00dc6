-- spec/conv_spec.lua — convolution, conv1d/2d/3d, conv_transpose1d/2d/3d, convolution_backward:
-- values against plain-Lua loops written from the definition (each output a sum over its window;
-- a transposed convolution scatters each input over its window), on float32 (oneDNN), float64
-- and int64 (sk's loops), float16/bfloat16, non-contiguous operands, out=, "same"/"valid",
-- unbatched inputs, Meta shapes, PyTorch's error texts, and gradients through the formulas.
local h = require "spec.helper"
local sk = h.sk

-- {==== The reference ====
-- Flat row-major tables; sizes padded to 3 spatial dims.
local function pad3(t, fill) local r = {} for i = 1, 3 do r[i] = t[i] or fill end return r end

local function numel(s) local n = 1 for _, v in ipairs(s) do n = n * v end return n end

local function seq(n, seed, ints)
  local r, lcg = {}, h.lcg(seed)
  for i = 1, n do r[i] = ints and math.floor(lcg(-4, 5)) or lcg(-1, 1) end
  return r
end

-- The convolution of c = {xs, ws, stride, pad, dil, groups, transposed, outpad} on x, w, b
-- (flat tables); returns the flat output and its shape.
local function ref_conv(c, x, w, b)
  local nsp = #c.xs - 2
  local N, Cin = c.xs[1], c.xs[2]
  local sp = pad3({ table.unpack(c.xs, 3) }, 1)
  local K = pad3({ table.unpack(c.ws, 3) }, 1)
  local s, p, d, op = pad3(c.stride, 1), pad3(c.pad, 0), pad3(c.dil, 1), pad3(c.outpad or {}, 0)
  for i = nsp + 1, 3 do s[i], p[i], d[i], op[i] = 1, 0, 1, 0 end
  local G = c.groups
  local O, Cout = {}, nil
  for i = 1, 3 do
    if c.transposed then O[i] = (sp[i] - 1) * s[i] - 2 * p[i] + d[i] * (K[i] - 1) + op[i] + 1
    else O[i] = (sp[i] + 2 * p[i] - d[i] * (K[i] - 1) - 1) // s[i] + 1 end
  end
  Cout = c.transposed and c.ws[2] * G or c.ws[1]
  local y = {}
  local function yi(n, co, o) return (((n * Cout + co) * O[1] + o[1]) * O[2] + o[2]) * O[3] + o[3] + 1 end
  local function xi(n, ci, i) return (((n * Cin + ci) * sp[1] + i[1]) * sp[2] + i[2]) * sp[3] + i[3] + 1 end
  local function wi(a, bb, k, C1) return (((a * C1 + bb) * K[1] + k[1]) * K[2] + k[2]) * K[3] + k[3] + 1 end
  for n = 0, N - 1 do for co = 0, Cout - 1 do
    for o1 = 0, O[1] - 1 do for o2 = 0, O[2] - 1 do for o3 = 0, O[3] - 1 do
      y[yi(n, co, { o1, o2, o3 })] = b and b[co + 1] or 0
    end end end
  end end
  for n = 0, N - 1 do
    for k1 = 0, K[1] - 1 do for k2 = 0, K[2] - 1 do for k3 = 0, K[3] - 1 do
      local k = { k1, k2, k3 }
      if not c.transposed then -- y[o] += x[o·s - p + k·d] · w
        local cig = Cin // G
        for co = 0, Cout - 1 do
          local g = co // (Cout // G)
          for ci = 0, cig - 1 do
            for o1 = 0, O[1] - 1 do for o2 = 0, O[2] - 1 do for o3 = 0, O[3] - 1 do
              local o, i, ok = { o1, o2, o3 }, {}, true
              for a = 1, 3 do i[a] = o[a] * s[a] - p[a] + k[a] * d[a]; ok = ok and i[a] >= 0 and i[a] < sp[a] end
              if ok then
                local at = yi(n, co, o)
                y[at] = y[at] + x[xi(n, g * cig + ci, i)] * w[wi(co, ci, k, cig)]
              end
            end end end
          end
        end
      else -- every x[i] adds x[i] · w to y[i·s - p + k·d]
        local cog = Cout // G
        for ci = 0, Cin - 1 do
          local g = ci // (Cin // G)
          for cj = 0, cog - 1 do
            for i1 = 0, sp[1] - 1 do for i2 = 0, sp[2] - 1 do for i3 = 0, sp[3] - 1 do
              local i, o, ok = { i1, i2, i3 }, {}, true
              for a = 1, 3 do o[a] = i[a] * s[a] - p[a] + k[a] * d[a]; ok = ok and o[a] >= 0 and o[a] < O[a] end
              if ok then
                local at = yi(n, g * cog + cj, o)
                y[at] = y[at] + x[xi(n, ci, i)] * w[wi(ci, cj, k, cog)]
              end
            end end end
          end
        end
      end
    end end end
  end
  local shape = { N, Cout }
  for i = 1, nsp do shape[2 + i] = O[i] end
  return y, shape
end
-- }====

local CASES = {
  { name = "2d, groups 2, stride 2, padding 1", xs = { 2, 4, 7, 6 }, ws = { 6, 2, 3, 2 }, stride = { 2, 2 }, pad = { 1, 1 }, dil = { 1, 1 }, groups = 2, bias = true },
  { name = "2d, dilation 2, padding 2, stride (1, 2)", xs = { 1, 3, 6, 7 }, ws = { 4, 3, 3, 3 }, stride = { 1, 2 }, pad = { 2, 2 }, dil = { 2, 2 }, groups = 1 },
  { name = "2d, 1x1", xs = { 3, 5, 4, 4 }, ws = { 2, 5, 1, 1 }, stride = { 1, 1 }, pad = { 0, 0 }, dil = { 1, 1 }, groups = 1, bias = true },
  { name = "2d depthwise", xs = { 2, 4, 5, 5 }, ws = { 4, 1, 3, 3 }, stride = { 1, 1 }, pad = { 1, 1 }, dil = { 1, 1 }, groups = 4, bias = true },
  { name = "1d, groups 4, stride 2", xs = { 2, 4, 9 }, ws = { 4, 1, 3 }, stride = { 2 }, pad = { 1 }, dil = { 1 }, groups = 4, bias = true },
  { name = "3d", xs = { 1, 2, 4, 5, 4 }, ws = { 3, 2, 2, 3, 2 }, stride = { 1, 2, 1 }, pad = { 1, 1, 0 }, dil = { 1, 1, 2 }, groups = 1, bias = true },
  { name = "transposed 2d, groups 2, stride 2, output_padding 1", xs = { 2, 4, 4, 5 }, ws = { 4, 3, 3, 3 }, stride = { 2, 2 }, pad = { 1, 1 }, dil = { 1, 1 }, groups = 2, transposed = true, outpad = { 1, 1 }, bias = true },
  { name = "transposed 2d, stride 3, dilation 2, output_padding 2", xs = { 1, 3, 3, 3 }, ws = { 3, 2, 2, 2 }, stride = { 3, 3 }, pad = { 0, 0 }, dil = { 2, 2 }, groups = 1, transposed = true, outpad = { 2, 1 } },
  { name = "transposed 1d", xs = { 2, 2, 5 }, ws = { 2, 2, 3 }, stride = { 2 }, pad = { 2 }, dil = { 1 }, groups = 2, transposed = true, outpad = { 1 }, bias = true },
  { name = "transposed 3d", xs = { 1, 2, 2, 3, 2 }, ws = { 2, 2, 2, 2, 2 }, stride = { 2, 1, 2 }, pad = { 0, 1, 0 }, dil = { 1, 1, 1 }, groups = 1, transposed = true, outpad = { 1, 0, 0 }, bias = true },
}

local function inputs(c, dtype, ints)
  local x, w = seq(numel(c.xs), 7, ints), seq(numel(c.ws), 11, ints)
  local cout = c.transposed and c.ws[2] * c.groups or c.ws[1]
  local b = c.bias and seq(cout, 13, ints) or nil
  local tx = sk.tensor(x, { dtype = dtype }):reshape(c.xs)
  local tw = sk.tensor(w, { dtype = dtype }):reshape(c.ws)
  local tb = b and sk.tensor(b, { dtype = dtype }) or nil
  return x, w, b, tx, tw, tb
end

local function run(c, x, w, b, extra)
  if extra then return sk.convolution(x, w, b, c.stride, c.pad, c.dil, c.transposed or false, c.outpad or { 0 }, c.groups, extra) end
  return sk.convolution(x, w, b, c.stride, c.pad, c.dil, c.transposed or false, c.outpad or { 0 }, c.groups)
end

describe("convolution", function()
  for _, c in ipairs(CASES) do
    for _, dt in ipairs({ "float32", "float64", "int64" }) do
      it(c.name .. " (" .. dt .. ") matches the definition", function()
        local ints = dt == "int64"
        local x, w, b, tx, tw, tb = inputs(c, dt, ints)
        local want, shape = ref_conv(c, x, w, b)
        local y = run(c, tx, tw, tb)
        assert.same(shape, y:shape())
        assert.equal(dt, y:dtype())
        h.assert_close(y:flatten():totable(), want, dt == "float32" and 2e-5 or 1e-12)
      end)
    end
  end

  it("computes float16 and bfloat16 in float32, and reads non-contiguous operands", function()
    local c = CASES[1]
    local x, w, b, tx, tw, tb = inputs(c, "float32")
    local want = run(c, tx, tw, tb)
    for _, dt in ipairs({ "float16", "bfloat16" }) do
      local y = run(c, tx:to(dt), tw:to(dt), tb:to(dt))
      assert.equal(dt, y:dtype())
      local ref = run(c, tx:to(dt):float(), tw:to(dt):float(), tb:to(dt):float())
      h.assert_close(y:float():flatten():totable(), ref:to(dt):float():flatten():totable(), 1e-6)
    end
    -- the same input stored channels-last and the weight transposed in memory
    local xn = tx:permute({ 0, 2, 3, 1 }):contiguous():permute({ 0, 3, 1, 2 })
    local wn = tw:transpose(0, 1):contiguous():transpose(0, 1)
    assert.is_false(xn:is_contiguous())
    h.assert_close(run(c, xn, wn, tb):flatten():totable(), want:flatten():totable(), 1e-6)
  end)

  it("writes out= tensors, non-contiguous ones and ones to resize included", function()
    local c = CASES[1]
    local _, _, _, tx, tw, tb = inputs(c, "float64")
    local want = run(c, tx, tw, tb)
    local o = sk.empty({ 0 }, { dtype = "float64" })
    run(c, tx, tw, tb, { out = o })
    assert.same(want:shape(), o:shape())
    h.assert_close(o:flatten():totable(), want:flatten():totable(), 1e-12)
    local s = want:shape()
    local t = sk.zeros({ s[4], s[3], s[2], s[1] }, { dtype = "float64" }):permute({ 3, 2, 1, 0 })
    run(c, tx, tw, tb, { out = t })
    h.assert_close(t:flatten():totable(), want:flatten():totable(), 1e-12)
  end)

  it("agrees between oneDNN (float32) and sk's loops (float64) at a larger shape, on 1 and 2 threads", function()
    sk.manual_seed(3)
    local x, w, b = sk.randn({ 4, 16, 20, 18 }), sk.randn({ 24, 8, 3, 3 }), sk.randn({ 24 })
    local want = sk.conv2d(x:double(), w:double(), b:double(), { 2, 1 }, 1, 1, 2)
    local before = sk.get_num_threads()
    for _, n in ipairs({ 1, 2 }) do
      sk.set_num_threads(n)
      local y = sk.conv2d(x, w, b, { 2, 1 }, 1, 1, 2)
      assert.is_true(((y:double() - want):abs():max()):item() < 1e-4)
      local yt = sk.conv_transpose2d(y, w, nil, { 2, 1 }, 1, { 1, 0 }, 2)
      local yt64 = sk.conv_transpose2d(y:double(), w:double(), nil, { 2, 1 }, 1, { 1, 0 }, 2)
      assert.same(x:shape(), yt:shape())
      assert.is_true(((yt:double() - yt64):abs():max()):item() < 1e-3)
    end
    sk.set_num_threads(before)
  end)

  it("reads an int for an int[N] argument as N copies, and an unbatched input as a batch of one", function()
    local x, w = sk.randn({ 3, 6, 5 }), sk.randn({ 2, 3, 3, 3 })
    local y = sk.conv2d(x, w, nil, 2, 1)
    assert.same({ 2, 3, 3 }, y:shape())
    h.assert_close(y:flatten():totable(), sk.conv2d(x:unsqueeze(0), w, nil, { 2, 2 }, { 1, 1 }):flatten():totable(), 1e-6)
    assert.same({ 4, 7 }, sk.conv1d(sk.randn({ 2, 9 }), sk.randn({ 4, 2, 3 })):shape())
    assert.same({ 1, 2, 6, 6, 6 }, sk.conv3d(sk.randn({ 1, 2, 4, 4, 4 }), sk.randn({ 2, 2, 1, 1, 1 }), nil, 1, 1):shape())
    assert.same({ 2, 5, 5 }, sk.conv_transpose2d(sk.randn({ 3, 3, 3 }), sk.randn({ 3, 2, 3, 3 })):shape())
  end)

  it("pads 'same' (odd totals one more on the right, as PyTorch) and 'valid'", function()
    local x = sk.randn({ 2, 3, 7, 6 }, { dtype = "float64" })
    for _, k in ipairs({ { 3, 3 }, { 4, 2 }, { 2, 5 } }) do
      for _, d in ipairs({ 1, 2 }) do
        local w = sk.randn({ 4, 3, k[1], k[2] }, { dtype = "float64" })
        local y = sk.conv2d(x, w, nil, 1, "same", d)
        assert.same({ 2, 4, 7, 6 }, y:shape())
        -- PyTorch pads total//2 on the left and the rest on the right: the reference pads
        -- the input explicitly with zeros, then runs a "valid" convolution
        local tl = { d * (k[1] - 1) // 2, d * (k[2] - 1) // 2 }
        local tr = { d * (k[1] - 1) - tl[1], d * (k[2] - 1) - tl[2] }
        local padded = sk.zeros({ 2, 3, 7 + tl[1] + tr[1], 6 + tl[2] + tr[2] }, { dtype = "float64" })
        padded:narrow(2, tl[1], 7):narrow(3, tl[2], 6):copy_(x)
        local want = sk.conv2d(padded, w, nil, 1, "valid", d)
        h.assert_close(y:flatten():totable(), want:flatten():totable(), 1e-12)
      end
    end
    assert.same({ 2, 4, 5, 4 }, sk.conv2d(x, sk.randn({ 4, 3, 3, 3 }, { dtype = "float64" }), nil, 1, "valid"):shape())
  end)

  it("handles empty batches and zero input channels", function()
    assert.same({ 0, 4, 3, 3 }, sk.conv2d(sk.randn({ 0, 3, 5, 5 }), sk.randn({ 4, 3, 3, 3 })):shape())
    local y = sk.conv2d(sk.randn({ 2, 0, 5, 5 }), sk.randn({ 4, 0, 3, 3 }), sk.tensor({ 1, 2, 3, 4 }, { dtype = "float32" }))
    assert.same({ 2, 4, 3, 3 }, y:shape())
    assert.same({ 1, 2, 3, 4 }, y:select(0, 1):select(1, 2):select(1, 0):totable())
  end)

  it("gives PyTorch's errors", function()
    local x, w = sk.randn({ 2, 3, 5, 5 }), sk.randn({ 4, 3, 3, 3 })
    local cases = {
      { "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]", function() return sk.conv2d(sk.randn({ 2, 3 }), w) end },
      { "Given groups=1, weight of size [4, 2, 3, 3], expected input[2, 3, 5, 5] to have 2 channels, but got 3 channels instead", function() return sk.conv2d(x, sk.randn({ 4, 2, 3, 3 })) end },
      { "Given groups=2, weight of size [4, 3, 3, 3], expected input[2, 3, 5, 5] to have 6 channels, but got 3 channels instead", function() return sk.conv2d(x, w, nil, 1, 0, 1, 2) end },
      { "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size [4, 1, 3, 3] instead", function() return sk.conv2d(x, sk.randn({ 4, 1, 3, 3 }), nil, 1, 0, 1, 3) end },
      { "Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size [0, 3, 3, 3] instead", function() return sk.conv2d(x, sk.randn({ 0, 3, 3, 3 })) end },
      { "Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 4 elements, but got bias of size [5] instead", function() return sk.conv2d(x, w, sk.randn({ 5 })) end },
      { "non-positive stride is not supported", function() return sk.conv2d(x, w, nil, 0) end },
      { "negative padding is not supported", function() return sk.conv2d(x, w, nil, 1, -1) end },
      { "non-positive dilation is not supported", function() return sk.conv2d(x, w, nil, 1, 0, 0) end },
      { "non-positive groups is not supported", function() return sk.conv2d(x, w, nil, 1, 0, 1, 0) end },
      { "Calculated padded input size per channel: (5 x 5). Kernel size: (7 x 7). Kernel size can't be greater than actual input size", function() return sk.conv2d(x, sk.randn({ 4, 3, 7, 7 })) end },
      { "expected scalar type Double but found Float", function() return sk.conv2d(x:double(), w) end },
      { "Input type (float32) and bias type (float64) should be the same", function() return sk.conv2d(x, w, sk.randn({ 4 }, { dtype = "float64" })) end },
      { "padding='same' is not supported for strided convolutions", function() return sk.conv2d(x, w, nil, 2, "same") end },
      { "Invalid padding string: 'foo'", function() return sk.conv2d(x, w, nil, 1, "foo") end },
      { "Given transposed=1, weight of size [4, 3, 3, 3], expected input[2, 3, 5, 5] to have 4 channels, but got 3 channels instead", function() return sk.conv_transpose2d(x, w) end },
      { "output padding must be smaller than either stride or dilation, but got output_padding=[2, 2], stride=[1, 1], dilation=[1, 1]", function() return sk.conv_transpose2d(x, sk.randn({ 3, 3, 3, 3 }), nil, 1, 0, 2) end },
      { "Expected 3-dimensional input for 3-dimensional weight [4, 3, 3], but got 4-dimensional input of size [2, 3, 5, 5] instead", function() return sk.convolution(x, sk.randn({ 4, 3, 3 }), nil, { 1 }, { 0 }, { 1 }, false, { 0 }, 1) end },
      { "expected stride to be a single integer value or a list of 2 values to match the convolution dimensions, but got stride=[1, 2, 3]", function() return sk.conv2d(x, w, nil, { 1, 2, 3 }) end },
      { "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [2, 3, 5, 5]", function() return sk.conv1d(x, w) end },
      { "weight should have at least three dimensions", function() return sk.convolution(x, sk.randn({ 4, 3 }), nil, { 1 }, { 0 }, { 1 }, false, { 0 }, 1) end },
      { "\"convolution\" not implemented for 'Bool'", function() return sk.conv2d(x:bool(), w:bool()) end },
      { "Given input size per channel: (1 x 1). Calculated output size per channel: (-1 x -1). Output size is too small", function() return sk.conv_transpose2d(sk.randn({ 1, 3, 1, 1 }), sk.randn({ 3, 2, 1, 1 }), nil, 1, 1) end },
    }
    for _, c in ipairs(cases) do
      local msg = h.err(c[2])
      assert.equal(c[1], msg:sub(-#c[1]))
      assert.matches("^spec/conv_spec%.lua:%d+: sk%.[%w_]+: ", msg)
    end
  end)

  it("gives Meta shapes without computing", function()
    local m = sk.conv2d(h.meta({ 2, 4, 7, 6 }), h.meta({ 6, 2, 3, 2 }), h.meta({ 6 }), 2, 1, 1, 2)
    assert.equal("meta", m:device())
    assert.same({ 2, 6, 4, 4 }, m:shape())
    assert.same({ 2, 4, 8, 8 }, sk.conv_transpose2d(h.meta({ 2, 4, 4, 4 }), h.meta({ 4, 2, 3, 3 }), nil, 2, 1, 1, 2):shape())
    local gi, gw, gb = sk.convolution_backward(h.meta({ 2, 6, 4, 4 }), h.meta({ 2, 4, 7, 6 }), h.meta({ 6, 2, 3, 2 }), { 6 },
      { 2, 2 }, { 1, 1 }, { 1, 1 }, false, { 0, 0 }, 2, { true, true, true })
    assert.same({ 2, 4, 7, 6 }, gi:shape())
    assert.same({ 6, 2, 3, 2 }, gw:shape())
    assert.same({ 6 }, gb:shape())
    assert.equal("meta", gw:device())
  end)
end)

describe("convolution_backward", function()
  it("gives the gradients of the definition, None where output_mask is false", function()
    local c = CASES[1]
    local x, w, b, tx, tw, tb = inputs(c, "float64")
    local y = run(c, tx, tw, tb)
    local g = sk.randn(y:shape(), { dtype = "float64" })
    -- the reference: gradients are the adjoint of the linear map; check <g, conv(x + e_i)> sums
    local gi, gw, gb = sk.convolution_backward(g, tx, tw, { 6 }, c.stride, c.pad, c.dil, false, { 0, 0 }, c.groups,
      { true, true, true })
    local ys = (y * g):sum():item()
    -- linearity: <g, conv(x, w)> = <gi, x> = <gw, w> (no bias) ; <g, b> term = <gb, b>
    local yb = (run(c, tx, tw, nil) * g):sum():item()
    h.assert_close((gi * tx):sum():item(), yb, 1e-10)
    h.assert_close((gw * tw):sum():item(), yb, 1e-10)
    h.assert_close((gb * tb):sum():item(), ys - yb, 1e-10)
    -- and gb is the sum of g over every dim but the channels
    h.assert_close(gb:totable(), g:sum({ 0, 2, 3 }):totable(), 1e-12)
    local a1, a2, a3 = sk.convolution_backward(g, tx, tw, nil, c.stride, c.pad, c.dil, false, { 0, 0 }, c.groups,
      { false, true, false })
    assert.is_nil(a1)
    assert.is_nil(a3)
    h.assert_close(a2:flatten():totable(), gw:flatten():totable(), 1e-12)
    assert.matches("expected grad_output of size %[2, 6, 4, 4%]", h.err(sk.convolution_backward, sk.randn({ 2, 6, 3, 3 }, { dtype = "float64" }),
      tx, tw, nil, c.stride, c.pad, c.dil, false, { 0, 0 }, c.groups, { true, true, false }))
  end)

  it("runs backward through conv2d on float32 like float64, and records the double backward", function()
    sk.manual_seed(5)
    local x = sk.randn({ 2, 4, 6, 6 }):requires_grad_()
    local w = sk.randn({ 6, 2, 3, 3 }):requires_grad_()
    local b = sk.randn({ 6 }):requires_grad_()
    local y = sk.conv2d(x, w, b, 1, 1, 1, 2)
    y:square():sum():backward()
    local x64, w64, b64 = x:detach():double():requires_grad_(), w:detach():double():requires_grad_(), b:detach():double():requires_grad_()
    sk.conv2d(x64, w64, b64, 1, 1, 1, 2):square():sum():backward()
    assert.is_true(((x.grad:double() - x64.grad):abs():max()):item() < 1e-3)
    assert.is_true(((w.grad:double() - w64.grad):abs():max()):item() < 1e-3)
    assert.is_true(((b.grad:double() - b64.grad):abs():max()):item() < 1e-3)
    -- a gradient penalty: d/dw |dL/dx|² needs convolution_backward's own formula
    local xx = sk.randn({ 1, 2, 5, 5 }, { dtype = "float64" }):requires_grad_()
    local ww = sk.randn({ 3, 2, 3, 3 }, { dtype = "float64" }):requires_grad_()
    local gx = sk.autograd.grad(sk.conv2d(xx, ww):sin():sum(), { xx }, { create_graph = true })[1]
    local pen = gx:square():sum()
    local gw = sk.autograd.grad(pen, { ww })[1]
    assert.same({ 3, 2, 3, 3 }, gw:shape())
    assert.is_true(sk.autograd.gradcheck(function(a)
      return sk.autograd.grad(sk.conv2d(xx:detach(), a):sin():sum(), { a }, { create_graph = true })[1] end, { ww }))
  end)
end)

describe("sizes past int64 in convolution and pooling messages", function()
  -- the window arithmetic is 128-bit, so these sizes are known exactly; they used to be cast to
  -- long long for the message ("Kernel size: (-1 x -1)"). Values by hand, M = 2^63 - 1:
  local M = math.maxinteger
  it("are printed exactly", function()
    -- dilated extent M·(3 - 1) + 1 = 2^64 - 1
    assert.matches("sk.conv2d: Calculated padded input size per channel: (4 x 4). Kernel size: (18446744073709551615 x "
                   .. "18446744073709551615). Kernel size can't be greater than actual input size",
                   h.err(sk.conv2d, sk.ones({ 1, 1, 4, 4 }), sk.ones({ 1, 1, 3, 3 }), nil, 1, 0, M), 1, true)
    -- (4 + 2M - 3) / 1 + 1 = 2^64
    assert.matches("sk.conv2d: the output size 18446744073709551616 x 18446744073709551616 overflows",
                   h.err(sk.conv2d, sk.ones({ 1, 1, 4, 4 }), sk.ones({ 1, 1, 3, 3 }), nil, 1, M), 1, true)
    -- (4 - 1)·M + (2M + 1) = 5M + 1 = 5·2^63 - 4
    assert.matches("sk.conv_transpose2d: the output size 46116860184273879036 x 46116860184273879036 overflows",
                   h.err(sk.conv_transpose2d, sk.ones({ 1, 1, 4, 4 }), sk.ones({ 1, 1, 3, 3 }), nil, M, 0, 0, 1, M), 1, true)
    -- floor((4 + 2 - 2M - 1) / 1) + 1 = 8 - 2^64
    assert.matches("sk.max_pool2d: Given input size: (1x4x4). Calculated output size: (1x-18446744073709551608x"
                   .. "-18446744073709551608). Output size is too small",
                   h.err(sk.max_pool2d, sk.ones({ 1, 1, 4, 4 }), 3, 1, 1, M), 1, true)
  end)
end)
