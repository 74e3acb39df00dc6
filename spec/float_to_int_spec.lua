-- spec/float_to_int_spec.lua — the one float → integer conversion (sk_elem.h) on every path that
-- converts: to(), copy_, a cast of half / bfloat16 / float32 / float64, and the orthogonal
-- polynomials' degree. Truncation toward zero; NaN, ±inf and values outside the range give the
-- type's minimum (int32's, then its low bits, for the types narrower than int32).
local h = require "spec.helper"
local sk = h.sk
local nan, inf = 0 / 0, math.huge
local INT32_MIN, INT64_MIN = -2147483648, math.mininteger

-- PyTorch 1.13 on x86 (cvttss2si / cvttsd2si "integer indefinite"; int8/int16/uint8 through int32)
local SRC = { nan, inf, -inf, 1e10, -1e10, 300.7, -1.5 }
local WANT = {
  int64 = { INT64_MIN, INT64_MIN, INT64_MIN, 10000000000, -10000000000, 300, -1 },
  int32 = { INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, 300, -1 },
  int16 = { 0, 0, 0, 0, 0, 300, -1 },
  int8 = { 0, 0, 0, 0, 0, 44, -1 },
  uint8 = { 0, 0, 0, 0, 0, 44, 255 },
}

describe("float to integer conversion", function()
  it("to() from float32 and float64 gives PyTorch's x86 values for NaN, ±inf and out-of-range", function()
    for _, from in ipairs { "float32", "float64" } do
      local x = sk.tensor(SRC, { dtype = from })
      for dt, want in pairs(WANT) do assert.same(want, x:to(dt):totable(), from .. " -> " .. dt) end
    end
  end)

  it("the half types convert by the same rule (their infinities and NaN)", function()
    for _, from in ipairs { "float16", "bfloat16" } do
      local x = sk.tensor({ nan, inf, -inf, 2.5 }, { dtype = from })
      assert.same({ INT32_MIN, INT32_MIN, INT32_MIN, 2 }, x:to("int32"):totable(), from)
      assert.same({ INT64_MIN, INT64_MIN, INT64_MIN, 2 }, x:to("int64"):totable(), from)
    end
  end)

  it("copy_ into an integer tensor and item() of the result use it", function()
    local d = sk.zeros({ 4 }, { dtype = "int32" })
    d:copy_(sk.tensor({ nan, 3e9, -2.7, 2.7 }, { dtype = "float64" }))
    assert.same({ INT32_MIN, INT32_MIN, -2, 2 }, d:totable())
    assert.equal(INT64_MIN, sk.tensor({ 2 ^ 63 }, { dtype = "float64" }):to("int64"):item())
    assert.equal(INT64_MIN + 1024, sk.tensor({ -(2 ^ 63) + 1024 }, { dtype = "float64" }):to("int64"):item())
    assert.equal(2147483647, sk.tensor({ 2147483647.9 }, { dtype = "float64" }):to("int32"):item())
    assert.equal(INT32_MIN, sk.tensor({ -2147483648.9 }, { dtype = "float64" }):to("int32"):item())
  end)

  it("a strided source converts element by element the same way", function()
    local x = sk.tensor({ { nan, 1.5 }, { 1e10, -1.5 } }, { dtype = "float64" }):t()
    assert.same({ { INT32_MIN, INT32_MIN }, { 1, -1 } }, x:to("int32"):totable())
  end)
end)
