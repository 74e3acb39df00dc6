-- spec/opinfo_errors_spec.lua — calls from PyTorch 1.13's OpInfo samples that sk refused or answered
-- unclearly: valid input runs (values by hand or from PyTorch 1.13), a bad one names the op and the argument
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

describe("overload choice", function()
  it("an out option picks the out variant of the overload the other arguments pick", function()
    local a, b = T({1, 5, 3}), T({4, 2, 6})
    local c = sk.empty({3})
    assert.equal(c, sk.max(a, b, {out = c})) -- max.out: maximum into out
    assert.same({4, 5, 6}, c:totable())
    assert.equal(c, sk.min(a, b, {out = c}))
    assert.same({1, 2, 3}, c:totable())
    local v, i = sk.empty({3}), sk.empty({3}, {dtype = "int64"})
    sk.max(T({{1.5, 7, 3}, {4, 2, 6}}), 0, {out = {v, i}}) -- max.dim_max, as before
    assert.same({4, 7, 6}, v:totable())
    assert.same({1, 0, 1}, i:totable())
  end)
  it("the out rule holds for every overload set with out variants", function()
    local x = T({{1.5, 5, 3}, {2, 8, 1}})
    local c = sk.empty({2, 3})
    sk.clamp(x, 2, 4, {out = c}) -- clamp.out (Scalar bounds)
    assert.same({{2, 4, 3}, {2, 4, 2}}, c:totable())
    sk.clamp(x, T({2.0}), T({4.0}), {out = c}) -- clamp.Tensor_out
    assert.same({{2, 4, 3}, {2, 4, 2}}, c:totable())
    local s = sk.empty({3})
    sk.std(x, 0, {correction = 0, out = s}) -- population std of each column: |a - b| / 2
    assert.same({0.25, 1.5, 1}, s:totable())
    local v, i = sk.empty({2, 2}), sk.empty({2, 2}, {dtype = "int64"})
    sk.topk(x, 2, {out = {v, i}})
    assert.same({{5, 3}, {8, 2}}, v:totable())
    assert.same({{1, 2}, {1, 0}}, i:totable())
  end)
  it("says when the out option does not fit the overload the arguments pick", function()
    assert.matches("sk.max: option 'out' expected 2 tensors %(a list%), got 1",
      h.err(sk.max, T({{1, 2}}), 0, {out = sk.empty({2})}))
    assert.matches("sk.median: median has no out variant %(its arguments take no 'out' option%)",
      h.err(sk.median, T({1, 5, 3}), {out = sk.empty({})}))
  end)
  it("a number given by option weighs like one given by position", function()
    local a = T({1, 5, 3})
    assert.same({1, 1, 5, 5, 3, 3}, sk.repeat_interleave(a, {repeats = 2}):totable()) -- repeat_interleave.self_int
    assert.same({1, 1, 5, 5, 3, 3}, a:repeat_interleave({repeats = 2, dim = 0}):totable())
    assert.same({0, 1, 1, 2, 2, 2}, sk.repeat_interleave(T({1, 2, 3})):totable()) -- repeat_interleave.Tensor, as before
  end)
  it("refuses an argument given by position and by option", function()
    assert.matches("sk.add: argument 'other' given by position %(2%) and by option",
      h.err(sk.add, T({1}), T({2}), {other = T({3})}))
  end)
end)

describe("valid input that sk refused", function()
  it("arange from start to the same end is empty in every float dtype", function()
    for _, dt in ipairs { "float16", "bfloat16", "float32", "float64" } do
      local r = sk.arange(1.1, 1.1, -1.0, {dtype = dt})
      assert.same({0}, r:size())
      assert.equal(dt, r:dtype())
      assert.same({0}, sk.arange(1.1, 1.1, 1.0, {dtype = dt}):size())
    end
    assert.matches("sk.arange: upper bound and larger bound inconsistent with step sign",
      h.err(sk.arange, 1.1, 2.1, -1.0, {dtype = "float16"}))
  end)
  it("gather and scatter take an empty index of any dtype, as PyTorch does", function()
    local x = T({1.5, 5, 3})
    local g = sk.gather(x, 0, sk.empty({0}, {dtype = "uint8"}))
    assert.same({0}, g:size())
    assert.equal("float32", g:dtype())
    assert.same({0, 3}, sk.gather(sk.ones({2, 3}), 0, sk.empty({0, 3}, {dtype = "uint8"})):size())
    assert.same({0}, sk.gather(sk.ones({2, 3}), 0, sk.empty({0}, {dtype = "int64"})):size()) -- no shape check when empty
    assert.same({{1, 1, 1}, {1, 1, 1}}, sk.scatter(sk.ones({2, 3}), 0, sk.empty({0}, {dtype = "uint8"}), sk.ones({0})):totable())
    assert.matches("sk.gather: gather%(%): Expected dtype int64 for index %(argument 'index' has dtype uint8%)",
      h.err(sk.gather, x, 0, sk.zeros({1}, {dtype = "uint8"})))
  end)
  it("batch_norm of an empty input is empty and leaves the running statistics", function()
    for _, training in ipairs { false, true } do
      local r = sk.batch_norm(sk.empty({0}), nil, nil, sk.zeros({0}), sk.ones({0}), training, 0.1, 1e-5, false)
      assert.same({0}, r:size())
      local rm, rv = T({1, 2, 3}), T({4, 5, 6})
      local w, b = T({2, 2, 2}), T({1, 1, 1})
      assert.same({0, 3}, sk.batch_norm(sk.empty({0, 3}), w, b, rm, rv, training, 0.1, 1e-5, false):size())
      assert.same({1, 2, 3}, rm:totable())
      assert.same({4, 5, 6}, rv:totable())
    end
    assert.matches("sk.batch_norm: expected an input of at least 2 dims %(N, C, ...%), got 1%-dimensional input",
      h.err(sk.batch_norm, sk.ones({3}), nil, nil, sk.zeros({3}), sk.ones({3}), false, 0.1, 1e-5, false))
  end)
end)

describe("messages", function()
  it("name the op once and an enum by its name", function()
    local msg = h.err(function() return T({1}):to("float32", {memory_format = "channels_last"}) end)
    assert.matches("Tensor:to: argument 'memory_format' %(channels_last%) is not supported; use contiguous_format", msg)
    assert.no.matches("to: to:", msg, 1, true)
    assert.matches("sk.empty: argument 'memory_format' must be contiguous_format %(got channels_last%)",
      h.err(sk.empty, {2}, {memory_format = "channels_last"}))
    assert.matches("Tensor:clone: argument 'memory_format' %(channels_last_3d%) is not supported",
      h.err(function() return T({1}):clone({memory_format = "channels_last_3d"}) end))
  end)
  it("a list too long reports its own limit, not another overload's mismatch", function()
    local big = {}
    for i = 1, 65 do big[i] = 1 end
    assert.matches("Tensor:view: argument 'size' has 65 elements, at most 64 are supported",
      h.err(function() return sk.ones({1}):view(big) end))
    assert.matches("Tensor:view: argument 'size' has 65 elements, at most 64 are supported",
      h.err(function() return sk.ones({1}):view(table.unpack(big)) end)) -- not "too many arguments"
    local dims17 = table.move(big, 1, 17, 1, {})
    assert.matches("Tensor:view: argument 'size' has 17 dimensions, but tensors have at most 16",
      h.err(function() return sk.ones({1}):view(dims17) end))
  end)
  it("an in-place composite names 'self', not the copy's 'src'", function()
    local msg = h.err(function() return sk.ones({3}):addbmm_(sk.ones({2, 2, 4}), sk.ones({2, 4, 3})) end)
    assert.matches("Tensor:addbmm_: output with shape %[3%] doesn't match the broadcast shape %[2, 3%] %(argument 'self'%)", msg)
    assert.matches("Tensor:addr_: output with shape %[3%] doesn't match the broadcast shape %[2, 3%] %(argument 'self'%)",
      h.err(function() return sk.ones({3}):addr_(sk.ones({2}), sk.ones({3})) end))
    assert.same({{9, 9, 9}, {9, 9, 9}}, sk.ones({2, 3}):addbmm_(sk.ones({2, 2, 4}), sk.ones({2, 4, 3})):totable())
  end)
end)
