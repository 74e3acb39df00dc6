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

  it("Conv1d/2d/3d and ConvTranspose1d/2d/3d: shapes, PyTorch's init bounds, the functional op", function()
    sk.manual_seed(4)
    local m = nn.Conv2d(4, 6, 3, { stride = 2, padding = 1, groups = 2 })
    assert.same({ 6, 2, 3, 3 }, m.weight:shape())
    local bound = 1 / math.sqrt(2 * 9) -- fan_in = in/groups · k·k
    assert.is_true(m.weight:abs():amax():item() <= bound + 1e-7)
    assert.is_true(m.bias:abs():amax():item() <= bound + 1e-7)
    local x = sk.randn(2, 4, 7, 7)
    h.assert_close(m(x):flatten():totable(), sk.conv2d(x, m.weight, m.bias, 2, 1, 1, 2):flatten():totable(), 1e-6)
    assert.same({ 2, 6, 4, 4 }, m(x):shape())
    assert.same({ 2, 3, 7, 7 }, nn.Conv2d(4, 3, { 3, 5 }, { padding = "same", bias = false })(x):shape())
    assert.same({ 1, 2, 10 }, nn.Conv1d(3, 2, 3)(sk.randn(1, 3, 12)):shape())
    assert.same({ 1, 2, 3, 3, 3 }, nn.Conv3d(3, 2, 2)(sk.randn(1, 3, 4, 4, 4)):shape())
    local t = nn.ConvTranspose2d(4, 6, 3, { stride = 2, padding = 1, output_padding = 1, groups = 2 })
    assert.same({ 4, 3, 3, 3 }, t.weight:shape())
    assert.same({ 2, 6, 14, 14 }, t(x):shape())
    h.assert_close(t(x):flatten():totable(),
      sk.conv_transpose2d(x, t.weight, t.bias, 2, 1, 1, 2):flatten():totable(), 1e-6)
    assert.same({ 1, 2, 14 }, nn.ConvTranspose1d(3, 2, 3)(sk.randn(1, 3, 12)):shape())
    assert.same({ 1, 2, 5, 5, 5 }, nn.ConvTranspose3d(3, 2, 2)(sk.randn(1, 3, 4, 4, 4)):shape())
    assert.matches("in_channels must be divisible by groups", h.err(nn.Conv2d, 3, 6, 3, { groups = 2 }))
    assert.matches("padding_mode must be one of 'zeros', 'reflect', 'replicate' or 'circular'", h.err(nn.Conv2d, 3, 6, 3, { padding_mode = "mirror" }))
    -- it trains: the parameters get gradients
    m(x):sum():backward()
    assert.same({ 6, 2, 3, 3 }, m.weight.grad:shape())
    assert.same({ 6 }, m.bias.grad:shape())
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
    -- the rule holds for a group's own options and for a loaded group too
    local w = f64({ 1 }):requires_grad_()
    assert.matches("sk.optim.SGD: Nesterov momentum requires a momentum and zero dampening (parameter group 1)",
      h.err(optim.SGD, { { params = { w }, nesterov = true } }, { lr = 0.1 }), 1, true)
    local o = optim.SGD({ w }, { lr = 0.1 })
    local sd = o:state_dict()
    sd.param_groups[1].nesterov = true
    assert.matches("sk.optim.SGD:load_state_dict: Nesterov momentum requires a momentum and zero dampening " ..
      "(loaded parameter group 1)", h.err(o.load_state_dict, o, sd), 1, true)
    assert.is_false(o.param_groups[1].nesterov)
  end)

  it("gives each group its own copy of a list option: betas are never shared", function()
    local a = optim.Adam({ { params = { f64({ 1 }):requires_grad_() } }, { params = { f64({ 2 }):requires_grad_() } } })
    local b = optim.Adam({ f64({ 3 }):requires_grad_() })
    a.param_groups[1].betas[1] = 0.5
    assert.same({ 0.9, 0.999 }, a.param_groups[2].betas)
    assert.same({ 0.9, 0.999 }, b.param_groups[1].betas)
    assert.same({ 0.9, 0.999 }, optim.Adam({ f64({ 4 }):requires_grad_() }).param_groups[1].betas)
    local sd = b:state_dict()
    sd.param_groups[1].betas[2] = 0.5
    assert.same({ 0.9, 0.999 }, b.param_groups[1].betas)
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

describe("sk.optim checks its arguments", function()
  local function leaf() return f64({ 1 }):requires_grad_() end
  -- the message of optimizer(params, opts) raised at this file's line
  local function fails(msg, make, params, opts)
    local e = h.err(function() local o = make(params, opts) return o end)
    assert.matches("nn_optim_spec.lua:%d+: " .. msg:gsub("[%(%)%.%[%]%-%+%*%?]", "%%%0"), e)
  end
  local nan = 0 / 0

  it("every option against its range, in PyTorch's words, NaN included", function()
    -- a table of each optimizer's options: a bad value of each, the message
    local bad = {
      SGD = { { { lr = nan }, "Invalid learning rate: nan" }, { { lr = -0.5 }, "Invalid learning rate: -0.5" },
              { { momentum = -1 }, "Invalid momentum value: -1" }, { { momentum = nan }, "Invalid momentum value: nan" },
              { { weight_decay = -1.5 }, "Invalid weight_decay value: -1.5" },
              { { weight_decay = nan }, "Invalid weight_decay value: nan" },
              { { dampening = nan }, "Invalid dampening value: nan" },
              { { nesterov = 1 }, "option 'nesterov' must be a boolean, got number" },
              { { maximize = "yes" }, "option 'maximize' must be a boolean, got string" },
              { { lr = "0.1" }, "option 'lr' must be a number, got string" } },
      Adam = { { { lr = nan }, "Invalid learning rate: nan" }, { { eps = nan }, "Invalid epsilon value: nan" },
               { { eps = -1e-8 }, "Invalid epsilon value: -1e-08" },
               { { betas = { 1.0, 0.999 } }, "Invalid beta parameter at index 0: 1.0" },
               { { betas = { -0.1, 0.999 } }, "Invalid beta parameter at index 0: -0.1" },
               { { betas = { 0.9, nan } }, "Invalid beta parameter at index 1: nan" },
               { { betas = 0.9 }, "option 'betas' must be a list of two numbers, got number" },
               { { weight_decay = -1 }, "Invalid weight_decay value: -1" },
               { { amsgrad = 0 }, "option 'amsgrad' must be a boolean, got number" } },
    }
    bad.AdamW = bad.Adam
    for name, cases in pairs(bad) do
      for _, c in ipairs(cases) do fails("sk.optim." .. name .. ": " .. c[2], optim[name], { leaf() }, c[1]) end
    end
    -- the edges that are allowed: 0 everywhere, a beta just under 1
    local p = leaf()
    optim.Adam({ p }, { lr = 0, eps = 0, betas = { 0, 0.9999999 }, weight_decay = 0 })
    optim.SGD({ p }, { lr = 0, momentum = 0, dampening = -1, weight_decay = 0 })
    -- a group's own options are checked as the optimizer's are
    fails("sk.optim.SGD: Invalid learning rate: nan (parameter group 2)", optim.SGD,
          { { params = { leaf() } }, { params = { leaf() }, lr = nan } }, { lr = 0.1 })
    -- a group may carry keys that are not options, as PyTorch's do; they are kept as given
    local named = optim.Adam({ { params = { leaf() }, name = "encoder" } })
    assert.equal("encoder", named.param_groups[1].name)
  end)

  it("params: a list of leaf tensors or of groups, each parameter once", function()
    local p = leaf()
    fails("sk.optim.SGD: can't optimize a non-leaf Tensor", optim.SGD, { p * 2 })
    fails("sk.optim.SGD: optimizer contains a parameter group with duplicate parameters (params 1 and 3 of group 1)",
          optim.SGD, { p, leaf(), p })
    fails("sk.optim.Adam: some parameters appear in more than one parameter group", optim.Adam,
          { { params = { p } }, { params = { leaf(), p } } })
    fails("sk.optim.SGD: params[2] must be a tensor or a parameter group table, got number", optim.SGD, { p, 5 })
    fails("sk.optim.SGD: params[2] is a parameter group but params[1] is a tensor", optim.SGD, { p, { params = { leaf() } } })
    fails("sk.optim.SGD: argument 'params' must be a list of tensors or of parameter groups, got number", optim.SGD, 5)
    fails("sk.optim.SGD: argument 'options' must be a table, got number", optim.SGD, { p }, 0.1)
    fails("sk.optim.SGD: params[1] (a parameter group) must have a 'params' list of tensors, got nil", optim.SGD, { { lr = 1 } })
    fails("sk.optim.AdamW: params[1].params[2] must be a tensor, got string", optim.AdamW, { { params = { p, "w" } } })
    -- a group's params may be one tensor, as PyTorch's
    local o = optim.SGD({ { params = p }, { params = { leaf() }, lr = 0.5 } }, { lr = 0.1 })
    assert.same({ 0.1, 0.5, 1 }, { o.param_groups[1].lr, o.param_groups[2].lr, #o.param_groups[1].params })
  end)

  it("load_state_dict: PyTorch's messages, and a bad state dict leaves the optimizer as it was", function()
    local o = optim.SGD({ { params = { leaf() } }, { params = { leaf(), leaf() }, lr = 0.5 } }, { lr = 0.1 })
    local function load(sd) return h.err(function() o:load_state_dict(sd) end) end
    local pre = "nn_optim_spec.lua:%d+: sk%.optim%.SGD:load_state_dict: "
    assert.matches(pre .. "argument 'state_dict' must be a table, got number", load(5))
    assert.matches(pre .. "the state dict has no 'state' table %(got nil%)", load({}))
    assert.matches(pre .. "the state dict has no 'param_groups' list %(got nil%)", load({ state = {} }))
    assert.matches(pre .. "loaded state dict has a different number of parameter groups",
                   load({ state = {}, param_groups = { { params = { 0 } } } }))
    assert.matches(pre .. "loaded state dict contains a parameter group that doesn't match the size of optimizer's group",
                   load({ state = {}, param_groups = { { params = { 0 } }, { params = { 1 } } } }))
    assert.matches(pre .. "Invalid learning rate: nan %(loaded parameter group 2%)",
                   load({ state = {}, param_groups = { { params = { 0 }, lr = 1 }, { params = { 1, 2 }, lr = nan } } }))
    assert.matches(pre .. "state%[1%] must be a table, got number",
                   load({ state = { [1] = 5 }, param_groups = { { params = { 0 }, lr = 1 }, { params = { 1, 2 } } } }))
    assert.same({ 0.1, 0.5 }, { o.param_groups[1].lr, o.param_groups[2].lr })
    o:load_state_dict({ state = {}, param_groups = { { params = { 0 }, lr = 1 }, { params = { 1, 2 }, lr = 2 } } })
    assert.same({ 1, 2 }, { o.param_groups[1].lr, o.param_groups[2].lr })
  end)
end)

describe("Module:load_state_dict checks its arguments", function()
  it("names the argument, and a bad entry leaves the module as it was", function()
    local m = nn.Linear(2, 2)
    local w = m.weight:clone()
    local function load(...) local a = table.pack(...) return h.err(function() m:load_state_dict(table.unpack(a, 1, a.n)) end) end
    assert.matches("nn_optim_spec.lua:%d+: Module:load_state_dict: argument 'state_dict' must be a table, got number", load(5))
    assert.matches("Module:load_state_dict: argument 'strict' must be a boolean, got number", load({}, 1), 1, true)
    assert.matches("Module:load_state_dict: state_dict['bias'] must be a tensor, got number",
                   load({ weight = sk.zeros({ 2, 2 }), bias = 5 }), 1, true)
    assert.matches("size mismatch for bias", load({ weight = sk.zeros({ 2, 2 }), bias = sk.zeros({ 3 }) }), 1, true)
    assert.is_true(sk.equal(m.weight, w))
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
