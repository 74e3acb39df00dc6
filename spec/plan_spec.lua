-- spec/plan_spec.lua — sk.plan: recording on Meta, replay through the kernels over one arena.
-- A replay runs the very kernels eager runs, so its results are compared with eager's bit for
-- bit (sk.equal); the arena figures are worked out by hand from the live intervals.
local h = require "spec.helper"
local sk = h.sk

local function T(x, o) return sk.tensor(x, o) end
local function ops_of(p)
  local r = {}
  for i, op in ipairs(p:graph().ops) do r[i] = op.op .. "<" .. op.called .. ">" .. op.kind end
  return r
end

describe("sk.plan records", function()
  it("a straight-line chain as out variants, and replays it as eager computes it", function()
    local w = sk.randn({ 5, 3 })
    local function f(a) return ((a * 2 + 1):relu():matmul(w)):sum(1) end
    local p = sk.plan(f, sk.randn({ 4, 5 }))
    assert.same({ "aten::mul.out<aten::mul.Tensor>out", "aten::add.out<aten::add.Tensor>out",
                  "aten::clamp.out<aten::clamp>out", "aten::mm.out<aten::mm>out",
                  "aten::sum.IntList_out<aten::sum.dim_IntList>out" }, ops_of(p))
    for _ = 1, 3 do
      local x = sk.randn({ 4, 5 })
      assert.is_true(sk.equal(p(x), f(x)))
    end
    local st = p:stats()
    assert.equal(5, st.steps)
    assert.equal(5, st.out_steps)
    assert.equal(1, st.inputs)
    assert.equal(1, st.outputs)
    assert.equal(4, st.intermediates) -- the sum's result is the output's own buffer
  end)

  it("views as geometry over one buffer, in-place ops on intermediates, results that are views", function()
    local function f(a)
      local b = a:transpose(0, 1):contiguous()
      b:narrow(0, 1, 3):mul_(2)
      local d = b + 1
      return d, b:view({ 24 }), d:select(0, 2)
    end
    local p = sk.plan(f, sk.randn({ 4, 6 }))
    assert.same({ "aten::copy_<aten::copy_>write", "aten::mul_.Tensor<aten::mul_.Tensor>write",
                  "aten::add.out<aten::add.Tensor>out" }, ops_of(p))
    local x = sk.randn({ 4, 6 })
    local r1, r2, r3 = p(x)
    local e1, e2, e3 = f(x)
    assert.is_true(sk.equal(r1, e1) and sk.equal(r2, e2) and sk.equal(r3, e3))
    assert.same({ 4 }, r3:shape())
    -- a view of a captured tensor as a result: the tensor becomes a constant of the plan
    local w = sk.randn({ 6, 4 })
    local pw = sk.plan(function(a) return a + w:t(), w:t() end, x)
    local s1, s2 = pw(x)
    assert.is_true(sk.equal(s1, x + w:t()) and sk.equal(s2, w:t()))
    assert.equal(1, pw:stats().constants)
  end)

  it("writes its inputs when fn does, and leaves them alone when it does not", function()
    local p = sk.plan(function(a) a:add_(1) return a * 3 end, sk.zeros({ 3 }))
    local x = T({ 1.0, 2.0, 3.0 })
    local v0 = x:version()
    assert.same({ 6, 9, 12 }, p(x):totable())
    assert.same({ 2, 3, 4 }, x:totable())
    assert.is_true(x:version() > v0)
    local q = sk.plan(function(a) return a * 3 end, sk.zeros({ 3 }))
    local y = T({ 1.0, 2.0, 3.0 })
    local v1 = y:version()
    q(y)
    assert.same({ 1, 2, 3 }, y:totable())
    assert.equal(v1, y:version())
  end)

  it("multi-output ops and mixed dtypes", function()
    local function g(a)
      local m, i = a:max(1)
      return m * 2, i + 1, a:sum(0, false, { dtype = "float64" }), a:gt(0):sum(), a:to("int64") * 3
    end
    local q = sk.plan(g, sk.randn({ 4, 6 }))
    local x = sk.randn({ 4, 6 }) * 5
    local got, want = table.pack(q(x)), table.pack(g(x))
    for i = 1, 5 do
      assert.equal(want[i]:dtype(), got[i]:dtype())
      assert.is_true(sk.equal(got[i], want[i]), "result " .. i)
    end
  end)

  it("a captured tensor fn writes into (out=) and returns", function()
    local acc = sk.zeros({ 3 })
    local p = sk.plan(function(a) return sk.add(a, 1, { out = acc }) end, sk.zeros({ 3 }))
    local r = p(T({ 1.0, 2.0, 3.0 }))
    assert.same({ 2, 3, 4 }, acc:totable())
    assert.equal(acc:data_ptr(), r:data_ptr()) -- the result is acc's memory
  end)

  it("captured tensors by reference: an in-place update between replays is seen", function()
    local b = sk.ones({ 3 })
    local p = sk.plan(function(a) return a + b end, sk.zeros({ 3 }))
    assert.same({ 2, 3, 4 }, p(T({ 1.0, 2.0, 3.0 })):totable())
    b:add_(1)
    assert.same({ 3, 4, 5 }, p(T({ 1.0, 2.0, 3.0 })):totable())
    assert.equal(1, p:stats().constants)
  end)

  it("factories inside fn (made at each replay) and numbers baked into the plan", function()
    local p = sk.plan(function(a, k) return a + sk.ones({ 2, 3 }) * k + sk.arange(3) end, sk.zeros({ 2, 3 }), 4)
    local x = sk.randn({ 2, 3 })
    assert.is_true(sk.equal(p(x, 4), x + sk.ones({ 2, 3 }) * 4 + sk.arange(3)))
    assert.matches("sk.plan: argument 2 is 5, the plan was made for 4 %(numbers are baked into a plan%)", h.err(p, x, 5))
  end)

  it("numbers given for tensor arguments: a constant each, first or second, in composites, or alone", function()
    local x = sk.randn({ 4, 5 })
    local cases = { -- fn, the numbers it wraps into tensors (each a constant of the plan)
      { function(a) return sk.where(a:gt(0), a, 0.5) * 2 - a:clamp(-1, 1) / 3 end, 3 },
      { function(a) return 2 - a, sk.maximum(a, 0.25), sk.lerp(a, a * 3, 0.3) end, 3 },
      { function(a) return a + sk.add(2, 3) end, 2 }, -- no tensor beside them: 2 + 3 is a step too
      { function(a) return (a:double() * 1.5):float() + sk.pow(2, a) end, 2 },
    }
    for i, c in ipairs(cases) do
      local p = sk.plan(c[1], x)
      local got, want = { p(x) }, { c[1](x) }
      for k = 1, #want do assert(sk.equal(got[k], want[k]), "case " .. i .. " result " .. k) end
      assert.equal(c[2], p:stats().constants, "case " .. i)
    end
    -- a composite given a number, undone (one_hot reads its meta stand-in) and kept as one step:
    -- the number's constant, made inside it, outlives the undoing
    local lib = sk.library("plan_undo")
    lib:define("scaled_hot(Tensor idx, Tensor k) -> Tensor")
    lib:impl("scaled_hot", "Math", function(idx, k) return sk.one_hot(idx, 4):float() * k end)
    local function f(i) return sk.ops.plan_undo.scaled_hot(i, 2.5) end
    local p = sk.plan(f, sk.tensor({ 0, 3, 1 }))
    assert.same({ "plan_undo::scaled_hot<plan_undo::scaled_hot>unmanaged" }, ops_of(p))
    local i = sk.tensor({ 2, 2, 0 })
    assert.is_true(sk.equal(p(i), f(i)))
    lib:close()
  end)

  it("custom Lua ops: a meta function gives an unmanaged step, lib:structured an out step", function()
    local lib = sk.library("plan_ops")
    lib:define("pairsum(Tensor a, Tensor b) -> Tensor")
    lib:impl("pairsum", "CPU", function(a, b) return a + b * 10 end)
    lib:meta("pairsum", function(m, a, b) m:set_output(0, a:shape(), a:dtype()) end)
    lib:structured {
      out = "twice.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
      meta = function(m, self) m:set_output(0, self:shape(), self:dtype()) end,
      impl = { CPU = function(out, self) out:copy_(self * 2) end },
    }
    local function f(a) return sk.ops.plan_ops.twice(sk.ops.plan_ops.pairsum(a, a + 1)) end
    local p = sk.plan(f, sk.zeros({ 3 }))
    assert.same({ "aten::add.out<aten::add.Tensor>out", "plan_ops::pairsum<plan_ops::pairsum>unmanaged",
                  "plan_ops::twice.out<plan_ops::twice>out" }, ops_of(p))
    assert.same({ 42, 64, 86 }, p(T({ 1.0, 2.0, 3.0 })):totable()) -- 2 · (x + 10 (x + 1))
    lib:define("nometa(Tensor a) -> Tensor")
    lib:impl("nometa", "CPU", function(a) return a end)
    assert.matches("plan_spec.lua:%d+: .*sk.plan: cannot record 'plan_ops::nometa': .*no kernel for 'plan_ops::nometa' on backend 'Meta'",
                   h.err(sk.plan, function(a) return sk.ops.plan_ops.nometa(a) end, sk.zeros({ 3 })))
    lib:close()
  end)
end)

describe("sk.plan with {dynamic = true}", function()
  it("records fn again for inputs no kept plan was made for, and keeps the last four", function()
    local function f(a) return (a * 2):sum(0) end
    local p = sk.plan(f, sk.randn({ 4, 3 }), { dynamic = true })
    assert.equal(0, p:stats().replans)
    local a, b = sk.randn({ 8, 3 }), sk.randn({ 4, 3 })
    assert.is_true(sk.equal(p(a), f(a)))
    assert.equal(1, p:stats().replans)
    assert.is_true(sk.equal(p(b), f(b))) -- the first plan, kept
    assert.is_true(sk.equal(p(a), f(a)))
    assert.same({ 1, 2 }, { p:stats().replans, p:stats().plans })
    local o = sk.empty({ 3 })
    assert.equal(o, p(a, { out = o }))
    assert.is_true(sk.equal(o, f(a)))
    -- [1, 3] and [2, 3] fill the four places, [3, 3] pushes [4, 3] out, so [4, 3] is planned again
    for n = 1, 5 do p(sk.randn({ n, 3 })) end
    assert.same({ 6, 4 }, { p:stats().replans, p:stats().plans })
    assert.is_true(p:matches(sk.randn({ 5, 3 })))
    assert.is_false(p:matches(sk.randn({ 5, 4 })))
  end)
end)

describe("sk.plan refuses", function()
  local x = sk.randn({ 4, 6 })
  local p = sk.plan(function(a) return a * 2 end, x)
  it("inputs that differ from the examples, naming the argument", function()
    assert.matches("sk.plan: argument 1 has shape %[3, 6%], the plan was made for %[4, 6%]", h.err(p, sk.randn({ 3, 6 })))
    assert.matches("sk.plan: argument 1 has dtype float64, the plan was made for float32",
                   h.err(p, sk.randn({ 4, 6 }, { dtype = "float64" })))
    assert.matches("sk.plan: argument 1 has strides %[1, 4%], the plan was made for %[6, 1%] %(a plan is specialised to its inputs' layout%)",
                   h.err(p, sk.randn({ 6, 4 }):t()))
    assert.matches("sk.plan: expected 1 arguments, got 2", h.err(p, x, x))
    assert.matches("sk.plan: argument 1 must be a tensor, got number", h.err(p, 3))
  end)

  it("data-dependent ops and data reads, at the user's line; the recorder is off afterwards", function()
    assert.matches("plan_spec.lua:%d+: sk.nonzero: sk.plan: cannot record 'aten::nonzero': the shape of the result depends on the values",
                   h.err(sk.plan, function(a) return sk.nonzero(a) end, x))
    assert.matches("plan_spec.lua:%d+: Tensor:item: meta tensors have no data",
                   h.err(sk.plan, function(a) return a:sum():item() end, x))
    assert.equal("cpu", (x + 1):device()) -- eager again
    assert.is_true(sk.equal(sk.plan(function(a) return a - 1 end, x)(x), x - 1))
  end)

  it("tensors that require grad, at planning and at replay; under no_grad a plan has no history", function()
    local w = sk.randn({ 6, 2 }, { requires_grad = true })
    assert.matches("plan_spec.lua:%d+: Tensor:matmul: sk.plan: argument 'other' of 'aten::matmul' requires grad; a plan records no autograd graph",
                   h.err(sk.plan, function(a) return a:matmul(w) end, x))
    local pw = sk.no_grad(function() return sk.plan(function(a) return a:matmul(w) end, x) end)
    assert.matches("sk.plan: a tensor the plan captured requires grad", h.err(pw, x))
    local r = sk.no_grad(function() return pw(x) end)
    assert.is_false(r:requires_grad())
    assert.is_true(sk.no_grad(function() return sk.equal(r, x:matmul(w)) end))
    local xg = sk.randn({ 4, 6 }, { requires_grad = true })
    assert.matches("sk.plan: argument 1 requires grad", h.err(p, xg))
    -- views skip the recorder: a view of a captured tensor is checked where fn returns it
    assert.matches("sk.plan: result 2 of fn requires grad", h.err(sk.plan, function(a) return a + 1, w:t() end, x))
  end)

  it("a meta tensor made outside fn, an op whose result is a number read off tensors", function()
    local m = sk.empty({ 4, 6 }, { device = "meta" })
    assert.matches("sk.plan: argument 'other' of 'aten::add.Tensor' is a tensor no op of the plan made",
                   h.err(sk.plan, function(a) return a + m end, x))
    assert.matches("sk.plan: cannot record 'aten::allclose': its result is a value computed from the data",
                   h.err(sk.plan, function(a) return sk.allclose(a, a) end, x))
  end)

  it("a nested plan, results that are not tensors, outs that do not fit", function()
    assert.matches("sk.plan: called while another plan is being recorded",
                   h.err(sk.plan, function(a) return sk.plan(function(b) return b end, a) end, x))
    assert.matches("sk.plan: fn returned a number as result 1; a plan returns tensors", h.err(sk.plan, function() return 1 end, x))
    assert.matches("sk.plan: out 1 is a float32 tensor of shape %[5%], output 1 is float32 of shape %[4, 6%]",
                   h.err(p, x, { out = { sk.empty({ 5 }) } }))
    local v = sk.plan(function(a) return (a * 2):t() end, x)
    assert.matches("sk.plan: output 1 is a view of an intermediate; it cannot be written into a caller's tensor",
                   h.err(v, x, { out = sk.empty({ 6, 4 }) }))
    assert.matches("sk.plan: out must be 1 tensor %(one per output%)", h.err(p, x, { out = { sk.empty({ 4, 6 }), sk.empty({ 4, 6 }) } }))
    assert.matches("sk.plan: out 1 is not a tensor", h.err(p, x, { out = { 5 } }))
    assert.matches("sk.plan: unexpected option 'outs' %(a plan's call takes only 'out'%)", h.err(p, x, { outs = {} }))
    local five = sk.plan(function(a) return a + 1, a + 2, a + 3, a + 4, a + 5 end, x)
    local os = { sk.empty({ 4, 6 }), sk.empty({ 4, 6 }), sk.empty({ 4, 6 }), sk.empty({ 4, 6 }), sk.empty({ 4, 6 }) }
    local r = { five(x, { out = os }) }
    for k = 1, 5 do assert.is_true(r[k] == os[k] and sk.equal(os[k], x + k)) end
  end)

  it("outs that share memory with an input, a captured tensor or another out, before writing anything", function()
    -- out 1 written first, then read by output 2's step: eager's a * 2 is {2, 4, 6}, a replay
    -- into x gave {4, 6, 8}; sk refuses rather than orders the writes (docs/planning.md)
    local two = sk.plan(function(a) return a + 1, a * 2 end, sk.zeros({ 3 }))
    local a, o = T({ 1.0, 2.0, 3.0 }), sk.zeros({ 3 })
    assert.matches("sk.plan: out 1 overlaps the memory of argument 1; an out may share no memory with the plan's inputs",
                   h.err(two, a, { out = { a, o } }), 1, true)
    assert.matches("sk.plan: out 2 overlaps the memory of argument 1", h.err(two, a, { out = { o, a:view({ 3 }) } }), 1, true)
    assert.matches("sk.plan: out 2 overlaps the memory of out 1; each out needs memory of its own",
                   h.err(two, a, { out = { o, o } }), 1, true)
    assert.same({ 1, 2, 3 }, a:totable())
    assert.same({ 0, 0, 0 }, o:totable())
    -- disjoint parts of one buffer are separate memory
    local buf = sk.zeros({ 2, 3 })
    two(a, { out = { buf:select(0, 0), buf:select(0, 1) } })
    assert.same({ { 2, 3, 4 }, { 2, 4, 6 } }, buf:totable())
    -- a captured weight (the steps read it at each replay), or a view that meets what they read
    local big = T({ 1.0, 1.0, 1.0, 5.0, 5.0, 5.0 })
    local w = big:narrow(0, 0, 3)
    local pw = sk.plan(function(x) return x + w end, sk.zeros({ 3 }))
    assert.matches("sk.plan: out 1 overlaps the memory of a tensor the plan captured (a constant)",
                   h.err(pw, a, { out = { w } }), 1, true)
    assert.matches("sk.plan: out 1 overlaps the memory of a tensor the plan captured (a constant)",
                   h.err(pw, a, { out = { big:narrow(0, 2, 3) } }), 1, true)
    assert.same({ 1, 1, 1, 5, 5, 5 }, big:totable())
    pw(a, { out = { big:narrow(0, 3, 3) } })
    assert.same({ 1, 1, 1, 2, 3, 4 }, big:totable())
  end)
end)

describe("sk.plan's memory", function()
  it("shares the arena between buffers whose live intervals do not meet (hand-worked chain)", function()
    -- b = a+1 (step 1), c = b+1 (2), d = c+1 (3), e = d+1 (4, the output): b lives [1, 2], c [2, 3],
    -- d [3, 4]; b and c meet at step 2, c and d at 3, b and d never: 2 × 4 KiB
    local p = sk.plan(function(a) return a + 1 + 1 + 1 + 1 end, sk.zeros({ 1024 }))
    local st = p:stats()
    assert.equal(3 * 4096, st.intermediate_bytes)
    assert.equal(2 * 4096, st.arena_bytes)
    assert.equal(2 * 4096, st.eager_peak_bytes)
    local g = p:graph()
    local at = {}
    for _, v in ipairs(g.values) do if v.kind == "arena" then at[v.first] = v.offset end end
    assert.equal(at[1], at[3])
    assert.are_not.equal(at[1], at[2])
    for _, off in pairs(at) do assert.equal(0, off % 64) end
    assert.same({ 5, 5 }, { p(sk.ones({ 1024 })):min():item(), p(sk.ones({ 1024 })):max():item() })
  end)

  it("records a step's long tensor list, larger than the plan's first block of memory", function()
    -- cat of 3500 rows: the step keeps 3501 value numbers (14 KB), more than twice the 4 KiB
    -- first chunk of the plan's pool (an overrun there is what valgrind and ASan would report)
    local x = sk.randn(3500, 3)
    local function fn(a)
      local rows = {}
      for i = 0, 3499 do rows[i + 1] = a[i] end
      return sk.cat(rows) * 2
    end
    local p = sk.plan(fn, x)
    assert.equal(2, p:stats().steps)
    assert.is_true(sk.equal((x * 2):reshape({ 3500 * 3 }), p(x))) -- the rows end to end
    p:close()
    for _ = 1, 3 do sk.plan(fn, x):close() end -- plans made again on the freed plans' memory
  end)

  it("replays with no allocation into the caller's outs, one per fresh output otherwise", function()
    local ops = { function(t) return t + 0.5 end, function(t) return t:neg() end, function(t) return t - 0.25 end,
                  function(t) return t * 1.001 end }
    local function chain(a)
      for i = 1, 200 do a = ops[(i - 1) % 4 + 1](a) end
      return a
    end
    local x = sk.randn({ 1024 })
    local p = sk.plan(chain, x)
    local o = sk.empty({ 1024 })
    assert.equal(o, p(x, { out = o }))
    assert.is_true(sk.equal(o, chain(x)))
    collectgarbage()
    collectgarbage()
    local n0 = sk.memory_stats().num_allocs
    for _ = 1, 10 do p(x, { out = { o } }) end
    assert.equal(n0, sk.memory_stats().num_allocs)
    for _ = 1, 10 do p(x) end
    assert.equal(n0 + 10, sk.memory_stats().num_allocs)
    assert.is_true(p:stats().arena_bytes <= 2 * 4096)
  end)

  -- Not under memcheck (valgrind itself) nor the sanitizer build (its own malloc): #heap.
  it("replays without calling malloc, lists of ints and of tensors included, under both collectors (valgrind counts) #heap", function()
    local script = os.tmpname()
    finally(function() os.remove(script) end)
    local f = assert(io.open(script, "w"))
    f:write([[
      collectgarbage(arg[2]) -- "generational" (plain lua5.4's default) or "incremental"
      local sk = require "sk"
      sk.set_num_threads(1)
      local g, b = sk.ones(16), sk.zeros(16)
      local function fn(x)
        local c = sk.cat({ sk.layer_norm(x, { 16 }, g, b), x }, 0)
        return c:sum({ 0 }) + c:amax({ 1 }):sum()
      end
      local x = sk.randn(4, 16)
      local p = sk.plan(fn, x)
      local call = { out = { p(x) } }
      assert(sk.equal(call.out[1], fn(x)))
      for _ = 1, tonumber(arg[1]) do p(x, call) end
      print("replayed " .. arg[1])
    ]])
    f:close()
    local function heap_blocks(replays, gc)
      local env = string.format("OMP_NUM_THREADS=1 LUA_PATH='%s' LUA_CPATH='%s' ", package.path, package.cpath)
      local pipe = assert(io.popen(env .. "valgrind --leak-check=no lua5.4 " .. script .. " " .. replays .. " " .. gc .. " 2>&1"))
      local out = pipe:read("a")
      pipe:close()
      local n = out:match("total heap usage: ([%d,]+) allocs")
      assert(n and out:find("replayed " .. replays, 1, true), out)
      return tonumber((n:gsub(",", "")))
    end
    for _, gc in ipairs { "generational", "incremental" } do assert.equal(heap_blocks(20, gc), heap_blocks(40, gc), gc) end
  end)

  it("holds the temporaries kernels make (casts to the common dtype) in the arena", function()
    local function mixed(a, i) -- float32 with int64: each op casts i to float32 first
      local t = (a + i) * (i * 0.5):exp()
      return t:add_(i)
    end
    local x, i = sk.randn({ 64, 32 }), sk.arange(2048, { dtype = "int64" }):view({ 64, 32 }) % 7
    local p = sk.plan(mixed, x, i)
    assert.equal(3, p:stats().temporaries)
    assert.is_true(sk.equal(p(x, i), mixed(x, i)))
    local o = sk.empty({ 64, 32 })
    p(x, i, { out = o })
    collectgarbage()
    local n0 = sk.memory_stats().num_allocs
    for _ = 1, 5 do p(x, i, { out = o }) end
    assert.equal(n0, sk.memory_stats().num_allocs) -- eager makes seven tensors per call
    assert.is_true(sk.equal(o, mixed(x, i)))
  end)

  it("describes itself: graph() and a deterministic dot()", function()
    local p = sk.plan(function(a) return (a + 1):exp() end, sk.zeros({ 2 }))
    local g = p:graph()
    assert.same({ 1 }, g.inputs)
    assert.equal("input", g.values[g.inputs[1]].kind)
    assert.equal("output", g.values[g.outputs[1]].kind)
    assert.equal(2, #g.ops)
    assert.equal(g.inputs[1], g.ops[1].inputs[1])
    assert.equal("const", g.values[g.ops[1].inputs[2]].kind) -- the wrapped number 1
    assert.same({}, g.values[g.ops[1].inputs[2]].shape)
    assert.same(g.ops[2].outputs, g.outputs)
    local d = p:dot()
    assert.matches("^digraph plan {", d)
    assert.matches("aten::add.out", d)
    assert.matches("aten::exp.out", d)
    assert.equal(d, p:dot())
    p:close()
    assert.matches("sk.plan: the plan is closed", h.err(p, sk.zeros({ 2 })))
  end)
end)
