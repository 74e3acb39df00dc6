-- spec/opmath_spec.lua — the accumulation rule of float16/bfloat16 composites (sk_composite_util.h,
-- sk_tape_opmath): a composite that chains several rounding steps computes in float32 and rounds
-- once, so each element of its half-type result lies within one rounding of the exact answer,
-- the float64 result from the same rounded inputs. Before the rule each of these cases had an
-- element more than that away, most one or more ulps (addr and scaled_dot_product_attention
-- about ten, col2im 128 where its sum cancels); embedding_bag max, which only selects, pins
-- that selection stays exact.
local h = require "spec.helper"
local sk = h.sk

-- the spacing of dt's values at x (its subnormal spacing below the smallest normal)
local function ulp(x, dt)
  local mant, emin = 7, -126
  if dt == "float16" then mant, emin = 10, -14 end
  local e = x == 0 and emin or math.max(math.floor(math.log(math.abs(x), 2)), emin)
  return 2.0 ^ (e - mant)
end

-- one rounding: half an ulp, and 1/32 ulp for the float32 intermediates (whose error can move a
-- value that lies next to a midpoint between two half-type neighbours to the far one)
local function assert_rounded_once(got, exact, dt, what)
  local g, e = got:to("float64"):reshape({ -1 }):totable(), exact:reshape({ -1 }):totable()
  assert.equal(#e, #g)
  for i = 1, #e do
    local err = math.abs(g[i] - e[i]) / ulp(e[i], dt)
    assert.is_true(err <= 0.5 + 1 / 32,
      string.format("%s: element %d is %.3g ulp from the exact %.8g (got %.8g)", what, i, err, e[i], g[i]))
  end
end

local function randn(dt, ...) return sk.randn({ ... }):to(dt) end
local function rand(dt, ...) return (sk.rand({ ... }) * 0.8 + 0.1):to(dt) end -- in [0.1, 0.9]
local BAG_INDICES = sk.tensor({ 3, 0, 7, 11, 3, 5, 9, 1, 3, 2, 8, 6, 4, 10, 3, 0, 5, 7, 1, 9, 2, 3, 11, 6 })
local BAG_OFFSETS = sk.tensor({ 0, 6, 6, 15, 20 })
local REPEATED = sk.tensor({ 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3 })

-- name, inputs of dtype dt (seeded), the call; dtypes where not both half types
local CASES = {
  { "addr", function(dt) return { randn(dt, 5, 6), randn(dt, 5), randn(dt, 6) } end,
    function(m, a, b) return sk.addr(m, a, b, { beta = 0.7, alpha = 1.3 }) end },
  { "bilinear", function(dt) return { randn(dt, 4, 8), randn(dt, 4, 8), randn(dt, 3, 8, 8), randn(dt, 3) } end,
    function(a, b, w, bias) return sk.bilinear(a, b, w, bias) end },
  { "binary_cross_entropy_with_logits", function(dt) return { randn(dt, 40), rand(dt, 40), rand(dt, 40), rand(dt, 40) } end,
    function(x, t, w, pw) return sk.binary_cross_entropy_with_logits(x, t, w, pw, "none") end },
  { "scaled_dot_product_attention", function(dt) return { randn(dt, 2, 5, 8), randn(dt, 2, 6, 8), randn(dt, 2, 6, 8) } end,
    function(q, k, v) return sk.scaled_dot_product_attention(q, k, v) end },
  -- activations of several steps (hardtanh, relu6, threshold, hardshrink only select: exact)
  { "elu", function(dt) return { randn(dt, 256) } end, function(x) return sk.elu(x, 1.3) end },
  { "elu_ (in place)", function(dt) return { randn(dt, 256) } end, function(x) return sk.elu_(x:clone(), 1.3) end },
  { "selu", function(dt) return { randn(dt, 256) } end, function(x) return sk.selu(x) end },
  { "celu", function(dt) return { randn(dt, 256) } end, function(x) return sk.celu(x, 0.7) end },
  { "leaky_relu", function(dt) return { randn(dt, 256) } end, function(x) return sk.leaky_relu(x, 0.13) end },
  { "hardswish", function(dt) return { randn(dt, 256) } end, function(x) return sk.hardswish(x) end },
  { "hardsigmoid", function(dt) return { randn(dt, 256) } end, function(x) return sk.hardsigmoid(x) end },
  { "softplus", function(dt) return { randn(dt, 256) } end, function(x) return sk.softplus(x, 1.5, 20) end },
  { "softsign", function(dt) return { randn(dt, 256) } end, function(x) return sk.softsign(x) end },
  { "softshrink", function(dt) return { randn(dt, 256) } end, function(x) return sk.softshrink(x, 0.3) end },
  { "tanhshrink", function(dt) return { randn(dt, 256) } end, function(x) return sk.tanhshrink(x) end },
  { "log_sigmoid", function(dt) return { randn(dt, 256) } end, function(x) return sk.log_sigmoid(x) end },
  { "mish", function(dt) return { randn(dt, 256) } end, function(x) return sk.mish(x) end },
  { "glu", function(dt) return { randn(dt, 16, 32) } end, function(x) return sk.glu(x, 1) end },
  -- losses and distances
  { "smooth_l1_loss", function(dt) return { randn(dt, 256), randn(dt, 256) } end,
    function(x, t) return sk.smooth_l1_loss(x, t, "none", 0.7) end },
  { "huber_loss", function(dt) return { randn(dt, 256), randn(dt, 256) } end,
    function(x, t) return sk.huber_loss(x, t, "none", 0.7) end },
  { "kl_div", function(dt) return { randn(dt, 256), rand(dt, 256) } end, function(x, t) return sk.kl_div(x, t, "none") end },
  { "poisson_nll_loss", function(dt) return { randn(dt, 256), rand(dt, 256) } end,
    function(x, t) return sk.poisson_nll_loss(x, t, true, false, 1e-8, "none") end },
  { "gaussian_nll_loss", function(dt) return { randn(dt, 256), randn(dt, 256), rand(dt, 256) } end,
    function(x, t, v) return sk.gaussian_nll_loss(x, t, v, false, 1e-6, "none") end },
  { "margin_ranking_loss", function(dt) return { randn(dt, 256), randn(dt, 256), randn(dt, 256):sign() } end,
    function(a, b, t) return sk.margin_ranking_loss(a, b, t, 0.3, "none") end },
  { "soft_margin_loss", function(dt) return { randn(dt, 256), randn(dt, 256):sign() } end,
    function(x, t) return sk.soft_margin_loss(x, t, "none") end },
  { "multilabel_soft_margin_loss", function(dt) return { randn(dt, 16, 10), rand(dt, 16, 10):round(), rand(dt, 10) } end,
    function(x, t, w) return sk.multilabel_soft_margin_loss(x, t, w, "none") end },
  { "cosine_embedding_loss", function(dt) return { randn(dt, 16, 16), randn(dt, 16, 16), randn(dt, 16):sign() } end,
    function(a, b, t) return sk.cosine_embedding_loss(a, b, t, 0, "none") end },
  { "cosine_similarity", function(dt) return { randn(dt, 16, 16), randn(dt, 16, 16) } end,
    function(a, b) return sk.cosine_similarity(a, b) end },
  { "triplet_margin_loss", function(dt) return { randn(dt, 16, 16), randn(dt, 16, 16), randn(dt, 16, 16) } end,
    function(a, p, n) return sk.triplet_margin_loss(a, p, n, 1, 2, 1e-6, true, "none") end },
  { "mse_loss", function(dt) return { randn(dt, 256), randn(dt, 256) } end, function(x, t) return sk.mse_loss(x, t, "none") end },
  -- products, norms, special functions
  { "linear (3-d input, bias)", function(dt) return { randn(dt, 2, 4, 16), randn(dt, 3, 16), randn(dt, 3) } end,
    function(x, w, b) return sk.linear(x, w, b) end },
  { "linalg_cross", function(dt) return { randn(dt, 32, 3), randn(dt, 32, 3) } end, function(a, b) return sk.linalg_cross(a, b) end },
  { "linalg_vecdot", function(dt) return { randn(dt, 16, 32), randn(dt, 16, 32) } end,
    function(a, b) return sk.linalg_vecdot(a, b) end },
  { "normalize", function(dt) return { randn(dt, 16, 16) } end, function(x) return sk.normalize(x) end },
  { "special_ndtr", function(dt) return { randn(dt, 256) * 2 } end, function(x) return sk.special_ndtr(x) end },
  { "renorm", function(dt) return { randn(dt, 16, 16) } end, function(x) return sk.renorm(x, 2, 0, 1.0) end },
  { "local_response_norm", function(dt) return { randn(dt, 2, 6, 16) } end, function(x) return sk.local_response_norm(x, 3) end },
  { "cumulative_trapezoid (x)", function(dt) return { randn(dt, 128), sk.rand({ 128 }):cumsum(0):to(dt) } end,
    function(y, x) return sk.cumulative_trapezoid(y, x) end },
  { "cumulative_trapezoid (dx)", function(dt) return { randn(dt, 128) } end,
    function(y) return sk.cumulative_trapezoid(y, { dx = 0.3 }) end },
  { "linalg_multi_dot", function(dt) return { randn(dt, 6, 16), randn(dt, 16, 16), randn(dt, 16, 4) } end,
    function(a, b, c) return sk.linalg_multi_dot({ a, b, c }) end },
  { "lp_pool1d", function(dt) return { randn(dt, 4, 3, 32) } end, function(x) return sk.lp_pool1d(x, 2, 2) end },
  -- embedding_bag: bags of 0 to 9 rows of a 12-row table (bag 2 empty); max only selects (exact)
  { "embedding_bag sum", function(dt) return { randn(dt, 12, 16), BAG_INDICES, BAG_OFFSETS } end,
    function(w, i, o) return (sk.embedding_bag(w, i, o, false, 0)) end },
  { "embedding_bag mean, padding_idx", function(dt) return { randn(dt, 12, 16), BAG_INDICES, BAG_OFFSETS } end,
    function(w, i, o) return (sk.embedding_bag(w, i, o, false, 1, false, nil, false, 3)) end },
  { "embedding_bag sum, per_sample_weights, include_last_offset",
    function(dt) return { randn(dt, 12, 16), BAG_INDICES, BAG_OFFSETS, randn(dt, 24) } end,
    function(w, i, o, p) return (sk.embedding_bag(w, i, o, false, 0, false, p, true)) end },
  { "embedding_bag max", function(dt) return { randn(dt, 12, 16), BAG_INDICES, BAG_OFFSETS } end,
    function(w, i, o) return (sk.embedding_bag(w, i, o, false, 2)) end },
  { "trapezoid (x)", function(dt) return { randn(dt, 4, 64), sk.rand({ 64 }):cumsum(0):to(dt) } end,
    function(y, x) return sk.trapezoid(y, x) end },
  { "trapezoid (dx)", function(dt) return { randn(dt, 4, 64) } end, function(y) return sk.trapezoid(y, { dx = 0.3 }) end },
  { "diff (n = 2, prepend)", function(dt) return { randn(dt, 4, 64), randn(dt, 4, 3) } end,
    function(x, p) return sk.diff(x, 2, 1, p) end },
  { "cross_entropy (label_smoothing, weight)", function(dt) return { randn(dt, 16, 10), sk.randint(0, 10, { 16 }), rand(dt, 10) } end,
    function(x, t, w) return sk.cross_entropy(x, t, w, "none", -100, 0.2) end },
  { "cross_entropy (class probabilities, label_smoothing)",
    function(dt) return { randn(dt, 16, 10), sk.softmax(sk.randn({ 16, 10 }), 1):to(dt) } end,
    function(x, t) return sk.cross_entropy(x, t, nil, "none", -100, 0.1) end },
  { "col2im (fold, overlapping blocks)", function(dt) return { randn(dt, 2, 18, 16) } end,
    function(x) return sk.col2im(x, { 6, 6 }, { 3, 3 }, { 1, 1 }, { 0, 0 }, { 1, 1 }) end },
  { "grid_sample (bilinear, zeros)", function(dt) return { randn(dt, 1, 2, 6, 6), (sk.rand({ 1, 5, 5, 2 }) * 2.2 - 1.1):to(dt) } end,
    function(x, g) return sk.grid_sample(x, g, "bilinear", "zeros", false) end },
  { "grid_sample (bicubic, reflection)", function(dt) return { randn(dt, 1, 2, 6, 6), (sk.rand({ 1, 5, 5, 2 }) * 2.2 - 1.1):to(dt) } end,
    function(x, g) return sk.grid_sample(x, g, "bicubic", "reflection", true) end },
  { "grid_sample (trilinear, border)", function(dt) return { randn(dt, 1, 2, 4, 5, 6), (sk.rand({ 1, 3, 4, 5, 3 }) * 2.2 - 1.1):to(dt) } end,
    function(x, g) return sk.grid_sample(x, g, "bilinear", "border", false) end },
  { "affine_grid", function(dt) return { randn(dt, 2, 2, 3) } end, function(t) return sk.affine_grid(t, { 2, 1, 5, 6 }, false) end },
  { "interpolate (bilinear)", function(dt) return { randn(dt, 1, 2, 6, 6) } end,
    function(x) return sk.interpolate(x, { 11, 13 }, nil, "bilinear", false) end },
  { "interpolate (bicubic, align_corners)", function(dt) return { randn(dt, 1, 2, 6, 6) } end,
    function(x) return sk.interpolate(x, { 11, 13 }, nil, "bicubic", true) end },
  { "interpolate (trilinear)", function(dt) return { randn(dt, 1, 2, 3, 4, 5) } end,
    function(x) return sk.interpolate(x, { 5, 7, 9 }, nil, "trilinear", false) end },
  -- accumulating writers: an index named five times sums its five sources before the one rounding
  { "index_add (repeated indices, alpha)", function(dt) return { randn(dt, 4, 8), randn(dt, 20, 8) } end,
    function(x, s) return sk.index_add(x, 0, REPEATED, s, { alpha = 0.7 }) end },
  { "put_ (accumulate, repeated indices)", function(dt) return { randn(dt, 8), randn(dt, 20) } end,
    function(x, s) return x:clone():put_(REPEATED, s, true) end },
  -- float16 has no lgamma (PyTorch's neither): mvlgamma keeps that error
  { "mvlgamma (p = 3)", function(dt) return { rand(dt, 64) + 3 } end, function(x) return sk.mvlgamma(x, 3) end,
    dtypes = { "bfloat16" } },
  { "einsum (three operands)", function(dt) return { randn(dt, 3, 8), randn(dt, 8, 8), randn(dt, 8, 4) } end,
    function(a, b, c) return sk.einsum("ij,jk,kl->il", { a, b, c }) end },
}

describe("float16/bfloat16 composites compute in float32 and round once", function()
  for i, c in ipairs(CASES) do
    for _, dt in ipairs(c.dtypes or { "bfloat16", "float16" }) do
      it(c[1] .. " (" .. dt .. ")", function()
        sk.manual_seed(100 + i)
        local xs = c[2](dt)
        local xs64 = {}
        for j, x in ipairs(xs) do xs64[j] = x:dtype() == dt and x:to("float64") or x end
        local got, exact = c[3](table.unpack(xs)), c[3](table.unpack(xs64))
        assert.equal(dt, got:dtype())
        assert_rounded_once(got, exact, dt, c[1])
      end)
    end
  end

  -- float32: within the error of rounding x/√2 to float32 (2e-6 at -6); PyTorch 1.13 gives 0 for both
  it("special_ndtr keeps its lower tail: erfc(-x/√2)/2, where 1 + erf(x/√2) cancels", function()
    local y, want = sk.special_ndtr(sk.tensor({ -6.0, -10 })):totable(), { 9.865876450377012e-10, 7.619853024160593e-24 }
    for i = 1, 2 do assert.is_true(math.abs(y[i] / want[i] - 1) < 1e-5, "ndtr: " .. y[i]) end
  end)

  it("a half-type accumulating writer keeps index_put_'s overlap error", function()
    local want = "some elements of the input tensor 'values' and the written-to tensor 'self' refer to a single memory location"
    for _, dt in ipairs({ "bfloat16", "float16" }) do
      local x = sk.ones({ 4 }):to(dt)
      local ok, err = pcall(function() return x:index_add_(0, sk.tensor({ 0, 1, 2, 3 }), x) end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(want, 1, true), err)
      ok, err = pcall(function() return x:put_(sk.tensor({ 0, 1 }), x:narrow(0, 2, 2), true) end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(want, 1, true), err)
      assert.same({ 1, 1, 1, 1 }, x:to("float64"):totable())
    end
  end)

  it("float32 and float64 calls keep their dtype and path", function()
    local m, a, b = sk.ones({ 2, 2 }), sk.tensor({ 1.5, 2 }), sk.tensor({ 3, 0.25 })
    assert.equal("float32", sk.addr(m, a, b):dtype())
    assert.same({ { 5.5, 1.375 }, { 7, 1.5 } }, sk.addr(m, a, b):totable())
    assert.equal("float64", sk.addr(m:to("float64"), a, b):dtype())
  end)
end)
