-- spec/opmath_spec.lua — the accumulation rule of float16/bfloat16 composites (sk_composite_util.h,
-- sk_tape_opmath): a composite that chains several rounding steps computes in float32 and rounds
-- once, so each element of its half-type result lies within one rounding of the exact answer,
-- the float64 result from the same rounded inputs. Before the rule each of these cases had an
-- element one or more ulps away (addr and scaled_dot_product_attention about ten).
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
    if not (err <= 0.5 + 1 / 32) then
      error(string.format("%s: element %d is %.3g ulp from the exact %.8g (got %.8g)", what, i, err, e[i], g[i]), 2)
    end
  end
end

local function randn(dt, ...) return sk.randn({ ... }):to(dt) end
local function rand(dt, ...) return (sk.rand({ ... }) * 0.8 + 0.1):to(dt) end -- in [0.1, 0.9]

-- name, inputs of dtype dt (seeded), the call
local CASES = {
  { "addr", function(dt) return { randn(dt, 5, 6), randn(dt, 5), randn(dt, 6) } end,
    function(m, a, b) return sk.addr(m, a, b, { beta = 0.7, alpha = 1.3 }) end },
  { "bilinear", function(dt) return { randn(dt, 4, 8), randn(dt, 4, 8), randn(dt, 3, 8, 8), randn(dt, 3) } end,
    function(a, b, w, bias) return sk.bilinear(a, b, w, bias) end },
  { "binary_cross_entropy_with_logits", function(dt) return { randn(dt, 40), rand(dt, 40), rand(dt, 40), rand(dt, 40) } end,
    function(x, t, w, pw) return sk.binary_cross_entropy_with_logits(x, t, w, pw, "none") end },
  { "scaled_dot_product_attention", function(dt) return { randn(dt, 2, 5, 8), randn(dt, 2, 6, 8), randn(dt, 2, 6, 8) } end,
    function(q, k, v) return sk.scaled_dot_product_attention(q, k, v) end },
}

describe("float16/bfloat16 composites compute in float32 and round once", function()
  for i, c in ipairs(CASES) do
    for _, dt in ipairs({ "bfloat16", "float16" }) do
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

  it("float32 and float64 calls keep their dtype and path", function()
    local m, a, b = sk.ones({ 2, 2 }), sk.tensor({ 1.5, 2 }), sk.tensor({ 3, 0.25 })
    assert.equal("float32", sk.addr(m, a, b):dtype())
    assert.same({ { 5.5, 1.375 }, { 7, 1.5 } }, sk.addr(m, a, b):totable())
    assert.equal("float64", sk.addr(m:to("float64"), a, b):dtype())
  end)
end)
