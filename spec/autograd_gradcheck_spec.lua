-- spec/autograd_gradcheck_spec.lua — every formula of derivatives.yaml against finite
-- differences (sk.autograd.gradcheck, float64), from one table. Each row runs on contiguous
-- inputs, on non-contiguous ones (the leaf stored transposed, the op given a permuted view)
-- and, where it broadcasts, on expanded ones (a size-1 leaf expanded); rows marked gg also
-- run gradgradcheck (double backward).
local h = require "spec.helper"
local sk = h.sk

-- inputs: shapes of float64 leaves; `pos` makes them positive (log, sqrt, pow), `unit` puts
-- them in (-0.9, 0.9) (asin, acos, atanh); `away` keeps them 0.2 or more from zero (abs,
-- relu, clamp, where comparisons). Extra non-tensor arguments are closed over by fn.
local I3 = sk.eye(3, { dtype = "float64" })
local D3 = sk.diag(sk.tensor({ 1, 2, 3 }, { dtype = "float64" })) -- distinct real eigenvalues for eig
local ROWS = {
  -- pointwise binary, with broadcasting
  { "add", function(a, b) return sk.add(a, b, { alpha = 2 }) end, { { 3, 4 }, { 4 } }, gg = true, bcast = true },
  { "sub", function(a, b) return sk.sub(a, b, { alpha = 3 }) end, { { 3, 4 }, { 3, 1 } }, gg = true, bcast = true },
  { "mul", function(a, b) return a * b end, { { 3, 4 }, { 4 } }, gg = true, bcast = true },
  { "div", function(a, b) return a / b end, { { 3, 4 }, { 3, 4 } }, away = true, gg = true, bcast = true },
  { "add.Scalar", function(a) return a + 2.5 end, { { 3, 4 } } },
  { "sub.Scalar", function(a) return a - 1.5 end, { { 3, 4 } } },
  { "mul.Scalar", function(a) return a * 3 end, { { 3, 4 } }, gg = true },
  { "div.Scalar", function(a) return a / 4 end, { { 3, 4 } } },
  { "pow.Tensor_Scalar", function(a) return a ^ 3 end, { { 3, 4 } }, gg = true },
  { "pow.Tensor_Scalar frac", function(a) return a ^ 2.5 end, { { 3, 4 } }, pos = true },
  { "pow.Tensor_Tensor", function(a, b) return a ^ b end, { { 3, 4 }, { 3, 4 } }, pos = true, gg = true },
  { "maximum", function(a, b) return sk.maximum(a, b) end, { { 3, 4 }, { 3, 4 } }, bcast = true },
  { "minimum", function(a, b) return sk.minimum(a, b) end, { { 3, 4 }, { 4 } } },
  { "atan2", function(a, b) return sk.atan2(a, b) end, { { 3, 4 }, { 3, 4 } }, away = true },
  { "hypot", function(a, b) return sk.hypot(a, b) end, { { 3, 4 }, { 3, 4 } }, away = true },
  { "where", function(a, b) return sk.where(a:gt(0), a, b) end, { { 3, 4 }, { 3, 4 } }, away = true, bcast = true },
  { "lerp", function(a, b) return sk.lerp(a, b, 0.3) end, { { 3, 4 }, { 3, 4 } } },
  { "addcmul", function(a, b, c) return sk.addcmul(a, b, c, { value = 0.5 }) end, { { 3, 4 }, { 3, 4 }, { 4 } } },
  { "addcdiv", function(a, b, c) return sk.addcdiv(a, b, c, { value = 0.5 }) end, { { 3, 4 }, { 3, 4 }, { 3, 4 } }, away = true },
  { "masked_fill", function(a) return a:masked_fill(a:gt(0), 0.5) end, { { 3, 4 } }, away = true },
  { "clamp", function(a) return a:clamp(-0.5, 0.5) end, { { 3, 4 } }, away = true },
  { "clamp_min", function(a) return sk.clamp_min(a, 0.1) end, { { 3, 4 } }, away = true },
  { "clamp.Tensor_bound", function(a, lo, hi) return a:clamp(lo - 1, hi + 1) end, { { 3, 4 }, { 4 }, { 3, 4 } }, away = true },
  { "remainder", function(a, b) return sk.remainder(a, b) end, { { 3, 4 }, { 3, 4 } }, pos = true, smooth = true },
  { "fmod", function(a, b) return sk.fmod(a, b) end, { { 3, 4 }, { 3, 4 } }, pos = true, smooth = true },
  { "lerp.Tensor", function(a, b, w) return sk.lerp(a, b, w) end, { { 3, 4 }, { 3, 4 }, { 4 } }, bcast = true },
  { "masked_fill.Tensor", function(a, v) return a:masked_fill(a:gt(0), v:sum()) end, { { 3, 4 }, { 2 } }, away = true },
  { "clamp_max", function(a) return sk.clamp_max(a, 0.1) end, { { 3, 4 } }, away = true },
  -- pointwise unary
  { "neg", function(a) return -a end, { { 3, 4 } }, gg = true },
  { "exp", function(a) return a:exp() end, { { 3, 4 } }, gg = true },
  { "exp2", function(a) return a:exp2() end, { { 3, 4 } } },
  { "expm1", function(a) return a:expm1() end, { { 3, 4 } } },
  { "log", function(a) return a:log() end, { { 3, 4 } }, pos = true, gg = true },
  { "log2", function(a) return a:log2() end, { { 3, 4 } }, pos = true },
  { "log10", function(a) return a:log10() end, { { 3, 4 } }, pos = true },
  { "log1p", function(a) return a:log1p() end, { { 3, 4 } }, pos = true },
  { "sqrt", function(a) return a:sqrt() end, { { 3, 4 } }, pos = true, gg = true },
  { "rsqrt", function(a) return a:rsqrt() end, { { 3, 4 } }, pos = true },
  { "reciprocal", function(a) return a:reciprocal() end, { { 3, 4 } }, away = true },
  { "square", function(a) return a:square() end, { { 3, 4 } }, gg = true },
  { "abs", function(a) return a:abs() end, { { 3, 4 } }, away = true },
  { "sin", function(a) return a:sin() end, { { 3, 4 } }, gg = true },
  { "cos", function(a) return a:cos() end, { { 3, 4 } }, gg = true },
  { "tan", function(a) return a:tan() end, { { 3, 4 } }, unit = true },
  { "asin", function(a) return a:asin() end, { { 3, 4 } }, unit = true },
  { "acos", function(a) return a:acos() end, { { 3, 4 } }, unit = true },
  { "atan", function(a) return a:atan() end, { { 3, 4 } } },
  { "sinh", function(a) return a:sinh() end, { { 3, 4 } } },
  { "cosh", function(a) return a:cosh() end, { { 3, 4 } } },
  { "tanh", function(a) return a:tanh() end, { { 3, 4 } }, gg = true },
  { "sigmoid", function(a) return a:sigmoid() end, { { 3, 4 } }, gg = true },
  { "erf", function(a) return a:erf() end, { { 3, 4 } } },
  { "erfc", function(a) return a:erfc() end, { { 3, 4 } } },
  { "asinh", function(a) return a:asinh() end, { { 3, 4 } } },
  { "acosh", function(a) return (a + 1.5):acosh() end, { { 3, 4 } }, pos = true },
  { "atanh", function(a) return a:atanh() end, { { 3, 4 } }, unit = true },
  { "nan_to_num", function(a) return sk.nan_to_num(a) end, { { 3, 4 } } },
  { "round.decimals", function(a) return a:round({ decimals = 1 }) end, { { 3, 4 } }, zero = true, coarse = true },
  { "pow.Scalar", function(a) return sk.pow(2.5, a) end, { { 3, 4 } } },
  { "div rounding_mode", function(a, b) return sk.div(a, b, { rounding_mode = "floor" }) + a / b end, { { 3, 4 }, { 3, 4 } }, pos = true, smooth = true },
  { "clamp_min.Tensor_bound", function(a, b) return sk.clamp_min(a, b) end, { { 3, 4 }, { 4 } }, away = true },
  { "clamp_max.Tensor_bound", function(a, b) return sk.clamp_max(a, b) end, { { 3, 4 }, { 3, 4 } }, away = true },
  { "relu", function(a) return a:relu() end, { { 3, 4 } }, away = true },
  { "gelu", function(a) return sk.gelu(a) end, { { 3, 4 } }, gg = true },
  { "gelu tanh", function(a) return sk.gelu(a, { approximate = "tanh" }) end, { { 3, 4 } }, gg = true },
  { "silu", function(a) return sk.silu(a) end, { { 3, 4 } }, gg = true },
  { "floor", function(a) return a:floor() end, { { 3, 4 } }, zero = true },
  { "frac", function(a) return a:frac() end, { { 3, 4 } }, away = true },
  { "clone", function(a) return a:clone() end, { { 3, 4 } } },
  -- reductions
  { "sum", function(a) return a:sum() end, { { 3, 4 } }, gg = true },
  { "sum.dim", function(a) return a:sum(1) end, { { 3, 4, 2 } }, gg = true },
  { "sum.dim keepdim", function(a) return a:sum({ 0, 2 }, true) end, { { 3, 4, 2 } } },
  { "mean", function(a) return a:mean() end, { { 3, 4 } } },
  { "mean.dim", function(a) return a:mean(-1) end, { { 3, 4 } }, gg = true },
  { "amax", function(a) return a:amax(1) end, { { 3, 4 } } },
  { "amin keepdim", function(a) return a:amin({ 0 }, true) end, { { 3, 4 } } },
  { "max.dim", function(a) return (a:max(1)) end, { { 3, 4 } } },
  { "min.dim keepdim", function(a) return (a:min(0, true)) end, { { 3, 4 } } },
  { "var", function(a) return a:var(1) end, { { 3, 4 } }, gg = true },
  { "std", function(a) return a:std() end, { { 3, 4 } } },
  { "logsumexp", function(a) return a:logsumexp(1) end, { { 3, 4 } }, gg = true },
  { "cumsum", function(a) return a:cumsum(1) end, { { 3, 4 } } },
  { "prod", function(a) return a:prod() end, { { 2, 3 } } },
  { "prod.dim", function(a) return a:prod(1) end, { { 3, 4 } }, gg = true }, -- its gradient goes through cumprod
  { "prod.dim with zeros", function(a) return (a * sk.tensor({ { 1, 0, 1 }, { 0, 0, 1 } }, { dtype = "float64" })):prod(1, true) end, { { 2, 3 } }, gg = true },
  { "cumprod", function(a) return a:cumprod(1) end, { { 3, 4 } }, gg = true },
  { "cumprod over dim 0", function(a) return a:cumprod(0) end, { { 3, 2 } }, gg = true },
  -- a zero first, in the middle, last, two zeros, none: each row of the mask is one case of the formula
  { "cumprod with zeros", function(a)
      local m = sk.tensor({ { 0, 1, 1, 1 }, { 1, 1, 0, 1 }, { 1, 1, 1, 0 }, { 1, 0, 1, 0 }, { 1, 1, 1, 1 } }, { dtype = "float64" })
      return (a * m):cumprod(1)
    end, { { 5, 4 } }, gg = true },
  { "max", function(a) return a:max() end, { { 3, 4 } } },
  { "min", function(a) return a:min() end, { { 3, 4 } } },
  { "norm", function(a) return a:norm() end, { { 3, 4 } }, gg = true },
  { "norm p=3 dim", function(a) return a:norm(3, 1) end, { { 3, 4 } }, away = true },
  { "norm p=1", function(a) return a:norm(1) end, { { 3, 4 } }, away = true },
  { "norm p=inf", function(a) return a:norm(math.huge, { 0 }, true) end, { { 3, 4 } } },
  { "sort values", function(a) return (a:sort(1)) end, { { 3, 4 } } },
  { "topk values", function(a) return (a:topk(2, 1)) end, { { 3, 4 } } },
  { "norm", function(a) return a:pow(2):sum():sqrt() end, { { 3, 4 } } },
  -- linear algebra
  { "mm", function(a, b) return a:mm(b) end, { { 3, 4 }, { 4, 2 } }, gg = true },
  { "bmm", function(a, b) return a:bmm(b) end, { { 2, 3, 4 }, { 2, 4, 2 } }, gg = true },
  { "matmul", function(a, b) return a:matmul(b) end, { { 2, 3, 4 }, { 4, 2 } }, gg = true },
  { "addmm", function(c, a, b) return sk.addmm(c, a, b, { beta = 0.5, alpha = 2 }) end, { { 2 }, { 3, 4 }, { 4, 2 } } },
  { "baddbmm", function(c, a, b) return sk.baddbmm(c, a, b, { beta = 0.5, alpha = 2 }) end, { { 2, 3, 2 }, { 2, 3, 4 }, { 2, 4, 2 } } },
  { "mv", function(a, v) return a:mv(v) end, { { 3, 4 }, { 4 } } },
  { "addmv", function(c, a, v) return sk.addmv(c, a, v, { alpha = 2 }) end, { { 3 }, { 3, 4 }, { 4 } } },
  { "dot", function(a, b) return a:dot(b) end, { { 4 }, { 4 } } },
  -- shapes and views
  { "t", function(a) return a:t() end, { { 3, 4 } } },
  { "transpose", function(a) return a:transpose(0, 2) end, { { 3, 4, 2 } } },
  { "permute", function(a) return a:permute({ 2, 0, 1 }) end, { { 3, 4, 2 } } },
  { "view", function(a) return a:contiguous():view({ 4, 3 }) end, { { 3, 4 } } },
  { "reshape", function(a) return a:reshape({ 2, 6 }) end, { { 3, 4 } } },
  { "expand", function(a) return a:expand({ 2, 3, 4 }) end, { { 3, 1 } } },
  { "unsqueeze", function(a) return a:unsqueeze(1) end, { { 3, 4 } } },
  { "squeeze", function(a) return a:squeeze() end, { { 3, 1, 4 } } },
  { "squeeze.dim", function(a) return a:squeeze(1) end, { { 3, 1, 4 } } },
  { "select", function(a) return a:select(1, 2) end, { { 3, 4 } } },
  { "slice", function(a) return a:slice(1, 1, 4, 2) end, { { 3, 5 } } },
  { "narrow", function(a) return a:narrow(0, 1, 2) end, { { 3, 4 } } },
  { "indexing", function(a) return a[{ 2, { 1, 3 } }] end, { { 3, 4 } } },
  { "flip", function(a) return a:flip({ 0, 1 }) end, { { 3, 4 } } },
  { "roll", function(a) return a:roll({ 1, -2 }, { 0, 1 }) end, { { 3, 4 } } },
  { "repeat", function(a) return a["repeat"](a, { 2, 1, 3 }) end, { { 3, 4 } } },
  { "tril", function(a) return a:tril(1) end, { { 3, 4 } } },
  { "triu", function(a) return a:triu(-1) end, { { 3, 4 } } },
  { "diag of a vector", function(a) return a:diag(1) end, { { 3 } } },
  { "diag of a matrix", function(a) return a:diag(-1) end, { { 3, 4 } } },
  { "cat", function(a, b) return sk.cat({ a, b }, 1) end, { { 2, 3 }, { 2, 2 } }, gg = true },
  { "stack", function(a, b) return sk.stack({ a, b }, 0) end, { { 2, 3 }, { 2, 3 } } },
  { "split", function(a) local p = a:split(2, 1); return p[1] * 2 + p[2]:sum() end, { { 3, 4 } } },
  { "split_with_sizes", function(a) local p = a:split({ 1, 3 }, 1); return p[2] end, { { 3, 4 } } },
  { "unbind", function(a) local p = a:unbind(0); return p[1] * p[2] end, { { 2, 3 } } },
  { "chunk", function(a) local p = a:chunk(2, 0); return p[2] end, { { 4, 3 } } },
  -- indexing
  { "index", function(a) return a[sk.tensor({ 0, 2, 0 })] end, { { 3, 4 } } },
  { "index by mask", function(a) return a[a:gt(0)] end, { { 3, 4 } }, away = true },
  { "index_put", function(a, v) return a:index_put({ sk.tensor({ 0, 2 }) }, v) end, { { 3, 4 }, { 4 } } },
  { "index_put accumulate", function(a, v) return a:index_put({ sk.tensor({ 0, 0 }) }, v, true) end, { { 3, 4 }, { 2, 4 } } },
  { "assignment t[i] = v", function(a, v) local c = a * 1; c[{ 1 }] = v; return c end, { { 3, 4 }, { 4 } } },
  { "masked_select", function(a) return a:masked_select(a:gt(0)) end, { { 3, 4 } }, away = true },
  { "index_select", function(a) return a:index_select(1, sk.tensor({ 2, 0, 2 })) end, { { 3, 4 } } },
  { "gather", function(a) return a:gather(1, sk.tensor({ { 0, 1 }, { 2, 2 }, { 3, 0 } })) end, { { 3, 4 } } },
  { "scatter.src", function(a, b) return a:scatter(1, sk.tensor({ { 0, 2 }, { 1, 3 }, { 3, 0 } }), b) end, { { 3, 4 }, { 3, 2 } } },
  { "scatter.value", function(a) return a:scatter(1, sk.tensor({ { 0, 2 }, { 1, 3 }, { 3, 0 } }), 1.5) end, { { 3, 4 } } },
  { "scatter_add", function(a, b) return a:scatter_add(1, sk.tensor({ { 0, 0 }, { 1, 3 }, { 3, 3 } }), b) end, { { 3, 4 }, { 3, 2 } } },
  { "embedding", function(w) return sk.embedding(w, sk.tensor({ { 1, 0 }, { 3, 1 } })) end, { { 4, 3 } } },
  -- shape and index composites (shapeidx): their pieces record; diagonal has its own formula
  { "diagonal", function(a) return a:diagonal(1, 0, 2) end, { { 3, 2, 4 } }, gg = true },
  { "diag_embed", function(a) return sk.diag_embed(a, -1) end, { { 2, 3 } } },
  { "diagflat", function(a) return sk.diagflat(a, 1) end, { { 2, 2 } } },
  { "movedim", function(a) return sk.movedim(a, { 0, 1 }, { 2, 0 }) end, { { 2, 3, 4 } } },
  { "moveaxis", function(a) return sk.moveaxis(a, -1, 0) end, { { 2, 3, 4 } } },
  { "broadcast_to", function(a) return sk.broadcast_to(a, { 2, 3, 4 }) end, { { 3, 1 } } },
  { "broadcast_tensors", function(a, b) local p = sk.broadcast_tensors({ a, b }); return p[1] * p[2] end, { { 3, 1 }, { 4 } } },
  { "meshgrid", function(a, b) local p = sk.meshgrid({ a, b }, { indexing = "xy" }); return p[1] * 2 + p[2] end, { { 3 }, { 2 } } },
  { "cartesian_prod", function(a, b) return sk.cartesian_prod({ a, b }) end, { { 3 }, { 2 } } },
  { "combinations", function(a) return sk.combinations(a, 2, true) end, { { 4 } } },
  { "expand_as", function(a, b) return a:expand_as(b) * b end, { { 3, 1 }, { 2, 3, 4 } } },
  { "view_as", function(a, b) return a:contiguous():view_as(b) * b end, { { 3, 4 }, { 4, 3 } } },
  { "reshape_as", function(a, b) return a:reshape_as(b) * b end, { { 3, 4 }, { 2, 6 } } },
  { "ravel", function(a) return a:ravel() end, { { 3, 4 } } },
  { "sum_to_size", function(a) return a:sum_to_size({ 3, 1 }) end, { { 2, 3, 4 } } },
  { "atleast_3d", function(a) return sk.atleast_3d(a) end, { { 3, 4 } } },
  { "hstack", function(a, b) return sk.hstack({ a, b }) end, { { 3, 2 }, { 3, 1 } } },
  { "vstack", function(a, b) return sk.vstack({ a, b }) end, { { 3 }, { 2, 3 } } },
  { "dstack", function(a, b) return sk.dstack({ a, b }) end, { { 3, 2 }, { 3, 2 } } },
  { "column_stack", function(a, b) return sk.column_stack({ a, b }) end, { { 3 }, { 3, 2 } } },
  { "tensor_split", function(a) local p = sk.tensor_split(a, { 1, 3 }, 1); return p[2] * 2 + p[3]:sum() end, { { 3, 4 } } },
  { "hsplit", function(a) local p = sk.hsplit(a, 2); return p[1] * p[2] end, { { 3, 4 } } },
  { "rot90", function(a) return sk.rot90(a, 1, { 1, 0 }) end, { { 3, 4 } } },
  { "fliplr", function(a) return sk.fliplr(a) end, { { 3, 4 } } },
  { "select_scatter", function(a, b) return sk.select_scatter(a, b, 1, 2) end, { { 3, 4 }, { 3 } } },
  { "slice_scatter", function(a, b) return sk.slice_scatter(a, b, 0, 0, 4, 2) end, { { 4, 3 }, { 2, 3 } } },
  { "diagonal_scatter", function(a, b) return sk.diagonal_scatter(a, b, 1) end, { { 3, 4 }, { 3 } } },
  { "narrow_copy", function(a) return sk.narrow_copy(a, 1, 1, 2) end, { { 3, 4 } } },
  { "kron", function(a, b) return sk.kron(a, b) end, { { 2, 3 }, { 2, 2 } }, gg = true },
  { "inner", function(a, b) return sk.inner(a, b) end, { { 2, 3 }, { 4, 3 } } },
  { "einsum", function(a, b, c) return sk.einsum("ij,jk,kl->il", a, b, c) end, { { 2, 3 }, { 3, 4 }, { 4, 2 } } },
  { "einsum diagonal, ellipsis, broadcast", function(a, b) return sk.einsum("ii...,i->i...", a, b) end, { { 3, 3, 2 }, { 1 } } },
  { "as_strided_scatter", function(a, b) return sk.as_strided_scatter(a, b, { 2, 2 }, { 1, 3 }, 1) end, { { 3, 3 }, { 2, 2 } } },
  { "tensordot", function(a, b) return sk.tensordot(a, b, { 1, 2 }, { 1, 0 }) end, { { 2, 3, 4 }, { 4, 3, 2 } } },
  { "addbmm", function(s, a, b) return sk.addbmm(s, a, b, { beta = 0.5, alpha = 2 }) end, { { 2, 4 }, { 3, 2, 5 }, { 3, 5, 4 } } },
  { "addr", function(s, a, b) return sk.addr(s, a, b, { beta = 2, alpha = 0.5 }) end, { { 2, 3 }, { 2 }, { 3 } } },
  { "vdot", function(a, b) return sk.vdot(a, b) end, { { 4 }, { 4 } } },
  { "linalg_cross", function(a, b) return sk.linalg_cross(a, b) end, { { 2, 3 }, { 2, 3 } }, gg = true },
  { "cross", function(a, b) return sk.cross(a, b) end, { { 3, 2 }, { 3, 2 } } },
  { "block_diag", function(a, b) return sk.block_diag({ a, b }) end, { { 2, 3 }, { 2 } } },
  { "max.other", function(a, b) return sk.max(a, b) end, { { 3, 4 }, { 4 } } },
  { "take_along_dim", function(a) return sk.take_along_dim(a, sk.tensor({ { 0, 2 }, { 1, 1 }, { 3, 0 } }), 1) end, { { 3, 4 } } },
  { "take", function(a) return sk.take(a, sk.tensor({ { 0, -1 }, { 5, 5 } })) end, { { 3, 4 } } },
  { "put accumulate", function(a, v) return a:put(sk.tensor({ 1, 1, -1 }), v, true) end, { { 3, 4 }, { 3 } } },
  { "index_add", function(a, v) return a:index_add(0, sk.tensor({ 2, 0, 2 }), v, { alpha = 1.5 }) end, { { 3, 4 }, { 3, 4 } } },
  { "index_copy", function(a, v) return a:index_copy(1, sk.tensor({ 3, 0 }), v) end, { { 3, 4 }, { 3, 2 } } },
  { "index_fill.int_Tensor", function(a, v) return a:index_fill(1, sk.tensor({ 3, 0 }), v:sum()) end, { { 3, 4 }, { 2 } } },
  { "masked_scatter", function(a, v) return a:masked_scatter(sk.tensor({ true, false, true, true }), v) end, { { 3, 4 }, { 12 } } },
  { "index_reduce prod", function(a, v) return a:index_reduce(0, sk.tensor({ 2, 0, 2 }), v, "prod") end, { { 3, 4 }, { 3, 4 } } },
  { "index_reduce mean", function(a, v) return a:index_reduce(1, sk.tensor({ 1, 1, 3 }), v, "mean", { include_self = false }) end,
    { { 3, 4 }, { 3, 3 } } },
  { "index_reduce amax", function(a, v) return a:index_reduce(0, sk.tensor({ 2, 0, 2 }), v, "amax") end, { { 3, 4 }, { 3, 4 } } },
  { "index_reduce amin", function(a, v) return a:index_reduce(0, sk.tensor({ 1, 1 }), v, "amin", { include_self = false }) end,
    { { 3, 4 }, { 2, 4 } } },
  { "repeat_interleave", function(a) return a:repeat_interleave(sk.tensor({ 1, 0, 2 }), { dim = 0 }) end, { { 3, 4 } } },
  { "repeat_interleave.self_int", function(a) return a:repeat_interleave(2, { dim = 1 }) end, { { 3, 4 } } },
  -- neural-network ops and their composites
  { "softmax", function(a) return sk.softmax(a, 1) end, { { 3, 4 } }, gg = true },
  { "log_softmax", function(a) return sk.log_softmax(a, 0) end, { { 3, 4 } }, gg = true },
  { "softmax over a middle dim", function(a) return sk.softmax(a, 1) end, { { 2, 3, 4 } }, gg = true },
  { "log_softmax over the last dim", function(a) return sk.log_softmax(a, -1) end, { { 2, 5 } }, gg = true },
  { "layer_norm", function(x, w, b) return sk.layer_norm(x, { 4 }, w, b) end, { { 3, 4 }, { 4 }, { 4 } }, gg = true },
  { "layer_norm over 2 dims, no bias", function(x, w) return sk.layer_norm(x, { 3, 4 }, w) end, { { 2, 3, 4 }, { 3, 4 } }, gg = true },
  { "layer_norm, bias only", function(x, b) return sk.layer_norm(x, { 5 }, nil, b) end, { { 3, 5 }, { 5 } }, gg = true },
  { "layer_norm, no affine", function(x) return sk.layer_norm(x, { 4 }) end, { { 3, 4 } }, gg = true },
  { "native_layer_norm_backward", function(g, x, w, b)
      local _, m, r = sk.native_layer_norm(x, { 4 }, w, b, 1e-5)
      return sk.native_layer_norm_backward(g, x, { 4 }, m, r, w, b, { true, true, true })
    end, { { 3, 4 }, { 3, 4 }, { 4 }, { 4 } } },
  { "nll_loss", function(a) return sk.nll_loss(sk.log_softmax(a, 1), sk.tensor({ 1, 0, 3 })) end, { { 3, 4 } } },
  { "nll_loss weight", function(a) return sk.nll_loss(a, sk.tensor({ 1, 0, 3 }), { weight = sk.tensor({ 0.5, 2, 1, 3 }, { dtype = "float64" }), reduction = "sum" }) end,
    { { 3, 4 } } },
  { "nll_loss ignore_index", function(a) return sk.nll_loss(a, sk.tensor({ 1, -100, 3 })) end, { { 3, 4 } } },
  { "cross_entropy", function(a) return sk.cross_entropy(a, sk.tensor({ 1, 0, 3 })) end, { { 3, 4 } } },
  { "mse_loss", function(a, b) return sk.mse_loss(a, b) end, { { 3, 4 }, { 3, 4 } } },
  -- losses and distances (binary_cross_entropy and _ctc_loss have formulas; the rest record their pieces)
  { "binary_cross_entropy", function(a, b) return sk.binary_cross_entropy(a:sigmoid(), b:sigmoid(), { weight = sk.tensor({ 1, 2, 0.5, 3 }, { dtype = "float64" }) }) end,
    { { 3, 4 }, { 3, 4 } }, gg = true },
  { "binary_cross_entropy sum", function(a, b) return sk.binary_cross_entropy(a:sigmoid(), b:sigmoid(), { reduction = "sum" }) end, { { 3, 4 }, { 3, 4 } } },
  { "binary_cross_entropy_with_logits", function(a, b, w, pw)
      return sk.binary_cross_entropy_with_logits(a, b:sigmoid(), { weight = w, pos_weight = pw, reduction = "sum" }) end,
    { { 3, 4 }, { 3, 4 }, { 4 }, { 4 } }, gg = true },
  { "l1_loss", function(a, b) return sk.l1_loss(a, b * 0) end, { { 3, 4 }, { 3, 4 } }, away = true },
  { "smooth_l1_loss", function(a, b) return sk.smooth_l1_loss(a, b, { beta = 0.5 }) end, { { 3, 4 }, { 3, 4 } } },
  { "huber_loss", function(a, b) return sk.huber_loss(a, b, { delta = 0.5, reduction = "sum" }) end, { { 3, 4 }, { 3, 4 } } },
  { "kl_div", function(a, b) return sk.kl_div(a, b, "batchmean") end, { { 3, 4 }, { 3, 4 } }, pos = true, gg = true },
  { "kl_div log_target", function(a, b) return sk.kl_div(a, b, { log_target = true }) end, { { 3, 4 }, { 3, 4 } }, gg = true },
  { "poisson_nll_loss", function(a, b) return sk.poisson_nll_loss(a, b * 3, { full = true }) end, { { 3, 4 }, { 3, 4 } }, pos = true },
  { "poisson_nll_loss log_input=false", function(a, b) return sk.poisson_nll_loss(a, b, false) end, { { 3, 4 }, { 3, 4 } }, pos = true },
  { "gaussian_nll_loss", function(a, b, v) return sk.gaussian_nll_loss(a, b, v, { full = true }) end, { { 3, 4 }, { 3, 4 }, { 3 } }, pos = true, gg = true },
  { "margin_ranking_loss", function(a, b) return sk.margin_ranking_loss(a, b, sk.tensor({ 1, -1, 1, -1 }, { dtype = "float64" }), 0.1) end,
    { { 4 }, { 4 } }, distinct = true },
  { "hinge_embedding_loss", function(a) return sk.hinge_embedding_loss(a, sk.tensor({ { 1, -1, 1, -1 } }, { dtype = "float64" }), 0.5) end,
    { { 3, 4 } }, away = true },
  { "soft_margin_loss", function(a) return sk.soft_margin_loss(a, sk.tensor({ 1, -1, 1, -1 }, { dtype = "float64" })) end, { { 3, 4 } }, gg = true },
  { "multilabel_soft_margin_loss", function(a, b) return sk.multilabel_soft_margin_loss(a, b:sigmoid()) end, { { 3, 4 }, { 3, 4 } }, gg = true },
  { "multi_margin_loss p=2", function(a, w) return sk.multi_margin_loss(a, sk.tensor({ 1, 0, 3 }), { p = 2, margin = 0.5, weight = w }) end,
    { { 3, 4 }, { 4 } }, distinct = true },
  { "multilabel_margin_loss", function(a) return sk.multilabel_margin_loss(a, sk.tensor({ { 1, 3, -1, 0 }, { 0, -1, 2, 2 }, { 2, 1, 0, 3 } })) end,
    { { 3, 4 } }, distinct = true },
  { "cosine_embedding_loss", function(a, b) return sk.cosine_embedding_loss(a, b, sk.tensor({ 1, -1, -1 }, { dtype = "float64" }), -0.9) end,
    { { 3, 4 }, { 3, 4 } } },
  { "triplet_margin_loss", function(a, p, n) return sk.triplet_margin_loss(a, p, n, { margin = 5, swap = true }) end, { { 3, 4 }, { 3, 4 }, { 3, 4 } } },
  { "cosine_similarity", function(a, b) return sk.cosine_similarity(a, b, 1) end, { { 3, 4 }, { 4 } }, gg = true, bcast = true },
  { "pairwise_distance p=3", function(a, b) return sk.pairwise_distance(a, b, 3) end, { { 3, 4 }, { 3, 4 } }, bcast = true },
  { "pdist", function(a) return sk.pdist(a) end, { { 4, 3 } }, distinct = true },
  { "pdist p=1.5", function(a) return sk.pdist(a, 1.5) end, { { 4, 3 } }, distinct = true },
  { "cdist", function(a, b) return sk.cdist(a, b, 2, 2) end, { { 2, 3, 4 }, { 5, 4 } }, distinct = true },
  { "cdist matmul", function(a, b) return sk.cdist(a, b, 2, 1) end, { { 2, 3, 4 }, { 5, 4 } }, distinct = true, gg = true },
  { "ctc_loss", function(a) return sk.ctc_loss(sk.log_softmax(a, 2), sk.tensor({ { 1, 2, 2 }, { 3, 1, 0 } }), { 6, 4 }, { 3, 2 }) end, { { 6, 2, 4 } } },
  { "ctc_loss unbatched, concatenated", function(a) return sk.ctc_loss(sk.log_softmax(a, 1), sk.tensor({ 2, 2 }), { 5 }, { 2 }, { blank = 1, reduction = "sum" }) end,
    { { 5, 3 } } },
  -- convolution (convolution_backward's formula, and its own: gg)
  { "conv2d", function(x, w, b) return sk.conv2d(x, w, b, 2, 1, 1, 2) end, { { 2, 4, 5, 4 }, { 6, 2, 3, 2 }, { 6 } }, gg = true },
  { "conv2d dilated, no bias", function(x, w) return sk.conv2d(x, w, nil, 1, 2, 2) end, { { 1, 2, 4, 4 }, { 3, 2, 2, 2 } }, gg = true },
  { "conv1d same", function(x, w, b) return sk.conv1d(x, w, b, 1, "same") end, { { 2, 3, 6 }, { 2, 3, 4 }, { 2 } }, gg = true },
  { "conv3d", function(x, w) return sk.conv3d(x, w, nil, 1, 1) end, { { 1, 2, 3, 3, 2 }, { 2, 2, 2, 2, 2 } } },
  { "conv_transpose2d", function(x, w, b) return sk.conv_transpose2d(x, w, b, 2, 1, 1, 2) end, { { 1, 4, 3, 3 }, { 4, 2, 3, 3 }, { 4 } }, gg = true },
  { "conv_transpose1d dilated", function(x, w) return sk.conv_transpose1d(x, w, nil, 1, 0, 1, 1, 2) end, { { 2, 2, 4 }, { 2, 3, 3 } }, gg = true },
  -- batch_norm: double backward through batchnorm_double_backward
  { "batch_norm training", function(x, w, b) return sk.batch_norm(x, w, b, nil, nil, true, 0.1, 1e-5, false) end, { { 4, 3, 2 }, { 3 }, { 3 } }, gg = true },
  { "batch_norm training, no affine", function(x) return sk.batch_norm(x, nil, nil, nil, nil, true, 0.1, 1e-5, false) end, { { 3, 2, 2 } }, gg = true },
  { "batch_norm training, running stats", function(x, w) return sk.batch_norm(x, w, nil, sk.zeros({ 3 }, { dtype = "float64" }),
      sk.ones({ 3 }, { dtype = "float64" }), true, 0.1, 1e-5, false) end, { { 4, 3 }, { 3 } }, gg = true },
  { "batch_norm eval", function(x, w, b) return sk.batch_norm(x, w, b, sk.tensor({ 0.5, -1, 0 }, { dtype = "float64" }),
      sk.tensor({ 2, 1, 0.5 }, { dtype = "float64" }), false, 0.1, 1e-5, false) end, { { 2, 3, 4 }, { 3 }, { 3 } }, gg = true },
  { "group_norm", function(x, w, b) return sk.group_norm(x, 2, w, b) end, { { 2, 4, 3 }, { 4 }, { 4 } }, gg = true },
  { "instance_norm", function(x, w) return sk.instance_norm(x, w, nil, nil, nil, true, 0.1, 1e-5, false) end, { { 2, 3, 4 }, { 3 } }, gg = true },
  { "local_response_norm", function(x) return sk.local_response_norm(x, 3, 0.5, 0.75, 1) end, { { 2, 4, 3 } }, gg = true },
  { "normalize", function(x) return sk.normalize(x, 2, 1) end, { { 3, 4 } }, gg = true },
  -- activations (inputs away from the kinks)
  { "leaky_relu", function(x) return sk.leaky_relu(x, 0.2) end, { { 3, 4 } }, away = true, gg = true },
  { "elu", function(x) return sk.elu(x, 1.5, 2, 0.5) end, { { 3, 4 } }, away = true, gg = true },
  { "selu", function(x) return sk.selu(x) end, { { 3, 4 } }, away = true },
  { "celu", function(x) return sk.celu(x, 0.7) end, { { 3, 4 } }, away = true },
  { "hardtanh", function(x) return sk.hardtanh(x, -0.5, 0.5) end, { { 3, 4 } }, away = true },
  { "hardswish", function(x) return sk.hardswish(x) end, { { 3, 4 } }, away = true, gg = true },
  { "softplus", function(x) return sk.softplus(x, 2, 1) end, { { 3, 4 } }, away = true, gg = true },
  { "softsign", function(x) return sk.softsign(x) end, { { 3, 4 } }, away = true },
  { "softshrink", function(x) return sk.softshrink(x, 0.1) end, { { 3, 4 } }, away = true },
  { "tanhshrink", function(x) return sk.tanhshrink(x) end, { { 3, 4 } }, gg = true },
  { "log_sigmoid", function(x) return sk.log_sigmoid(x) end, { { 3, 4 } }, gg = true },
  { "mish", function(x) return sk.mish(x) end, { { 3, 4 } }, gg = true },
  { "mish_", function(x) return x:clone():mish_() end, { { 3, 4 } } },
  { "glu", function(x) return sk.glu(x, 1) end, { { 3, 4 } }, gg = true },
  { "prelu", function(x, w) return sk.prelu(x, w) end, { { 2, 3, 2 }, { 3 } }, away = true },
  { "softmin", function(x) return sk.softmin(x, 1) end, { { 3, 4 } } },
  -- pooling (distinct values, so every window has one maximum)
  { "max_pool2d", function(x) return sk.max_pool2d(x, 3, 2, 1) end, { { 2, 2, 5, 5 } }, distinct = true, gg = true },
  { "max_pool2d ceil, dilated", function(x) return sk.max_pool2d(x, { 2, 3 }, { 2, 1 }, 0, { 2, 1 }, true) end, { { 1, 2, 7, 6 } }, distinct = true },
  { "max_pool3d", function(x) return sk.max_pool3d(x, 2, 1, 1) end, { { 1, 2, 3, 4, 3 } }, distinct = true, gg = true },
  { "max_pool1d", function(x) return sk.max_pool1d(x, 3, 2) end, { { 2, 3, 7 } }, distinct = true },
  { "avg_pool2d", function(x) return sk.avg_pool2d(x, 3, 2, 1, true, false) end, { { 2, 2, 5, 6 } }, gg = true },
  { "avg_pool2d divisor", function(x) return sk.avg_pool2d(x, 2, 1, 1, false, true, 3) end, { { 1, 2, 4, 4 } } },
  { "avg_pool3d", function(x) return sk.avg_pool3d(x, 2, 2, 1) end, { { 1, 2, 3, 4, 3 } }, gg = true },
  { "avg_pool1d", function(x) return sk.avg_pool1d(x, 3, 2, 1) end, { { 2, 3, 7 } } },
  { "adaptive_avg_pool2d", function(x) return sk.adaptive_avg_pool2d(x, { 3, 2 }) end, { { 2, 2, 5, 7 } }, gg = true },
  { "adaptive_avg_pool2d 1x1", function(x) return sk.adaptive_avg_pool2d(x, 1) end, { { 2, 2, 5, 7 } } },
  { "adaptive_avg_pool3d", function(x) return sk.adaptive_avg_pool3d(x, { 2, 3, 2 }) end, { { 1, 2, 3, 5, 4 } }, gg = true },
  { "adaptive_max_pool2d", function(x) return (sk.adaptive_max_pool2d(x, { 3, 2 })) end, { { 2, 2, 5, 7 } }, distinct = true, gg = true },
  { "adaptive_max_pool3d", function(x) return (sk.adaptive_max_pool3d(x, 2)) end, { { 1, 2, 3, 5, 4 } }, distinct = true },
  { "max_unpool2d", function(x) local v, i = sk.max_pool2d_with_indices(x:detach() * 1, 2)
      return sk.max_unpool2d(v * 0 + x:narrow(2, 0, 2):narrow(3, 0, 2), i, { 4, 4 }) end, { { 1, 2, 4, 4 } }, distinct = true, gg = true },
  { "lp_pool2d", function(x) return sk.lp_pool2d(x, 2, 2) end, { { 1, 2, 4, 4 } }, pos = true },
  -- padding, resampling, im2col, strided views and the functional composites
  { "constant_pad_nd", function(x) return sk.constant_pad_nd(x, { 1, -1, 2, 0 }, 0.5) end, { { 2, 3, 4 } }, gg = true },
  { "pad reflect", function(x) return sk.pad(x, { 2, 1, 1, 2 }, "reflect") end, { { 1, 2, 3, 4 } }, gg = true },
  { "pad replicate", function(x) return sk.pad(x, { 2, -1 }, "replicate") end, { { 2, 2, 4 } } },
  { "pad circular", function(x) return sk.pad(x, { 1, 2, 0, 1, 1, 1 }, "circular") end, { { 1, 1, 2, 3, 3 } } },
  { "upsample_bilinear2d", function(x) return sk.interpolate(x, { scale_factor = { 1.5, 0.7 }, mode = "bilinear" }) end, { { 1, 2, 3, 4 } }, gg = true },
  { "upsample_bicubic2d align_corners", function(x) return sk.upsample_bicubic2d(x, { 5, 3 }, true) end, { { 1, 1, 3, 4 } } },
  { "upsample_trilinear3d", function(x) return sk.upsample_trilinear3d(x, { 3, 2, 5 }, false) end, { { 1, 1, 2, 3, 2 } } },
  { "upsample_nearest2d", function(x) return sk.upsample_nearest2d(x, { 5, 3 }) end, { { 1, 2, 3, 4 } } },
  { "grid_sample bilinear zeros", function(x, g) return sk.grid_sample(x, g) end, { { 1, 2, 3, 4 }, { 1, 2, 3, 2 } } },
  { "grid_sample bilinear reflection align_corners", function(x, g) return sk.grid_sample(x, g, "bilinear", "reflection", true) end, { { 1, 2, 3, 4 }, { 1, 2, 3, 2 } } },
  { "grid_sample bicubic border", function(x, g) return sk.grid_sample(x, g, "bicubic", "border") end, { { 1, 1, 3, 4 }, { 1, 2, 2, 2 } } },
  { "grid_sample nearest (input)", function(x) return sk.grid_sample(x, sk.tensor({ { { { 0.3, -0.2 }, { 0.9, 0.4 } } } }, { dtype = "float64" }), "nearest") end, { { 1, 2, 3, 4 } } },
  { "grid_sampler_3d trilinear", function(x, g) return sk.grid_sampler(x, g, 0, 1, false) end, { { 1, 1, 2, 3, 3 }, { 1, 2, 1, 2, 3 } } },
  { "affine_grid", function(t) return sk.affine_grid(t, { 1, 1, 3, 4 }, false) end, { { 1, 2, 3 } } },
  { "interpolate area", function(x) return sk.interpolate(x, { size = { 2, 3 }, mode = "area" }) end, { { 1, 2, 5, 7 } } },
  { "im2col", function(x) return sk.im2col(x, { 2, 3 }, { 1, 2 }, 1, { 2, 1 }) end, { { 2, 2, 4, 6 } }, gg = true },
  { "col2im", function(c) return sk.col2im(c, { 4, 5 }, { 2, 2 }, 1, { 1, 0 }, 2) end, { { 2, 8, 6 } }, gg = true },
  { "as_strided, overlapping windows", function(a) return sk.as_strided(a, { 3, 3 }, { 1, 2 }, 1) end, { { 10 } }, gg = true },
  { "as_strided of an expanded tensor", function(a) return sk.as_strided(a:expand({ 3, 4 }), { 2, 2 }, { 1, 0 }) end, { { 4 } } },
  { "Tensor.unfold", function(a) return a:unfold(1, 3, 2) end, { { 2, 7, 2 } }, gg = true },
  { "Tensor.unfold of a transposed tensor", function(a) return a:t():unfold(0, 2, 1) end, { { 3, 4 } } },
  { "linear", function(x, w, b) return sk.linear(x, w, b) end, { { 2, 5, 3 }, { 4, 3 }, { 4 } } },
  { "bilinear", function(x, y, w, b) return sk.bilinear(x, y, w, b) end, { { 3, 2 }, { 3, 4 }, { 5, 2, 4 }, { 5 } }, gg = true },
  { "embedding_bag sum with per_sample_weights", function(w, p)
      return (sk.embedding_bag(w, sk.tensor({ 0, 3, 2, 3, 1 }), sk.tensor({ 0, 2, 2 }), false, 0, false, p)) end, { { 4, 3 }, { 5 } } },
  { "embedding_bag mean, padding_idx", function(w)
      return (sk.embedding_bag(w, sk.tensor({ 0, 3, 2, 3, 1 }), sk.tensor({ 0, 2 }), false, 1, false, nil, false, 3)) end, { { 4, 3 } } },
  { "embedding_bag max", function(w)
      return (sk.embedding_bag(w, sk.tensor({ 0, 3, 2, 3, 1 }), sk.tensor({ 0, 3 }), false, 2)) end, { { 4, 3 } }, distinct = true },
  { "pixel_shuffle", function(x) return sk.pixel_shuffle(x, 2) end, { { 1, 8, 2, 3 } } },
  { "pixel_unshuffle", function(x) return sk.pixel_unshuffle(x, 2) end, { { 1, 2, 4, 2 } } },
  { "scaled_dot_product_attention causal", function(q, k, v) return sk.scaled_dot_product_attention(q, k, v, { is_causal = true }) end,
    { { 2, 4, 3 }, { 2, 4, 3 }, { 2, 4, 5 } }, gg = true },
  { "scaled_dot_product_attention float mask", function(q, k, v, m) return sk.scaled_dot_product_attention(q, k, v, m) end,
    { { 2, 3, 4 }, { 2, 5, 4 }, { 2, 5, 2 }, { 3, 5 } } },
  -- in-place writers, through a clone
  { "mul_", function(a, b) return a:clone():mul_(b) end, { { 3, 4 }, { 4 } } },
  { "exp_", function(a) return a:clone():exp_() end, { { 3, 4 } } },
  { "copy_ into a view", function(a, b) local c = a:clone(); c:select(0, 1):copy_(b); return c end, { { 3, 4 }, { 4 } } },
  { "fill_ a view", function(a) local c = a * 2; c:narrow(1, 0, 2):fill_(1); return c end, { { 3, 4 } } },
  { "zero_", function(a) return (a * 1):zero_() end, { { 3, 4 } } },
  -- reductions and scans (issue 13)
  { "nansum", function(a) return sk.nansum(a, 1) end, { { 3, 4 } } },
  { "nanmean", function(a) return sk.nanmean(a, { 0 }, true) end, { { 3, 4 } } },
  { "aminmax", function(a) local lo, hi = sk.aminmax(a, { dim = 1 }); return lo * 2 + hi end, { { 3, 4 } }, distinct = true },
  { "var_mean", function(a) local v, m = sk.var_mean(a, 1); return v + m * 3 end, { { 3, 4 } }, gg = true },
  { "std_mean.correction", function(a) local s, m = sk.std_mean(a, { 0 }, { correction = 0 }); return s * 2 + m end, { { 3, 4 } } },
  { "diff", function(a, p) return sk.diff(a, 2, 1, p) end, { { 3, 4 }, { 3, 2 } }, gg = true },
  { "trace", function(a) return sk.trace(a) end, { { 3, 4 } }, gg = true },
  { "dist", function(a, b) return sk.dist(a, b, 3) end, { { 3, 4 }, { 4 } }, bcast = true },
  { "renorm", function(a) return sk.renorm(a, 2, 0, 1.5) end, { { 3, 4 } } },
  { "trapezoid.x", function(y, x) return sk.trapezoid(y, x) end, { { 3, 4 }, { 4 } } },
  { "trapezoid.dx", function(y) return sk.trapezoid(y, { dx = 0.5, dim = 0 }) end, { { 3, 4 } } },
  { "cumulative_trapezoid.x", function(y, x) return sk.cumulative_trapezoid(y, x, { dim = 0 }) end, { { 3, 4 }, { 3, 4 } } },
  { "logcumsumexp", function(a) return sk.logcumsumexp(a, 1) end, { { 3, 4 } }, gg = true },
  { "logcumsumexp over dim 0", function(a) return sk.logcumsumexp(a, 0) end, { { 3, 2 } } },
  { "cummax", function(a) return (sk.cummax(a, 1)) end, { { 3, 4 } }, distinct = true },
  { "cummin", function(a) return (sk.cummin(a, 0)) end, { { 3, 4 } }, distinct = true },
  { "median", function(a) return sk.median(a) end, { { 3, 4 } }, distinct = true },
  { "nanmedian", function(a) return sk.nanmedian(a) end, { { 3, 4 } }, distinct = true },
  { "median.dim", function(a) return (sk.median(a, 1)) end, { { 3, 4 } }, distinct = true },
  { "nanmedian.dim", function(a) return (sk.nanmedian(a, 0, true)) end, { { 3, 4 } }, distinct = true },
  { "kthvalue", function(a) return (sk.kthvalue(a, 2, 1)) end, { { 3, 4 } }, distinct = true },
  { "mode", function(a) return (sk.mode(a, 1)) end, { { 3, 4 } }, distinct = true },
  { "quantile", function(a) return sk.quantile(a, sk.tensor({ 0.2, 0.5 }, { dtype = "float64" }), 1) end, { { 3, 4 } }, distinct = true },
  { "scatter_reduce sum", function(a, v) return a:scatter_reduce(0, sk.tensor({ { 2, 0, 2, 1 }, { 0, 0, 1, 1 } }), v, "sum") end,
    { { 3, 4 }, { 2, 4 } } },
  { "scatter_reduce prod", function(a, v) return a:scatter_reduce(0, sk.tensor({ { 2, 0, 2, 1 }, { 0, 0, 1, 1 } }), v, "prod") end,
    { { 3, 4 }, { 2, 4 } } },
  { "scatter_reduce mean, no self", function(a, v)
      return a:scatter_reduce(1, sk.tensor({ { 1, 1, 3 }, { 0, 2, 2 }, { 3, 3, 3 } }), v, "mean", { include_self = false }) end,
    { { 3, 4 }, { 3, 3 } } },
  { "scatter_reduce amax", function(a, v) return a:scatter_reduce(0, sk.tensor({ { 2, 0, 2, 1 } }), v, "amax") end,
    { { 3, 4 }, { 1, 4 } }, distinct = true },
  { "scatter_reduce amin, no self", function(a, v)
      return a:scatter_reduce(0, sk.tensor({ { 1, 1, 0, 2 }, { 1, 0, 0, 2 } }), v, "amin", { include_self = false }) end,
    { { 3, 4 }, { 2, 4 } }, distinct = true },
  { "segment_reduce sum", function(a) return sk.segment_reduce(a, "sum", { lengths = sk.tensor({ 1, 0, 2 }) }) end, { { 3, 4 } } },
  { "segment_reduce mean, offsets", function(a) return sk.segment_reduce(a, "mean", { offsets = sk.tensor({ 0, 2, 3 }) }) end,
    { { 3, 4 } } },
  { "segment_reduce max over axis 1", function(a)
      return sk.segment_reduce(a, "max", { lengths = sk.tensor({ { 2, 2 }, { 1, 3 }, { 3, 1 } }), axis = 1 }) end, { { 3, 4 } },
    distinct = true },
  { "segment_reduce min, initial", function(a) return sk.segment_reduce(a, "min", { lengths = sk.tensor({ 2, 1 }), initial = 5 }) end,
    { { 3, 2 } }, distinct = true },
  { "segment_reduce prod", function(a) return sk.segment_reduce(a, "prod", { lengths = sk.tensor({ 2, 1 }), initial = 2 }) end,
    { { 3, 2 } } },
  { "segment_reduce prod with a zero", function(a)
      return sk.segment_reduce(a * sk.tensor({ { 1, 0 }, { 1, 1 }, { 0, 0 } }, { dtype = "float64" }), "prod", { lengths = sk.tensor({ 2, 1 }) }) end,
    { { 3, 2 } } },
  { "nanquantile midpoint", function(a) return sk.nanquantile(a, 0.3, 0, false, { interpolation = "midpoint" }) end, { { 3, 4 } },
    distinct = true },
  -- {==== pointwise: the math ops and special.* of issue 13 ====
  { "logaddexp", function(a, b) return sk.logaddexp(a, b) end, { { 3, 4 }, { 4 } }, gg = true, bcast = true },
  { "logaddexp2", function(a, b) return sk.logaddexp2(a, b) end, { { 3, 4 }, { 3, 4 } } },
  { "xlogy", function(a, b) return sk.xlogy(a, b) end, { { 3, 4 }, { 4 } }, pos = true, gg = true, bcast = true },
  { "xlogy.Scalar_Self", function(b) return sk.xlogy(2.5, b) end, { { 3, 4 } }, pos = true },
  { "xlogy.Scalar_Other", function(a) return sk.xlogy(a, 3) end, { { 3, 4 } }, pos = true },
  { "special_xlog1py", function(a, b) return sk.special_xlog1py(a, b) end, { { 3, 4 }, { 3, 4 } }, pos = true, gg = true },
  { "copysign", function(a, b) return sk.copysign(a, b) end, { { 3, 4 }, { 3, 4 } }, away = true, bcast = true },
  { "copysign.Scalar", function(a) return sk.copysign(a, -1) end, { { 3, 4 } }, away = true },
  { "fmax", function(a, b) return sk.fmax(a, b + 0.013) end, { { 3, 4 }, { 3, 4 } }, distinct = true },
  { "fmin", function(a, b) return sk.fmin(a, b + 0.013) end, { { 3, 4 }, { 3, 4 } }, distinct = true },
  { "igamma (other)", function(b) return sk.igamma(sk.full({ 3, 4 }, 1.7, { dtype = "float64" }), b) end, { { 3, 4 } }, pos = true },
  { "igammac (other)", function(b) return sk.igammac(sk.full({ 3, 4 }, 2.2, { dtype = "float64" }), b) end, { { 3, 4 } }, pos = true },
  { "ldexp", function(a) return sk.ldexp(a, sk.tensor({ 1, -2, 3, 0 })) end, { { 3, 4 } } },
  { "float_power", function(a, b) return sk.float_power(a, b) end, { { 3, 4 }, { 3, 4 } }, pos = true },
  { "float_power.Tensor_Scalar", function(a) return sk.float_power(a, 2.5) end, { { 3, 4 } }, pos = true },
  { "rsub", function(a, b) return sk.rsub(a, b, { alpha = 2 }) end, { { 3, 4 }, { 4 } }, bcast = true },
  { "erfinv", function(a) return sk.erfinv(a) end, { { 3, 4 } }, unit = true, gg = true },
  { "lgamma", function(a) return sk.lgamma(a) end, { { 3, 4 } }, pos = true, gg = true },
  { "digamma", function(a) return sk.digamma(a) end, { { 3, 4 } }, pos = true, gg = true },
  { "polygamma", function(a) return sk.polygamma(2, a) end, { { 3, 4 } }, pos = true, gg = true },
  { "mvlgamma", function(a) return sk.mvlgamma(a + 1, 3) end, { { 3, 4 } }, pos = true },
  { "i0", function(a) return sk.i0(a) end, { { 3, 4 } }, gg = true },
  { "sinc", function(a) return sk.sinc(a) end, { { 3, 4 } }, gg = true },
  { "logit", function(a) return sk.logit(a * 0.4 + 0.5) end, { { 3, 4 } }, unit = true, gg = true },
  { "logit eps", function(a) return sk.logit(a * 0.4 + 0.5, 0.05) end, { { 3, 4 } }, unit = true },
  { "deg2rad", function(a) return sk.deg2rad(a) end, { { 3, 4 } } },
  { "rad2deg", function(a) return sk.rad2deg(a) end, { { 3, 4 } } },
  { "sgn", function(a) return sk.sgn(a) end, { { 3, 4 } }, away = true },
  { "frexp", function(a) local m = sk.frexp(a * 0.3 + 0.8); return m end, { { 3, 4 } }, unit = true },
  { "special_ndtr", function(a) return sk.special_ndtr(a) end, { { 3, 4 } }, gg = true },
  { "special_ndtri", function(a) return sk.special_ndtri(a * 0.5 + 0.5) end, { { 3, 4 } }, unit = true, gg = true },
  { "special_log_ndtr", function(a) return sk.special_log_ndtr(a * 3) end, { { 3, 4 } }, gg = true },
  { "special_erfcx", function(a) return sk.special_erfcx(a) end, { { 3, 4 } }, gg = true },
  { "special_entr", function(a) return sk.special_entr(a) end, { { 3, 4 } }, pos = true, gg = true },
  { "special_i0e", function(a) return sk.special_i0e(a) end, { { 3, 4 } }, away = true },
  { "special_i1", function(a) return sk.special_i1(a) end, { { 3, 4 } }, gg = true },
  { "special_i1e", function(a) return sk.special_i1e(a) end, { { 3, 4 } }, away = true },
  { "special_zeta (other)", function(b) return sk.special_zeta(sk.full({ 3, 4 }, 2.5, { dtype = "float64" }), b) end, { { 3, 4 } }, pos = true },
  { "special_xlog1py.other_scalar", function(a) return sk.special_xlog1py(a, 2) end, { { 3, 4 } } },
  -- sk.linalg: A + 3I keeps every variant (the expanded one too) well conditioned
  { "linalg_inv_ex", function(a) return sk.linalg.inv(a + sk.eye(3, { dtype = "float64" }) * 3) end, { { 3, 3 } }, gg = true },
  { "linalg_det", function(a) return sk.linalg.det(a + sk.eye(3, { dtype = "float64" }) * 3) end, { { 2, 3, 3 } }, gg = true },
  { "linalg_matrix_exp", function(a) return sk.linalg.matrix_exp(a) end, { { 2, 3, 3 } }, gg = true },
  { "linalg_slogdet", function(a) local _, l = sk.linalg.slogdet(a + I3 * 3); return l end, { { 2, 3, 3 } }, gg = true },
  { "linalg_solve_ex", function(a, b) return sk.linalg.solve(a + I3 * 3, b) end, { { 3, 3 }, { 3, 2 } }, gg = true },
  { "linalg_solve_ex (vector B, batch)", function(a, b) return sk.linalg.solve(a + I3 * 3, b) end, { { 2, 3, 3 }, { 3 } } },
  { "linalg_solve_ex (left = false)", function(a, b) return sk.linalg.solve(a + I3 * 3, b, { left = false }) end, { { 2, 3, 3 }, { 4, 3 } } },
  { "linalg_solve_triangular (upper)", function(a, b) return sk.linalg.solve_triangular(a + I3 * 3, b, { upper = true }) end, { { 3, 3 }, { 3, 2 } }, gg = true },
  { "linalg_solve_triangular (lower, right, unit)", function(a, b)
    return sk.linalg.solve_triangular(a, b, { upper = false, left = false, unitriangular = true })
  end, { { 3, 3 }, { 2, 3 } } },
  { "linalg_lstsq (tall)", function(a, b) return (sk.linalg.lstsq(a, b)) end, { { 5, 3 }, { 5, 2 } } },
  { "linalg_lstsq (wide, vector b)", function(a, b) return (sk.linalg.lstsq(a, b)) end, { { 3, 5 }, { 3 } } },
  { "linalg_cholesky_ex", function(a) return sk.linalg.cholesky(a:matmul(a:transpose(-2, -1)) + I3 * 3) end, { { 2, 3, 3 } }, gg = true },
  { "linalg_cholesky_ex (upper)", function(a) return sk.linalg.cholesky(a:matmul(a:transpose(-2, -1)) + I3 * 3, { upper = true }) end, { { 3, 3 } } },
  { "linalg_lu", function(a) local _, l, u = sk.linalg.lu(a); return { l, u } end, { { 2, 3, 3 } }, gg = true },
  { "linalg_lu (wide)", function(a) local _, l, u = sk.linalg.lu(a); return { l, u } end, { { 3, 5 } } },
  { "linalg_lu (tall)", function(a) local _, l, u = sk.linalg.lu(a); return { l, u } end, { { 5, 3 } } },
  { "linalg_lu_factor_ex", function(a) return (sk.linalg.lu_factor(a)) end, { { 2, 3, 3 } } },
  { "linalg_lu_factor_ex (wide, tall)", function(a, b) return { (sk.linalg.lu_factor(a)), (sk.linalg.lu_factor(b)) } end, { { 3, 4 }, { 4, 3 } } },
  { "linalg_lu_solve", function(a, b)
    local LU, piv = sk.linalg.lu_factor(a + I3 * 3)
    return { sk.linalg.lu_solve(LU, piv, b), sk.linalg.lu_solve(LU, piv, b, { adjoint = true }) }
  end, { { 3, 3 }, { 3, 2 } } },
  { "linalg_lu_solve (left = false)", function(a, b)
    local LU, piv = sk.linalg.lu_factor(a + I3 * 3)
    return { sk.linalg.lu_solve(LU, piv, b, { left = false }), sk.linalg.lu_solve(LU, piv, b, { left = false, adjoint = true }) }
  end, { { 2, 3, 3 }, { 2, 3 } } },
  { "linalg_qr", function(a) return { sk.linalg.qr(a) } end, { { 4, 3 } }, gg = true },
  { "linalg_qr (square, batch)", function(a) return { sk.linalg.qr(a) } end, { { 2, 3, 3 } } },
  { "linalg_qr (wide, complete)", function(a) return { sk.linalg.qr(a, "complete") } end, { { 3, 5 } } },
  -- the eigenvectors' and singular vectors' signs are free: the losses read squares of them
  { "_linalg_eigh", function(a) local l, v = sk.linalg.eigh(a + a:transpose(-2, -1)); return { l, v * v } end, { { 2, 3, 3 } }, gg = true },
  { "_linalg_eigh (eigvalsh)", function(a) return sk.linalg.eigvalsh(a + a:transpose(-2, -1)) end, { { 4, 4 } } },
  { "linalg_eig", function(a) local l, v = sk.linalg.eig(a * 0.2 + D3); return { l, v * v } end, { { 2, 3, 3 } } },
  { "linalg_eigvals", function(a) return sk.linalg.eigvals(a * 0.2 + D3) end, { { 3, 3 } } },
  { "_linalg_svd", function(a) local u, s, vh = sk.linalg.svd(a, { full_matrices = false }); return { u * u, s, vh * vh } end, { { 4, 3 } }, gg = true },
  { "_linalg_svd (wide, batch)", function(a) local u, s, vh = sk.linalg.svd(a, { full_matrices = false }); return { u * u, s, vh * vh } end, { { 2, 3, 5 } } },
  { "_linalg_svd (full_matrices, square)", function(a) local u, s, vh = sk.linalg.svd(a); return { u * u, s, vh * vh } end, { { 3, 3 } } },
  { "_linalg_svd (svdvals)", function(a) return sk.linalg.svdvals(a) end, { { 3, 4 } } },
  { "linalg_householder_product", function(a, t) return sk.linalg.householder_product(a, t) end, { { 4, 3 }, { 3 } }, gg = true },
  { "linalg_householder_product (batch, k < n)", function(a, t) return sk.linalg.householder_product(a, t) end, { { 2, 5, 3 }, { 2, 2 } } },
  { "linalg_householder_product (square)", function(a, t) return sk.orgqr(a, t) end, { { 3, 3 }, { 3 } } },
  { "linalg_pinv (over svd)", function(a) return sk.linalg.pinv(a) end, { { 4, 3 } } },
  -- }====
}

local function leaf(shape, row, seed)
  sk.manual_seed(seed)
  local t = sk.randn(shape, { dtype = "float64" })
  if row.pos then t = t:abs() + 0.5 end
  if row.unit then t = t:tanh() * 0.9 end
  if row.away then t = t:sign() * (t:abs() + 0.2) end
  if row.zero then t = t * 0.3 + 0.5 end -- away from the jumps of floor
  if row.distinct then -- values at least 0.05 apart (a max has one argument), in a shuffled order
    local n = t:numel()
    t = (sk.randperm(n, { dtype = "float64" }) * 0.05 - n * 0.025):reshape(shape)
  end
  if row.smooth then -- remainder, fmod: dividends and divisors whose ratios stay away from integers
    local k = sk.arange(t:numel(), { dtype = "float64" }):reshape(shape)
    t = seed % 10 == 1 and k * 0.37 + 0.3 or k * 0.11 + 2.5
  end
  return t:requires_grad_()
end

local function rev(n) local p = {} for i = 1, n do p[i] = n - i end return p end

-- the inputs of one variant: the leaves to check, and the tensors given to fn
local function variant(row, kind)
  local leaves, args = {}, {}
  for i, shape in ipairs(row[3]) do
    local n = #shape
    if kind == "noncontig" and n >= 2 then
      local r = {}
      for d = 1, n do r[d] = shape[n - d + 1] end
      leaves[i], args[i] = leaf(r, row, 10 + i), function(l) return l:permute(rev(n)) end
    elseif kind == "expanded" and n >= 1 then
      local one = {}
      for d = 1, n do one[d] = shape[d] end
      one[1] = 1
      leaves[i], args[i] = leaf(one, row, 20 + i), function(l) return l:expand(shape) end
    else
      leaves[i], args[i] = leaf(shape, row, 30 + i), function(l) return l end
    end
  end
  local function fn(...)
    local xs = table.pack(...)
    for i = 1, xs.n do xs[i] = args[i](xs[i]) end
    return row[2](table.unpack(xs, 1, xs.n))
  end
  return fn, leaves
end

describe("gradcheck of every formula (float64, finite differences)", function()
  for ri, row in ipairs(ROWS) do
    local kinds = { "contiguous", "noncontig" }
    if row.bcast then kinds[#kinds + 1] = "expanded" end
    for ki, kind in ipairs(kinds) do
      local run_it = h.sampled(ri, ki) and it or function() end -- SK_SPEC_SAMPLE (spec/helper.lua)
      run_it(row[1] .. " (" .. kind .. ")", function()
        local fn, inputs = variant(row, kind)
        assert.is_true(sk.autograd.gradcheck(fn, inputs))
      end)
    end
    if row.gg and h.sampled(ri) then
      it(row[1] .. " (gradgradcheck)", function()
        local fn, inputs = variant(row, "contiguous")
        assert.is_true(sk.autograd.gradgradcheck(fn, inputs))
      end)
    end
  end

  it("refuses the linalg backward formulas' undefined cases with PyTorch's texts", function()
    local a = sk.randn({ 4, 3 }, { dtype = "float64", requires_grad = true })
    local _, r = sk.linalg.qr(a, "r")
    assert.matches("The derivative of linalg.qr depends on Q, which is not computed when mode='r'", h.err(function() r:sum():backward() end), 1, true)
    local q = sk.linalg.qr(a, "complete")
    assert.matches("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.", h.err(function() q:sum():backward() end), 1, true)
  end)

  it("reports the first mismatching element of a wrong gradient", function()
    local F = function(a) return a:exp() end
    local x = sk.tensor({ 0.5, 1.0 }, { dtype = "float64", requires_grad = true })
    -- a hook that doubles the gradient makes the analytical Jacobian wrong
    local wrong = function(a) local y = a * 1; y:register_hook(function(g) return g * 2 end); return F(y) end
    local msg = h.err(sk.autograd.gradcheck, wrong, { x })
    assert.matches("Jacobian mismatch for output 0 with respect to input 0, at output element 0 and input element 0", msg, 1, true)
    assert.is_false(sk.autograd.gradcheck(wrong, { x }, { raise_exception = false }))
  end)
end)
