-- spec/types_spec.lua — every schema type sk carries round-trips through a Lua-defined op
-- (Lua -> argument -> Lua kernel -> result -> Lua), and every type it refuses is refused
-- at lib:define with the schema string. The types are the rows of sk.types.
local sk = require "sk"
local types = require "sk.types"
local h = require "spec.helper"

-- type -> values given and expected back unchanged (nil: None, where optional)
local CASES = {
  { "int", { 0, -7, math.maxinteger } },
  { "SymInt", { 3 } },
  { "float", { 1.5, -0.25, 1e300 } },
  { "bool", { true, false } },
  { "Scalar", { 2, 2.5, true } },
  { "ScalarType", { "float32", "int64", "bool" } },
  { "Layout", types.LAYOUTS },
  { "Device", { "cpu", "meta" } },
  { "MemoryFormat", types.MEMORY_FORMATS },
  { "str", { "mean", "" } },
  { "int[]", { {}, { 1, -2, 3 } } },
  { "SymInt[2]", { { 4, 5 } } },
  { "float[]", { { 1.5, -2.25 } } },
  { "bool[]", { { true, false, true } } },
}

describe("sk.types", function()
  local lib
  before_each(function() lib = sk.library("types_spec") end)
  after_each(function() lib:close() end)

  -- defines ns::name(Tensor self, <arg>) -> <ret> with a kernel returning its argument
  local function echo(name, arg, ret)
    lib:define(name .. "(Tensor self, " .. arg .. " x) -> " .. ret)
    lib:impl(name, "CPU", function(_, x) return x end)
    return sk.ops.types_spec[name]
  end

  it("round-trips a value of every type, required and optional, through a Lua kernel", function()
    local self = sk.tensor({ 1 })
    for i, case in ipairs(CASES) do
      local T, values = case[1], case[2]
      local returns = T ~= "str" -- a str is borrowed for the call: not a return
      local req = echo("req" .. i, T, returns and T or "Tensor")
      local opt = echo("opt" .. i, T .. "?", returns and T .. "?" or "Tensor")
      for _, v in ipairs(values) do
        if returns then
          assert.are.same(v, req(self, v), T)
          assert.are.same(v, opt(self, v), T .. "?")
        end
      end
      if returns then assert.is_nil(opt(self, nil), T .. "? None") end
    end
  end)

  it("passes the argument to the kernel as the Lua value given", function()
    local self = sk.tensor({ 1 })
    for i, case in ipairs(CASES) do
      local T, values = case[1], case[2]
      local seen
      lib:define("see" .. i .. "(Tensor self, " .. T .. " x) -> Tensor")
      lib:impl("see" .. i, "CPU", function(t, x) seen = x; return t end)
      for _, v in ipairs(values) do
        sk.ops.types_spec["see" .. i](self, v)
        assert.are.same(v, seen, T)
      end
    end
  end)

  it("round-trips tensors, tensor lists and None inside a Tensor?[]", function()
    local a, b = sk.tensor({ 1, 2 }), sk.tensor({ 3.5 })
    local t = echo("t", "Tensor", "Tensor")
    assert.are.same({ 1, 2 }, t(a, a):totable())
    local tl = echo("tl", "Tensor[]", "Tensor[]")
    local r = tl(a, { a, b })
    assert.are.same({ { 1, 2 }, { 3.5 } }, { r[1]:totable(), r[2]:totable() })
    local to = echo("to", "Tensor?", "Tensor?")
    assert.is_nil(to(a, nil))
    assert.are.same({ 3.5 }, to(a, b):totable())
    local seen
    lib:define("tol(Tensor self, Tensor?[] x) -> Tensor")
    lib:impl("tol", "CPU", function(s, x) seen = x; return s end)
    sk.ops.types_spec.tol(a, { a, false, b })
    assert.are.same({ true, false, true }, { seen[1] == a, seen[2], seen[3] ~= nil })
  end)

  it("takes defaults of every type that has them", function()
    local seen
    lib:define("dflt(Tensor self, int i=3, float f=1.5, bool b=True, str s=\"sum\", Scalar c=2, ScalarType st=int32, "
      .. "Layout l=strided, Device d=\"meta\", MemoryFormat m=channels_last, int[] il=[1, 2], float[] fl=[0.5], "
      .. "bool[] bl=[True, False], int? n=None) -> Tensor")
    lib:impl("dflt", "CPU", function(t, ...) seen = { ... }; return t end)
    sk.ops.types_spec.dflt(sk.tensor({ 1 }))
    assert.are.same({ 3, 1.5, true, "sum", 2, "int32", "strided", "meta", "channels_last", { 1, 2 }, { 0.5 },
                      { true, false } }, seen)
  end)

  it("passes a Generator? as nil, and refuses a value for it", function()
    local seen = 1
    lib:define("gen(Tensor self, *, Generator? generator=None) -> Tensor")
    lib:impl("gen", "CPU", function(t, g) seen = g; return t end)
    sk.ops.types_spec.gen(sk.tensor({ 1 }))
    assert.is_nil(seen)
    assert.matches("option 'generator' expected nil %(sk has no generator objects%), got table",
      h.err(sk.ops.types_spec.gen, sk.tensor({ 1 }), { generator = {} }))
  end)

  it("refuses enum names sk does not know, naming the argument", function()
    local f = echo("lay", "Layout", "Layout")
    assert.matches("argument 'x': unknown layout 'sparse_coo' %(expected a layout name %(\"strided\"%)%)",
      h.err(f, sk.tensor({ 1 }), "sparse_coo"))
    local m = echo("mf", "MemoryFormat", "MemoryFormat")
    assert.matches("argument 'x': unknown memory format 'nchw'", h.err(m, sk.tensor({ 1 }), "nchw"))
    lib:impl("mf", "CPU", function() return "nhwc" end)
    assert.matches("Lua kernel for 'types_spec::mf' on CPU: argument '': unknown memory format 'nhwc'",
      h.err(m, sk.tensor({ 1 }), "channels_last"))
    lib:impl("mf", "CPU", function() return 3 end)
    assert.matches("returned number as result 1, the schema says a memory format name", h.err(m, sk.tensor({ 1 }), "channels_last"))
  end)

  it("passes layouts and memory formats of built-in ops by name", function()
    local t = sk.tensor({ { 1, 2 }, { 3, 4 } })
    assert.are.same({ { 1, 2 }, { 3, 4 } }, sk.clone(t, { memory_format = "preserve_format" }):totable())
    assert.matches("sk.empty: argument 'memory_format' must be contiguous_format %(got channels_last%)",
      h.err(sk.empty, { 2 }, { memory_format = "channels_last" }))
    assert.matches("unknown memory format 'nchw'", h.err(sk.empty, { 2 }, { memory_format = "nchw" }))
    assert.matches("unknown layout 'sparse'", h.err(sk.zeros, { 2 }, { layout = "sparse" }))
    assert.are.same({ 0, 0 }, sk.zeros({ 2 }, { layout = "strided" }):totable())
  end)

  it("refuses at lib:define, with the schema string, every type sk cannot carry", function()
    local refused = {
      { "r1(Tensor self, Dimname d) -> Tensor", "argument 'd' is Dimname: sk has no named tensors" },
      { "r2(Tensor self, Dimname[] d) -> Tensor", "argument 'd' is Dimname%[%]: sk has no named tensors" },
      { "r3(Tensor self) -> str", "return 1 is str: str cannot be returned" },
      { "r4(Tensor self, str[] s) -> Tensor", "argument 's' is str%[%]: sk has lists of Tensor, int, float, bool only" },
      { "r5(Tensor self, Scalar[] s) -> Tensor", "argument 's' is Scalar%[%]: sk has lists of" },
      { "r6(Tensor self, Device[] s) -> Tensor", "argument 's' is Device%[%]: sk has lists of" },
      { "r7(Tensor self, int?[] s) -> Tensor", "argument 's' is int%?%[%]: only a Tensor%?%[%] list may hold None" },
      { "r8(Tensor self, Generator g) -> Tensor", "argument 'g' is Generator: Generator must be optional" },
      { "r9(Tensor self) -> Generator?", "return 1 is Generator%?: Generator cannot be returned" },
      { "r10(Tensor self) -> Dimname", "return 1 is Dimname: sk has no named tensors" },
    }
    for _, r in ipairs(refused) do
      local err = h.err(lib.define, lib, r[1])
      assert.matches("lib:define: '" .. r[1]:gsub("%p", "%%%0") .. "': " .. r[2], err, r[1])
    end
  end)

  it("keeps SkBaseType in the order of its rows", function()
    local f = assert(io.open("src/dispatch/sk_dispatch.h"))
    local enum = f:read("a"):match("typedef enum SkBaseType {(.-)}")
    f:close()
    local names = {}
    for n in enum:gmatch("SK_T_[%u_]+") do names[#names + 1] = n end
    local rows = {}
    for _, r in ipairs(types.rows) do if r.enum then rows[#rows + 1] = r.enum end end
    assert.are.same(names, rows)
  end)
end)
