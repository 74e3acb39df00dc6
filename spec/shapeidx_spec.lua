-- spec/shapeidx_spec.lua — the shape, product and indexing ops PyTorch users reach for:
-- hand-worked small cases, identities between ops (hstack = cat along 1, tensordot = mm
-- of reshapes), plain-Lua references (kron's loop, searchsorted's linear scan, combinations'
-- enumeration), Meta shapes, dtypes and PyTorch's error texts.
local h = require "spec.helper"
local sk = h.sk

local function T(v, dt) return sk.tensor(v, dt and { dtype = dt } or nil) end
local function vals(t) return t:totable() end
local function range(n, dt) return sk.arange(n, { dtype = dt or "float64" }) end
local ALL = { "float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool" }

describe("diagonal and its relatives", function()
  it("diagonal is a view: offsets above and below, other dims first, an empty diagonal", function()
    local x = range(12):view { 3, 4 } -- x[i][j] = 4i + j
    assert.same({ 0, 5, 10 }, vals(x:diagonal()))
    assert.same({ 2, 7 }, vals(x:diagonal(2)))
    assert.same({ 4, 9 }, vals(sk.diagonal(x, -1)))
    assert.same({}, vals(x:diagonal(4)))
    assert.same({ 0 }, x:diagonal(9):shape())
    local y = range(24):view { 2, 3, 4 } -- y[a][b][c] = 12a + 4b + c; dims 0 and 2, the diagonal last
    assert.same({ { 0, 13 }, { 4, 17 }, { 8, 21 } }, vals(y:diagonal(0, 0, 2)))
    local d = x:diagonal(1)
    d:fill_(-1) -- writes through to x
    assert.same({ { 0, -1, 2, 3 }, { 4, 5, -1, 7 }, { 8, 9, 10, -1 } }, vals(x))
    assert.matches("diagonal dimensions cannot be identical 0, 0", h.err(sk.diagonal, x, 0, 0, 0))
    assert.matches("dimension out of range", h.err(sk.diagonal, x, 0, 0, 2))
  end)

  it("diag_embed, diagflat and diagonal_scatter put values on a diagonal of zeros", function()
    assert.same({ { 0, 1, 0 }, { 0, 0, 2 }, { 0, 0, 0 } }, vals(sk.diag_embed(T { 1, 2 }, 1)))
    local e = sk.diag_embed(T { { 1, 2 }, { 3, 4 } }) -- one matrix per row
    assert.same({ { { 1, 0 }, { 0, 2 } }, { { 3, 0 }, { 0, 4 } } }, vals(e))
    assert.same({ { 0, 0, 0 }, { 1, 0, 0 }, { 0, 2, 0 } }, vals(sk.diagflat(T { { 1, 2 } }, -1)))
    assert.same({ { 0, 7, 0 }, { 0, 0, 8 } }, vals(sk.diagonal_scatter(sk.zeros({ 2, 3 }, { dtype = "int64" }), T { 7, 8 }, 1)))
    assert.matches("expected src to have a size equal to the slice of self. src size = %[3%], slice size = %[2%]",
                   h.err(sk.diagonal_scatter, sk.zeros { 2, 3 }, sk.zeros { 3 }))
  end)

  it("diagonal's gradient lands on the diagonal; diag_embed's on the values", function()
    local x = sk.zeros({ 2, 3 }, { dtype = "float64", requires_grad = true })
    x:diagonal(1):sum():backward()
    assert.same({ { 0, 1, 0 }, { 0, 0, 1 } }, vals(x.grad))
    local v = sk.tensor({ 1, 2 }, { dtype = "float64", requires_grad = true });
    (sk.diag_embed(v) * T({ { 3, 5 }, { 7, 11 } }, "float64")):sum():backward()
    assert.same({ 3, 11 }, vals(v.grad))
  end)
end)

describe("moving, broadcasting, viewing like another tensor", function()
  it("movedim places the named dims and keeps the others in order", function()
    local x = sk.zeros { 2, 3, 4, 5 }
    assert.same({ 3, 4, 2, 5 }, sk.movedim(x, 0, 2):shape())
    assert.same({ 4, 3, 2, 5 }, sk.movedim(x, { 0, 1 }, { 2, -3 }):shape())
    assert.same({ 5, 2, 3, 4 }, x:moveaxis(-1, 0):shape())
    local y = range(6):view { 2, 3 }
    assert.same(vals(y:t()), vals(sk.movedim(y, 1, 0)))
    assert.matches("movedim: repeated dim in `source` %(%[0, 0%]%)", h.err(sk.movedim, x, { 0, 0 }, { 1, 2 }))
    assert.matches("movedim: repeated dim in `destination` %(%[1, 1%]%)", h.err(sk.movedim, x, { 0, 1 }, { 1, 1 }))
    assert.matches("source %(%[0%] dims%) should contain the same number of dims as destination %(%[1, 0%] dims%)",
                   h.err(sk.movedim, x, { 0 }, { 1, 0 }))
  end)

  it("broadcast_to, broadcast_tensors and broadcast_shapes agree on the broadcast shape", function()
    local a, b = range(3):view { 3, 1 }, range(4)
    local p = sk.broadcast_tensors { a, b }
    assert.same({ 3, 4 }, p[1]:shape())
    assert.same(vals(sk.broadcast_to(a, { 3, 4 })), vals(p[1]))
    assert.same({ { 0, 1, 2, 3 }, { 0, 1, 2, 3 }, { 0, 1, 2, 3 } }, vals(p[2]))
    assert.same({ 2, 3, 4 }, sk.broadcast_shapes({ 3, 1 }, { 4 }, { 2, 1, 1 }))
    assert.same({ 2, 3 }, sk.broadcast_shapes(3, { 2, 1 }))
    assert.same({}, sk.broadcast_shapes())
    assert.matches("The size of tensor a %(3%) must match the size of tensor b %(4%) at non%-singleton dimension 1",
                   h.err(sk.broadcast_tensors, { sk.zeros { 2, 3 }, sk.zeros { 4 } }))
    assert.matches("Shape mismatch: objects cannot be broadcast to a single shape", h.err(sk.broadcast_shapes, { 2, 3 }, { 4 }))
  end)

  it("expand_as, view_as, reshape_as, ravel and sum_to_size", function()
    local x = range(6):view { 2, 3 }
    assert.same({ 4, 2, 3 }, x:expand_as(sk.zeros { 4, 2, 3 }):shape())
    assert.same({ { 0, 1 }, { 2, 3 }, { 4, 5 } }, vals(x:view_as(sk.zeros { 3, 2 })))
    assert.same({ 0, 3, 1, 4, 2, 5 }, vals(x:t():reshape_as(sk.zeros { 6 })))
    assert.same({ 0, 3, 1, 4, 2, 5 }, vals(x:t():ravel()))
    assert.same({ { 3, 5, 7 } }, vals(x:sum_to_size { 1, 3 }))
    assert.same({ { 3 }, { 12 } }, vals(x:sum_to_size { 2, 1 }))
    assert.same({ 15 }, vals(x:sum_to_size { 1 }:view { 1 }))
    assert.matches("size {%[4%]} is not expandable to size {%[2, 3%]}%.", h.err(x.sum_to_size, x, { 4 }))
    assert.matches("shape '%[5%]' is invalid for input of size 6", h.err(x.view_as, x, sk.zeros { 5 }))
  end)
end)

describe("grids and combinations", function()
  it("meshgrid: ij repeats the i-th input along dim i, xy swaps the first two", function()
    local a, b = T { 1, 2 }, T { 3, 4, 5 }
    local ij = sk.meshgrid({ a, b }, { indexing = "ij" })
    assert.same({ { 1, 1, 1 }, { 2, 2, 2 } }, vals(ij[1]))
    assert.same({ { 3, 4, 5 }, { 3, 4, 5 } }, vals(ij[2]))
    local xy = sk.meshgrid({ a, b }, { indexing = "xy" })
    assert.same({ { 1, 2 }, { 1, 2 }, { 1, 2 } }, vals(xy[1]))
    assert.same({ { 3, 3 }, { 4, 4 }, { 5, 5 } }, vals(xy[2]))
    assert.same(vals(ij[1]), vals(sk.meshgrid({ a, b })[1])) -- no indexing: "ij", as PyTorch 1.13
    assert.matches('indexing must be one of "xy" or "ij", but received: yx', h.err(sk.meshgrid, { a, b }, { indexing = "yx" }))
    assert.matches("meshgrid expects all tensors to have the same dtype", h.err(sk.meshgrid, { a, b:double() }, { indexing = "ij" }))
    assert.matches("meshgrid expects a non%-empty TensorList", h.err(sk.meshgrid, {}, { indexing = "ij" }))
  end)

  it("cartesian_prod lists pairs in row-major order", function()
    assert.same({ { 1, 3 }, { 1, 4 }, { 2, 3 }, { 2, 4 } }, vals(sk.cartesian_prod { T { 1, 2 }, T { 3, 4 } }))
    assert.same({ 1, 2 }, vals(sk.cartesian_prod { T { 1, 2 } }))
    assert.matches("Expect a 1D vector, but got shape %[2, 2%]", h.err(sk.cartesian_prod, { sk.zeros { 2, 2 } }))
  end)

  it("combinations against an enumeration in Lua, with and without replacement", function()
    local function enum(n, r, rep)
      local out, cur = {}, {}
      local function go(k, from)
        if k > r then out[#out + 1] = { table.unpack(cur) }; return end
        for v = from, n - 1 do cur[k] = 10 * v; go(k + 1, rep and v or v + 1) end
      end
      go(1, 0)
      return out
    end
    local x = T({ 0, 10, 20, 30, 40 }, "int64")
    for _, c in ipairs { { 2, false }, { 3, false }, { 2, true }, { 3, true }, { 5, false } } do
      assert.same(enum(5, c[1], c[2]), vals(sk.combinations(x, c[1], c[2])))
    end
    assert.same({ 0, 6 }, sk.combinations(x, 6):shape())
    assert.same({ 0 }, sk.combinations(x, 0):shape())
    assert.matches("Expect a non%-negative number, but got %-1", h.err(sk.combinations, x, -1))
  end)
end)

describe("atleast_Nd and the stacks", function()
  it("atleast_1d/2d/3d add leading (and, for 3d, trailing) dims", function()
    local s, v, m = T(5.0), T { 1, 2 }, sk.zeros { 2, 3 }
    assert.same({ 1 }, sk.atleast_1d(s):shape())
    assert.same({ 1, 1 }, sk.atleast_2d(s):shape())
    assert.same({ 1, 2 }, sk.atleast_2d(v):shape())
    assert.same({ 1, 2, 1 }, sk.atleast_3d(v):shape())
    assert.same({ 2, 3, 1 }, sk.atleast_3d(m):shape())
    local l = sk.atleast_2d { s, v, m }
    assert.same({ { 1, 1 }, { 1, 2 }, { 2, 3 } }, { l[1]:shape(), l[2]:shape(), l[3]:shape() })
  end)

  it("hstack is cat along 1 for >= 1-d inputs (0 for vectors), vstack along 0 of atleast_2d, dstack along 2", function()
    local a, b = range(6):view { 2, 3 }, range(4):view { 2, 2 }
    assert.same(vals(sk.cat({ a, b }, 1)), vals(sk.hstack { a, b }))
    assert.same({ 1, 2, 5 }, vals(sk.hstack { T { 1, 2 }, T(5) }))
    assert.same({ { 1, 2 }, { 3, 4 } }, vals(sk.vstack { T { 1, 2 }, T { 3, 4 } }))
    assert.same(vals(sk.vstack { T { 1, 2 }, T { 3, 4 } }), vals(sk.row_stack { T { 1, 2 }, T { 3, 4 } }))
    assert.same({ { { 1, 3 }, { 2, 4 } } }, vals(sk.dstack { T { 1, 2 }, T { 3, 4 } }))
    assert.same({ { 1, 3 }, { 2, 4 } }, vals(sk.column_stack { T { 1, 2 }, T { 3, 4 } }))
    assert.same({ { 1, 0, 0 } }, vals(sk.column_stack { T(1), sk.zeros({ 1, 2 }, { dtype = "int64" }) }))
    local out = sk.empty({ 0 }, { dtype = "float64" })
    sk.hstack({ a, b }, { out = out })
    assert.same(vals(sk.cat({ a, b }, 1)), vals(out))
    for _, op in ipairs { "hstack", "vstack", "dstack", "column_stack" } do
      assert.matches(op == "row_stack" and "vstack" or op .. " expects a non%-empty TensorList", h.err(sk[op], {}))
    end
  end)
end)

describe("splitting", function()
  it("tensor_split by sections: the first size % n pieces are one longer", function()
    local p = sk.tensor_split(sk.arange(7), 3)
    assert.same({ { 0, 1, 2 }, { 3, 4 }, { 5, 6 } }, { vals(p[1]), vals(p[2]), vals(p[3]) })
    assert.equal(5, #sk.tensor_split(sk.arange(3), 5)) -- empty pieces at the end
    assert.same({ 0 }, sk.tensor_split(sk.arange(3), 5)[5]:shape())
  end)

  it("tensor_split by indices clamps like slicing; a tensor gives either form", function()
    local p = sk.tensor_split(sk.arange(7), { 5, 2 })
    assert.same({ { 0, 1, 2, 3, 4 }, {}, { 2, 3, 4, 5, 6 } }, { vals(p[1]), vals(p[2]), vals(p[3]) })
    p = sk.tensor_split(sk.arange(7), { -2, 9 })
    assert.same({ { 0, 1, 2, 3, 4 }, { 5, 6 }, {} }, { vals(p[1]), vals(p[2]), vals(p[3]) })
    p = sk.tensor_split(sk.arange(7), T(3))
    assert.equal(3, #p)
    p = sk.tensor_split(range(8):view { 2, 4 }, T { 1, 3 }, 1)
    assert.same({ { 1, 2 }, { 5, 6 } }, vals(p[2]))
    assert.matches("number of sections must be larger than 0, got 0", h.err(sk.tensor_split, sk.arange(3), 0))
    assert.matches("expected at least a 1%-dimensional tensor, but got a tensor with 0 dims", h.err(sk.tensor_split, T(1), 2))
    assert.matches("to have dtype of long, but got float32", h.err(sk.tensor_split, sk.arange(3), T { 1.0 }))
    assert.matches("zero%-dimensional or one%-dimensional tensor, but got a tensor with 2 dims",
                   h.err(sk.tensor_split, sk.arange(3), T { { 1 } }))
  end)

  it("hsplit, vsplit and dsplit split dims 1 (0 of a vector), 0 and 2, and insist on divisibility", function()
    local x = range(12):view { 2, 6 }
    local p = sk.hsplit(x, 3)
    assert.same({ { 2, 3 }, { 8, 9 } }, vals(p[2]))
    assert.same({ { 0, 1, 2, 3 } }, vals(sk.vsplit(range(8):view { 2, 4 }, 2)[1]))
    assert.same({ 2, 2, 1 }, sk.dsplit(sk.zeros { 2, 2, 4 }, { 1, 3 })[3]:shape())
    assert.same({ 2 }, sk.hsplit(sk.zeros { 6 }, 3)[1]:shape())
    assert.matches("torch.hsplit attempted to split along dimension 1, but the size of the dimension 6 is not divisible by the split_size 4!",
                   h.err(sk.hsplit, x, 4))
    assert.matches("torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!", h.err(sk.vsplit, sk.zeros { 4 }, 2))
    assert.matches("torch.dsplit requires a tensor with at least 3 dimension", h.err(sk.dsplit, x, 2))
  end)
end)

describe("rotations, flips, scatters into views, narrow_copy", function()
  it("rot90 turns counter-clockwise from dims[0] to dims[1]; k is taken mod 4", function()
    local x = T { { 1, 2 }, { 3, 4 } }
    assert.same({ { 2, 4 }, { 1, 3 } }, vals(sk.rot90(x)))
    assert.same({ { 4, 3 }, { 2, 1 } }, vals(sk.rot90(x, 2)))
    assert.same({ { 3, 1 }, { 4, 2 } }, vals(sk.rot90(x, -1)))
    assert.same(vals(sk.rot90(x, -1)), vals(sk.rot90(x, 3)))
    assert.same(vals(sk.rot90(x, 1, { 1, 0 })), vals(sk.rot90(x, 3)))
    assert.same(vals(x), vals(sk.rot90(x, 4)))
    assert.matches("expected total rotation dims == 2, but got dims = 1", h.err(sk.rot90, x, 1, { 0 }))
    assert.matches("expected rotation dims to be different, but got dim0 = 0 and dim1 = 2", h.err(sk.rot90, x, 1, { 0, 2 }))
    assert.matches("expected total dims >= 2, but got total dims = 1", h.err(sk.rot90, T { 1 }))
    assert.matches("expected rotation dims to be different, but got dim0 = 0 and dim1 = 3", h.err(sk.rot90, sk.zeros { 2, 2, 2 }, 1, { 0, 3 }))
    assert.matches("Rotation dim1 out of range, dim1 = 4", h.err(sk.rot90, sk.zeros { 2, 2, 2 }, 1, { 0, 4 }))
  end)

  it("fliplr and flipud", function()
    local x = T { { 1, 2, 3 }, { 4, 5, 6 } }
    assert.same({ { 3, 2, 1 }, { 6, 5, 4 } }, vals(sk.fliplr(x)))
    assert.same({ { 4, 5, 6 }, { 1, 2, 3 } }, vals(x:flipud()))
    assert.matches("Input must be >= 2%-d%.", h.err(sk.fliplr, T { 1 }))
    assert.matches("Input must be >= 1%-d%.", h.err(sk.flipud, T(1)))
  end)

  it("select_scatter and slice_scatter return a new tensor with src in the region; self is untouched", function()
    local z = sk.zeros({ 3, 3 }, { dtype = "int64" })
    assert.same({ { 0, 0, 0 }, { 7, 8, 9 }, { 0, 0, 0 } }, vals(sk.select_scatter(z, T { 7, 8, 9 }, 0, 1)))
    assert.same({ { 0, 0, 7 }, { 0, 0, 8 }, { 0, 0, 9 } }, vals(z:select_scatter(T { 7, 8, 9 }, 1, -1)))
    assert.same({ { 1, 0, 2 }, { 3, 0, 4 }, { 5, 0, 6 } }, vals(sk.slice_scatter(z, T { { 1, 2 }, { 3, 4 }, { 5, 6 } }, 1, 0, 3, 2)))
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } }, vals(z))
    assert.matches("src size = %[2%], slice size = %[3%]", h.err(sk.select_scatter, z, T { 1, 2 }, 0, 0))
  end)

  it("narrow_copy is a contiguous copy of the narrowed view", function()
    local x = range(12):view { 3, 4 }
    local c = sk.narrow_copy(x:t(), 1, 1, 2)
    assert.same({ { 4, 8 }, { 5, 9 }, { 6, 10 }, { 7, 11 } }, vals(c))
    assert.is_true(c:is_contiguous())
    c:fill_(0)
    assert.equal(4, x[{ 1, 0 }]:item())
    assert.matches("start %(1%) %+ length %(5%) exceeds dimension size %(3%)%.", h.err(sk.narrow_copy, x, 0, 1, 5))
  end)
end)

describe("products", function()
  it("kron against its definition, a loop over every pair of indices", function()
    local A = { { 1, 2, 3 }, { 4, 5, 6 } }
    local B = { { 0, 1 }, { 7, -1 } }
    local want = {}
    for i = 1, 4 do
      want[i] = {}
      for j = 1, 6 do
        local ai, bi = (i - 1) // 2 + 1, (i - 1) % 2 + 1
        local aj, bj = (j - 1) // 2 + 1, (j - 1) % 2 + 1
        want[i][j] = A[ai][aj] * B[bi][bj]
      end
    end
    assert.same(want, vals(sk.kron(T(A), T(B))))
    assert.same({ 2, 1, 12 }, sk.kron(sk.zeros { 3 }, sk.zeros { 2, 1, 4 }):shape()) -- [3] padded to [1, 1, 3]
    assert.same({ 2, 4 }, vals(sk.kron(T(2), T { 1, 2 })))
  end)

  it("tensordot is mm of reshapes; inner contracts the last dims", function()
    local a, b = range(24):view { 2, 3, 4 }, range(60):view { 4, 3, 5 }
    local want = sk.mm(a:reshape { 2, 12 }, b:permute { 1, 0, 2 }:reshape { 12, 5 })
    h.assert_close(vals(sk.tensordot(a, b, { 1, 2 }, { 1, 0 })), vals(want), 1e-12)
    local c = range(12):view { 3, 4 }
    h.assert_close(vals(sk.tensordot(a, c)), vals(sk.mv(a:reshape { 2, 12 }, c:reshape { 12 })), 1e-12) -- dims = 2
    assert.same({ 2, 3, 4, 3, 4 }, sk.tensordot(a, c, 0):shape())
    h.assert_close(vals(sk.inner(a, c)), vals(sk.matmul(a, c:t())), 1e-12)
    assert.same({ 6, 8 }, vals(sk.inner(T(2), T { 3, 4 })))
    assert.matches("contracted dimensions need to match, but first has size 2 in dim 0 and second has size 3 in dim 1",
                   h.err(sk.tensordot, sk.zeros { 2, 3 }, sk.zeros { 2, 3 }, { 0 }, { 1 }))
    assert.matches("both dimension lists should have same length", h.err(sk.tensordot, sk.zeros { 2, 3 }, sk.zeros { 2, 3 }, { 0, 1 }, { 0 }))
    assert.matches("tensordot expects dims >= 0, but got dims=%-1", h.err(sk.tensordot, a, c, -1))
    assert.matches("tensordot expects dims <= %d+ %(the fewer dimensions of the two tensors%), but got dims=4611686018427387904",
                   h.err(sk.tensordot, a, c, 1 << 62)) -- a fuzz finding: the Lua loop ran 2^62 times
    assert.matches("the last dimension must match on both input tensors but got shapes %[2, 3%] and %[4%]",
                   h.err(sk.inner, sk.zeros { 2, 3 }, sk.zeros { 4 }))
  end)

  it("addr on bool is logical, (beta && self) || (alpha && vec1 ⊗ vec2), and stays bool", function()
    -- PyTorch 1.13 values
    local s, v1, v2 = T({ { true, false }, { false, true } }), T { true, false }, T { true, true }
    local cases = { { 1, 1, { { true, true }, { false, true } } }, { true, true, { { true, true }, { false, true } } },
                    { false, true, { { true, false }, { false, true } } }, { true, false, { { true, true }, { false, false } } },
                    { 0, 0, { { false, false }, { false, false } } }, { 2, 3, { { true, true }, { false, true } } } }
    for _, c in ipairs(cases) do
      local r = sk.addr(s, v1, v2, { alpha = c[1], beta = c[2] })
      assert.equal("bool", r:dtype())
      assert.same(c[3], vals(r))
    end
    local y = s:clone()
    y:addr_(v1, v2, { beta = false })
    assert.same({ { true, true }, { false, false } }, vals(y))
    assert.matches("For integral input tensors, argument alpha must not be a floating point number.",
                   h.err(sk.addr, s, v1, v2, { alpha = 1.5 }))
    assert.matches("For integral input tensors, argument beta must not be a floating point number.",
                   h.err(sk.addr, s, v1, v2, { beta = 0.5 }))
  end)

  it("addbmm sums the batch of products; addr adds an outer product; vdot is dot", function()
    local s = T({ { 1, 1 }, { 1, 1 } }, "float64")
    local b1 = range(12):view { 3, 2, 2 }
    local b2 = range(12):view { 3, 2, 2 }
    local sum = sk.bmm(b1, b2):sum(0)
    h.assert_close(vals(sk.addbmm(s, b1, b2, { beta = 0.5, alpha = 2 })), vals(s * 0.5 + sum * 2), 1e-12)
    local y = s:clone()
    y:addbmm_(b1, b2)
    h.assert_close(vals(y), vals(s + sum), 1e-12)
    assert.same({ { 3, 5, 7 }, { 5, 9, 13 } }, vals(sk.addr(T({ { 1, 1, 1 }, { 1, 1, 1 } }), T { 1, 2 }, T { 1, 2, 3 }, { alpha = 2 })))
    assert.same({ { 1, 2 }, { 2, 4 } }, vals(sk.addr(T({ { 0 / 0, 1 }, { 1, 1 } }), T { 1., 2. }, T { 1., 2. }, { beta = 0 })))
    assert.equal(11, sk.vdot(T { 1, 2 }, T { 3, 4 }):item())
    assert.matches("batch1 and batch2 must have same number of batches, got 3 and 2",
                   h.err(sk.addbmm, s, b1, sk.zeros({ 2, 2, 2 }, { dtype = "float64" })))
    assert.matches("addr: Expected 1%-D argument vec1, but got 2%-D", h.err(sk.addr, s, sk.zeros { 2, 1 }, sk.zeros { 2 }))
    assert.matches("For integral input tensors, argument alpha must not be a floating point number.",
                   h.err(sk.addr, T { { 1 } }, T { 1 }, T { 1 }, { alpha = 2.5 }))
    assert.matches("1D tensors expected, but got 2D and 2D tensors", h.err(sk.vdot, sk.zeros { 2, 2 }, sk.zeros { 2, 2 }))
  end)

  it("cross: e1 x e2 = e3 along the dim of size 3; dim None takes self's first such dim (PyTorch 1.13)", function()
    local e = sk.eye(3, { dtype = "float64" })
    assert.same({ { 0, 0, 1 } }, vals(sk.linalg_cross(e[{ { 0, 1 } }], e[{ { 1, 2 } }])))
    local a, b = T { { 1., 2., 3. }, { 4., 5., 6. } }, T { { 7., 8., 9. }, { 1., 0., -1. } }
    -- (2·9 - 3·8, 3·7 - 1·9, 1·8 - 2·7), (5·-1 - 6·0, 6·1 - 4·-1, 4·0 - 5·1)
    assert.same({ { -6, 12, -6 }, { -5, 10, -5 } }, vals(sk.cross(a, b)))
    assert.same(vals(sk.cross(a, b)), vals(sk.cross(a:t(), b:t()):t())) -- the first dim of size 3 is 0 there
    assert.same(vals(sk.cross(a, b)), vals(sk.linalg_cross(a, b, { dim = -1 })))
    assert.matches("no dimension of size 3 in input", h.err(sk.cross, sk.zeros { 2, 4 }, sk.zeros { 2, 4 }))
    assert.matches("linalg.cross: inputs dimension 1 must have length 3. Got 4 and 4",
                   h.err(sk.cross, sk.zeros { 2, 4 }, sk.zeros { 2, 4 }, 1))
    assert.matches("linalg.cross: inputs must have the same number of dimensions.", h.err(sk.linalg_cross, sk.zeros { 2, 3 }, sk.zeros { 3 }))
  end)

  it("block_diag places each input, promoted, on the diagonal of zeros", function()
    local r = sk.block_diag { T(1.0), T { 2, 3 }, T { { 4 }, { 5 } } }
    assert.same({ { 1, 0, 0, 0 }, { 0, 2, 3, 0 }, { 0, 0, 0, 4 }, { 0, 0, 0, 5 } }, vals(r))
    assert.equal("float32", r:dtype())
    assert.same({ 1, 0 }, sk.block_diag({}):shape())
    assert.matches("Input tensors must have 2 or fewer dimensions. Input 0 has 3 dimensions", h.err(sk.block_diag, { sk.zeros { 1, 1, 1 } }))
  end)

  it("max and min of two tensors are maximum and minimum", function()
    assert.same({ { 3, 5 }, { 4, 5 } }, vals(sk.max(T { 1, 5 }, T { { 3, 2 }, { 4, 0 } })))
    assert.same({ 1, 2 }, vals(T { 1, 5 }:min(T { 3, 2 })))
  end)
end)

describe("index ops", function()
  it("tril_indices and triu_indices list the triangle row by row", function()
    local function tri(rows, cols, k, lower)
      local r, c = {}, {}
      for i = 0, rows - 1 do
        for j = 0, cols - 1 do
          if (lower and j - i <= k) or (not lower and j - i >= k) then r[#r + 1], c[#c + 1] = i, j end
        end
      end
      return { r, c }
    end
    for _, c in ipairs { { 3, 4, 1 }, { 4, 3, -1 }, { 3, 3, 0 }, { 2, 5, -3 }, { 3, 3, 5 } } do
      assert.same(tri(c[1], c[2], c[3], true), vals(sk.tril_indices(c[1], c[2], c[3])))
      assert.same(tri(c[1], c[2], c[3], false), vals(sk.triu_indices(c[1], c[2], c[3])))
    end
    assert.equal("int32", sk.tril_indices(2, 2, 0, { dtype = "int32" }):dtype())
    -- the count in closed form, for every small shape and offset, and on Meta for 2^48 rows (a fuzz finding: it looped)
    for row = 0, 5 do
      for col = 0, 5 do
        for off = -7, 7 do
          local nl, nu = 0, 0
          for i = 0, row - 1 do
            for j = 0, col - 1 do
              if j <= i + off then nl = nl + 1 end
              if j >= i + off then nu = nu + 1 end
            end
          end
          assert.same({ 2, nl }, sk.tril_indices(row, col, off):shape())
          assert.same({ 2, nu }, sk.triu_indices(row, col, off):shape())
        end
      end
    end
    assert.same({ 2, (1 << 49) - 5 }, sk.tril_indices(1 << 48, 2, -2, { device = "meta" }):shape())
    assert.same({ 2, 3 }, sk.triu_indices(1 << 40, 3, 1, { device = "meta" }):shape())
    -- and the CPU build walks only the rows with elements (fuzz finding: 2^48 rows looped)
    assert.same({ { 0 }, { 3 } }, sk.triu_indices(1 << 48, 4, 3):totable())
    assert.same({ 2, 0 }, sk.tril_indices(3, 4, math.mininteger):shape())
    assert.same({ 2, 12 }, sk.tril_indices(3, 4, math.maxinteger):shape())
    assert.matches("the result is too large", h.err(sk.tril_indices, 1 << 62, 1 << 62, 0, { device = "meta" }))
    assert.matches("row must be non%-negative, got%-1", h.err(sk.tril_indices, -1, 3))
  end)

  it("argwhere is nonzero; take indexes the flattened tensor; take_along_dim gathers with broadcasting", function()
    assert.same({ { 0, 1 }, { 1, 0 } }, vals(sk.argwhere(T { { 0, 1 }, { 1, 0 } })))
    local x = T { { 10, 30, 20 }, { 60, 40, 50 } }
    assert.same({ { 10, 50 }, { 40, 30 } }, vals(x:take(T { { 0, -1 }, { 4, 1 } })))
    assert.same({ 10, 40 }, vals(x:t():take(T { 0, 3 }))) -- row-major over the transposed view
    assert.same({ { 10 }, { 50 } }, vals(sk.take_along_dim(x, T { { 0 }, { 2 } }, 1)))
    assert.same({ { 60, 40, 50 } }, vals(sk.take_along_dim(x, T { { 1 } }, 0))) -- the index broadcasts along dim 1
    assert.same({ 60, 10 }, vals(sk.take_along_dim(x, T { 3, 0 })))
    assert.matches("out of range: tried to access index 6 on a tensor of 6 elements.", h.err(sk.take, x, T { 6 }))
    assert.matches("take%(%): Expected a long tensor for index, but got int32", h.err(sk.take, x, T({ 0 }, "int32")))
    assert.matches("dtype of indices should be int64 but got int32", h.err(sk.take_along_dim, x, T({ { 0 } }, "int32"), 1))
  end)

  it("put and put_ write the flat positions (accumulating on repeats when asked)", function()
    local x = sk.zeros({ 2, 3 }, { dtype = "int64" })
    assert.same({ { 5, 0, 0 }, { 0, 0, 6 } }, vals(x:put(T { 0, -1 }, T { 5, 6 })))
    local t = sk.zeros({ 3, 2 }, { dtype = "int64" }):t() -- not contiguous: written back through a copy
    t:put_(T { 1, 1, 4 }, T { 1, 2, 3 }, true)
    assert.same({ { 0, 3, 0 }, { 0, 3, 0 } }, vals(t))
    assert.matches("put_%(%): Expected source and index to have the same number of elements, but got source.numel%(%) = 3, index.numel%(%) = 2",
                   h.err(x.put, x, T { 0, 1 }, T { 1, 2, 3 }))
    assert.matches("put_%(%): self and source expected to have the same dtype", h.err(x.put, x, T { 0 }, T { 1.0 }))
    assert.matches("tried to access index %-7 on a tensor of 6 elements", h.err(x.put, x, T { -7 }, T { 1 }))
  end)

  it("index_add, index_copy, index_fill along a dim, against a loop over the index", function()
    local x = range(12):view { 3, 4 }
    local src = range(8):view { 2, 4 } + 100
    local idx = T { 2, 0 }
    local want = vals(x)
    for k, i in ipairs { 2, 0 } do
      for j = 1, 4 do want[i + 1][j] = want[i + 1][j] + 2 * vals(src)[k][j] end
    end
    assert.same(want, vals(x:index_add(0, idx, src, { alpha = 2 })))
    local dup = sk.zeros({ 3 }, { dtype = "int64" }):index_add(0, T { 1, 1, 1 }, T { 1, 2, 3 })
    assert.same({ 0, 6, 0 }, vals(dup))
    local c = x:index_copy(1, T { 3, 0 }, T { { -1, -2 }, { -3, -4 }, { -5, -6 } }:double())
    assert.same({ { -2, 1, 2, -1 }, { -4, 5, 6, -3 }, { -6, 9, 10, -5 } }, vals(c))
    assert.same({ { 0, 7, 2, 7 }, { 4, 7, 6, 7 }, { 8, 7, 10, 7 } }, vals(x:index_fill(1, T { 1, -1 }, 7)))
    local y = x:clone()
    y:index_fill_(0, T { 1 }, T(-1.0))
    assert.same({ -1, -1, -1, -1 }, vals(y[1]))
    assert.same(vals(x), vals(range(12):view { 3, 4 })) -- the functional forms leave self alone
    assert.matches("index out of range in self", h.err(x.index_add, x, 0, T { 3 }, sk.zeros({ 1, 4 }, { dtype = "float64" })))
    assert.matches("index_add_%(%): self %(float64%) and source %(float32%) must have the same scalar type",
                   h.err(x.index_add, x, 0, idx, sk.zeros { 2, 4 }))
    assert.matches("index_add_%(%): Number of indices %(2%) should be equal to source.size%(dim%): %(3%), for dim: 0",
                   h.err(x.index_add, x, 0, idx, sk.zeros({ 3, 4 }, { dtype = "float64" })))
    assert.matches("index_copy_%(%): index 5 is out of bounds for dimension 0 with size 3",
                   h.err(x.index_copy, x, 0, T { 5 }, sk.zeros({ 1, 4 }, { dtype = "float64" })))
    assert.matches("index_fill_ only supports a 0%-dimensional value tensor, but got tensor with 1 dimension%(s%)%.",
                   h.err(x.index_fill, x, 0, idx, T { 1.0 }))
    assert.matches("index_fill_%(%): Expected dtype int64 for index%.", h.err(x.index_fill, x, 0, T({ 0 }, "int32"), 1))
  end)

  it("index_reduce against a loop: prod, mean, amax, amin, with and without self", function()
    local x = range(12):view { 3, 4 }
    local src = range(12):view { 3, 4 } + 1
    local idx = { 0, 2, 0 }
    local ops = {
      prod = function(a, b) return a * b end, mean = function(a, b) return a + b end,
      amax = function(a, b) return math.max(a, b) end, amin = function(a, b) return math.min(a, b) end,
    }
    for name, f in pairs(ops) do
      for _, inc in ipairs { true, false } do
        local want, cnt, sv = vals(x), {}, vals(src)
        for r = 1, 3 do cnt[r] = inc and 1 or 0 end
        for k, i in ipairs(idx) do
          local row = want[i + 1]
          for j = 1, 4 do
            if cnt[i + 1] == 0 then row[j] = sv[k][j] else row[j] = f(row[j], sv[k][j]) end
          end
          cnt[i + 1] = cnt[i + 1] + 1
        end
        if name == "mean" then
          for r = 1, 3 do for j = 1, 4 do if cnt[r] > 0 then want[r][j] = want[r][j] / cnt[r] end end end
        end
        h.assert_close(vals(x:index_reduce(0, T(idx), src, name, { include_self = inc })), want, 1e-12)
      end
    end
    assert.same({ { 3, 4, 5, 6 }, { 4, 5, 6, 7 }, { 6, 7, 8, 9 } },
                vals(x:long():index_reduce(0, T(idx), src:long(), "mean"))) -- integers: floor of the mean
    local y = x:clone()
    y:index_reduce_(1, T { 3 }, T { { -1 }, { -2 }, { -3 } }:double(), "amin")
    assert.same({ -1, -2, -3 }, vals(y:select(1, 3)))
    assert.matches("Expected reduce to be one of prod, mean, amax or amin but got sum%.", h.err(x.index_reduce, x, 0, T(idx), src, "sum"))
    assert.matches("index out of range in self", h.err(x.index_reduce, x, 0, T { 0, 3, 1 }, src, "prod"))
    assert.matches("index_reduce_%(%): self %(float64%) and source %(float32%) must have the same scalar type",
                   h.err(x.index_reduce, x, 0, T(idx), src:float(), "prod"))
  end)

  it("masked_scatter fills the true positions in order from source; the functional form broadcasts self and mask", function()
    local x = sk.zeros { 3, 4 }
    local m = T { true, false, true, false }
    assert.same({ { 0, 0, 1, 0 }, { 2, 0, 3, 0 }, { 4, 0, 5, 0 } }, vals(x:masked_scatter(m, sk.arange(12):float())))
    assert.same({ 3, 4 }, sk.zeros { 4 }:masked_scatter(sk.ones({ 3, 4 }, { dtype = "bool" }), sk.arange(12.0):float()):shape())
    x:masked_scatter_(m, T { { 9, 8 }, { 7, 6 }, { 5, 4 } }:float())
    assert.same({ 9, 0, 8, 0 }, vals(x[0]))
    assert.matches("Number of elements of source < number of ones in mask", h.err(x.masked_scatter, x, m, sk.zeros { 5 }))
    assert.matches("expected self and source to have same dtypes but got float32 and int64", h.err(x.masked_scatter, x, m, sk.arange(12)))
    assert.matches("masked_scatter_ only supports boolean masks", h.err(x.masked_scatter, x, sk.ones { 4 }, sk.zeros { 12 }))
  end)

  it("isin against a membership loop, with promotion, NaN never a member, invert and both Scalar forms", function()
    local e, t = { 1, 2, 3, 4, 5, 2 }, { 2, 5, 9, 5 }
    local want = {}
    for i, v in ipairs(e) do
      want[i] = false
      for _, w in ipairs(t) do if v == w then want[i] = true end end
    end
    assert.same(want, vals(sk.isin(T(e), T(t))))
    assert.same(want, vals(sk.isin(T(e), T(t):double()))) -- int64 against float64: compared as float64
    local inv = {}
    for i, v in ipairs(want) do inv[i] = not v end
    assert.same(inv, vals(sk.isin(T(e), T(t), { invert = true })))
    assert.same({ false, false }, vals(sk.isin(T { 1.0, 0 / 0 }, T { 0 / 0 })))
    assert.same({ false, true, false }, vals(sk.isin(T { 1, 2, 3 }, 2)))
    assert.is_true(sk.isin(2, T { 1, 2, 3 }):item())
    assert.same({ false, false }, vals(sk.isin(T { 1, 2 }, sk.zeros({ 0 }, { dtype = "int64" }))))
    assert.matches("Unsupported input type encountered for isin%(%): bool", h.err(sk.isin, T { true }, T { true }))
  end)

  it("repeat_interleave: counts per slice, one count for all, and the repeats-only index form", function()
    assert.same({ 0, 2, 2 }, vals(sk.repeat_interleave(T { 1, 0, 2 })))
    local x = T { { 1, 2 }, { 3, 4 } }
    assert.same({ { 1, 2 }, { 3, 4 }, { 3, 4 } }, vals(x:repeat_interleave(T { 1, 2 }, { dim = 0 })))
    assert.same({ { 1, 1, 2, 2 }, { 3, 3, 4, 4 } }, vals(x:repeat_interleave(2, { dim = 1 })))
    assert.same({ 1, 1, 2, 2, 3, 3, 4, 4 }, vals(sk.repeat_interleave(x, 2)))
    assert.same({ 1, 1, 2, 2, 3, 3, 4, 4 }, vals(sk.repeat_interleave(x, T { 2 })))
    assert.same({ 5, 5, 5 }, vals(sk.repeat_interleave(T(5), 3)))
    assert.matches("repeats can not be negative", h.err(sk.repeat_interleave, T { 1, -1 }))
    assert.matches("repeats can not be negative", h.err(sk.repeat_interleave, x, -1))
    assert.matches("repeat_interleave only accept 1D vector as repeat", h.err(sk.repeat_interleave, T { { 1 } }))
    assert.matches("repeats has to be Long or Int tensor", h.err(sk.repeat_interleave, T { 1.0 }))
    assert.matches("repeats must have the same size as input along dim", h.err(sk.repeat_interleave, x, T { 1, 2, 3 }, { dim = 0 }))
    assert.matches("allocated size does not match required size", h.err(sk.repeat_interleave, T { 1, 2 }, { output_size = 4 }))
  end)
end)

describe("searchsorted and bucketize", function()
  -- the reference: a linear scan for the first boundary >= v (left) or > v (right)
  local function scan(b, v, right)
    for i, x in ipairs(b) do
      if (right and x > v) or (not right and x >= v) then return i - 1 end
    end
    return #b
  end

  it("matches a linear scan, left and right, on every dtype that orders", function()
    local b, v = { -3, -1, -1, 0, 2, 2, 2, 7 }, { -4, -3, -2, -1, 0, 1, 2, 3, 7, 8 }
    for _, dt in ipairs { "float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64" } do
      for _, right in ipairs { false, true } do
        local want = {}
        for i, x in ipairs(v) do want[i] = scan(b, x, right) end
        local got = sk.searchsorted(T(b, dt), T(v, dt), { right = right })
        assert.equal("int64", got:dtype())
        assert.same(want, vals(got), dt)
        assert.same(want, vals(sk.searchsorted(T(b, dt), T(v, dt), { side = right and "right" or "left" })), dt)
        assert.same(want, vals(sk.bucketize(T(v, dt), T(b, dt), { right = right })), dt)
      end
    end
    assert.same({ 0, 3 }, vals(sk.searchsorted(T({ 0, 1, 2 }, "uint8"), T({ 0, 255 }, "uint8"))))
  end)

  it("row-wise boundaries, a sorter, a scalar, int32 results, NaN at the end", function()
    local b = T { { 1, 3, 5 }, { 2, 4, 6 } }
    assert.same({ { 1, 3 }, { 0, 2 } }, vals(sk.searchsorted(b, T { { 3, 6 }, { 1, 5 } })))
    local unsorted = T { 7, 1, 5, 3 }
    local sorter = T { 1, 3, 2, 0 }
    assert.same({ 0, 2, 4 }, vals(sk.searchsorted(unsorted, T { 0, 4, 9 }, { sorter = sorter })))
    assert.equal(1, sk.searchsorted(T { 1, 3, 5 }, 3):item())
    assert.equal(2, sk.searchsorted(T { 1, 3, 5 }, 3, { right = true }):item())
    assert.equal(2, sk.bucketize(4, T { 1, 3, 5 }):item())
    local r = sk.searchsorted(T { 1.0, 2.0 }, T { 0 / 0, 1.5 }, { out_int32 = true })
    assert.equal("int32", r:dtype())
    assert.same({ 2, 1 }, vals(r))
    local out = sk.empty({ 0 }, { dtype = "int64" })
    sk.searchsorted(T { 1, 3 }, T { 2, 4, 0 }, { out = out })
    assert.same({ 1, 2, 0 }, vals(out))
    assert.same({ 1, 2 }, vals(sk.searchsorted(T { 1, 3, 5 }, T { 2.5, 4.0 }))) -- int64 against float32: promoted
  end)

  it("refuses what PyTorch refuses, with its texts", function()
    local b = T { 1, 3, 5 }
    assert.matches("side can only be 'left' or 'right' but got middle", h.err(sk.searchsorted, b, T { 1 }, { side = "middle" }))
    assert.matches("side and right can't be set to opposites, got side of left while right was True",
                   h.err(sk.searchsorted, b, T { 1 }, { side = "left", right = true }))
    assert.matches("boundaries tensor should have positive dimension, but got 0 dimension", h.err(sk.searchsorted, T(1), T { 1 }))
    assert.matches("first N%-1 dimensions of boundaries tensor and input value tensor must match",
                   h.err(sk.searchsorted, sk.zeros { 2, 3 }, sk.zeros { 3, 1 }))
    assert.matches("input value can be a scalar only when boundaries tensor dimension is 1",
                   h.err(sk.searchsorted, sk.zeros { 2, 3 }, T(1.0)))
    assert.matches("boundary and sorter must have the same size", h.err(sk.searchsorted, b, T { 1 }, { sorter = T { 0, 1 } }))
    assert.matches("sorter must be a tensor of long dtype but got dtype int32",
                   h.err(sk.searchsorted, b, T { 1 }, { sorter = T({ 0, 1, 2 }, "int32") }))
    assert.matches("sorter index out of range", h.err(sk.searchsorted, b, T { 1 }, { sorter = T { 0, 1, 3 } }))
    assert.matches("output tensor's dtype is wrong", h.err(sk.searchsorted, b, T { 1 }, { out = sk.empty({ 1 }, { dtype = "int32" }) }))
    assert.matches("boundaries tensor must be 1 dimension, but got dim%(2%)", h.err(sk.bucketize, T { 1 }, sk.zeros { 2, 2 }))
  end)
end)

describe("resize_, new_empty_strided and the random factories", function()
  it("resize_ keeps the data that fits, grows the storage, leaves equal sizes (and strides) alone", function()
    local x = sk.arange(6):float()
    x:resize_ { 2, 2 }
    assert.same({ { 0, 1 }, { 2, 3 } }, vals(x))
    x:resize_ { 2, 4 }
    assert.same({ 0, 1, 2, 3, 4, 5 }, { table.unpack(vals(x:view { 8 }), 1, 6) })
    local t = sk.arange(6):view { 2, 3 }:t()
    t:resize_ { 3, 2 }
    assert.same({ 1, 3 }, t:stride())
    local v = sk.zeros(4):narrow(0, 0, 2) -- a view: resized like any tensor
    sk.resize_(v, { 3 })
    assert.same({ 3 }, v:shape())
    local y = sk.zeros { 3 }
    y:resize_as_(sk.zeros { 1, 3 })
    assert.same({ 1, 3 }, y:shape())
    local g = sk.zeros({ 2 }, { requires_grad = true })
    assert.matches("a leaf Variable that requires grad is being used in an in%-place operation", h.err(g.resize_, g, { 3 }))
    local ng = g * 2 -- not a leaf: resize_'s own refusal
    assert.matches("cannot resize variables that require grad", h.err(ng.resize_, ng, { 3 }))
    assert.matches("negative dimension", h.err(x.resize_, x, { -1 }))
  end)

  it("new_empty_strided has the strides asked for, self's dtype and device", function()
    local e = sk.zeros({ 3 }, { dtype = "int16" }):new_empty_strided({ 2, 3 }, { 1, 2 })
    assert.same({ 1, 2 }, e:stride())
    assert.equal("int16", e:dtype())
    assert.equal("meta", h.meta { 2 }:new_empty_strided({ 2 }, { 1 }):device())
    assert.matches("dimensionality of sizes %(2%) must match dimensionality of strides %(1%)",
                   h.err(e.new_empty_strided, e, { 2, 3 }, { 1 }))
  end)

  it("randint_like draws in [low, high) with self's shape and dtype", function()
    sk.manual_seed(3)
    local r = sk.randint_like(sk.zeros({ 400 }, { dtype = "int16" }), -2, 3)
    assert.equal("int16", r:dtype())
    local seen = {}
    for _, v in ipairs(vals(r)) do assert.is_true(v >= -2 and v < 3); seen[v] = true end
    for v = -2, 2 do assert.is_true(seen[v]) end
    assert.equal("float32", sk.randint_like(sk.zeros { 2 }, 5):dtype())
    assert.matches("random_ expects 'from' to be less than 'to'", h.err(sk.randint_like, sk.zeros { 2 }, 0))
  end)

  it("normal: mean + std·N(0, 1) per element, broadcast; zero gradients to mean and std, as PyTorch", function()
    sk.manual_seed(5)
    local z = sk.normal(sk.zeros({ 20000 }, { dtype = "float64" }), 2.0)
    local m = z:mean():item()
    local sd = ((z - m) ^ 2):mean():item() ^ 0.5
    assert.is_true(math.abs(m) < 0.1 and math.abs(sd - 2) < 0.1)
    local shifted = sk.normal(T({ 100, -100 }, "float64"), T({ 0, 0 }, "float64")) -- std 0: exactly the mean
    assert.same({ 100, -100 }, vals(shifted))
    assert.same({ 2, 3 }, sk.normal(sk.zeros { 2, 3 }, sk.ones { 3 }):shape())
    assert.same({ 4 }, sk.normal(1.0, 0.5, { 4 }):shape())
    local mean = sk.zeros({ 3 }, { dtype = "float64", requires_grad = true })
    local std = sk.ones({ 3 }, { dtype = "float64", requires_grad = true })
    sk.normal(mean, std):sum():backward()
    assert.same({ 0, 0, 0 }, vals(mean.grad))
    assert.same({ 0, 0, 0 }, vals(std.grad))
    assert.matches("normal expects std >= 0.0, but found std %-1", h.err(sk.normal, sk.zeros { 2 }, -1.0))
    assert.matches("normal expects all elements of std >= 0.0", h.err(sk.normal, 0.0, T { -1.0 }))
  end)
end)

describe("dtypes and Meta", function()
  it("the copying composites keep every dtype", function()
    for _, dt in ipairs(ALL) do
      local x = sk.zeros({ 2, 3 }, { dtype = dt })
      assert.equal(dt, sk.rot90(x):dtype())
      assert.equal(dt, sk.hstack({ x, x }):dtype())
      assert.equal(dt, sk.diag_embed(x):dtype())
      assert.equal(dt, sk.kron(x, x):dtype())
      assert.equal(dt, x:index_fill(0, T { 1 }, 1):dtype())
      assert.equal(dt, sk.take_along_dim(x, T { { 0 } }, 1):dtype())
      assert.equal(dt, sk.repeat_interleave(x, 2, { dim = 0 }):dtype())
    end
  end)

  it("gives the CPU's shapes and dtypes on Meta", function()
    local cases = {
      { "diagonal", function(mk) return mk { 3, 4 }:diagonal(1) end },
      { "diag_embed", function(mk) return sk.diag_embed(mk { 2, 3 }, 1, 0, 2) end },
      { "movedim", function(mk) return sk.movedim(mk { 2, 3, 4 }, { 0, 1 }, { 2, 0 }) end },
      { "meshgrid", function(mk) return sk.meshgrid({ mk { 2 }, mk { 3 } }, { indexing = "xy" })[1] end },
      { "cartesian_prod", function(mk) return sk.cartesian_prod { mk { 2 }, mk { 3 }, mk { 2 } } end },
      { "combinations", function(mk) return sk.combinations(mk { 5 }, 3) end },
      { "column_stack", function(mk) return sk.column_stack { mk { 3 }, mk { 3, 2 } } end },
      { "dstack", function(mk) return sk.dstack { mk { 3 }, mk { 3 } } end },
      { "tensor_split", function(mk) return sk.tensor_split(mk { 7, 2 }, 3)[3] end },
      { "rot90", function(mk) return sk.rot90(mk { 2, 3 }) end },
      { "slice_scatter", function(mk) return sk.slice_scatter(mk { 4, 3 }, mk { 2, 3 }, 0, 0, 4, 2) end },
      { "kron", function(mk) return sk.kron(mk { 2, 3 }, mk { 4, 1, 1 }) end },
      { "tensordot", function(mk) return sk.tensordot(mk { 2, 3, 4 }, mk { 4, 3, 5 }, { 1, 2 }, { 1, 0 }) end },
      { "addbmm", function(mk) return sk.addbmm(mk { 4 }, mk { 3, 2, 5 }, mk { 3, 5, 4 }) end },
      { "addr", function(mk) return sk.addr(mk { 2, 3 }, mk { 2 }, mk { 3 }) end },
      { "cross", function(mk) return sk.cross(mk { 3, 2 }, mk { 3, 2 }) end },
      { "block_diag", function(mk) return sk.block_diag { mk { 2, 3 }, mk { 1 } } end },
      { "take_along_dim", function(mk) return sk.take_along_dim(mk { 2, 3 }, sk.zeros({ 1, 5 }, { dtype = "int64", device = mk { 1 }:device() }), 1) end },
      { "index_add", function(mk) return mk { 3, 4 }:index_add(0, sk.zeros({ 2 }, { dtype = "int64", device = mk { 1 }:device() }), mk { 2, 4 }) end },
      { "isin", function(mk) return sk.isin(mk { 2, 3 }, mk { 4 }) end },
      { "searchsorted", function(mk) return sk.searchsorted(mk { 2, 4 }, mk { 2, 3 }, { out_int32 = true }) end },
      { "repeat_interleave", function(mk) return sk.repeat_interleave(mk { 2, 3 }, 2, { dim = 1 }) end },
      { "index_reduce", function(mk) return mk { 3, 4 }:index_reduce(1, sk.zeros({ 2 }, { dtype = "int64", device = mk { 1 }:device() }), mk { 3, 2 }, "mean") end },
      { "normal", function(mk) return sk.normal(mk { 2, 3 }, mk { 3 }) end },
    }
    h.assert_meta_like_cpu(cases, function(s) return sk.zeros(s) end, h.meta)
    assert.matches("Meta tensors do not have", h.err(sk.masked_scatter, h.meta { 2 }, h.meta({ 2 }, "bool"), h.meta { 2 }))
  end)
end)
