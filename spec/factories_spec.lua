-- spec/factories_spec.lua — *_like factories, ranges, eye and the random ops
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

describe("factories like a tensor", function()
  local x = T({{1.5, 2}, {3, 4}})
  it("take the shape, dtype and device of self unless told otherwise", function()
    assert.same({2, 2}, sk.empty_like(x):shape())
    assert.same({{0, 0}, {0, 0}}, sk.zeros_like(x):totable())
    assert.equal("int32", sk.ones_like(x, {dtype = "int32"}):dtype())
    assert.same({{1, 1}, {1, 1}}, sk.ones_like(x, {dtype = "int32"}):totable())
    assert.same({{7, 7}, {7, 7}}, sk.full_like(x, 7):totable())
    assert.equal("float32", sk.full_like(x, 7):dtype())
    local r = sk.rand_like(x)
    for _, row in ipairs(r:totable()) do for _, v in ipairs(row) do assert.is_true(v >= 0 and v < 1) end end
    assert.same({2, 2}, sk.randn_like(x):shape())
    local m = sk.zeros_like(sk.empty({3, 1}, {device = "meta"}))
    assert.equal("meta", m:device())
    assert.same({3, 1}, m:shape())
  end)
end)

describe("linspace, logspace, eye", function()
  it("space values evenly, from both ends", function()
    assert.same({0, 0.25, 0.5, 0.75, 1}, sk.linspace(0, 1, 5):totable())
    assert.same({-1}, sk.linspace(-1, 3, 1):totable())
    assert.same({}, sk.linspace(0, 1, 0):totable())
    assert.same({10, 7.5, 5, 2.5, 0}, sk.linspace(10, 0, 5, {dtype = "float64"}):totable())
    assert.same({1, 10, 100}, sk.logspace(0, 2, 3):totable())
    assert.same({1, 2, 4, 8}, sk.logspace(0, 3, 4, 2):totable())
    assert.matches("number of steps must be non%-negative", h.err(sk.linspace, 0, 1, -1))
  end)
  it("make identity matrices", function()
    assert.same({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, sk.eye(3):totable())
    assert.same({{1, 0, 0}, {0, 1, 0}}, sk.eye(2, 3, {dtype = "int64"}):totable())
    assert.same({{1, 0}, {0, 1}, {0, 0}}, sk.eye(3, 2):totable())
    assert.same({0, 0}, sk.eye(0, 0):shape() and {sk.eye(0):size(0), sk.eye(0):size(1)})
    assert.matches("argument 'n' must be greater or equal to 0", h.err(sk.eye, -1))
    assert.same({4, 4}, sk.eye(4, {device = "meta"}):shape())
  end)
end)

describe("random ops", function()
  it("randint draws integers in [low, high), reproducibly", function()
    sk.manual_seed(7)
    local a = sk.randint(10, {1000})
    assert.equal("int64", a:dtype())
    local seen = {}
    for _, v in ipairs(a:totable()) do
      assert.is_true(math.type(v) == "integer" and v >= 0 and v < 10)
      seen[v] = true
    end
    for v = 0, 9 do assert.is_true(seen[v], "value " .. v .. " never drawn") end
    sk.manual_seed(7)
    assert.same(a:totable(), sk.randint(10, {1000}):totable())
    for _, v in ipairs(sk.randint(-3, 2, {200}):totable()) do assert.is_true(v >= -3 and v < 2) end
    assert.equal("float32", sk.randint(5, {3}, {dtype = "float32"}):dtype())
    assert.matches("random_ expects 'from' to be less than 'to'", h.err(sk.randint, 5, 5, {3}))
  end)
  it("random_ fills any dtype within its range", function()
    local b = sk.empty({500}, {dtype = "bool"}):random_(0, 2)
    local t, f = 0, 0
    for _, v in ipairs(b:totable()) do if v then t = t + 1 else f = f + 1 end end
    assert.is_true(t > 150 and f > 150)
    for _, v in ipairs(sk.empty({100}, {dtype = "uint8"}):random_(0):totable()) do assert.is_true(v >= 0 and v <= 255) end
  end)
  it("randperm is a permutation", function()
    local p = sk.randperm(50):totable()
    table.sort(p)
    for i = 1, 50 do assert.equal(i - 1, p[i]) end
    assert.same({}, sk.randperm(0):totable())
    assert.equal("int32", sk.randperm(5, {dtype = "int32"}):dtype())
    assert.same({7}, sk.randperm(7, {device = "meta"}):shape())
  end)
  it("bernoulli draws 0/1 with the given probabilities", function()
    sk.manual_seed(3)
    local n = 20000
    local m = sk.bernoulli(sk.full({n}, 0.3)):mean():item()
    assert.is_true(math.abs(m - 0.3) < 0.02, "mean " .. m)
    assert.same({1, 1, 1}, sk.bernoulli(sk.zeros(3), 1.0):totable())
    assert.same({0, 0, 0}, sk.bernoulli(sk.ones(3), 0.0):totable())
    local p = sk.tensor({0.0, 1.0, 0.0, 1.0})
    assert.same({0, 1, 0, 1}, sk.bernoulli(p):totable())
    local t = sk.zeros(2, 3)
    t:bernoulli_(sk.tensor({1.0, 0.0, 1.0}))
    assert.same({{1, 0, 1}, {1, 0, 1}}, t:totable())
    assert.matches("bernoulli_ expects p to be in %[0, 1%], but got p=1.5", h.err(sk.bernoulli, sk.zeros(2), 1.5))
    assert.matches("argument 'p' must hold probabilities in %[0, 1%]", h.err(sk.bernoulli, sk.tensor({0.5, 2.0})))
  end)
  it("multinomial samples categories by weight, with and without replacement", function()
    sk.manual_seed(11)
    local draws = sk.multinomial(sk.tensor({0.0, 1.0, 3.0}), 4000, true):totable()
    local count = {[0] = 0, 0, 0}
    for _, v in ipairs(draws) do count[v] = count[v] + 1 end
    assert.equal(0, count[0])
    assert.is_true(math.abs(count[2] / 4000 - 0.75) < 0.03)
    local rows = sk.multinomial(sk.tensor({{1.0, 1.0, 1.0, 1.0}, {0.0, 5.0, 1.0, 0.0}}), 2):totable()
    assert.are_not.equal(rows[1][1], rows[1][2])
    table.sort(rows[2])
    assert.same({1, 2}, rows[2])
    assert.same({2, 2}, sk.multinomial(sk.empty({2, 5}, {device = "meta"}), 2):shape())
    assert.matches("cannot sample n_sample > prob_dist.size%(%-1%) samples without replacement",
      h.err(sk.multinomial, sk.tensor({1.0, 1.0}), 3))
    assert.matches("sum of probabilities <= 0", h.err(sk.multinomial, sk.zeros(3), 1, true))
    assert.matches("probability entry < 0", h.err(sk.multinomial, sk.tensor({1.0, -1.0}), 1, true))
  end)
  it("does not depend on the number of threads", function()
    for _, threads in ipairs { 1, 2 } do
      sk.set_num_threads(threads)
      sk.manual_seed(5)
      local v = sk.randint(1000, {200000}):sum():item()
      sk.manual_seed(5)
      assert.equal(v, sk.randint(1000, {200000}):sum():item())
      if threads == 1 then rawset(_G, "__sk_rand_sum", v) else assert.equal(rawget(_G, "__sk_rand_sum"), v) end
    end
    rawset(_G, "__sk_rand_sum", nil)
    sk.set_num_threads(2)
  end)
end)
