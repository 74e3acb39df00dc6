-- spec/shaping_spec.lua — padding, resampling, im2col/col2im, as_strided and Tensor.unfold,
-- and the functional composites (linear, bilinear, one_hot, pixel_shuffle,
-- scaled_dot_product_attention), against their definitions evaluated in plain Lua, against
-- each other (conv2d through im2col and matmul, fold as unfold's adjoint), on Meta, and
-- their errors.
local h = require "spec.helper"
local sk = h.sk

local filled, flat = h.filled, h.flat
local function wave(shape, dtype) return filled(shape, function(k) return math.sin(0.37 * k + 0.1) end, dtype) end

describe("pad", function()
  -- the source index of output position i (0-based, i in [-l, n + r)) for each mode
  local SRC = {
    reflect = function(i, n) return (n - 1) - math.abs((n - 1) - math.abs(i)) end,
    replicate = function(i, n) return math.min(n - 1, math.max(0, i)) end,
    circular = function(i, n) return i % n end,
  }
  for mode, src in pairs(SRC) do
    it(mode .. " pads the last two dims as its index rule says, negative pads cropping", function()
      local x = wave({ 2, 3, 4 })
      local pads = { 2, -1, 1, 2 } -- last dim (2, -1), dim 1 (1, 2)
      local y = sk.pad(x, pads, mode)
      assert.same({ 2, 6, 5 }, y:shape())
      local xv, want = x:totable(), {}
      for b = 1, 2 do
        want[b] = {}
        for i = 0, 5 do
          want[b][i + 1] = {}
          for j = 0, 4 do want[b][i + 1][j + 1] = xv[b][src(i - 1, 3) + 1][src(j - 2, 4) + 1] end
        end
      end
      h.assert_close(y:totable(), want, 1e-15)
    end)
  end

  it("constant fills with the value and crops negative pads; every dtype, any number of dims", function()
    local x = sk.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "int64" })
    assert.same({ { 7, 7, 7 }, { 7, 1, 2 }, { 7, 4, 5 } }, sk.pad(x, { 1, -1, 1, 0 }, "constant", 7):totable())
    assert.same({ { 0, 0, 1, 2, 3 }, { 0, 0, 4, 5, 6 } }, sk.pad(x, { 2, 0 }):totable())
    assert.same({ 2, 0 }, sk.pad(x, { -1, -2 }):shape())
    local b = sk.pad(sk.tensor({ true }), { 1, 1 })
    assert.same({ false, true, false }, b:totable())
    assert.same({ 3, 4, 2, 3 }, sk.constant_pad_nd(sk.zeros({ 1, 2, 2, 3 }), { 0, 0, 0, 0, 1, 1, 1, 1 }):shape())
  end)

  it("reflect and replicate take integer and bool tensors too; Meta gives the shape", function()
    assert.same({ { { 2, 1, 2, 3, 2 } } }, sk.pad(sk.tensor({ { { 1, 2, 3 } } }, { dtype = "int32" }), { 1, 1 }, "reflect"):totable())
    local m = sk.pad(h.meta({ 2, 3, 4, 5 }), { 1, 2, 3, 1 }, "replicate")
    assert.equal("meta", m:device())
    assert.same({ 2, 3, 8, 8 }, m:shape())
  end)

  it("gives PyTorch's errors", function()
    local x = sk.zeros({ 1, 2, 3 })
    local cases = {
      { function() sk.pad(x, { 3, 0 }, "reflect") end, "Padding size should be less than the corresponding input dimension, but got: padding (3, 0) at dimension 2 of input [1, 2, 3]" },
      { function() sk.pad(x, { 4, 0 }, "circular") end, "Padding value causes wrapping around more than once." },
      { function() sk.pad(x, { 1 }) end, "Length of pad must be even but instead it equals 1" },
      { function() sk.pad(x, { 1, 1, 1, 1, 1, 1, 1, 1 }) end, "Pad length is 8 while the input has 3 dimensions" },
      { function() sk.pad(x, { -2, -2 }) end, "The input size 3, plus negative padding -2 and -2 resulted in a negative output size" },
      { function() sk.pad(x, { 1, 1 }, "mirror") end, "Unrecognised padding mode mirror" },
      { function() sk.pad(x, { 1, 1 }, "reflect", 2) end, "Padding mode \"reflect\" doesn't take in value argument" },
      { function() sk.pad(sk.zeros({ 3 }), { 1, 1 }, "replicate") end, "Only 2D, 3D, 4D, 5D padding with non-constant padding" },
      { function() sk.pad(sk.zeros({ 1, 0, 3 }), { 0, 0, 1, 1 }, "replicate") end, "other non-zero dimensions for input, but got: [1, 0, 3]" },
      { function() sk.reflection_pad2d(x, { 1, 1, 1, 1 }) end, nil }, -- a 3-dim input is (C, H, W): fine
    }
    for _, c in ipairs(cases) do
      if c[2] then
        local ok, err = pcall(c[1])
        assert.is_false(ok)
        assert.truthy(tostring(err):find(c[2], 1, true), tostring(err))
      else
        c[1]()
      end
    end
  end)
end)

describe("interpolate and the upsample ops", function()
  -- PyTorch's source coordinate of output o (align_corners false: half-pixel centres)
  local function source(o, n_in, n_out, align, scale)
    if align then return n_out > 1 and o * (n_in - 1) / (n_out - 1) or 0 end
    local s = scale and 1 / scale or n_in / n_out
    return s * (o + 0.5) - 0.5
  end

  it("nearest takes floor(o · in/out), nearest-exact floor((o + 0.5) · in/out)", function()
    local x = sk.arange(5, { dtype = "float64" }):reshape({ 1, 1, 5 })
    assert.same({ 0, 0, 1, 1, 2, 3, 3, 4 }, flat(sk.interpolate(x, { size = 8 })))
    assert.same({ 0, 0, 1, 2, 2, 3, 4, 4 }, flat(sk.interpolate(x, { size = 8, mode = "nearest-exact" })))
  end)

  it("linear follows the source-coordinate rule, with and without align_corners and with a scale", function()
    local xs = { 0.5, -1, 2, 4, 3.25 }
    local x = sk.tensor(xs, { dtype = "float64" }):reshape({ 1, 1, 5 })
    local function lin(c)
      if c < 0 then c = 0 end
      local i0 = math.floor(c)
      local i1 = math.min(i0 + 1, 4)
      i0 = math.min(i0, 4)
      local l = c - math.floor(c)
      return xs[i0 + 1] * (1 - l) + xs[i1 + 1] * l
    end
    for _, c in ipairs({ { 8, false }, { 8, true }, { 3, false }, { 3, true }, { 1, true } }) do
      local want = {}
      for o = 0, c[1] - 1 do want[o + 1] = lin(source(o, 5, c[1], c[2])) end
      h.assert_close(flat(sk.interpolate(x, { size = c[1], mode = "linear", align_corners = c[2] })), want, 1e-14)
    end
    -- a scale reaches the kernel (1/0.7 between samples), unless recomputed from the sizes
    local want, rec = {}, {}
    for o = 0, 2 do want[o + 1] = lin(source(o, 5, 3, false, 0.7)); rec[o + 1] = lin(source(o, 5, 3, false)) end
    h.assert_close(flat(sk.interpolate(x, { scale_factor = 0.7, mode = "linear" })), want, 1e-14)
    h.assert_close(flat(sk.interpolate(x, { scale_factor = 0.7, mode = "linear", recompute_scale_factor = true })), rec, 1e-14)
  end)

  it("bilinear and trilinear are the 1-d rule along each dim (exact on a linear ramp with align_corners)", function()
    local x = filled({ 1, 1, 3, 4 }, function(k) return 2 * (k // 4) - 0.5 * (k % 4) end)
    local y = sk.interpolate(x, { size = { 5, 7 }, mode = "bilinear", align_corners = true })
    h.assert_close(y:totable()[1][1], h.grid(5, 7, function(i, j) return 2 * (i * 2 / 4) - 0.5 * (j * 3 / 6) end), 1e-14)
    local v = filled({ 1, 1, 2, 3, 2 }, function(k) return (k // 6) + 10 * ((k // 2) % 3) + 100 * (k % 2) end)
    local t = sk.upsample_trilinear3d(v, { 3, 5, 4 }, true)
    local got = t:totable()[1][1]
    for d = 0, 2 do for i = 0, 4 do for j = 0, 3 do
      h.assert_close(got[d + 1][i + 1][j + 1], d / 2 + 10 * (i / 2) + 100 * (j / 3), 1e-13)
    end end end
  end)

  it("bicubic is Keys' cubic convolution (A = -0.75) with clamped taps, separable", function()
    local A = -0.75
    local function w(t)
      local c1 = function(x) return ((A + 2) * x - (A + 3)) * x * x + 1 end
      local c2 = function(x) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A end
      return { c2(t + 1), c1(t), c1(1 - t), c2(2 - t) }
    end
    local x = wave({ 1, 1, 3, 4 })
    local xv = x:totable()[1][1]
    for _, align in ipairs({ false, true }) do
      local y = sk.upsample_bicubic2d(x, { 5, 6 }, align):totable()[1][1]
      for oy = 0, 4 do for ox = 0, 5 do
        local sy, sx = source(oy, 3, 5, align), source(ox, 4, 6, align)
        local fy, fx = math.floor(sy), math.floor(sx)
        local wy, wx, acc = w(sy - fy), w(sx - fx), 0
        for a = 0, 3 do for b = 0, 3 do
          local iy, ix = math.min(2, math.max(0, fy - 1 + a)), math.min(3, math.max(0, fx - 1 + b))
          acc = acc + wy[a + 1] * wx[b + 1] * xv[iy + 1][ix + 1]
        end end
        h.assert_close(y[oy + 1][ox + 1], acc, 1e-13)
      end end
    end
  end)

  it("area is adaptive average pooling; float32 and Meta agree on shapes", function()
    local x = filled({ 1, 1, 2, 4 }, function(k) return k end)
    assert.same({ { { { 2.5, 4.5 } } } }, sk.interpolate(x, { size = { 1, 2 }, mode = "area" }):totable())
    local y = sk.interpolate(wave({ 2, 3, 4, 5 }, "float32"), { scale_factor = { 2, 0.5 }, mode = "bilinear" })
    assert.same({ 2, 3, 8, 2 }, y:shape())
    assert.equal("float32", y:dtype())
    local m = sk.interpolate(h.meta({ 2, 3, 4, 5 }), { scale_factor = 1.5, mode = "bicubic" })
    assert.same({ 2, 3, 6, 7 }, m:shape())
    assert.same({ { { 1, 1, 2, 2 } } }, sk.interpolate(sk.tensor({ { { 1, 2 } } }, { dtype = "uint8" }), { size = 4 }):totable())
  end)

  it("gives PyTorch's errors", function()
    local x = sk.zeros({ 1, 1, 3, 4 })
    local cases = {
      { { x, { size = { 2 }, scale_factor = 2 } }, "only one of size or scale_factor should be defined" },
      { { x }, "either size or scale_factor should be defined" },
      { { x, { size = { 2, 3, 4 } } }, "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of [3, 4]" },
      { { x, { size = 2, mode = "linear" } }, "Got 4D input, but linear mode needs 3D input" },
      { { x, { size = 2, align_corners = true } }, "align_corners option can only be set with the interpolating modes" },
      { { x, { size = 2, mode = "cubic" } }, "Only 3D, 4D and 5D input Tensors supported (got 4D)" },
      { { x, { size = { 0, 3 }, mode = "bilinear" } }, "Input and output sizes should be greater than 0, but got input (H: 3, W: 4) output (H: 0, W: 3)" },
      { { x:long(), { size = 2, mode = "bilinear" } }, "\"upsample_bilinear2d\" not implemented for 'int64'" },
    }
    -- lists of the wrong length and scales that are not finite (fuzz findings)
    for _, c in ipairs({ { function() sk.upsample_nearest2d(x, { 2, 3, 4 }) end, "argument 'output_size' must have 2 elements, got 3" },
                         { function() sk.upsample_linear1d(sk.zeros({ 1, 1, 3 }), { 4 }, true, 0 / 0) end, "is not finite or too large" },
                         { function() sk.im2col(x, { 2 }, 1, 0, 1) end, "argument 'kernel_size' must have 2 elements, got 1" },
                         { function() sk.col2im(sk.zeros({ 1, 4, 4 }), { 3 }, 2, 1, 0, 1) end, "argument 'output_size' must have 2 elements" } }) do
      local ok, err = pcall(c[1])
      assert.is_false(ok)
      assert.truthy(tostring(err):find(c[2], 1, true), tostring(err))
    end
    for _, c in ipairs(cases) do
      local ok, err = pcall(sk.interpolate, table.unpack(c[1]))
      assert.is_false(ok)
      assert.truthy(tostring(err):find(c[2], 1, true), tostring(err))
    end
  end)
end)

describe("im2col and col2im", function()
  it("im2col's column l, row (c, ki, kj) is the padded input at the block's position", function()
    local x = wave({ 2, 2, 4, 5 })
    local k, d, p, s = { 2, 3 }, { 1, 2 }, { 1, 0 }, { 2, 1 }
    local cols = sk.im2col(x, k, d, p, s)
    local oh, ow = (4 + 2 - 2) // 2 + 1, (5 - 5) // 1 + 1
    assert.same({ 2, 12, oh * ow }, cols:shape())
    local xv, cv = x:totable(), cols:totable()
    for n = 1, 2 do for c = 0, 1 do for ki = 0, 1 do for kj = 0, 2 do
      for i = 0, oh - 1 do for j = 0, ow - 1 do
        local y, z = i * 2 - 1 + ki, j + kj * 2
        local want = (y >= 0 and y < 4) and xv[n][c + 1][y + 1][z + 1] or 0
        assert.equal(want, cv[n][c * 6 + ki * 3 + kj + 1][i * ow + j + 1])
      end end
    end end end end
  end)

  it("conv2d equals im2col then matmul with the flattened weight", function()
    local x, w = wave({ 2, 3, 5, 6 }), filled({ 4, 3, 3, 2 }, function(k) return math.cos(0.21 * k) end)
    local y = sk.conv2d(x, w, nil, { 2, 1 }, { 1, 0 }, { 1, 2 })
    local cols = sk.im2col(x, { 3, 2 }, { 1, 2 }, { 1, 0 }, { 2, 1 })
    local z = sk.matmul(w:reshape({ 4, -1 }), cols):reshape(y:shape())
    h.assert_close(flat(z), flat(y), 1e-12)
  end)

  it("col2im is im2col's adjoint, and fold(unfold(x)) is x times each pixel's block count", function()
    local x, c = wave({ 2, 3, 5, 4 }), filled({ 2, 3 * 4, 18 }, function(k) return math.cos(0.13 * k) end)
    local args = { { 2, 2 }, { 1, 1 }, { 1, 0 }, { 1, 1 } }
    local lhs = (sk.im2col(x, table.unpack(args)) * c):sum():item()
    local rhs = (x * sk.col2im(c, { 5, 4 }, table.unpack(args))):sum():item()
    h.assert_close(lhs, rhs, 1e-12)
    local count = sk.col2im(sk.im2col(sk.ones_like(x), table.unpack(args)), { 5, 4 }, table.unpack(args))
    h.assert_close(flat(sk.col2im(sk.im2col(x, table.unpack(args)), { 5, 4 }, table.unpack(args))), flat(x * count), 1e-14)
    -- every row is in 2 blocks (the padding adds one above and below); the edge columns in 1
    assert.same({ 2, 4, 4, 2 }, flat(count:select(0, 0):select(0, 0):select(0, 4)))
  end)

  it("takes unbatched inputs and every dtype; Meta and errors", function()
    local x = sk.arange(9, { dtype = "int64" }):reshape({ 1, 3, 3 })
    assert.same({ { 0, 1, 3, 4 }, { 1, 2, 4, 5 }, { 3, 4, 6, 7 }, { 4, 5, 7, 8 } }, sk.im2col(x, 2, 1, 0, 1):totable())
    assert.same({ 2, 18, 30 }, sk.im2col(h.meta({ 2, 2, 5, 6 }), 3, 1, 1, 1):shape())
    local ok, err = pcall(sk.im2col, sk.zeros({ 1, 2, 4, 4 }), 5, 1, 0, 1)
    assert.is_false(ok)
    assert.truthy(err:find("calculated shape of the array of sliding blocks as (0, 0), but its components must be at least one", 1, true), err)
    ok, err = pcall(sk.col2im, sk.zeros({ 1, 5, 9 }), { 4, 4 }, 2, 1, 0, 1)
    assert.truthy(err:find("input.size(1)=5 and kernel_size=(2, 2)", 1, true), err)
    ok, err = pcall(sk.im2col, sk.zeros({ 1, 2, 4, 4 }), 2, 0, 0, 1)
    assert.truthy(err:find("dilation should be greater than zero, but got dilation_height: 0 dilation_width: 0", 1, true), err)
  end)
end)

describe("as_strided and Tensor.unfold", function()
  it("as_strided reads storage[offset + Σ i·stride] and is a view", function()
    local a = sk.arange(10, { dtype = "float64" })
    local v = sk.as_strided(a, { 3, 3 }, { 1, 2 }, 1)
    assert.same(h.grid(3, 3, function(i, j) return 1 + i + 2 * j end), v:totable())
    a:add_(100)
    assert.equal(101, v:totable()[1][1])
    assert.same({ { 0, 1 }, { 3, 4 } }, sk.arange(6):reshape({ 2, 3 }):as_strided({ 2, 2 }, { 3, 1 }):totable())
    -- a view's offset is its own unless given
    assert.same({ 3, 4 }, sk.arange(6):narrow(0, 3, 3):as_strided({ 2 }, { 1 }):totable())
  end)

  it("its gradient sums over the storage positions each element covers", function()
    local a = sk.arange(6, { dtype = "float64" }):requires_grad_(true)
    sk.as_strided(a, { 2, 3 }, { 2, 1 }):sum():backward() -- rows [0..2] and [2..4]: position 2 twice
    assert.same({ 1, 1, 2, 1, 1, 0 }, a.grad:totable())
  end)

  it("as_strided_scatter writes src at storage[offset + Σ i·stride] of a copy of self", function()
    -- the reference: self's elements in storage order, src's element (i, j) at offset + i·s0 + j·s1
    local function want(self_storage, src, size, stride, offset)
      local st = { table.unpack(self_storage) }
      local v = src:totable()
      for i = 0, size[1] - 1 do
        for j = 0, size[2] - 1 do st[offset + i * stride[1] + j * stride[2] + 1] = v[i + 1][j + 1] end
      end
      return st
    end
    local base = sk.arange(12, { dtype = "float64" })
    local self = base:reshape({ 3, 4 })
    local src = sk.tensor({ { -1, -2 }, { -3, -4 } }, { dtype = "float64" })
    local r = sk.as_strided_scatter(self, src, { 2, 2 }, { 1, 4 }, 2)
    assert.same(want(base:totable(), src, { 2, 2 }, { 1, 4 }, 2), r:reshape({ -1 }):totable())
    assert.equal(0, self[{ 0, 0 }]:item() + self[{ 0, 2 }]:item() - 2) -- self untouched
    -- a transposed self: positions count in its storage order, as PyTorch's (the copy keeps its strides)
    local t = sk.arange(6, { dtype = "float64" }):reshape({ 2, 3 }):t() -- [3, 2], strides {1, 3}
    local rt = t:as_strided_scatter(sk.tensor({ { 7, 8 } }, { dtype = "float64" }), { 1, 2 }, { 1, 1 })
    assert.same({ 1, 3 }, rt:stride())
    assert.same({ { 7, 3 }, { 8, 4 }, { 2, 5 } }, rt:totable()) -- storage [7, 8, 2, 3, 4, 5]
    -- the gradient: grad outside the written positions to self, the written ones to src
    local a = sk.zeros({ 3, 3 }, { dtype = "float64" }):requires_grad_(true)
    local b = sk.ones({ 2 }, { dtype = "float64" }):requires_grad_(true)
    local w = sk.arange(9, { dtype = "float64" }):reshape({ 3, 3 });
    (sk.as_strided_scatter(a, b, { 2 }, { 4 }) * w):sum():backward()
    assert.same({ { 0, 1, 2 }, { 3, 0, 5 }, { 6, 7, 8 } }, a.grad:totable())
    assert.same({ 0, 4 }, b.grad:totable())
    assert.matches("expected src to have a size equal to the slice of self. src size = %[3%], slice size = %[2%]",
                   h.err(sk.as_strided_scatter, a, sk.ones({ 3 }), { 2 }, { 4 }))
    assert.matches("outside its storage", h.err(sk.as_strided_scatter, a, b, { 2 }, { 40 }))
  end)

  it("Tensor.unfold gives the windows, for a 0-dim tensor too", function()
    local a = sk.arange(7, { dtype = "float64" })
    assert.same({ { 0, 1, 2 }, { 2, 3, 4 }, { 4, 5, 6 } }, a:unfold(0, 3, 2):totable())
    local m = sk.arange(12):reshape({ 3, 4 }):unfold(0, 2, 1)
    assert.same({ 2, 4, 2 }, m:shape())
    assert.same({ 1, 5 }, m:totable()[1][2])
    assert.same({ 5 }, sk.tensor(5):unfold(0, 1, 1):totable())
    assert.same({ 4, 0 }, a:unfold(0, 0, 2):shape())
  end)

  it("gives PyTorch's errors", function()
    local cases = {
      { function() sk.arange(12):as_strided({ 4, 4 }, { 4, 1 }) end, "outside its storage" },
      { function() sk.arange(12):as_strided({ 4 }, { -1 }, 5) end, "Negative strides are not supported at the moment, got strides: [-1]" },
      { function() sk.arange(12):as_strided({ 4, 3 }, { 1 }) end, "mismatch in length of strides and shape" },
      { function() sk.arange(5):unfold(0, 6, 1) end, "maximum size for tensor at dimension 0 is 5 but size is 6" },
      { function() sk.arange(5):unfold(0, 2, 0) end, "step is 0 but must be > 0" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(c[1])
      assert.is_false(ok)
      assert.truthy(tostring(err):find(c[2], 1, true), tostring(err))
    end
  end)
end)

describe("functional composites", function()
  it("linear is x·Wᵀ + b for any leading dims; bilinear is Σ x1_i W_kij x2_j + b_k", function()
    local x, w, b = wave({ 2, 3, 4 }), filled({ 5, 4 }, function(k) return k % 3 - 1 end), sk.tensor({ 1, 2, 3, 4, 5 }, { dtype = "float64" })
    local y = sk.linear(x, w, b)
    local xv, wv, yv = x:totable(), w:totable(), y:totable()
    for i = 1, 2 do for j = 1, 3 do for k = 1, 5 do
      local acc = k
      for c = 1, 4 do acc = acc + xv[i][j][c] * wv[k][c] end
      h.assert_close(yv[i][j][k], acc, 1e-14)
    end end end
    h.assert_close(sk.linear(x:select(0, 0), w):totable(), sk.matmul(x:select(0, 0), w:t()):totable(), 1e-15)
    local x1, x2 = wave({ 3, 2 }), filled({ 3, 4 }, function(k) return 0.5 * k - 1 end)
    local W = filled({ 2, 2, 4 }, function(k) return math.cos(k) end)
    local z = sk.bilinear(x1, x2, W, sk.tensor({ 0.5, -1 }, { dtype = "float64" })):totable()
    local a, c, Wv = x1:totable(), x2:totable(), W:totable()
    for n = 1, 3 do for k = 1, 2 do
      local acc = k == 1 and 0.5 or -1
      for i = 1, 2 do for j = 1, 4 do acc = acc + a[n][i] * Wv[k][i][j] * c[n][j] end end
      h.assert_close(z[n][k], acc, 1e-14)
    end end
    local ok, err = pcall(sk.bilinear, x1, wave({ 2, 4 }), W)
    assert.truthy(err:find("bilinear(): input batch dimensions do not match at dim 0: got 3 and 2", 1, true), err)
  end)

  it("one_hot puts a 1 at each value, inferring the class count from the largest", function()
    assert.same({ { 0, 1, 0 }, { 0, 0, 1 }, { 1, 0, 0 } }, sk.one_hot(sk.tensor({ 1, 2, 0 })):totable())
    local o = sk.one_hot(sk.tensor({ { 3 }, { 0 } }), 5)
    assert.same({ 2, 1, 5 }, o:shape())
    assert.equal("int64", o:dtype())
    assert.same({ 0, 5 }, sk.one_hot(sk.zeros({ 0 }, { dtype = "int64" }), 5):shape())
    for _, c in ipairs({ { sk.tensor({ 0, -1 }), -1, "Class values must be non-negative." },
                         { sk.tensor({ 0, 3 }), 3, "Class values must be smaller than num_classes." },
                         { sk.zeros({ 0 }, { dtype = "int64" }), -1, "Can not infer total number of classes from empty tensor." },
                         { sk.tensor({ 1.0 }), 2, "one_hot is only applicable to index tensor." } }) do
      local ok, err = pcall(sk.one_hot, c[1], c[2])
      assert.is_false(ok)
      assert.truthy(err:find(c[3], 1, true), err)
    end
  end)

  it("pixel_shuffle moves channel c·r² + i·r + j to pixel (h·r + i, w·r + j); pixel_unshuffle undoes it", function()
    local x = filled({ 2, 8, 2, 3 }, function(k) return k end)
    local y = sk.pixel_shuffle(x, 2)
    assert.same({ 2, 2, 4, 6 }, y:shape())
    local xv, yv = x:totable(), y:totable()
    for n = 1, 2 do for c = 0, 1 do for hh = 0, 1 do for w = 0, 2 do for i = 0, 1 do for j = 0, 1 do
      assert.equal(xv[n][c * 4 + i * 2 + j + 1][hh + 1][w + 1], yv[n][c + 1][hh * 2 + i + 1][w * 2 + j + 1])
    end end end end end end
    assert.same(x:totable(), sk.pixel_unshuffle(y, 2):totable())
    assert.same({ 3, 1, 2, 2 }, sk.pixel_shuffle(h.meta({ 3, 4, 1, 1 }), 2):shape())
    local ok, err = pcall(sk.pixel_shuffle, sk.zeros({ 5, 2, 2 }), 2)
    assert.truthy(err:find("input.size(-3)=5 is not divisible by 4", 1, true), err)
  end)

  it("scaled_dot_product_attention is softmax(q·kᵀ/√E + mask)·v; causal rows see only the past", function()
    local q, k, v = wave({ 1, 2, 3 }), filled({ 1, 4, 3 }, function(i) return math.cos(0.3 * i) end), filled({ 1, 4, 2 }, function(i) return i end)
    local qv, kv, vv = q:totable()[1], k:totable()[1], v:totable()[1]
    local mask = sk.tensor({ { true, false, true, true }, { true, true, true, false } })
    local y = sk.scaled_dot_product_attention(q, k, v, mask):totable()[1]
    for i = 1, 2 do
      local s, z = {}, 0
      for j = 1, 4 do
        local d = 0
        for e = 1, 3 do d = d + qv[i][e] * kv[j][e] end
        s[j] = mask:totable()[i][j] and math.exp(d / math.sqrt(3)) or 0
        z = z + s[j]
      end
      for c = 1, 2 do
        local acc = 0
        for j = 1, 4 do acc = acc + s[j] / z * vv[j][c] end
        h.assert_close(y[i][c], acc, 1e-14)
      end
    end
    local c = sk.scaled_dot_product_attention(k, k, v, { is_causal = true }):totable()[1]
    assert.same(vv[1], c[1]) -- the first query sees only the first key
    local ok, err = pcall(sk.scaled_dot_product_attention, q, k, v, mask, 0, true)
    assert.truthy(err:find("Explicit attn_mask should not be set when is_causal=True", 1, true), err)
  end)

  it("embedding_bag sums, averages or maxes each bag's rows (padding rows left out, empty bags 0)", function()
    local w = filled({ 5, 2 }, function(k) return (k * 7) % 11 - 5 end) -- rows {-5,2} {-2,5} {1,-3} {4,0} {-4,3}
    local wv = w:totable()
    local idx, off = sk.tensor({ 0, 3, 2, 3, 1, 4 }), sk.tensor({ 0, 2, 2 })
    local bags = { { 0, 3 }, {}, { 2, 3, 1, 4 } }
    local function reduce(rows, how)
      if #rows == 0 then return { 0, 0 } end
      local r = {}
      for c = 1, 2 do
        local acc = how == "max" and -math.huge or 0
        for _, i in ipairs(rows) do acc = how == "max" and math.max(acc, wv[i + 1][c]) or acc + wv[i + 1][c] end
        r[c] = how == "mean" and acc / #rows or acc
      end
      return r
    end
    for mode, how in ipairs({ "sum", "mean", "max" }) do
      local out, o2b, size = sk.embedding_bag(w, idx, off, false, mode - 1)
      local want, wantp = {}, {}
      for b, rows in ipairs(bags) do
        want[b] = reduce(rows, how)
        local kept = {}
        for _, i in ipairs(rows) do if i ~= 3 then kept[#kept + 1] = i end end
        wantp[b] = reduce(kept, how)
      end
      assert.same(want, out:totable())
      assert.same({ 0, 0, 2, 2, 2, 2 }, o2b:totable())
      assert.same({ 2, 0, 4 }, size:totable())
      h.assert_close((sk.embedding_bag(w, idx, off, false, mode - 1, false, nil, false, 3)):totable(), wantp, 1e-15)
    end
    local _, _, _, mi = sk.embedding_bag(w, idx, off, false, 2)
    assert.same({ { 3, 0 }, { 0, 0 }, { 3, 1 } }, mi:totable()) -- the rows the maxima came from
    -- ties: the bag's first row holding the max (PyTorch's); a NaN is the max of its column, at its
    -- first row; the gradient reaches the chosen row only
    local wt = sk.tensor({ { 1, 5, 3 }, { 4, 5, 0 / 0 }, { 4, 2, 3 }, { 7, 7, 7 } }, { dtype = "float64", requires_grad = true })
    local o, _, _, mt = sk.embedding_bag(wt, sk.tensor({ 2, 1, 0, 2, 3, 0 }), sk.tensor({ 0, 3, 3 }), false, 2, false, nil, false, 3)
    assert.same({ { 2, 1, 1 }, { 0, 0, 0 }, { 2, 0, 2 } }, mt:totable())
    local ov = o:detach():totable()
    assert.same({ 4, 5 }, { ov[1][1], ov[1][2] })
    assert.is_true(ov[1][3] ~= ov[1][3])
    assert.same({ 0, 0, 0 }, ov[2])
    assert.same({ 4, 5, 3 }, ov[3])
    o:sum():backward()
    assert.same({ { 0, 1, 0 }, { 0, 1, 1 }, { 2, 0, 1 }, { 0, 0, 0 } }, wt.grad:totable())
    local p = sk.tensor({ 2, 1, 0.5, 1, 1, -1 }, { dtype = "float64" })
    assert.same({ { -6, 4 }, { 0, 0 }, { 6.5, 0.5 } }, (sk.embedding_bag(w, idx, off, false, 0, false, p)):totable())
    -- include_last_offset: the last offset ends the last bag; an nn.EmbeddingBag over a 2-d input is bags of its rows
    assert.same({ { -1, 2 }, { 5, -3 } }, (sk.embedding_bag(w, idx, sk.tensor({ 0, 2, 4 }), false, 0, false, nil, true)):totable())
    local m = sk.nn.EmbeddingBag(5, 2, { mode = "sum" })
    m.weight = w
    assert.same({ { -1, 2 }, { 5, -3 }, { -6, 8 } }, m(idx:reshape({ 3, 2 })):totable())
    for _, c in ipairs({ { sk.tensor({ 0, 3, 2 }), "offsets must be non-decreasing, but offsets[2] = 2 is less than offsets[1] = 3" },
                         { sk.tensor({ 0, 9 }), "offsets[-1] can not be greater than input's length 6 but got offsets[-1] of 9" } }) do
      local ok, err = pcall(sk.embedding_bag, w, idx, c[1])
      assert.is_false(ok)
      assert.truthy(err:find(c[2], 1, true), err)
    end
    local ok, err = pcall(sk.embedding_bag, w, sk.tensor({ 0, 5 }), sk.tensor({ 0 }))
    assert.truthy(err:find("index 5 is out of range for weight of 5 rows", 1, true), err)
  end)
end)
