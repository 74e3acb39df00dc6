-- spec/conformance/cases.lua — every built-in op's conformance cases, as data.
-- One row is one call shape of one op; the runner (spec/conformance_spec.lua)
-- expands it into cases (row × dtype × variant), runs each on the CPU (the
-- reference) and on every target, and compares. Adding an op adds rows here.
--
-- A row:
--   op       = "add"                 sk.<op>, t:<op>, t:<op>_ (in-place) or {out = ...}
--   args     = { T{2,3}, 2.5, ... }  positional arguments (see the argument language below)
--   kw       = { alpha = 2 }         the trailing options table (may hold specs too)
--   dtypes   = { "float32", ... }    one case per dtype; a spec without dtype takes it
--   variants = { "functional", "method", "inplace", "out" }   (default: functional)
--   outs     = { "values", "indices" }   names of the out arguments (default: out)
--   raises   = "text" | true         an error row: the CPU must raise (an error containing text);
--                                   a row none of whose cases runs on the CPU must say so
--   values   = false                 compare shapes and dtypes only (uninitialised or random)
--   seed     = n                     sk.manual_seed(n) before every run (random ops)
--   factory  = true                  no tensor arguments: "$device" in args/kw names the target's
--   skip     = { meta = "reason" }   a target that cannot run this row (value-dependent), and why
--   pending  = { target = "reason" } a known divergence on that target: reported, does not fail
--
-- Argument language (build with the constructors below):
--   T(shape, {dtype=, layout=, lo=, hi=, values=, nonzero=, device=})  a tensor (values: its elements, a flat
--     list filling the shape when their count is the shape's)
--     layout: "contiguous" (default) | "transposed" (last two dims swapped, ≥ 2-d)
--             | "expanded" (dim 0 has stride 0) | "sliced" (last dim taken with step 2)
--     device = "other": on the CPU reference a meta tensor, on a target a CPU one (device mismatch)
--     device = "cpu": on the CPU on every run (a 0-dim CPU tensor that ops read as a number)
--   I(shape, hi) an int64 index tensor with values in [0, hi);  M(shape) a bool mask
--   L{spec, spec, false, ...} a list of tensors (false: an absent element of Tensor?[])
--   "$device": the device of the run (the CPU's, or the target's)
local M = {}

local Tensor, List = {}, {}
M.Tensor, M.List = Tensor, List

local function T(shape, o)
  -- T{2, 3, layout = "sliced"} and T({2, 3}, {layout = "sliced"}) are the same spec
  local s, dims = {}, {}
  for k, v in pairs(shape) do
    if math.type(k) == "integer" then dims[k] = v else s[k] = v end
  end
  for k, v in pairs(o or {}) do s[k] = v end
  s.shape = dims
  return setmetatable(s, Tensor)
end
local function I(shape, hi) return T(shape, { dtype = "int64", lo = 0, hi = hi - 1 }) end
local function Mk(shape) return T(shape, { dtype = "bool" }) end
local function L(items) return setmetatable(items, List) end
-- NONE: an absent positional argument (nil cannot sit in a Lua list)
local NONE = setmetatable({}, { __name = "NONE" })
M.NONE = NONE

-- {==== dtype groups ====
local ALL = { "float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool" }
local FLOATS = { "float32", "float64", "float16", "bfloat16" }
local INTS = { "int8", "int16", "int32", "int64", "uint8" }
local NUM = { "float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8" }
local F32 = { "float32" }
local INT32 = { "int32" }
M.ALL = ALL
-- }====
local ISFLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

local NONFLOAT = { "int8", "int16", "int32", "int64", "uint8", "bool" }

local ALL4 = { "functional", "method", "inplace", "out" }
local FN_OUT = { "functional", "out" }
local FN_M = { "functional", "method" }
local FN_M_OUT = { "functional", "method", "out" }

local rows = {}
M.rows = rows
local function row(r) rows[#rows + 1] = r end

-- The layouts every pointwise op sees, on float32 (the dtype sweep uses a plain {2, 3}).
local UNARY_SHAPES = {
  T{3, 2, layout = "transposed"}, T{2, 3, layout = "expanded"}, T{2, 3, layout = "sliced"},
  T{0, 3}, T{},
}

-- {==== Pointwise unary ====
-- name, variants of the dtype sweep (the in-place and out ones included where the op has them)
local UNARY = {
  { "abs", ALL4 }, { "acos", ALL4 }, { "acosh", ALL4 }, { "asin", ALL4 }, { "asinh", ALL4 },
  { "atan", ALL4 }, { "atanh", ALL4 }, { "ceil", ALL4 }, { "cos", ALL4 }, { "cosh", ALL4 },
  { "erf", ALL4 }, { "erfc", ALL4 }, { "exp", ALL4 }, { "exp2", ALL4 }, { "expm1", ALL4 },
  { "floor", ALL4 }, { "frac", ALL4 }, { "log", ALL4 }, { "log10", ALL4 }, { "log1p", ALL4 },
  { "log2", ALL4 }, { "neg", ALL4 }, { "reciprocal", ALL4 }, { "round", ALL4 }, { "rsqrt", ALL4 },
  { "sigmoid", ALL4 }, { "sign", ALL4 }, { "sin", ALL4 }, { "sinh", ALL4 }, { "sqrt", ALL4 },
  { "square", ALL4 }, { "tan", ALL4 }, { "tanh", ALL4 }, { "trunc", ALL4 },
  { "bitwise_not", ALL4 }, { "logical_not", ALL4 }, { "nan_to_num", ALL4 },
  { "gelu", { "functional", "inplace", "out" } }, { "silu", { "functional", "inplace", "out" } },
  { "relu", { "functional", "method", "inplace" } },
  { "isnan", FN_M }, { "isinf", FN_M }, { "isfinite", FN_M },
}
for _, u in ipairs(UNARY) do
  row { op = u[1], args = { T{2, 3} }, dtypes = ALL, variants = u[2] }
  for _, x in ipairs(UNARY_SHAPES) do row { op = u[1], args = { x }, dtypes = u[1] == "bitwise_not" and INT32 or F32 } end
end
row { op = "round", args = { T{2, 3} }, kw = { decimals = 1 }, dtypes = FLOATS, variants = ALL4 }
row { op = "gelu", args = { T{2, 3} }, kw = { approximate = "tanh" }, dtypes = FLOATS }
row { op = "gelu", args = { T{2, 3} }, kw = { approximate = "cubic" }, raises = "approximate" }
row { op = "gelu_backward", args = { T{2, 3}, T{2, 3} }, dtypes = FLOATS, variants = { "functional", "out" },
      outs = { "grad_input" } }
row { op = "gelu_backward", args = { T{2, 3}, T{2, 3} }, kw = { approximate = "tanh" }, dtypes = FLOATS }
row { op = "gelu_backward", args = { T{2, 3, layout = "transposed"}, T{3} }, dtypes = F32 }
row { op = "gelu_backward", args = { T{2, 3}, T{2, 3, layout = "sliced"} }, kw = { approximate = "tanh" }, dtypes = F32 }
row { op = "gelu_backward", args = { T{2, 3}, T{2, 3} }, dtypes = INT32, raises = "not implemented for 'Int'" }
row { op = "gelu_backward", args = { T{2, 3}, T{2, 3} }, kw = { approximate = "cubic" }, raises = "approximate" }
row { op = "nan_to_num", args = { T({3}, { values = { 0 / 0, 1 / 0, -1 / 0 } }), 1, 2, -3 },
      dtypes = FLOATS, variants = ALL4 }
row { op = "isnan", args = { T({3}, { values = { 0 / 0, 1 / 0, 1 } }) }, dtypes = FLOATS }
row { op = "isinf", args = { T({3}, { values = { 0 / 0, 1 / 0, 1 } }) }, dtypes = FLOATS }
row { op = "isfinite", args = { T({3}, { values = { 0 / 0, -1 / 0, 1 } }) }, dtypes = FLOATS }
-- }====

-- {==== Pointwise binary ====
-- Shapes of (self, other): the dtype sweep uses the first; the rest run on float32.
local BINARY_SHAPES = {
  { T{2, 3}, T{2, 3} },
  { T{2, 3}, T{3} },                               -- broadcast other
  { T{3, 1}, T{1, 4} },                            -- broadcast both (in-place: a shape error)
  { T{2, 3}, T{} },                                -- 0-dim other
  { T{}, T{} },
  { T{0, 3}, T{3} },                               -- empty
  { T{2, 3, layout = "transposed"}, T{2, 3, layout = "sliced"} },
  { T{2, 3, layout = "expanded"}, T{2, 3} },       -- in-place on an expanded self: an overlap error
  { T{2, 3}, T{4}, raises = "not broadcastable" },
  { T{2, 3}, T({2, 3}, { device = "other" }), raises = "same device" }, -- device mismatch
}
local BINARY = {
  { "add", ALL4 }, { "sub", ALL4 }, { "mul", ALL4 }, { "div", ALL4, nonzero = true },
  { "remainder", ALL4, nonzero = true }, { "fmod", ALL4, nonzero = true }, { "pow", ALL4, exponent = true },
  { "atan2", ALL4 }, { "hypot", ALL4 }, { "maximum", FN_M_OUT }, { "minimum", FN_M_OUT },
  { "bitwise_and", ALL4, int = true }, { "bitwise_or", ALL4, int = true }, { "bitwise_xor", ALL4, int = true },
  { "bitwise_left_shift", ALL4, shift = true, int = true }, { "bitwise_right_shift", ALL4, shift = true, int = true },
  { "logical_and", ALL4 }, { "logical_or", ALL4 }, { "logical_xor", ALL4 },
  { "eq", ALL4 }, { "ne", ALL4 }, { "lt", ALL4 }, { "le", ALL4 }, { "gt", ALL4 }, { "ge", ALL4 },
  { "floor_divide", FN_M, nonzero = true }, { "true_divide", FN_M },
}
-- the second operand's values: no zero divisors (integer division by zero raises), small
-- non-negative exponents and shift counts (a negative integer power raises)
local function second(b, spec)
  local s = {}
  for k, v in pairs(spec) do s[k] = v end
  if b.nonzero then s.lo, s.hi, s.nonzero = 1, 4, true end
  if b.exponent or b.shift then s.lo, s.hi = 0, 3 end
  return setmetatable(s, Tensor)
end
for _, b in ipairs(BINARY) do
  for i, pair in ipairs(BINARY_SHAPES) do
    local first = i == 1
    row { op = b[1], args = { pair[1], second(b, pair[2]) }, dtypes = first and ALL or (b.int and INT32 or F32),
          raises = pair.raises,
          variants = first and b[2] or (b[2] == ALL4 and { "functional", "inplace" } or { "functional" }) }
  end
  -- a Scalar other: Tensor-Scalar overloads (and promotion with a Python-like number)
  row { op = b[1], args = { T{2, 3}, b.shift and 1 or 2 }, dtypes = ALL, variants = FN_M }
  row { op = b[1], args = { T{2, 3}, 0.5 }, dtypes = { "int32", "float16" }, raises = b.int or nil }
end
row { op = "add", args = { T{2, 3}, T{2, 3} }, kw = { alpha = 2 }, dtypes = NUM, variants = ALL4 }
row { op = "sub", args = { T{2, 3}, T{2, 3} }, kw = { alpha = 0.5 }, dtypes = { "float32", "int64" }, variants = ALL4 }
row { op = "sub", args = { T{2, 3}, T{2, 3} }, dtypes = { "bool" }, variants = ALL4, raises = "bool tensors" }
row { op = "add", args = { T{2, 3}, T{2, 3} }, kw = { alpha = 0.5 }, dtypes = { "int64" }, raises = "alpha" }
for _, mode in ipairs { "trunc", "floor" } do
  row { op = "div", args = { T{2, 3}, T({2, 3}, { lo = 1, hi = 4 }) }, kw = { rounding_mode = mode }, dtypes = NUM,
        variants = ALL4 }
end
row { op = "div", args = { T{2, 3}, T{2, 3} }, kw = { rounding_mode = "nearest" }, raises = "rounding_mode" }
row { op = "div", args = { T({2}, { dtype = "int64" }), T({2}, { dtype = "int64", values = { 0, 1 } }) },
      kw = { rounding_mode = "trunc" }, raises = "division by zero", skip = { meta = "the error depends on values" } }
row { op = "pow", args = { 2, T{2, 3} }, dtypes = NUM }                           -- pow.Scalar
row { op = "pow", args = { T({3}, { dtype = "int64" }), T({3}, { dtype = "int64", values = { 1, -1, 2 } }) } } -- no error, as in PyTorch
for _, name in ipairs { "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift" } do
  row { op = name, args = { 3, T({2, 3}, { lo = 0, hi = 3 }) }, dtypes = INTS } -- Scalar_Tensor
end
-- ternary pointwise: shapes of (self, a, b)
local TERNARY_SHAPES = {
  { T{2, 3}, T{2, 3}, T{2, 3} }, { T{2, 1}, T{3}, T{2, 3} }, { T{}, T{3}, T{} },
  { T{0, 3}, T{3}, T{1} }, { T{2, 3, layout = "transposed"}, T{2, 3, layout = "expanded"}, T{2, 3, layout = "sliced"} },
  { T{2, 3}, T{4}, T{2, 3}, raises = "not broadcastable" },
}
for _, op in ipairs { "addcmul", "addcdiv", "lerp" } do
  for i, s in ipairs(TERNARY_SHAPES) do
    local c = op == "addcdiv" and setmetatable({ shape = s[3].shape, layout = s[3].layout, lo = 1, hi = 3 }, Tensor) or s[3]
    row { op = op, args = { s[1], s[2], c }, dtypes = i == 1 and ALL or F32, raises = s.raises,
          variants = i == 1 and (op == "lerp" and FN_M_OUT or FN_M_OUT) or { "functional" } }
  end
  row { op = op, args = { T{2, 3}, T{2, 3}, T{2, 3} }, dtypes = FLOATS, variants = { "inplace" } }
end
row { op = "lerp", args = { T{2, 3}, T{2, 3}, 0.25 }, dtypes = FLOATS, variants = ALL4 }  -- lerp.Scalar
row { op = "addcmul", args = { T{2, 3}, T{2, 3}, T{2, 3} }, kw = { value = 2 }, dtypes = NUM, variants = ALL4 }
row { op = "where", args = { Mk{2, 3}, T{2, 3}, T{2, 3} }, dtypes = ALL, variants = FN_M_OUT }
row { op = "where", args = { Mk{3}, T{2, 1}, T{} }, dtypes = F32 }
row { op = "where", args = { T{2, 3}, T{2, 3}, T{2, 3} }, dtypes = F32, raises = "boolean" }
row { op = "where", args = { Mk{2, 3}, T({2, 3}, { dtype = "int64" }), T{2, 3} }, dtypes = F32 }
row { op = "where", args = { Mk{4}, T{2, 3}, T{2, 3} }, dtypes = F32, raises = "not broadcastable" }
-- clamp: Scalar bounds, Tensor bounds, the _min / _max halves
for _, bounds in ipairs { { -0.5, 0.5 }, { nil, 0.5 }, { -0.5 } } do
  row { op = "clamp", args = { T{2, 3}, bounds[1] or NONE, bounds[2] }, dtypes = ALL, variants = ALL4 }
end
row { op = "clamp", args = { T{2, 3} }, dtypes = F32, raises = "At least one" }
row { op = "clamp", args = { T{2, 3}, T{3}, T{2, 1} }, dtypes = NUM, variants = ALL4 }
row { op = "clamp", args = { T{2, 3, layout = "sliced"}, T{}, T{3} }, dtypes = F32 }
for _, op in ipairs { "clamp_min", "clamp_max" } do
  row { op = op, args = { T{2, 3}, 0.5 }, dtypes = ALL, variants = ALL4 }
  row { op = op, args = { T{2, 3}, T{3} }, dtypes = NUM, variants = ALL4 }
  row { op = op, args = { T{3, 2, layout = "transposed"}, T{} }, dtypes = F32 }
end
-- }====

-- {==== Reductions ====
-- arguments after self, for reductions over int[1]? dims with keepdim
-- (all = it reduces dim 0 too, which an empty {0, 3} input may refuse; raises = a bad dim)
local DIMS = { { all = true }, { 1 }, { -1, true }, { { 0, 1 }, all = true }, { { 0, 1 }, true, all = true },
               { 2, raises = "out of range" } }
local REDUCE_INPUTS = { T{2, 3}, T{3, 2, layout = "transposed"}, T{2, 3, layout = "expanded"}, T{0, 3}, T{} }
-- empty_raises: what the op says when it reduces an empty dim (nil: it does not raise)
local function reduction(op, dtypes, dims, variants, empty_raises)
  for i, x in ipairs(REDUCE_INPUTS) do
    for j, d in ipairs(dims) do
      local args = { x }
      for _, a in ipairs(d) do args[#args + 1] = a end
      local first = i == 1
      -- a 0-dim tensor takes the first form only, its dim 1 read as 0
      if #x.shape == 0 then
        if j > 1 then break end
        if args[2] == 1 then args[2] = 0 end
      end
      row { op = op, args = args, dtypes = first and not d.raises and dtypes or F32,
            raises = d.raises or (x.shape[1] == 0 and d.all and empty_raises) or nil,
            variants = first and #d > 0 and variants or { "functional" } }
    end
  end
end
reduction("sum", ALL, DIMS, FN_M_OUT)
reduction("mean", ALL, DIMS, FN_M_OUT)
reduction("amax", ALL, DIMS, FN_M_OUT, "non-zero size")
reduction("amin", ALL, DIMS, FN_M_OUT, "non-zero size")
local BAD = { 2, raises = "out of range" }
local ONE_DIM = { { all = true }, { 1 }, { -1, true }, BAD }
reduction("logsumexp", ALL, { { 1 }, { -1, true }, { { 0, 1 } }, BAD }, FN_M_OUT)
reduction("norm", ALL, { {}, { 2, 1 }, { 1, { 0, 1 }, true }, { 2, 2, raises = "out of range" } }, FN_M_OUT)
reduction("prod", ALL, ONE_DIM, FN_M_OUT)
reduction("argmax", ALL, ONE_DIM, FN_M_OUT, "numel() == 0")
reduction("argmin", ALL, ONE_DIM, FN_M_OUT, "numel() == 0")
reduction("all", ALL, ONE_DIM, FN_M_OUT)
reduction("any", ALL, ONE_DIM, FN_M_OUT)
reduction("std", ALL, { {}, { false }, { 1 }, { { 0, 1 }, true, true }, BAD }, FN_M_OUT)
reduction("var", ALL, { {}, { false }, { 1 }, { { 0, 1 }, true, true }, BAD }, FN_M_OUT)
for _, op in ipairs { "std", "var" } do
  row { op = op, args = { T{2, 3}, { 1 } }, kw = { correction = 0, keepdim = true }, dtypes = FLOATS, variants = FN_M_OUT }
  row { op = op, args = { T{2, 3} }, kw = { correction = 2 }, dtypes = F32, variants = FN_M }
end
row { op = "sum", args = { T{2, 3} }, kw = { dtype = "float64" }, dtypes = { "float32", "int32", "bool" } }
row { op = "sum", args = { T{2, 3}, { 1 } }, kw = { dtype = "int64" }, dtypes = { "int8", "bool" }, variants = FN_OUT }
row { op = "mean", args = { T{2, 3}, { 0 } }, kw = { dtype = "float64" }, dtypes = { "float32", "int32" } }
row { op = "prod", args = { T{2, 3}, 1 }, kw = { dtype = "float64" }, dtypes = { "float32", "int32" } }
row { op = "sum", args = { T{2, 3}, { 0, 0 } }, dtypes = F32, raises = "multiple times" }
for _, op in ipairs { "max", "min" } do
  local names = op == "max" and { "max", "max_values" } or { "min", "min_indices" }
  row { op = op, args = { T{2, 3} }, dtypes = ALL, variants = FN_M }
  row { op = op, args = { T{2, 3}, 1 }, dtypes = ALL, variants = FN_M_OUT, outs = names }
  row { op = op, args = { T{2, 3}, -1, true }, dtypes = F32, variants = FN_M_OUT, outs = names }
  row { op = op, args = { T{3, 2, layout = "transposed"}, 0 }, dtypes = F32 }
  row { op = op, args = { T{0, 3} }, dtypes = F32, raises = "numel() == 0" }
  row { op = op, args = { T{0, 3}, 1 }, dtypes = F32 }
  row { op = op, args = { T{} }, dtypes = F32 }
  row { op = op, args = { T{2, 3}, 2 }, dtypes = F32, raises = "out of range" }
  row { op = op, args = { T{2, 3}, "x" }, dtypes = F32, raises = "expected" } -- neither an int dim nor a tensor (max.other)
end
-- scans and softmaxes over one dim
for _, op in ipairs { "cumsum", "cumprod" } do
  row { op = op, args = { T{2, 3}, 1 }, dtypes = ALL, variants = ALL4 }
  for _, x in ipairs { T{3, 2, layout = "transposed"}, T{2, 3, layout = "expanded"}, T{0, 3}, T{} } do
    row { op = op, args = { x, 0 }, dtypes = F32 }
  end
  row { op = op, args = { T{2, 3}, 0 }, kw = { dtype = "float64" }, dtypes = { "int32", "float32" } }
  row { op = op, args = { T{2, 3}, 2 }, dtypes = F32, raises = "out of range" }
end
for _, op in ipairs { "softmax", "log_softmax" } do
  row { op = op, args = { T{2, 3}, 1 }, dtypes = ALL, variants = FN_M_OUT }
  for _, x in ipairs { T{3, 2, layout = "transposed"}, T{2, 3, layout = "sliced"}, T{0, 3}, T{} } do
    row { op = op, args = { x, 0 }, dtypes = F32 }
  end
  row { op = op, args = { T{2, 3}, -1, "float64" }, dtypes = { "float32", "float16" } }
  row { op = op, args = { T{2, 3}, 2 }, dtypes = F32, raises = "out of range" }
end
for _, op in ipairs { "_softmax", "_log_softmax" } do
  row { op = op, args = { T{2, 3}, 1, false }, dtypes = ALL, variants = FN_OUT }
  row { op = op, args = { T{2, 3}, 0, true }, dtypes = { "float16", "float32" }, raises = "half to float" }
  row { op = op, args = { T{0, 3}, -1, false }, dtypes = F32 }
end
for op, out in pairs { _softmax_backward_data = "grad_input", _log_softmax_backward_data = "out" } do
  row { op = op, args = { T{2, 3}, T{2, 3}, 1, "float32" }, dtypes = F32, variants = FN_OUT, outs = { out } }
  row { op = op, args = { T{2, 3}, T{2, 3}, 0, "float64" }, dtypes = { "float64" } }
  row { op = op, args = { T{3, 2, layout = "transposed"}, T{3, 2, layout = "sliced"}, 0, "float32" }, dtypes = F32 }
  row { op = op, args = { T{2, 3, 4}, T{2, 3, 4}, 1, "float32" }, dtypes = F32 } -- not the last dim
  row { op = op, args = { T{0, 3}, T{0, 3}, -1, "float32" }, dtypes = F32 }
  row { op = op, args = { T{2, 3}, T{2, 3}, 1, "float64" }, dtypes = F32, raises = "half to float" }
  row { op = op, args = { T{2, 3}, T{3, 2}, 1, "float32" }, dtypes = F32, raises = "same size" }
  row { op = op, args = { T{2, 3}, T{2, 3}, 2, "float32" }, dtypes = F32, raises = "out of range" }
  row { op = op, args = { T{2, 3}, T{2, 3}, 1, "int32" }, dtypes = INT32, raises = "not implemented for 'Int'" }
end
-- sorting
row { op = "sort", args = { T{2, 3} }, dtypes = ALL, variants = FN_M_OUT, outs = { "values", "indices" } }
row { op = "sort", args = { T{2, 3}, 0, true }, dtypes = F32, variants = FN_M_OUT, outs = { "values", "indices" } }
row { op = "sort", args = { T{2, 3} }, kw = { stable = true, descending = true }, dtypes = { "float32", "int64" },
      variants = FN_M_OUT, outs = { "values", "indices" } }
row { op = "argsort", args = { T{2, 3} }, dtypes = ALL, variants = FN_M }
row { op = "argsort", args = { T{2, 3} }, kw = { stable = true, dim = 0 }, dtypes = F32 }
row { op = "topk", args = { T{2, 3}, 2 }, dtypes = ALL, variants = FN_M_OUT, outs = { "values", "indices" } }
row { op = "topk", args = { T{3, 2, layout = "transposed"}, 1, 0, false }, dtypes = F32 }
for _, op in ipairs { "sort", "argsort" } do
  for _, x in ipairs { T{3, 2, layout = "transposed"}, T{0, 3}, T{}, T{2, 3, layout = "expanded"} } do
    row { op = op, args = { x }, dtypes = F32 }
  end
  row { op = op, args = { T{2, 3}, 2 }, dtypes = F32, raises = "out of range" }
end
row { op = "topk", args = { T{2, 3}, 4 }, dtypes = F32, raises = "out of range" }
row { op = "topk", args = { T{0, 3}, 0 }, dtypes = F32 }
-- }====

-- isclose (a composite of eq, isnan, abs, le ...)
row { op = "isclose", args = { T{2, 3}, T{2, 3} }, dtypes = ALL, variants = FN_M }
row { op = "isclose", args = { T({4}, { values = { 1, 2, 1 / 0, 0 / 0 } }), T({4}, { values = { 1.0000001, 2.5, 1 / 0, 0 / 0 } }) },
      kw = { equal_nan = true }, dtypes = FLOATS }
row { op = "isclose", args = { T({3}, { values = { 1, 2, 3 } }), T({3}, { values = { 1, 3, 5 } }), 0.5, 0 },
      dtypes = { "int64", "uint8", "bool", "float32" } }
row { op = "isclose", args = { T{2, 3, layout = "transposed"}, T{3} }, dtypes = F32 }
row { op = "isclose", args = { T{2, 3}, T({2, 3}, { dtype = "float64" }) }, dtypes = F32, raises = "did not match" }
row { op = "isclose", args = { T{2, 3}, T{2, 3}, -1 }, dtypes = F32, raises = "rtol must be greater than or equal to zero" }
row { op = "isclose", args = { T{2, 3}, T{2, 3}, 0, -1 }, dtypes = F32, raises = "atol must be greater than or equal to zero" }
-- allclose and equal return one bool, read from the values: none on meta
local VALUE_BOOL = { meta = "the bool is read from the values" }
row { op = "allclose", args = { T{2, 3}, T{2, 3} }, dtypes = ALL, variants = FN_M, skip = VALUE_BOOL }
row { op = "allclose", args = { T({2}, { values = { 1, 0 / 0 } }), T({2}, { values = { 1, 0 / 0 } }) },
      kw = { equal_nan = true }, dtypes = FLOATS, skip = VALUE_BOOL }
row { op = "allclose", args = { T{2, 3}, T({2, 3}, { dtype = "float64" }) }, dtypes = F32, raises = "did not match" }
row { op = "equal", args = { T{2, 3}, T{2, 3} }, dtypes = ALL, variants = FN_M, skip = VALUE_BOOL }
row { op = "equal", args = { T({3}, { values = { 1, 2, 3 } }), T({3}, { values = { 1, 2, 3 } }) }, dtypes = ALL, skip = VALUE_BOOL }
row { op = "equal", args = { T{2, 3}, T{3} }, dtypes = F32 }                                  -- other sizes: false
row { op = "equal", args = { T({2}, { values = { 1, 2 } }), T({2}, { values = { 1, 2 }, dtype = "float64" }) }, dtypes = F32,
      skip = VALUE_BOOL }

-- {==== Linear algebra ====
local LINALG = {
  { "mm", { T{2, 3}, T{3, 4} }, { T{2, 3, layout = "transposed"}, T{3, 4, layout = "sliced"} }, { T{0, 3}, T{3, 4} },
    { T{2, 3}, T{4, 3}, raises = "cannot be multiplied" } },
  { "bmm", { T{2, 2, 3}, T{2, 3, 4} }, { T{2, 2, 3, layout = "transposed"}, T{2, 3, 4, layout = "expanded"} },
    { T{2, 2, 3}, T{3, 3, 4}, raises = "batch size" } },
  { "mv", { T{2, 3}, T{3} }, { T{2, 3, layout = "transposed"}, T{3, layout = "sliced"} }, { T{2, 3}, T{2}, raises = "size mismatch" } },
  { "dot", { T{3}, T{3} }, { T{0}, T{0} }, { T{3, layout = "sliced"}, T{3, layout = "expanded"} }, { T{3}, T{4}, raises = "inconsistent" } },
  { "outer", { T{2}, T{3} }, { T{0}, T{3} }, { T{2, layout = "sliced"}, T{3} }, { T{2, 2}, T{3}, raises = "1-D" } },
  { "ger", { T{2}, T{3} }, { T{2, 2}, T{3}, raises = "1-D" } },
  { "addmm", { T{2, 4}, T{2, 3}, T{3, 4} }, { T{4}, T{2, 3, layout = "transposed"}, T{3, 4} },
    { T{2, 4}, T{2, 3}, T{2, 4}, raises = "cannot be multiplied" } },
  { "addmv", { T{2}, T{2, 3}, T{3} }, { T{}, T{2, 3, layout = "transposed"}, T{3} }, { T{2}, T{2, 3}, T{2}, raises = "size mismatch" } },
  { "baddbmm", { T{2, 2, 4}, T{2, 2, 3}, T{2, 3, 4} }, { T{4}, T{2, 2, 3}, T{2, 3, 4, layout = "transposed"} },
    { T{2, 2, 4}, T{2, 2, 3}, T{1, 3, 4}, raises = "batch size" } },
  { "matmul", { T{2, 3}, T{3, 4} }, { T{3}, T{3} }, { T{2, 2, 3}, T{3} }, { T{3}, T{2, 3, 4} },
    { T{2, 1, 2, 3}, T{3, 3, 2} }, { T{2, 3}, T{2, 3}, raises = "cannot be multiplied" } },
}
local HAS_OUT = { mm = true, bmm = true, mv = true, dot = true, outer = true, ger = true, addmm = true, addmv = true,
                  baddbmm = true }
local HAS_INPLACE = { addmm = true, addmv = true, baddbmm = true }
for _, l in ipairs(LINALG) do
  for i = 2, #l do
    local v = { "functional" }
    if i == 2 then
      v = { "functional", "method" }
      if HAS_OUT[l[1]] then v[#v + 1] = "out" end
      if HAS_INPLACE[l[1]] then v[#v + 1] = "inplace" end
    end
    row { op = l[1], args = l[i], dtypes = i == 2 and ALL or F32, variants = v, raises = l[i].raises }
  end
end
for _, op in ipairs { "addmm", "addmv", "baddbmm" } do
  local args = LINALG[op == "addmm" and 7 or op == "addmv" and 8 or 9][2]
  row { op = op, args = args, kw = { beta = 0.5, alpha = 2 }, dtypes = { "float32", "float64" }, variants = ALL4 }
end
row { op = "mm", args = { T{2, 3}, T({3, 4}, { dtype = "float64" }) }, dtypes = F32, raises = "same dtype" }
-- }====

-- {==== Shapes and views ====
-- name, args after self (self is a {2, 3, 4} tensor unless given), variants
local X = T{2, 3, 4}
local VIEWS = {
  { "view", { { 6, 4 } } }, { "view", { { -1 } } }, { "view", { { 5, 5 } }, nil, "invalid" }, { "view", { { 4, 6 } }, T{2, 4, 3, layout = "transposed"}, "view size" },
  { "reshape", { { 4, 6 } } }, { "reshape", { { -1, 2 } }, T{2, 4, 3, layout = "transposed"} }, { "reshape", { { 7 } }, nil, "invalid" },
  { "reshape", { { 0, 5 } }, T{0, 3} },
  { "t", {}, T{2, 3} }, { "t", {}, T{3} }, { "t", {}, nil, "<= 2 dimensions" },
  { "transpose", { 0, 2 } }, { "transpose", { -1, 1 } }, { "transpose", { 0, 3 }, nil, "out of range" },
  { "permute", { { 2, 0, 1 } } }, { "permute", { { 0, 0, 1 } }, nil, "duplicate" }, { "permute", { { 1, 0 } }, nil, "number of dimensions" },
  { "squeeze", {}, T{2, 1, 3} }, { "squeeze", { 1 }, T{2, 1, 3} }, { "squeeze", { 0 } }, { "squeeze", { 5 }, nil, "out of range" },
  { "unsqueeze", { 0 } }, { "unsqueeze", { -1 } }, { "unsqueeze", { 4 }, T{}, "out of range" }, { "unsqueeze", { 5 }, nil, "out of range" },
  { "expand", { { 2, 2, 3 } }, T{2, 3} }, { "expand", { { 3, -1 } }, T{1, 4} }, { "expand", { { 2, 2 } }, T{3}, "must match" },
  { "narrow", { 1, 1, 2 } }, { "narrow", { -1, 0, 0 } }, { "narrow", { 0, 1, 2 }, nil, "exceeds" },
  { "narrow", { 1, T({}, { dtype = "int64", values = 1, device = "cpu" }), 2 } },
  { "select", { 1, 2 } }, { "select", { 0, -1 } }, { "select", { 0, 2 }, nil, "out of range" },
  { "slice", { 1, 0, 3, 2 } }, { "slice", { 2, -3 } }, { "slice", { 0, 0, 2, 0 }, nil, "step" },
  { "flatten", {} }, { "flatten", { 1 } }, { "flatten", { 0, 1 } }, { "flatten", {}, T{} }, { "flatten", { 2, 1 }, nil, "start_dim" },
  { "unflatten", { 2, { 2, 2 } } }, { "unflatten", { 1, { -1, 1 } } }, { "unflatten", { 1, { 2, 2 } }, nil, "multiply" },
  { "contiguous", {}, T{3, 2, layout = "transposed"} }, { "contiguous", {} },
  { "clone", {}, T{3, 2, layout = "transposed"} }, { "clone", {}, T{2, 3, layout = "expanded"} }, { "clone", {}, T{0, 3} },
  { "split", { 2 } }, { "split", { 1, 2 } }, { "split", { { 1, 2 }, 1 } }, { "split", { { 1, 1 }, 1 }, nil, "sum exactly" },
  { "split_with_sizes", { { 3, 1 }, 2 } }, { "split_with_sizes", { { 3, 2 }, 2 }, nil, "sum exactly" },
  { "chunk", { 2, 2 } }, { "chunk", { 3 } }, { "chunk", { 0 }, nil, "greater than 0" },
  { "unbind", {} }, { "unbind", { 2 } }, { "unbind", { 0 }, T{0, 3} },
  { "repeat", { { 2, 1, 1 } } }, { "repeat", { { 2, 2, 1, 1 } } }, { "repeat", { { 2 } }, nil, "can not be smaller" },
  { "tile", { { 2 } } }, { "tile", { { 2, 1, 1, 1 } } },
  { "flip", { { 0, 2 } } }, { "flip", { { -1 } }, T{3, 2, layout = "transposed"} }, { "flip", { { 0, 0 } }, nil, "multiple times" },
  { "roll", { 1 } }, { "roll", { { 1, -2 }, { 0, 2 } } }, { "roll", { 2, 1 }, T{0, 3} }, { "roll", { { 1, 2 }, { 0 } }, nil, "align" },
  { "tril", {}, T{3, 4} }, { "tril", { -1 }, T{2, 3, 4} }, { "tril", {}, T{3}, "at least 2" },
  { "triu", { 1 }, T{3, 4} }, { "triu", {}, T{4, 3, layout = "transposed"} }, { "triu", {}, T{3}, "at least 2" },
  { "diag", {}, T{3} }, { "diag", { 1 }, T{3, 4} }, { "diag", { -1 }, T{3} }, { "diag", {}, T{2, 3, 4}, "1D or 2D" },
}
local VIEW_VARIANTS = { tril = ALL4, triu = ALL4, flip = FN_M_OUT, roll = FN_M_OUT, diag = FN_M_OUT }
for i, v in ipairs(VIEWS) do
  local self = v[3] or X
  local args = { self }
  for _, a in ipairs(v[2]) do args[#args + 1] = a end
  local first = not VIEWS[i - 1] or VIEWS[i - 1][1] ~= v[1]
  local fn_ok = v[1] ~= "view" and v[1] ~= "contiguous" and v[1] ~= "repeat" and v[1] ~= "expand"
  row { op = v[1], args = args, dtypes = first and ALL or F32, raises = v[4],
        variants = first and VIEW_VARIANTS[v[1]] or (fn_ok and FN_M or { "method" }) }
end
-- view(dtype): the same bytes as another dtype
for _, v in ipairs {
  { T{2, 4}, "int32", F32 }, { T{2, 4}, "int16", F32 }, { T{2, 4}, "float32", { "int16" } }, { T{2, 8}, "float64", { "uint8" } },
  { T{2, 4, layout = "sliced"}, "int32", F32 }, { T{0, 4}, "int64", { "int16" } }, { T{3}, "uint8", { "bool" } },
  { T{2, 3}, "int16", { "int8" }, "divisible by 2" }, { T{3, 4, layout = "transposed"}, "int8", F32, "stride(-1) must be 1" },
  { T{}, "int16", F32, "cannot be 0" },
} do
  row { op = "view", args = { v[1], v[2] }, dtypes = v[3], variants = { "method" }, raises = v[4] }
end
for _, x in ipairs { T{2, 3, layout = "expanded"}, T{3, 2, layout = "transposed"}, T{0, 3}, T{} } do
  row { op = "clone", args = { x }, dtypes = F32, variants = FN_M }
end
-- cat and stack: lists of tensors
local CATS = {
  { L{ T{2, 3}, T{1, 3} } }, { L{ T{2, 3}, T{2, 2} }, 1 }, { L{ T{2, 3}, T{0} } }, { L{ T{2, 3, layout = "sliced"}, T{3, 3, layout = "transposed"} } },
  { L{ T{2, 3}, T({2, 3}, { dtype = "int32" }) } }, { L{ T{2, 3}, T{2, 2} }, raises = "Sizes of tensors" },
  { L{}, raises = "non-empty" }, { L{ T{2, 3} }, 2, raises = "out of range" },
  { L{ T{2, 3}, T({1, 3}, { device = "other" }) }, raises = "same device" },
}
local STACKS = { { L{ T{2, 3}, T{2, 3} } }, { L{ T{2, 3}, T{2, 3} }, 2 }, { L{ T{}, T{} } },
                 { L{ T{2, 3}, T{3, 2} }, raises = "equal size" }, { L{ T{2, 3}, T{2, 3} }, 3, raises = "out of range" },
                 { L{ T{0, 3}, T{0, 3, layout = "expanded"} }, -1 } }
for op, list in pairs { cat = CATS, stack = STACKS } do
  for i, c in ipairs(list) do
    row { op = op, args = c, dtypes = i == 1 and ALL or F32, variants = i == 1 and FN_OUT or { "functional" },
          raises = c.raises }
  end
end
-- conversions, copies and fills
for _, d in ipairs(ALL) do row { op = "to", args = { T{2, 3}, d }, dtypes = { "float32", "int64", "bool" }, variants = { "method" } } end
row { op = "to", args = { T{3, 2, layout = "transposed"}, "float64" }, dtypes = F32, variants = { "method" } }
row { op = "to", args = { T{2, 3}, "$device" }, dtypes = ALL, variants = { "method" } }
row { op = "to", args = { T{2, 3}, T({2}, { dtype = "int16" }) }, dtypes = F32, variants = { "method" } }
row { op = "to", args = { T{2, 3}, "floaty" }, dtypes = F32, variants = { "method" }, raises = "unknown device" }
-- copy_ from a broadcast float64 source (a 0-dim one into a 0-dim or empty self)
for i, x in ipairs { T{2, 3}, T{2, 3, layout = "sliced"}, T{3, 2, layout = "transposed"}, T{}, T{0, 3} } do
  local src = T({ #x.shape == 2 and x.shape[2] or nil }, { dtype = "float64" })
  if #x.shape == 0 then src = T({}, { dtype = "float64" }) end
  row { op = "copy_", args = { x, src }, dtypes = i == 1 and ALL or F32, variants = { "method" } }
end
row { op = "copy_", args = { T{2, 3}, T{4} }, dtypes = F32, variants = { "method" }, raises = "not broadcastable" }
row { op = "copy_", args = { T{2, 3, layout = "expanded"}, T{2, 3} }, dtypes = F32, variants = { "method" },
      raises = "single memory location" }
for _, x in ipairs { T{2, 3}, T{2, 3, layout = "sliced"}, T{3, 2, layout = "transposed"}, T{}, T{0, 3} } do
  row { op = "fill_", args = { x, 1.5 }, dtypes = ALL, variants = { "functional", "method" } }
  row { op = "zero_", args = { x }, dtypes = F32, variants = { "functional", "method" } }
end
row { op = "zero_", args = { T{2, 3} }, dtypes = ALL, variants = { "method" } }
row { op = "fill_", args = { T{2, 3, layout = "expanded"}, 2 }, dtypes = F32, variants = { "method" },
      raises = "single memory location" }
-- }====

-- {==== Indexing ====
local IDX = {
  { "gather", { T{2, 3}, 1, I({2, 2}, 3) }, { T{3, 2, layout = "transposed"}, 0, I({2, 2}, 2) }, { T{2, 3}, 1, I({0, 2}, 3) },
    { T{2, 3}, 2, I({2, 2}, 3), raises = "out of range" },
    { T{2, 3}, 1, T({2, 2}, { dtype = "int32", lo = 0, hi = 2 }), raises = "int64" } },
  { "index_select", { T{2, 3}, 1, I({4}, 3) }, { T{3, 2, layout = "transposed"}, 0, I({0}, 2) }, { T{}, 0, I({2}, 1), raises = "only 1 value" },
    { T{2, 3}, 1, I({2, 2}, 3), raises = "vector" } },
  { "scatter", { T{2, 3}, 1, I({2, 2}, 3), T{2, 2} }, { T{2, 3}, 0, I({1, 3}, 2), 2.5 },
    { T{2, 3, layout = "sliced"}, 1, I({2, 1}, 3), T{2, 3} }, { T{2, 3}, 1, I({2, 2}, 3), T({2, 2}, { dtype = "float64" }), raises = "dtype" } },
  { "scatter_add", { T{2, 3}, 1, I({2, 2}, 3), T{2, 2} }, { T{3, 2, layout = "transposed"}, 0, I({2, 2}, 3), T{2, 2} },
    { T{2, 3}, 2, I({2, 2}, 3), T{2, 2}, raises = "out of range" } },
  { "index", { T{3, 4}, L{ I({2}, 3) } }, { T{3, 4}, L{ false, I({2, 2}, 4) } }, { T{3, 4}, L{ I({2}, 3), I({2}, 4) } },
    { T{3, 4}, L{ Mk{3, 4} }, mask = true }, { T{3, 4}, L{ I({2}, 3), I({3}, 4) }, raises = "shape mismatch" } },
  { "index_put", { T{3, 4}, L{ I({2}, 3) }, T{4} }, { T{3, 4}, L{ false, I({2}, 4) }, T{} },
    { T{3, 4, layout = "sliced"}, L{ I({2}, 3), I({2}, 4) }, T{2}, true }, { T{3, 4}, L{ I({2}, 3) }, T{3}, raises = "shape mismatch" } },
  { "masked_fill", { T{2, 3}, Mk{2, 3}, 1.5 }, { T{2, 3}, Mk{3}, T{} }, { T{3, 2, layout = "transposed"}, Mk{2}, -1 },
    { T{2, 3}, Mk{4}, 0, raises = "not broadcastable" }, { T{2, 3}, T{2, 3}, 0, raises = "boolean" },
    { T{2, 3}, Mk{2, 3}, T{2}, raises = "0-dimensional" } },
  { "masked_select", { T{2, 3}, Mk{2, 3} }, { T{2, 3}, Mk{3} }, { T{0, 3}, Mk{3} } },
  { "nonzero", { T{2, 3} }, { T{} }, { T{0, 3} }, { T{3, 2, layout = "transposed"} } },
  { "embedding", { T{5, 3}, I({2, 2}, 5) }, { T{5, 3}, I({0}, 5) }, { T{5, 3}, T({2}, { dtype = "float32" }), raises = "indices" } },
}
local IDX_VARIANTS = {
  gather = FN_M_OUT, index_select = FN_M_OUT, scatter = ALL4, scatter_add = ALL4, index = FN_M_OUT,
  index_put = { "functional", "method", "inplace" }, masked_fill = { "functional", "method", "inplace" },
  masked_select = FN_M_OUT, nonzero = FN_M_OUT, embedding = { "functional" },
}
local VALUE_SHAPED = { masked_select = true, nonzero = true } -- their result's shape depends on values
for _, r in ipairs(IDX) do
  for i = 2, #r do
    row { op = r[1], args = r[i], dtypes = i == 2 and ALL or F32,
          variants = i == 2 and IDX_VARIANTS[r[1]] or { "functional" }, raises = r[i].raises,
          skip = (VALUE_SHAPED[r[1]] or r[i].mask) and { meta = "the result's shape depends on the values" } or nil }
  end
end
row { op = "index_put", args = { T{3, 4}, L{ I({3}, 3) }, T{4}, true }, dtypes = ALL, variants = { "functional", "inplace" } }
-- value-dependent errors: an index out of range (the CPU only; Meta has no values)
local OOB = { dtype = "int64", values = { 0, 7 } }
for _, a in ipairs {
  { "gather", T{2, 3}, 1, T({2, 2}, { dtype = "int64", values = { { 0, 7 }, { 1, 2 } } }) },
  { "index_select", T{2, 3}, 1, T({2}, OOB) }, { "index", T{3, 4}, L{ T({2}, OOB) } },
  { "scatter", T{2, 3}, 1, T({1, 2}, { dtype = "int64", values = { { 0, 7 } } }), 1.0 },
  { "embedding", T{5, 3}, T({2}, OOB) }, { "index_put", T{3, 4}, L{ T({2}, OOB) }, T{} },
} do
  row { op = a[1], args = { table.unpack(a, 2) }, raises = "out of", skip = { meta = "the error depends on values" } }
end
-- }====

-- {==== nn ====
row { op = "layer_norm", args = { T{2, 3}, { 3 } }, dtypes = ALL }
row { op = "layer_norm", args = { T{2, 3, 4}, { 3, 4 }, T{3, 4}, T{3, 4} }, dtypes = FLOATS }
row { op = "layer_norm", args = { T{2, 3}, { 3 } }, kw = { eps = 1e-3, weight = T{3} }, dtypes = F32 }
row { op = "layer_norm", args = { T{2, 3, layout = "transposed"}, { 3 } }, dtypes = F32 }
row { op = "layer_norm", args = { T{2, 3}, { 2 } }, dtypes = F32, raises = "normalized_shape" }
row { op = "layer_norm", args = { T{0, 3}, { 3 } }, dtypes = F32 }
-- batch_norm: running statistics are written (so each run gets its own, fresh copies)
row { op = "batch_norm", args = { T{4, 3, 2, 2}, T{3}, T{3}, T{3}, T({3}, { lo = 0.5, hi = 2 }), true, 0.1, 1e-5, false },
      dtypes = { "float32", "float64" } }
row { op = "batch_norm", args = { T{4, 3}, NONE, NONE, T{3}, T({3}, { lo = 0.5, hi = 2 }), false, 0.1, 1e-5, false },
      dtypes = { "float32", "float64", "bfloat16" } }
row { op = "batch_norm", args = { T{1, 3}, NONE, NONE, NONE, NONE, true, 0.1, 1e-5, false }, dtypes = F32,
      raises = "more than 1 value per channel" }
row { op = "native_batch_norm", args = { T{4, 3, 5}, T{3}, NONE, NONE, NONE, true, 0.1, 1e-5 }, dtypes = { "float32", "float64" } }
row { op = "native_batch_norm", args = { T{2, 3, 5, layout = "transposed"}, NONE, T{3}, T{3}, T({3}, { lo = 0.5, hi = 2 }), false, 0.1, 1e-5 },
      dtypes = F32 }
row { op = "native_batch_norm", args = { T{2, 3, 5}, NONE, NONE, NONE, NONE, false, 0.1, 1e-5 }, dtypes = F32,
      raises = "must be defined in evaluation mode" }
row { op = "native_batch_norm", args = { T{2, 3, 5}, T{4}, NONE, NONE, NONE, true, 0.1, 1e-5 }, dtypes = F32,
      raises = "weight should contain 3 elements not 4" }
row { op = "native_batch_norm_backward", args = { T{4, 3, 5}, T{4, 3, 5}, T{3}, NONE, NONE, T{3}, T({3}, { lo = 0.5, hi = 2 }),
      true, 1e-5, { true, true, true } }, dtypes = { "float32", "float64" } }
row { op = "native_batch_norm_backward", args = { T{4, 3}, T{4, 3}, NONE, T{3}, T({3}, { lo = 0.5, hi = 2 }), NONE, NONE,
      false, 1e-5, { true, false, true } }, dtypes = F32 }
row { op = "group_norm", args = { T{2, 6, 3}, 3, T{6}, T{6} }, dtypes = { "float32", "float64", "bfloat16" } }
row { op = "group_norm", args = { T{2, 6, 3}, 4 }, dtypes = F32, raises = "divisible by num_groups" }
row { op = "native_group_norm", args = { T{2, 4, 3, 2}, NONE, T{4}, 2, 4, 6, 2, 1e-5 }, dtypes = { "float32", "float64" } }
row { op = "instance_norm", args = { T{2, 3, 4}, T{3}, T{3}, T{3}, T({3}, { lo = 0.5, hi = 2 }), true, 0.1, 1e-5, false },
      dtypes = { "float32", "float64" } }
row { op = "instance_norm", args = { T{2, 3, 4}, NONE, NONE, NONE, NONE, false, 0.1, 1e-5, false }, dtypes = F32,
      raises = "use_input_stats is false" }
row { op = "local_response_norm", args = { T{2, 5, 3}, 3 }, dtypes = { "float32", "float64" } }
row { op = "local_response_norm", args = { T{2, 5, 3, 2}, 4, 1e-2, 0.5, 2 }, dtypes = F32 }
row { op = "local_response_norm", args = { T{2, 5}, 3 }, dtypes = F32, raises = "3D or higher" }
row { op = "normalize", args = { T{3, 4} }, dtypes = { "float32", "float64" } }
row { op = "normalize", args = { T{3, 4, layout = "transposed"}, 1, 0 }, dtypes = F32 }
-- activations (composites over pointwise ops)
local ACTS = {
  { "leaky_relu", { 0.2 }, true }, { "elu", { 1.5, 2, 0.5 }, true }, { "selu", {}, true }, { "celu", { 0.7 }, true },
  { "hardtanh", { -0.5, 0.5 }, true }, { "relu6", {}, true }, { "hardswish", {}, true }, { "hardsigmoid", {}, true },
  { "softplus", { 2, 1 } }, { "softsign", {} }, { "softshrink", { 0.3 } }, { "hardshrink", { 0.3 } }, { "tanhshrink", {} },
  { "threshold", { 0.1, -2 }, true }, { "log_sigmoid", {} }, { "mish", {}, true }, { "rrelu", { 0.1, 0.3, false }, true },
}
for _, a in ipairs(ACTS) do
  local args = { T{2, 3} }
  for _, v in ipairs(a[2]) do args[#args + 1] = v end
  row { op = a[1], args = args, dtypes = FLOATS, variants = a[3] and { "functional", "method", "inplace" } or FN_M }
  local nc = { T{3, 2, layout = "transposed"} }
  for _, v in ipairs(a[2]) do nc[#nc + 1] = v end
  row { op = a[1], args = nc, dtypes = F32 }
end
row { op = "hardtanh", args = { T{2, 3}, 0.5, -0.5 }, dtypes = FLOATS, variants = { "functional", "inplace" } } -- max wins
row { op = "hardtanh", args = { T({2, 3}, { lo = -3, hi = 3 }), -1.5, 2.5 }, dtypes = { "int8", "int16", "int32", "int64" } }
row { op = "hardtanh", args = { T{2, 3} }, dtypes = { "uint8" }, raises = "unsigned type with negative limits" }
row { op = "hardtanh", args = { T{2, 3} }, dtypes = { "bool" }, raises = "Bool inputs not supported for hardtanh" }
row { op = "glu", args = { T{2, 4} }, dtypes = FLOATS }
row { op = "glu", args = { T{4, 3}, 0 }, dtypes = F32 }
row { op = "glu", args = { T{2, 3} }, dtypes = F32, raises = "Halving dimension must be even" }
row { op = "prelu", args = { T{2, 3, 2}, T{3} }, dtypes = { "float32", "float64" }, variants = FN_M }
row { op = "prelu", args = { T{2, 3}, T{1} }, dtypes = F32 }
row { op = "prelu", args = { T{2, 3}, T{2} }, dtypes = F32, raises = "Mismatch of parameter numbers" }
row { op = "softmin", args = { T{2, 3}, 1 }, dtypes = FLOATS }
-- padding, resampling, im2col, views and the functional composites
local PAD_DT = { "float32", "float64", "bfloat16", "int64", "bool" }
row { op = "constant_pad_nd", args = { T{2, 3, 4}, { 1, 2, -1, 1 }, 3 }, dtypes = PAD_DT }
row { op = "constant_pad_nd", args = { T{2, 3, layout = "transposed"}, { 0, 1, 2, 0 } }, dtypes = F32 }
row { op = "constant_pad_nd", args = { T{2, 3}, { -2, -2 } }, dtypes = F32, raises = "negative output size" }
row { op = "constant_pad_nd", args = { T{2, 3}, { 1 } }, dtypes = F32, raises = "must be even" }
row { op = "pad", args = { T{2, 3, 5}, { 2, 1 }, "reflect" }, dtypes = PAD_DT }
row { op = "pad", args = { T{1, 2, 3, 4}, { 1, 2, 2, 0 }, "replicate" }, dtypes = PAD_DT }
row { op = "pad", args = { T{1, 2, 3, 4, 3}, { 1, 1, 0, 2, 2, 1 }, "circular" }, dtypes = F32 }
row { op = "pad", args = { T{2, 3, 4}, { 1, 1 }, "constant", 2.5 }, dtypes = F32 }
row { op = "pad", args = { T{2, 3, 3}, { 3, 0 }, "reflect" }, dtypes = F32, raises = "Padding size should be less than" }
row { op = "pad", args = { T{2, 3, 3}, { 4, 0 }, "circular" }, dtypes = F32, raises = "wrapping around more than once" }
row { op = "pad", args = { T{2, 3}, { 1, 1 }, "wrap" }, dtypes = F32, raises = "Unrecognised padding mode" }
row { op = "pad", args = { T{3}, { 1, 1 }, "reflect" }, dtypes = F32, raises = "non-constant padding" }
for k, n in ipairs({ "1d", "2d", "3d" }) do
  local shape, pads = { 2, 3 }, {}
  for i = 1, k do shape[#shape + 1] = 3 + i; pads[2 * i - 1], pads[2 * i] = i, 2 end
  row { op = "reflection_pad" .. n, args = { T(shape), pads }, dtypes = F32 }
  row { op = "replication_pad" .. n, args = { T(shape), pads }, dtypes = F32 }
end
row { op = "_pad_circular", args = { T{2, 3, 4}, { 2, -1 } }, dtypes = F32 }
row { op = "upsample_nearest1d", args = { T{2, 3, 5}, { 8 } }, dtypes = { "float32", "float64", "int64", "uint8" } }
row { op = "upsample_nearest2d", args = { T{2, 3, 4, 5}, { 3, 7 }, 0.7, 1.5 }, dtypes = F32 }
row { op = "upsample_nearest3d", args = { T{1, 2, 2, 3, 4}, { 3, 3, 2 } }, dtypes = F32 }
row { op = "_upsample_nearest_exact1d", args = { T{2, 3, 5}, { 3 } }, dtypes = F32 }
row { op = "_upsample_nearest_exact2d", args = { T{2, 3, 4, 5}, { 6, 4 } }, dtypes = F32 }
row { op = "_upsample_nearest_exact3d", args = { T{1, 2, 2, 3, 4}, { 3, 3, 2 } }, dtypes = F32 }
row { op = "upsample_linear1d", args = { T{2, 3, 5}, { 8 }, false }, dtypes = { "float32", "float64", "bfloat16" } }
row { op = "upsample_bilinear2d", args = { T{2, 3, 4, 5}, { 6, 3 }, true }, dtypes = { "float32", "float64" } }
row { op = "upsample_bicubic2d", args = { T{2, 3, 4, 5}, { 6, 3 }, false }, dtypes = { "float32", "float64" } }
row { op = "upsample_trilinear3d", args = { T{1, 2, 2, 3, 4}, { 3, 5, 2 }, false }, dtypes = F32 }
row { op = "upsample_bilinear2d", args = { T{2, 3, 4, 5}, { 6, 3 }, true }, dtypes = { "int64" }, raises = "floating point" }
row { op = "upsample_linear1d", args = { T{2, 3, 5}, { 0 }, false }, dtypes = F32, raises = "should be greater than 0" }
row { op = "interpolate", args = { T{2, 3, 4, 5} }, kw = { scale_factor = 1.5, mode = "bilinear" }, dtypes = F32 }
row { op = "interpolate", args = { T{2, 3, 6, 5} }, kw = { size = { 3, 2 }, mode = "area" }, dtypes = F32 }
row { op = "interpolate", args = { T{2, 3, 5} }, kw = { size = 7, mode = "linear", align_corners = true }, dtypes = F32 }
row { op = "interpolate", args = { T{2, 3, 5} }, kw = { size = 7, scale_factor = 2 }, dtypes = F32, raises = "only one of size or scale_factor" }
row { op = "interpolate", args = { T{2, 3, 5} }, kw = { size = 7, mode = "bilinear" }, dtypes = F32, raises = "bilinear mode needs 4D input" }
row { op = "grid_sample", args = { T{2, 3, 4, 5}, T{2, 3, 2, 2} }, dtypes = { "float32", "float64" } }
row { op = "grid_sample", args = { T{2, 3, 4, 5}, T{2, 3, 2, 2}, "bicubic", "reflection", true }, dtypes = F32 }
row { op = "grid_sample", args = { T{1, 2, 3, 4, 5}, T{1, 2, 3, 2, 3}, "nearest", "border" }, dtypes = F32 }
row { op = "grid_sample", args = { T{2, 3, 4, 5}, T{2, 3, 2, 3} }, dtypes = F32, raises = "size 2 in last dimension" }
row { op = "grid_sample", args = { T{2, 3, 4, 5}, T{2, 3, 2, 2}, "area" }, dtypes = F32, raises = "expected mode to be" }
row { op = "grid_sampler", args = { T{2, 3, 4, 5}, T{2, 3, 2, 2}, 0, 2, false }, dtypes = F32 }
row { op = "grid_sampler_2d", args = { T{2, 3, 4, 5}, T{2, 3, 2, 2}, 2, 1, true }, dtypes = F32 }
row { op = "grid_sampler_2d", args = { T{1, 2, 3, 4, 5}, T{1, 2, 3, 2, 3}, 0, 0, false }, dtypes = F32, raises = "expected 4D input" }
row { op = "grid_sampler_3d", args = { T{1, 2, 3, 4, 5}, T{1, 2, 3, 2, 3}, 0, 1, true }, dtypes = F32 }
row { op = "grid_sampler_3d", args = { T{1, 2, 3, 4, 5}, T{1, 2, 3, 2, 3}, 2, 0, true }, dtypes = F32, raises = "bicubic interpolation only supports 4D" }
row { op = "affine_grid_generator", args = { T{2, 2, 3}, { 2, 3, 4, 5 }, false }, dtypes = { "float32", "float64" } }
row { op = "affine_grid", args = { T{2, 3, 4}, { 2, 1, 2, 3, 4 } }, dtypes = F32 }
row { op = "affine_grid", args = { T{2, 3, 3}, { 2, 1, 3, 4 } }, dtypes = F32, raises = "Expected a batch of 2D affine matrices" }
row { op = "im2col", args = { T{2, 3, 5, 6}, { 2, 3 }, { 1, 2 }, { 1, 0 }, { 2, 1 } }, dtypes = { "float32", "float64", "int64" } }
row { op = "im2col", args = { T{3, 4, 4}, 2, 1, 0, 1 }, dtypes = F32 }
row { op = "im2col", args = { T{1, 2, 4, 4}, 5, 1, 0, 1 }, dtypes = F32, raises = "must be at least one" }
row { op = "col2im", args = { T{2, 12, 6}, { 5, 6 }, { 2, 3 }, { 1, 2 }, { 1, 0 }, { 2, 1 } }, dtypes = { "float32", "float64" } }
row { op = "col2im", args = { T{8, 9}, { 4, 4 }, 2, 1, 0, 1 }, dtypes = F32 }
row { op = "col2im", args = { T{1, 8, 8}, { 4, 4 }, 2, 1, 0, 1 }, dtypes = F32, raises = "calculated number of sliding blocks" }
row { op = "as_strided", args = { T{10}, { 3, 3 }, { 1, 2 }, 1 }, dtypes = ALL, variants = FN_M }
row { op = "as_strided", args = { T{3, 4}, { 2, 2 }, { 4, 1 } }, dtypes = F32 }
row { op = "as_strided", args = { T{3, 4}, { 4, 4 }, { 4, 1 } }, dtypes = F32, raises = "outside its storage" }
row { op = "as_strided", args = { T{3, 4}, { 2 }, { -1 } }, dtypes = F32, raises = "Negative strides" }
row { op = "unfold", args = { T{2, 7, 3}, 1, 3, 2 }, dtypes = ALL, variants = { "method" } }
row { op = "unfold", args = { T{2, 3}, 1, 4, 1 }, dtypes = F32, variants = { "method" }, raises = "maximum size for tensor at dimension 1 is 3" }
row { op = "linear", args = { T{2, 3}, T{4, 3}, T{4} }, dtypes = { "float32", "float64", "bfloat16" } }
row { op = "linear", args = { T{2, 5, 3}, T{4, 3} }, dtypes = { "float32", "int64" } }
row { op = "linear", args = { T{2, 3}, T{4, 5} }, dtypes = F32, raises = "cannot be multiplied" }
row { op = "bilinear", args = { T{4, 3}, T{4, 2}, T{5, 3, 2}, T{5} }, dtypes = { "float32", "float64" } }
row { op = "bilinear", args = { T{2, 4, 3}, T{2, 4, 2}, T{5, 3, 2} }, dtypes = F32 }
row { op = "bilinear", args = { T{4, 3}, T{4, 2}, T{5, 2, 2} }, dtypes = F32, raises = "input1 size does not match weight size" }
row { op = "one_hot", args = { I({2, 3}, 4), 5 }, dtypes = { "int64" } }
row { op = "one_hot", args = { T({4}, { dtype = "int64", values = { 0, 2, 1, 2 } }) }, dtypes = { "int64" }, skip = { meta = "infers num_classes from the values" } }
row { op = "one_hot", args = { T({2}, { dtype = "int64", values = { 0, 5 } }), 3 }, dtypes = { "int64" }, raises = "smaller than num_classes", skip = { meta = "the error depends on values" } }
row { op = "one_hot", args = { T{2} }, dtypes = F32, raises = "only applicable to index tensor" }
row { op = "pixel_shuffle", args = { T{2, 8, 3, 2}, 2 }, dtypes = ALL }
row { op = "pixel_unshuffle", args = { T{2, 2, 4, 6}, 2 }, dtypes = ALL }
row { op = "pixel_shuffle", args = { T{2, 6, 3, 2}, 2 }, dtypes = F32, raises = "divisible by the square of upscale_factor" }
row { op = "pixel_unshuffle", args = { T{2, 2, 5, 6}, 2 }, dtypes = F32, raises = "expects height to be divisible" }
local BAG_I = T({6}, { dtype = "int64", values = { 0, 3, 2, 3, 1, 4 } })
local BAG_O = T({3}, { dtype = "int64", values = { 0, 2, 2 } })
local NOMETA = { meta = "the bags depend on the offsets' values" }
for mode = 0, 2 do
  row { op = "embedding_bag", args = { T{5, 3}, BAG_I, BAG_O, false, mode }, dtypes = { "float32", "float64" }, skip = NOMETA,
        outs = { "output", "offset2bag", "bag_size", "max_indices" } }
  row { op = "embedding_bag", args = { T{5, 3}, BAG_I, BAG_O, false, mode, false, NONE, false, 3 }, dtypes = F32, skip = NOMETA }
end
row { op = "embedding_bag", args = { T{5, 3}, BAG_I, BAG_O, false, 0, false, T{6}, true }, dtypes = F32, skip = NOMETA }
row { op = "embedding_bag", args = { T{5, 3}, BAG_I, T({2}, { dtype = "int64", values = { 1, 2 } }) }, dtypes = F32,
      raises = "offsets[0] has to be 0", skip = NOMETA }
row { op = "embedding_bag", args = { T{5, 3}, BAG_I, BAG_O, false, 1, false, T{6} }, dtypes = F32,
      raises = "per_sample_weights only supported with mode='sum'", skip = NOMETA }
row { op = "scaled_dot_product_attention", args = { T{2, 3, 4, 8}, T{2, 3, 5, 8}, T{2, 3, 5, 6} }, dtypes = { "float32", "float64" } }
row { op = "scaled_dot_product_attention", args = { T{2, 4, 8}, T{2, 4, 8}, T{2, 4, 8} }, kw = { is_causal = true }, dtypes = F32 }
row { op = "scaled_dot_product_attention", args = { T{2, 4, 8}, T{2, 5, 8}, T{2, 5, 8}, Mk{4, 5} }, dtypes = F32 }
row { op = "scaled_dot_product_attention", args = { T{2, 4, 8}, T{2, 5, 8}, T{2, 5, 8}, T{4, 5} }, kw = { scale = 0.5 }, dtypes = F32 }
row { op = "scaled_dot_product_attention", args = { T{2, 4, 8}, T{2, 5, 7}, T{2, 5, 8} }, dtypes = F32, raises = "must match the last dim of query" }
-- pooling
local UNPOOL2, UNPOOL2_BAD = {}, {}
for i = 0, 23 do UNPOOL2[i + 1] = ({ 0, 3, 9, 15 })[i % 4 + 1]; UNPOOL2_BAD[i + 1] = i == 23 and 16 or UNPOOL2[i + 1] end
local PF = { "float32", "float64", "float16", "bfloat16" }
row { op = "max_pool2d_with_indices", args = { T{2, 3, 5, 6}, { 3, 2 }, { 2, 1 }, { 1, 0 }, { 1, 2 }, true }, dtypes = PF,
      variants = FN_OUT, outs = { "out", "indices" } }
row { op = "max_pool2d_with_indices", args = { T{3, 4, 4, layout = "transposed"}, 2 }, dtypes = F32 }
row { op = "max_pool2d_with_indices", args = { T{2, 3, 5, 5}, 3, 1, 2 }, dtypes = F32, raises = "at most half of kernel size" }
row { op = "max_pool2d_with_indices", args = { T({2, 3}, { dtype = "int64" }), 2 }, dtypes = { "int64" }, raises = "tensor with optional 0 dim" }
row { op = "max_pool2d_with_indices", args = { T{2, 3, 4, 4}, 2 }, dtypes = { "int64" }, raises = "not implemented for 'Long'" }
row { op = "max_pool3d_with_indices", args = { T{1, 2, 3, 4, 3}, 2, 1, 1 }, dtypes = PF, variants = FN_OUT, outs = { "out", "indices" } }
row { op = "max_pool2d_with_indices_backward", args = { T{1, 2, 2, 2}, T{1, 2, 4, 4}, 2, 2, 0, 1, false, I({1, 2, 2, 2}, 16) },
      dtypes = { "float32", "float64" }, variants = FN_OUT, outs = { "grad_input" } }
row { op = "max_pool2d_with_indices_backward", args = { T{1, 2, 2, 2}, T{1, 2, 4, 4}, 2, 2, 0, 1, false, T({1, 2, 2, 2}, { dtype = "int64", values = { 0, 5, 10, 99, 0, 5, 10, 99 } }) },
      dtypes = F32, raises = "out of range", skip = { meta = "the error depends on values" } }
row { op = "max_pool3d_with_indices_backward", args = { T{1, 1, 1, 2, 2}, T{1, 1, 2, 4, 4}, 2, 2, 0, 1, false, I({1, 1, 1, 2, 2}, 32) },
      dtypes = F32 }
row { op = "max_pool1d", args = { T{2, 3, 7}, 3, 2, 1 }, dtypes = F32 }
row { op = "max_pool1d_with_indices", args = { T{3, 8}, 2 }, dtypes = F32 }
row { op = "max_pool2d", args = { T{2, 3, 6, 6}, 3, 2, 1 }, dtypes = F32 }
row { op = "max_pool3d", args = { T{1, 2, 4, 4, 4}, 2 }, dtypes = F32 }
row { op = "avg_pool2d", args = { T{2, 3, 5, 6}, 3, 2, 1, true, false }, dtypes = { "float32", "float64", "bfloat16", "int64", "int32" },
      variants = FN_OUT }
row { op = "avg_pool2d", args = { T{2, 3, 5, 6}, 2, 1, 1, false, true, 3 }, dtypes = F32 }
row { op = "avg_pool2d", args = { T{2, 3, 5, 6}, 2, 1, 0, false, true, 0 }, dtypes = F32, raises = "divisor must be not zero" }
row { op = "avg_pool3d", args = { T{1, 2, 3, 4, 3}, 2, 2, 1 }, dtypes = { "float32", "float64" }, variants = FN_OUT }
row { op = "avg_pool2d_backward", args = { T{2, 3, 3, 4}, T{2, 3, 5, 6}, 3, 2, 1, true, false, NONE }, dtypes = { "float32", "float64" },
      variants = FN_OUT, outs = { "grad_input" } }
row { op = "avg_pool3d_backward", args = { T{1, 2, 2, 3, 2}, T{1, 2, 3, 4, 3}, 2, 2, 1, false, true, NONE }, dtypes = F32 }
row { op = "avg_pool1d", args = { T{2, 3, 7}, 3, 2, 1 }, dtypes = F32 }
row { op = "_adaptive_avg_pool2d", args = { T{2, 3, 5, 7}, { 3, 2 } }, dtypes = PF, variants = FN_OUT }
row { op = "_adaptive_avg_pool3d", args = { T{1, 2, 3, 5, 4}, { 2, 3, 2 } }, dtypes = F32, variants = FN_OUT }
row { op = "_adaptive_avg_pool2d_backward", args = { T{2, 3, 3, 2}, T{2, 3, 5, 7} }, dtypes = { "float32", "float64" }, variants = FN_OUT }
row { op = "_adaptive_avg_pool3d_backward", args = { T{1, 2, 2, 3, 2}, T{1, 2, 3, 5, 4} }, dtypes = F32 }
row { op = "adaptive_avg_pool2d", args = { T{2, 3, 5, 7}, { 1, 1 } }, dtypes = F32 }
row { op = "adaptive_avg_pool2d", args = { T{2, 3, 0, 7}, { 2, 2 } }, dtypes = F32, raises = "non-zero size" }
row { op = "adaptive_avg_pool1d", args = { T{2, 3, 7}, 3 }, dtypes = F32 }
row { op = "adaptive_avg_pool3d", args = { T{2, 3, 4, 4}, 2 }, dtypes = F32 }
row { op = "adaptive_max_pool2d", args = { T{2, 3, 5, 7}, { 3, 2 } }, dtypes = PF, variants = FN_OUT, outs = { "out", "indices" } }
row { op = "adaptive_max_pool3d", args = { T{1, 2, 3, 5, 4}, 2 }, dtypes = F32, variants = FN_OUT, outs = { "out", "indices" } }
row { op = "adaptive_max_pool2d_backward", args = { T{1, 2, 2, 2}, T{1, 2, 4, 4}, I({1, 2, 2, 2}, 16) }, dtypes = F32,
      variants = FN_OUT, outs = { "grad_input" } }
row { op = "adaptive_max_pool3d_backward", args = { T{1, 1, 1, 2, 2}, T{1, 1, 2, 4, 4}, I({1, 1, 1, 2, 2}, 32) }, dtypes = F32 }
row { op = "adaptive_max_pool1d", args = { T{2, 3, 7}, 3 }, dtypes = F32 }
row { op = "max_unpool2d", args = { T{2, 3, 2, 2}, T({2, 3, 2, 2}, { dtype = "int64", values = UNPOOL2 }), { 4, 4 } },
      dtypes = { "float32", "float64", "int64", "bfloat16" }, variants = FN_OUT }
row { op = "max_unpool2d", args = { T{2, 3, 2, 2}, T({2, 3, 2, 2}, { dtype = "int64", values = UNPOOL2_BAD }), { 4, 4 } },
      dtypes = F32, raises = "invalid max index", skip = { meta = "the error depends on values" } }
row { op = "max_unpool3d", args = { T{1, 2, 1, 2, 2}, T({1, 2, 1, 2, 2}, { dtype = "int64", values = { 0, 5, 30, 31, 0, 5, 30, 31 } }), { 2, 4, 4 }, { 2, 2, 2 }, { 0, 0, 0 } },
      dtypes = F32, variants = FN_OUT }
row { op = "max_unpool1d", args = { T{2, 3, 3}, T({2, 3, 3}, { dtype = "int64", values = { 0, 3, 5, 0, 3, 5, 0, 3, 5, 0, 3, 5, 0, 3, 5, 0, 3, 5 } }), { 6 } }, dtypes = F32 }
row { op = "lp_pool2d", args = { T({2, 3, 4, 4}, { lo = 0.1, hi = 2 }), 2, 2 }, dtypes = F32 }
row { op = "lp_pool1d", args = { T({2, 3, 7}, { lo = 0.1, hi = 2 }), 3, 3, 2 }, dtypes = F32 }
row { op = "native_layer_norm", args = { T{2, 3, 4}, { 4 }, T{4}, T{4}, 1e-5 }, dtypes = FLOATS, variants = FN_OUT,
      outs = { "out0", "out1", "out2" } }
row { op = "native_layer_norm", args = { T{3, 4, layout = "sliced"}, { 4 }, NONE, T{4}, 1e-3 }, dtypes = { "float64" } }
row { op = "native_layer_norm", args = { T{2, 3}, { 3 }, NONE, NONE, 1e-5 }, dtypes = { "int64" }, raises = "not implemented" }
row { op = "native_layer_norm_backward", args = { T{2, 3, 4}, T{2, 3, 4}, { 3, 4 }, T{2, 1, 1}, T({2, 1, 1}, { lo = 0.5, hi = 2 }),
      T{3, 4}, T{3, 4}, { true, true, true } }, dtypes = { "float32", "float64", "bfloat16" } }
row { op = "native_layer_norm_backward", args = { T{4, 3, layout = "transposed"}, T{4, 3}, { 3 }, T{4, 1}, T({4, 1}, { lo = 0.5, hi = 2 }),
      NONE, NONE, { true, false, false } }, dtypes = F32 }
row { op = "native_layer_norm_backward", args = { T{2, 3}, T{2, 4}, { 4 }, T{2, 1}, T{2, 1}, NONE, NONE, { true, true, true } },
      dtypes = F32, raises = "expected grad_out of size" }
row { op = "dropout", args = { T{2, 3}, 0, true }, dtypes = ALL }
row { op = "dropout", args = { T{2, 3}, 0.5, false }, dtypes = F32 }
row { op = "dropout", args = { T{2, 3}, 0.5, true }, dtypes = FLOATS, seed = 7 }
row { op = "dropout", args = { T{2, 3}, 1.5, true }, dtypes = F32, raises = "between 0 and 1" }
local TARGET3 = I({3}, 4)
for _, op in ipairs { "nll_loss", "cross_entropy" } do
  row { op = op, args = { T{3, 4}, TARGET3 }, dtypes = ALL }
  for _, red in ipairs { "none", "sum", "mean", "bogus" } do
    row { op = op, args = { T{3, 4}, TARGET3 }, kw = { reduction = red, weight = T({4}, { lo = 0.5, hi = 2 }) }, dtypes = F32,
          raises = red == "bogus" and "not a valid value" or nil }
  end
  row { op = op, args = { T{3, 4}, T({3}, { dtype = "int64", values = { 0, -100, 3 } }) }, dtypes = F32 }
  row { op = op, args = { T{3, 4}, I({3}, 4) }, kw = { ignore_index = 1 }, dtypes = { "float64" } }
  row { op = op, args = { T{3, 4}, I({2}, 4) }, dtypes = F32, raises = "batch_size" }
  row { op = op, args = { T{0, 4}, I({0}, 4) }, kw = { reduction = "sum" }, dtypes = F32 }
  row { op = op, args = { T{3, 4}, T({3}, { dtype = "int64", values = { 0, 9, 1 } }) }, raises = "out of",
        skip = { meta = "the error depends on values" } }
end
row { op = "cross_entropy", args = { T{3, 4}, I({3}, 4) }, kw = { label_smoothing = 0.1 }, dtypes = F32 }
row { op = "nll_loss_forward", args = { T{3, 4}, TARGET3, NONE, 1, -100 }, dtypes = ALL, variants = FN_OUT,
      outs = { "output", "total_weight" } }
row { op = "nll_loss_forward", args = { T{3, 4}, TARGET3, T{4}, 0, 2 }, dtypes = F32 }
row { op = "mse_loss", args = { T{2, 3}, T{2, 3} }, dtypes = ALL }
for _, red in ipairs { "none", "sum", "bogus" } do
  row { op = "mse_loss", args = { T{2, 3}, T{3} }, kw = { reduction = red }, dtypes = F32,
        raises = red == "bogus" and "not a valid value" or nil }
end
row { op = "mse_loss", args = { T{2, 3}, T{4} }, dtypes = F32, raises = "not broadcastable" }
-- losses and distances (composites; _ctc_loss on its CPU kernel)
local PROB = T({2, 3}, { lo = 0.05, hi = 0.95 })
local SIGN3 = T({3}, { values = { 1, -1, 1 } })
local SIGN23 = T({2, 3}, { values = { 1, -1, 1, -1, -1, 1 } })
local F64 = { "float32", "float64" }
local VALUE_ERR = { meta = "the error depends on values" }
row { op = "binary_cross_entropy", args = { PROB, PROB }, dtypes = F64 }
for _, red in ipairs { "none", "sum" } do
  row { op = "binary_cross_entropy", args = { PROB, PROB }, kw = { weight = T{3}, reduction = red }, dtypes = F32 }
end
row { op = "binary_cross_entropy", args = { T({2}, { values = { 0, 1 } }), T({2}, { values = { 1, 0 } }) }, dtypes = F64 }
row { op = "binary_cross_entropy", args = { PROB, T{2, 1} }, dtypes = F32, raises = "is deprecated" }
row { op = "binary_cross_entropy", args = { T({2, 3}, { lo = 1.5, hi = 2 }), PROB }, dtypes = F32, raises = "between 0 and 1",
      skip = VALUE_ERR }
row { op = "binary_cross_entropy", args = { PROB, PROB }, dtypes = { "int64", "float16" }, raises = "not implemented for" }
row { op = "binary_cross_entropy_backward", args = { T{2, 3}, PROB, PROB }, dtypes = F64 }
row { op = "binary_cross_entropy_backward", args = { T{}, PROB, PROB }, kw = { weight = T{3} }, dtypes = F32 }
row { op = "binary_cross_entropy_with_logits", args = { T{2, 3}, PROB }, dtypes = FLOATS }
row { op = "binary_cross_entropy_with_logits", args = { T{2, 3, layout = "transposed"}, T{2, 3} },
      kw = { weight = T{3}, pos_weight = T{3}, reduction = "none" }, dtypes = F64 }
row { op = "binary_cross_entropy_with_logits", args = { T{2, 3}, T{3} }, dtypes = F32, raises = "must be the same as input size" }
row { op = "l1_loss", args = { T{2, 3}, T{2, 3} }, dtypes = FLOATS }
row { op = "l1_loss", args = { T{2, 3}, T{3} }, kw = { reduction = "sum" }, dtypes = NUM }
row { op = "l1_loss", args = { T{2, 3}, T{2, 3} }, dtypes = INT32, raises = "could not infer output dtype" }
for _, op in ipairs { "smooth_l1_loss", "huber_loss" } do
  row { op = op, args = { T{2, 3}, T{2, 3} }, dtypes = FLOATS }
  row { op = op, args = { T{2, 3, layout = "sliced"}, T{3} }, kw = { reduction = "none", [op == "huber_loss" and "delta" or "beta"] = 0.3 },
        dtypes = F64 }
  row { op = op, args = { T{2, 3}, T{2, 3} }, kw = { [op == "huber_loss" and "delta" or "beta"] = -1 }, dtypes = F32,
        raises = "does not support" }
  row { op = op, args = { T{2, 3}, T{2, 3} }, dtypes = INT32, raises = "not implemented for 'Int'" }
end
row { op = "smooth_l1_loss", args = { T{2, 3}, T{2, 3} }, kw = { beta = 0 }, dtypes = F32 }
row { op = "kl_div", args = { T{2, 3}, PROB }, dtypes = FLOATS }
row { op = "kl_div", args = { T{2, 3}, T{2, 3} }, kw = { reduction = "batchmean", log_target = true }, dtypes = F64 }
row { op = "kl_div", args = { T{2, 3}, PROB }, kw = { reduction = "none" }, dtypes = F32 }
row { op = "kl_div", args = { T{2, 3}, PROB }, dtypes = { "int64" }, raises = "Integral inputs not supported" }
row { op = "poisson_nll_loss", args = { T{2, 3}, T({2, 3}, { lo = 0, hi = 4 }) }, dtypes = FLOATS }
row { op = "poisson_nll_loss", args = { PROB, T({2, 3}, { lo = 0, hi = 4 }), false, true, 1e-6, "none" }, dtypes = F64 }
row { op = "gaussian_nll_loss", args = { T{2, 3}, T{2, 3}, T({2, 3}, { lo = 0.1, hi = 2 }) }, dtypes = F64 }
row { op = "gaussian_nll_loss", args = { T{2, 3}, T{2, 3}, T({2}, { lo = 0.1, hi = 2 }) }, kw = { full = true, reduction = "sum" },
      dtypes = F32 }
row { op = "gaussian_nll_loss", args = { T{2, 3}, T{2, 3}, T{2, 2} }, dtypes = F32, raises = "var is of incorrect size" }
row { op = "gaussian_nll_loss", args = { T{2, 3}, T{2, 3}, T({2, 1}, { lo = -2, hi = -1 }) }, dtypes = F32,
      raises = "var has negative", skip = VALUE_ERR }
row { op = "margin_ranking_loss", args = { T{3}, T{3}, SIGN3 }, kw = { margin = 0.2 }, dtypes = FLOATS }
row { op = "margin_ranking_loss", args = { T{3}, T{3}, T{1, 3} }, dtypes = F32, raises = "should have same dimension" }
row { op = "hinge_embedding_loss", args = { T{2, 3}, SIGN23 }, dtypes = FLOATS }
row { op = "hinge_embedding_loss", args = { T{2, 3}, SIGN23, 0.5, "none" }, dtypes = { "int32", "float64" } }
row { op = "soft_margin_loss", args = { T{2, 3}, SIGN23 }, dtypes = FLOATS }
row { op = "multilabel_soft_margin_loss", args = { T{2, 3}, PROB }, kw = { weight = T{3} }, dtypes = F64 }
row { op = "multilabel_soft_margin_loss", args = { T{3}, PROB }, kw = { reduction = "none" }, dtypes = F32 }
row { op = "multi_margin_loss", args = { T{3, 4}, I({3}, 4) }, dtypes = F64 }
row { op = "multi_margin_loss", args = { T{3, 4}, I({3}, 4) }, kw = { p = 2, margin = 0.5, weight = T{4}, reduction = "none" }, dtypes = F32 }
row { op = "multi_margin_loss", args = { T{4}, I({}, 4) }, kw = { reduction = "none" }, dtypes = F32 }
row { op = "multi_margin_loss", args = { T{3, 4}, T({3}, { dtype = "int64", values = { 0, 4, 1 } }) }, dtypes = F32,
      raises = "target out of range", skip = VALUE_ERR }
row { op = "multi_margin_loss", args = { T{3, 4}, I({2}, 4) }, dtypes = F32, raises = "inconsistent target size" }
row { op = "multilabel_margin_loss", args = { T{2, 4}, T({2, 4}, { dtype = "int64", values = { 3, 0, -1, 1, 1, 2, 0, 3 } }) },
      dtypes = F64 }
row { op = "multilabel_margin_loss", args = { T{4}, T({4}, { dtype = "int64", values = { 2, -1, 0, 0 } }), "none" }, dtypes = F32 }
row { op = "multilabel_margin_loss", args = { T{2, 4}, I({2}, 4) }, dtypes = F32, raises = "inconsistent size" }
row { op = "cosine_embedding_loss", args = { T{2, 3}, T{2, 3}, T({2}, { values = { 1, -1 } }) }, kw = { margin = 0.1 }, dtypes = FLOATS }
row { op = "cosine_embedding_loss", args = { T{3}, T{3}, T({}, { lo = -1, hi = -1 }) }, dtypes = F64 }
row { op = "cosine_embedding_loss", args = { T{2, 3}, T{2, 3}, T{} }, dtypes = F32, raises = "0D target tensor expects 1D" }
row { op = "triplet_margin_loss", args = { T{2, 3}, T{2, 3}, T{2, 3} }, dtypes = FLOATS }
row { op = "triplet_margin_loss", args = { T{2, 3}, T{2, 3}, T{2, 3, layout = "transposed"} },
      kw = { p = 1, swap = true, reduction = "none" }, dtypes = F64 }
row { op = "triplet_margin_loss", args = { T{2, 3}, T{2, 3}, T{3} }, dtypes = F32, raises = "same dimension" }
row { op = "cosine_similarity", args = { T{2, 3}, T{2, 3} }, dtypes = FLOATS }
row { op = "cosine_similarity", args = { T{2, 3, layout = "transposed"}, T{3} }, kw = { dim = -1 }, dtypes = F64 }
row { op = "cosine_similarity", args = { T{2, 3}, T{2, 3} }, dtypes = INT32, raises = "expected common dtype to be floating point" }
row { op = "pairwise_distance", args = { T{2, 3}, T{2, 3} }, dtypes = FLOATS }
row { op = "pairwise_distance", args = { T{2, 3}, T{3} }, kw = { p = 1, keepdim = true }, dtypes = F64 }
row { op = "pdist", args = { T{4, 3} }, dtypes = F64 }
row { op = "pdist", args = { T{4, 3, layout = "sliced"}, 1 }, dtypes = F32 }
row { op = "pdist", args = { T{4} }, dtypes = F32, raises = "pdist only supports 2D tensors" }
row { op = "cdist", args = { T{3, 4}, T{2, 4} }, dtypes = F64 }
row { op = "cdist", args = { T{2, 30, 4}, T{5, 4} }, dtypes = F32 } -- the matmul form
row { op = "cdist", args = { T{3, 4}, T{2, 4}, 1.5 }, dtypes = F32 }
row { op = "cdist", args = { T{3, 4}, T{2, 3} }, dtypes = F32, raises = "must have the same number of columns" }
row { op = "cdist", args = { T{3, 4}, T{2, 4}, 2, 3 }, dtypes = F32, raises = "possible modes" }
local CTC_TG = T({2, 3}, { dtype = "int64", values = { 1, 2, 2, 3, 1, 0 } })
row { op = "ctc_loss", args = { T{5, 2, 4}, CTC_TG, { 5, 4 }, { 3, 2 } }, dtypes = F64 }
row { op = "ctc_loss", args = { T{5, 2, 4}, T({5}, { dtype = "int64", values = { 1, 2, 2, 3, 1 } }), { 5, 2 }, { 3, 2 } },
      kw = { reduction = "none", zero_infinity = true }, dtypes = F32 }
row { op = "ctc_loss", args = { T{5, 4}, T({3}, { dtype = "int64", values = { 1, 2, 2 } }), { 5 }, { 3 } }, kw = { reduction = "sum" },
      dtypes = F32 }
row { op = "ctc_loss", args = { T{5, 2, 4}, CTC_TG, T({2}, { dtype = "int64", values = { 5, 4 } }), T({2}, { dtype = "int64", values = { 3, 2 } }) },
      dtypes = F32, skip = { meta = "the lengths are read as numbers" } }
row { op = "ctc_loss", args = { T{5, 2, 4}, CTC_TG, { 6, 4 }, { 3, 2 } }, dtypes = F32, raises = "input_lengths to have value at most 5" }
row { op = "ctc_loss", args = { T{5, 2, 4}, CTC_TG, { 5, 4 }, { 3, 2 } }, kw = { blank = 4 }, dtypes = F32, raises = "blank must be in label range" }
row { op = "_ctc_loss", args = { T{5, 2, 4}, CTC_TG, { 5, 4 }, { 3, 2 } }, dtypes = F64 }
row { op = "_ctc_loss", args = { T{5, 2, 4}, T({2, 3}, { dtype = "int32", values = { 1, 2, 2, 3, 1, 0 } }), { 3, 4 }, { 1, 2 } }, dtypes = F32 }
row { op = "_ctc_loss", args = { T{5, 2, 4}, T({2, 3}, { dtype = "int64", values = { 1, 2, 9, 3, 1, 0 } }), { 5, 4 }, { 3, 2 } },
      dtypes = F32, raises = "out of range", skip = VALUE_ERR }
row { op = "_ctc_loss_backward", args = { T{2}, T{3, 2, 4}, CTC_TG, { 3, 2 }, { 1, 2 }, T{2}, T{2, 3, 5}, 0 }, dtypes = F64 }
row { op = "_ctc_loss_backward", args = { T{2}, T{3, 2, 4}, CTC_TG, { 3, 2 }, { 1, 2 }, T{2}, T{2, 3, 4}, 0 }, dtypes = F32,
      raises = "expected log_alpha of size" }
-- convolution: float32 on oneDNN, the other dtypes on sk's loops; transposed, grouped, strided
local CONV_DTYPES = { "float32", "float64", "float16", "bfloat16", "int32", "int64" }
row { op = "convolution", args = { T{2, 4, 5, 5}, T{6, 2, 3, 3}, T{6}, { 2, 1 }, { 1, 1 }, { 1, 2 }, false, { 0, 0 }, 2 },
      dtypes = CONV_DTYPES, variants = FN_OUT }
row { op = "convolution", args = { T{1, 4, 3, 3}, T{4, 2, 3, 3}, T{4}, { 2, 2 }, { 1, 1 }, { 1, 1 }, true, { 1, 0 }, 2 },
      dtypes = CONV_DTYPES, variants = FN_OUT }
row { op = "convolution", args = { T{2, 3, 4, 5, layout = "transposed"}, T{2, 3, 2, 2, layout = "sliced"}, NONE, { 1 }, { 0 }, { 1 }, false, { 0 }, 1 },
      dtypes = F32 }
row { op = "convolution", args = { T{0, 3, 4, 4}, T{2, 3, 3, 3}, NONE, { 1 }, { 0 }, { 1 }, false, { 0 }, 1 }, dtypes = F32 }
row { op = "convolution", args = { T{2, 3, 4, 4}, T{2, 2, 3, 3}, NONE, { 1 }, { 0 }, { 1 }, false, { 0 }, 1 }, dtypes = F32,
      raises = "channels instead" }
row { op = "convolution", args = { T{2, 3, 4, 4}, T{2, 3, 3, 3}, NONE, { 0 }, { 0 }, { 1 }, false, { 0 }, 1 }, dtypes = F32,
      raises = "non-positive stride" }
row { op = "conv1d", args = { T{2, 3, 7}, T{4, 3, 3}, T{4}, 2, 1 }, dtypes = { "float32", "float64" } }
row { op = "conv1d", args = { T{3, 8}, T{2, 3, 4}, NONE, 1, "same", 2 }, dtypes = F32 }
row { op = "conv2d", args = { T{2, 3, 5, 4}, T{4, 3, 3, 2}, T{4}, 1, "valid" }, dtypes = { "float32", "float64" } }
row { op = "conv2d", args = { T{2, 4, 6, 6}, T{4, 1, 3, 3}, NONE, 1, 1, 1, 4 }, dtypes = F32 } -- depthwise
row { op = "conv2d", args = { T{2, 3}, T{4, 3, 3, 3} }, dtypes = F32, raises = "(unbatched) or 4D (batched)" }
row { op = "conv3d", args = { T{1, 2, 3, 4, 3}, T{3, 2, 2, 2, 2}, T{3}, 1, 1 }, dtypes = { "float32", "float64" } }
row { op = "conv_transpose1d", args = { T{2, 3, 5}, T{3, 2, 3}, T{2}, 2, 1, 1 }, dtypes = { "float32", "float64" } }
row { op = "conv_transpose2d", args = { T{3, 4, 4}, T{3, 2, 3, 3}, NONE, 2, 0, 1 }, dtypes = F32 }
row { op = "conv_transpose3d", args = { T{1, 2, 2, 3, 2}, T{2, 2, 2, 2, 2}, T{2}, 2, 0, 1 }, dtypes = F32 }
row { op = "convolution_backward", args = { T{2, 6, 3, 3}, T{2, 4, 5, 5}, T{6, 2, 3, 3}, { 6 }, { 2, 1 }, { 1, 1 }, { 1, 2 },
      false, { 0, 0 }, 2, { true, true, true } }, dtypes = { "float32", "float64" } }
row { op = "convolution_backward", args = { T{1, 4, 6, 5}, T{1, 4, 3, 3}, T{4, 2, 3, 3}, NONE, { 2, 2 }, { 1, 1 }, { 1, 1 },
      true, { 1, 0 }, 2, { true, true, false } }, dtypes = F32 } -- the third result is None
row { op = "convolution_backward", args = { T{2, 6, 3, 5}, T{2, 4, 5, 5}, T{6, 2, 3, 3}, { 6 }, { 2, 1 }, { 1, 1 }, { 1, 2 },
      false, { 0, 0 }, 2, { true, true, true } }, dtypes = F32, raises = "expected grad_output of size" }
-- }====

-- {==== Factories ====
local FACTORY_SIZES = { { 2, 3 }, { 0 }, {} }
local D = { device = "$device" }
local function with(kw, extra)
  local t = {}
  for k, v in pairs(kw) do t[k] = v end
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end
for _, op in ipairs { "zeros", "ones", "empty", "rand", "randn" } do
  for _, s in ipairs(FACTORY_SIZES) do
    row { op = op, args = { s }, kw = D, factory = true, values = op ~= "empty" and nil or false,
          seed = (op == "rand" or op == "randn") and 3 or nil }
  end
  for _, d in ipairs(ALL) do
    row { op = op, args = { { 2, 2 } }, kw = with(D, { dtype = d }), factory = true, values = op ~= "empty" and nil or false,
          seed = (op == "rand" or op == "randn") and 3 or nil,
          raises = (op == "rand" or op == "randn") and not ISFLOAT[d] and "floating point" or nil }
  end
  row { op = op, args = { { 2, -1 } }, kw = D, factory = true, raises = "negative dimension" }
end
for _, d in ipairs(ALL) do
  row { op = "full", args = { { 2, 3 }, 1 }, kw = with(D, { dtype = d }), factory = true }
  row { op = "arange", args = { 5 }, kw = with(D, { dtype = d ~= "bool" and d or nil }), factory = true }
  row { op = "eye", args = { 3 }, kw = with(D, { dtype = d }), factory = true }
  row { op = "randint", args = { 5, { 2, 3 } }, kw = with(D, { dtype = d }), factory = true, seed = 5,
        raises = d == "bool" and "does not fit" or nil }
  row { op = "randperm", args = { 5 }, kw = with(D, { dtype = d }), factory = true, seed = 5,
        raises = d == "bool" and "does not fit" or nil }
end
for _, a in ipairs { { { 2, 3 }, 2.5 }, { {}, 7 }, { { 0 }, 1 }, { { 2 }, true } } do
  row { op = "full", args = a, kw = D, factory = true }
end
for _, a in ipairs { { 1, 7, 2 }, { 0, 1, 0.25 }, { 5, 1, -1 }, { 0, 5, 0, raises = "nonzero" },
                     { 0, 5, -1, raises = "inconsistent" }, { 1.5 }, { 0 } } do
  row { op = "arange", args = a, kw = D, factory = true, raises = a.raises }
end
for _, a in ipairs { { 0, 1, 5 }, { 2, -2, 4 }, { 0, 1, 1 }, { 0, 1, 0 }, { 0, 1, -1, raises = "non-negative" } } do
  row { op = "linspace", args = a, kw = D, factory = true, raises = a.raises }
  row { op = "logspace", args = a, kw = D, factory = true, raises = a.raises }
end
row { op = "logspace", args = { 0, 3, 4, 2 }, kw = D, factory = true }
for _, d in ipairs { "float64", "int32" } do
  row { op = "linspace", args = { 0, 6, 4 }, kw = with(D, { dtype = d }), factory = true }
  row { op = "logspace", args = { 0, 2, 3 }, kw = with(D, { dtype = d }), factory = true }
end
for _, a in ipairs { { 2, 3 }, { 0, 2 }, { 3, 0 }, { -1, raises = "greater or equal" } } do
  row { op = "eye", args = a, kw = D, factory = true, raises = a.raises }
end
for _, a in ipairs { { 2, 5, { 3 } }, { 5, { 0 } }, { 3, 2, { 2 }, raises = "less than" }, { 0, { 2 }, raises = "less than" } } do
  row { op = "randint", args = a, kw = D, factory = true, seed = 5, raises = a.raises }
end
row { op = "randperm", args = { 0 }, kw = D, factory = true }
row { op = "randperm", args = { -1 }, kw = D, factory = true, raises = "non-negative" }
-- *_like: the dtype, shape and device of self unless told
for _, op in ipairs { "zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like" } do
  local extra = op == "full_like" and { 2 } or {}
  local rand = op:find("^rand") ~= nil
  for i, x in ipairs { T{2, 3}, T{3, 2, layout = "transposed"}, T{0, 3}, T{} } do
    local args = { x, table.unpack(extra) }
    row { op = op, args = args, dtypes = i == 1 and (rand and FLOATS or ALL) or F32, values = op ~= "empty_like" and nil or false,
          seed = rand and 9 or nil }
  end
  if rand then
    row { op = op, args = { T{2, 3} }, dtypes = NONFLOAT, raises = "floating point" }
  end
  row { op = op, args = { T{2, 3}, table.unpack(extra) }, kw = { dtype = "float64" }, dtypes = { "int32" },
        values = op ~= "empty_like" and nil or false, seed = op:find("^rand") and 9 or nil }
end
-- new_*: the given size, with self's dtype and device unless told (methods only, as PyTorch)
for _, op in ipairs { "new_zeros", "new_ones", "new_empty", "new_full" } do
  local extra = op == "new_full" and { 3 } or {}
  local v = op ~= "new_empty" and nil or false
  row { op = op, args = { T{2, 3}, { 4, 1 }, table.unpack(extra) }, dtypes = ALL, variants = { "method" }, values = v }
  row { op = op, args = { T{3, 2, layout = "transposed"}, { 0, 2 }, table.unpack(extra) }, dtypes = F32, variants = { "method" }, values = v }
  row { op = op, args = { T{2}, { 2 }, table.unpack(extra) }, kw = { dtype = "float64" }, dtypes = { "int32" },
        variants = { "method" }, values = v }
  row { op = op, args = { T{2}, { -1 }, table.unpack(extra) }, dtypes = F32, variants = { "method" }, raises = "negative dimension" }
end
-- }====

-- {==== Random ====
row { op = "bernoulli", args = { T({2, 3}, { lo = 0, hi = 1 }) }, dtypes = FLOATS, variants = FN_M, seed = 11 }
row { op = "bernoulli", args = { T{2, 3}, 0.5 }, dtypes = ALL, variants = FN_M, seed = 11 }
row { op = "bernoulli", args = { T{0, 3}, 0.5 }, dtypes = F32, seed = 11 }
row { op = "bernoulli", args = { T{2, 3}, 1.5 }, dtypes = F32, seed = 11, raises = "in [0, 1]" }
row { op = "bernoulli_", args = { T{2, 3}, 0.25 }, dtypes = ALL, variants = { "method" }, seed = 11 }
row { op = "bernoulli_", args = { T{2, 3, layout = "sliced"}, T({2, 3}, { lo = 0, hi = 1 }) }, dtypes = F32,
      variants = { "method" }, seed = 11 }
row { op = "uniform_", args = { T{2, 3}, -1, 1 }, dtypes = FLOATS, variants = { "method" }, seed = 13 }
row { op = "uniform_", args = { T{2, 3} }, dtypes = NONFLOAT, variants = { "method" }, raises = "floating point" }
row { op = "uniform_", args = { T{3, 2, layout = "transposed"} }, dtypes = F32, variants = { "method" }, seed = 13 }
row { op = "normal_", args = { T{2, 3}, 1, 2 }, dtypes = FLOATS, variants = { "method" }, seed = 13 }
row { op = "normal_", args = { T{2, 3} }, dtypes = NONFLOAT, variants = { "method" }, raises = "floating point" }
row { op = "normal_", args = { T{2, 3, layout = "sliced"} }, dtypes = F32, variants = { "method" }, seed = 13 }
row { op = "normal_", args = { T{2, 3}, 0, -1 }, dtypes = F32, variants = { "method" }, seed = 13, raises = "std >= 0" }
row { op = "random_", args = { T{2, 3}, 0, 5 }, dtypes = NUM, variants = { "method" }, seed = 17 }
row { op = "random_", args = { T{2, 3}, 0, 5 }, dtypes = { "bool" }, variants = { "method" }, raises = "does not fit" }
row { op = "random_", args = { T{2, 3}, 5, 5 }, dtypes = F32, variants = { "method" }, seed = 17, raises = "less than" }
local PROBS = T({2, 4}, { lo = 0.25, hi = 1 })
row { op = "multinomial", args = { PROBS, 2 }, dtypes = FLOATS, variants = FN_M, seed = 19 }
row { op = "multinomial", args = { PROBS, 6, true }, dtypes = F32, seed = 19 }
row { op = "multinomial", args = { T({4}, { lo = 0.25, hi = 1 }), 3 }, dtypes = F32, seed = 19 }
row { op = "multinomial", args = { PROBS, 6 }, dtypes = F32, seed = 19, raises = "n_sample" }
row { op = "multinomial", args = { T({2}, { values = { -1, 1 } }), 1 }, raises = "invalid multinomial distribution", seed = 19,
      skip = { meta = "the error depends on values" } }
-- }====

-- {==== Shape and indexing: composites, searchsorted, factories (shapeidx) ====
local SI = {
  -- op, variants of the first row, rows (args); the first row sweeps ALL dtypes
  { "diagonal", FN_M, { T{3, 4} }, { T{3, 4}, 1 }, { T{2, 3, 4}, -1, 0, 2 }, { T{3, 2, layout = "transposed"}, 0, 1, 0 },
    { T{3, 4}, 5 }, { T{3, 4}, 0, 0, 0, raises = "cannot be identical" } },
  { "diag_embed", FN_M, { T{2, 3} }, { T{3}, 1 }, { T{2, 3}, -1, 0, 2 }, { T{3}, 0, 0, 0, raises = "cannot be identical" } },
  { "diagflat", FN_M, { T{2, 2} }, { T{3}, -1 }, { T{} } },
  { "movedim", FN_M, { T{2, 3, 4}, 0, 2 }, { T{2, 3, 4}, { 0, 1 }, { 2, 0 } }, { T{}, 0, 0 },
    { T{2, 3, 4}, { 0, 0 }, { 1, 2 }, raises = "repeated dim" }, { T{2, 3, 4}, { 0 }, { 1, 2 }, raises = "same number of dims" } },
  { "moveaxis", FN_M, { T{2, 3, 4}, -1, 0 }, { T{2, 3, 4}, { 2, 0 }, { 0, 1 } } },
  { "broadcast_to", FN_M, { T{3, 1}, { 2, 3, 4 } }, { T{3}, { 2, 2 }, raises = "must match" } },
  { "broadcast_tensors", nil, { L{ T{3, 1}, T{4}, T{} } }, { L{ T{2, 3}, T{4} }, raises = "must match the size" } },
  { "meshgrid", nil, { L{ T{2}, T{3} }, kw = { indexing = "ij" } }, { L{ T{2}, T{3}, T{} }, kw = { indexing = "xy" } },
    { L{ T{2}, T{3} } }, { L{ T{2}, T{2, 2} }, kw = { indexing = "ij" }, raises = "0D or 1D" },
    { L{ T{2}, T{3} }, kw = { indexing = "yx" }, raises = "indexing must be one of" } },
  { "cartesian_prod", nil, { L{ T{2}, T{3} } }, { L{ T{3} } }, { L{ T{2, 2} }, raises = "1D vector" } },
  { "combinations", nil, { T{4} }, { T{4}, 3 }, { T{3}, 2, true }, { T{2}, 3 }, { T{3}, 0 }, { T{2, 2}, raises = "1D vector" },
    { T{3}, -1, raises = "non-negative" } },
  { "expand_as", { "method" }, { T{3, 1}, T{2, 3, 4} }, { T{3}, T{2, 2}, raises = "must match" } },
  { "view_as", { "method" }, { T{2, 3}, T{3, 2} }, { T{2, 3}, T{5}, raises = "invalid" } },
  { "reshape_as", { "method" }, { T{3, 2, layout = "transposed"}, T{6} } },
  { "ravel", FN_M, { T{2, 3} }, { T{3, 2, layout = "transposed"} }, { T{} } },
  { "sum_to_size", { "method" }, { T{2, 3}, { 1, 3 } }, { T{2, 3, 4}, { 3, 1 } }, { T{2, 3}, { 4 }, raises = "not expandable" } },
  { "atleast_1d", nil, { T{} }, { T{2, 3} }, { L{ T{}, T{2} } } },
  { "atleast_2d", nil, { T{} }, { T{3} }, { L{ T{}, T{2}, T{2, 2} } } },
  { "atleast_3d", nil, { T{} }, { T{3} }, { T{2, 3} }, { L{ T{2, 3}, T{1, 2, 3, 4} } } },
  { "hstack", FN_OUT, { L{ T{2, 3}, T{2, 1} } }, { L{ T{2}, T{} } }, { L{}, raises = "non-empty" } },
  { "vstack", FN_OUT, { L{ T{2, 3}, T{3} } }, { L{ T{}, T{} } }, { L{}, raises = "non-empty" } },
  { "row_stack", FN_OUT, { L{ T{2, 3}, T{3} } } },
  { "dstack", FN_OUT, { L{ T{2, 3}, T{2, 3, 2} } }, { L{ T{3}, T{3} } }, { L{}, raises = "non-empty" } },
  { "column_stack", FN_OUT, { L{ T{3}, T{3, 2} } }, { L{ T{}, T{1, 2} } }, { L{}, raises = "non-empty" } },
  { "tensor_split", FN_M, { T{7, 2}, 3 }, { T{2, 7}, { 1, 5 }, 1 }, { T{7}, { 5, 2 } }, { T{7}, { -2, 9 } },
    { T{7}, T({}, { dtype = "int64", values = 3, device = "cpu" }) },
    { T{7}, T({2}, { dtype = "int64", values = { 2, 4 }, device = "cpu" }) }, { T{7}, 0, raises = "larger than 0" },
    { T{}, 2, raises = "at least a 1-dimensional" } },
  { "hsplit", FN_M, { T{2, 4}, 2 }, { T{6}, { 1, 4 } }, { T{2, 3}, 2, raises = "not divisible" }, { T{}, 2, raises = "at least 1" } },
  { "vsplit", FN_M, { T{4, 2}, 2 }, { T{4, 2}, { 3 } }, { T{3}, 3, raises = "at least 2" } },
  { "dsplit", FN_M, { T{2, 2, 4}, 2 }, { T{1, 2, 3}, { 1 } }, { T{2, 3}, 2, raises = "at least 3" } },
  { "rot90", FN_M, { T{2, 3} }, { T{2, 3, 4}, 2, { 2, 0 } }, { T{2, 3}, -1 }, { T{2, 3}, 4 }, { T{2, 3}, 1, { 0 }, raises = "rotation dims == 2" },
    { T{2, 3}, 1, { 0, 0 }, raises = "to be different" }, { T{3}, raises = "total dims >= 2" } },
  { "fliplr", FN_M, { T{2, 3} }, { T{3}, raises = ">= 2-d" } },
  { "flipud", FN_M, { T{2, 3} }, { T{}, raises = ">= 1-d" } },
  { "select_scatter", FN_M, { T{3, 4}, T{4}, 0, 1 }, { T{3, 4, layout = "sliced"}, T{3}, 1, -1 },
    { T{3, 4}, T{3}, 0, 1, raises = "equal to the slice" } },
  { "slice_scatter", FN_M, { T{4, 3}, T{2, 3}, 0, 0, 4, 2 }, { T{4, 3}, T{4, 1}, 1, 2 }, { T{4, 3}, T{2, 3}, raises = "equal to the slice" } },
  { "diagonal_scatter", FN_M, { T{3, 3}, T{3} }, { T{3, 4}, T{2}, 2 }, { T{2, 3, 3}, T{2, 2}, -1, 1, 2 },
    { T{3, 3}, T{2}, raises = "equal to the slice" } },
  { "as_strided_scatter", FN_M, { T{3, 3}, T{2}, { 2 }, { 4 } }, { T{2, 3, layout = "transposed"}, T{2, 2}, { 2, 2 }, { 1, 3 }, 1 },
    { T{3, 3}, T{3}, { 2 }, { 4 }, raises = "equal to the slice" }, { T{3, 3}, T{2}, { 2 }, { 40 }, raises = "outside its storage" } },
  { "narrow_copy", FN_M_OUT, { T{4, 3}, 0, 1, 2 }, { T{3, 2, layout = "transposed"}, 1, 0, 1 }, { T{2, 3}, 0, 1, 5, raises = "exceeds" } },
  -- products
  { "kron", FN_M_OUT, { T{2, 3}, T{2, 2} }, { T{3}, T{2, 1, 2} }, { T{}, T{2} } },
  { "inner", FN_M_OUT, { T{2, 3}, T{4, 3} }, { T{}, T{2} }, { T{2, 3}, T{4}, raises = "last dimension must match" } },
  { "tensordot", FN_OUT, { T{2, 3, 4}, T{4, 3, 5}, { 1, 2 }, { 1, 0 } }, { T{2, 3}, T{3, 2}, {}, {} },
    { T{2, 3}, T{1, 2}, { 1 }, { 0 } }, { T{2, 3}, T{2, 3}, { 0 }, { 1 }, raises = "contracted dimensions need to match" },
    { T{2, 3}, T{2, 3}, { 0, 1 }, { 0 }, raises = "same length" } },
  { "addbmm", ALL4, { T{2, 4}, T{3, 2, 5}, T{3, 5, 4} }, { T{4}, T{2, 2, 3}, T{2, 3, 4}, kw = { beta = 0.5, alpha = 2 } },
    { T{2, 4}, T{3, 2, 5}, T{2, 5, 4}, raises = "same number of batches" }, { T{2, 4}, T{2, 5}, T{3, 5, 4}, raises = "3D tensor" } },
  { "addr", ALL4, { T{2, 3}, T{2}, T{3} }, { T{3}, T{2}, T{3}, kw = { beta = 2, alpha = 0.5 } }, { T{2, 3}, T{2}, T{3}, kw = { beta = 0 } },
    { T{2, 3}, T{2, 1}, T{3}, raises = "1-D argument vec1" },
    { T({2, 3}, { dtype = "bool" }), T({2}, { dtype = "bool" }), T({3}, { dtype = "bool" }), kw = { beta = false } } },
  { "vdot", FN_M_OUT, { T{3}, T{3} }, { T{2, 2}, T{2, 2}, raises = "1D tensors expected" } },
  { "cross", FN_M_OUT, { T{2, 3}, T{2, 3} }, { T{3, 2}, T{3, 2}, 0 }, { T{3, 2, layout = "transposed"}, T{3, 1} },
    { T{2, 4}, T{2, 4}, raises = "no dimension of size 3" } },
  { "linalg_cross", FN_OUT, { T{2, 3}, T{1, 3} }, { T{3, 2}, T{3, 2}, kw = { dim = 0 } },
    { T{2, 3}, T{3}, raises = "same number of dimensions" }, { T{3, 2}, T{3, 2}, raises = "must have length 3" } },
  { "einsum", nil, { "ij,jk->ik", L{ T{2, 3}, T{3, 4} } }, { "bhqd,bhkd->bhqk", L{ T{2, 2, 3, 4}, T{2, 2, 5, 4} } },
    { "ii->i", L{ T{3, 3} } }, { "...ij,jk", L{ T{2, 2, 3}, T{3, 1} } }, { "ij,jk,kl->il", L{ T{2, 3}, T{3, 4}, T{4, 2} }, kw = { path = { 1, 2, 0, 1 } } },
    { "ij,jk->ik", L{ T{2, 3}, T{4, 5} }, raises = "does not broadcast" }, { "ij", L{ T{2, 3}, T{2} }, raises = "more operands" },
    { "ij->i", L{ T({2, 1}, { dtype = "int32" }) } } },
  { "block_diag", nil, { L{ T{}, T{2}, T{2, 1} } }, { L{ T{2, 3}, T({1, 2}, { dtype = "int32" }) } }, { L{ T{2, 2, 2} }, raises = "2 or fewer" } },
  { "max", FN_M_OUT, { T{2, 3}, T{3} } }, -- max.other; out: max.out
  { "min", FN_M_OUT, { T{2, 3}, T{2, 1} } }, -- min.other; out: min.out
  -- indexing
  { "argwhere", FN_M, { T{2, 3} }, { T{} }, { T{0, 3} } },
  { "take_along_dim", FN_M_OUT, { T{2, 3}, I({2, 2}, 3), 1 }, { T{2, 3}, I({4}, 6) }, { T{2, 3}, I({1, 3}, 2), 0 },
    { T{2, 3}, T({2, 3}, { dtype = "int32", lo = 0, hi = 1 }), 1, raises = "dtype of indices" },
    { T{2, 3}, I({2}, 3), 1, raises = "same number of dimensions" } },
  { "take", FN_M_OUT, { T{2, 3}, I({2, 2}, 6) }, { T{3, 2, layout = "transposed"}, T({3}, { dtype = "int64", values = { 0, -1, 3 } }) },
    { T{2, 3}, T({2}, { dtype = "int32", lo = 0, hi = 1 }), raises = "long tensor" } },
  { "put", { "functional", "method", "inplace" }, { T{2, 3}, T({2}, { dtype = "int64", values = { 0, -1 } }), T{2} },
    { T{3, 2, layout = "transposed"}, T({3}, { dtype = "int64", values = { 1, 1, 4 } }), T{3}, true },
    { T{2, 3}, I({2}, 6), T{3}, raises = "same number of elements" } },
  { "index_add", ALL4, { T{3, 4}, 0, T({2}, { dtype = "int64", values = { 0, 2 } }), T{2, 4} },
    { T{3, 4}, 1, T({3}, { dtype = "int64", values = { 1, 1, 3 } }), T{3, 3}, kw = { alpha = 2 } },
    { T{3, 4}, 0, I({2}, 3), T{3, 4}, raises = "Number of indices" }, { T{3, 4}, 0, T({2}, { dtype = "float32" }), T{2, 4}, raises = "int32/int64" } },
  { "index_copy", ALL4, { T{3, 4}, 0, T({2}, { dtype = "int64", values = { 2, 0 } }), T{2, 4} },
    { T{3, 4, layout = "sliced"}, 1, T({1}, { dtype = "int64", values = { 1 } }), T{3, 1} },
    { T{3, 4}, 0, T({2}, { dtype = "int32", values = { 0, 1 } }), T{2, 4}, raises = "long tensor" } },
  { "index_fill", { "functional", "method", "inplace" }, { T{3, 4}, 1, T({2}, { dtype = "int64", values = { 0, -1 } }), 2.5 },
    { T{3, 4}, 0, T({1}, { dtype = "int64", values = { 1 } }), T{} },
    { T{3, 4}, 0, T({1}, { dtype = "int64", values = { 1 } }), T{1}, raises = "0-dimensional value" },
    { T{3, 4}, 0, T({1}, { dtype = "int32", values = { 1 } }), 1, raises = "int64 for index" } },
  { "index_reduce", ALL4, { T{3, 4}, 0, T({3}, { dtype = "int64", values = { 2, 0, 2 } }), T{3, 4}, "prod" },
    { T{3, 4}, 1, T({3}, { dtype = "int64", values = { 1, 1, 3 } }), T{3, 3}, "mean", kw = { include_self = false } },
    { T{3, 2, layout = "transposed"}, 0, T({2}, { dtype = "int32", values = { 0, 0 } }), T{2, 2}, "amax" },
    { T{3, 4}, 0, T({2}, { dtype = "int64", values = { 1, 2 } }), T{2, 4}, "amin", kw = { include_self = false } },
    { T{3, 4}, 0, I({2}, 3), T{2, 4}, "sum", raises = "Expected reduce to be one of" },
    { T{3, 4}, 0, I({2}, 3), T{2, 5}, "prod", raises = "does not match self's size" } },
  { "masked_scatter", { "functional", "method", "inplace" }, { T{3, 4}, Mk{3, 4}, T{12} }, { T{3, 4}, Mk{4}, T{3, 4} },
    { T{3, 4}, Mk{5}, T{20}, raises = "must match" } },
  { "isin", nil, { T({2, 3}, { dtype = "int64", lo = 0, hi = 5 }), T({4}, { dtype = "int64", lo = 0, hi = 5 }) },
    { T{2, 3}, T{0} }, { T({3}, { dtype = "int64", lo = 0, hi = 3 }), 2 }, { 2, T({3}, { dtype = "int64", lo = 0, hi = 3 }) },
    { T({3}, { dtype = "int64", lo = 0, hi = 3 }), T({4}, { dtype = "int64", lo = 0, hi = 3 }), kw = { invert = true } },
    { T({2}, { dtype = "bool" }), T({2}, { dtype = "bool" }), raises = "Unsupported input type" } },
  { "repeat_interleave", FN_M, { T{2, 3}, 2 }, { T{2, 3}, 2, kw = { dim = 1 } }, { T{2, 3}, T({2}, { dtype = "int64", values = { 1, 2 } }), kw = { dim = 0 } },
    { T({3}, { dtype = "int64", values = { 1, 0, 2 } }) }, { T{2, 3}, -1, raises = "can not be negative" },
    { T{2, 3}, T({3}, { dtype = "int64", values = { 1, 2, 1 } }), kw = { dim = 0 }, raises = "same size as input" } },
  { "searchsorted", FN_OUT, { T({5}, { values = { -2, -1, 0, 0.5, 1 } }), T{2, 3} },
    { T({2, 3}, { values = { -1, 0, 1, -1, 0, 1 } }), T{2, 4}, kw = { right = true } },
    { T({4}, { values = { 1, 3, 5, 7 } }), 3 }, { T({4}, { values = { 1, 3, 5, 7 } }), T{3}, kw = { side = "right", out_int32 = true } },
    { T({4}, { values = { 7, 1, 5, 3 } }), T{3}, kw = { sorter = T({4}, { dtype = "int64", values = { 1, 3, 2, 0 } }) } },
    { T{4}, T{3}, kw = { side = "middle" }, raises = "side can only be" }, { T{2, 4}, T{3, 3}, raises = "first N-1 dimensions" } },
  { "bucketize", FN_OUT, { T{2, 3}, T({4}, { values = { -1, 0, 0.5, 1 } }) }, { 0.5, T({3}, { values = { 0, 0.5, 1 } }), kw = { right = true } },
    { T{3}, T{2, 2}, raises = "must be 1 dimension" } },
}
local SI_VALUE_SHAPED = { argwhere = true, masked_scatter = true, repeat_interleave = "Tensor" }
for _, r in ipairs(SI) do
  for i = 3, #r do
    local a = r[i]
    local vs = SI_VALUE_SHAPED[r[1]]
    local needs_values = vs == true or (vs == "Tensor" and (a[2] == nil or getmetatable(a[2]) == Tensor))
    local method_only = r[2] and #r[2] == 1 and r[2][1] == "method"
    row { op = r[1], args = a, kw = a.kw, dtypes = (i == 3 and not a.raises) and ALL or F32,
          variants = (i == 3 or method_only) and r[2] or nil, raises = a.raises,
          skip = needs_values and { meta = "the result depends on the values" } or nil }
  end
end
-- values that only the CPU can check (Meta has none)
for _, a in ipairs {
  { "take", T{2, 3}, T({2}, { dtype = "int64", values = { 0, 6 } }), raises = "out of range: tried to access index 6" },
  { "put", T{2, 3}, T({2}, { dtype = "int64", values = { 0, -7 } }), T{2}, raises = "tried to access index -7" },
  { "index_add", T{3, 4}, 0, T({2}, { dtype = "int64", values = { 0, 3 } }), T{2, 4}, raises = "index out of range in self" },
  { "index_copy", T{3, 4}, 0, T({2}, { dtype = "int64", values = { 0, 3 } }), T{2, 4}, raises = "index 3 is out of bounds" },
  { "index_fill", T{3, 4}, 0, T({2}, { dtype = "int64", values = { 0, -4 } }), 1, raises = "index -4 is out of bounds" },
  { "masked_scatter", T{3, 4}, Mk{3, 4}, T{1}, raises = "Number of elements of source" },
  { "index_reduce", T{3, 4}, 0, T({2}, { dtype = "int64", values = { 0, 3 } }), T{2, 4}, "amax", raises = "index out of range in self" },
  { "searchsorted", T{4}, T{3}, kw = { sorter = T({4}, { dtype = "int64", values = { 0, 1, 2, 4 } }) }, raises = "sorter index out of range" },
} do
  row { op = a[1], args = { table.unpack(a, 2) }, kw = a.kw, raises = a.raises, skip = { meta = "the error depends on values" } }
end
-- factories and random ones
for _, d in ipairs { "int64", "int32" } do
  row { op = "tril_indices", args = { 3, 4, 1 }, kw = with(D, { dtype = d }), factory = true }
  row { op = "triu_indices", args = { 4, 3, -1 }, kw = with(D, { dtype = d }), factory = true }
end
row { op = "tril_indices", args = { 0, 3 }, kw = D, factory = true }
row { op = "triu_indices", args = { 3, 3, 5 }, kw = D, factory = true }
row { op = "tril_indices", args = { -1, 3 }, kw = D, factory = true, raises = "row must be non-negative" }
row { op = "triu_indices", args = { 3, 3 }, kw = with(D, { dtype = "float32" }), factory = true, raises = "not implemented for" }
row { op = "new_empty_strided", args = { T{2, 3}, { 2, 3 }, { 1, 2 } }, dtypes = ALL, variants = { "method" }, values = false }
row { op = "new_empty_strided", args = { T{2}, { 2, 3 }, { 1 } }, dtypes = F32, variants = { "method" }, raises = "dimensionality of sizes" }
row { op = "resize_", args = { T{2, 3}, { 3, 2 } }, dtypes = ALL, variants = { "functional", "method" } }
row { op = "resize_", args = { T{2, 3}, { 4, 4 } }, dtypes = F32, variants = { "method" }, values = false }
row { op = "resize_", args = { T{3, 2, layout = "transposed"}, { 3, 2 } }, dtypes = F32, variants = { "method" } }
row { op = "resize_", args = { T{2, 3}, { -1 } }, dtypes = F32, variants = { "method" }, raises = "negative dimension" }
row { op = "resize_as_", args = { T{2, 3}, T{6} }, dtypes = ALL, variants = { "functional", "method" } }
row { op = "randint_like", args = { T{2, 3}, 5 }, dtypes = NUM, seed = 23 }
row { op = "randint_like", args = { T{2, 3}, -2, 3 }, kw = { dtype = "int64" }, dtypes = F32, seed = 23 }
row { op = "randint_like", args = { T{2, 3}, 3, 3 }, dtypes = F32, seed = 23, raises = "less than" }
row { op = "normal", args = { T{2, 3}, 2.0 }, dtypes = FLOATS, seed = 29 }
row { op = "normal", args = { 1.0, T({2, 3}, { lo = 0, hi = 1 }) }, dtypes = { "float32", "float64" }, seed = 29 }
row { op = "normal", args = { T{2, 3}, T({3}, { lo = 0, hi = 1 }) }, dtypes = { "float32", "float64" }, seed = 29 }
row { op = "normal", args = { 0.0, 1.0, { 2, 3 } }, kw = D, factory = true, seed = 29 }
row { op = "normal", args = { T{2, 3}, -1.0 }, dtypes = F32, seed = 29, raises = "std >= 0.0" }
row { op = "normal", args = { T{2, 3} }, dtypes = { "int64" }, seed = 29, raises = "floating point" }
-- }====

-- {==== Reductions and scans of issue 13 (reductions) ====
local VI = { "values", "indices" }
local NOBOOL = NUM
-- PyTorch reads a q tensor's values only on the CPU (no device sync): elsewhere it is not checked
local Q_CPU_ONLY, Q_PENDING = { meta = "q is checked on the CPU only" },
  { conf_host = "q is checked on the CPU only", cuda = "q is checked on the CPU only" }
local Q01 = function(shape) return T(shape, { lo = 0, hi = 1 }) end
local RD = {
  -- op, dtypes of the first row, variants of the first row, rows (args); later rows run on float32
  { "nansum", ALL, FN_M_OUT, { T{2, 3} }, { T{2, 3}, { 1 }, true }, { T{2, 3}, kw = { dtype = "float64" } }, { T{0, 3}, { 0 } },
    { T{2, 3}, { 0, 0 }, raises = "appears multiple times" } },
  { "nanmean", FLOATS, FN_M_OUT, { T{2, 3} }, { T{2, 3}, { 0 }, true }, { T{0, 3}, { 1 } },
    { T({2, 3}, { dtype = "int64" }), raises = "expected input to have floating point dtype" } },
  { "count_nonzero", ALL, FN_M, { T{2, 3} }, { T{2, 3}, 1 }, { T{2, 3, 2}, { 0, 2 } }, { T{} } },
  { "aminmax", ALL, FN_M_OUT, { T{2, 3} }, { T{2, 3}, kw = { dim = 1, keepdim = true } }, { T{0, 3}, kw = { dim = 1 } },
    { T{0, 3}, raises = "cannot compute aminmax over an empty dimension" }, { T{0, 3}, kw = { dim = 0 }, raises = "non-zero size" } },
  { "var_mean", FLOATS, nil, { T{2, 3} }, { T{2, 3}, { 1 } }, { T{2, 3}, { 0 }, kw = { correction = 0, keepdim = true } },
    { T{2, 3}, false }, { T({2, 3}, { dtype = "int32" }), raises = "var_mean only support floating point" } },
  { "std_mean", FLOATS, nil, { T{2, 3} }, { T{2, 3}, { 1 }, false, true }, { T{2, 3}, kw = { correction = 2 } },
    { T({2, 3}, { dtype = "int32" }), raises = "std_mean only support floating point" } },
  { "diff", ALL, FN_M_OUT, { T{2, 4} }, { T{2, 4}, 2, 0 }, { T{2, 4}, 1, 1, T{2, 1}, T{2, 2} }, { T{3}, 5 },
    { T{}, raises = "at least one-dimensional" }, { T{3}, -1, raises = "order must be non-negative" },
    { T{2, 3}, 1, 1, T{3}, raises = "same dimension as input" }, { T{3}, 0, 0, T{1}, T{2} } },
  { "trace", NUM, FN_M, { T{3, 4} }, { T{0, 2} }, { T{3}, raises = "expected a matrix" },
    { T({2, 2}, { dtype = "bool" }), raises = "not implemented for 'Bool'" } },
  { "dist", FLOATS, FN_M, { T{2, 3}, T{2, 3} }, { T{2, 3}, T{3}, 1 }, { T{2, 3}, T{2, 3}, 0 }, { T{2, 3}, T{2, 3}, math.huge } },
  { "renorm", FLOATS, ALL4, { T{3, 4}, 2, 0, 0.5 }, { T{2, 3, 2}, 1, 1, 1 }, { T{3}, 2, 0, 1, raises = "at least 2 dimensions" },
    { T{3, 4}, -1, 0, 1, raises = "non-positive-norm" }, { T{3, 4}, 2, 0, -1, raises = "maxnorm to be >= 0" } },
  { "trapezoid", NUM, nil, { T{2, 4} }, { T{2, 4}, kw = { dx = 0.5, dim = 0 } }, { T{2, 4}, T{4} }, { T{2, 4}, T{2, 4}, kw = { dim = 1 } },
    { T{2, 0} }, { T{2, 4}, T{3}, raises = "one `x` value for each sample point" },
    { T({3}, { dtype = "bool" }), raises = "bool is not supported" } },
  { "cumulative_trapezoid", NUM, nil, { T{2, 4} }, { T{2, 4}, kw = { dx = 2, dim = 0 } }, { T{2, 4}, T{4} }, { T{2, 0} },
    { T{2, 4}, T{3}, raises = "one `x` value for each sample point" } },
  { "logcumsumexp", FLOATS, FN_M_OUT, { T{2, 3}, 1 }, { T{2, 3}, 0 }, { T{}, 0 }, { T{0, 3}, 1 },
    { T({2, 3}, { dtype = "int64" }), 1, raises = "not implemented for 'Long'" }, { T{2, 3}, 2, raises = "dimension out of range" } },
  { "cummax", ALL, FN_M_OUT, { T{2, 3}, 1 }, { T{3, 2, layout = "transposed"}, 0 }, { T{}, 0 }, { T{0, 3}, 0 } },
  { "cummin", ALL, FN_M_OUT, { T{2, 3}, 1 }, { T{2, 3, layout = "sliced"}, -1 }, { T{}, 0 } },
  { "median", NOBOOL, FN_M, { T{2, 3} }, { T{2, 3}, 1 }, { T{2, 3}, 0, true }, { T{}, 0 }, { T{0, 3}, 1 },
    { T{0, 3}, 0, raises = "Expected reduction dim 0 to have non-zero size" }, { T({3}, { dtype = "bool" }), 0, raises = "Bool" } },
  { "nanmedian", NOBOOL, FN_M, { T{2, 3} }, { T{2, 3}, 1 }, { T{3, 2, layout = "transposed"}, 0, true },
    { T{0, 3}, 0, raises = "non-zero size" } },
  { "kthvalue", NOBOOL, FN_M_OUT, { T{2, 3}, 2 }, { T{2, 3}, 1, 0, true }, { T{}, 1 },
    { T{2, 3}, 4, raises = "selected number k out of range for dimension 1" }, { T{2, 3}, 0, raises = "out of range" } },
  { "mode", ALL, FN_M_OUT, { T{2, 3} }, { T{2, 3}, 0, true }, { T{}, 0 }, { T{0, 3}, 0, raises = "non-zero size" } },
  { "quantile", { "float32", "float64" }, FN_M_OUT, { T{2, 3}, Q01{2} }, { T{2, 3}, 0.25, 1, true },
    { T{2, 3}, Q01{}, 0, kw = { interpolation = "nearest" } }, { T{2, 3}, 0.5, kw = { interpolation = "midpoint" } },
    { T{2, 3}, 1.5, raises = "q must be in the range [0, 1] but got 1.5" }, { T{0}, 0.5, raises = "input tensor must be non-empty" },
    { T{2, 3}, 0.5, kw = { interpolation = "foo" }, raises = "interpolation must be one of" },
    { T{2, 3}, T({2}, { values = { 0.5, 2 } }), raises = "q values must be in the range [0, 1]", skip = Q_CPU_ONLY,
      pending = Q_PENDING },
    { T({2, 3}, { dtype = "int64" }), 0.5, raises = "either float or double dtype" } },
  { "nanquantile", { "float32", "float64" }, FN_M_OUT, { T{2, 3}, Q01{3} }, { T{2, 3}, 0.75, 0, false, kw = { interpolation = "lower" } },
    { T{2, 3}, Q01{1}, 1, true, kw = { interpolation = "higher" } }, { T{2, 3}, T{1, 2}, raises = "q must be a scalar or 1D tensor" } },
}
local RD_OUTS = { aminmax = { "min", "max" }, cummax = VI, cummin = VI, median = VI, nanmedian = VI, kthvalue = VI, mode = VI }
-- median/nanmedian over everything have no out= (only their dim overloads)
local RD_NO_OUT = { median = 1, nanmedian = 1 }
for _, r in ipairs(RD) do
  for i = 4, #r do
    local a = r[i]
    local variants = i == 4 and r[3] or nil
    if RD_NO_OUT[r[1]] and i == 5 then variants = FN_M_OUT end
    row { op = r[1], args = a, kw = a.kw, dtypes = (i == 4 and not a.raises) and r[2] or F32, variants = variants,
          outs = RD_OUTS[r[1]], raises = a.raises, skip = a.skip,
          pending = a.pending }
  end
end
-- values that only the CPU sees: NaN rules and the tie order of the indices
row { op = "cummax", args = { T({6}, { values = { 1, 3, 3, 0 / 0, 2, 0 / 0 } }), 0 }, dtypes = { "float32", "float64" }, variants = FN_M_OUT, outs = VI }
row { op = "median", args = { T({2, 3}, { values = { 1, 0 / 0, 2, 3, 3, 3 } }), 1 }, dtypes = F32, variants = FN_M_OUT, outs = VI }
row { op = "nanmedian", args = { T({5}, { values = { 0 / 0, 1, 0 / 0, 2, 3 } }), 0 }, dtypes = F32, variants = FN_M_OUT, outs = VI }
row { op = "mode", args = { T({6}, { values = { 1, 2, 2, 3, 3, 1 } }), 0 }, dtypes = NUM, variants = FN_M_OUT, outs = VI }
row { op = "quantile", args = { T({4}, { values = { 1, 0 / 0, 2, 3 } }), 0.5 }, dtypes = F32 }
row { op = "nanquantile", args = { T({4}, { values = { 1, 0 / 0, 2, 3 } }), 0.5 }, dtypes = F32 }
row { op = "logcumsumexp", args = { T({4}, { values = { -1000, 0, -math.huge, math.huge } }), 0 }, dtypes = FLOATS }
-- counting: unique and bincount have value-dependent shapes (Meta refuses them)
local VALUES = { meta = "the result's shape depends on the values" }
local SMALL = function(shape) return T(shape, { lo = 0, hi = 3 }) end
for _, a in ipairs {
  { "_unique2", SMALL{2, 3}, dtypes = ALL }, { "_unique2", SMALL{2, 3}, true, true, true }, { "_unique2", SMALL{}, false, false, true },
  { "_unique2", T{0}, true, true, true }, { "_unique2", T({5}, { values = { 0 / 0, 1, 0 / 0, 1, 2 } }), true, true, true },
  { "unique_dim", SMALL{4, 2}, 0, dtypes = ALL }, { "unique_dim", SMALL{2, 4}, 1, true, true, true },
  { "unique_dim", T{0, 3}, 0, true, true, true }, { "unique_dim", T{}, 0, raises = "tensor has no dimensions" },
  { "unique_dim", T{2, 0}, 0, raises = "There are 0 sized dimensions" },
  { "unique_consecutive", SMALL{2, 3}, dtypes = ALL }, { "unique_consecutive", SMALL{6}, true, true },
  { "unique_consecutive", SMALL{4, 2}, true, true, 0 },
  { "bincount", I({6}, 5), dtypes = { "int64" }, variants = FN_M }, { "bincount", T({5}, { dtype = "uint8", lo = 0, hi = 4 }), T{5}, 7 },
  { "bincount", T({4}, { dtype = "int32", lo = 0, hi = 4 }), T({4}, { dtype = "float64" }) },
  { "bincount", T({0}, { dtype = "int64" }), kw = { minlength = 3 } },
  { "bincount", T({2}, { dtype = "int64", values = { -1, 2 } }), raises = "non-negative integral inputs" },
  { "bincount", T({2, 2}, { dtype = "int64", lo = 0, hi = 2 }), raises = "non-negative integral inputs" },
  { "bincount", T({2}, { dtype = "int64", lo = 0, hi = 2 }), T{3}, raises = "same length as input" },
  { "bincount", T({2}, { dtype = "int64", lo = 0, hi = 2 }), kw = { minlength = -1 }, raises = "minlength should be >= 0" },
  { "bincount", T{3}, raises = "not implemented for 'Float'" },
} do
  row { op = a[1], args = { table.unpack(a, 2) }, kw = a.kw, dtypes = a.dtypes or (not a.raises and { "float32" } or nil),
        variants = a.variants, raises = a.raises, skip = VALUES }
end
row { op = "histc", args = { T{2, 3}, 4, -1, 1 }, dtypes = FLOATS, variants = FN_M_OUT }
row { op = "histc", args = { T{5} }, dtypes = F32, variants = FN_M }
row { op = "histc", args = { T({4}, { values = { 1, 2, 0 / 0, 2 } }), 3, 0, 2 }, dtypes = F32 }
row { op = "histc", args = { T({2}, { values = { 2, 2 } }), 2 }, dtypes = F32 }
row { op = "histc", args = { T({2}, { values = { 1, 0 / 0 } }), 2 }, dtypes = F32, raises = "is not finite", skip = { meta = "the error depends on values" } }
row { op = "histc", args = { T{3}, 0 }, dtypes = F32, raises = "bins must be > 0" }
row { op = "histc", args = { T{3}, 2, 3, 1 }, dtypes = F32, raises = "max must be larger than min" }
row { op = "histc", args = { T({3}, { dtype = "int64" }), 2 }, raises = "not implemented for 'Long'" }
row { op = "histogram", args = { T{2, 3}, 4 }, kw = { range = { -1, 1 } }, dtypes = FLOATS, variants = FN_M_OUT, outs = { "hist", "bin_edges" } }
row { op = "histogram", args = { T{6}, 3 }, kw = { weight = T{6}, density = true }, dtypes = F32, variants = FN_M_OUT, outs = { "hist", "bin_edges" } }
row { op = "histogram", args = { T{6}, T({4}, { values = { -1, 0, 0.5, 2 } }) }, kw = { weight = T{6} }, dtypes = { "float32", "float64" },
      variants = FN_M_OUT, outs = { "hist", "bin_edges" } }
row { op = "histogram", args = { T({3}, { values = { 2, 2, 2 } }), 2 }, dtypes = F32 }
row { op = "histogram", args = { T{3}, 0 }, dtypes = F32, raises = "bins must be > 0" }
row { op = "histogram", args = { T{3}, 2 }, kw = { range = { 3, 1 } }, dtypes = F32, raises = "min should not exceed max" }
row { op = "histogram", args = { T{3}, 2 }, kw = { weight = T{2} }, dtypes = F32, raises = "same shape as the input" }
row { op = "histogram", args = { T{3}, T({3}, { dtype = "float64" }) }, dtypes = F32, raises = "should have the same dtype" }
row { op = "histogram", args = { T({3}, { dtype = "int32" }), 2 }, raises = "not implemented for 'Int'" }
-- scatter_reduce: every reduction, with and without self
for _, red in ipairs { "sum", "prod", "mean", "amax", "amin" } do
  row { op = "scatter_reduce", args = { T{3, 4}, 0, I({2, 4}, 3), T{2, 4}, red }, dtypes = NUM, variants = ALL4 }
  row { op = "scatter_reduce", args = { T{3, 4}, 1, I({3, 2}, 4), T{3, 3}, red }, kw = { include_self = false }, dtypes = F32 }
end
row { op = "scatter_reduce", args = { T{3, 4}, 0, I({2, 4}, 3), T{2, 4}, "sum" }, dtypes = { "bool" }, variants = FN_M }
row { op = "scatter_reduce", args = { T{3, 4}, 0, I({2, 4}, 3), T{2, 4}, "max" }, dtypes = F32, raises = "reduce argument must be either" }
row { op = "scatter_reduce", args = { T{3, 4}, 0, I({2, 5}, 3), T{2, 4}, "sum" }, dtypes = F32, raises = "to be smaller than self" }
row { op = "scatter_reduce", args = { T{3, 4}, 0, T({1, 4}, { dtype = "int64", values = { 0, 3, 1, 2 } }), T{2, 4}, "amax" }, dtypes = F32,
      raises = "index 3 is out of bounds", skip = { meta = "the error depends on values" } }
-- segment_reduce: lengths or offsets, along axis, with initial; its shape comes from theirs (Meta has it)
for _, red in ipairs { "sum", "mean", "max", "min", "prod" } do
  row { op = "segment_reduce", args = { T{6, 2}, red }, kw = { lengths = T({3}, { dtype = "int64", values = { 2, 1, 3 } }) }, dtypes = FLOATS }
  row { op = "segment_reduce", args = { T{6}, red }, kw = { lengths = T({4}, { dtype = "int64", values = { 2, 0, 3, 1 } }), initial = 1.5 },
        dtypes = F32 }
end
row { op = "segment_reduce", args = { T{2, 5}, "sum" }, kw = { offsets = T({2, 3}, { dtype = "int64", values = { 0, 2, 5, 1, 1, 4 } }), axis = 1 },
      dtypes = F32 }
row { op = "segment_reduce", args = { T{5}, "max" }, kw = { lengths = T({2}, { dtype = "int32", values = { 1, 2 } }), unsafe = true }, dtypes = F32 }
row { op = "segment_reduce", args = { T{6}, "foo" }, kw = { lengths = T({1}, { dtype = "int64", values = { 6 } }) }, dtypes = F32,
      raises = "unsupported reduction given" }
row { op = "segment_reduce", args = { T{6}, "sum" }, dtypes = F32, raises = "Either lengths or offsets must be defined" }
row { op = "segment_reduce", args = { T{6}, "sum" }, kw = { lengths = T({2}, { dtype = "int64", values = { 2, 2 } }) }, dtypes = F32,
      raises = "to sum to data.size", skip = { meta = "the error depends on values" } }
row { op = "segment_reduce", args = { T({6}, { dtype = "int64" }), "sum" }, kw = { lengths = T({1}, { dtype = "int64", values = { 6 } }) },
      raises = "not implemented for 'Long'" }
-- }====

-- {==== pointwise: the math ops and special.* of issue 13 ====
do
  local POS = T({2, 3}, { lo = 0.2, hi = 3 })
  local UNIT = T({2, 3}, { lo = -0.9, hi = 0.9 })
  local PROB = T({2, 3}, { lo = 0.05, hi = 0.95 })
  local DEGREES = T({2, 3}, { values = { 0, 1, 2, 3, 5, 9 } })
  -- binary ops: name, variants, second argument, dtypes
  for _, b in ipairs {
    { "logaddexp", FN_M_OUT }, { "logaddexp2", FN_M_OUT }, { "xlogy", ALL4, POS }, { "special_xlog1py", FN_OUT, POS },
    { "copysign", ALL4 }, { "nextafter", ALL4 }, { "fmax", FN_M_OUT }, { "fmin", FN_M_OUT },
    { "igamma", ALL4, POS, POS }, { "igammac", ALL4, POS, POS }, { "ldexp", ALL4, T({2, 3}, { dtype = "int32", lo = -3, hi = 3 }) },
    { "float_power", FN_M_OUT, POS, POS }, { "special_zeta", FN_OUT, POS, T({2, 3}, { lo = 1.5, hi = 4 }) },
    { "special_gammainc", FN_OUT, POS, POS }, { "special_gammaincc", FN_OUT, POS, POS }, { "special_xlogy", FN_OUT, POS },
  } do
    local first = b[4] and T({2, 3}, { lo = 1.5, hi = 4 }) or T{2, 3}
    row { op = b[1], args = { first, b[3] or T{2, 3} }, dtypes = ALL, variants = b[2] }
    row { op = b[1], args = { T{3, 2, layout = "transposed"}, b[3] and T({2}, { lo = 0.5, hi = 2 }) or T{2} }, dtypes = F32 }
  end
  for _, p in ipairs { "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                       "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                       "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p" } do
    row { op = "special_" .. p, args = { UNIT, DEGREES }, dtypes = ALL, variants = FN_OUT }
    row { op = "special_" .. p, args = { 0.5, DEGREES }, dtypes = { "float64" } }
    row { op = "special_" .. p, args = { UNIT, 3 }, dtypes = { "float64" }, variants = FN_OUT }
    -- degree edges: (-1, 0) is degree 0; NaN, inf and past 2^63 are negative degrees
    row { op = "special_" .. p, args = { UNIT, T({2, 3}, { values = { -0.5, -0.99, -1, 0 / 0, 1 / 0, 1e19 } }) }, dtypes = { "float64" } }
  end
  row { op = "heaviside", args = { T({2, 3}, { values = { -1, 0, 2, 0, 3, -4 } }), T{2, 3} }, dtypes = ALL, variants = ALL4 }
  row { op = "heaviside", args = { T{2, 3}, T({2, 3}, { dtype = "float64" }) }, dtypes = F32, raises = "different dtypes" }
  for _, op in ipairs { "gcd", "lcm" } do
    row { op = op, args = { T({2, 3}, { lo = -20, hi = 20 }), T({2, 3}, { lo = -20, hi = 20 }) }, dtypes = INTS, variants = ALL4 }
    row { op = op, args = { T{2, 3}, T{2, 3} }, dtypes = F32, raises = op .. "_cpu\" not implemented for 'Float'" }
  end
  row { op = "rsub", args = { T{2, 3}, T{2, 3} }, kw = { alpha = 2 }, dtypes = NUM }
  row { op = "rsub", args = { T{2, 3}, 1.5 }, dtypes = FLOATS }
  row { op = "xlogy", args = { 2, POS }, dtypes = FLOATS, variants = FN_OUT }
  row { op = "xlogy", args = { POS, 3 }, dtypes = FLOATS, variants = ALL4 }
  row { op = "special_xlog1py", args = { 2, POS }, dtypes = FLOATS, variants = FN_OUT }
  row { op = "special_xlog1py", args = { POS, 3 }, dtypes = FLOATS, variants = FN_OUT }
  row { op = "special_zeta", args = { 2, POS }, dtypes = { "float32", "float64" }, variants = FN_OUT }
  row { op = "special_zeta", args = { T({2, 3}, { lo = 1.5, hi = 4 }), 2 }, dtypes = { "float32", "float64" }, variants = FN_OUT }
  row { op = "special_xlogy", args = { 2, POS }, dtypes = F32, variants = FN_OUT }
  row { op = "special_xlogy", args = { POS, 3 }, dtypes = F32, variants = FN_OUT }
  row { op = "copysign", args = { T{2, 3}, -1 }, dtypes = ALL, variants = ALL4 }
  row { op = "float_power", args = { POS, 2.5 }, dtypes = ALL, variants = FN_M_OUT }
  row { op = "float_power", args = { 2, T{2, 3} }, dtypes = ALL, variants = FN_OUT }
  row { op = "float_power", args = { POS, 2 }, dtypes = { "float64" }, variants = { "inplace" } }
  row { op = "float_power", args = { POS, POS }, dtypes = { "float64" }, variants = { "inplace" } }
  row { op = "float_power", args = { POS, 2 }, dtypes = F32, variants = { "inplace" }, raises = "float_power_ has dtype Float" }
  -- unary ops: name, variants, input, extra leading / trailing arguments
  for _, u in ipairs {
    { "erfinv", ALL4, UNIT }, { "lgamma", ALL4, POS }, { "digamma", ALL4, POS }, { "i0", ALL4 }, { "sinc", ALL4 },
    { "logit", ALL4, PROB }, { "deg2rad", ALL4 }, { "rad2deg", ALL4 }, { "sgn", ALL4 }, { "signbit", FN_M_OUT },
    { "isposinf", FN_M_OUT }, { "isneginf", FN_M_OUT }, { "isreal", FN_M }, { "positive", FN_M },
    { "special_ndtr", FN_OUT }, { "special_ndtri", FN_OUT, PROB }, { "special_log_ndtr", FN_OUT }, { "special_erfcx", FN_OUT },
    { "special_entr", FN_OUT }, { "special_i0e", FN_OUT }, { "special_i1", FN_OUT }, { "special_i1e", FN_OUT },
    { "special_bessel_j0", FN_OUT }, { "special_bessel_j1", FN_OUT }, { "special_bessel_y0", FN_OUT, POS },
    { "special_bessel_y1", FN_OUT, POS }, { "special_modified_bessel_i0", FN_OUT }, { "special_modified_bessel_i1", FN_OUT },
    { "special_spherical_bessel_j0", FN_OUT }, { "special_airy_ai", FN_OUT }, { "special_modified_bessel_k0", FN_OUT, POS },
    { "special_modified_bessel_k1", FN_OUT, POS }, { "special_scaled_modified_bessel_k0", FN_OUT, POS },
    { "special_scaled_modified_bessel_k1", FN_OUT, POS }, { "special_erf", FN_OUT }, { "special_erfc", FN_OUT },
    { "special_erfinv", FN_OUT, UNIT }, { "special_expit", FN_OUT }, { "special_exp2", FN_OUT }, { "special_expm1", FN_OUT },
    { "special_log1p", FN_OUT, POS }, { "special_logit", FN_OUT, PROB }, { "special_gammaln", FN_OUT, POS },
    { "special_digamma", FN_OUT, POS }, { "special_psi", FN_OUT, POS }, { "special_i0", FN_OUT }, { "special_sinc", FN_OUT },
  } do
    row { op = u[1], args = { u[3] or T{2, 3} }, dtypes = ALL, variants = u[2] }
    for _, x in ipairs(UNARY_SHAPES) do row { op = u[1], args = { x }, dtypes = F32 } end
  end
  row { op = "logit", args = { T{2, 3}, 0.25 }, dtypes = FLOATS, variants = ALL4 }
  row { op = "positive", args = { T{2, 3} }, dtypes = { "bool" }, raises = "on a bool tensor is not supported" }
  row { op = "polygamma", args = { 1, POS }, dtypes = ALL, variants = FN_OUT }
  row { op = "polygamma", args = { POS, 2 }, dtypes = FLOATS, variants = { "inplace" } }
  row { op = "polygamma", args = { -1, POS }, dtypes = F32, raises = "does not support negative n" }
  row { op = "special_polygamma", args = { 3, POS }, dtypes = F32, variants = FN_OUT }
  row { op = "mvlgamma", args = { T({2, 3}, { lo = 2, hi = 4 }), 3 }, dtypes = ALL, variants = ALL4 }
  row { op = "mvlgamma", args = { T{2, 3}, 0 }, dtypes = F32, raises = "p has to be greater than or equal to 1" }
  row { op = "special_multigammaln", args = { T({2, 3}, { lo = 2, hi = 4 }), 2 }, dtypes = F32, variants = FN_OUT }
  row { op = "frexp", args = { T{2, 3} }, dtypes = ALL, variants = FN_M_OUT, outs = { "mantissa", "exponent" } }
  row { op = "frexp", args = { T{0, 3} }, dtypes = F32 }
  row { op = "special_round", args = { T{2, 3} }, kw = { decimals = 1 }, dtypes = FLOATS, variants = FN_OUT }
  row { op = "special_softmax", args = { T{2, 3}, 1 }, dtypes = FLOATS }
  row { op = "special_log_softmax", args = { T{2, 3}, 1 }, dtypes = FLOATS }
  row { op = "special_logsumexp", args = { T{2, 3}, { 1 } }, dtypes = FLOATS, variants = FN_OUT }
end
-- }====

-- {==== Error cases that cut across ops ====
-- a bad dtype name, an unknown option, a wrong argument type
row { op = "sum", args = { T{2, 3} }, kw = { dtype = "floaty" }, dtypes = F32, raises = "unknown dtype" }
row { op = "add", args = { T{2, 3}, T{2, 3} }, kw = { alpha = "x" }, dtypes = F32, raises = "expected a number" }
row { op = "add", args = { T{2, 3}, T{2, 3} }, kw = { beta = 1 }, dtypes = F32, raises = "unexpected option" }
row { op = "exp", args = { "x" }, dtypes = F32, raises = "expected a tensor" }
row { op = "mm", args = { T{2, 3}, T({3, 4}, { device = "other" }) }, dtypes = F32, raises = "same device" }
row { op = "where", args = { Mk{2, 3}, T{2, 3}, T({2, 3}, { device = "other" }) }, dtypes = F32, raises = "same device" }
row { op = "gather", args = { T{2, 3}, 1, T({2, 2}, { dtype = "int64", lo = 0, hi = 2, device = "other" }) }, dtypes = F32, raises = "same device" }
-- }====

-- {==== sk.linalg (LAPACK) ====
-- Inputs on the 1/8 grid of [-2, 2) are almost surely regular; SPD3 is positive-definite, SING
-- singular. The factorizations' values are the CPU kernel's on every target (the fallback, the
-- runtime re-declaration), so sign conventions of Q, U, V agree.
local SPD3 = { 4, 1, 0, 1, 3, 1, 0, 1, 2 }
local SPD3x2 = { 4, 1, 0, 1, 3, 1, 0, 1, 2, 2, 0, 0, 0, 2, 0, 0, 0, 2 }
local SING = { 1, 2, 2, 4 }
local FL = { "float32", "float64" }
local LINALG = {
  { "linalg_inv", FN_OUT, { T{3, 3} }, { T{2, 3, 3, layout = "transposed"} }, { T{0, 0} }, { T{2, 3}, raises = "square matrices" },
    { T({2, 2}, { values = SING }), raises = "input matrix is singular", skip = { meta = "value-dependent error" } } },
  { "linalg_inv_ex", FN_OUT, { T{3, 3} }, { T{2, 3, 3, layout = "transposed"} }, { T({2, 2}, { values = SING }) },
    outs = { "inverse", "info" } },
  { "inverse", FN_M_OUT, { T{3, 3} }, { T{2, 1, 3, 3} } },
  { "linalg_cholesky", FN_OUT, { T({3, 3}, { values = SPD3 }) }, { T({2, 3, 3}, { values = SPD3x2 }), kw = { upper = true } },
    { T({2, 2}, { values = SING }), raises = "not positive-definite", skip = { meta = "value-dependent error" } } },
  { "linalg_cholesky_ex", FN_OUT, { T({3, 3}, { values = SPD3 }) }, { T({2, 3, 3}, { values = SPD3x2 }), kw = { upper = true } },
    { T{3, 3} }, outs = { "L", "info" } },
  { "cholesky", FN_M_OUT, { T({3, 3}, { values = SPD3 }) }, { T({3, 3}, { values = SPD3 }), true } },
  { "linalg_solve", FN_OUT, { T{3, 3}, T{3, 2} }, { T{2, 1, 3, 3}, T{4, 3, 2} }, { T{3, 3}, T{3} },
    { T{3, 3, layout = "transposed"}, T{2, 3}, kw = { left = false } }, { T{3, 3}, T{2, 2}, raises = "Incompatible shapes" } },
  { "linalg_solve_ex", FN_OUT, { T{3, 3}, T{3, 2} }, { T{2, 3, 3}, T{2, 3} }, outs = { "result", "info" } },
  { "linalg_solve_triangular", FN_OUT, { T{3, 3}, T{3, 2}, kw = { upper = true } },
    { T{2, 3, 3, layout = "transposed"}, T{2, 3}, kw = { upper = false, left = false, unitriangular = true } },
    { T{3, 3}, T({3, 2}, { dtype = "float64" }), kw = { upper = true }, raises = "same dtype" } },
  { "linalg_det", FN_OUT, { T{3, 3} }, { T{2, 4, 4, layout = "transposed"} }, { T{0, 0} }, { T{2, 3}, raises = "square matrices" } },
  { "det", FN_M, { T{3, 3} } },
  { "linalg_slogdet", FN_OUT, { T{3, 3} }, { T{2, 3, 3} }, outs = { "sign", "logabsdet" } },
  { "slogdet", FN_M_OUT, { T{3, 3} }, outs = { "sign", "logabsdet" } },
  { "logdet", FN_M, { T({3, 3}, { values = SPD3 }) }, { T{2, 3, 3} } },
  { "linalg_lu_factor", FN_OUT, { T{3, 3} }, { T{2, 3, 5} }, { T{4, 2, layout = "transposed"}, kw = { pivot = true } },
    outs = { "LU", "pivots" } },
  { "linalg_lu_factor_ex", FN_OUT, { T{3, 3} }, { T{2, 5, 3} }, { T({2, 2}, { values = SING }) }, outs = { "LU", "pivots", "info" } },
  { "linalg_lu", FN_OUT, { T{3, 3} }, { T{2, 3, 5} }, { T{5, 3, layout = "transposed"} }, outs = { "P", "L", "U" } },
  { "linalg_qr", FN_OUT, { T{4, 3} }, { T{2, 3, 4}, kw = { mode = "complete" } }, { T{4, 3, layout = "transposed"}, kw = { mode = "r" } },
    { T{3, 3}, kw = { mode = "x" }, raises = "unrecognized mode" }, outs = { "Q", "R" } },
  { "qr", FN_M_OUT, { T{4, 3} }, { T{4, 3}, false }, outs = { "Q", "R" } },
  { "linalg_svd", FN_OUT, { T{4, 3} }, { T{2, 3, 4}, false }, { T{3, 3, layout = "transposed"} }, outs = { "U", "S", "Vh" } },
  { "_linalg_svd", FN_OUT, { T{4, 3} }, { T{2, 3, 4}, true, false }, outs = { "U", "S", "Vh" } },
  { "linalg_svdvals", FN_OUT, { T{4, 3} }, { T{2, 3, 4} } },
  { "svd", FN_M_OUT, { T{4, 3} }, { T{3, 4}, false, false }, outs = { "U", "S", "V" } },
  { "linalg_eigh", FN_OUT, { T({3, 3}, { values = SPD3 }) }, { T({2, 3, 3}, { values = SPD3x2 }), "U" },
    { T{3, 3}, "X", raises = "UPLO" }, outs = { "eigvals", "eigvecs" } },
  { "_linalg_eigh", FN_OUT, { T({3, 3}, { values = SPD3 }) }, { T({3, 3}, { values = SPD3 }), "L", false }, outs = { "eigenvalues", "eigenvectors" } },
  { "linalg_eigvalsh", FN_OUT, { T({3, 3}, { values = SPD3 }) } },
  { "linalg_eig", FN_OUT, { T({3, 3}, { values = SPD3 }) }, { T({2, 3, 3}, { values = SPD3x2 }) }, outs = { "eigenvalues", "eigenvectors" } },
  { "linalg_eigvals", FN_OUT, { T({3, 3}, { values = SPD3 }) },
    { T({2, 2}, { values = { 0, -1, 1, 0 } }), raises = "complex eigenvalues", skip = { meta = "value-dependent error" } } },
  { "linalg_lstsq", FN_OUT, { T{5, 3}, T{5, 2} }, { T{2, 1, 5, 3}, T{1, 3, 5, 2}, kw = { driver = "gelsd" } },
    { T{3, 5, layout = "transposed"}, T{3}, kw = { driver = "gels" } }, { T{2, 4, 3}, T{2, 4}, kw = { driver = "gelss", rcond = 1e-6 } },
    { T{2, 5, 3, layout = "transposed"}, T{2, 5, 1}, kw = { driver = "gelsy" } },
    { T{5, 3}, T{4, 2}, raises = "input.size(-2) should match other.size(-2)" },
    { T{5, 3}, T{5, 2}, kw = { driver = "qr" }, raises = "parameter `driver` should be one of" },
    outs = { "solution", "residuals", "rank", "singular_values" } },
  { "linalg_householder_product", FN_OUT, { T{4, 3}, T{2} }, { T{2, 5, 3, layout = "transposed"}, T{2, 3} }, { T{4, 0}, T{0} },
    { T{3, 4}, T{2}, raises = "input.shape[-2] must be greater than or equal to input.shape[-1]" },
    { T{2, 4, 3}, T{3, 2}, raises = "Expected batch dimensions of tau" },
    grad64 = true }, -- its backward (through the reflectors' inverses) amplifies float32 rounding: float64 cases
  { "linalg_matrix_exp", nil, { T{3, 3} }, { T{2, 3, 3, layout = "transposed"} }, { T{0, 0} }, { T{1, 1} },
    { T{2, 3}, raises = "square matrices" } },
  { "linalg_matrix_power", FN_OUT, { T{3, 3}, 3 }, { T{2, 3, 3}, 0 }, { T{3, 3}, -1 }, { T{2, 3}, 2, raises = "square matrices" } },
  { "linalg_multi_dot", FN_OUT, { L{ T{2, 3}, T{3, 4}, T{4, 2} } }, { L{ T{3}, T{3, 2}, T{2} } }, { L{ T{2, 3} }, raises = "at least 2 tensors" } },
  { "linalg_vecdot", FN_OUT, { T{2, 3}, T{3} }, { T{3, 2}, T{3, 2}, kw = { dim = 0 } } },
  { "linalg_vector_norm", FN_OUT, { T{2, 3} }, { T{2, 3}, 1, { 1 }, true }, { T{2, 3}, math.huge }, { T{2, 3}, 2, kw = { dtype = "float64" } },
    { T{}, 0 }, { T{}, -1, { 0 }, true } },
  { "linalg_pinv", FN_OUT, { T{4, 3} }, { T{2, 3, 4}, kw = { rtol = 0.1 } }, { T{4, 3}, 0.1 }, { T{2, 4, 3}, T{2} },
    { T{2, 3, 3}, kw = { hermitian = true } } },
  { "pinverse", nil, { T{4, 3} }, { T{3, 4}, 0.1 } },
  { "linalg_matrix_rank", FN_OUT, { T{4, 3} }, { T{2, 3, 4}, kw = { atol = 0.5 } }, { T{4, 3}, 0.5 }, { T{2, 4, 3}, T{2} } },
  { "cholesky_solve", FN_M_OUT, { T{3, 2}, T({3, 3}, { values = SPD3 }) }, { T{3, 2}, T({3, 3}, { values = SPD3 }), true } },
  { "cholesky_inverse", FN_M_OUT, { T({3, 3}, { values = SPD3 }) }, { T({3, 3}, { values = SPD3 }), true } },
  { "triangular_solve", FN_M_OUT, { T{3, 2}, T{3, 3} }, { T{3, 2}, T{3, 3}, false, true, true }, outs = { "X", "M" } },
  { "linalg_tensorinv", FN_OUT, { T{4, 2, 2}, 1 }, { T{2, 3, 6} } },
  { "linalg_tensorsolve", FN_OUT, { T{6, 2, 3}, T{6} }, { T{2, 3, 6}, T{6}, { 0, 1 } } },
  { "linalg_matrix_norm", FN_OUT, { T{3, 3}, 1 }, { T{2, 3, 4}, -2 }, { T{3, 4}, "nuc" }, { T{2, 3, 4}, math.huge, { 0, 2 }, true },
    { T{3, 3}, 3, raises = "not supported" } },
  { "linalg_norm", FN_OUT, { T{3, 3} }, { T{3, 4}, 1 }, { T{4}, math.huge }, { T{2, 3, 4}, "fro", { 1, 2 } }, { T{2, 3}, 2, { 1 }, true } },
  { "linalg_cond", FN_OUT, { T{3, 3} }, { T{2, 3, 3}, 1 }, { T{3, 3}, "fro" }, { T{3, 3}, 3, raises = "invalid norm type" } },
}
for _, l in ipairs(LINALG) do
  for i = 3, #l do
    local c = l[i]
    local args = {}
    for k, v in ipairs(c) do args[k] = v end
    row { op = l[1], args = args, kw = c.kw, dtypes = (i == 3 or l.grad64) and FL or F32, variants = i == 3 and l[2] or nil,
          outs = l.outs, raises = c.raises, skip = c.skip }
  end
end
row { op = "linalg_inv", args = { T{2, 2} }, dtypes = { "int64" }, raises = "Expected a floating point or complex tensor as input. Got Long" }
row { op = "orgqr", args = { T{4, 3}, T{3} }, dtypes = FL, variants = FN_M_OUT }
row { op = "matrix_exp", args = { T{2, 3, 3} }, dtypes = FL, variants = FN_M }
row { op = "linalg_matrix_exp", args = { T{2, 2} }, dtypes = { "int64" }, raises = "matrix_exp: Expected a floating point or complex tensor as input. Got Long" }
row { op = "linalg_lstsq", args = { T{3, 2}, T{3} }, dtypes = { "int64" }, raises = "doesn't handle types other than float and double" }
row { op = "linalg_det", args = { T{2, 2} }, dtypes = { "float16" }, raises = "Low precision dtypes not supported" }
row { op = "_linalg_check_errors", args = { T({2}, { dtype = "int32", values = { 0, 0 } }), "linalg.inv" }, kw = { is_matrix = false }, dtypes = INT32 }
row { op = "linalg_lu_solve", args = { T({3, 3}, { values = SPD3 }), T({3}, { dtype = "int32", values = { 1, 2, 3 } }), T{3, 2} }, dtypes = FL,
      variants = FN_OUT }
row { op = "linalg_lu_solve", args = { T({3, 3}, { values = SPD3 }), T({3}, { dtype = "int32", values = { 3, 3, 3 } }), T{2, 3} },
      kw = { left = false, adjoint = true }, dtypes = F32 }
-- }====

-- {==== Ops not run by the suite ====
-- Every op of the dispatcher has a row above or a reason here.
M.exempt = {
}
-- }====

return M
