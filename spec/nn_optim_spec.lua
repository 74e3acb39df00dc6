-- spec/nn_optim_spec.lua — sk.nn modules and sk.optim optimizers against values worked out
-- by hand (PyTorch's rules), and the two training examples with a fixed seed and a bound.
local h = require "spec.helper"
local sk = h.sk
local nn, optim = sk.nn, sk.optim

local function f64(v) return sk.tensor(v, { dtype = "float64" }) end

describe("sk.nn modules", function()
  it("Linear: PyTorch's init bounds, x W^T + b, parameters in order", function()
    sk.manual_seed(3)
    local m = nn.Linear(16, 4)
    assert.same({ 4, 16 }, m.weight:shape())
    assert.is_true(m.weight:abs():amax():item() <= 1 / 4 + 1e-7) -- kaiming_uniform(a = sqrt 5): 1/sqrt(fan_in)
    assert.is_true(m.bias:abs():amax():item() <= 1 / 4 + 1e-7)
    local names = {}
    for _, p in ipairs(m:named_parameters()) do names[#names + 1] = p[1] end
    assert.same({ "weight", "bias" }, names)
    local x = sk.randn(3, 16)
    h.assert_close(m(x):totable(), (x:matmul(m.weight:t()) + m.bias):totable(), 1e-6)
    local x3 = sk.randn(2, 3, 16)
    h.assert_close(m(x3):totable(), (x3:matmul(m.weight:t()) + m.bias):totable(), 1e-6)
    assert.is_nil(nn.Linear(3, 2, { bias = false }).bias)
  end)

  it("Sequential, ModuleList, train/eval, zero_grad, nested names", function()
    local net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    local names = {}
    for _, p in ipairs(net:named_parameters()) do names[#names + 1] = p[1] end
    assert.same({ "0.weight", "0.bias", "2.weight", "2.bias" }, names)
    assert.equal(3, #net:children())
    net:eval()
    assert.is_false(net:children()[1].training)
    net:train()
    assert.is_true(net:children()[3].training)
    net(sk.randn(4, 2)):sum():backward()
    assert.is_truthy(net:parameters()[1].grad)
    net:zero_grad()
    assert.is_nil(net:parameters()[1].grad)
    local l = nn.ModuleList({ nn.Linear(1, 1) }):append(nn.Linear(1, 2))
    assert.equal(2, l:len())
    assert.equal(2, l:at(2).out_features)
  end)

  it("state_dict round trip and PyTorch's load errors", function()
    sk.manual_seed(1)
    local a, b = nn.Linear(3, 2), nn.Linear(3, 2)
    b:load_state_dict(a:state_dict())
    assert.same(a.weight:totable(), b.weight:totable())
    assert.is_true(b.weight:requires_grad())
    local sd = a:state_dict()
    sd.extra = sk.ones(1)
    assert.matches("unexpected keys [extra]", h.err(function() b:load_state_dict(sd) end), 1, true)
    sd.extra, sd.bias = nil, sk.ones(5)
    assert.matches("size mismatch for bias: copying a param with shape [5] from checkpoint, the shape in current model is [2].",
      h.err(function() b:load_state_dict(sd) end), 1, true)
  end)

  it("Embedding (padding row zero, no gradient), LayerNorm, Dropout", function()
    sk.manual_seed(2)
    local e = nn.Embedding(5, 3, { padding_idx = 1 })
    assert.same({ 0, 0, 0 }, e.weight[1]:totable())
    local out = e(sk.tensor({ { 1, 2 }, { 4, 1 } }))
    assert.same({ 2, 2, 3 }, out:shape())
    out:sum():backward()
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 }, { 1, 1, 1 }, { 0, 0, 0 }, { 1, 1, 1 } }, e.weight.grad:totable())
    local ln = nn.LayerNorm(4)
    local y = ln(f64({ { 1, 2, 3, 4 } }):to("float32"))
    h.assert_close(y:totable(), { { -1.3416, -0.4472, 0.4472, 1.3416 } }, 1e-4)
    local d = nn.Dropout(0.5)
    local x = sk.ones(1000)
    local z = d(x)
    local kept = z:gt(0):to("float32"):sum():item()
    assert.is_true(kept > 400 and kept < 600)
    assert.equal(2, z:amax():item()) -- scaled by 1 / (1 - p)
    d:eval()
    assert.same(x:totable(), d(x):totable())
  end)

  it("activations and losses are the functional ops", function()
    local x = f64({ { -1, 0.5 }, { 2, -3 } })
    assert.same(x:relu():totable(), nn.ReLU()(x):totable())
    assert.same(sk.gelu(x):totable(), nn.GELU()(x):totable())
    assert.same(sk.softmax(x, 1):totable(), nn.Softmax(1)(x):totable())
    local t = sk.tensor({ 1, 0 })
    assert.same({ sk.cross_entropy(x, t):item() }, { nn.CrossEntropyLoss()(x, t):item() })
    assert.same({ sk.nll_loss(x, t, { reduction = "sum" }):item() }, { nn.NLLLoss({ reduction = "sum" })(x, t):item() })
    assert.same({ sk.mse_loss(x, x * 2):item() }, { nn.MSELoss()(x, x * 2):item() })
  end)

  it("user modules: nn.class and plain modules with a forward field", function()
    local Affine = nn.class("Affine", function(self, n) self.w = sk.ones(n, { requires_grad = true }) end,
      function(self, x) return x * self.w end)
    local m = Affine(2)
    assert.same({ 3, 4 }, m(sk.tensor({ 3.0, 4 })):totable())
    local p = nn.Module()
    p.inner = Affine(2)
    p.forward = function(self, x) return self.inner(x) + 1 end
    assert.same({ 4, 5 }, p(sk.tensor({ 3.0, 4 })):totable())
    assert.equal(1, #p:parameters())
  end)

  it("nn.init follows PyTorch's bounds", function()
    local t = sk.empty(64, 32)
    nn.init.xavier_uniform_(t)
    assert.is_true(t:abs():amax():item() <= math.sqrt(6 / 96) + 1e-7)
    nn.init.kaiming_uniform_(t, { nonlinearity = "relu" })
    assert.is_true(t:abs():amax():item() <= math.sqrt(2) * math.sqrt(3 / 32) + 1e-7)
    nn.init.constant_(t, 0.5)
    assert.equal(0.5, t:amin():item())
    assert.matches("fewer than 2 dimensions", h.err(nn.init.xavier_uniform_, sk.empty(3)))
  end)
end)

describe("sk.optim", function()
  -- loss = (p * 2):sum(), so the gradient is 2 at every step; values worked out by hand
  local function run(make, steps)
    local p = f64({ 1 }):requires_grad_()
    local o = make({ p })
    for _ = 1, steps do
      o:zero_grad()
      local loss = (p * 2):sum()
      loss:backward()
      o:step()
    end
    return p:item(), o
  end

  it("SGD: plain, momentum, nesterov, weight decay", function()
    h.assert_close(run(function(ps) return optim.SGD(ps, { lr = 0.1 }) end, 2), 0.6, 1e-12)
    h.assert_close(run(function(ps) return optim.SGD(ps, { lr = 0.1, momentum = 0.9 }) end, 2), 0.42, 1e-12)
    h.assert_close(run(function(ps) return optim.SGD(ps, { lr = 0.1, momentum = 0.9, nesterov = true }) end, 2), 0.078, 1e-12)
    h.assert_close(run(function(ps) return optim.SGD(ps, { lr = 0.1, weight_decay = 0.1 }) end, 1), 0.79, 1e-12)
    h.assert_close(run(function(ps) return optim.SGD(ps, { lr = 0.1, momentum = 0.5, dampening = 0.5 }) end, 3), 0.4, 1e-12)
    assert.matches("Nesterov momentum requires a momentum and zero dampening",
      h.err(optim.SGD, { f64({ 1 }):requires_grad_() }, { nesterov = true }), 1, true)
    assert.matches("unexpected option 'foo'", h.err(optim.SGD, { f64({ 1 }):requires_grad_() }, { foo = 1 }), 1, true)
  end)

  it("Adam and AdamW with bias correction", function()
    h.assert_close(run(function(ps) return optim.Adam(ps, { lr = 0.1 }) end, 2), 0.8, 1e-7)
    h.assert_close(run(function(ps) return optim.AdamW(ps, { lr = 0.1, weight_decay = 0.1 }) end, 1), 0.89, 1e-7)
    h.assert_close(run(function(ps) return optim.Adam(ps, { lr = 0.1, amsgrad = true }) end, 2), 0.8, 1e-7)
    local _, o = run(function(ps) return optim.Adam(ps, { lr = 0.1 }) end, 2)
    local sd = o:state_dict()
    assert.equal(2, sd.state[0].step)
    h.assert_close(sd.state[0].exp_avg:totable(), { 0.38 }, 1e-12)
    assert.equal(0.1, sd.param_groups[1].lr)
  end)
end)

describe("training examples #train", function()
  setup(function() sk.set_num_threads(1) end)
  teardown(function() sk.set_num_threads(2) end)

  it("an MLP separates two spirals (>= 99 % accuracy)", function()
    local spirals = dofile("examples/spirals.lua")
    local loss, acc = spirals.train(600, 0)
    assert.is_true(acc >= 0.99, "accuracy " .. acc)
    assert.is_true(loss < 0.05, "loss " .. loss)
  end)

  it("a character transformer learns a repeating grammar (loss below 0.8 nats)", function()
    local ct = dofile("examples/char_transformer.lua")
    local first, last = ct.train(150, 1)
    assert.is_true(first > 2.5, "first loss " .. first)
    assert.is_true(last < 0.8, "last loss " .. last)
  end)
end)
