-- spec/linalg_lapack_spec.lua — sk.linalg's LAPACK ops: inv, solve, cholesky, lu, det, slogdet,
-- solve_triangular and their _ex forms, aliases, batches, layouts, Meta shapes and errors.
-- Every check is an identity computed in plain Lua (A·A⁻¹ = I, residuals, L·Lᵀ = A, P·L·U = A)
-- or a closed form (the determinant of a triangular or permutation matrix). Tolerances are
-- k · n · eps · cond(A), with cond(A) bounded by construction: the inputs are diagonally
-- dominant (cond ≤ (d + r) / (d - r) for diagonal d and off-diagonal row sums r).
local h = require "spec.helper"
local sk = h.sk
-- float64 unless told: the literal tables below hold integers
local function T(x, o)
  o = o or {}
  if not o.dtype then o = { dtype = "float64" } end
  return sk.tensor(x, o)
end

local EPS = { float32 = 1.1920929e-07, float64 = 2.220446049250313e-16 }

-- {{...}} of n rows, k columns from f(i, j) (1-based).
local function mat(n, k, f)
  local r = {}
  for i = 1, n do r[i] = {} for j = 1, k do r[i][j] = f(i, j) end end
  return r
end
local function matmul(a, b)
  return mat(#a, #b[1], function(i, j)
    local s = 0
    for kk = 1, #b do s = s + a[i][kk] * b[kk][j] end
    return s
  end)
end
local function transpose(a) return mat(#a[1], #a, function(i, j) return a[j][i] end) end
local function eye(n) return mat(n, n, function(i, j) return i == j and 1 or 0 end) end
local function maxdiff(a, b)
  local m = 0
  for i = 1, #a do for j = 1, #a[i] do m = math.max(m, math.abs(a[i][j] - b[i][j])) end end
  return m
end
local function maxabs(a)
  local m = 0
  for i = 1, #a do for j = 1, #a[i] do m = math.max(m, math.abs(a[i][j])) end end
  return m
end

-- A diagonally dominant n x n matrix (off-diagonal entries in [-1, 1), diagonal n + 1 with a
-- sign): cond ≤ (2n) / 2 = n in the infinity norm.
local function dd(n, seed)
  local rnd = h.lcg(seed)
  return mat(n, n, function(i, j)
    if i == j then return (i % 2 == 0 and -1 or 1) * (n + 1) end
    return rnd(-1, 1)
  end)
end
-- A symmetric positive-definite matrix: the symmetric part of dd with a positive diagonal.
local function spd(n, seed)
  local a = dd(n, seed)
  return mat(n, n, function(i, j) return i == j and n + 1 or (a[i][j] + a[j][i]) / 2 end)
end
local function tol(dtype, n, cond) return 50 * n * EPS[dtype] * cond end

-- The list of matrices of a batched table (nested to any depth) in row-major order.
local function matrices(t, out)
  out = out or {}
  if type(t[1][1]) == "number" then out[#out + 1] = t return out end
  for _, s in ipairs(t) do matrices(s, out) end
  return out
end
-- A batch of matrices as a nested table of shape `batch` .. {n, k}, each from gen(index).
local function batch_of(batch, gen)
  local idx = 0
  local function build(d)
    if d > #batch then idx = idx + 1 return gen(idx) end
    local r = {}
    for i = 1, batch[d] do r[i] = build(d + 1) end
    return r
  end
  return build(1)
end

local function meta(shape, dtype) return sk.empty(shape, { device = "meta", dtype = dtype or "float32" }) end

describe("linalg.inv", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("gives A·inv(A) = I and inv(A)·A = I for " .. dt, function()
      for _, n in ipairs { 1, 2, 5, 17 } do
        local a = dd(n, n)
        local inv = sk.linalg.inv(T(a, { dtype = dt }))
        assert.equal(dt, inv:dtype())
        local x = inv:totable()
        assert.is_true(maxdiff(matmul(a, x), eye(n)) <= tol(dt, n, n), "n = " .. n)
        assert.is_true(maxdiff(matmul(x, a), eye(n)) <= tol(dt, n, n), "n = " .. n)
      end
    end)
  end

  it("inverts each matrix of a {2, 3, 4, 4} batch, and a transposed (non-contiguous) input", function()
    local b = batch_of({ 2, 3 }, function(i) return dd(4, i) end)
    local inv = sk.linalg.inv(T(b))
    assert.same({ 2, 3, 4, 4 }, inv:shape())
    local as, xs = matrices(b), matrices(inv:totable())
    for i = 1, 6 do assert.is_true(maxdiff(matmul(as[i], xs[i]), eye(4)) <= tol("float64", 4, 4)) end
    local at = T(b):transpose(-2, -1)
    assert.is_false(at:is_contiguous())
    local xt = matrices(sk.linalg.inv(at):totable())
    for i = 1, 6 do assert.is_true(maxdiff(matmul(transpose(as[i]), xt[i]), eye(4)) <= tol("float64", 4, 4)) end
  end)

  it("is also sk.inverse and the inverse method; empty matrices give empty results", function()
    local a = dd(3, 7)
    for _, x in ipairs { sk.inverse(T(a)), T(a):inverse() } do
      assert.is_true(maxdiff(matmul(a, x:totable()), eye(3)) <= tol("float64", 3, 3))
    end
    assert.same({ 2, 0, 0 }, sk.linalg.inv(sk.zeros({ 2, 0, 0 })):shape())
  end)

  it("raises PyTorch's error for a singular matrix, naming the batch element", function()
    local s = { { 1, 2 }, { 2, 4 } }
    assert.matches("sk.linalg_inv: The diagonal element 2 is zero, the inversion could not be completed because the " ..
                   "input matrix is singular.", h.err(sk.linalg.inv, T(s)), 1, true)
    assert.matches("sk.linalg_inv: (Batch element 1): The diagonal element 2 is zero", h.err(sk.linalg.inv, T { eye(2), s }), 1, true)
    assert.matches("sk.linalg_inv_ex: The diagonal element 2 is zero", h.err(sk.linalg.inv_ex, T(s), { check_errors = true }), 1, true)
  end)

  it("inv_ex returns info (int32) and does not raise", function()
    local inv, info = sk.linalg.inv_ex(T { eye(2), { { 1, 2 }, { 2, 4 } }, { { 0, 0 }, { 0, 0 } } })
    assert.same({ 3, 2, 2 }, inv:shape())
    assert.equal("int32", info:dtype())
    assert.same({ 0, 2, 1 }, info:totable())
  end)

  it("refuses non-square, 1-d and non-float inputs with PyTorch's texts", function()
    assert.matches("sk.linalg_inv: A must be batches of square matrices, but they are 2 by 3 matrices",
                   h.err(sk.linalg.inv, sk.ones({ 2, 3 })), 1, true)
    assert.matches("sk.linalg_inv: The input tensor A must have at least 2 dimensions.", h.err(sk.linalg.inv, sk.ones({ 3 })), 1, true)
    assert.matches("sk.linalg_inv: Expected a floating point or complex tensor as input. Got Long",
                   h.err(sk.linalg.inv, sk.ones({ 2, 2 }, { dtype = "int64" })), 1, true)
  end)
end)

describe("linalg.solve", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("solves AX = B with a small residual for " .. dt, function()
      local n = 6
      local a, b = dd(n, 3), mat(n, 2, function(i, j) return i - 2 * j end)
      local x = sk.linalg.solve(T(a, { dtype = dt }), T(b, { dtype = dt })):totable()
      assert.is_true(maxdiff(matmul(a, x), b) <= tol(dt, n, n) * maxabs(b) * 4)
    end)
  end

  it("solves XA = B with left = false and a vector right-hand side", function()
    local a, b = dd(4, 5), mat(3, 4, function(i, j) return i + j end)
    local x = sk.linalg.solve(T(a), T(b), { left = false }):totable()
    assert.is_true(maxdiff(matmul(x, a), b) <= 1e-12)
    local v = sk.linalg.solve(T(a), T { 1, 2, 3, 4 })
    assert.same({ 4 }, v:shape())
    local r = matmul(a, transpose({ v:totable() }))
    assert.is_true(maxdiff(r, { { 1 }, { 2 }, { 3 }, { 4 } }) <= 1e-12)
  end)

  it("broadcasts the batches of A and B, and reads transposed operands", function()
    local as = batch_of({ 2, 1 }, function(i) return dd(3, 10 + i) end)
    local bs = batch_of({ 4 }, function(i) return mat(3, 2, function(r, c) return r * i - c end) end)
    local x = sk.linalg.solve(T(as), T(bs))
    assert.same({ 2, 4, 3, 2 }, x:shape())
    local xt = x:totable()
    for i = 1, 2 do for j = 1, 4 do
      assert.is_true(maxdiff(matmul(as[i][1], xt[i][j]), bs[j]) <= 1e-12)
    end end
    local at = T(as[1][1]):t()
    local y = sk.linalg.solve(at, T(bs[1])):totable()
    assert.is_true(maxdiff(matmul(transpose(as[1][1]), y), bs[1]) <= 1e-12)
  end)

  it("raises for a singular A and incompatible shapes; solve_ex returns info", function()
    local s = { { 1, 2 }, { 2, 4 } }
    assert.matches("sk.linalg_solve: The solver failed because the input matrix is singular.",
                   h.err(sk.linalg.solve, T(s), T { 1, 1 }), 1, true)
    assert.matches("sk.linalg_solve: (Batch element 0): The solver failed", h.err(sk.linalg.solve, T { s }, T { { 1, 1 } }), 1, true)
    assert.matches("sk.linalg_solve: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)",
                   h.err(sk.linalg.solve, sk.eye(2, { dtype = "float32" }), sk.ones({ 3, 1 })), 1, true)
    local _, info = sk.linalg.solve_ex(T { eye(2), s }, T { { 1, 1 }, { 1, 1 } })
    assert.same({ 0, 2 }, info:totable())
  end)
end)

describe("linalg.cholesky", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("gives a lower L with L·Lᵀ = A (and an upper U with Uᵀ·U = A) for " .. dt, function()
      local n = 7
      local a = spd(n, 4)
      local L = sk.linalg.cholesky(T(a, { dtype = dt })):totable()
      for i = 1, n do for j = i + 1, n do assert.equal(0, L[i][j]) end end
      assert.is_true(maxdiff(matmul(L, transpose(L)), a) <= tol(dt, n, n) * (n + 1))
      local U = sk.linalg.cholesky(T(a, { dtype = dt }), { upper = true }):totable()
      for i = 1, n do for j = 1, i - 1 do assert.equal(0, U[i][j]) end end
      assert.is_true(maxdiff(matmul(transpose(U), U), a) <= tol(dt, n, n) * (n + 1))
    end)
  end

  it("factors a {2, 3, 4, 4} batch and a transposed input; sk.cholesky and the method agree", function()
    local b = batch_of({ 2, 3 }, function(i) return spd(4, i) end)
    local L = sk.linalg.cholesky(T(b):transpose(-2, -1))
    assert.same({ 2, 3, 4, 4 }, L:shape())
    local as, ls = matrices(b), matrices(L:totable())
    for i = 1, 6 do assert.is_true(maxdiff(matmul(ls[i], transpose(ls[i])), as[i]) <= 1e-13) end
    assert.same(sk.linalg.cholesky(T(as[1])):totable(), sk.cholesky(T(as[1])):totable())
    assert.same(sk.linalg.cholesky(T(as[1]), { upper = true }):totable(), T(as[1]):cholesky(true):totable())
  end)

  it("raises PyTorch's errors for a matrix that is not positive-definite", function()
    local bad = { { 1, 2 }, { 2, 1 } }
    assert.matches("sk.linalg_cholesky: The factorization could not be completed because the input is not " ..
                   "positive-definite (the leading minor of order 2 is not positive-definite).",
                   h.err(sk.linalg.cholesky, T(bad)), 1, true)
    assert.matches("sk.linalg_cholesky: (Batch element 1): The factorization", h.err(sk.linalg.cholesky, T { eye(2), bad }), 1, true)
    assert.matches("cholesky: The factorization", h.err(sk.cholesky, T(bad)), 1, true)
    assert.matches("sk.linalg_cholesky: The input tensor A must have at least 2 dimensions.",
                   h.err(sk.linalg.cholesky, sk.ones({ 3 })), 1, true)
    local _, info = sk.linalg.cholesky_ex(T { eye(2), bad, { { -1, 0 }, { 0, 1 } } })
    assert.equal("int32", info:dtype())
    assert.same({ 0, 2, 1 }, info:totable())
  end)
end)

describe("linalg.det, slogdet, logdet", function()
  it("gives the product of the diagonal for triangular matrices", function()
    local u = mat(4, 4, function(i, j) return j > i and (i + j) or j == i and i + 0.5 or 0 end)
    assert.is_true(math.abs(sk.linalg.det(T(u)):item() - 1.5 * 2.5 * 3.5 * 4.5) <= 1e-12)
    assert.is_true(math.abs(sk.det(T(transpose(u))):item() - 1.5 * 2.5 * 3.5 * 4.5) <= 1e-12)
    local f = sk.linalg.det(T(u, { dtype = "float32" }))
    assert.equal("float32", f:dtype())
    assert.is_true(math.abs(f:item() - 59.0625) <= 59.0625 * 4 * EPS.float32 * 4)
  end)

  it("gives ±1 for permutation matrices (the parity) and 0 for a singular matrix", function()
    local swap = { { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 } }
    local cyc = { { 0, 1, 0 }, { 0, 0, 1 }, { 1, 0, 0 } }
    assert.same({ -1, 1, 0 }, sk.linalg.det(T { swap, cyc, { { 1, 2, 3 }, { 2, 4, 6 }, { 0, 0, 1 } } }):totable())
    local sign, logabs = sk.linalg.slogdet(T { swap, cyc, { { 1, 2, 3 }, { 2, 4, 6 }, { 0, 0, 1 } } })
    assert.same({ -1, 1, 0 }, sign:totable())
    local l = logabs:totable()
    assert.same({ 0, 0, -math.huge }, l)
  end)

  it("slogdet and logdet: log|det| of diag(2, -3, 0.5), logdet nan for det < 0 and -inf for det = 0", function()
    local d = { { 2, 0, 0 }, { 0, -3, 0 }, { 0, 0, 0.5 } }
    local sign, logabs = sk.slogdet(T(d))
    assert.equal(-1, sign:item())
    assert.is_true(math.abs(logabs:item() - math.log(3)) <= 1e-15)
    local ld = sk.logdet(T { d, { { 2, 0, 0 }, { 0, 3, 0 }, { 0, 0, 1 } }, eye(3) })
    local v = ld:totable()
    assert.is_true(v[1] ~= v[1])
    assert.is_true(math.abs(v[2] - math.log(6)) <= 1e-15)
    assert.equal(0, v[3])
    assert.equal(-math.huge, sk.logdet(T { { 1, 1 }, { 1, 1 } }):item())
  end)

  it("batches over {2, 3, 4, 4}: det(A) = 1 / det(inv(A)) on a transposed input", function()
    local b = batch_of({ 2, 3 }, function(i) return dd(4, 20 + i) end)
    local at = T(b):transpose(-2, -1)
    local d = sk.linalg.det(at)
    assert.same({ 2, 3 }, d:shape())
    local as = matrices(b)
    local dv = d:totable()
    -- the same via the Laplace expansion in plain Lua
    local function det(m)
      if #m == 1 then return m[1][1] end
      local s = 0
      for j = 1, #m do
        local minor = {}
        for i = 2, #m do
          local r = {}
          for k = 1, #m do if k ~= j then r[#r + 1] = m[i][k] end end
          minor[#minor + 1] = r
        end
        s = s + (j % 2 == 1 and 1 or -1) * m[1][j] * det(minor)
      end
      return s
    end
    for i = 1, 2 do for j = 1, 3 do
      local want = det(as[(i - 1) * 3 + j])
      assert.is_true(math.abs(dv[i][j] - want) <= 1e-12 * math.abs(want))
    end end
  end)

  it("refuses integer input", function()
    assert.matches("sk.linalg_det: Expected a floating point or complex tensor as input. Got Long",
                   h.err(sk.linalg.det, sk.ones({ 2, 2 }, { dtype = "int64" })), 1, true)
    assert.matches("sk.linalg_slogdet: Expected a floating point or complex tensor as input. Got Int",
                   h.err(sk.linalg.slogdet, sk.ones({ 2, 2 }, { dtype = "int32" })), 1, true)
    assert.matches("sk.linalg_det: A must be batches of square matrices, but they are 2 by 3 matrices",
                   h.err(sk.linalg.det, sk.ones({ 2, 3 })), 1, true)
  end)
end)

describe("linalg.lu_factor, lu, lu_solve", function()
  it("lu gives P·L·U = A with a unit lower L and an upper U, square and not", function()
    for _, shape in ipairs { { 4, 4 }, { 3, 5 }, { 5, 3 } } do
      local r, c = shape[1], shape[2]
      local rnd = h.lcg(r * 10 + c)
      local a = mat(r, c, function() return rnd(-2, 2) end)
      local P, L, U = sk.linalg.lu(T(a))
      local k = math.min(r, c)
      assert.same({ r, r }, P:shape())
      assert.same({ r, k }, L:shape())
      assert.same({ k, c }, U:shape())
      local l, u = L:totable(), U:totable()
      for i = 1, r do for j = i, k do assert.equal(i == j and 1 or 0, l[i][j]) end end
      for i = 1, k do for j = 1, i - 1 do assert.equal(0, u[i][j]) end end
      assert.is_true(maxdiff(matmul(P:totable(), matmul(l, u)), a) <= 1e-14 * 8)
    end
  end)

  it("lu_factor's LU and pivots solve systems through lu_solve (left, right, adjoint)", function()
    local a = dd(5, 9)
    local LU, piv = sk.linalg.lu_factor(T(a))
    assert.equal("int32", piv:dtype())
    assert.same({ 5 }, piv:shape())
    local b = mat(5, 2, function(i, j) return i * j - 3 end)
    local x = sk.linalg.lu_solve(LU, piv, T(b)):totable()
    assert.is_true(maxdiff(matmul(a, x), b) <= 1e-13)
    x = sk.linalg.lu_solve(LU, piv, T(b), { adjoint = true }):totable()
    assert.is_true(maxdiff(matmul(transpose(a), x), b) <= 1e-13)
    local bt = transpose(b)
    x = sk.linalg.lu_solve(LU, piv, T(bt), { left = false }):totable()
    assert.is_true(maxdiff(matmul(x, a), bt) <= 1e-13)
    x = sk.linalg.lu_solve(LU, piv, T(bt), { left = false, adjoint = true }):totable()
    assert.is_true(maxdiff(matmul(x, transpose(a)), bt) <= 1e-13)
  end)

  it("lu_factor raises for a singular matrix, lu_factor_ex returns info", function()
    local s = { { 1, 2 }, { 2, 4 } }
    assert.matches("sk.linalg_lu_factor: U[2,2] is zero and using it on lu_solve would result in a division by zero.",
                   h.err(sk.linalg.lu_factor, T(s)), 1, true)
    local LU, piv, info = sk.linalg.lu_factor_ex(T { eye(2), s })
    assert.same({ 2, 2, 2 }, LU:shape())
    assert.same({ 2, 2 }, piv:shape())
    assert.same({ 0, 2 }, info:totable())
    assert.matches("sk.linalg_lu_factor: LU without pivoting is not implemented on the CPU",
                   h.err(sk.linalg.lu_factor, T(s), { pivot = false }), 1, true)
  end)

  it("lu_solve refuses pivots out of range instead of handing them to LAPACK", function()
    local LU, piv = sk.linalg.lu_factor(T(dd(3, 1)))
    assert.matches("pivots must lie in [1, 3]",
                   h.err(sk.linalg.lu_solve, LU, T({ 0, 9, 1 }, { dtype = "int32" }), sk.ones({ 3, 1 }, { dtype = "float64" })), 1, true)
    assert.matches("sk.linalg_lu_solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x1)",
                   h.err(sk.linalg.lu_solve, LU, piv, sk.ones({ 2, 1 }, { dtype = "float64" })), 1, true)
  end)
end)

describe("linalg.solve_triangular", function()
  it("solves with the upper or lower triangle, left or right, unit diagonal or not", function()
    local a = dd(4, 2)
    local b = mat(4, 3, function(i, j) return i - j end)
    local bt = transpose(b)
    for _, upper in ipairs { true, false } do
      for _, unit in ipairs { false, true } do
        local t = mat(4, 4, function(i, j)
          if i == j then return unit and 1 or a[i][j] end
          if (upper and j > i) or (not upper and j < i) then return a[i][j] end
          return 0
        end)
        local x = sk.linalg.solve_triangular(T(a), T(b), { upper = upper, unitriangular = unit }):totable()
        assert.is_true(maxdiff(matmul(t, x), b) <= 1e-13)
        x = sk.linalg.solve_triangular(T(a), T(bt), { upper = upper, left = false, unitriangular = unit }):totable()
        assert.is_true(maxdiff(matmul(x, t), bt) <= 1e-13)
      end
    end
  end)

  it("broadcasts batches and refuses mixed dtypes", function()
    local x = sk.linalg.solve_triangular(T { eye(3), eye(3) }, sk.ones({ 3, 1, 3, 2 }, { dtype = "float64" }), { upper = true })
    assert.same({ 3, 2, 3, 2 }, x:shape())
    assert.matches("sk.linalg_solve_triangular: Expected A and B to have the same dtype",
                   h.err(sk.linalg.solve_triangular, sk.eye(2), sk.ones({ 2, 2 }, { dtype = "float64" }), { upper = true }), 1, true)
  end)
end)

describe("sk.linalg on the Meta backend", function()
  it("gives every op's shapes and dtypes", function()
    local A = meta { 4, 3, 3 }
    local inv, info = sk.linalg.inv_ex(A)
    assert.same({ 4, 3, 3 }, inv:shape())
    assert.same({ 4 }, info:shape())
    assert.equal("int32", info:dtype())
    assert.same({ 4, 3, 3 }, sk.linalg.inv(A):shape())
    assert.same({ 4, 3, 3 }, sk.linalg.cholesky(A):shape())
    assert.same({ 4 }, sk.linalg.det(A):shape())
    assert.same({ 4 }, sk.logdet(A):shape())
    local s, l = sk.linalg.slogdet(A)
    assert.same({ 4 }, s:shape())
    assert.same({ 4 }, l:shape())
    assert.same({ 2, 4, 3, 5 }, sk.linalg.solve(A, meta { 2, 1, 3, 5 }):shape())
    assert.same({ 4, 3 }, sk.linalg.solve(A, meta { 4, 3 }):shape())
    local LU, piv, inf2 = sk.linalg.lu_factor_ex(meta { 2, 3, 5 })
    assert.same({ 2, 3, 5 }, LU:shape())
    assert.same({ 2, 3 }, piv:shape())
    assert.same({ 2 }, inf2:shape())
    local P, L, U = sk.linalg.lu(meta { 5, 3 })
    assert.same({ 5, 5 }, P:shape())
    assert.same({ 5, 3 }, L:shape())
    assert.same({ 3, 3 }, U:shape())
    assert.same({ 4, 3, 2 }, sk.linalg.lu_solve(A, sk.empty({ 4, 3 }, { device = "meta", dtype = "int32" }), meta { 3, 2 }):shape())
    assert.same({ 4, 3, 2 }, sk.linalg.solve_triangular(A, meta { 3, 2 }, { upper = false }):shape())
  end)
end)

describe("sk.linalg on NaN and inf input", function()
  it("returns without crashing", function()
    local nan = 0 / 0
    local a = T { { nan, 1 }, { 1, math.huge } }
    for _, f in ipairs { sk.linalg.inv_ex, sk.linalg.cholesky_ex, sk.linalg.det, sk.linalg.slogdet, sk.linalg.lu_factor_ex, sk.linalg.lu } do
      f(a)
    end
    local _, info = sk.linalg.inv_ex(a) -- LAPACKE's NaN scan is off: no "illegal argument"
    assert.is_true(info:item() >= 0)
    sk.linalg.solve_ex(a, T { 1, 2 })
    sk.linalg.solve_triangular(a, T { { 1 }, { 2 } }, { upper = true })
  end)
end)

-- {==== Decompositions ====
local function is_orthonormal_cols(q, tl)
  local qtq = matmul(transpose(q), q)
  return maxdiff(qtq, eye(#qtq)) <= tl
end
local function rnd_mat(r, c, seed)
  local rnd = h.lcg(seed)
  return mat(r, c, function() return rnd(-2, 2) end)
end

describe("linalg.qr", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("gives Q with orthonormal columns, R upper triangular and QR = A (" .. dt .. ")", function()
      for _, shape in ipairs { { 5, 3 }, { 3, 5 }, { 4, 4 } } do
        local r, c = shape[1], shape[2]
        local a = rnd_mat(r, c, r + c)
        local k = math.min(r, c)
        for _, mode in ipairs { "reduced", "complete" } do
          local Q, R = sk.linalg.qr(T(a, { dtype = dt }), { mode = mode })
          local qc = mode == "complete" and r or k
          assert.same({ r, qc }, Q:shape())
          assert.same({ qc, c }, R:shape())
          local q, rr = Q:totable(), R:totable()
          for i = 1, qc do for j = 1, math.min(i - 1, c) do assert.equal(0, rr[i][j]) end end
          local tl = 50 * math.max(r, c) * EPS[dt] * 4
          assert.is_true(is_orthonormal_cols(q, tl), "QᵀQ = I " .. shape[1] .. "x" .. shape[2] .. " " .. mode .. " " .. maxdiff(matmul(transpose(q), q), eye(#q[1])) .. " " .. tl)
          assert.is_true(maxdiff(matmul(q, rr), a) <= tl * 4, "QR = A " .. shape[1] .. "x" .. shape[2] .. " " .. mode .. " " .. maxdiff(matmul(q, rr), a))
        end
      end
    end)
  end

  it("mode 'r' gives an empty Q; sk.qr(some = false) is 'complete'; batches and transposed input", function()
    local a = rnd_mat(4, 3, 1)
    local Q, R = sk.linalg.qr(T(a), { mode = "r" })
    assert.same({ 0 }, Q:shape())
    assert.same({ 3, 3 }, R:shape())
    local Q2 = sk.qr(T(a), false)
    assert.same({ 4, 4 }, Q2:shape())
    local b = batch_of({ 2, 3 }, function(i) return rnd_mat(4, 4, i) end)
    local Qb, Rb = sk.linalg.qr(T(b):transpose(-2, -1))
    assert.same({ 2, 3, 4, 4 }, Qb:shape())
    local as, qs, rs = matrices(b), matrices(Qb:totable()), matrices(Rb:totable())
    for i = 1, 6 do assert.is_true(maxdiff(matmul(qs[i], rs[i]), transpose(as[i])) <= 1e-13) end
    assert.matches("qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or 'complete'",
                   h.err(sk.linalg.qr, T(a), { mode = "x" }), 1, true)
  end)
end)

describe("linalg.svd, svdvals", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("gives U·diag(S)·Vh = A with orthonormal U, Vh and S descending (" .. dt .. ")", function()
      for _, shape in ipairs { { 5, 3 }, { 3, 5 }, { 4, 4 } } do
        local r, c = shape[1], shape[2]
        local k = math.min(r, c)
        local a = rnd_mat(r, c, 3 * r + c)
        for _, full in ipairs { false, true } do
          local U, S, Vh = sk.linalg.svd(T(a, { dtype = dt }), full)
          local uc, vr = full and r or k, full and c or k
          assert.same({ r, uc }, U:shape())
          assert.same({ k }, S:shape())
          assert.same({ vr, c }, Vh:shape())
          local u, sv, vh = U:totable(), S:totable(), Vh:totable()
          for i = 2, k do assert.is_true(sv[i - 1] >= sv[i]) end
          local tl = 50 * math.max(r, c) * EPS[dt] * 8
          assert.is_true(is_orthonormal_cols(u, tl))
          assert.is_true(is_orthonormal_cols(transpose(vh), tl))
          local us = mat(r, k, function(i, j) return u[i][j] * sv[j] end)
          local vk = mat(k, c, function(i, j) return vh[i][j] end)
          assert.is_true(maxdiff(matmul(us, vk), a) <= tl * 4)
        end
      end
    end)
  end

  it("svdvals of diag(3, -1, 2) are 3, 2, 1; sk.svd gives V; batches", function()
    local d = { { 3, 0, 0 }, { 0, -1, 0 }, { 0, 0, 2 } }
    assert.is_true(h.close(sk.linalg.svdvals(T(d)):totable(), { 3, 2, 1 }, 1e-15))
    local U, S, V = sk.svd(T(d))
    local u, sv, v = U:totable(), S:totable(), V:totable()
    local us = mat(3, 3, function(i, j) return u[i][j] * sv[j] end)
    assert.is_true(maxdiff(matmul(us, transpose(v)), d) <= 1e-14)
    local b = batch_of({ 2, 3 }, function(i) return rnd_mat(4, 3, i) end)
    assert.same({ 2, 3, 3 }, sk.linalg.svdvals(T(b)):shape())
  end)

  -- the kernel decomposes Aᵀ and writes the factors straight into column-major views of U and Vh
  -- where it can: the same bits must come out of every input layout and into every out layout
  it("gives the same factors, bit for bit, for every layout of A and of the outs (batched)", function()
    for _, full in ipairs { false, true } do
      local a = T(batch_of({ 2 }, function(i) return rnd_mat(5, 3, 7 + i) end))
      local U, S, Vh = sk.linalg.svd(a, full)
      local layouts = {
        a:transpose(-2, -1):contiguous():transpose(-2, -1),                       -- column-major
        sk.zeros({ 2, 5, 6 }, { dtype = "float64" }):narrow(2, 0, 3):copy_(a),     -- rows padded
        sk.zeros({ 5, 2, 3 }, { dtype = "float64" }):permute({ 1, 0, 2 }):copy_(a), -- batch inside
      }
      for _, x in ipairs(layouts) do
        local u, sv, vh = sk.linalg.svd(x, full)
        assert.same(U:totable(), u:totable())
        assert.same(S:totable(), sv:totable())
        assert.same(Vh:totable(), vh:totable())
      end
      local uc, vr = full and 5 or 3, 3
      local outs = {
        { sk.empty({ 2, uc, 5 }, { dtype = "float64" }):transpose(-2, -1), sk.empty({ 3, 2 }, { dtype = "float64" }):t(),
          sk.empty({ 2, 3, vr }, { dtype = "float64" }):transpose(-2, -1) },
        { sk.empty({ uc, 2, 5 }, { dtype = "float64" }):permute({ 1, 2, 0 }), sk.empty({ 2, 3 }, { dtype = "float64" }),
          sk.empty({ 2, vr, 4 }, { dtype = "float64" }):narrow(2, 1, 3) },
      }
      for _, o in ipairs(outs) do
        sk.linalg.svd(a, full, { out = o })
        assert.same(U:totable(), o[1]:totable())
        assert.same(S:totable(), o[2]:totable())
        assert.same(Vh:totable(), o[3]:totable())
      end
    end
  end)

  it("raises PyTorch's errors: non-finite input, a driver, integer input", function()
    assert.matches("sk.linalg_svd: The algorithm failed to converge because the input matrix contained non-finite values.",
                   h.err(sk.linalg.svd, T { { 0 / 0, 1 }, { 1, 1 } }), 1, true)
    assert.matches("keyword argument `driver=` is only supported on CUDA inputs", h.err(sk.linalg.svd, T(eye(2)), { driver = "gesvd" }), 1, true)
    assert.matches("linalg.svd: Expected a floating point or complex tensor as input. Got Long",
                   h.err(sk.linalg.svdvals, sk.ones({ 2, 2 }, { dtype = "int64" })), 1, true)
  end)
end)

describe("linalg.eigh, eigvalsh", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("gives A·V = V·diag(w), w ascending, V orthonormal (" .. dt .. ")", function()
      local n = 6
      local a = spd(n, 8)
      for i = 1, n do a[i][i] = a[i][i] - n end -- indefinite: eigenvalues of both signs
      local W, V = sk.linalg.eigh(T(a, { dtype = dt }))
      local w, v = W:totable(), V:totable()
      for i = 2, n do assert.is_true(w[i - 1] <= w[i]) end
      local tl = 50 * n * EPS[dt] * (n + 1)
      assert.is_true(is_orthonormal_cols(v, tl))
      assert.is_true(maxdiff(matmul(a, v), mat(n, n, function(i, j) return v[i][j] * w[j] end)) <= tl * 4)
      assert.is_true(h.close(sk.linalg.eigvalsh(T(a, { dtype = dt })):totable(), w, tl))
    end)
  end

  it("reads only the UPLO triangle", function()
    local lower = { { 2, 99 }, { 1, 2 } } -- symmetric part from the lower triangle: [[2, 1], [1, 2]]
    assert.is_true(h.close(sk.linalg.eigvalsh(T(lower)):totable(), { 1, 3 }, 1e-15))
    assert.is_true(h.close(sk.linalg.eigvalsh(T(transpose(lower)), "U"):totable(), { 1, 3 }, 1e-15))
    assert.matches("Expected UPLO argument to be 'L' or 'U', but got X", h.err(sk.linalg.eigh, T(lower), "X"), 1, true)
  end)
end)

describe("linalg.eig, eigvals (real eigenvalues only)", function()
  it("gives the eigenvalues of a triangular matrix and A·v = λ·v", function()
    local a = { { 2, 1, 0 }, { 0, -1, 4 }, { 0, 0, 5 } }
    local W, V = sk.linalg.eig(T(a))
    local w, v = W:totable(), V:totable()
    local sorted = { w[1], w[2], w[3] }
    table.sort(sorted)
    assert.is_true(h.close(sorted, { -1, 2, 5 }, 1e-14))
    assert.is_true(maxdiff(matmul(a, v), mat(3, 3, function(i, j) return v[i][j] * w[j] end)) <= 1e-13)
    local ev = sk.linalg.eigvals(T(a)):totable()
    table.sort(ev)
    assert.is_true(h.close(ev, { -1, 2, 5 }, 1e-14))
  end)

  it("refuses a matrix with complex eigenvalues, naming the batch element", function()
    local rot = { { 0, -1 }, { 1, 0 } }
    assert.matches("sk.linalg_eig: the matrix has complex eigenvalues, and sk has no complex dtypes", h.err(sk.linalg.eig, T(rot)), 1, true)
    assert.matches("sk.linalg_eigvals: (Batch element 1): the matrix has complex eigenvalues",
                   h.err(sk.linalg.eigvals, T { eye(2), rot }), 1, true)
  end)
end)

describe("sk.linalg decompositions on the Meta backend", function()
  it("give the shapes of the CPU's", function()
    local Q, R = sk.linalg.qr(meta { 2, 5, 3 })
    assert.same({ 2, 5, 3 }, Q:shape())
    assert.same({ 2, 3, 3 }, R:shape())
    local U, S, Vh = sk.linalg.svd(meta { 2, 5, 3 })
    assert.same({ 2, 5, 5 }, U:shape())
    assert.same({ 2, 3 }, S:shape())
    assert.same({ 2, 3, 3 }, Vh:shape())
    assert.same({ 4, 3 }, sk.linalg.svdvals(meta { 4, 3, 3 }):shape())
    local w, v = sk.linalg.eigh(meta { 4, 3, 3 })
    assert.same({ 4, 3 }, w:shape())
    assert.same({ 4, 3, 3 }, v:shape())
    local ew, ev = sk.linalg.eig(meta { 4, 3, 3 })
    assert.same({ 4, 3 }, ew:shape())
    assert.same({ 4, 3, 3 }, ev:shape())
    assert.same({ 4, 3 }, sk.linalg.eigvals(meta { 4, 3, 3 }):shape())
    assert.same({ 4, 3 }, sk.linalg.eigvalsh(meta { 4, 3, 3 }):shape())
  end)
end)

describe("sk.linalg decompositions on NaN input", function()
  it("return NaN (eigh, eig, qr) without reaching the iterative drivers", function()
    local a = T { { 0 / 0, 1 }, { 1, 1 } }
    local w = sk.linalg.eigvalsh(a):totable()
    assert.is_true(w[1] ~= w[1])
    local e = sk.linalg.eigvals(a):totable()
    assert.is_true(e[1] ~= e[1])
    sk.linalg.qr(a)
  end)
end)
-- }====

-- {==== Composites ====
describe("linalg.matrix_power, multi_dot, vecdot, vector_norm", function()
  it("matrix_power: A^0 = I, A^3 = A·A·A, A^-2 = inv(A)^2, batched", function()
    local a = dd(3, 5)
    assert.same(eye(3), sk.linalg.matrix_power(T(a), 0):totable())
    assert.is_true(maxdiff(sk.linalg.matrix_power(T(a), 3):totable(), matmul(a, matmul(a, a))) <= 1e-12)
    local a2 = matmul(a, a)
    local m = sk.linalg.matrix_power(T(a), -2):totable()
    assert.is_true(maxdiff(matmul(m, a2), eye(3)) <= 1e-13)
    assert.same({ 2, 3, 3 }, sk.linalg.matrix_power(T { a, a }, 5):shape())
    assert.same({ { 7 } }, sk.linalg.matrix_power(T({ { 7 } }, { dtype = "int64" }), 1):totable())
  end)

  it("multi_dot: the chained product, 1-d ends as row and column vectors", function()
    local a, b, c = mat(2, 3, function(i, j) return i + j end), mat(3, 4, function(i, j) return i - j end), mat(4, 2, function(i, j) return i * j end)
    assert.same(matmul(matmul(a, b), c), sk.linalg.multi_dot({ T(a), T(b), T(c) }):totable())
    local v = sk.linalg.multi_dot({ T { 1, 2 }, T(a), T { 1, 0, 1 } })
    assert.same({}, v:shape())
    assert.equal((1 * 2 + 2 * 3) + (1 * 4 + 2 * 5), v:item())
    assert.matches("multi_dot(): expected at least 2 tensors but got 1", h.err(sk.linalg.multi_dot, { T(a) }), 1, true)
  end)

  it("vecdot and vector_norm", function()
    assert.same({ 1 * 4 + 2 * 5 + 3 * 6, 0 }, sk.linalg.vecdot(T { { 1, 2, 3 }, { 0, 0, 0 } }, T { 4, 5, 6 }):totable())
    assert.equal(5, sk.linalg.vector_norm(T { { 3, 0 }, { 0, 4 } }):item())
    assert.same({ 3, 4 }, sk.linalg.vector_norm(T { { 3, 0 }, { 0, -4 } }, math.huge, 1):totable())
    assert.same({ { 7 } }, sk.linalg.vector_norm(T { { 3, 0 }, { 0, -4 } }, 1, nil, true):totable())
  end)
end)

describe("linalg.pinv, matrix_rank, pinverse", function()
  it("pinv of a full-rank tall matrix is its left inverse; of a rank-1 matrix A⁺ = Aᵀ/‖A‖²", function()
    local a = rnd_mat(5, 3, 2)
    local p = sk.linalg.pinv(T(a)):totable()
    assert.is_true(maxdiff(matmul(p, a), eye(3)) <= 1e-12)
    local r1 = { { 1, 2 }, { 2, 4 } } -- ‖A‖_F² = 25
    assert.is_true(maxdiff(sk.pinverse(T(r1)):totable(), mat(2, 2, function(i, j) return r1[j][i] / 25 end)) <= 1e-14)
    assert.same({ 3, 2 }, sk.linalg.pinv(sk.empty({ 2, 3 }, { device = "meta" })):shape())
  end)

  it("matrix_rank counts the singular values above the tolerance", function()
    assert.same({ 1, 2, 0 }, sk.linalg.matrix_rank(T { { { 1, 2 }, { 2, 4 } }, eye(2), { { 0, 0 }, { 0, 0 } } }):totable())
    assert.equal("int64", sk.linalg.matrix_rank(T(eye(2))):dtype())
    assert.equal(1, sk.linalg.matrix_rank(T { { 1, 0 }, { 0, 1e-3 } }, { atol = 0.01 }):item())
  end)
end)

describe("cholesky_solve, cholesky_inverse, triangular_solve", function()
  it("cholesky_solve(B, L) solves (L·Lᵀ)X = B; cholesky_inverse(L) is (L·Lᵀ)⁻¹", function()
    local a = spd(4, 6)
    local L = sk.linalg.cholesky(T(a))
    local b = mat(4, 2, function(i, j) return i + 2 * j end)
    local x = sk.cholesky_solve(T(b), L):totable()
    assert.is_true(maxdiff(matmul(a, x), b) <= 1e-12)
    local U = sk.linalg.cholesky(T(a), { upper = true })
    x = sk.cholesky_solve(T(b), U, true):totable()
    assert.is_true(maxdiff(matmul(a, x), b) <= 1e-12)
    assert.is_true(maxdiff(matmul(a, sk.cholesky_inverse(L):totable()), eye(4)) <= 1e-12)
  end)

  it("triangular_solve returns the solution and a copy of A", function()
    local u = { { 2, 1 }, { 0, 4 } }
    local x, c = sk.triangular_solve(T { { 4 }, { 8 } }, T(u))
    assert.same({ { 1 }, { 2 } }, x:totable())
    assert.same(u, c:totable())
    x = sk.triangular_solve(T { { 4 }, { 8 } }, T(u), true, true) -- uᵀ x = b
    assert.same({ { 2 }, { 1.5 } }, x:totable())
  end)
end)

describe("linalg.tensorinv, tensorsolve", function()
  it("tensorinv(A, 1) of a {4, 2, 2} tensor inverts its 4x4 reshape", function()
    local a = dd(4, 3)
    local flat = {}
    for i = 1, 4 do flat[i] = { { a[i][1], a[i][2] }, { a[i][3], a[i][4] } } end
    local inv = sk.linalg.tensorinv(T(flat), 1)
    assert.same({ 2, 2, 4 }, inv:shape())
    local m = inv:reshape({ 4, 4 }):totable()
    assert.is_true(maxdiff(matmul(a, m), eye(4)) <= 1e-13)
  end)

  it("tensorsolve solves A x = b over the trailing dims", function()
    local a = dd(6, 4)
    local t = {}
    for i = 1, 6 do t[i] = { { a[i][1], a[i][2], a[i][3] }, { a[i][4], a[i][5], a[i][6] } } end
    local b = { 1, 2, 3, 4, 5, 6 }
    local x = sk.linalg.tensorsolve(T(t), T(b))
    assert.same({ 2, 3 }, x:shape())
    local xv = x:reshape({ 6, 1 }):totable()
    assert.is_true(maxdiff(matmul(a, xv), { { 1 }, { 2 }, { 3 }, { 4 }, { 5 }, { 6 } }) <= 1e-12)
    -- dims moves self's dims to the end first; a repeated or too long dims list is an error
    local y = sk.linalg.tensorsolve(T(t):permute({ 1, 2, 0 }), T(b), { 0, 1 })
    assert.is_true(h.close(y:totable(), x:totable(), 1e-12))
    assert.matches("argument 'dims' repeats dim 0", h.err(sk.linalg.tensorsolve, T(t), T(b), { 0, 0 }), 1, true)
    assert.matches("argument 'dims' has 9 dims", h.err(sk.linalg.tensorsolve, T(t), T(b), { 0, 0, 0, 0, 0, 0, 0, 0, 0 }), 1, true)
  end)
end)
-- }====

describe("linalg.matrix_norm, norm, cond", function()
  local a = { { 1, -2 }, { 3, 4 } }
  it("matrix_norm: 'fro', 'nuc', ±1, ±inf, ±2 against hand values", function()
    assert.is_true(math.abs(sk.linalg.matrix_norm(T(a)):item() - math.sqrt(30)) <= 1e-14)
    assert.equal(6, sk.linalg.matrix_norm(T(a), 1):item())   -- column sums 4, 6
    assert.equal(4, sk.linalg.matrix_norm(T(a), -1):item())
    assert.equal(7, sk.linalg.matrix_norm(T(a), math.huge):item()) -- row sums 3, 7
    assert.equal(3, sk.linalg.matrix_norm(T(a), -math.huge):item())
    -- σ² are the eigenvalues of AᵀA = [[10, 10], [10, 20]]: 15 ± 5√5
    local s1, s2 = math.sqrt(15 + 5 * math.sqrt(5)), math.sqrt(15 - 5 * math.sqrt(5))
    assert.is_true(math.abs(sk.linalg.matrix_norm(T(a), 2):item() - s1) <= 1e-14)
    assert.is_true(math.abs(sk.linalg.matrix_norm(T(a), -2):item() - s2) <= 1e-14)
    assert.is_true(math.abs(sk.linalg.matrix_norm(T(a), "nuc"):item() - (s1 + s2)) <= 1e-14)
    assert.same({ 1, 1 }, sk.linalg.matrix_norm(T(a), 1, { -2, -1 }, true):shape())
    assert.same({ 2 }, sk.linalg.matrix_norm(T { a, a }, 2):shape())
    assert.same({ 2, 1, 1 }, sk.linalg.matrix_norm(T { a, a }, "nuc", { 1, 2 }, true):shape())
    assert.matches("sk.linalg_matrix_norm: Order 3 not supported.", h.err(sk.linalg.matrix_norm, T(a), 3), 1, true)
  end)

  it("norm picks the vector or the matrix norm as PyTorch does", function()
    assert.is_true(math.abs(sk.linalg.norm(T(a)):item() - math.sqrt(30)) <= 1e-14)
    assert.equal(6, sk.linalg.norm(T(a), 1):item())
    assert.equal(10, sk.linalg.norm(T { 1, -2, 3, 4 }, 1):item())
    assert.same({ 4, 6 }, sk.linalg.norm(T(a), 1, { 0 }):totable())
    assert.is_true(math.abs(sk.linalg.norm(T(a), "fro"):item() - math.sqrt(30)) <= 1e-14)
    assert.matches("If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.",
                   h.err(sk.linalg.norm, T { a }, 2), 1, true)
  end)

  it("cond: σ_max/σ_min, ‖A‖·‖A⁻¹‖ for other orders, inf for a singular matrix", function()
    local s1, s2 = math.sqrt(15 + 5 * math.sqrt(5)), math.sqrt(15 - 5 * math.sqrt(5))
    assert.is_true(math.abs(sk.linalg.cond(T(a)):item() - s1 / s2) <= 1e-13)
    -- A⁻¹ = [[4, 2], [-3, 1]] / 10: ‖A⁻¹‖₁ = 0.7
    assert.is_true(math.abs(sk.linalg.cond(T(a), 1):item() - 6 * 0.7) <= 1e-13)
    assert.equal(math.huge, sk.linalg.cond(T { { 1, 1 }, { 1, 1 } }, 1):item())
    assert.matches("linalg.cond got an invalid norm type: 3", h.err(sk.linalg.cond, T(a), 3), 1, true)
    assert.same({ 3 }, sk.linalg.cond(sk.empty({ 3, 2, 2 }, { device = "meta" }), "fro"):shape())
  end)
end)

-- {==== lstsq, householder_product, matrix_exp ====
-- The Householder reflection I - 2 v vᵀ / vᵀv (orthogonal: it keeps norms and orthogonality).
local function reflector(v)
  local vv = 0
  for i = 1, #v do vv = vv + v[i] * v[i] end
  return mat(#v, #v, function(i, j) return (i == j and 1 or 0) - 2 * v[i] * v[j] / vv end)
end
local function col(t) return mat(#t, 1, function(i) return t[i] end) end
local function flatcol(m) local r = {} for i = 1, #m do r[i] = m[i][1] end return r end

-- A 6 x 3 least-squares problem with known answer: A = H [[D P], [0]] (H a reflection, D =
-- diag(3, 2, 0.5), P a permutation) has singular values 3, 2, 0.5; b = A x + H r with r zero on
-- the first three rows is A x plus a residual orthogonal to A's columns, of squared norm |r|².
local function lsq_problem(seed)
  local rnd = h.lcg(seed)
  local H = reflector { rnd(-1, 1), rnd(-1, 1), rnd(-1, 1), rnd(-1, 1), rnd(-1, 1), 1.5 }
  local DP = { { 0, 3, 0 }, { 0, 0, 2 }, { 0.5, 0, 0 } }
  local A = matmul(H, mat(6, 3, function(i, j) return i <= 3 and DP[i][j] or 0 end))
  local x = mat(3, 2, function() return rnd(-2, 2) end)
  local r = mat(6, 2, function(i) return i > 3 and rnd(-1, 1) or 0 end)
  local Hr = matmul(H, r)
  local Ax = matmul(A, x)
  local b = mat(6, 2, function(i, j) return Ax[i][j] + Hr[i][j] end)
  local rr = { 0, 0 }
  for i = 4, 6 do for j = 1, 2 do rr[j] = rr[j] + r[i][j] ^ 2 end end
  return A, b, x, rr
end

describe("linalg.lstsq", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("solves an overdetermined system with a residual orthogonal to A's columns, every driver (" .. dt .. ")", function()
      local A, b, x, rr = lsq_problem(3)
      local tl = dt == "float32" and 1e-4 or 1e-12
      for _, drv in ipairs { "gelsy", "gels", "gelsd", "gelss" } do
        local sol, res, rank, sv = sk.linalg.lstsq(T(A, { dtype = dt }), T(b, { dtype = dt }), { driver = drv })
        assert.equal(dt, sol:dtype())
        assert.same({ 3, 2 }, sol:shape())
        assert.is_true(maxdiff(sol:totable(), x) <= tl, drv .. " " .. maxdiff(sol:totable(), x))
        if drv == "gelsy" then
          assert.same({ 0 }, res:shape())
        else
          local got = res:totable()
          for j = 1, 2 do assert.is_true(math.abs(got[j] - rr[j]) <= tl * 10, drv) end
        end
        if drv == "gels" then
          assert.same({ 0 }, rank:shape())
        else
          assert.equal("int64", rank:dtype())
          assert.same({}, rank:shape())
          assert.equal(3, rank:item())
        end
        if drv == "gelsd" or drv == "gelss" then
          local s = sv:totable()
          for i, want in ipairs { 3, 2, 0.5 } do assert.is_true(math.abs(s[i] - want) <= tl, drv) end
        else
          assert.same({ 0 }, sv:shape())
        end
      end
    end)
  end

  it("takes a vector b (solution [n], residuals [1]) and the default driver gelsy", function()
    local A, b, x, rr = lsq_problem(5)
    local bv = {}
    for i = 1, 6 do bv[i] = b[i][1] end
    local sol, res = sk.linalg.lstsq(T(A), T(bv))
    assert.same({ 3 }, sol:shape())
    assert.is_true(maxdiff(col(sol:totable()), col(flatcol(x))) <= 1e-12)
    assert.same({ 0 }, res:shape())
    local _, res2 = sk.linalg.lstsq(T(A), T(bv), { driver = "gelsd" })
    assert.same({ 1 }, res2:shape())
    assert.is_true(math.abs(res2:totable()[1] - rr[1]) <= 1e-12)
  end)

  it("gives the minimum-norm solution of an underdetermined system, without residuals", function()
    -- x1 + x2 = 2, x3 = 3: the least-norm solution is (1, 1, 3)
    for _, drv in ipairs { "gelsy", "gels", "gelsd", "gelss" } do
      local sol, res = sk.linalg.lstsq(T { { 1, 1, 0 }, { 0, 0, 1 } }, T { { 2 }, { 3 } }, { driver = drv })
      assert.is_true(maxdiff(sol:totable(), { { 1 }, { 1 }, { 3 } }) <= 1e-12, drv)
      assert.same({ 0 }, res:shape())
    end
  end)

  it("reports the rank of a rank-deficient matrix, drops the residuals then, and rcond cuts small singular values", function()
    local A = { { 1, 0, 1 }, { 0, 1, 1 }, { 1, 1, 2 }, { 2, -1, 1 } } -- column 3 = column 1 + column 2
    for _, drv in ipairs { "gelsy", "gelsd", "gelss" } do
      local _, res, rank = sk.linalg.lstsq(T(A), T { { 1 }, { 2 }, { 3 }, { 4 } }, { driver = drv })
      assert.equal(2, rank:item(), drv)
      assert.same({ 0 }, res:shape())
    end
    -- diag(1, 1e-3): rcond 1e-2 treats the second singular value as zero
    local sol, _, rank = sk.linalg.lstsq(T { { 1, 0 }, { 0, 1e-3 } }, T { { 2 }, { 5 } }, { rcond = 1e-2, driver = "gelsd" })
    assert.equal(1, rank:item())
    assert.is_true(maxdiff(sol:totable(), { { 2 }, { 0 } }) <= 1e-14)
    local sol2 = sk.linalg.lstsq(T { { 1, 0 }, { 0, 1e-3 } }, T { { 2 }, { 5 } })
    assert.is_true(maxdiff(sol2:totable(), { { 2 }, { 5000 } }) <= 1e-9)
  end)

  it("broadcasts the batches of A and b, and reads transposed and expanded operands", function()
    local As, bs, xs = {}, {}, {}
    for i = 1, 2 do As[i], bs[i], xs[i] = lsq_problem(10 + i) end
    -- A {2, 1, 6, 3} (stored transposed), b {1, 3, 6, 2} (one matrix expanded): solution {2, 3, 3, 2}
    local At = T { { transpose(As[1]) }, { transpose(As[2]) } }:transpose(-2, -1)
    assert.is_false(At:is_contiguous())
    local bb = T(bs[1]):expand({ 1, 3, 6, 2 })
    for _, drv in ipairs { "gelsy", "gels", "gelsd" } do
      local sol, res, rank, sv = sk.linalg.lstsq(At, bb, { driver = drv })
      assert.same({ 2, 3, 3, 2 }, sol:shape())
      local got = sol:totable()
      for i = 1, 2 do
        -- the least-squares solution for b1 against A_i: A_i⁺ b1, checked by the normal equations
        for k = 1, 3 do
          local r = matmul(As[i], got[i][k])
          local resid = mat(6, 2, function(p, q) return bs[1][p][q] - r[p][q] end)
          assert.is_true(maxabs(matmul(transpose(As[i]), resid)) <= 1e-12, drv)
        end
      end
      if drv ~= "gelsy" then assert.same({ 2, 3, 2 }, res:shape()) end
      if drv ~= "gels" then assert.same({ 2, 3 }, rank:shape()) end
      if drv == "gelsd" then assert.same({ 2, 3, 3 }, sv:shape()) end
    end
    -- a batch of vectors: b has A's shape without the last dim
    local sol = sk.linalg.lstsq(T { As[1], As[2] }, T { flatcol(bs[1]), flatcol(bs[2]) })
    assert.same({ 2, 3 }, sol:shape())
    assert.is_true(maxdiff(col(sol:totable()[2]), col(flatcol(xs[2]))) <= 1e-12)
  end)

  it("gives zeros for no equations and empty results for empty batches", function()
    local sol, res = sk.linalg.lstsq(sk.zeros({ 0, 3 }, { dtype = "float64" }), sk.zeros({ 0, 2 }, { dtype = "float64" }))
    assert.same({ { 0, 0 }, { 0, 0 }, { 0, 0 } }, sol:totable())
    assert.same({ 0 }, res:shape())
    local s2, r2 = sk.linalg.lstsq(sk.zeros({ 0, 4, 3 }), sk.zeros({ 0, 4, 2 }), { driver = "gels" })
    assert.same({ 0, 3, 2 }, s2:shape())
    assert.same({ 0, 2 }, r2:shape())
  end)

  it("raises PyTorch's errors", function()
    local A = sk.ones({ 5, 3 }, { dtype = "float64" })
    local function e(...) return h.err(sk.linalg.lstsq, ...) end
    assert.matches("sk.linalg_lstsq: input must have at least 2 dimensions.", e(sk.ones({ 5 }), sk.ones({ 5 })), 1, true)
    assert.matches("sk.linalg_lstsq: other must have at least 1 dimension.", e(sk.ones({ 5, 3 }), sk.tensor(1.0)), 1, true)
    assert.matches("sk.linalg_lstsq: Expected input and other to have the same dtype, but got input's dtype Double and " ..
                   "other's dtype Float", e(A, sk.ones({ 5 })), 1, true)
    assert.matches("sk.linalg_lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1",
                   e(A, sk.ones({ 2, 5, 1 }, { dtype = "float64" })), 1, true)
    assert.matches("sk.linalg_lstsq: input.size(-2) should match other.size(-1)", e(A, sk.ones({ 4 }, { dtype = "float64" })), 1, true)
    assert.matches("sk.linalg_lstsq: input.size(-2) should match other.size(-2)", e(A, sk.ones({ 4, 2 }, { dtype = "float64" })), 1, true)
    assert.matches("sk.linalg_lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)",
                   e(A, sk.ones({ 5, 2 }, { dtype = "float64" }), { driver = "x" }), 1, true)
    assert.matches("sk.linalg_lstsq: This function doesn't handle types other than float and double",
                   e(sk.ones({ 5, 3 }, { dtype = "int64" }), sk.ones({ 5 }, { dtype = "int64" })), 1, true)
    assert.matches("The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
                   e(sk.ones({ 2, 5, 3 }), sk.ones({ 3, 5, 1 })), 1, true)
    local Z = { { 1, 0, 0 }, { 0, 1, 0 }, { 1, 1, 0 }, { 2, 0, 0 } } -- a zero column: gels refuses
    assert.matches("sk.linalg_lstsq: The least squares solution could not be computed because the input matrix does " ..
                   "not have full rank (error code: 3).", e(T(Z), T { 1, 2, 3, 4 }, { driver = "gels" }), 1, true)
    assert.matches("sk.linalg_lstsq: (Batch element 1): The least squares solution could not be computed",
                   e(T { { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 }, { 1, 1, 1 } }, Z }, T { { 1, 2, 3, 4 }, { 1, 2, 3, 4 } }, { driver = "gels" }), 1, true)
  end)

  it("gives the shapes on Meta, residuals as for full rank", function()
    local sol, res, rank, sv = sk.linalg.lstsq(meta { 2, 1, 6, 3 }, meta { 1, 4, 6, 2 }, { driver = "gelsd" })
    assert.same({ 2, 4, 3, 2 }, sol:shape())
    assert.same({ 2, 4, 2 }, res:shape())
    assert.same({ 2, 4 }, rank:shape())
    assert.equal("int64", rank:dtype())
    assert.same({ 2, 4, 3 }, sv:shape())
    local s2, r2, k2, v2 = sk.linalg.lstsq(meta { 3, 5 }, meta { 3 })
    assert.same({ 5 }, s2:shape())
    assert.same({ 0 }, r2:shape())
    assert.same({}, k2:shape())
    assert.same({ 0 }, v2:shape())
  end)

  it("gives NaN, not a hang, for NaN input to the SVD drivers", function()
    local nan = 0 / 0
    for _, drv in ipairs { "gelsy", "gelsd", "gelss" } do
      local sol = sk.linalg.lstsq(T { { 1, 0 }, { 0, 1 }, { nan, 0 } }, T { { 1 }, { 1 }, { 1 } }, { driver = drv })
      assert.same({ 2, 1 }, sol:shape())
    end
    local sol, _, rank = sk.linalg.lstsq(T { { 1, 0 }, { 0, 1 }, { nan, 0 } }, T { { 1 }, { 1 }, { 1 } }, { driver = "gelsd" })
    assert.is_true(sol:totable()[1][1] ~= sol:totable()[1][1])
    assert.equal(0, rank:item())
  end)
end)

-- Q's first n columns of H_1 ··· H_k, H_i = I - tau_i v_i v_iᵀ, v_i column i of A below the
-- diagonal with a 1 on it: the plain-Lua reference of householder_product.
local function householder_ref(A, tau)
  local m, n = #A, #A[1]
  local Q = eye(m)
  for i = 1, #tau do
    local v = {}
    for r = 1, m do v[r] = r < i and 0 or r == i and 1 or A[r][i] end
    local Hi = mat(m, m, function(p, q) return (p == q and 1 or 0) - tau[i] * v[p] * v[q] end)
    Q = matmul(Q, Hi)
  end
  return mat(m, n, function(i, j) return Q[i][j] end)
end

describe("linalg.householder_product", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("is the product of the reflectors' first n columns (" .. dt .. ")", function()
      local tl = dt == "float32" and 1e-5 or 1e-14
      for _, shape in ipairs { { 5, 3, 2 }, { 4, 4, 4 }, { 4, 3, 3 }, { 3, 1, 1 } } do
        local A = rnd_mat(shape[1], shape[2], shape[1] * 7 + shape[3])
        local rnd = h.lcg(shape[3])
        local tau = {}
        for i = 1, shape[3] do tau[i] = rnd(0, 2) end
        local Q = sk.linalg.householder_product(T(A, { dtype = dt }), T(tau, { dtype = dt }))
        assert.equal(dt, Q:dtype())
        assert.is_true(maxdiff(Q:totable(), householder_ref(A, tau)) <= tl, table.concat(shape, "x"))
      end
    end)
  end

  it("with LAPACK's tau (2 / vᵀv) gives orthonormal columns: the Q of a QR factorization", function()
    -- reflectors v with tau = 2 / vᵀv make each H_i orthogonal
    local A = rnd_mat(5, 3, 4)
    local tau = {}
    for i = 1, 3 do
      local vv = 1
      for r = i + 1, 5 do vv = vv + A[r][i] ^ 2 end
      tau[i] = 2 / vv
    end
    local q = sk.linalg.householder_product(T(A), T(tau)):totable()
    assert.is_true(is_orthonormal_cols(q, 1e-14))
  end)

  it("batches, reads transposed input, has no reflectors for an empty tau, and is sk.orgqr and the method", function()
    local As = { rnd_mat(4, 3, 1), rnd_mat(4, 3, 2) }
    local taus = { { 0.5, 1.2 }, { 1.5, 0.3 } }
    local At = T { transpose(As[1]), transpose(As[2]) }:transpose(-2, -1)
    assert.is_false(At:is_contiguous())
    local Q = sk.linalg.householder_product(At, T(taus)):totable()
    for i = 1, 2 do assert.is_true(maxdiff(Q[i], householder_ref(As[i], taus[i])) <= 1e-14) end
    local I = sk.linalg.householder_product(T(As[1]), sk.zeros({ 0 }, { dtype = "float64" }))
    assert.same(mat(4, 3, function(i, j) return i == j and 1 or 0 end), I:totable())
    assert.is_true(maxdiff(sk.orgqr(T(As[1]), T(taus[1])):totable(), householder_ref(As[1], taus[1])) <= 1e-14)
    assert.is_true(maxdiff(T(As[1]):orgqr(T(taus[1])):totable(), householder_ref(As[1], taus[1])) <= 1e-14)
    local out = sk.empty({ 0 }, { dtype = "float64" })
    sk.linalg.householder_product(T(As[2]), T(taus[2]), { out = out })
    assert.is_true(maxdiff(out:totable(), householder_ref(As[2], taus[2])) <= 1e-14)
    assert.same({ 2, 4, 0 }, sk.linalg.householder_product(sk.zeros({ 2, 4, 0 }), sk.zeros({ 2, 0 })):shape())
  end)

  it("checks tau's shape and dtype with PyTorch's texts; Meta gives input's shape", function()
    local A = sk.ones({ 4, 3 }, { dtype = "float64" })
    local function e(...) return h.err(sk.linalg.householder_product, ...) end
    local pre = "sk.linalg_householder_product: "
    assert.matches(pre .. "input must have at least 2 dimensions.", e(sk.ones({ 4 }), sk.ones({ 2 })), 1, true)
    assert.matches(pre .. "input.shape[-2] must be greater than or equal to input.shape[-1]",
                   e(sk.ones({ 3, 4 }, { dtype = "float64" }), sk.ones({ 2 }, { dtype = "float64" })), 1, true)
    assert.matches(pre .. "input.shape[-1] must be greater than or equal to tau.shape[-1]",
                   e(A, sk.ones({ 4 }, { dtype = "float64" })), 1, true)
    assert.matches(pre .. "Expected tau to have one dimension less than input, but got tau.ndim equal to 2 and input.ndim " ..
                   "is equal to 2", e(A, sk.ones({ 1, 2 }, { dtype = "float64" })), 1, true)
    assert.matches(pre .. "Expected batch dimensions of tau to be equal to input.shape[:-2], but got [3]",
                   e(sk.ones({ 2, 4, 3 }, { dtype = "float64" }), sk.ones({ 3, 2 }, { dtype = "float64" })), 1, true)
    assert.matches(pre .. "tau dtype Float does not match input dtype Double", e(A, sk.ones({ 2 })), 1, true)
    assert.matches("\"orgqr_cpu\" not implemented for 'Long'",
                   e(sk.ones({ 4, 3 }, { dtype = "int64" }), sk.ones({ 2 }, { dtype = "int64" })), 1, true)
    assert.same({ 2, 5, 3 }, sk.linalg.householder_product(meta { 2, 5, 3 }, meta { 2, 2 }):shape())
  end)
end)

local function rotation_gen(t) return { { 0, -t }, { t, 0 } } end

describe("linalg.matrix_exp", function()
  for _, dt in ipairs { "float32", "float64" } do
    it("gives exp of the diagonal, the finite series of a nilpotent matrix and rotations (" .. dt .. ")", function()
      local rel = dt == "float32" and 2e-6 or 1e-14
      for _, d in ipairs { { 1, -2, 0.5, 3 }, { 0.001, 0, -0.01, 0.002 }, { 10, -7, 20, 0 } } do
        local D = mat(4, 4, function(i, j) return i == j and d[i] or 0 end)
        local E = sk.linalg.matrix_exp(T(D, { dtype = dt })):totable()
        for i = 1, 4 do
          for j = 1, 4 do
            local want = i == j and math.exp(d[i]) or 0
            assert.is_true(math.abs(E[i][j] - want) <= rel * math.max(1, math.abs(want)) * 4, d[i] .. " " .. E[i][j])
          end
        end
      end
      -- strictly upper triangular: exp(N) = I + N + N²/2 + N³/6
      local N = mat(4, 4, function(i, j) return j > i and (i + 2 * j) / 3 or 0 end)
      local N2 = matmul(N, N)
      local N3 = matmul(N2, N)
      local want = mat(4, 4, function(i, j) return (i == j and 1 or 0) + N[i][j] + N2[i][j] / 2 + N3[i][j] / 6 end)
      assert.is_true(maxdiff(sk.linalg.matrix_exp(T(N, { dtype = dt })):totable(), want) <= rel * 20)
      for _, t in ipairs { 0.1, 1, 3, 10, 100 } do
        local R = sk.linalg.matrix_exp(T(rotation_gen(t), { dtype = dt })):totable()
        local c, s = math.cos(t), math.sin(t)
        local tl = (dt == "float32" and 1e-5 or 1e-13) * math.max(1, t)
        assert.is_true(maxdiff(R, { { c, -s }, { s, c } }) <= tl, "t = " .. t .. " " .. maxdiff(R, { { c, -s }, { s, c } }))
      end
    end)
  end

  it("batches, reads transposed input (exp(Aᵀ) = exp(A)ᵀ), and is sk.matrix_exp and the method", function()
    local b = T { { rotation_gen(1), rotation_gen(2) }, { rotation_gen(0.5), { { 1, 0 }, { 0, -1 } } } }
    local E = sk.linalg.matrix_exp(b:transpose(-2, -1))
    assert.same({ 2, 2, 2, 2 }, E:shape())
    local got = E:totable()
    for k, t in ipairs { 1, 2 } do
      local c, s = math.cos(t), math.sin(t)
      assert.is_true(maxdiff(got[1][k], { { c, s }, { -s, c } }) <= 1e-14)
    end
    assert.is_true(maxdiff(got[2][2], { { math.exp(1), 0 }, { 0, math.exp(-1) } }) <= 1e-14)
    assert.is_true(maxdiff(sk.matrix_exp(b):totable()[1][1], T(rotation_gen(1)):matrix_exp():totable()) <= 1e-15)
    assert.same({ 2, 0, 0 }, sk.linalg.matrix_exp(sk.zeros({ 2, 0, 0 })):shape())
    assert.is_true(math.abs(sk.linalg.matrix_exp(T { { 2 } }):item() - math.exp(2)) <= 1e-15 * math.exp(2))
  end)

  it("agrees with the Taylor series on a general matrix (every Padé degree)", function()
    for _, scale in ipairs { 0.01, 0.2, 0.9, 2, 5, 12 } do
      local A = mat(3, 3, function(i, j) return ((i * 3 + j) % 5 - 2) * scale / 3 end)
      -- Σ A^k / k! with exact-enough terms: scale down by 2^8 and square back
      local s = 8
      local As = mat(3, 3, function(i, j) return A[i][j] / 2 ^ s end)
      local term, sum = eye(3), eye(3)
      for k = 1, 20 do
        term = mat(3, 3, function(i, j) return matmul(term, As)[i][j] / k end)
        sum = mat(3, 3, function(i, j) return sum[i][j] + term[i][j] end)
      end
      for _ = 1, s do sum = matmul(sum, sum) end
      local got = sk.linalg.matrix_exp(T(A)):totable()
      assert.is_true(maxdiff(got, sum) <= 1e-11 * math.max(1, maxabs(sum)), "scale " .. scale .. " " .. maxdiff(got, sum))
    end
  end)

  it("raises PyTorch's errors, gives NaN for non-finite input, and Meta shapes", function()
    assert.matches("sk.linalg_matrix_exp: The input tensor A must have at least 2 dimensions.",
                   h.err(sk.linalg.matrix_exp, sk.ones({ 3 })), 1, true)
    assert.matches("sk.linalg_matrix_exp: A must be batches of square matrices, but they are 3 by 2 matrices",
                   h.err(sk.linalg.matrix_exp, sk.ones({ 3, 2 })), 1, true)
    assert.matches("matrix_exp: Expected a floating point or complex tensor as input. Got Long",
                   h.err(sk.linalg.matrix_exp, sk.ones({ 2, 2 }, { dtype = "int64" })), 1, true)
    local E = sk.linalg.matrix_exp(T { { 0 / 0, 0 }, { 0, 1 } }):totable()
    assert.is_true(E[2][2] ~= E[2][2])
    assert.same({ 4, 3, 3 }, sk.linalg.matrix_exp(meta { 4, 3, 3 }):shape())
  end)
end)
-- }====

-- {==== out= ====
describe("the out= variants of the composites", function()
  -- a well-conditioned SPD 3 x 3 (diagonally dominant), a right-hand side, a tall matrix
  local S = T { { 4, 1, 0.5 }, { 1, 5, 1 }, { 0.5, 1, 6 } }
  local B = T { { 1, 2 }, { 3, 4 }, { 5, 6 } }
  local W = T { { 1, 2 }, { 3, 5 }, { 7, 11 }, { 2, 1 } }
  local I = sk.eye(3, { dtype = "int64" })
  local L = sk.linalg.cholesky(S)
  -- name, the call (given nothing: the functional; given { out = }: the out= variant), the outs' dtypes
  local ROWS = {
    { "linalg.inv", function(...) return sk.linalg.inv(S, ...) end },
    { "inverse", function(...) return sk.inverse(S, ...) end },
    { "linalg.cholesky", function(...) return sk.linalg.cholesky(S, ...) end },
    { "cholesky", function(...) return sk.cholesky(S, true, ...) end },
    { "linalg.solve", function(...) return sk.linalg.solve(S, B, ...) end },
    { "linalg.svdvals", function(...) return sk.linalg.svdvals(W, ...) end },
    { "linalg.eigvalsh", function(...) return sk.linalg.eigvalsh(S, ...) end },
    { "linalg.matrix_power", function(...) return sk.linalg.matrix_power(S, -2, ...) end },
    { "linalg.multi_dot", function(...) return sk.linalg.multi_dot({ S, S, B }, ...) end },
    { "linalg.vecdot", function(...) return sk.linalg.vecdot(S, B:narrow(1, 0, 1):t(), ...) end },
    { "linalg.vector_norm", function(...) return sk.linalg.vector_norm(W, 3, ...) end },
    { "linalg.matrix_norm", function(...) return sk.linalg.matrix_norm(W, 2, ...) end },
    { "linalg.matrix_norm (str)", function(...) return sk.linalg.matrix_norm(W, "nuc", ...) end },
    { "linalg.norm", function(...) return sk.linalg.norm(W, ...) end },
    { "linalg.norm (str)", function(...) return sk.linalg.norm(W, "fro", ...) end },
    { "linalg.cond", function(...) return sk.linalg.cond(S, ...) end },
    { "linalg.cond (str)", function(...) return sk.linalg.cond(S, "fro", ...) end },
    { "linalg.pinv", function(...) return sk.linalg.pinv(W, ...) end },
    { "linalg.matrix_rank", function(...) return sk.linalg.matrix_rank(W, ...) end, { "int64" } },
    { "linalg.tensorinv", function(...) return sk.linalg.tensorinv(S, 1, ...) end },
    { "linalg.tensorsolve", function(...) return sk.linalg.tensorsolve(S, B:narrow(1, 0, 1):reshape({ 3 }), ...) end },
    { "cholesky_solve", function(...) return sk.cholesky_solve(B, L, ...) end },
    { "cholesky_inverse", function(...) return sk.cholesky_inverse(L, ...) end },
    { "orgqr", function(...) return sk.orgqr(W, T { 1.5, 0.3 }, ...) end },
    { "linalg.lu_factor", function(...) return sk.linalg.lu_factor(S, ...) end, { "float64", "int32" } },
    { "linalg.svd", function(...) return sk.linalg.svd(W, ...) end, { "float64", "float64", "float64" } },
    { "svd", function(...) return sk.svd(W, ...) end, { "float64", "float64", "float64" } },
    { "linalg.eigh", function(...) return sk.linalg.eigh(S, ...) end, { "float64", "float64" } },
    { "qr", function(...) return sk.qr(W, ...) end, { "float64", "float64" } },
    { "slogdet", function(...) return sk.slogdet(S, ...) end, { "float64", "float64" } },
    { "linalg.lstsq", function(o) o = o or {}; o.driver = "gelsd"; return sk.linalg.lstsq(W, W:narrow(1, 0, 1), o) end,
      { "float64", "float64", "int64", "float64" } },
    { "triangular_solve", function(...) return sk.triangular_solve(B, L, false, ...) end, { "float64", "float64" } },
  }
  for _, row in ipairs(ROWS) do
    it(row[1] .. " writes the functional's values into resized outs and returns them", function()
      local want = table.pack(row[2]())
      local outs = {}
      for i, dt in ipairs(row[3] or { "float64" }) do outs[i] = sk.empty({ 0 }, { dtype = dt }) end
      local got = table.pack(row[2]({ out = #outs == 1 and outs[1] or outs }))
      assert.equal(#outs, got.n)
      for i = 1, #outs do
        assert.is_true(rawequal(got[i], outs[i]) or got[i]:data_ptr() == outs[i]:data_ptr())
        assert.same(want[i]:shape(), outs[i]:shape())
        assert.same(want[i]:totable(), outs[i]:totable())
      end
    end)
  end

  it("checks every out before writing any (PyTorch's can_cast rule, named for the argument)", function()
    local U, Sv, Vh = sk.zeros({ 4, 4 }), sk.zeros({ 2 }), sk.zeros({ 2, 2 }, { dtype = "int64" })
    assert.matches("result type float64 can't be cast to the desired output type int64 (argument 'Vh')",
                   h.err(sk.linalg.svd, W, { out = { U, Sv, Vh } }), 1, true)
    assert.same({ 4, 4 }, U:shape())
    assert.equal(0, U:abs():sum():item())
    local o = sk.empty({ 0 }, { dtype = "float64" })
    assert.matches("result type float64 can't be cast to the desired output type int64 (argument 'out')",
                   h.err(sk.linalg.inv, S, { out = I }), 1, true)
    sk.linalg.inv(S:float(), { out = o }) -- a float32 result into a float64 out (and back): allowed
    assert.same({ 3, 3 }, o:shape())
  end)
end)
-- }====

-- {==== pinv / matrix_rank tolerances ====
describe("pinv and matrix_rank's tolerance overloads", function()
  -- two diagonal matrices: σ = (4, 1, 0.01) and (2, 0.5, 0.3); tol = max(atol, rtol·σ_max) per matrix
  local A = sk.stack({ sk.diag(T { 4, 1, 0.01 }), sk.diag(T { 2, 0.5, 0.3 }) })
  local function diag(t) return t:diagonal(0, -2, -1):totable() end
  local function close(a, b)
    for i = 1, #a do for j = 1, #a[i] do assert.near(b[i][j], a[i][j], 1e-12) end end
  end

  it("reads Tensor atol / rtol per matrix, with rtol's default 0 where atol > 0", function()
    assert.same({ 3, 2 }, sk.linalg.matrix_rank(A, { atol = T { 0.005, 0.4 } }):totable())
    assert.same({ 2, 3 }, sk.linalg.matrix_rank(A, { rtol = T { 0.2, 0.1 } }):totable())
    assert.same({ 3, 2 }, sk.linalg.matrix_rank(A, { atol = T { 0, 0.4 } }):totable())
    close({ { 0.25, 1, 100 }, { 0.5, 2, 0 } }, diag(sk.linalg.pinv(A, { atol = T { 0.005, 0.4 } })))
  end)

  it("takes tol (matrix_rank: atol, rtol 0) and rcond (pinv: rtol, atol 0) as numbers or tensors", function()
    assert.same({ 2, 1 }, sk.linalg.matrix_rank(A, 0.5):totable())
    assert.same({ 3, 1 }, sk.linalg.matrix_rank(A, T { 0.005, 1 }):totable())
    close({ { 0.25, 1, 0 }, { 0.5, 2, 0 } }, diag(sk.linalg.pinv(A, 0.2)))
    close({ { 0.25, 1, 0 }, { 0.5, 2, 1 / 0.3 } }, diag(sk.linalg.pinv(A, T { 0.2, 0.1 })))
    close({ { 0.25, 1, 0 }, { 0.5, 2, 0 } }, diag(sk.pinverse(A, 0.2)))
  end)

  it("hermitian = true reads the lower triangle only (eigh): |λ| against the tolerance, 1/λ kept signed", function()
    -- A's lower triangle makes S = [[2, 1, 0.5], [1, 3, -1], [0.5, -1, -4]], invertible: pinv(A) = S⁻¹
    local a = { { 2, 7, -3 }, { 1, 3, 5 }, { 0.5, -1, -4 } }
    local s = { { 2, 1, 0.5 }, { 1, 3, -1 }, { 0.5, -1, -4 } }
    for _, call in ipairs { function(x) return sk.linalg.pinv(x, { hermitian = true }) end,
                            function(x) return sk.linalg.pinv(x, 1e-15, true) end,
                            function(x) return sk.linalg.pinv(x, T(1e-15), true) end,
                            function(x) return sk.linalg.pinv(x, { rtol = T(1e-15), hermitian = true }) end } do
      local p = call(T(a)):totable()
      assert.is_true(maxdiff(matmul(p, s), eye(3)) <= 1e-14)
    end
    assert.equal(3, sk.linalg.matrix_rank(T(a), { hermitian = true }):item())
    -- the lower triangle of [[1, 9], [1, 1]] is the rank-1 [[1, 1], [1, 1]]
    assert.equal(1, sk.linalg.matrix_rank(T { { 1, 9 }, { 1, 1 } }, { hermitian = true }):item())
    assert.equal(1, sk.linalg.matrix_rank(T { { 1, 9 }, { 1, 1 } }, 1e-10, true):item())
    assert.equal(2, sk.linalg.matrix_rank(T { { 1, 9 }, { 1, 1 } }):item())
    -- the tolerance compares |λ| with rtol·max|λ|: a negative eigenvalue -1e-3 of [[4, 0], [0, -1e-3]]
    local c = T { { 4, 0 }, { 0, -1e-3 } }
    close({ { 0.25, 0 }, { 0, 0 } }, sk.linalg.pinv(c, { rtol = 1e-2, hermitian = true }):totable())
    close({ { 0.25, 0 }, { 0, -1000 } }, sk.linalg.pinv(c, { rtol = 1e-4, hermitian = true }):totable())
    close({ { 0.25, 0 }, { 0, -1000 } }, sk.linalg.pinv(c, { atol = 1e-4, hermitian = true }):totable())
    assert.equal(1, sk.linalg.matrix_rank(c, { rtol = 1e-2, hermitian = true }):item())
    assert.matches("linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices",
                   h.err(sk.linalg.pinv, sk.ones({ 2, 3 }, { dtype = "float64" }), { hermitian = true }), 1, true)
  end)

  it("hermitian pinv's gradient (through eigh) is PyTorch's for a symmetric input", function()
    -- PyTorch 1.13: d sum(pinv(S, hermitian=True)) / dS, the same as the SVD pinv's there
    local want = { { -0.2552908587257622, -0.047867036011080236, 0.10637119113573407 },
                   { -0.04786703601108024, -0.008975069252077545, 0.01994459833795012 },
                   { 0.10637119113573403, 0.01994459833795013, -0.04432132963988918 } }
    local x = T { { 2, 1, 0.5 }, { 1, 3, -1 }, { 0.5, -1, -4 } }:requires_grad_()
    sk.linalg.pinv(x, { hermitian = true }):sum():backward()
    assert.is_true(maxdiff(x.grad:totable(), want) <= 1e-13)
    -- eigh's own gradient is symmetric (PyTorch's skew projection of Vᵀ·gV): of sum(V³), PyTorch 1.13
    local y = T { { 2, 1, 0.5 }, { 1, 3, -1 }, { 0.5, -1, -4 } }:requires_grad_()
    local _, V = sk.linalg.eigh(y)
    V:pow(3):sum():backward()
    local g = { { 0.4354047343717371, 0.248642442832274, -0.028543618348309548 },
                { 0.248642442832274, -0.41149509570420095, 0.10035200180862716 },
                { -0.028543618348309548, 0.10035200180862718, -0.023909638667536065 } }
    assert.is_true(maxdiff(y.grad:totable(), g) <= 1e-13)
  end)

  it("has out= variants of every overload", function()
    local o = sk.empty({ 0 }, { dtype = "int64" })
    sk.linalg.matrix_rank(A, { atol = T { 0.005, 0.4 }, out = o })
    assert.same({ 3, 2 }, o:totable())
    sk.linalg.matrix_rank(A, T { 0.005, 1 }, { out = o })
    assert.same({ 3, 1 }, o:totable())
    local p = sk.empty({ 0 }, { dtype = "float64" })
    sk.linalg.pinv(A, T { 0.2, 0.1 }, { out = p })
    close({ { 0.25, 1, 0 }, { 0.5, 2, 1 / 0.3 } }, diag(p))
    sk.linalg.pinv(A, 0.2, { out = p })
    close({ { 0.25, 1, 0 }, { 0.5, 2, 0 } }, diag(p))
  end)
end)
-- }====
