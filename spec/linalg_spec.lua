-- spec/linalg_spec.lua — mv, addmv, dot, outer / ger, baddbmm, and matmul's rank cases.
-- Expected values come from plain-Lua loops; inputs are small integers, so every dtype is exact.
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local ALL = { "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" }
local NAN = 0 / 0

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

local function matvec(a, x)
  local r = {}
  for i = 1, #a do
    local s = 0
    for kk = 1, #x do s = s + a[i][kk] * x[kk] end
    r[i] = s
  end
  return r
end

local function transpose(a) return mat(#a[1], #a, function(i, j) return a[j][i] end) end

local function meta(shape, dtype) return sk.empty(shape, { device = "meta", dtype = dtype }) end
local function F(x) return T(x, { dtype = "float32" }) end

local A = mat(3, 4, function(i, j) return (i * 3 + j * 5) % 7 - 2 end) -- 3x4, small signed values
local X = { 1, -2, 3, 1 }
local P = mat(3, 4, function(i, j) return (i + 2 * j) % 5 end)        -- non-negative, for uint8

describe("mv", function()
  it("multiplies on every dtype, through BLAS or a plain loop", function()
    for _, dt in ipairs(ALL) do
      local a, x = dt == "uint8" and P or A, dt == "uint8" and { 1, 2, 0, 1 } or X
      local r = sk.mv(T(a, { dtype = dt }), T(x, { dtype = dt }))
      assert.equal(dt, r:dtype())
      assert.same({ 3 }, r:shape())
      assert.same(matvec(a, x), r:totable())
    end
    assert.same({ true, false }, sk.mv(T({ { true, false }, { false, false } }), T({ true, true })):totable())
  end)
  it("reads transposed, narrowed, strided and expanded operands", function()
    local at = F(transpose(A)):t()               -- column-major: BLAS reads it transposed
    assert.is_false(at:is_contiguous())
    assert.same(matvec(A, X), at:mv(F(X)):totable())
    local wide = F(mat(3, 6, function(i, j) return j <= 4 and A[i][j] or 99 end)):narrow(1, 0, 4) -- ld 6
    assert.same(matvec(A, X), sk.mv(wide, F(X)):totable())
    local strided = F({ 1, 0, -2, 0, 3, 0, 1, 0 }):slice({ dim = 0, step = 2 })
    assert.same(matvec(A, X), sk.mv(F(A), strided):totable())
    assert.same(matvec(A, { 2, 2, 2, 2 }), sk.mv(F(A), T({ 2.0 }):expand({ 4 })):totable())
    local odd = T(mat(4, 3, function(i, j) return A[j][i] end), { dtype = "int32" }):t() -- strided integer matrix
    assert.same(matvec(A, X), sk.mv(odd, T(X, { dtype = "int32" })):totable())
    local b = T(A, { dtype = "float64" }):slice({ dim = 1, step = 2 })   -- no unit stride: copied
    assert.same(matvec(mat(3, 2, function(i, j) return A[i][2 * j - 1] end), { 1, 2 }), sk.mv(b, T({ 1.0, 2.0 }, { dtype = "float64" })):totable())
  end)
  it("writes into out, resizing an empty one, through a temporary for a strided one", function()
    local out = sk.empty({ 0 })
    assert.equal(out, sk.mv(F(A), F(X), { out = out }))
    assert.same(matvec(A, X), out:totable())
    local base = sk.zeros({ 3, 2 })
    sk.mv(F(A), F(X), { out = base:select(1, 1) })
    assert.same(mat(3, 2, function(i, j) return j == 2 and matvec(A, X)[i] or 0 end), base:totable())
    assert.matches("argument 'out' has dtype float64, expected float32", h.err(sk.mv, F(A), F(X), { out = sk.empty({ 3 }, { dtype = "float64" }) }))
  end)
  it("handles empty sizes", function()
    assert.same({ 0 }, sk.mv(sk.empty({ 0, 3 }), sk.empty({ 3 })):shape())
    assert.same({ 0, 0 }, sk.mv(sk.ones({ 2, 0 }), sk.empty({ 0 })):totable())
    assert.same({ 0, 0 }, sk.mv(sk.ones({ 2, 0 }, { dtype = "int64" }), sk.empty({ 0 }, { dtype = "int64" })):totable())
  end)
  it("refuses bad ranks, sizes and dtypes, naming the argument", function()
    assert.matches("sk.mv: argument 'self' must be a 2%-D tensor, got 1%-D", h.err(sk.mv, F(X), F(X)))
    assert.matches("argument 'vec' must be a 1%-D tensor, got 2%-D", h.err(sk.mv, F(A), F(A)))
    assert.matches("size mismatch, got self %(3x4%), vec %(3%)", h.err(sk.mv, F(A), F({ 1, 2, 3 })))
    assert.matches("expected self and vec to have the same dtype, but got: float32 != float64",
      h.err(sk.mv, T(A, { dtype = "float32" }), T(X, { dtype = "float64" })))
  end)
end)

describe("addmv", function()
  it("computes beta·self + alpha·(mat @ vec) on every dtype", function()
    for _, dt in ipairs(ALL) do
      local a, x = dt == "uint8" and P or A, dt == "uint8" and { 1, 2, 0, 1 } or X
      local self = { 1, 2, 3 }
      local want = matvec(a, x)
      for i = 1, 3 do want[i] = 2 * self[i] + 3 * want[i] end
      if dt == "uint8" then for i = 1, 3 do want[i] = want[i] % 256 end end
      local r = sk.addmv(T(self, { dtype = dt }), T(a, { dtype = dt }), T(x, { dtype = dt }), { beta = 2, alpha = 3 })
      assert.equal(dt, r:dtype())
      assert.same(want, r:totable())
    end
    h.assert_close(sk.addmv(T({ 1.0, 1.0, 1.0 }), F(A), F(X), { beta = 0.5, alpha = -0.25 }):totable(),
      (function() local w = matvec(A, X) for i = 1, 3 do w[i] = 0.5 - 0.25 * w[i] end return w end)())
  end)
  it("broadcasts a 0-dim or one-element self, and ignores self when beta is 0", function()
    local mv = matvec(A, X)
    assert.same({ mv[1] + 5, mv[2] + 5, mv[3] + 5 }, sk.addmv(T(5.0), F(A), F(X)):totable())
    assert.same({ mv[1] + 5, mv[2] + 5, mv[3] + 5 }, sk.addmv(T({ 5.0 }), F(A), F(X)):totable())
    assert.same(mv, sk.addmv(T({ NAN, NAN, NAN }), F(A), F(X), { beta = 0 }):totable())
    local r = sk.addmv(T({ NAN, 1.0, 1.0 }), F(A), F(X)):totable()
    assert.is_true(r[1] ~= r[1])
    assert.same({ 3, 3 }, sk.addmv(T({ 1.0, 1.0 }), sk.ones({ 2, 0 }), sk.empty({ 0 }), { beta = 3 }):totable())
    assert.same({ 0, 0 }, sk.addmv(T({ NAN, NAN }), sk.ones({ 2, 0 }), sk.empty({ 0 }), { beta = 0 }):totable())
  end)
  it("works in place on contiguous and strided self, and into out", function()
    local mv = matvec(A, X)
    local s = T({ 1.0, 2.0, 3.0 })
    assert.equal(s, s:addmv_(F(A), F(X), { beta = 2 }))
    assert.same({ 2 + mv[1], 4 + mv[2], 6 + mv[3] }, s:totable())
    local base = T({ { 1.0, 0.0 }, { 2.0, 0.0 }, { 3.0, 0.0 } })
    sk.addmv_(base:select(1, 0), F(A), F(X))
    assert.same({ { 1 + mv[1], 0 }, { 2 + mv[2], 0 }, { 3 + mv[3], 0 } }, base:totable())
    local i = T({ 1, 1, 1 })
    i:addmv_(T(A), T(X), { alpha = 2 })
    assert.same({ 1 + 2 * mv[1], 1 + 2 * mv[2], 1 + 2 * mv[3] }, i:totable())
    local out = sk.empty({ 0 }, { dtype = "float64" })
    sk.addmv(T({ 1.0 }, { dtype = "float64" }), T(A, { dtype = "float64" }), T(X, { dtype = "float64" }), { out = out })
    assert.same({ 1 + mv[1], 1 + mv[2], 1 + mv[3] }, out:totable())
  end)
  it("refuses a self that does not broadcast and mixed dtypes", function()
    assert.matches("sk.addmv: argument 'self' %(shape %[2%]%) is not broadcastable to shape %[3%]",
      h.err(sk.addmv, T({ 1.0, 2.0 }), F(A), F(X)))
    assert.matches("argument 'self' %(shape %[3, 1%]%) is not broadcastable", h.err(sk.addmv, sk.ones({ 3, 1 }), F(A), F(X)))
    assert.matches("expected self and mat to have the same dtype, but got: float64 != float32",
      h.err(sk.addmv, T({ 1.0 }, { dtype = "float64" }), F(A), F(X)))
    assert.matches("size mismatch, got mat %(3x4%), vec %(2%)", h.err(sk.addmv, T({ 1.0 }), F(A), T({ 1.0, 2.0 })))
  end)
end)

describe("dot", function()
  it("sums products on every dtype, for strided and expanded vectors", function()
    for _, dt in ipairs(ALL) do
      local x, y = { 1, 2, 3, 4 }, dt == "uint8" and { 5, 0, 2, 1 } or { 5, -1, 2, -3 }
      local want = 0
      for i = 1, 4 do want = want + x[i] * y[i] end
      local r = sk.dot(T(x, { dtype = dt }), T(y, { dtype = dt }))
      assert.equal(dt, r:dtype())
      assert.same({}, r:shape())
      assert.equal(want, r:item())
    end
    assert.equal(true, sk.dot(T({ true, false }), T({ true, true })):item())
    assert.equal(false, sk.dot(T({ true, false }), T({ false, true })):item())
    local m = F(A)
    for _, dt in ipairs { "float32", "float64", "int64" } do
      local col = m:to(dt):select(1, 2)              -- stride 4
      local want = 0
      for i = 1, 3 do want = want + A[i][3] * A[i][1] end
      assert.equal(want, col:dot(m:to(dt):select(1, 0)):item())
      assert.equal(2 * (A[1][3] + A[2][3] + A[3][3]), sk.dot(col, T({ 2 }, { dtype = dt }):expand({ 3 })):item())
    end
    assert.equal(0, sk.dot(sk.empty({ 0 }), sk.empty({ 0 })):item())
  end)
  it("writes into a 0-dim or empty out", function()
    local out = sk.empty({ 0 })
    assert.equal(out, sk.dot(T({ 1.0, 2.0 }), T({ 3.0, 4.0 }), { out = out }))
    assert.same({}, out:shape())
    assert.equal(11, out:item())
  end)
  it("refuses what PyTorch's dot refuses, with its messages", function()
    assert.matches("sk.dot: 1D tensors expected, but got 2D and 2D tensors", h.err(sk.dot, F(A), F(A)))
    assert.matches("1D tensors expected, but got 1D and 0D tensors", h.err(sk.dot, F(X), T(1.0)))
    assert.matches("dot : expected both vectors to have same dtype, but found Float and Double",
      h.err(sk.dot, T({ 1.0 }), T({ 1.0 }, { dtype = "float64" })))
    assert.matches("inconsistent tensor size, expected tensor %[2%] and src %[3%] to have the same number of elements, but got 2 and 3 elements respectively",
      h.err(sk.dot, T({ 1.0, 2.0 }), T({ 1.0, 2.0, 3.0 })))
  end)
end)

describe("outer and ger", function()
  it("make the outer product with type promotion", function()
    local x, y = { 1, -2, 3 }, { 2, 5 }
    local want = mat(3, 2, function(i, j) return x[i] * y[j] end)
    for _, dt in ipairs(ALL) do
      local xs = dt == "uint8" and { 1, 2, 3 } or x
      local r = sk.outer(T(xs, { dtype = dt }), T(y, { dtype = dt }))
      assert.equal(dt, r:dtype())
      assert.same(mat(3, 2, function(i, j) return xs[i] * y[j] end), r:totable())
    end
    assert.same(want, T(x):ger(T(y)):totable())
    local mixed = sk.outer(T(x), T({ 2.0, 5.0 }, { dtype = "float64" }))
    assert.equal("float64", mixed:dtype())
    assert.same(want, mixed:totable())
    assert.same(want, sk.outer(T({ 1, 0, -2, 0, 3 }):slice({ dim = 0, step = 2 }), T(y)):totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.outer(T(x), T(y), { out = out }))
    assert.same(want, out:totable())
    sk.ger(T(y), T(x), { out = sk.empty({ 0 }) })
    assert.same({ 0, 2 }, sk.outer(sk.empty({ 0 }), T({ 1.0, 2.0 })):shape())
  end)
  it("refuses non-vectors, naming the argument", function()
    assert.matches("sk.outer: Expected 1%-D argument self, but got 2%-D", h.err(sk.outer, F(A), F(X)))
    assert.matches("sk.ger: Expected 1%-D argument vec2, but got 0%-D", h.err(sk.ger, F(X), T(1)))
  end)
end)

describe("baddbmm", function()
  local B1 = { mat(2, 3, function(i, j) return i + j - 2 end), mat(2, 3, function(i, j) return (i * j) % 3 end) }
  local B2 = { mat(3, 2, function(i, j) return i - j end), mat(3, 2, function(i, j) return (i + j) % 4 end) }
  local function ref(self, beta, alpha, b1, b2)
    local r = {}
    for b = 1, #b1 do
      local p = matmul(b1[b], b2[b])
      r[b] = mat(#p, #p[1], function(i, j) return beta * self(b, i, j) + alpha * p[i][j] end)
    end
    return r
  end
  it("computes beta·self + alpha·(batch1 @ batch2) on every dtype", function()
    for _, dt in ipairs { "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" } do
      local r = sk.baddbmm(T({ 1, 2 }, { dtype = dt }), T(B1, { dtype = dt }), T(B2, { dtype = dt }), { beta = 2, alpha = -1 })
      assert.equal(dt, r:dtype())
      assert.same(ref(function(_, _, j) return j end, 2, -1, B1, B2), r:totable())
    end
    local u = sk.baddbmm(T({ 1 }, { dtype = "uint8" }), T(B1, { dtype = "uint8" }), T(B2, { dtype = "uint8" }):abs())
    assert.equal("uint8", u:dtype())
    h.assert_close(sk.baddbmm(sk.ones({ 2, 2, 2 }), F(B1), F(B2), { beta = 0.5, alpha = 0.25 }):totable(),
      ref(function() return 1 end, 0.5, 0.25, B1, B2))
  end)
  it("broadcasts self, ignores it when beta is 0, reads transposed batches", function()
    local full = F(mat(2, 2, function(i, j) return 10 * i + j end))
    assert.same(ref(function(_, i, j) return 10 * i + j end, 1, 1, B1, B2), sk.baddbmm(full, F(B1), F(B2)):totable())
    assert.same(ref(function() return 0 end, 0, 1, B1, B2),
      sk.baddbmm(sk.full({ 2, 2, 2 }, NAN), F(B1), F(B2), { beta = 0 }):totable())
    local t1 = F({ transpose(B1[1]), transpose(B1[2]) }):transpose(1, 2)
    assert.is_false(t1:is_contiguous())
    assert.same(ref(function() return 0 end, 0, 1, B1, B2), sk.baddbmm(T(0.0), t1, F(B2)):totable())
    local ex = F({ B2[1] }):expand({ 2, 3, 2 })
    assert.same(ref(function() return 0 end, 0, 1, B1, { B2[1], B2[1] }), sk.baddbmm(T({ 0.0 }), F(B1), ex):totable())
    assert.same({ 2, 2, 2 }, sk.baddbmm(T(1.0), sk.empty({ 2, 2, 0 }), sk.empty({ 2, 0, 2 })):shape())
    assert.same({ { { 3, 3 }, { 3, 3 } } }, sk.baddbmm(T(1.0), sk.empty({ 1, 2, 0 }), sk.empty({ 1, 0, 2 }), { beta = 3 }):totable())
  end)
  it("works in place and into out", function()
    local s = sk.ones({ 2, 2, 2 })
    assert.equal(s, s:baddbmm_(F(B1), F(B2), { alpha = 2 }))
    assert.same(ref(function() return 1 end, 1, 2, B1, B2), s:totable())
    local out = sk.empty({ 0 }, { dtype = "int64" })
    assert.equal(out, sk.baddbmm(T({ 1 }), T(B1), T(B2), { out = out }))
    assert.same(ref(function() return 1 end, 1, 1, B1, B2), out:totable())
    assert.matches("output with shape %[2%] doesn't match", h.err(function() return T({ 1.0, 1.0 }):baddbmm_(F(B1), F(B2)) end))
  end)
  it("refuses bad ranks, sizes, dtypes and selfs, naming the argument", function()
    assert.matches("sk.baddbmm: argument 'batch1' must be a 3%-D tensor, got 2%-D", h.err(sk.baddbmm, T(1.0), F(A), F(B2)))
    assert.matches("argument 'batch2' must be a 3%-D tensor, got 2%-D", h.err(sk.baddbmm, T(1.0), F(B1), F(A)))
    assert.matches("argument 'batch1' and 'batch2' shapes cannot be multiplied %(2x2x3 and 2x2x2%)",
      h.err(sk.baddbmm, T(1.0), F(B1), sk.ones({ 2, 2, 2 })))
    assert.matches("argument 'batch1' and 'batch2' must have the same batch size, got 2 and 1",
      h.err(sk.baddbmm, T(1.0), F(B1), sk.ones({ 1, 3, 2 })))
    assert.matches("expected batch1 and batch2 to have the same dtype, but got: float32 != float64",
      h.err(sk.baddbmm, T(1.0), F(B1), T(B2, { dtype = "float64" })))
    assert.matches("expected self and batch1 to have the same dtype, but got: int64 != float32",
      h.err(sk.baddbmm, T(1), F(B1), F(B2)))
    assert.matches("argument 'self' %(shape %[3%]%) is not broadcastable to shape %[2, 2, 2%]",
      h.err(sk.baddbmm, T({ 1.0, 2.0, 3.0 }), F(B1), F(B2)))
  end)
end)

describe("float products cut across sk's threads", function()
  -- Past the grain a float GEMM or GEMV runs as pieces of C on sk's threads, one BLAS call
  -- each: every layout (transposed operands, batches, split by rows or by columns) must
  -- give on 2 threads what the integer loops give. Small integers keep float32 exact.
  local function ints(shape, seed) -- aperiodic: a wrong offset into a pattern would match it
    sk.manual_seed(seed)
    return sk.randint(-3, 4, shape)
  end
  after_each(function() sk.set_num_threads(2) end)

  for _, c in ipairs {
    { "rows split (n >= p)", 3, 257, 70, 131 },
    { "columns split (n < p)", 1, 40, 90, 700 },
    { "a batch", 3, 120, 64, 90 },
  } do
    local name, batch, n, k, p = c[1], c[2], c[3], c[4], c[5]
    for _, lay in ipairs { "nn", "tn", "nt", "tt" } do
      it(name .. " with operands " .. lay, function()
        -- transposed after the conversion: `to` makes a contiguous copy
        local function operand(t, r, c, seed, dt)
          if t then return ints({ batch, c, r }, seed):to(dt):transpose(1, 2) end
          return ints({ batch, r, c }, seed):to(dt)
        end
        local ta, tb = lay:sub(1, 1) == "t", lay:sub(2, 2) == "t"
        local want = operand(ta, n, k, 3, "int64"):bmm(operand(tb, k, p, 5, "int64"))
        for _, threads in ipairs { 1, 2 } do
          sk.set_num_threads(threads)
          for _, dt in ipairs { "float32", "float64" } do
            local a, b = operand(ta, n, k, 3, dt), operand(tb, k, p, 5, dt)
            assert.equal(ta, a:stride()[2] == 1) -- the layout BLAS is handed
            assert.equal(0, (a:bmm(b):to("int64") - want):abs():max():item(), dt .. " on " .. threads .. " threads")
          end
        end
      end)
    end
  end

  it("mv splits the rows of y, also of a transposed matrix", function()
    local n, k = 5000, 100
    for _, t in ipairs { false, true } do
      local function mat(dt) return t and ints({ k, n }, 3):to(dt):t() or ints({ n, k }, 3):to(dt) end
      local want = mat("int64"):mv(ints({ k }, 2))
      for _, threads in ipairs { 1, 2 } do
        sk.set_num_threads(threads)
        for _, dt in ipairs { "float32", "float64" } do
          local got = mat(dt):mv(ints({ k }, 2):to(dt))
          assert.equal(0, (got:to("int64") - want):abs():max():item(), dt .. " on " .. threads .. " threads")
        end
      end
    end
  end)
end)

describe("matmul's rank cases", function()
  -- Lua reference of PyTorch's matmul: vectors become matrices, batch dims broadcast.
  local function ref(a, ash, b, bsh)
    local function get(t, sh, idx) -- idx: batch indices (already broadcast) then row, col
      local v = t
      local off = #idx - #sh
      for d = 1, #sh do v = v[(sh[d] == 1 and 1 or idx[d + off])] end
      return v
    end
    local da, db = #ash, #bsh
    local n = da >= 2 and ash[da - 1] or 1
    local k = ash[da]
    local p = db >= 2 and bsh[db] or 1
    local nb = math.max(da - 2, db - 2, 0)
    local batch = {}
    for i = 1, nb do
      local sa, sb = ash[da - 2 - nb + i] or 1, bsh[db - 2 - nb + i] or 1
      if da - 2 - nb + i < 1 then sa = 1 end
      if db - 2 - nb + i < 1 then sb = 1 end
      batch[i] = math.max(sa, sb)
    end
    local function build(bi, prefix)
      if bi > nb then
        local out = {}
        for i = 1, n do
          out[i] = {}
          for j = 1, p do
            local s = 0
            for kk = 1, k do
              local ia = { table.unpack(prefix) }
              local ib = { table.unpack(prefix) }
              local av, bv
              if da == 1 then av = a[kk] else
                local ashb = { table.unpack(ash, 1, da - 2) }
                ia[#ia + 1] = i; ia[#ia + 1] = kk
                ashb[#ashb + 1] = ash[da - 1]; ashb[#ashb + 1] = k
                av = get(a, ashb, ia)
              end
              if db == 1 then bv = b[kk] else
                local bshb = { table.unpack(bsh, 1, db - 2) }
                ib[#ib + 1] = kk; ib[#ib + 1] = j
                bshb[#bshb + 1] = bsh[db - 1]; bshb[#bshb + 1] = p
                bv = get(b, bshb, ib)
              end
              s = s + av * bv
            end
            out[i][j] = s
          end
        end
        if da == 1 and db == 1 then return out[1][1] end
        if da == 1 then return out[1] end
        if db == 1 then local c = {} for i = 1, n do c[i] = out[i][1] end return c end
        return out
      end
      local r = {}
      for x = 1, batch[bi] do
        local pre = { table.unpack(prefix) }
        pre[#pre + 1] = x
        r[x] = build(bi + 1, pre)
      end
      return r
    end
    return build(1, {})
  end
  local function make(shape)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local t = sk.arange(n, { dtype = "float64" })
    return (t - n // 2):reshape(shape)
  end
  it("covers 1-D to 4-D on either side, with broadcast and non-foldable batches", function()
    local cases = {
      { { 3 }, { 3 } }, { { 3 }, { 3, 2 } }, { { 2, 3 }, { 3 } }, { { 2, 3 }, { 3, 4 } },
      { { 2, 2, 3 }, { 3 } }, { { 2, 2, 3 }, { 3, 4 } }, { { 3 }, { 2, 3, 4 } }, { { 2, 3 }, { 2, 3, 4 } },
      { { 2, 2, 3 }, { 2, 3, 4 } }, { { 2, 1, 2, 3 }, { 3, 3, 2 } }, { { 1, 2, 3 }, { 2, 1, 3, 2 } },
    }
    for _, c in ipairs(cases) do
      local a, b = make(c[1]), make(c[2])
      local got = sk.matmul(a, b)
      local want = ref(a:totable(), c[1], b:totable(), c[2])
      if type(want) == "number" then assert.equal(want, got:item()) else assert.same(want, got:totable()) end
    end
    -- a transposed batch cannot fold into rows: the batched path
    local a = make({ 3, 2, 2 }):transpose(0, 1)
    assert.same(ref(a:contiguous():totable(), { 2, 3, 2 }, { 1, -1 }, { 2 }), sk.matmul(a, T({ 1.0, -1.0 }, { dtype = "float64" })):totable())
    assert.matches("both arguments to matmul need to be at least 1D", h.err(sk.matmul, T(1.0), T({ 1.0 })))
  end)
  it("folds a strided batch through a view, and takes equal batch shapes without an expand", function()
    -- a's last dim sliced: not contiguous, but its batch dims still fold into rows (a view)
    local a = make({ 2, 3, 5 }):narrow(2, 1, 3)
    assert.is_false(a:is_contiguous())
    local b = make({ 3, 4 })
    assert.same(ref(a:contiguous():totable(), { 2, 3, 3 }, b:totable(), { 3, 4 }), sk.matmul(a, b):totable())
    assert.same(ref(a:contiguous():totable(), { 2, 3, 3 }, { 1, 0, -1 }, { 3 }),
      sk.matmul(a, T({ 1.0, 0.0, -1.0 }, { dtype = "float64" })):totable())
    -- batch shapes already equal on both sides, operands transposed (copied on the way to bmm)
    local q, k = make({ 2, 3, 2, 4 }):transpose(1, 2), make({ 2, 2, 3, 4 }):transpose(-2, -1)
    assert.same(ref(q:contiguous():totable(), { 2, 2, 3, 4 }, k:contiguous():totable(), { 2, 2, 4, 3 }),
      sk.matmul(q, k):totable())
    -- nothing to fold: an empty batch keeps its shape
    local e = sk.matmul(sk.zeros({ 0, 3, 2 }, { dtype = "float64" }), make({ 2, 5 }))
    assert.same({ 0, 3, 5 }, e:size())
  end)
end)

describe("meta tensors", function()
  local cases = {
    { "mv", function(mk) return sk.mv(mk({ 3, 4 }), mk({ 4 })) end },
    { "addmv", function(mk) return sk.addmv(mk({}), mk({ 3, 4 }), mk({ 4 })) end },
    { "dot", function(mk) return sk.dot(mk({ 4 }, "int32"), mk({ 4 }, "int32")) end },
    { "outer", function(mk) return sk.outer(mk({ 3 }, "int64"), mk({ 2 })) end },
    { "ger", function(mk) return sk.ger(mk({ 3 }), mk({ 2 })) end },
    { "baddbmm", function(mk) return sk.baddbmm(mk({ 5 }, "float64"), mk({ 2, 3, 4 }, "float64"), mk({ 2, 4, 5 }, "float64")) end },
  }
  it("give the CPU result's shape and dtype", function()
    local function cpu(shape, dtype) return sk.ones(shape, { dtype = dtype or "float32" }) end
    h.assert_meta_like_cpu(cases, cpu, meta)
  end)
  it("check shapes and dtypes as on the CPU", function()
    assert.matches("size mismatch", h.err(sk.mv, meta({ 3, 4 }), meta({ 3 })))
    assert.matches("1D tensors expected", h.err(sk.dot, meta({ 3, 4 }), meta({ 3 })))
    assert.matches("not broadcastable", h.err(sk.baddbmm, meta({ 3 }), meta({ 2, 3, 4 }), meta({ 2, 4, 5 })))
    local s = meta({ 3 })
    assert.equal(s, s:addmv_(meta({ 3, 2 }), meta({ 2 })))
  end)
end)
