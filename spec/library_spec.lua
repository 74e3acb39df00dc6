-- spec/library_spec.lua — extending sk from Lua at run time
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local function softplus_ref(x, beta)
  local out = {}
  for i, v in ipairs(x) do out[i] = math.log(1 + math.exp(beta * v)) / beta end
  return out
end

describe("lib:define and lib:impl", function()
  local lib
  before_each(function() lib = sk.library("myops") end)
  after_each(function() lib:close() end)

  it("defines an op from a schema and calls a Lua CPU kernel like a built-in", function()
    assert.equal("myops::softplus", lib:define("softplus(Tensor self, float beta=1) -> Tensor"))
    lib:impl("softplus", "CPU", function(x, beta) return ((x * beta):exp() + 1):log() / beta end)
    local x = T({0.0, 1.0, -2.0})
    h.assert_close(sk.ops.myops.softplus(x):totable(), softplus_ref({0, 1, -2}, 1))
    h.assert_close(sk.ops.myops.softplus(x, {beta = 2}):totable(), softplus_ref({0, 1, -2}, 2))
    h.assert_close(sk.ops.myops.softplus(x, 2):totable(), softplus_ref({0, 1, -2}, 2))
    assert.equal("direct", sk.dispatch_table("myops::softplus").CPU.source)
    -- the dispatcher keeps its own copy of the origin the library built for the registration
    collectgarbage()
    for i = 1, 20000 do local _ = "sk.library('" .. i .. "')" end
    collectgarbage()
    assert.equal("sk.library('myops')", sk.dispatch_table("myops::softplus").CPU.origin)
  end)
  it("returns the very value a Lua kernel returned, and a box of its own for a tensor it closed", function()
    lib:define("twice(Tensor self) -> Tensor")
    local made
    lib:impl("twice", "CPU", function(x) made = x * 2 return made end)
    local r = sk.ops.myops.twice(T({1.0}))
    assert.is_true(rawequal(made, r))
    lib:define("closing(Tensor self) -> Tensor")
    lib:impl("closing", "CPU", function(x)
      local y = x * 2
      local alias = y:view({1}) -- keeps the tensor alive while y is closed
      y:close()
      return alias
    end)
    assert.same({2}, sk.ops.myops.closing(T({1.0})):totable())
  end)
  it("finds built-ins under sk.ops.aten", function()
    assert.same({4, 6}, sk.ops.aten.add(T({1, 2}), T({3, 4})):totable())
    assert.same({5, 8}, sk.ops.aten.add(T({1, 2}), T({2, 3}), {alpha = 2}):totable())
  end)
  it("rejects bad schemas, duplicates and disagreeing definitions", function()
    assert.matches("lib:define: bad schema 'foo%(Tensor self, Foo x%) %-> Tensor': unknown type 'Foo'",
      h.err(lib.define, lib, "foo(Tensor self, Foo x) -> Tensor"))
    lib:define("twice(Tensor self) -> Tensor")
    assert.matches("operator 'myops::twice' is already defined$", h.err(lib.define, lib, "twice(Tensor self) -> Tensor"))
    assert.matches("operator 'myops::twice' is already defined as 'twice%(Tensor self%) %-> Tensor'",
      h.err(lib.define, lib, "twice(Tensor self, int n) -> Tensor"))
    assert.matches("schema namespace 'other' differs from the library's 'myops'", h.err(lib.define, lib, "other::f(Tensor x) -> Tensor"))
  end)
  it("registers for alias keys: Math serves every backend, a direct kernel wins over it", function()
    lib:define("twice(Tensor self) -> Tensor")
    lib:impl("twice", "Math", function(x) return x * 2 end)
    assert.same({2, 4}, sk.ops.myops.twice(T({1, 2})):totable())
    assert.same({3}, sk.ops.myops.twice(sk.empty({3}, {device = "meta"})):shape())
    assert.equal("Math", sk.dispatch_table("myops::twice").CPU.source)
    lib:impl("twice", "CPU", function(x) return x * 20 end)
    assert.same({20}, sk.ops.myops.twice(T({1})):totable())
    assert.equal("direct", sk.dispatch_table("myops::twice").CPU.source)
    lib:define("thrice(Tensor self) -> Tensor")
    lib:impl("thrice", "DefaultBackend", function(x) return x * 3 end)
    assert.same({3}, sk.ops.myops.thrice(T({1})):totable())
    assert.equal("DefaultBackend", sk.dispatch_table("myops::thrice").Meta.source)
  end)
  it("refuses unknown keys and undefined ops", function()
    lib:define("f(Tensor self) -> Tensor")
    assert.matches("lib:impl: unknown dispatch key 'GPU'", h.err(lib.impl, lib, "f", "GPU", function() end))
    assert.matches("lib:impl: no operator 'myops::g' %(define it first with lib:define%)", h.err(lib.impl, lib, "g", "CPU", function() end))
  end)
  it("turns a bad kernel into an error naming the op and key", function()
    lib:define("bad(Tensor self) -> Tensor")
    local x = T({1.0})
    lib:impl("bad", "CPU", function() error("boom") end)
    assert.matches("sk.ops.myops.bad: Lua kernel for 'myops::bad' on CPU raised: .*boom", h.err(sk.ops.myops.bad, x))
    lib:impl("bad", "CPU", function() return end)
    assert.matches("Lua kernel for 'myops::bad' on CPU returned 0 values, the schema says 1", h.err(sk.ops.myops.bad, x))
    lib:impl("bad", "CPU", function() return 3 end)
    assert.matches("returned number as result 1, the schema says a tensor", h.err(sk.ops.myops.bad, x))
    lib:impl("bad", "CPU", function(t) return sk.empty({1}, {device = "meta"}) end)
    assert.matches("returned a tensor on 'meta' as result 1, expected one on 'CPU'", h.err(sk.ops.myops.bad, x))
    lib:impl("bad", "CPU", function(t) t:add_(1) return t end)
    assert.matches("wrote to argument 'self', which the schema does not mark as written", h.err(sk.ops.myops.bad, x))
  end)
  it("overrides a built-in kernel and restores it on close", function()
    local other = sk.library("override")
    other:impl("aten::neg", "CPU", function(x) return x:clone():fill_(7) end)
    assert.same({7, 7}, (-T({1.0, 2.0})):totable())
    other:close()
    assert.same({-1, -2}, (-T({1.0, 2.0})):totable())
  end)
  it("runs Meta tensors through a meta function given in Lua", function()
    lib:define("pairsum(Tensor a, Tensor b) -> Tensor")
    lib:impl("pairsum", "CPU", function(a, b) return a + b end)
    lib:meta("pairsum", function(m, a, b) m:set_output(0, a:shape(), a:dtype()) end)
    local r = sk.ops.myops.pairsum(sk.empty({4, 5}, {device = "meta"}), sk.empty({4, 5}, {device = "meta"}))
    assert.equal("meta", r:device())
    assert.same({4, 5}, r:shape())
    assert.same({4, 6}, sk.ops.myops.pairsum(T({1, 2}), T({3, 4})):totable())
  end)
  it("refuses to register from inside a running kernel, and to close a running library", function()
    lib:define("reg(Tensor self) -> Tensor")
    local inner_err
    lib:impl("reg", "CPU", function(x)
      inner_err = select(2, pcall(lib.impl, lib, "reg", "Meta", function() end))
      local ok, e = pcall(lib.close, lib)
      inner_err = inner_err .. " | " .. tostring(e)
      return x:clone()
    end)
    sk.ops.myops.reg(T({1.0}))
    assert.matches("cannot change registrations while a Lua kernel", inner_err)
    assert.matches("| .*cannot change registrations while a Lua kernel", inner_err)
    assert.is_false(lib.closed)
  end)
end)

describe("lib:structured", function()
  local lib
  local function beta_softplus(m, self, beta) m:set_output(0, self:shape(), self:dtype()) end
  before_each(function()
    lib = sk.library("st")
    lib:structured {
      out = "softplus.out(Tensor self, float beta=1, *, Tensor(a!) out) -> Tensor(a!)",
      meta = beta_softplus,
      impl = { CPU = function(out, self, beta) out:copy_(((self * beta):exp() + 1):log() / beta) end },
    }
  end)
  after_each(function() lib:close() end)

  it("gives the functional, in-place and out variants", function()
    local x = T({0.0, 1.0})
    local want = softplus_ref({0, 1}, 1)
    h.assert_close(sk.ops.st.softplus(x):totable(), want)
    local y = x:clone()
    local v0 = y:version()
    assert.equal(y, sk.ops.st.softplus_(y))
    h.assert_close(y:totable(), want)
    assert.equal(v0 + 1, y:version())
    local out = sk.empty({0})
    assert.equal(out, sk.ops.st.softplus(x, {out = out}))
    h.assert_close(out:totable(), want)
  end)
  it("applies the generated ops' rules: out resize, in-place shape and dtype", function()
    local x = T({0.0, 1.0})
    assert.matches("argument 'out' has shape %[3%], but the result has shape %[2%]",
      h.err(sk.ops.st.softplus, x, {out = sk.zeros({3})}))
    assert.matches("argument 'out' has dtype float64, expected float32", h.err(sk.ops.st.softplus, x, {out = sk.zeros({2}, {dtype = "float64"})}))
    local lib2 = sk.library("st2")
    lib2:structured {
      out = "grow.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
      meta = function(m, self) m:set_output(0, {2, self:size(0)}, self:dtype()) end,
      impl = { CPU = function(out, self) out:copy_(self:expand({2, self:size(0)})) end },
    }
    assert.same({{1, 2}, {1, 2}}, sk.ops.st2.grow(T({1.0, 2.0})):totable())
    assert.matches("doesn't match the broadcast shape %[2, 2%]", h.err(sk.ops.st2.grow_, T({1.0, 2.0})))
    lib2:close()
  end)
  it("rejects bad impls with the key named, and a failed family leaves nothing defined", function()
    local lib3 = sk.library("st3")
    local spec = function(impl)
      return { out = "g.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
               meta = function(m, self) m:set_output(0, self:shape(), self:dtype()) end, impl = impl }
    end
    assert.matches("^lib:structured: impls are for backend keys, not 'Meta'", h.err(lib3.structured, lib3, spec { Meta = print }))
    assert.matches("^lib:structured: unknown dispatch key 'Nope'", h.err(lib3.structured, lib3, spec { Nope = print }))
    assert.matches("^lib:structured: impl for 'CPU' expected a function, got number", h.err(lib3.structured, lib3, spec { CPU = 3 }))
    assert.is_false(pcall(sk.dispatch_table, "st3::g.out"))
    lib3:structured(spec { CPU = function(out, self) out:copy_(self * 2) end }) -- the same names, defined afresh
    assert.same({2, 4}, sk.ops.st3.g(T({1.0, 2.0})):totable())
    lib3:close()
  end)
  it("gets Meta and DefaultBackend for free", function()
    local m = sk.ops.st.softplus(sk.empty({3, 4}, {device = "meta"}))
    assert.equal("meta", m:device())
    assert.same({3, 4}, m:shape())
    local t = sk.dispatch_table("st::softplus")
    assert.equal("direct", t.Meta.source)
    assert.equal("DefaultBackend", t.CUDA.source)
  end)
  it("reaches a backend's out kernel through DefaultBackend", function()
    sk.backends.register("stdev")
    local back = sk.library("stdev_kernels")
    local calls = 0
    back:impl("st::softplus.out", "stdev", function(self, beta, out)
      calls = calls + 1
      out:copy_(sk.ops.st.softplus(self:cpu(), {beta = beta}))
      return out
    end)
    local x = T({0.0, 1.0}):to("stdev")
    local r = sk.ops.st.softplus(x)
    assert.equal("stdev:0", r:device())
    h.assert_close(r:cpu():totable(), softplus_ref({0, 1}, 1))
    sk.ops.st.softplus_(x)
    assert.equal(2, calls)
    back:close()
    x, r = nil, nil
    collectgarbage()
    sk.backends.unregister("stdev")
  end)
  it("returns the very value a functional impl wrote into, unless the impl closed it", function()
    local seen
    local lib7 = sk.library("st7")
    lib7:structured {
      out = "keep.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
      meta = function(m, self) m:set_output(0, self:shape(), self:dtype()) end,
      impl = { CPU = function(out, self) seen = out out:copy_(self) end },
    }
    local r = sk.ops.st7.keep(T({1.0, 2.0}))
    assert.is_true(rawequal(seen, r))
    lib7:close()
    local lib8 = sk.library("st8")
    lib8:structured {
      out = "closes.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
      meta = function(m, self) m:set_output(0, self:shape(), self:dtype()) end,
      impl = { CPU = function(out, self) seen = out out:copy_(self) out:close() end },
    }
    r = sk.ops.st8.closes(T({1.0, 2.0}))
    assert.is_false(rawequal(seen, r))
    assert.same({1, 2}, r:totable())
    lib8:close()
  end)
  it("runs impls with two outs: functional (the very boxes it wrote), out, and an out of the wrong dtype", function()
    local lib9 = sk.library("st9")
    local seen = {}
    lib9:structured {
      out = "minmax.out(Tensor self, *, Tensor(a!) lo, Tensor(b!) hi) -> (Tensor(a!) lo, Tensor(b!) hi)",
      meta = function(m, self) m:set_output(0, {}, self:dtype()) m:set_output(1, {}, self:dtype()) end,
      impl = { CPU = function(lo, hi, self) seen = {lo, hi} lo:copy_(self:amin()) hi:copy_(self:amax()) end },
    }
    for _ = 1, 3 do -- the first call may go through the trampoline, the next ones are direct
      local lo, hi = sk.ops.st9.minmax(T({3.0, -1.0, 2.0}))
      assert.equal(-1, lo:item())
      assert.equal(3, hi:item())
      assert.is_true(rawequal(seen[1], lo) and rawequal(seen[2], hi))
    end
    local lo, hi = T(0.0), T(0.0)
    local r1, r2 = sk.ops.st9.minmax(T({5.0, 4.0}), {lo = lo, hi = hi})
    assert.is_true(rawequal(r1, lo) and rawequal(r2, hi))
    assert.same({4, 5}, {lo:item(), hi:item()})
    r1, r2 = sk.ops.st9.minmax(T({7.0, 6.0}), {out = {lo, hi}})
    assert.same({6, 7}, {r1:item(), r2:item()})
    assert.matches("argument 'hi' has dtype int64, expected float32",
      h.err(sk.ops.st9.minmax, T({1.0}), {lo = lo, hi = sk.tensor(0)}))
    assert.same({6, 7}, {lo:item(), hi:item()}) -- nothing written by the refused call
    lib9:close()
  end)
  it("lets meta functions nest and refuses a meta context kept past its call", function()
    local kept
    local lib5 = sk.library("st5")
    lib5:structured {
      out = "outer.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
      meta = function(m, self)
        kept = m
        local inner = sk.ops.st.softplus(sk.empty(self:shape(), {device = "meta"})) -- runs st's Lua meta inside this one
        m:set_output(0, inner:shape(), inner:dtype())
      end,
      impl = { CPU = function(out, self) out:copy_(self) end },
    }
    assert.same({1, 2}, sk.ops.st5.outer(T({1.0, 2.0})):totable())
    assert.matches("meta context used after its meta function returned", h.err(function() kept:set_output(0, {1}, "float32") end))
    lib5:close()
  end)
  it("never leaves an out half-written, and names the op when meta or impl fail", function()
    local lib3 = sk.library("st3")
    lib3:structured {
      out = "half.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
      meta = function(m, self) m:set_output(0, self:shape(), self:dtype()) end,
      impl = { CPU = function(out, self) out:fill_(99) error("midway") end },
    }
    local out = T({1.0, 2.0})
    assert.matches("impl of 'st3::half.out' on CPU raised: .*midway", h.err(sk.ops.st3.half, T({0.0, 0.0}), {out = out}))
    assert.same({1, 2}, out:totable())
    lib3:close()
    local lib4 = sk.library("st4")
    lib4:structured {
      out = "nodecl.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
      meta = function(m, self) end,
      impl = { CPU = function(out, self) end },
    }
    assert.matches("meta function for 'st4::nodecl.out' did not declare output 0", h.err(sk.ops.st4.nodecl, T({1.0})))
    lib4:close()
  end)

  it("re-declares a built-in op from its own meta function and CPU kernel (sk.structured_builtin)", function()
    local lib6 = sk.library("st6")
    local b = sk.structured_builtin("aten::amax.out") -- precomputed fields and a TensorIterator-free reduction
    local a = sk.structured_builtin("aten::add.out")
    lib6:structured { out = "amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
                      meta = b, impl = { CPU = b } }
    lib6:structured { out = "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
                      meta = a, impl = { CPU = a } }
    local x = T({{1.0, 5.0, 2.0}, {7.0, -1.0, 0.5}})
    assert.same({5, 7}, sk.ops.st6.amax(x, {dim = {1}}):totable())
    assert.same({{7, 5, 2}}, sk.ops.st6.amax(x, {dim = {0}, keepdim = true}):totable())
    assert.same({{3, 15, 6}, {21, -3, 1.5}}, sk.ops.st6.add(x, x, {alpha = 2}):totable())
    local y = x:clone()
    assert.equal(y, sk.ops.st6.add_(y, x))
    assert.same({{2, 10, 4}, {14, -2, 1}}, y:totable())
    -- the same errors as the built-in op, from the same meta function
    local e1 = h.err(sk.amax, x, {dim = {2}})
    local e2 = h.err(sk.ops.st6.amax, x, {dim = {2}})
    assert.equal(e1:gsub("^.-sk%.amax: ", ""), (e2:gsub("^.-sk%.ops%.st6%.amax: ", "")))
    assert.same({2, 3}, sk.ops.st6.add(x:to("meta"), x:to("meta")):shape())
    -- refused: an unknown op, a built-in impl without its meta, a CPU kernel on device memory
    assert.matches("'aten::nope.out' is not a built.in structured out op", h.err(sk.structured_builtin, "aten::nope.out"))
    assert.matches("needs the built.in meta of the same op", h.err(lib6.structured, lib6, {
      out = "twice.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
      meta = function(m, s) m:set_output(0, s:shape(), s:dtype()) end, impl = { CPU = a } }))
    -- a built-in reads the arguments of its own op: another op's schema is refused (fuzz: a segfault)
    assert.matches("the built.in meta of 'aten::add.out' reads the arguments of 'add.out%(Tensor self, Tensor other, %*, "
                   .. "Scalar alpha=1, Tensor%(a!%) out%) %-> Tensor%(a!%)', which 'tril.out", h.err(lib6.structured, lib6, {
      out = "tril.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)", meta = a, impl = { CPU = a } }))
    assert.matches("runs only on CPU memory, not on 'CUDA'", h.err(lib6.structured, lib6, {
      out = "twice.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
      meta = a, impl = { CUDA = a } }))
    lib6:close()
  end)
end)

describe("fallbacks and backends", function()
  it("run the seed scenario: add.out only, DefaultBackend, then the CPU fallback with counters", function()
    sk.backends.register("npu")
    local lib = sk.library("npu_kernels")
    lib:impl("aten::add.out", "npu", function(self, other, alpha, out)
      out:copy_(sk.add(self:cpu(), other:cpu(), {alpha = alpha}))
      return out
    end)
    local a = sk.tensor({1.0, 2.0, 3.0}):to("npu")
    local b = sk.ones(3, {device = "npu"})
    assert.equal("npu:0", b:device())
    assert.same({2, 3, 4}, sk.add(a, b):cpu():totable())
    a:add_(b)
    assert.same({2, 3, 4}, a:cpu():totable())
    local msg = h.err(sk.mul, a, b)
    -- (other specs may have registered mul.out for their own backends: match any list)
    assert.matches("no kernel for 'aten::mul.out' on backend 'npu' %(registered for: CPU, [%w, ]*Meta, Autograd; no fallback%)", msg)
    assert.matches("implementing this out op for 'npu' also gives its functional and in%-place variants", msg)
    lib:fallback("npu", sk.cpu_fallback)
    sk.fallback.reset("npu")
    assert.same({2, 3, 4}, sk.mul(a, b):cpu():totable())
    assert.equal(9, sk.sum(a):item())
    local m = sk.matmul(a:view(1, 3), b:view(3, 1))
    assert.equal("npu:0", m:device())
    assert.equal(9, m:item())
    local o = sk.empty({0}, {device = "npu"})
    assert.equal(o, sk.mul(a, b, {out = o}))
    assert.same({2, 3, 4}, o:cpu():totable()) -- the empty out was resized on the backend
    local c = sk.cat({a, b}) -- a tensor list goes to the CPU and back
    assert.equal("npu:0", c:device())
    assert.same({2, 3, 4, 1, 1, 1}, c:cpu():totable())
    sk.fallback.reset("npu")
    sk.mul(a, b)
    sk.sum(a)
    sk.matmul(a:view(1, 3), b:view(3, 1))
    local counts = sk.fallback.counts("npu")
    assert.equal(1, counts["aten::mul.out"])
    assert.equal(1, counts["aten::sum.IntList_out"])
    assert.equal(1, counts["aten::mm.out"])
    assert.is_nil(counts["aten::add.out"])
    -- rules and the log hook
    local seen = {}
    sk.fallback.set_log(function(op, key) seen[#seen + 1] = op .. "@" .. key end)
    sk.fallback.deny("npu", "aten::mul.out")
    assert.matches("'aten::mul.out' may not run through the CPU fallback on 'npu' %(denied%)", h.err(sk.mul, a, b))
    sk.fallback.clear("npu", "aten::mul.out")
    sk.mul(a, b)
    assert.same({"aten::mul.out@npu"}, seen)
    sk.fallback.set_log(nil)
    -- views cannot fall back
    lib:close()
    lib = sk.library("npu_kernels")
    lib:fallback("npu", sk.cpu_fallback)
    local vl = sk.library("npu_views")
    local t = sk.tensor({1.0}):to("npu")
    assert.truthy(t:view(1)) -- view is DefaultBackend: it never reaches the fallback
    vl:close()
    lib:close()
    a, b, m, t, o, c = nil, nil, nil, nil, nil, nil
    collectgarbage()
    sk.backends.unregister("npu")
  end)
  it("refuses view ops in the CPU fallback unless views are allowed", function()
    sk.backends.register("vfb")
    local lib = sk.library("vfb_ops")
    lib:define("alias_of(Tensor(a) self) -> Tensor(a)")
    lib:impl("alias_of", "CPU", function(x) return x:view(x:shape()) end)
    lib:fallback("vfb", sk.cpu_fallback)
    local x = T({1.0, 2.0}):to("vfb")
    assert.matches("view op 'vfb_ops::alias_of' cannot run through the CPU fallback on 'vfb'", h.err(sk.ops.vfb_ops.alias_of, x))
    sk.fallback.allow_views("vfb", true)
    local y = sk.ops.vfb_ops.alias_of(x)
    assert.equal("vfb:0", y:device())
    assert.same({1, 2}, y:cpu():totable())
    lib:close()
    x, y = nil, nil
    collectgarbage()
    sk.backends.unregister("vfb")
  end)
  it("gives a Lua fallback the op, its schema and its arguments", function()
    sk.backends.register("lfb")
    local lib = sk.library("lfb")
    local seen
    lib:fallback("lfb", function(op, args)
      seen = op
      return args[2]:copy_(args[1]:cpu():exp())
    end)
    local x = T({0.0}):to("lfb")
    local r = sk.exp(x)
    assert.equal("aten::exp.out", seen.name)
    assert.matches("^exp.out%(Tensor self", seen.schema)
    assert.equal(1, r:cpu():item())
    assert.equal(1, sk.fallback.counts("lfb")["aten::exp.out"])
    lib:close()
    x, r = nil, nil
    collectgarbage()
    sk.backends.unregister("lfb")
  end)
  it("lets a kernel call the CPU fallback explicitly", function()
    sk.backends.register("exp")
    local lib = sk.library("exp_kernels")
    lib:impl("aten::mul.out", "exp", function(self, other, out)
      return sk.fallback.call("aten::mul.out", self, other, {out = out})
    end)
    local a = T({2.0, 3.0}):to("exp")
    assert.same({4, 9}, sk.mul(a, a):cpu():totable())
    assert.equal(1, sk.fallback.counts("exp")["aten::mul.out"])
    lib:close()
    a = nil
    collectgarbage()
    sk.backends.unregister("exp")
  end)
  it("says when every run-time backend slot is taken, and frees a slot on unregister", function()
    local made = {}
    local ok, err
    for i = 1, 64 do
      ok, err = pcall(sk.backends.register, "slot" .. i)
      if not ok then break end
      made[#made + 1] = "slot" .. i
    end
    assert.is_false(ok)
    assert.matches("cannot register backend 'slot%d+': all 8 custom backend slots are taken", err)
    assert.is_true(#made <= 8)
    sk.backends.unregister(made[#made])
    sk.backends.register("slot_again")
    sk.backends.unregister("slot_again")
    for i = #made - 1, 1, -1 do sk.backends.unregister(made[i]) end
  end)

  it("follow a backend record's fallback policy: cpu runs every op without a kernel on the CPU, none raises", function()
    sk.backends.register("pol", {fallback = "cpu"})
    local a = T({1.0, 2.0, 3.0}):to("pol")
    sk.fallback.reset("pol")
    local p = sk.mul(a, a)
    assert.equal("pol:0", p:device())
    assert.same({1, 4, 9}, p:cpu():totable())
    assert.equal(1, sk.fallback.counts("pol")["aten::mul.out"])
    assert.equal("fallback", sk.dispatch_table("aten::mul.out")["pol"].source)
    a, p = nil, nil
    collectgarbage()
    sk.backends.unregister("pol") -- the record's own fallback goes with it: no library to close
    sk.backends.register("pol", {fallback = "none"})
    local b = T({1.0}):to("pol")
    assert.matches("no kernel for 'aten::mul.out' on backend 'pol' %(registered for: [%w, ]+; no fallback%)",
                   h.err(sk.mul, b, b))
    b = nil
    collectgarbage()
    sk.backends.unregister("pol")
    local line = debug.getinfo(1, "l").currentline
    local ok, err = pcall(sk.backends.register, "pol2", {fallback = "gpu"})
    assert.is_false(ok)
    assert.matches("sk.backends.register: option 'fallback' must be \"none\" or \"cpu\", not 'gpu'", err)
    ok, err = pcall(function() sk.backends.register("pol2", {fallbak = "cpu"}) end)
    assert.is_false(ok)
    assert.matches("library_spec.lua:" .. line + 4 .. ": sk.backends.register: unexpected option 'fallbak' %(expected fallback, on_copy%)", err)
    assert.matches("unknown device 'pol2'", h.err(sk.zeros, {1}, {device = "pol2"}))
  end)

  it("reports backend copies and refuses bad registrations", function()
    local copies = {}
    sk.backends.register("hooked", {on_copy = function(dir, n) copies[#copies + 1] = dir .. ":" .. n end})
    local x = T({1.0, 2.0}):to("hooked")
    assert.same({1, 2}, x:cpu():totable())
    assert.same({"from_cpu:8", "to_cpu:8"}, copies)
    assert.equal(8, sk.backends.stats("hooked").copied_to_cpu)
    assert.matches("backend 'hooked' is already registered", h.err(sk.backends.register, "hooked"))
    assert.matches("still has 8 bytes of tensors alive", h.err(sk.backends.unregister, "hooked"))
    x = nil
    collectgarbage()
    sk.backends.unregister("hooked")
    assert.matches("unknown device 'hooked'", h.err(sk.zeros, {1}, {device = "hooked"}))
  end)
end)

describe("library lifetime", function()
  it("refuses to close while another library has kernels on its ops, changing nothing", function()
    local A = sk.library("la")
    A:define("f(Tensor self) -> Tensor")
    A:impl("f", "CPU", function(x) return x:clone() end)
    local B = sk.library("lb")
    B:impl("la::f", "CPU", function(x) return x * 2 end)
    assert.matches("^lib:close: operator 'la::f' still has kernels registered by another library", h.err(A.close, A))
    assert.same({2}, sk.ops.la.f(T({1.0})):totable())
    B:close()
    assert.same({1}, sk.ops.la.f(T({1.0})):totable())
    A:close()
  end)
  it("refuses sk.cpu_fallback for CPU and Meta, and strips quotes from str defaults", function()
    local lib = sk.library("lq")
    assert.matches("^lib:fallback: sk.cpu_fallback serves backends other than CPU and Meta, not 'CPU'",
      h.err(lib.fallback, lib, "CPU", sk.cpu_fallback))
    lib:define([[q(Tensor self, str a="dq", str b='sq') -> Tensor]])
    local got
    lib:impl("q", "CPU", function(x, a, b) got = a .. "," .. b return x:clone() end)
    sk.ops.lq.q(T({1}))
    assert.equal("dq,sq", got)
    lib:close()
  end)
  it("closes a collected library", function()
    do
      local lib = sk.library("gone")
      lib:define("g(Tensor self) -> Tensor")
      lib:impl("g", "CPU", function(x) return x end)
    end
    collectgarbage()
    collectgarbage()
    assert.matches("sk.ops.gone has no op 'g'", h.err(function() return sk.ops.gone.g end))
  end)
  it("closes on <close> and keeps a held function safe", function()
    local f
    do
      local lib <close> = sk.library("scoped")
      lib:define("s(Tensor self) -> Tensor")
      lib:impl("s", "CPU", function(x) return x:clone() end)
      f = sk.ops.scoped.s
      assert.same({1}, f(T({1})):totable())
    end
    assert.matches("this op was removed %(its library was closed%)", h.err(f, T({1})))
  end)
end)
