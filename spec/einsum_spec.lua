-- spec/einsum_spec.lua — einsum against the sum it names, evaluated in plain Lua over every
-- assignment of its subscripts; ellipses against the same equation with letters; the
-- contraction order (the path argument and the chosen order, seen through the CPU cache of
-- large blocks); autograd, Meta, dtypes and PyTorch's error texts.
local h = require "spec.helper"
local sk = h.sk

local filled, flat = h.filled, h.flat
-- small integers, exact in every float dtype's sums here
local function ints(shape, seed, dtype) return filled(shape, function(k) return (k * 7 + seed * 3) % 5 - 2 end, dtype) end

-- the equation's value by definition: letters only; size-1 dims broadcast
local function reference(eq, ops)
  eq = eq:gsub(" ", "")
  local lhs, rhs = eq:match("^(.-)%->(.*)$")
  lhs = lhs or eq
  local terms = {}
  for t in (lhs .. ","):gmatch("(.-),") do terms[#terms + 1] = t end
  local size, count = {}, {}
  for k, t in ipairs(terms) do
    local shape = ops[k]:shape()
    for d = 1, #t do
      local c = t:sub(d, d)
      count[c] = (count[c] or 0) + 1
      if shape[d] ~= 1 or not size[c] then size[c] = shape[d] end
    end
  end
  if not rhs then
    local once = {}
    for c, n in pairs(count) do if n == 1 then once[#once + 1] = c end end
    table.sort(once) -- ASCII: A..Z before a..z, PyTorch's order
    rhs = table.concat(once)
  end
  local labels = {}
  for c in pairs(size) do labels[#labels + 1] = c end
  table.sort(labels)
  local vals = {}
  for k = 1, #ops do vals[k] = flat(ops[k]) end
  local out_shape = {}
  for d = 1, #rhs do out_shape[d] = size[rhs:sub(d, d)] end
  local out_n = 1
  for _, s in ipairs(out_shape) do out_n = out_n * s end
  local out = {}
  for i = 1, out_n do out[i] = 0 end
  local at = {}
  local function offset(term, shape)
    local o = 0
    for d = 1, #term do o = o * shape[d] + (shape[d] == 1 and 0 or at[term:sub(d, d)]) end
    return o
  end
  local function walk(li)
    if li > #labels then
      local p = 1
      for k, t in ipairs(terms) do p = p * vals[k][offset(t, ops[k]:shape()) + 1] end
      local o = offset(rhs, out_shape) + 1
      out[o] = out[o] + p
      return
    end
    for v = 0, size[labels[li]] - 1 do at[labels[li]] = v; walk(li + 1) end
  end
  walk(1)
  return out, out_shape
end

describe("einsum", function()
  local CASES = {
    { "ij,jk->ik", { { 2, 3 }, { 3, 4 } } },
    { "ij,jk", { { 2, 3 }, { 3, 4 } } },
    { "bij,bjk->bik", { { 2, 2, 3 }, { 2, 3, 2 } } },
    { "bhqd,bhkd->bhqk", { { 2, 2, 3, 4 }, { 2, 2, 5, 4 } } },
    { "i,j->ij", { { 3 }, { 4 } } },
    { "i,i", { { 5 }, { 5 } } },
    { "ii->i", { { 3, 3 } } },
    { "ii", { { 4, 4 } } },
    { "iij->ji", { { 3, 3, 2 } } },
    { "ijji->ij", { { 2, 3, 3, 2 } } },
    { "ij->ji", { { 2, 3 } } },
    { "ij->", { { 2, 3 } } },
    { "ijk->kj", { { 2, 3, 4 } } },
    { "Ab,ba", { { 2, 3 }, { 3, 2 } } },
    { "bA,aB", { { 2, 3 }, { 3, 2 } } },
    { "ij,ij->ij", { { 2, 3 }, { 2, 1 } } },
    { "i,i->i", { { 3 }, { 1 } } },
    { "ijx,jk->ik", { { 2, 3, 2 }, { 3, 4 } } },
    { "ij,jk,kl->il", { { 2, 3 }, { 3, 4 }, { 4, 5 } } },
    { "ij,jk,ki->", { { 2, 3 }, { 3, 4 }, { 4, 2 } } },
    { "i,i,i->", { { 4 }, { 4 }, { 4 } } },
    { "ab,bc,cd,de->ae", { { 2, 3 }, { 3, 2 }, { 2, 4 }, { 4, 3 } } },
    { "ab,cd,bd->ac", { { 2, 3 }, { 4, 2 }, { 3, 2 } } },
    { "ii,ii->i", { { 3, 3 }, { 3, 3 } } },
    { "ij,kl->ijkl", { { 2, 2 }, { 3, 1 } } },
    { "abc,cd,da->b", { { 2, 3, 2 }, { 2, 3 }, { 3, 2 } } },
    { "a,b,c,d,e,f,g,h,i->ihgfedcba", { { 2 }, { 1 }, { 2 }, { 2 }, { 1 }, { 2 }, { 1 }, { 2 }, { 2 } } },
    { "ij,jk->ik", { { 2, 0 }, { 0, 3 } } },
  }
  for _, c in ipairs(CASES) do
    it(c[1] .. " is its sum over every assignment of its subscripts", function()
      for _, dt in ipairs { "float64", "float32", "int64" } do
        local ops = {}
        for k, s in ipairs(c[2]) do ops[k] = ints(s, k, dt) end
        local want, shape = reference(c[1], ops)
        local got = sk.einsum(c[1], ops)
        assert.same(shape, got:shape())
        assert.same(want, flat(got:double()))
      end
    end)
  end

  it("takes its operands as PyTorch's torch.einsum does, or as one list", function()
    local a, b = ints({ 2, 3 }, 1), ints({ 3, 4 }, 2)
    assert.same(flat(sk.einsum("ij,jk->ik", { a, b })), flat(sk.einsum("ij,jk->ik", a, b)))
    assert.same(flat(sk.mm(a, b)), flat(sk.einsum("ij,jk->ik", a, b)))
    assert.same(flat(sk.einsum("ij,jk->ik", { a, b }, { path = { 1, 0 } })), flat(sk.einsum("ij,jk->ik", a, b, { path = { 0, 1 } })))
    assert.matches("sk.einsum: argument 3 must be a tensor", h.err(sk.einsum, "ij,jk", a, 5, b))
  end)

  it("reads an ellipsis as the broadcast dims it covers", function()
    local x, y = ints({ 2, 5, 2, 3 }, 1), ints({ 2, 5, 3, 4 }, 2)
    assert.same(flat(sk.einsum("abij,abjk->abik", x, y)), flat(sk.einsum("...ij,...jk->...ik", x, y)))
    assert.same(flat(sk.einsum("abij,abjk->abik", x, y)), flat(sk.einsum("...ij,...jk", x, y))) -- implicit: ellipsis first
    -- widths differ: right-aligned and broadcast, [2, 3] and [2, 1, 1] give [2, 1, 3]
    local p, q = ints({ 2, 3 }, 1), ints({ 2, 1, 1 }, 2)
    local r = sk.einsum("i...,i...->i...", p, q)
    assert.same({ 2, 1, 3 }, r:shape())
    assert.same(flat(sk.einsum("ij,ixy->ixj", p, q)), flat(r))
    -- left out of an explicit output: summed
    assert.same(flat(sk.einsum("abij->ij", x)), flat(sk.einsum("...ij->ij", x)))
    assert.same(flat(x:sum()), flat(sk.einsum("...->", x)))
    assert.same({}, sk.einsum("ij->...", p):shape())
    -- in the middle of a term, and covering no dims
    assert.same(flat(sk.einsum("iabj->jab", x)), flat(sk.einsum("i...j->j...", x)))
    assert.same(flat(sk.einsum("ij->ji", p)), flat(sk.einsum("...ij->ji", p)))
  end)

  it("returns a view where no sum is needed, as PyTorch's does", function()
    local a = ints({ 3, 3 }, 1)
    local t = sk.einsum("ij->ji", a)
    t[{ 0, 1 }] = 99
    assert.equal(99, a[{ 1, 0 }]:item())
    local d = sk.einsum("ii->i", a)
    d[1] = -7
    assert.equal(-7, a[{ 1, 1 }]:item())
  end)

  it("contracts in the order the path argument gives, and finds a cheap order itself", function()
    -- a [2000, 2] · b [2, 2000] first is a 2000×2000 (16 MB) temporary; b · c first, [2, 1]
    local a, b, c = ints({ 2000, 2 }, 1, "float32"), ints({ 2, 2000 }, 2, "float32"), ints({ 2000, 1 }, 3, "float32")
    local want = flat(sk.mm(a, sk.mm(b, c)))
    local function settle() collectgarbage("collect") collectgarbage("collect") sk.empty_cache() end
    settle() -- the cache then holds only what the call frees
    assert.same(want, flat(sk.einsum("ij,jk,kl->il", a, b, c)))
    assert.is_true(sk.cached_bytes() < 64 * 1024) -- no large temporary was made
    settle()
    assert.same(want, flat(sk.einsum("ij,jk,kl->il", a, b, c, { path = { 0, 1, 0, 1 } })))
    assert.is_true(sk.cached_bytes() >= 2000 * 2000 * 4) -- the temporary the given order makes
    settle()
    -- a path's pairs name positions in the shrinking list, the result appended (opt_einsum's)
    assert.same(want, flat(sk.einsum("ij,jk,kl->il", a, b, c, { path = { 2, 1, 1, 0 } })))
    assert.is_true(sk.cached_bytes() < 64 * 1024)
    -- nine operands: the order is found greedily
    local ops, eq = {}, "a,b,c,d,e,f,g,h,i->"
    for k = 1, 9 do ops[k] = ints({ 3 }, k) end
    local s = 1
    for k = 1, 9 do s = s * ops[k]:sum():item() end
    assert.equal(s, sk.einsum(eq, ops):item())
  end)

  it("differentiates through its pieces", function()
    local a = sk.tensor({ { 1, 2, 3 }, { 4, 5, 6 } }, { dtype = "float64", requires_grad = true })
    local b = sk.tensor({ { 1, 0 }, { 2, 1 }, { 0, 3 } }, { dtype = "float64", requires_grad = true })
    sk.einsum("ij,jk->ik", a, b):sum():backward()
    assert.same({ { 1, 3, 3 }, { 1, 3, 3 } }, a.grad:totable()) -- row sums of b
    assert.same({ { 5, 5 }, { 7, 7 }, { 9, 9 } }, b.grad:totable()) -- column sums of a
    local x = sk.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = "float64", requires_grad = true })
    sk.einsum("ii", x):backward()
    assert.same({ { 1, 0 }, { 0, 1 } }, x.grad:totable())
  end)

  it("sums a single operand's subscripts with sum's dtype rule (integers give int64), size 1 too", function()
    -- PyTorch 1.13: 'ij->i' int32 gives int64; no subscript summed ('ij->ji', 'ii->i') keeps int32
    local a = sk.tensor({ { 0, 1, 2 }, { 3, 4, 5 } }, { dtype = "int32" })
    local r = sk.einsum("ij->i", a)
    assert.equal("int64", r:dtype()); assert.same({ 3, 12 }, r:totable())
    assert.equal("int64", sk.einsum("ij->", a):dtype())
    assert.equal("int64", sk.einsum("ij->i", sk.tensor({ { 1 }, { 2 } }, { dtype = "int32" })):dtype())
    assert.equal("int64", sk.einsum("ii->", sk.tensor({ { 7 } }, { dtype = "int16" })):dtype())
    assert.equal("int64", sk.einsum("ij->i", sk.tensor({ { true, true } })):dtype())
    assert.equal("int32", sk.einsum("ij->ji", a):dtype())
    assert.equal("int32", sk.einsum("ii->i", a:narrow(1, 0, 2)):dtype())
    assert.equal("float64", sk.einsum("ij->i", a:double()):dtype())
  end)

  it("promotes mixed dtypes and runs on Meta", function()
    local r = sk.einsum("i,i->", sk.tensor({ 1, 2 }, { dtype = "int32" }), sk.tensor({ 0.5, 0.25 }, { dtype = "float64" }))
    assert.equal("float64", r:dtype())
    assert.equal(1, r:item())
    local m = sk.einsum("bij,bjk->bik", h.meta({ 4, 2, 3 }), h.meta({ 1, 3, 5 }))
    assert.same({ 4, 2, 5 }, m:shape())
    assert.equal("meta", m:device())
  end)

  it("says what is wrong with an equation in PyTorch's words", function()
    local a, b = ints({ 2, 3 }, 1), ints({ 3, 4 }, 2)
    local E = {
      { "ij,jk->ik", { a, ints({ 4, 5 }, 1) }, "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3" },
      { "ij,jk", { a }, "fewer operands were provided than specified in the equation" },
      { "ij", { a, b }, "more operands were provided than specified in the equation" },
      { "i1", { a }, "invalid subscript given at index 1 in the equation string, subscripts must be in %[a%-zA%-Z%]" },
      { "ijk", { a }, "the number of subscripts in the equation %(3%) does not match the number of dimensions %(2%) for operand 0 and no ellipsis was given" },
      { "ijk...", { a }, "the number of subscripts in the equation %(3%) is more than the number of dimensions %(2%) for operand 0" },
      { "i..j.", { a }, "found '.' for operand 0 that is not part of any ellipsis" },
      { "...i...", { a }, "found '.' for operand 0 for which an ellipsis was already found" },
      { "ij->ii", { a }, "output subscript i appears more than once in the output" },
      { "ij->k", { a }, "output subscript k does not appear in the equation for any input operand" },
      { "ij->i.", { a }, "found '.' for output that is not part of any ellipsis %(...%)" },
      { "i-j", { a }, "invalid subscript given at index 1" },
      { "i,j->i,j", { ints({ 2 }, 1), ints({ 2 }, 1) }, "invalid subscript given at index 6" },
      { "ii", { a }, "subscript i is repeated for operand 0 but the sizes don't match, 2 != 3" },
      { "...,...->...", { a, ints({ 4, 3 }, 1) }, "dimension 0 covered by ellipsis in operand 1 has size 4 which does not broadcast with previously seen ellipsis with size 2" },
      { "", {}, "must provide at least one operand" },
      { "abcdefghijklmnopq->", { ints({ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 1) }, "operand 0 has more than 16 subscripts" },
      { "abcdefghi,jklmnopqr", { ints({ 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 1), ints({ 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 1) },
        "the equation has 18 distinct subscripts %(ellipsis dims included%); sk's tensors have at most 16 dimensions" },
    }
    for _, e in ipairs(E) do assert.matches("einsum%(%): " .. e[3], h.err(sk.einsum, e[1], e[2]), 1) end
    local c = ints({ 4, 5 }, 3)
    assert.matches("invalid contraction %(1, 1%) cannot contract an operand with itself", h.err(sk.einsum, "ij,jk,kl->il", { a, b, c }, { path = { 1, 1, 0, 1 } }))
    assert.matches("invalid contraction %(1, 5%) operand index is out of bounds", h.err(sk.einsum, "ij,jk,kl->il", { a, b, c }, { path = { 1, 5, 0, 1 } }))
    assert.matches("expected contraction path given in path parameter to have size 4 but got 2", h.err(sk.einsum, "ij,jk,kl->il", { a, b, c }, { path = { 1, 2 } }))
    assert.matches("expected all operands on one device", h.err(sk.einsum, "ij,jk", a, h.meta({ 3, 4 })))
  end)
end)
