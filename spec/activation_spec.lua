-- spec/activation_spec.lua — the activation composites against their definitions evaluated in
-- plain Lua, element by element (PyTorch's formulas and NaN rules), their in-place forms,
-- methods, Meta shapes and errors.
local h = require "spec.helper"
local sk = h.sk

local XS = { -7.5, -3, -2.25, -1, -0.5, -0.125, 0, 0.25, 0.75, 1.5, 3, 4.5, 25 }
local function sigmoid(v) return 1 / (1 + math.exp(-v)) end
local function softplus(v, b, t) b, t = b or 1, t or 20; return v * b > t and v or math.log(1 + math.exp(b * v)) / b end
local SA, SS = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
local CASES = {
  { "leaky_relu", { 0.2 }, function(v) return v > 0 and v or 0.2 * v end, true },
  { "elu", { 1.5, 2, 0.5 }, function(v) return v > 0 and 2 * v or 2 * 1.5 * (math.exp(0.5 * v) - 1) end, true },
  { "selu", {}, function(v) return v > 0 and SS * v or SS * SA * (math.exp(v) - 1) end, true },
  { "celu", { 0.7 }, function(v) return math.max(0, v) + math.min(0, 0.7 * (math.exp(v / 0.7) - 1)) end, true },
  { "hardtanh", { -2, 3 }, function(v) return math.min(3, math.max(-2, v)) end, true },
  { "relu6", {}, function(v) return math.min(6, math.max(0, v)) end, true },
  { "hardswish", {}, function(v) return v * math.min(6, math.max(0, v + 3)) / 6 end, true },
  { "hardsigmoid", {}, function(v) return math.min(6, math.max(0, v + 3)) / 6 end, true },
  { "softplus", { 2, 5 }, function(v) return softplus(v, 2, 5) end },
  { "softsign", {}, function(v) return v / (1 + math.abs(v)) end },
  { "softshrink", { 0.7 }, function(v) return v > 0.7 and v - 0.7 or v < -0.7 and v + 0.7 or 0 end },
  { "hardshrink", { 0.7 }, function(v) return math.abs(v) <= 0.7 and 0 or v end },
  { "tanhshrink", {}, function(v) return v - math.tanh(v) end },
  { "threshold", { 0.3, -1.5 }, function(v) return v <= 0.3 and -1.5 or v end, true },
  { "log_sigmoid", {}, function(v) return math.log(sigmoid(v)) end },
  { "mish", {}, function(v) return v * math.tanh(softplus(v)) end, true },
  { "rrelu", { 0.1, 0.3, false }, function(v) return v >= 0 and v or 0.2 * v end, true },
}

describe("activations", function()
  for _, c in ipairs(CASES) do
    it(c[1] .. " matches its definition, in float64 and float32" .. (c[4] and ", in place too" or ""), function()
      local want = {}
      for i, v in ipairs(XS) do want[i] = c[3](v) end
      for _, dt in ipairs({ "float64", "float32" }) do
        local x = sk.tensor(XS, { dtype = dt })
        local y = sk[c[1]](x, table.unpack(c[2]))
        assert.equal(dt, y:dtype())
        h.assert_close(y:totable(), want, dt == "float64" and 1e-12 or 1e-6)
        h.assert_close(x[c[1]](x, table.unpack(c[2])):totable(), want, dt == "float64" and 1e-12 or 1e-6) -- the method
        if c[4] then
          local z = x:clone()
          local r = sk[c[1] .. "_"](z, table.unpack(c[2]))
          assert.is_true(rawequal(r, z) or r:shares_storage(z))
          h.assert_close(z:totable(), want, dt == "float64" and 1e-12 or 1e-6)
        end
      end
      -- NaN stays NaN, except where PyTorch's comparisons send it to a constant
      local n = sk[c[1]](sk.tensor({ 0 / 0 }, { dtype = "float64" }), table.unpack(c[2])):item()
      if c[1] == "softshrink" then assert.equal(0, n)
      elseif c[1] == "threshold" then assert.is_true(n ~= n)
      else assert.is_true(n ~= n, c[1] .. "(NaN)") end
      -- Meta
      local m = sk[c[1]](h.meta({ 2, 3 }), table.unpack(c[2]))
      assert.equal("meta", m:device())
      assert.same({ 2, 3 }, m:shape())
    end)
  end

  it("hardtanh is min(max(x, min_val), max_val): max_val wins when min_val > max_val; relu6 is hardtanh(0, 6)", function()
    -- PyTorch 1.13: hardtanh(x, 2, 1) is 1 everywhere (NaN stays NaN); its gradient is 0 there
    local x = sk.tensor({ -3, 0.5, 1, 5, 0 / 0 }, { dtype = "float64" })
    local y = sk.hardtanh(x, 2, 1):totable()
    assert.same({ 1, 1, 1, 1 }, { y[1], y[2], y[3], y[4] }); assert.is_true(y[5] ~= y[5])
    local z = x:clone(); z:hardtanh_(2, 1)
    assert.same({ 1, 1, 1, 1 }, { table.unpack(z:totable(), 1, 4) })
    local g = sk.tensor({ -3, 0.5, 1, 5 }, { requires_grad = true })
    sk.hardtanh(g, 2, 1):sum():backward()
    assert.same({ 0, 0, 0, 0 }, g.grad:totable())
    g = sk.tensor({ -3, 0.5, 1, 5 }, { requires_grad = true })
    sk.hardtanh(g, -1, 1):sum():backward()
    assert.same({ 0, 1, 0, 0 }, g.grad:totable()) -- 0 at the bound itself, as hardtanh_backward
    assert.same({ 0, 6, 2 }, sk.relu6(sk.tensor({ -3, 7, 2 })):totable())
  end)

  it("hardtanh keeps an integer dtype (bounds truncate, as PyTorch's clamp into it); refuses bool and uint8 below 0", function()
    -- PyTorch 1.13 values
    for _, dt in ipairs { "int8", "int16", "int32", "int64" } do
      local x = sk.tensor({ -3, 0, 1, 5 }, { dtype = dt })
      local y = sk.hardtanh(x)
      assert.equal(dt, y:dtype())
      assert.same({ -1, 0, 1, 1 }, y:totable())
      assert.same({ -1, 0, 1, 2 }, sk.hardtanh(x, -1.5, 2.5):totable())
      assert.same({ 1, 1, 1, 1 }, sk.hardtanh(x, 2, 1):totable())
      local z = x:clone(); z:hardtanh_(-1, 1)
      assert.same({ -1, 0, 1, 1 }, z:totable())
      assert.equal(dt, sk.relu6(x):dtype())
    end
    local u = sk.tensor({ 0, 3, 9 }, { dtype = "uint8" })
    assert.same({ 1, 1, 1 }, sk.hardtanh(u, 2, 1):totable())
    assert.same({ 0, 3, 6 }, sk.relu6(u):totable())
    assert.equal("uint8", sk.relu6(u):dtype())
    assert.matches("cannot do hardtanh on an unsigned type with negative limits", h.err(sk.hardtanh, u), 1, true)
    assert.matches("Bool inputs not supported for hardtanh", h.err(sk.hardtanh, sk.tensor({ true })), 1, true)
  end)

  it("keeps gradients finite where a discarded branch would overflow", function()
    local x = sk.tensor({ -200, 200, 0, 100 }, { dtype = "float32", requires_grad = true })
    for _, f in ipairs({ sk.elu, sk.selu, sk.mish, sk.log_sigmoid, sk.softplus }) do
      x.grad = nil
      f(x):sum():backward()
      assert.is_true(x.grad:isfinite():all():item())
    end
    -- log_sigmoid'(0) = 1/2, mish'(0) = tanh(log 2)
    local z = sk.zeros({ 1 }, { dtype = "float64", requires_grad = true })
    sk.log_sigmoid(z):sum():backward()
    h.assert_close(z.grad:item(), 0.5, 1e-12)
    z.grad = nil
    sk.mish(z):sum():backward()
    h.assert_close(z.grad:item(), math.tanh(math.log(2)), 1e-12)
  end)

  it("rrelu draws slopes in [lower, upper] for negative inputs when training", function()
    sk.manual_seed(3)
    local x = -sk.ones({ 1000 }, { dtype = "float64" })
    local y = sk.rrelu(x, 0.1, 0.3, true)
    assert.is_true((y:le(-0.1)):all():item() and (y:ge(-0.3)):all():item())
    assert.is_true(y:std():item() > 0.03)
    assert.same({ 2, 2 }, sk.rrelu(sk.ones({ 2, 2 }), 0.1, 0.3, true):totable() and { 2, 2 })
  end)

  it("glu, prelu and softmin", function()
    local x = sk.tensor({ { 1, 2, 0, -1 } }, { dtype = "float64" })
    h.assert_close(sk.glu(x):totable(), { { 1 * sigmoid(0), 2 * sigmoid(-1) } }, 1e-12)
    h.assert_close(sk.glu(x:t(), 0):totable(), { { 1 * sigmoid(0) }, { 2 * sigmoid(-1) } }, 1e-12)
    assert.matches("Halving dimension must be even, but dimension 1 is size 3", h.err(sk.glu, sk.ones({ 2, 3 })))
    local p = sk.prelu(sk.tensor({ { -1, 2 }, { -4, -3 } }, { dtype = "float64" }), sk.tensor({ 0.5, 0.25 }, { dtype = "float64" }))
    h.assert_close(p:totable(), { { -0.5, 2 }, { -2, -0.75 } }, 1e-12)
    h.assert_close(sk.prelu(sk.tensor({ -2, 3 }, { dtype = "float64" }), sk.tensor({ 0.25 }, { dtype = "float64" })):totable(), { -0.5, 3 }, 1e-12)
    assert.matches("Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and channel size = 2.",
      h.err(sk.prelu, sk.ones({ 2, 2 }), sk.ones({ 3 })))
    local s = sk.softmin(sk.tensor({ { 0, math.log(3) } }, { dtype = "float64" }), 1)
    h.assert_close(s:totable(), { { 0.75, 0.25 } }, 1e-12)
  end)

  it("the nn modules call them", function()
    local nn, x = sk.nn, sk.tensor(XS)
    h.assert_close(nn.LeakyReLU(0.2)(x):totable(), sk.leaky_relu(x, 0.2):totable(), 0)
    h.assert_close(nn.ELU(1.5)(x):totable(), sk.elu(x, 1.5):totable(), 0)
    h.assert_close(nn.Hardtanh(-2, 3)(x):totable(), sk.hardtanh(x, -2, 3):totable(), 0)
    h.assert_close(nn.Softplus(2, 5)(x):totable(), sk.softplus(x, 2, 5):totable(), 0)
    h.assert_close(nn.Threshold(0.3, -1.5)(x):totable(), sk.threshold(x, 0.3, -1.5):totable(), 0)
    for _, name in ipairs({ "SELU", "CELU", "ReLU6", "Hardswish", "Hardsigmoid", "Softsign", "Softshrink", "Hardshrink",
                            "Tanhshrink", "LogSigmoid", "Mish" }) do
      assert.same(x:shape(), nn[name]()(x):shape(), name)
    end
    assert.same({ 1, 2 }, nn.GLU()(sk.ones({ 1, 4 })):shape())
    local pr = nn.PReLU(3)
    assert.same({ 3 }, pr.weight:shape())
    h.assert_close(pr.weight:totable(), { 0.25, 0.25, 0.25 }, 0)
    assert.same({ 2, 3 }, pr(sk.ones({ 2, 3 })):shape())
    h.assert_close(nn.Softmin(1)(sk.tensor({ { 0, math.log(3) } })):totable(), { { 0.75, 0.25 } }, 1e-6)
  end)
end)

describe("activation argument checks (PyTorch raises, sk did not)", function()
  it("prelu refuses a weight of more than one dim, after PyTorch's count checks", function()
    assert.equal("sk.prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = 2",
      h.err(sk.prelu, sk.ones({ 2, 4 }), sk.ones({ 4, 1 })))
    assert.equal("sk.prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = 3",
      h.err(sk.prelu, sk.ones({ 2, 4 }), sk.ones({ 1, 1, 1 })))
    assert.equal("sk.prelu: Not allow zero-dim input tensor.", h.err(sk.prelu, sk.tensor(1.0), sk.ones({ 3 })))
    assert.equal("sk.prelu: Mismatch of parameter numbers and input channel size. Found parameter numbers = 5 and " ..
      "channel size = 4.", h.err(sk.prelu, sk.ones({ 2, 4 }), sk.ones({ 5, 1 })))
    assert.same({ -0.5, 1 }, sk.prelu(sk.tensor({ -1.0, 1.0 }), sk.tensor(0.5)):totable())
  end)

  it("rrelu refuses lower > upper (or a NaN bound) in training and eval, in place too", function()
    local msg = "Lower bound should be less than or equal to the upper bound"
    assert.equal("sk.rrelu: " .. msg, h.err(sk.rrelu, sk.ones({ 2 }), 0.5, 0.1, true))
    assert.equal("sk.rrelu: " .. msg, h.err(sk.rrelu, sk.ones({ 2 }), 0.5, 0.1, false))
    assert.equal("sk.rrelu: " .. msg, h.err(sk.rrelu, sk.ones({ 2 }), 0 / 0, 0.1, false))
    local x = sk.tensor({ -1.0, 2.0 })
    assert.equal("sk.rrelu_: " .. msg, h.err(sk.rrelu_, x, 0.5, 0.1, false))
    assert.same({ -1, 2 }, x:totable())
    assert.same({ -0.25, 2 }, sk.rrelu(x, 0.25, 0.25, false):totable())
  end)

  it("softshrink refuses a negative or NaN lambd", function()
    assert.equal("sk.softshrink: lambda must be greater or equal to 0, but found to be -0.5.",
      h.err(sk.softshrink, sk.ones({ 2 }), -0.5))
    assert.equal("sk.softshrink: lambda must be greater or equal to 0, but found to be -1.",
      h.err(sk.softshrink, sk.ones({ 2 }), -1))
    assert.equal("sk.softshrink: lambda must be greater or equal to 0, but found to be nan.",
      h.err(sk.softshrink, sk.ones({ 2 }), 0 / 0))
    assert.same({ 0, 1.5 }, sk.softshrink(sk.tensor({ 0.25, 2.0 }), 0.5):totable())
  end)
end)
