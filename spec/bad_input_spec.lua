-- spec/bad_input_spec.lua — every wrong call is a Lua error naming the op, the argument and what was expected
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

describe("bad input", function()
  it("names unknown dtypes and devices", function()
    assert.matches("sk.zeros: argument 'dtype': unknown dtype 'float8'", h.err(sk.zeros, {2}, {dtype = "float8"}))
    assert.matches("sk.zeros: argument 'device': unknown device 'tpu'", h.err(sk.zeros, {2}, {device = "tpu"}))
    assert.matches("invalid device 'cuda:x'", h.err(sk.zeros, {2}, {device = "cuda:x"}))
    assert.matches("Tensor:to: argument 'device': unknown device 'float8'", h.err(function() return T({1}):to("float8") end))
  end)
  it("refuses negative and overflowing sizes", function()
    assert.matches("sk.empty: .*negative dimension %-2", h.err(sk.empty, {3, -2}))
    assert.matches("sk.zeros: .*overflow", h.err(sk.zeros, {1 << 40, 1 << 40}))
    assert.matches("sk.zeros: argument 'size' has 17 dimensions, but tensors have at most 16", h.err(sk.zeros, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}))
  end)
  it("names the argument of the wrong type", function()
    assert.matches("sk.mm: argument 'mat2' %(position 2%) expected a tensor, got string", h.err(sk.mm, T({{1.0}}), "x"))
    assert.matches("sk.sum: argument 'dim' %(position 2%) expected an integer or a list of integers, got string",
      h.err(sk.sum, T({1.0}), "x"))
    assert.matches("Tensor:view: argument 'size' %(position 2%) expected", h.err(function() return T({1.0}):view(true) end))
    -- a string is read as view.dtype's dtype name, and that overload's reason is the one reported
    assert.matches("Tensor:view: argument 'dtype': unknown dtype 'a'", h.err(function() return T({1.0}):view("a") end))
    assert.matches("sk.clamp: option 'min' expected a number or boolean, got table", h.err(sk.clamp, T({1.0}), {min = {}}))
    assert.matches("too many arguments", h.err(sk.neg, T({1.0}), T({1.0})))
  end)
  it("names dims out of range", function()
    assert.matches("sk.sum: argument 'dim': dimension out of range %(expected to be in range of %[%-2, 1%], but got 2%)",
      h.err(sk.sum, T({{1.0}}), 2))
    assert.matches("Tensor:select: .*index 5 out of range", h.err(function() return T({1, 2}):select(0, 5) end))
  end)
  it("refuses an out of the wrong dtype and leaves it untouched", function()
    local out = sk.zeros({2}, {dtype = "int32"})
    assert.matches("sk.div: result type float32 can't be cast to the desired output type int32 %(argument 'out'%)",
      h.err(sk.div, T({1, 2}), T({2, 2}), {out = out}))
    assert.same({0, 0}, out:totable())
    assert.matches("sk.mm: argument 'out' has dtype int32, expected float32",
      h.err(sk.mm, T({{1.0}}), T({{1.0}}), {out = sk.zeros({1, 1}, {dtype = "int32"})}))
  end)
  it("refuses writes through overlapping memory", function()
    local a = sk.arange(4, {dtype = "float32"})
    assert.matches("sk.add: unsupported operation: some elements of the input tensor 'other'",
      h.err(sk.add, a:narrow(0, 0, 3), a:narrow(0, 1, 3), {out = a:narrow(0, 1, 3):t():t():narrow(0, 0, 3)})
      :gsub("'self'", "'other'"))
    local e = sk.zeros({1}):expand({3})
    assert.matches("more than one element of the written%-to tensor", h.err(function() return e:add_(1) end))
  end)
  it("keeps the VM alive after errors and frees what was made", function()
    for _ = 1, 100 do pcall(sk.add, T({1.0, 2.0}), T({1.0, 2.0, 3.0})) end
    collectgarbage()
    assert.same({2, 4}, (T({1, 2}) * 2):totable())
  end)
end)

describe("dtypes", function()
  local all = { "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" }
  it("compare, sum and copy in every dtype", function()
    for _, dt in ipairs(all) do
      local x = T({0, 1, 1}, {dtype = dt})
      assert.same({false, true, true}, x:gt(T({0, 0, 0}, {dtype = dt})):totable(), dt)
      local s = x:sum():item()
      assert.equal(2, s, dt)
      assert.equal(dt, x:clone():dtype())
      assert.same(x:totable(), x:to("float64"):to(dt):totable(), dt)
    end
  end)
  it("promote mixed dtypes as PyTorch", function()
    local cases = {
      {"uint8", "int8", "int16"}, {"int32", "int64", "int64"}, {"float16", "bfloat16", "float32"},
      {"bool", "uint8", "uint8"}, {"int64", "float16", "float16"}, {"float32", "float64", "float64"},
    }
    for _, c in ipairs(cases) do
      assert.equal(c[3], (T({1}, {dtype = c[1]}) + T({1}, {dtype = c[2]})):dtype(), c[1] .. "+" .. c[2])
    end
    -- zero-dim tensors only raise the category
    assert.equal("int8", (T({1}, {dtype = "int8"}) + T(1, {dtype = "int64"})):dtype())
    assert.equal("float64", (T({1}, {dtype = "int8"}) + T(1.0, {dtype = "float64"})):dtype())
    assert.equal("float32", (T({1}, {dtype = "int8"}) + 1.5):dtype())
    assert.equal("float16", (T({1}, {dtype = "float16"}) + 2.5):dtype())
  end)
  it("compute half types in float and round once", function()
    local x = T({1000, 0.1}, {dtype = "float16"})
    assert.same({2000, 0.199951171875}, (x + x):totable())
    assert.same({1, 0.5}, sk.mm(T({{1, 0.5}}, {dtype = "bfloat16"}):t(), T({{1}}, {dtype = "bfloat16"})):view(2):totable())
  end)
  it("matmul in float64 and integers", function()
    assert.same({{19, 22}, {43, 50}}, sk.mm(T({{1, 2}, {3, 4}}, {dtype = "float64"}), T({{5, 6}, {7, 8}}, {dtype = "float64"})):totable())
    assert.same({{19, 22}, {43, 50}}, sk.mm(T({{1, 2}, {3, 4}}), T({{5, 6}, {7, 8}})):totable())
  end)
end)

describe("options tables of the Lua-side functions", function()
  it("are checked by one rule, in one wording, naming the options expected, at the caller's line", function()
    local x = sk.ones(2, { requires_grad = true })
    local y = (x * 2):sum()
    local cases = {
      { "sk.autograd.grad: unexpected option 'retain' (expected allow_unused, create_graph, grad_outputs, retain_graph)",
        sk.autograd.grad, y, x, { retain = true } },
      { "sk.autograd.gradcheck: unexpected option 'tol' (expected atol, eps, raise_exception, rtol)",
        sk.autograd.gradcheck, function(a) return a * 2 end, { x }, { tol = 1 } },
      { "sk.load: unexpected option 'map' (expected device, mmap)", sk.load, "x.npy", { map = true } },
      { "sk.backends.register: unexpected option 'copy' (expected fallback, on_copy)", sk.backends.register, "npu9",
        { copy = true } },
      { "sk.optim.SGD: unexpected option 'nesterv' (expected dampening, lr, maximize, momentum, nesterov, weight_decay)",
        sk.optim.SGD, { x }, { nesterv = true } },
      { "sk.autograd.grad: argument 'options' must be a table, got number", sk.autograd.grad, y, x, 5 },
      { "sk.save: argument 'options' must be a table, got a tensor", sk.save, x, "x.npy", x },
    }
    for _, c in ipairs(cases) do
      local ok, e = pcall(function() c[2](table.unpack(c, 3)) end) -- not a tail call: the line is this one
      assert.is_false(ok, c[1])
      assert.matches("^spec/bad_input_spec%.lua:%d+: " .. c[1]:gsub("%p", "%%%0"), tostring(e))
    end
  end)
end)
