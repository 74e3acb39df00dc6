package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
-- Specs for codegen.model: yaml entries -> validated, grouped records, and every error message.
local model = require "codegen.model"

local ADD = [[
# leading comment
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  device_check: NoCheck   # TensorIterator
  structured_delegate: add.out
  variants: function, method

- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  variants: method
  structured_delegate: add.out


- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU, CUDA: add_out

- func: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: add

- func: avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  precomputed:
  - kernel_size -> int kH, int kW
  - stride -> int dH, int dW
  - padding -> int padH, int padW
  dispatch:
    CPU: avg_pool2d_out_cpu

- func: relu(Tensor self) -> Tensor
  device_guard: False
  dispatch:
    CompositeImplicitAutograd: relu
]]

local function fails(yaml, msg)
  local ok, err = pcall(model.load_string, yaml)
  assert.is_false(ok)
  assert.are.equal(msg, err)
end

-- a one-entry file on line 1
local function fails1(entry, opname, msg)
  fails(entry, "native_functions.yaml:1: " .. opname .. ": " .. msg)
end

local OUT = "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
local FUNC = "- func: foo(Tensor self) -> Tensor\n"

describe("codegen.model", function()
  it("loads records in file order with defaults and normalized keys", function()
    local m = model.load_string(ADD)
    assert.are.equal(6, #m.functions)
    local t = m.by_name["add.Tensor"]
    assert.are.same({ 2, "add.Tensor", "add.out", "NoCheck", true, false },
      { t.line, t.opname, t.structured_delegate, t.device_check, t.device_guard, t.structured })
    assert.are.same({ func = true, method = true }, t.variants)
    assert.are.same({}, t.dispatch)
    assert.are.equal("functional", t.schema.kind)
    local i = m.by_name["add_.Tensor"]
    assert.are.same({ 7, { func = false, method = true } }, { i.line, i.variants })
    local o = m.by_name["add.out"]
    assert.are.same({ 12, true, "TensorIteratorBase", "ExactSame" },
      { o.line, o.structured, o.structured_inherits, o.device_check })
    assert.are.same({ CPU = "add_out", CUDA = "add_out" }, o.dispatch)
    assert.are.same({ func = true, method = false }, o.variants)
    assert.are.same({ DefaultBackend = "add" }, m.by_name["add.Scalar"].dispatch)
    local relu = m.by_name["relu"]
    assert.are.same({ { Math = "relu" }, false }, { relu.dispatch, relu.device_guard })
    for k, r in ipairs(m.functions) do assert.are.equal(r, m.by_name[r.opname], k) end
  end)

  it("parses precomputed", function()
    local p = model.load_string(ADD).by_name["avg_pool2d.out"].precomputed
    assert.are.same({
      { replaces = "kernel_size", fields = { { type = "int", name = "kH" }, { type = "int", name = "kW" } } },
      { replaces = "stride", fields = { { type = "int", name = "dH" }, { type = "int", name = "dW" } } },
      { replaces = "padding", fields = { { type = "int", name = "padH" }, { type = "int", name = "padW" } } },
    }, p)
    local m = model.load_string(OUT .. "  structured: True\n  precomputed:\n  - self -> int dim\n  - bool flag, ScalarType st\n")
    assert.are.same({ { replaces = "self", fields = { { type = "int", name = "dim" } } },
      { fields = { { type = "bool", name = "flag" }, { type = "ScalarType", name = "st" } } } },
      m.functions[1].precomputed)
  end)

  it("groups variants by signature in order of first appearance", function()
    local m = model.load_string(ADD)
    assert.are.equal(4, #m.groups)
    local g = m.groups[1]
    assert.are.equal("add(Tensor self, Tensor other, *, Scalar alpha) -> Tensor", g.signature)
    assert.are.equal(m.by_name["add.Tensor"], g.functional)
    assert.are.equal(m.by_name["add_.Tensor"], g.inplace)
    assert.are.equal(m.by_name["add.out"], g.out)
    assert.is_nil(g.mutable)
    assert.is_true(g.structured)
    assert.are.equal(g, m.by_signature[m.by_name["add.out"].signature])
    local s = m.groups[2]
    assert.are.same({ "add(Tensor self, Scalar other, Scalar alpha) -> Tensor", false },
      { s.signature, s.structured })
    assert.are.equal(m.by_name["add.Scalar"], s.functional)
    assert.is_nil(s.out)
    assert.are.equal(m.by_name["avg_pool2d.out"], m.groups[3].out)
    assert.is_true(m.groups[3].structured)
    assert.are.equal(m.by_name["relu"], m.groups[4].functional)
  end)

  it("allows undelegated functional/inplace members of a structured group", function()
    local m = model.load_string(OUT .. "  structured: True\n" .. "- func: foo_(Tensor(a!) self) -> Tensor(a!)\n"
      .. FUNC .. "  dispatch:\n    CPU: foo_cpu\n")
    assert.are.equal(1, #m.groups)
    assert.is_true(m.groups[1].structured)
    assert.are.equal("foo_", m.groups[1].inplace.opname)
  end)

  it("loads files by path with their basename in errors", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("- func: a(Tensor self) -> Tensor\n\n- func: b(Tensor self) -> Tensor\n  dispatch:\n    Foo: x\n")
    f:close()
    local ok, err = pcall(model.load, path)
    os.remove(path)
    assert.is_false(ok)
    assert.are.equal(path:match("[^/]*$") .. ":3: b: unknown dispatch key 'Foo'", err)
  end)

  describe("rejects", function()
    it("bad schemas", function()
      fails1("- func: foo(Tensor self, Foo x) -> Tensor\n", "foo",
        "bad schema 'foo(Tensor self, Foo x) -> Tensor': unknown type 'Foo'")
    end)
    it("duplicate operators", function()
      fails(FUNC .. "- func: bar(Tensor self) -> Tensor\n" .. FUNC,
        "native_functions.yaml:3: foo: duplicate operator name 'foo' (first defined at line 1)")
      fails(OUT .. "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n",
        "native_functions.yaml:2: foo.out: duplicate operator name 'foo.out' (first defined at line 1)")
    end)
    it("unknown keys and values", function()
      fails1(FUNC .. "  dispach:\n    CPU: foo\n", "foo", "unknown key 'dispach'")
      fails1(FUNC .. "  dispatch:\n    CPU, Foo: foo\n", "foo", "unknown dispatch key 'Foo'")
      fails1(FUNC .. "  variants: function, methd\n", "foo", "unknown variant 'methd'")
      fails1(FUNC .. "  device_check: Sometimes\n", "foo", "device_check must be NoCheck or ExactSame")
      fails1(FUNC .. "  structured: yes please\n", "foo", "'structured' must be a boolean")
      fails1(FUNC .. "  dispatch: foo\n", "foo", "'dispatch' must be a list or mapping")
      fails1(FUNC .. "  dispatch:\n    DefaultBackend: a\n    CompositeExplicitAutograd: b\n", "foo",
        "duplicate dispatch key 'DefaultBackend'")
      fails1(FUNC .. "  dispatch:\n    DefaultBackend: a\n    Math: b\n", "foo",
        "cannot specify both CompositeExplicitAutograd (DefaultBackend) and CompositeImplicitAutograd (Math) on a single kernel")
    end)
    it("torchgen keys sk does not implement, naming the line", function()
      fails1(FUNC .. "  autogen: foo.out\n", "foo",
        "key 'autogen' is not supported: sk does not generate out variants; declare the out op (a structured family, or an out kernel) yourself")
      fails1(FUNC .. "  tags: pointwise\n", "foo", "key 'tags' is not supported: sk has no operator tags")
      fails1(FUNC .. "  tags: [core, pointwise]\n", "foo", "key 'tags' is not supported: sk has no operator tags")
      fails1(FUNC .. "  python_module: nn\n", "foo", "key 'python_module' is not supported: sk has no Python bindings")
      fails1(FUNC .. "  category_override: dummy\n", "foo", "key 'category_override' is not supported: sk has no Python bindings")
      fails1(FUNC .. "  manual_kernel_registration: True\n", "foo",
        "key 'manual_kernel_registration' is not supported: sk registers every kernel the dispatch table names; omit the key (or the dispatch entry)")
      fails(FUNC .. "- func: bar(Tensor self) -> Tensor\n  autogen: bar.out\n",
        "native_functions.yaml:2: bar: key 'autogen' is not supported: sk does not generate out variants; declare the out op (a structured family, or an out kernel) yourself")
    end)
    it("schema types sk cannot carry, naming the line", function()
      fails1("- func: foo(Tensor self, Dimname dim) -> Tensor\n", "foo", "argument 'dim' is Dimname: sk has no named tensors")
      fails1("- func: foo(Tensor self, Dimname[1] dim) -> Tensor\n", "foo", "argument 'dim' is Dimname[1]: sk has no named tensors")
      fails1("- func: foo(Tensor self) -> str\n", "foo",
        "return 1 is str: str cannot be returned (sk borrows strings for the length of a call)")
      fails1("- func: foo(Tensor self, str[] names) -> Tensor\n", "foo",
        "argument 'names' is str[]: sk has lists of Tensor, int, float, bool only")
      fails1("- func: foo(Tensor self, int?[] dims) -> Tensor\n", "foo", "argument 'dims' is int?[]: only a Tensor?[] list may hold None")
      fails1("- func: foo(Tensor self, Generator gen) -> Tensor\n", "foo",
        "argument 'gen' is Generator: Generator must be optional (nil (sk has no generator objects))")
      fails1("- func: foo(Tensor self) -> Generator\n", "foo", "return 1 is Generator: Generator cannot be returned")
      fails1("- func: foo(Tensor self, *, Layout layout=sparse_coo) -> Tensor\n", "foo",
        "bad default 'sparse_coo' for Layout 'layout'")
      fails1("- func: foo(Tensor self, *, MemoryFormat m=channels_first) -> Tensor\n", "foo",
        "bad default 'channels_first' for MemoryFormat 'm'")
      fails1("- func: foo(Tensor self, *, Tensor(a!) out, Dimname d) -> Tensor(a!)\n", "foo",
        "bad schema 'foo(Tensor self, *, Tensor(a!) out, Dimname d) -> Tensor(a!)': out arguments must come last; 'd' follows an out argument")
      fails1(OUT .. "  structured: True\n  precomputed:\n  - self -> Dimname d\n", "foo.out", "precomputed: Dimname: sk has no named tensors")
    end)
    it("malformed files", function()
      fails("- func: a(Tensor self) -> Tensor\n- func: [x\n",
        "native_functions.yaml:2:10: did not find expected ',' or ']'")
      fails("- variants: method\n  func: a(Tensor self) -> Tensor\n",
        "native_functions.yaml: expected a list of entries, each starting with '- func:' (found 0 '- func:' lines)")
      fails("func: a(Tensor self) -> Tensor\n",
        "native_functions.yaml: expected a list of entries, each starting with '- func:' (found 0 '- func:' lines)")
    end)
    it("structured on non-out functions", function()
      fails1(FUNC .. "  structured: True\n", "foo",
        "Put structured field on the out= variant of a function; did you mean structured_delegate?")
    end)
    it("structured_delegate on out functions", function()
      fails1(OUT .. "  structured_delegate: foo.out\n", "foo.out",
        "structured_delegate field not allowed on out= functions; did you mean structured?")
    end)
    it("both structured and structured_delegate", function()
      fails1(OUT .. "  structured: True\n  structured_delegate: foo.out\n", "foo.out",
        "Cannot have both structured and structured_delegate on function")
    end)
    it("delegates to missing or unstructured ops", function()
      fails1(FUNC .. "  structured_delegate: foo.out\n", "foo", "structured_delegate 'foo.out' is not a structured op")
      fails(OUT .. FUNC .. "  structured_delegate: foo.out\n",
        "native_functions.yaml:2: foo: structured_delegate 'foo.out' is not a structured op")
    end)
    it("delegates to another group's out op", function()
      local mul = "- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
      local yaml = ADD:gsub("structured_delegate: add.out\n  variants: function, method",
        "structured_delegate: mul.out\n  variants: function, method")
      fails(yaml .. mul, "native_functions.yaml:2: add.Tensor: add.Tensor delegates to mul.out but its actual delegate is add.out")
    end)
    it("delegating functions whose group has no out op", function()
      local mul = "- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
      fails(mul .. FUNC .. "  structured_delegate: mul.out\n",
        "native_functions.yaml:3: foo: foo delegates to mul.out but its group (signature 'foo(Tensor self) -> Tensor') has no out= variant")
    end)
    it("explicit Meta / DefaultBackend / Math kernels on structured out ops", function()
      fails1(OUT .. "  structured: True\n  dispatch:\n    CPU, Meta: foo_out\n", "foo.out",
        "Do not explicitly specify Meta dispatch key on structured functions, they will be automatically generated for you")
      fails1(OUT .. "  structured: True\n  dispatch:\n    CompositeExplicitAutograd: foo_out\n", "foo.out",
        "Do not explicitly specify CompositeExplicitAutograd dispatch key on structured functions, they will be automatically generated for you")
      fails1(OUT .. "  structured: True\n  dispatch:\n    DefaultBackend: foo_out\n", "foo.out",
        "Do not explicitly specify DefaultBackend dispatch key on structured functions, they will be automatically generated for you")
      fails1(OUT .. "  structured: True\n  dispatch:\n    Math: foo_out\n", "foo.out",
        "structured kernels cannot have a Math kernel (structured composite kernels are not supported)")
    end)
    it("backend kernels on delegating functions", function()
      local base = OUT .. "  structured: True\n" .. FUNC .. "  structured_delegate: foo.out\n  dispatch:\n"
      fails(base .. "    CPU: foo_cpu\n",
        "native_functions.yaml:3: foo: if structured_delegate, then must not have CPU in dispatch dictionary (it is delegated!)")
      fails(base .. "    CUDA: foo_cuda\n",
        "native_functions.yaml:3: foo: if structured_delegate, then must not have CUDA in dispatch dictionary (it is delegated!)")
      fails(base .. "    Meta: foo_meta\n",
        "native_functions.yaml:3: foo: if structured_delegate, then must not have Meta in dispatch dictionary (it is delegated!)")
      assert.are.same({ BackendSelect = "foo_bs" }, model.load_string(base .. "    BackendSelect: foo_bs\n").by_name.foo.dispatch)
    end)
    it("structured_inherits / precomputed without structured", function()
      fails1(OUT .. "  structured_inherits: TensorIteratorBase\n", "foo.out", "structured_inherits must also imply structured: True")
      fails1(OUT .. "  precomputed:\n  - self -> int x\n", "foo.out", "precomputed must also imply structured: True")
      fails1(OUT .. "  structured: True\n  structured_inherits: MetaBase\n", "foo.out",
        "structured_inherits must be TensorIteratorBase, not 'MetaBase'")
    end)
    it("bad precomputed entries", function()
      local base = "- func: sum.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  precomputed:\n"
      fails1(base .. "  - dimm -> int dim\n", "sum.out", "precomputed: no argument 'dimm'")
      fails1(base .. "  - dim -> Foo d\n", "sum.out", "precomputed: unknown type 'Foo'")
      fails1(base .. "  - int d\n  - dim -> int dim\n", "sum.out", "precomputed: bad entry 'int d'")
    end)
    it("out functions with a method variant", function()
      fails1(OUT .. "  variants: function, method\n", "foo.out",
        "Native functions with out arguments MUST be declared with only function variant; e.g., variants: function; otherwise you will tickle a Python argument binding bug (which usually manifests itself as the result variable being undefined.)")
    end)
    it("two functions of the same kind in one group", function()
      fails("- func: foo_(Tensor(a!) self) -> Tensor(a!)\n\n- func: foo_.other(Tensor(a!) self) -> Tensor(a!)\n",
        "native_functions.yaml:3: foo_.other: duplicate inplace variant for signature 'foo(Tensor self) -> Tensor' (already foo_ at line 1)")
    end)
    it("device_guard: False on structured functions", function()
      fails1(OUT .. "  structured: True\n  device_guard: False\n", "foo.out",
        "device_guard: False is not respected by structured kernels")
      fails(OUT .. "  structured: True\n" .. FUNC .. "  structured_delegate: foo.out\n  device_guard: False\n",
        "native_functions.yaml:3: foo: device_guard: False is not respected by structured kernels")
    end)
  end)
end)

describe("codegen.backends", function()
  it("lists the compiled-in backends of SK_COMPILED_BACKENDS in src/core/sk_device.h, in its order", function()
    local f = assert(io.open("src/core/sk_device.h"))
    local text = f:read("a")
    f:close()
    local rows = assert(text:match("#define SK_COMPILED_BACKENDS%(X%)([^\n]*)"))
    local c = {}
    for e, name in rows:gmatch('X%((%w+), "(%w+)"%)') do c[#c + 1] = { e, name } end
    local lua = require "codegen.backends"
    assert.equal(#c, #lua)
    for i, b in ipairs(lua) do
      assert.equal(c[i][1], b.key:upper())
      assert.equal(c[i][2], b.key:lower())
    end
    assert.equal("CPU", lua[1].key) -- the core's fast paths assume device type 0 is the CPU
  end)
end)
