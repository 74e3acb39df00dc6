-- spec/c_backend_spec.lua — the out-of-tree C backend "cdev" (examples/backend_c) loaded with sk.load_backend.
local h = require "spec.helper"
local sk = h.sk

local SO = (os.getenv("SK_BUILD") or "build") .. "/examples/sk_cbackend.so"
-- busted runs every spec file in one process and a backend loads once per
-- process: load it here, or find it already registered by an earlier load.
do
  local ok, e = pcall(sk.load_backend, SO)
  assert(ok or tostring(e):find("backend 'cdev' is already registered", 1, true), e)
end

local function cdev(values, dtype) return sk.tensor(values, { dtype = dtype or "float32" }):to("cdev") end

describe("a backend in C loaded with sk.load_backend", function()
  it("allocates with its empty kernel and fills with the CPU fill_ kernel it registered", function()
    local z = sk.zeros({3}, { device = "cdev" })
    assert.equal("cdev:0", z:device())
    assert.equal("float32", z:dtype())
    assert.same({0, 0, 0}, z:totable())
    local e = sk.empty({2, 2}, { device = "cdev", dtype = "float64" })
    assert.equal("float64", e:dtype())
    assert.equal("cdev:0", e:device())
  end)

  it("moves tensors in and out through its copy hooks", function()
    local a = cdev({1.5, -2, 3})
    assert.equal("cdev:0", a:device())
    assert.same({1.5, -2, 3}, a:totable())
    local back = a:to("cpu")
    assert.equal("cpu", back:device())
    assert.same({1.5, -2, 3}, back:totable())
  end)

  it("adds through its add.out kernel, functional and in-place via DefaultBackend", function()
    local a, b = cdev({1, 2, 3}), cdev({10, 20, 30})
    local c = sk.add(a, b)
    assert.equal("cdev:0", c:device())
    assert.same({11, 22, 33}, c:totable())
    assert.same({-19, -38, -57}, sk.add(a, b, { alpha = -2 }):totable())
    local v = a:version()
    assert.equal(a, a:add_(b))
    assert.same({11, 22, 33}, a:totable())
    assert.is_true(a:version() > v)
    assert.equal("DefaultBackend", sk.dispatch_table("aten::add.Tensor")["cdev"].source)
    assert.equal("DefaultBackend", sk.dispatch_table("aten::add_.Tensor")["cdev"].source)
    local direct = sk.dispatch_table("aten::add.out")["cdev"]
    assert.equal("direct", direct.source)
    assert.equal("sk_cbackend", direct.origin)
    assert.is_false(direct.boxed)
  end)

  it("broadcasts and walks strided operands", function()
    local m = cdev({{1, 2, 3}, {4, 5, 6}})
    local row = cdev({100, 200, 300})
    assert.same({{101, 202, 303}, {104, 205, 306}}, sk.add(m, row):totable())
    local t = m:t() -- a transposed view: not contiguous
    assert.is_false(t:is_contiguous())
    assert.same({{2, 8}, {4, 10}, {6, 12}}, sk.add(t, t):totable())
  end)

  it("multiplies through its boxed kernel, which calls the CPU fallback", function()
    sk.fallback.reset("cdev")
    local a, b = cdev({1, 2, 3}), cdev({4, 5, 6})
    local c = sk.mul(a, b)
    assert.equal("cdev:0", c:device())
    assert.same({4, 10, 18}, c:totable())
    assert.equal(1, sk.fallback.counts("cdev")["aten::mul.out"])
    local entry = sk.dispatch_table("aten::mul.out")["cdev"]
    assert.equal("direct", entry.source)
    assert.is_true(entry.boxed)
  end)

  it("names the op and the backend for an op it has no kernel for", function()
    local e = h.err(sk.exp, cdev({1, 2}))
    assert.truthy(e:find("no kernel for 'aten::exp.out' on backend 'cdev'", 1, true), e)
  end)

  it("refuses float64 in add.out with its own message", function()
    local a = cdev({1, 2}, "float64")
    local e = h.err(sk.add, a, a)
    assert.truthy(e:find("cdev add.out supports float32 tensors only (argument 'self' is float64)", 1, true), e)
  end)

  it("refuses a second load, a missing file and a library without sk_backend_init", function()
    local e = h.err(sk.load_backend, SO)
    assert.truthy(e:find("backend 'cdev' is already registered", 1, true), e)
    e = h.err(sk.load_backend, "build/examples/no_such_backend.so")
    assert.truthy(e:find("sk.load_backend: cannot load 'build/examples/no_such_backend.so'", 1, true), e)
    e = h.err(sk.load_backend, "/lib/x86_64-linux-gnu/libm.so.6")
    assert.truthy(e:find("'/lib/x86_64-linux-gnu/libm.so.6' has no sk_backend_init function", 1, true), e)
  end)
end)
