-- spec/autograd_spec.lua — autograd's rules, with PyTorch's names and error texts:
-- requires_grad, .grad, accumulation, freed graphs, in-place checks, views, double
-- backward, grad mode, hooks, autograd.grad, memory.
local h = require "spec.helper"
local sk = h.sk

local function f64(v, rg) return sk.tensor(v, { dtype = "float64", requires_grad = rg ~= false }) end
local function vals(t) return t:totable() end

describe("autograd: requires_grad", function()
  it("is an option of sk.tensor and of every factory", function()
    for _, t in ipairs { sk.ones(3, { requires_grad = true }), sk.zeros({ 2, 2 }, { requires_grad = true }),
                         sk.randn(2, { requires_grad = true }), sk.rand(2, { requires_grad = true }),
                         sk.full({ 2 }, 1.5, { requires_grad = true }), sk.empty(2, { requires_grad = true }),
                         sk.ones_like(sk.ones(2), { requires_grad = true }), sk.tensor({ 1.5 }, { requires_grad = true }),
                         sk.arange(0, 3, 1, { dtype = "float32", requires_grad = true }) } do
      assert.is_true(t:requires_grad())
      assert.is_true(t:is_leaf())
      assert.is_nil(t:grad_fn())
    end
    assert.is_false(sk.ones(3):requires_grad())
    assert.is_false(sk.ones(3, { requires_grad = false }):requires_grad())
  end)

  it("is refused for integer tensors and by ops that are not factories", function()
    assert.matches("only Tensors of floating point dtype can require gradients", h.err(sk.tensor, { 1, 2 }, { requires_grad = true }), 1, true)
    assert.matches("only Tensors of floating point dtype can require gradients", h.err(function() sk.arange(3):requires_grad_() end), 1, true)
    assert.matches("sk.add: unexpected option 'requires_grad'", h.err(sk.add, sk.ones(2), sk.ones(2), { requires_grad = true }), 1, true)
    assert.matches("autograd_spec.lua:%d+: sk.tensor: ", h.err(function() return sk.tensor({ 1, 2 }, { requires_grad = true }) end))
  end)

  it("propagates to results; requires_grad_(false) only on leaves", function()
    local x = f64({ 1, 2 })
    local y = x * x
    assert.is_true(y:requires_grad())
    assert.is_false(y:is_leaf())
    assert.equal("MulBackward0", y:grad_fn():name())
    assert.equal("MulBackward1", (x * 2):grad_fn():name()) -- mul.Scalar: a number is not a tensor in sk
    assert.matches("you can only change requires_grad flags of leaf variables", h.err(function() y:requires_grad_(false) end), 1, true)
    x:requires_grad_(false)
    assert.is_false((x * 2):requires_grad())
  end)

  it("gives no history to non-differentiable results", function()
    local x = f64({ 1, 3, 2 })
    assert.is_false(x:gt(1):requires_grad())
    assert.is_false(x:argmax():requires_grad())
    local v, i = x:max(0)
    assert.is_true(v:requires_grad())
    assert.is_false(i:requires_grad())
    assert.is_false(sk.zeros_like(x):requires_grad())
  end)
end)

describe("autograd: backward and .grad", function()
  it("fills .grad of leaves and accumulates across calls", function()
    local x = f64({ 1, 2, 3 })
    assert.is_nil(x.grad)
    local function loss() return (x * x):sum() end
    loss():backward()
    assert.same({ 2, 4, 6 }, vals(x.grad))
    loss():backward()
    assert.same({ 4, 8, 12 }, vals(x.grad))
    x.grad = nil
    assert.is_nil(x.grad)
    x.grad = sk.ones(3, { dtype = "float64" })
    loss():backward()
    assert.same({ 3, 5, 7 }, vals(x.grad))
    assert.matches("assigned grad has data of a different size", h.err(function() x.grad = sk.ones(2, { dtype = "float64" }) end), 1, true)
  end)

  it("takes the gradient of a list's elements that require grad, whichever they are", function()
    local a, b = sk.tensor({ 1.0, 2 }), f64({ 3, 4 })
    local c = sk.cat({ a:to("float64"), b })
    c:mul(sk.tensor({ 1.0, 2, 3, 4 }, { dtype = "float64" })):sum():backward()
    assert.same({ 3, 4 }, vals(b.grad))
    local s = sk.stack({ a:to("float64"), b }, 1)
    local g = sk.autograd.grad(s:sum(), b)[1]
    assert.same({ 1, 1 }, vals(g))
  end)

  it("sums the gradients of a tensor used twice and reduces broadcast gradients to the input's shape", function()
    local a, b = f64({ { 1, 2 }, { 3, 4 } }), f64({ 10, 20 })
    local l = ((a * b) + a):sum()
    l:backward()
    assert.same({ { 11, 21 }, { 11, 21 } }, vals(a.grad))
    assert.same({ 4, 6 }, vals(b.grad))
  end)

  it("takes a gradient for a non-scalar output, and refuses what PyTorch refuses", function()
    local x = f64({ 1, 2, 3 })
    local y = x * 3
    y:backward(sk.tensor({ 1, 0, 2 }, { dtype = "float64" }))
    assert.same({ 3, 0, 6 }, vals(x.grad))
    local z = x * 3
    assert.matches("grad can be implicitly created only for scalar outputs", h.err(function() z:backward() end), 1, true)
    assert.matches("Mismatch in shape: grad_output[0] has a shape of [4] and output[0] has a shape of [3].",
      h.err(function() z:backward(sk.ones(4, { dtype = "float64" })) end), 1, true)
    assert.matches("element 0 of tensors does not require grad and does not have a grad_fn",
      h.err(function() sk.ones(2):sum():backward() end), 1, true)
    assert.matches("autograd_spec.lua:%d+: ", h.err(function() z:backward() end))
  end)

  it("frees the graph after backward unless retain_graph, with PyTorch's error for a second pass", function()
    local x = f64({ 1, 2 })
    local y = (x:exp() * x):sum()
    y:backward({ retain_graph = true })
    y:backward()
    assert.matches("Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed).",
      h.err(function() y:backward() end), 1, true)
  end)

  it("refuses out= when an argument requires grad", function()
    local x = f64({ 1, 2 })
    assert.matches("add(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.",
      h.err(sk.add, x, x, { out = sk.empty(2, { dtype = "float64" }) }), 1, true)
    sk.no_grad(function() sk.add(x, x, { out = sk.empty(2, { dtype = "float64" }) }) end)
  end)

  it("raises at backward for an op without a formula", function()
    -- every differentiable built-in has one: an op defined from Lua with only a CPU kernel
    local lib = sk.library("agnoformula")
    lib:define("twice(Tensor x) -> Tensor")
    lib:impl("twice", "CPU", function(x) return x * 2 end)
    local x = f64({ 1, 2, 3 })
    local y = sk.ops.agnoformula.twice(x):sum()
    assert.is_true(y:requires_grad())
    assert.matches("derivative for agnoformula::twice is not implemented", h.err(function() y:backward() end), 1, true)
    lib:close()
    local w = f64({ 1, 2 })
    local l = sk.nll_loss(sk.log_softmax(f64({ { 1, 2 } }, false), 1), sk.tensor({ 1 }), { weight = w })
    assert.matches("the derivative for 'weight' is not implemented.", h.err(function() l:backward() end), 1, true)
  end)
end)

describe("autograd: in-place ops and views", function()
  it("refuses in-place ops on leaves that require grad and on their views", function()
    local x = f64({ 1, 2 })
    assert.matches("a leaf Variable that requires grad is being used in an in-place operation.", h.err(function() x:mul_(2) end), 1, true)
    assert.matches("a view of a leaf Variable that requires grad is being used in an in-place operation.",
      h.err(function() x:narrow(0, 0, 1):mul_(2) end), 1, true)
    sk.no_grad(function() x:mul_(2) end) -- allowed under no_grad, as in PyTorch
    assert.same({ 2, 4 }, vals(x:detach()))
  end)

  it("records in-place ops on non-leaves", function()
    local x = f64({ 1, 2 })
    local y = x * 1
    y:mul_(x) -- y = x^2
    y:exp_()
    y:sum():backward()
    assert.equal("ExpBackward0", y:grad_fn():name())
    local z = x * 1
    z:mul_(z) -- PyTorch refuses this too: mul_ saved z, which it then modified
    -- (the message names the op that made the saved value: z = x * 1, mul.Scalar)
    assert.matches("which is output 0 of MulBackward1, is at version 1; expected version 0 instead",
      h.err(function() z:sum():backward() end), 1, true)
    h.assert_close(vals(x.grad), { 2 * math.exp(1), 4 * math.exp(4) }, 1e-12)
  end)

  it("detects a saved tensor modified in place, with PyTorch's message", function()
    local x = f64({ 1, 2, 3 })
    local y = x:exp()
    local z = y * 1
    local w = (y:sigmoid()):sum() -- sigmoid saves its output; exp saved y
    y:add_(1)
    local msg = h.err(function() w:backward() end)
    assert.matches("one of the variables needed for gradient computation has been modified by an inplace operation: [float64 [3]], which is output 0 of ", msg, 1, true)
    assert.matches("is at version 1; expected version 0 instead.", msg, 1, true)
    local e = f64({ 1, 2, 3 })
    local s = e:exp()
    local m = s:sum()
    s:mul_(2) -- ExpBackward0 saved s itself
    assert.matches("[float64 [3]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead.",
      h.err(function() m:backward() end), 1, true)
    assert.is_true(z:requires_grad())
  end)

  it("refuses in-place ops on the views an op returned several of", function()
    local x = f64({ { 1, 2 }, { 3, 4 } })
    local parts = (x * 1):unbind(0)
    assert.matches("Output 0 of UnbindBackward0 is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.",
      h.err(function() parts[1]:mul_(2) end), 1, true)
    local halves = (x * 1):split(1, 1)
    assert.matches("Output 1 of SplitBackward0 is a view", h.err(function() halves[2]:add_(1) end), 1, true)
  end)

  it("takes gradients through views to their base", function()
    local x = f64({ { 1, 2, 3 }, { 4, 5, 6 } })
    local l = (x:select(1, 0) * 2 + x:narrow(1, 1, 2):sum(1) + x:t()[{ 2, 1 }]):sum()
    l:backward()
    assert.same({ { 2, 1, 1 }, { 2, 1, 3 } }, vals(x.grad)) -- the scalar broadcast over 2 entries: 1 + 2
  end)

  it("rebases the base's history for an in-place op on a view (CopySlices)", function()
    local x = f64({ 1, 2, 3 })
    local y = x * 1
    y:narrow(0, 1, 2):mul_(x:narrow(0, 0, 2)) -- y = {x0, x1*x0, x2*x1}
    assert.equal("CopySlices", y:grad_fn():name())
    y:sum():backward()
    -- d/dx0 = 1 + x1 = 3; d/dx1 = x0 + x2 = 4; d/dx2 = x1 = 2
    assert.same({ 3, 4, 2 }, vals(x.grad))
  end)

  it("writes into a buffer that does not require grad through a view", function()
    local x = f64({ 2, 3 })
    local buf = sk.zeros(4, { dtype = "float64" })
    buf:narrow(0, 1, 2):copy_(x)
    assert.is_true(buf:requires_grad())
    local l = (buf * buf):sum()
    l:backward()
    assert.same({ 4, 6 }, vals(x.grad))
  end)

  it("makes a view's history again after its base is modified in place", function()
    local x = f64({ 1, 2, 3 })
    local y = x * 2
    local v = y:narrow(0, 0, 2) -- taken before the in-place op
    y:mul_(3)
    v:sum():backward()
    assert.same({ 6, 6, 0 }, vals(x.grad))
    local b = sk.zeros(3, { dtype = "float64" })
    local bv = b:narrow(0, 1, 2) -- a view of a tensor with no history yet
    b:copy_(x)
    local l = (bv * 1):sum()
    l:backward()
    assert.same({ 6, 7, 1 }, vals(x.grad))
  end)
end)

describe("autograd: double backward", function()
  it("differentiates gradients made with create_graph", function()
    local x = f64({ 1, 2 })
    local y = (x * x * x):sum()
    local g = sk.autograd.grad(y, x, { create_graph = true })[1]
    assert.same({ 3, 12 }, vals(g:detach()))
    assert.is_true(g:requires_grad())
    g:sum():backward()
    assert.same({ 6, 12 }, vals(x.grad))
  end)

  it("through softmax, matmul and reductions (Hessian-vector product)", function()
    local w = f64({ { 0.5, -1 }, { 2, 0.25 } })
    local xin = sk.tensor({ { 1, 2 }, { -1, 0.5 } }, { dtype = "float64" })
    local loss = sk.softmax(xin:mm(w), 1):pow(2):sum()
    local g = sk.autograd.grad(loss, w, { create_graph = true })[1]
    local v = sk.tensor({ { 1, 0 }, { 0, 1 } }, { dtype = "float64" })
    local hv = sk.autograd.grad((g * v):sum(), w)[1]
    -- against finite differences of the gradient along v
    local function grad_at(wd)
      local ww = wd:clone():requires_grad_()
      return sk.autograd.grad(sk.softmax(xin:mm(ww), 1):pow(2):sum(), ww)[1]
    end
    local eps = 1e-6
    local fd = (grad_at(w:detach() + v * eps) - grad_at(w:detach() - v * eps)) / (2 * eps)
    h.assert_close(vals(hv), vals(fd), 1e-6)
  end)
end)

describe("autograd: grad mode", function()
  it("no_grad and enable_grad are scoped and restore the mode on errors", function()
    local x = f64({ 1, 2 })
    assert.is_true(sk.is_grad_enabled())
    local y, n = sk.no_grad(function(a, k) return a * k, 7 end, x, 2)
    assert.equal(7, n)
    assert.is_false(y:requires_grad())
    assert.is_true(sk.is_grad_enabled())
    assert.matches("boom", h.err(sk.no_grad, function() error("boom") end))
    assert.is_true(sk.is_grad_enabled())
    sk.no_grad(function()
      assert.is_false(sk.is_grad_enabled())
      assert.is_true(sk.enable_grad(function() return (x * 2):requires_grad() end))
      assert.is_false(sk.is_grad_enabled())
    end)
    sk.set_grad_enabled(false)
    assert.is_false((x * 2):requires_grad())
    sk.set_grad_enabled(true)
    assert.is_true((x * 2):requires_grad())
  end)

  it("detach and detach_ cut the graph; the data is shared", function()
    local x = f64({ 1, 2 })
    local y = x * 2
    local d = y:detach()
    assert.is_false(d:requires_grad())
    assert.is_true(d:is_leaf())
    assert.is_true(d:shares_storage(y))
    y:detach_()
    assert.is_false(y:requires_grad())
    assert.is_nil(y:grad_fn())
  end)
end)

describe("autograd: graph nodes and hooks", function()
  it("exposes grad_fn and next_functions", function()
    local a, b = f64({ 1 }), f64({ 2 })
    local c = (a * b):exp()
    local fn = c:grad_fn()
    assert.equal("ExpBackward0", fn:name())
    local nf = fn:next_functions()
    assert.equal(1, #nf)
    assert.equal("MulBackward0", nf[1][1]:name())
    local leaves = nf[1][1]:next_functions()
    assert.equal("AccumulateGrad", leaves[1][1]:name())
    assert.equal(0, leaves[1][2])
  end)

  it("runs tensor hooks, which may replace the gradient", function()
    local x = f64({ 1, 2 })
    local seen
    x:register_hook(function(g) seen = g:totable() end)
    local y = x * 3
    y:register_hook(function(g) return g * 10 end)
    y:sum():backward()
    assert.same({ 30, 30 }, seen)
    assert.same({ 30, 30 }, vals(x.grad))
    assert.matches("hook: .*oops", h.err(function()
      local z = x * 1
      z:register_hook(function() error("oops") end)
      z:sum():backward()
    end))
  end)

  it("retain_grad keeps the gradient of a non-leaf", function()
    local x = f64({ 1, 2 })
    local y = x * 3
    y:retain_grad()
    local l = (y * y):sum()
    l:backward()
    assert.same({ 6, 12 }, vals(y.grad))
    assert.same({ 18, 36 }, vals(x.grad))
  end)
end)

describe("autograd: sk.autograd.grad", function()
  it("returns gradients without touching .grad", function()
    local a, b = f64({ 1, 2 }), f64({ 3, 4 })
    local ga, gb = table.unpack(sk.autograd.grad((a * b):sum(), { a, b }))
    assert.same({ 3, 4 }, vals(ga))
    assert.same({ 1, 2 }, vals(gb))
    assert.is_nil(a.grad)
  end)

  it("follows PyTorch for unused inputs and grad_outputs", function()
    local a, b = f64({ 1, 2 }), f64({ 3, 4 })
    local y = a * 2
    assert.matches("One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.",
      h.err(sk.autograd.grad, y:sum(), { a, b }, { retain_graph = true }), 1, true)
    local r = sk.autograd.grad(y:sum(), { a, b }, { allow_unused = true, retain_graph = true })
    assert.same({ 2, 2 }, vals(r[1]))
    assert.is_nil(r[2])
    local g = sk.autograd.grad(y, a, { grad_outputs = sk.tensor({ 1, -1 }, { dtype = "float64" }) })[1]
    assert.same({ 2, -2 }, vals(g))
  end)

  it("backward(inputs =) accumulates only into those", function()
    local a, b = f64({ 1, 2 }), f64({ 3, 4 })
    local l = (a * b):sum()
    l:backward({ inputs = { a } })
    assert.same({ 3, 4 }, vals(a.grad))
    assert.is_nil(b.grad)
    assert.matches("'inputs' argument to backward() cannot be empty.", h.err(function() (a * b):sum():backward({ inputs = {} }) end), 1, true)
  end)
end)

describe("autograd: threads", function()
  it("runs backward on the calling thread with the kernels' parallelism: the same bits every time, on 1 and 2 threads", function()
    local function grads(threads)
      sk.set_num_threads(threads)
      sk.manual_seed(4)
      local w = sk.randn(300, 200, { requires_grad = true })
      local x = sk.randn(64, 300)
      local l = sk.softmax(x:matmul(w):tanh(), 1):pow(2):sum()
      l:backward()
      return w.grad:totable()
    end
    local a, b = grads(2), grads(2)
    assert.same(a, b)
    local c, d = grads(1), grads(1)
    assert.same(c, d)
    sk.set_num_threads(2)
  end)
end)

describe("autograd: memory", function()
  it("frees a chain of 200,000 nodes without deep recursion", function()
    local x = f64({ 1 })
    local y = x
    for _ = 1, 200000 do y = y * 1 end
    y = nil
    collectgarbage()
    collectgarbage()
    assert.is_nil(y)
  end)

  it("frees saved values with their graph; a .grad made with create_graph forms no cycle with its leaf", function()
    local core = require "sk.core"
    collectgarbage()
    collectgarbage()
    local base = core.autograd.saved_bytes()
    local x = sk.randn(256, 256, { dtype = "float64", requires_grad = true })
    local l = (x * x):exp():sum()
    assert.is_true(core.autograd.saved_bytes() >= base + 2 * 256 * 256 * 8)
    l:backward({ create_graph = true }) -- x.grad = 2x exp(x^2), whose graph saved x
    l = nil
    collectgarbage()
    collectgarbage()
    assert.is_true(core.autograd.saved_bytes() > base) -- x.grad's graph
    x = nil
    collectgarbage()
    collectgarbage()
    assert.equal(base, core.autograd.saved_bytes())
  end)

  it("backward through a long chain", function()
    local x = f64({ 2 })
    local y = x
    for _ = 1, 5000 do y = y * 1.0001 end
    y:sum():backward()
    h.assert_close(vals(x.grad), { 1.0001 ^ 5000 }, 1e-9)
  end)
end)

describe("autograd: gradients defined from Lua", function()
  it("sk.autograd.Function: forward under no_grad, backward with ctx.saved_tensors", function()
    local calls = 0
    local Exp = sk.autograd.Function {
      name = "MyExp",
      forward = function(ctx, x, k)
        assert.is_false(sk.is_grad_enabled())
        local y = x:exp() * k
        ctx:save_for_backward(y)
        ctx.k = k
        return y
      end,
      backward = function(ctx, g)
        calls = calls + 1
        assert.same({ true, false }, ctx.needs_input_grad)
        return g * ctx.saved_tensors[1], nil
      end,
    }
    local x = f64({ 0.5, 1 })
    local y = Exp(x, 2)
    assert.equal("MyExpBackward", y:grad_fn():name())
    y:sum():backward()
    h.assert_close(vals(x.grad), { 2 * math.exp(0.5), 2 * math.exp(1) }, 1e-12)
    assert.equal(1, calls)
    assert.is_true(sk.autograd.gradcheck(function(a) return Exp:apply(a, 3) end, { f64({ 0.1, -0.4 }) }))
    assert.is_false(sk.no_grad(function() return Exp(x, 2) end):requires_grad())
  end)

  it("checks what backward returns and what was saved, as PyTorch", function()
    local Bad = sk.autograd.Function {
      forward = function(ctx, a, b) return a * b end,
      backward = function(ctx, g) return g end,
    }
    local a, b = f64({ 1 }), f64({ 2 })
    assert.matches("function FunctionBackward returned an incorrect number of gradients (expected 2, got 1)",
      h.err(function() Bad(a, b):sum():backward() end), 1, true)
    local Shape = sk.autograd.Function {
      forward = function(ctx, x) return x * 2 end,
      backward = function(ctx, g) return sk.ones(5, { dtype = "float64" }) end,
    }
    assert.matches("Function FunctionBackward returned an invalid gradient at index 0 - got [5] but expected shape compatible with [2]",
      h.err(function() Shape(f64({ 1, 2 })):sum():backward() end), 1, true)
    local Saves = sk.autograd.Function {
      forward = function(ctx, x) ctx:save_for_backward(x); return x * 2 end,
      backward = function(ctx, g) return g * ctx.saved_tensors[1] end,
    }
    local x = f64({ 1, 2 })
    local y = x * 1
    local z = Saves(y)
    y:add_(1)
    assert.matches("one of the variables needed for gradient computation has been modified by an inplace operation",
      h.err(function() z:sum():backward() end), 1, true)
    local w = Saves(x * 1)
    w:sum():backward()
    assert.matches("Trying to backward through the graph a second time", h.err(function() w:sum():backward() end), 1, true)
  end)

  it("mark_dirty, mark_non_differentiable, set_materialize_grads", function()
    local Twice = sk.autograd.Function {
      forward = function(ctx, x) x:mul_(2); ctx:mark_dirty(x); return x end,
      backward = function(ctx, g) return g * 2 end,
    }
    local x = f64({ 1, 2 })
    local y = x * 1
    local r = Twice(y)
    assert.is_true(rawequal(r, y))
    r:sum():backward()
    assert.same({ 2, 2 }, vals(x.grad))
    assert.matches("a leaf Variable that requires grad has been used in an in-place operation.",
      h.err(function() Twice(f64({ 1 })) end), 1, true)
    local seen
    local Two = sk.autograd.Function {
      forward = function(ctx, x)
        ctx:set_materialize_grads(false)
        local idx = x:argmax()
        ctx:mark_non_differentiable(idx)
        return x * 1, idx
      end,
      backward = function(ctx, g1, g2) seen = g2; return g1 end,
    }
    local a, i = Two(f64({ 1, 3 }))
    assert.is_false(i:requires_grad())
    a:sum():backward()
    assert.is_nil(seen)
  end)

  it("lib:autograd gives an op defined from Lua its gradient", function()
    local lib = sk.library("agspec")
    lib:define("cube(Tensor x) -> Tensor")
    lib:impl("cube", "CPU", function(x) return x * x * x end)
    lib:autograd("cube", {
      setup_context = function(ctx, inputs, output) ctx:save_for_backward(inputs[1]) end,
      backward = function(ctx, g) local x = ctx.saved_tensors[1]; return g * 3 * x * x end,
    })
    local x = f64({ 0.5, -2 })
    local y = sk.ops.agspec.cube(x)
    assert.equal("CubeBackward", y:grad_fn():name())
    assert.same({ 0.75, 12 }, vals(sk.autograd.grad(y:sum(), x)[1]))
    assert.is_true(sk.autograd.gradcheck(function(a) return sk.ops.agspec.cube(a) end, { f64({ 0.3, 0.7 }) }))
    lib:define("inc_(Tensor(a!) self) -> Tensor(a!)")
    assert.matches("Cannot register autograd formula for non-functional operator agspec::inc_",
      h.err(function() lib:autograd("inc_", { backward = function() end }) end), 1, true)
    lib:close()
  end)
end)

describe("autograd: custom nodes and hooks hold their Lua values", function()
  -- How many of the tables made by track() the collector has finalized: a finalizer
  -- runs once the table is unreachable, so a count proves a value was freed.
  local freed = 0
  local function track() return setmetatable({}, { __gc = function() freed = freed + 1 end }) end
  local function settle()
    for _ = 1, 4 do collectgarbage("collect"); local _ = sk.ones(1) + 1 end -- an op call drops what nodes let go
  end

  it("gives an output that gets no gradient zeros of its dtype and shape, or nil without materialized grads", function()
    local seen = {}
    local function make(mark, materialize)
      return sk.autograd.Function {
        forward = function(ctx, a)
          local i = a:argmax()
          if mark then ctx:mark_non_differentiable(i) end
          if materialize == false then ctx:set_materialize_grads(false) end
          return a * 2, i
        end,
        backward = function(ctx, g, gi) seen[#seen + 1] = gi or "nil"; return g * 2 end,
      }
    end
    for _, case in ipairs { { true }, { false }, { true, false }, { false, false } } do
      local x = sk.ones(3, { requires_grad = true })
      local y = make(case[1], case[2])(x)
      y:sum():backward()
      assert.same({ 2, 2, 2 }, vals(x.grad))
    end
    assert.equal(4, #seen)
    for k = 1, 2 do -- PyTorch: tensor(0), an int64 zero of the argmax's shape
      assert.equal("int64", seen[k]:dtype())
      assert.same({}, seen[k]:shape())
      assert.equal(0, seen[k]:item())
    end
    assert.same({ "nil", "nil" }, { seen[3], seen[4] })
    -- lib:autograd goes through the same node: an op with an integer output
    local lib = sk.library("agnograd")
    lib:define("twice_argmax(Tensor x) -> (Tensor, Tensor)")
    lib:impl("twice_argmax", "CPU", function(x) return x * 2, x:argmax() end)
    local gi
    lib:autograd("twice_argmax", { backward = function(ctx, g, g2) gi = g2; return g * 2 end })
    local x = sk.ones(2, { requires_grad = true })
    local y = sk.ops.agnograd.twice_argmax(x)
    y:sum():backward()
    assert.same({ 2, 2 }, vals(x.grad))
    assert.equal("int64", gi:dtype())
    assert.equal(0, gi:item())
    lib:close()
  end)

  it("refuses a hook's gradient of another size or dtype, on a leaf and on a non-leaf, as PyTorch", function()
    local x = sk.ones(3, { requires_grad = true })
    x:register_hook(function() return sk.ones(2) end)
    assert.matches("hook '[^']+:%d+' has changed the size of value", h.err(function() (x * 2):sum():backward() end))
    assert.is_nil(x.grad)
    x = sk.ones(3, { requires_grad = true })
    x:register_hook(function(g) return g:double() end)
    assert.matches("hook '[^']+:%d+' has changed the type of value %(was float32 got float64%)",
      h.err(function() (x * 2):sum():backward() end))
    assert.is_nil(x.grad)
    x = sk.ones(3, { requires_grad = true })
    local y = x * 2
    y:register_hook(function() return sk.ones(3, 1) end) -- broadcastable is still another size
    assert.matches("hook '[^']+:%d+' has changed the size of value", h.err(function() y:sum():backward() end))
    y = x * 2
    y:register_hook(function(g) return g:double() end)
    assert.matches("has changed the type of value (was float32 got float64)", h.err(function() y:sum():backward() end), 1, true)
    y = x * 2
    y:register_hook(function(g) return g * 3 end) -- same size and dtype: taken
    y:sum():backward()
    assert.same({ 6, 6, 6 }, vals(x.grad))
  end)

  it("frees a Function's ctx and outputs when the output it saved is dropped, with or without backward", function()
    local Double = sk.autograd.Function {
      forward = function(ctx, a) local y = a * 2; ctx:save_for_backward(y); ctx.tag = track(); return y end,
      backward = function(ctx, g) assert.is_truthy(ctx.saved_tensors[1]); return g * 2 end,
    }
    settle()
    freed = 0
    local x = sk.ones(3, { requires_grad = true })
    for k = 1, 20 do
      local y = Double(x)
      if k % 2 == 0 then y:sum():backward() end
    end
    settle()
    assert.equal(20, freed)
    assert.same({ 20, 20, 20 }, vals(x.grad))
  end)

  it("frees a hook whose closure holds the tensor it is registered on, on a leaf and on a non-leaf", function()
    settle()
    freed = 0
    local x = sk.ones(3, { requires_grad = true })
    for _ = 1, 10 do
      local t = sk.ones(3, { requires_grad = true })
      local tag = track()
      t:register_hook(function(g) local _ = tag; return g + t end)
      local y = x * 2
      local tag2 = track()
      y:register_hook(function(g) local _ = tag2; return g * y end)
    end
    settle()
    assert.equal(20, freed)
  end)

  it("keeps a self-holding hook while another graph still reaches it, runs it with its tensor, then frees it", function()
    local x = sk.ones(3, { requires_grad = true })
    local function loss()
      local y = x * 2
      local tag = track()
      y:register_hook(function(g) local _ = tag; return g * y end) -- y: 2 each
      return y:sum() * 1
    end
    settle()
    freed = 0
    local l = loss()
    settle()
    assert.equal(0, freed)
    l:backward({ retain_graph = true })
    assert.same({ 4, 4, 4 }, vals(x.grad))
    l = nil
    settle()
    assert.equal(1, freed)
  end)

  it("frees a Function whose ctx holds its output, and keeps running a hook whose tensor was closed", function()
    local Keep = sk.autograd.Function {
      forward = function(ctx, a) local y = a * 2; ctx.y = y; ctx.tag = track(); return y end,
      backward = function(ctx, g) return g * 2 end,
    }
    settle()
    freed = 0
    local x = sk.ones(3, { requires_grad = true })
    for _ = 1, 5 do local _ = Keep(x) end
    settle()
    assert.equal(5, freed)
    local y = x * 2
    local calls = 0
    y:register_hook(function(g) calls = calls + 1; return g end)
    local l = y:sum()
    y:close()
    settle()
    l:backward()
    assert.equal(1, calls)
    assert.same({ 2, 2, 2 }, vals(x.grad))
  end)

  it("holds a leaf while its hooks run: a hook that closes its tensor frees nothing under them", function()
    local w = sk.ones(3, { requires_grad = true })
    local x = sk.ones(3, { requires_grad = true })
    local seen = 0
    x:register_hook(function(g) seen = seen + 1; return g end)
    x:register_hook(function(g) x:close(); return g * 2 end) -- a leaf's hooks run newest first: this one first
    local l = (x * w):sum()
    l:backward()
    assert.equal(1, seen)
    assert.same({ 1, 1, 1 }, vals(w.grad))
    assert.matches("closed tensor", h.err(function() return x:numel() end), 1, true)
  end)

  it("routes a Function's in-place write into a view through the argument it wrote, and refuses more than one output then, as PyTorch", function()
    local Scale = sk.autograd.Function {
      forward = function(ctx, w, a) a:mul_(w); ctx:mark_dirty(a); ctx:save_for_backward(w); return a end,
      backward = function(ctx, g) return g:sum(), g * ctx.saved_tensors[1] end,
    }
    local t = sk.ones(3, 4, { requires_grad = true })
    local w = sk.tensor(3.0, { requires_grad = true })
    local y = Scale(w, (t * 1)[{ { 0, 3, 2 } }]) -- rows 0 and 2 of a view, written in place
    y:sum():backward()
    -- d/dt: 3 on the rows written, 0 on row 1 (only the view's sum is taken); d/dw = 8
    assert.same({ { 3, 3, 3, 3 }, { 0, 0, 0, 0 }, { 3, 3, 3, 3 } }, vals(t.grad))
    assert.equal(8, w.grad:item())
    local Two = sk.autograd.Function {
      forward = function(ctx, a) a:mul_(2); ctx:mark_dirty(a); local i = a:argmax(); ctx:mark_non_differentiable(i); return i, a end,
      backward = function(ctx, gi, g) return g * 2 end,
    }
    assert.matches("If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return more than one Tensor.",
      h.err(function() return Two((t * 1)[{ { 0, 3, 2 } }]) end), 1, true)
  end)

  it("releases the hooks of more than 256 tensors dropped at once", function()
    settle()
    freed = 0
    local ts = {}
    for k = 1, 300 do
      ts[k] = sk.ones(2, { requires_grad = true })
      local tag = track()
      ts[k]:register_hook(function(g) local _ = tag; return g end)
    end
    ts = nil
    settle()
    assert.equal(300, freed)
  end)

  it("keeps a leaf's hook while a graph can still run it, whatever the collector has done to the leaf's box", function()
    -- a finalizer made after x's box runs before the box's own, in the cycle that collects both:
    -- the graph reaches x through its accumulator there, and x's hook must still be there
    settle()
    local ran, ok, err = 0, nil, nil
    local x = sk.ones(2, { requires_grad = true })
    x:register_hook(function(g) ran = ran + 1; return g end)
    local y = (x * 2):sum()
    settle() -- what is sole is decided again
    local probe = setmetatable({}, { __gc = function() ok, err = pcall(y.backward, y, { retain_graph = true }) end })
    x, probe = nil, nil
    settle()
    assert.is_true(ok, tostring(err))
    assert.equal(1, ran)
  end)

  it("frees a Function's ctx that saved its output, after a backward with create_graph", function()
    settle()
    freed = 0
    local F = sk.autograd.Function {
      forward = function(ctx, a)
        ctx.tag = track()
        local y = a * 2
        ctx:save_for_backward(y)
        return y
      end,
      backward = function(ctx, g) return g * 2 end,
    }
    for _ = 1, 10 do
      local x = sk.ones(4, { requires_grad = true })
      F(x):sum():backward({ create_graph = true })
      assert.same({ 2, 2, 2, 2 }, vals(x.grad))
    end
    settle()
    assert.equal(10, freed)
  end)
end)
