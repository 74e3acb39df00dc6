package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
-- Specs for sk.schema: round-trips real PyTorch schemas, checks record fields, signature() and errors.
local schema = require "sk.schema"

-- real schemas from PyTorch's native_functions.yaml (plus a few marked synthetic)
local REAL = {
  "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
  "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
  "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
  "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
  "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
  "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
  "topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
  "chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
  "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
  "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
  "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
  "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
  "zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
  "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
  "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
  "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
  "myops::softplus(Tensor self, float beta=1) -> Tensor",
  "aten::sym_size.int(Tensor self, int dim) -> SymInt",
  "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
  "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
  "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
  "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
  "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
  "mean.names_dim(Tensor self, Dimname[1] dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
  "align_to(Tensor(a) self, Dimname[] names) -> Tensor(a)",
  "unflatten.Dimname(Tensor(a) self, Dimname dim, SymInt[] sizes, Dimname[] names) -> Tensor(a)",
  "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
  "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
  "bernoulli(Tensor self, *, Generator? generator=None) -> Tensor",
  "normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor",
  "avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)",
  "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
  "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[1]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
  "fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor",
  "cat(Tensor[] tensors, int dim=0) -> Tensor",
  "cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
  "_foreach_add.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]",
  "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
  "_foreach_add.Scalar_out(Tensor[] self, Scalar scalar, *, Tensor(a!)[] out) -> ()",
  "_amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, Tensor(b!) found_inf, Tensor inv_scale) -> ()",
  "size.int(Tensor self, int dim) -> int",
  "is_nonzero(Tensor self) -> bool",
  "item(Tensor self) -> Scalar",
  "q_scale(Tensor self) -> float",
  "result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType",
  "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100) -> Tensor",
  "scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
  "pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor",
  "gelu(Tensor self, *, str approximate='none') -> Tensor",
  "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
  "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
  "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
  "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
  "to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
  "randint(SymInt high, SymInt[] size, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
  "einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
  "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
  "sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
  "resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
  "rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> Tensor",
  "__ior__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
  "_assert_async.msg(Tensor self, str assert_msg) -> ()",
  -- synthetic: grammar features with no (current) real user
  "pad_test(Tensor self, int[2] padding=[0, 0]) -> Tensor",
  "mut_after(Tensor self, Tensor(a! -> a|b) x) -> ()",
  "list_alias(Tensor(a)[] tensors, int i) -> Tensor(a)",
  "opt_list(Tensor?[]? maybe, bool? flag=None, float[] ws=[1.5, 2]) -> Tensor",
}

-- the REAL entry whose op name (text before "(") is `op`
local function real(op)
  for _, s in ipairs(REAL) do
    if s:sub(1, #op + 1) == op .. "(" then return s end
  end
  error("no schema " .. op)
end

describe("sk.schema", function()
  it("round-trips real PyTorch schemas", function()
    assert.is_true(#REAL >= 40)
    for _, s in ipairs(REAL) do
      local r, err = schema.parse(s)
      assert.is_nil(err)
      assert.are.equal(s, r.text)
      assert.are.equal(s, schema.print(r))
    end
  end)

  it("fills in add.out", function()
    local r = schema.parse(real("add.out"))
    assert.are.same({ "aten", "add", "add", false, "out", "out", false },
      { r.namespace, r.name, r.base, r.inplace, r.overload, r.kind, r.is_view })
    assert.are.equal(4, #r.args)
    local alpha, out = r.args[3], r.args[4]
    assert.are.same({ name = "alpha", type = { base = "Scalar", optional = false, elem_optional = false },
      default = "1", kwarg_only = true, is_out = false, pos = 3 }, alpha)
    assert.are.same({ set = "a", write = true }, out.type.alias)
    assert.is_true(out.is_out and out.kwarg_only)
    assert.is_false(r.args[1].kwarg_only)
    assert.are.same({ set = "a", write = true }, r.returns[1].type.alias)
  end)

  it("computes kind and is_view", function()
    local function k(op) local r = schema.parse(real(op)); return r.kind .. (r.is_view and "/view" or "") end
    assert.are.equal("functional", k("add.Tensor"))
    assert.are.equal("inplace", k("add_.Tensor"))
    assert.are.equal("out", k("max.dim_max"))
    assert.are.equal("functional/view", k("chunk"))
    assert.are.equal("functional/view", k("transpose.int"))
    local r = schema.parse("rrelu_with_noise(Tensor self, Tensor(b!) noise, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> Tensor")
    assert.are.equal("mutable", r.kind)
    local ior = schema.parse("__ior__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    assert.are.same({ "__ior__", "__or__", true, "inplace" }, { ior.name, ior.base, ior.inplace, ior.kind })
  end)

  it("parses types, aliases and defaults", function()
    local function arg(s, i) return schema.parse(s).args[i] end
    local chunk_self = arg(real("chunk"), 1)
    assert.are.same({ set = "a", write = false, after = "*" }, chunk_self.type.alias)
    assert.are.same({ size = nil }, schema.parse(real("chunk")).returns[1].type.list)
    local idx = arg(real("index.Tensor"), 2).type
    assert.are.same({ base = "Tensor", optional = false, elem_optional = true, list = {} }, idx)
    local dim = arg(real("sum.dim_IntList"), 2)  -- int[1]? dim
    assert.are.same({ base = "int", optional = true, elem_optional = false, list = { size = 1 } }, dim.type)
    assert.is_nil(dim.default)
    local z = schema.parse(real("zeros"))
    assert.are.same({ "dtype", "ScalarType", true, "None", true, false },
      { z.args[2].name, z.args[2].type.base, z.args[2].type.optional, z.args[2].default, z.args[2].kwarg_only, z.args[2].is_out })
    assert.are.equal("1e-05", arg(real("layer_norm"), 5).default)
    assert.are.equal("True", arg(real("layer_norm"), 6).default)
    assert.are.equal("[-2,-1]", arg("fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor", 3).default)
    assert.are.equal("contiguous_format", arg(real("contiguous"), 2).default)
    assert.are.equal('"constant"', arg("pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor", 3).default)
    assert.are.equal("-100", arg(real("nll_loss"), 5).default)
    assert.are.equal("[0, 0]", arg("pad_test(Tensor self, int[2] padding=[0, 0]) -> Tensor", 2).default)
    assert.are.same({ set = "a", write = true, after = "a|b" }, arg("mut_after(Tensor self, Tensor(a! -> a|b) x) -> ()", 2).type.alias)
    assert.are.equal("bool", arg(real("native_layer_norm_backward"), 8).type.base)
    assert.are.same({ size = 3 }, arg(real("native_layer_norm_backward"), 8).type.list)
    local mx = schema.parse(real("max.dim"))
    assert.are.same({ "values", "indices" }, { mx.returns[1].name, mx.returns[2].name })
    local ns = schema.parse(real("myops::softplus"))
    assert.are.same({ "myops", "softplus", "" }, { ns.namespace, ns.name, ns.overload })
    assert.are.same({}, schema.parse(real("_foreach_add_.Scalar")).returns)
    assert.are.equal("int", schema.parse(real("size.int")).returns[1].type.base)
  end)

  it("prints types", function()
    assert.are.equal("Tensor(a!)[]", schema.type_str(schema.parse_type("Tensor(a!)[]")))
    assert.are.equal("int[1]?", schema.type_str(schema.parse_type("int[1]?")))
    assert.are.equal("Tensor?[]", schema.type_str(schema.parse_type("Tensor?[]")))
  end)

  it("allows a required positional after a defaulted one", function()
    assert.is_table(schema.parse("foo(Tensor self, int a=1, int b) -> Tensor"))
  end)

  it("normalizes signatures across variants", function()
    local want = "add(Tensor self, Tensor other, *, Scalar alpha) -> Tensor"
    for _, op in ipairs({ "add.Tensor", "add_.Tensor", "add.out" }) do
      assert.are.equal(want, schema.signature(schema.parse(real(op))))
    end
    assert.are_not.equal(want, schema.signature(schema.parse(real("add.Scalar"))))
    local fe = "_foreach_add(Tensor[] self, Scalar scalar) -> Tensor[]"
    for _, op in ipairs({ "_foreach_add.Scalar", "_foreach_add_.Scalar", "_foreach_add.Scalar_out" }) do
      assert.are.equal(fe, schema.signature(schema.parse(real(op))))
    end
    assert.are.equal("max(Tensor self, int dim, bool keepdim) -> (Tensor, Tensor)", schema.signature(schema.parse(real("max.dim_max"))))
    assert.are.equal("zeros(SymInt[] size) -> Tensor", schema.signature(schema.parse(real("zeros"))))
    assert.are.equal("zeros(SymInt[] size) -> Tensor",
      schema.signature(schema.parse("zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)")))
    assert.are.equal("__or__(Tensor self, Tensor other) -> Tensor", schema.signature(schema.parse(real("__ior__.Tensor"))))
    assert.are.equal("myops::softplus(Tensor self, float beta) -> Tensor", schema.signature(schema.parse(real("myops::softplus"))))
  end)

  describe("rejects", function()
    local function rejects(s, msg)
      local r, err = schema.parse(s)
      assert.is_nil(r)
      assert.are.equal("bad schema '" .. s .. "': " .. msg, err)
    end
    it("unknown types", function()
      rejects("foo(Tensor self, Foo x) -> Tensor", "unknown type 'Foo'")
      rejects("foo(Tensor self) -> Bar", "unknown type 'Bar'")
      rejects("foo(int[][] x) -> Tensor", "bad type 'int[][]'")
    end)
    it("_out names", function()
      rejects("foo_out(Tensor self) -> Tensor",
        "_out suffix is reserved and not permitted for operator names; did you mean to specify an out overload name instead?")
    end)
    it("out args that do not match returns", function()
      rejects("foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(b!)",
        "Out arguments must have matching return Tensor; furthermore, the ith-argument needs to correspond to the ith return")
      rejects("foo.out(Tensor self, *, Tensor(a!) a, Tensor(b!) b) -> Tensor(a!)",
        "Must return as many arguments as there are out arguments, or no return at all")
      rejects("foo.out(Tensor self, *, Tensor(a!)[] out) -> Tensor(a!)[]",
        "out= ops that accept tensor lists as out arguments are expected to have no return type (since you can't do method chaining on them)")
    end)
    it("bad inplace ops", function()
      rejects("foo_(Tensor self) -> Tensor",
        "inplace operator 'foo_' must take a write-annotated self argument, e.g. Tensor(a!) self")
      rejects("foo_(Tensor(a!) self) -> Tensor",
        "inplace operator 'foo_' must return its self argument ('Tensor(a!)')")
      rejects("foo_(Tensor(a!)[] self) -> Tensor[]", "inplace operator 'foo_' must return its self argument as ()")
    end)
    it("mutable returns not aliasing self or an out kwarg", function()
      rejects("foo(Tensor self, Tensor(a!) x) -> Tensor(a!)",
        'All mutable returns must be aliased either to a keyword argument, or to "self". Did you forget to mark an out argument as keyword-only?')
    end)
    it("duplicate argument names", function()
      rejects("foo(Tensor self, int x, int x) -> Tensor", "duplicate argument name 'x'")
    end)
    it("out args followed by other kwargs", function()
      rejects("foo.out(Tensor self, *, Tensor(a!) out, int x=1) -> Tensor(a!)",
        "out arguments must come last; 'x' follows an out argument")
    end)
    it("bad alias annotations", function()
      rejects("foo(Tensor(ab) self) -> Tensor", "bad alias annotation 'ab'")
      rejects("foo(Tensor(a|b!) self) -> Tensor", "write alias annotation 'a|b!' must name exactly one alias set")
      rejects("foo(Tensor(a -> ) self) -> Tensor", "bad alias annotation 'a -> '")
    end)
    it("malformed text", function()
      rejects("foo(Tensor self,Tensor other) -> Tensor",
        "not in canonical form (expected 'foo(Tensor self, Tensor other) -> Tensor')")
      rejects("foo(Tensor self) -> (Tensor)", "not in canonical form (expected 'foo(Tensor self) -> Tensor')")
      rejects("foo(Tensor self)->Tensor", "expected ' -> ' and returns after the arguments")
      rejects("foo(Tensor self -> Tensor", "unbalanced parentheses")
      rejects("foo", "expected '('")
      rejects("a::b::c(Tensor self) -> Tensor", "bad operator name 'a::b::c'")
      rejects("foo(Tensor self, *, int a=1, *, int b=2) -> Tensor", "'*' may appear only once")
      rejects("foo(Tensor self, int a=1 2) -> Tensor", "bad default '1 2' for 'a'")
      rejects("foo(Tensor) -> Tensor", "bad argument 'Tensor'")
      assert.are.same({ nil, "bad schema: expected a string, got nil" }, { schema.parse(nil) })
    end)
  end)
end)
