-- spec/grid_sample_spec.lua — grid_sample / grid_sampler against their definition evaluated
-- in plain Lua (unnormalize, pad, interpolate, point by point), against affine_grid (the
-- identity grid gives the input back, a whole-pixel shift shifts it), hand-worked values,
-- gradients, Meta and PyTorch's error texts.
local h = require "spec.helper"
local sk = h.sk

local filled, flat = h.filled, h.flat
local function close_lists(got, want, tol)
  assert.equal(#want, #got)
  for i = 1, #want do
    if math.abs(got[i] - want[i]) > (tol or 1e-12) then error(string.format("element %d: %.17g, want %.17g", i, got[i], want[i]), 2) end
  end
end

-- {==== The definition, point by point (2-d) ====
local function unnormalize(c, n, align) return align and (c + 1) / 2 * (n - 1) or ((c + 1) * n - 1) / 2 end
local function reflect(x, lo2, hi2)
  if lo2 == hi2 then return 0 end
  local min, span = lo2 / 2, (hi2 - lo2) / 2
  x = math.abs(x - min)
  local extra, flips = math.fmod(x, span), math.floor(x / span)
  return flips % 2 == 0 and extra + min or span - extra + min
end
local function pad_coord(x, n, pad, align)
  if pad == "reflection" then x = align and reflect(x, 0, 2 * (n - 1)) or reflect(x, -1, 2 * n - 1) end
  if pad ~= "zeros" then x = math.min(n - 1, math.max(0, x)) end
  return x
end
local function round_even(x)
  local f = math.floor(x)
  local d = x - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then return f + 1 end
  return f
end
-- img[y][x] (1-based Lua tables) of H×W; (gx, gy) a grid point
local function sample(img, H, W, gx, gy, mode, pad, align)
  local function at(yi, xi) -- outside: 0
    if xi < 0 or xi >= W or yi < 0 or yi >= H then return 0 end
    return img[yi + 1][xi + 1]
  end
  local x, y = unnormalize(gx, W, align), unnormalize(gy, H, align)
  if mode == "bicubic" then
    local A = -0.75
    local function c1(d) return ((A + 2) * d - (A + 3)) * d * d + 1 end
    local function c2(d) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A end
    local function w(t) return { c2(t + 1), c1(t), c1(1 - t), c2(2 - t) } end
    local x0, y0 = math.floor(x), math.floor(y)
    local wx, wy = w(x - x0), w(y - y0)
    local s = 0
    for j = 0, 3 do
      for i = 0, 3 do
        local xi, yi = x0 - 1 + i, y0 - 1 + j
        if pad ~= "zeros" then xi, yi = pad_coord(xi, W, pad, align), pad_coord(yi, H, pad, align) end
        s = s + wx[i + 1] * wy[j + 1] * at(math.floor(yi), math.floor(xi))
      end
    end
    return s
  end
  x, y = pad_coord(x, W, pad, align), pad_coord(y, H, pad, align)
  if mode == "nearest" then return at(round_even(y), round_even(x)) end
  local x0, y0 = math.floor(x), math.floor(y)
  local fx, fy = x - x0, y - y0
  return at(y0, x0) * (1 - fx) * (1 - fy) + at(y0, x0 + 1) * fx * (1 - fy) + at(y0 + 1, x0) * (1 - fx) * fy + at(y0 + 1, x0 + 1) * fx * fy
end
-- }====

describe("grid_sample", function()
  local N, C, H, W, HO, WO = 2, 2, 3, 4, 3, 5
  local x = filled({ N, C, H, W }, function(k) return math.sin(0.37 * k + 0.1) end)
  local g = filled({ N, HO, WO, 2 }, function(k) return 1.4 * math.sin(0.71 * k + 0.3) end) -- some points outside [-1, 1]
  local xv, gv = x:totable(), g:totable()
  for _, mode in ipairs { "bilinear", "nearest", "bicubic" } do
    for _, pad in ipairs { "zeros", "border", "reflection" } do
      for _, align in ipairs { false, true } do
        it(string.format("%s, %s padding, align_corners=%s: the definition at every point", mode, pad, tostring(align)), function()
          local y = sk.grid_sample(x, g, mode, pad, align)
          assert.same({ N, C, HO, WO }, y:shape())
          local want = {}
          for n = 1, N do
            for c = 1, C do
              for i = 1, HO do
                for j = 1, WO do
                  local p = gv[n][i][j]
                  want[#want + 1] = sample(xv[n][c], H, W, p[1], p[2], mode, pad, align)
                end
              end
            end
          end
          close_lists(flat(y), want)
        end)
      end
    end
  end

  it("gives hand-worked values", function()
    local img = sk.tensor({ { { { 1, 2 }, { 3, 4 } } } }, { dtype = "float64" })
    local function at(gx, gy, ...) return sk.grid_sample(img, sk.tensor({ { { { gx, gy } } } }, { dtype = "float64" }), ...):item() end
    assert.equal(2.5, at(0, 0, "bilinear", "zeros", true)) -- the centre: the mean
    assert.equal(1, at(-1, -1, "bilinear", "zeros", true)) -- a corner pixel's centre
    assert.equal(0.25, at(-1, -1, "bilinear", "zeros", false)) -- the image's corner: a quarter of pixel 1
    assert.equal(1, at(-1, -1, "bilinear", "border", false))
    assert.equal(1, at(-1, -1, "bilinear", "reflection", false))
    assert.equal(1.5, at(0, -1, "bilinear", "zeros", true)) -- halfway along the top row
    assert.equal(4, at(0.6, 0.6, "nearest", "zeros", true))
    assert.equal(0, at(5, 0, "bilinear", "zeros", true)) -- far outside
    assert.equal(2, at(5, -1, "bilinear", "border", true))
    assert.equal(0, at(0 / 0, 0, "bilinear", "zeros", true)) -- NaN: outside, as PyTorch
    assert.equal("float64", sk.grid_sample(img, sk.zeros({ 1, 1, 1, 2 }, { dtype = "float64" })):dtype())
  end)

  it("takes the identity grid of affine_grid to the input, and a whole-pixel shift to a shifted input", function()
    for _, align in ipairs { false, true } do
      local id = sk.tensor({ { { 1, 0, 0 }, { 0, 1, 0 } }, { { 1, 0, 0 }, { 0, 1, 0 } } }, { dtype = "float64" })
      local grid = sk.affine_grid(id, { N, C, H, W }, align)
      assert.same({ N, H, W, 2 }, grid:shape())
      for _, mode in ipairs { "bilinear", "nearest", "bicubic" } do
        close_lists(flat(sk.grid_sample(x, grid, mode, "zeros", align)), flat(x))
      end
      -- the same in 3-d: trilinear and nearest
      local x3 = filled({ 1, 2, 2, 3, 4 }, function(k) return math.cos(0.3 * k) end)
      local id3 = sk.tensor({ { { 1, 0, 0, 0 }, { 0, 1, 0, 0 }, { 0, 0, 1, 0 } } }, { dtype = "float64" })
      local g3 = sk.affine_grid(id3, { 1, 2, 2, 3, 4 }, align)
      assert.same({ 1, 2, 3, 4, 3 }, g3:shape())
      close_lists(flat(sk.grid_sample(x3, g3, "bilinear", "zeros", align)), flat(x3))
      close_lists(flat(sk.grid_sample(x3, g3, "nearest", "zeros", align)), flat(x3))
    end
    -- x + one pixel (align_corners: a pixel is 2/(W-1)): column j reads column j+1, the last border-padded
    local shift = sk.tensor({ { { 1, 0, 2 / (W - 1) }, { 0, 1, 0 } }, { { 1, 0, 2 / (W - 1) }, { 0, 1, 0 } } }, { dtype = "float64" })
    local y = sk.grid_sample(x, sk.affine_grid(shift, { N, C, H, W }, true), "bilinear", "border", true)
    local want = sk.cat({ x:narrow(3, 1, W - 1), x:narrow(3, W - 1, 1) }, 3)
    close_lists(flat(y), flat(want))
  end)

  it("affine_grid is the base grid times thetaᵀ", function()
    -- theta maps (x, y, 1) to (a·x + b·y + c, d·x + e·y + f); base x = linspace(-1, 1, W)·(W-1)/W
    local th = sk.tensor({ { { 0.5, -1, 0.25 }, { 2, 0.5, -1 } } }, { dtype = "float64" })
    local grid = sk.affine_grid(th, { 1, 1, 2, 3 }, false):totable()
    for i = 0, 1 do
      for j = 0, 2 do
        local bx, by = (-1 + j) * 2 / 3, (-1 + 2 * i) * 1 / 2
        local p = grid[1][i + 1][j + 1]
        assert.is_true(math.abs(p[1] - (0.5 * bx - by + 0.25)) < 1e-15)
        assert.is_true(math.abs(p[2] - (2 * bx + 0.5 * by - 1)) < 1e-15)
      end
    end
    -- a dim of size 1 has the single coordinate 0: the grid is theta's translation column
    assert.same({ 0.25, -1 }, sk.affine_grid(th, { 1, 1, 1, 1 }, false):reshape({ -1 }):totable())
  end)

  it("differentiates to input and grid", function()
    local xg = x:clone():requires_grad_(true)
    local gg = g:clone():requires_grad_(true)
    local y = sk.grid_sample(xg, gg, "bilinear", "zeros", false)
    y:sum():backward()
    -- the input's gradient sums the bilinear weights landing on each pixel: at most the number of points
    assert.is_true(xg.grad:sum():item() <= N * C * HO * WO + 1e-9)
    -- d/dgx of a point: the definition's finite difference
    local p, eps = gv[1][2][3], 1e-6
    local want = 0
    for c = 1, C do
      want = want + (sample(xv[1][c], H, W, p[1] + eps, p[2], "bilinear", "zeros", false)
                    - sample(xv[1][c], H, W, p[1] - eps, p[2], "bilinear", "zeros", false)) / (2 * eps)
    end
    assert.is_true(math.abs(gg.grad[{ 0, 1, 2, 0 }]:item() - want) < 1e-6)
  end)

  it("gives shapes on Meta and PyTorch's errors", function()
    assert.same({ 2, 3, 5, 6 }, sk.grid_sample(h.meta({ 2, 3, 4, 4 }), h.meta({ 2, 5, 6, 2 })):shape())
    assert.same({ 2, 3, 5, 6, 7 }, sk.grid_sampler(h.meta({ 2, 3, 4, 4, 4 }), h.meta({ 2, 5, 6, 7, 3 }), 0, 0, false):shape())
    local x4, g4 = sk.zeros({ 1, 1, 2, 2 }), sk.zeros({ 1, 2, 2, 2 })
    local E = {
      { { x4, g4, "linear" }, "nn.functional.grid_sample%(%): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'linear'" },
      { { x4, g4, "bilinear", "wrap" }, "expected padding_mode to be 'zeros', 'border', or 'reflection', but got: 'wrap'" },
      { { x4, sk.zeros({ 1, 2, 2, 3 }) }, "grid_sampler%(%): expected grid to have size 2 in last dimension, but got grid with sizes %[1, 2, 2, 3%]" },
      { { x4, sk.zeros({ 2, 2, 2, 2 }) }, "expected grid and input to have same batch size" },
      { { x4, sk.zeros({ 1, 2, 2 }) }, "expected 4D or 5D input and grid with same number of dimensions, but got input with sizes %[1, 1, 2, 2%] and grid with sizes %[1, 2, 2%]" },
      { { x4, g4:double() }, "expected input and grid to have same dtype, but input has float32 and grid has float64" },
      { { sk.zeros({ 1, 1, 0, 2 }), g4 }, "expected input to have non%-empty spatial dimensions, but input has sizes %[1, 1, 0, 2%] with dimension 2 being empty" },
      { { sk.zeros({ 1, 1, 2, 2, 2 }), sk.zeros({ 1, 2, 2, 2, 3 }), "bicubic" }, "bicubic interpolation only supports 4D input" },
      { { x4:long(), g4:long() }, "floating point" },
      { { x4, h.meta({ 1, 2, 2, 2 }) }, "expected input and grid to be on same device, but input is on cpu and grid is on meta" },
    }
    for _, e in ipairs(E) do assert.matches(e[2], h.err(sk.grid_sample, table.unpack(e[1]))) end
    assert.matches("argument 'interpolation_mode': expected 0, 1 or 2, got 7", h.err(sk.grid_sampler, x4, g4, 7, 0, false))
    assert.matches("Expected a batch of 2D affine matrices of shape Nx2x3 for size %[1, 1, 2, 2%]. Got %[1, 3, 3%].",
                   h.err(sk.affine_grid, sk.zeros({ 1, 3, 3 }), { 1, 1, 2, 2 }))
    assert.matches("expected size of 4 or 5 elements", h.err(sk.affine_grid, sk.zeros({ 1, 2, 3 }), { 1, 2, 2 }))
  end)
end)
