-- spec/composite_out_spec.lua — the out= variants of composites (sk_composite_util.h: SK_OUT_FROM,
-- sk_composite_write_outs) follow the rule of every op that is not elementwise: an out may not
-- share memory with an input, not even as the very same view, and the outs of one call may not
-- share memory with each other; the checks come before anything is written.
local h = require "spec.helper"
local sk = h.sk

local function overlap(arg) -- sk_check_written's message
  return "unsupported operation: some elements of the input tensor '" .. arg .. "' and the written-to tensor 'out' " ..
    "refer to a single memory location; clone() the input first"
end

describe("out= of a composite that shares memory with an input", function()
  it("take refuses out = self or out = index (as PyTorch's assert_no_overlap) and writes nothing", function()
    local x = sk.tensor({ 1.0, 2, 3, 4 })
    local i = sk.tensor({ 3, 2, 1, 0 }, { dtype = "int64" })
    local j2 = sk.tensor({ 1, 0 }, { dtype = "int64" })
    assert.equal("sk.take: " .. overlap("self"), h.err(sk.take, x, i, { out = x }))
    assert.same({ 1, 2, 3, 4 }, x:totable())
    assert.equal("sk.take: " .. overlap("self"), h.err(sk.take, x:narrow(0, 0, 2), j2, { out = x:narrow(0, 1, 2) }))
    assert.equal("sk.take: unsupported operation: the written-to tensor 'out' must be resized, but it shares its " ..
      "memory with the input tensor 'self'; pass another out tensor", h.err(sk.take, x:narrow(0, 0, 2), sk.tensor({ 1, 0, 1, 0 }, { dtype = "int64" }), { out = x:narrow(0, 2, 2) }))
    local j = sk.tensor({ 0, 1 }, { dtype = "int64" })
    assert.equal("sk.take: " .. overlap("index"), h.err(sk.take, sk.tensor({ 5, 6 }, { dtype = "int64" }), j, { out = j }))
    local out = sk.empty({ 4 })
    sk.take(x, i, { out = out })
    assert.same({ 4, 3, 2, 1 }, out:totable())
  end)

  it("every out= composite runs the check: kron, addr, take_along_dim, index_add, inverse, multi_dot", function()
    local m = sk.tensor({ { 1.0, 2 }, { 3, 4 } })
    assert.equal("sk.kron: " .. overlap("other"), h.err(sk.kron, sk.ones({ 1, 1 }), m, { out = m }))
    assert.equal("sk.addr: " .. overlap("self"), h.err(sk.addr, m, sk.ones({ 2 }), sk.ones({ 2 }), { out = m }))
    local v = m:view(-1):narrow(0, 0, 2)
    assert.equal("sk.addr: " .. overlap("vec1"), h.err(sk.addr, sk.ones({ 2, 2 }), v, sk.ones({ 2 }), { out = m }))
    assert.equal("sk.take_along_dim: " .. overlap("self"),
      h.err(sk.take_along_dim, m, sk.zeros({ 2, 2 }, { dtype = "int64" }), 1, { out = m }))
    assert.equal("sk.index_add: " .. overlap("self"),
      h.err(sk.index_add, m, 0, sk.tensor({ 0 }, { dtype = "int64" }), sk.ones({ 1, 2 }), { out = m }))
    assert.equal("sk.inverse: " .. overlap("self"), h.err(sk.inverse, m, { out = m }))
    assert.equal("sk.linalg_multi_dot: " .. overlap("tensors"), h.err(sk.linalg_multi_dot, { m, m }, { out = m }))
    assert.same({ { 1, 2 }, { 3, 4 } }, m:totable())
  end)

  it("a composite with several outs refuses outs that share memory, before writing any", function()
    local a = sk.tensor({ { 2.0, 1 }, { 1, 3 } })
    local q = sk.zeros({ 2, 2 })
    assert.equal("sk.qr: unsupported operation: the outputs 'R' and 'Q' refer to a single memory location",
      h.err(sk.qr, a, true, { out = { q, q } }))
    assert.equal("sk.qr: " .. overlap("self"):gsub("'out'", "'Q'"), h.err(sk.qr, a, true, { out = { a, q } }))
    assert.same({ { 0, 0 }, { 0, 0 } }, q:totable())
  end)

  it("an elementwise composite keeps the elementwise rule: out may be the very same view", function()
    local x = sk.tensor({ 0.0, 1 }, { dtype = "float64" })
    sk.special_ndtr(x, { out = x })
    h.assert_close(x:totable(), { 0.5, 0.8413447460685429 }, 1e-12)
    local y = sk.tensor({ 0.0, 1, 2 }, { dtype = "float64" })
    assert.equal("sk.special_ndtr: " .. overlap("self"), h.err(sk.special_ndtr, y:narrow(0, 0, 2), { out = y:narrow(0, 1, 2) }))
    assert.same({ 0, 1, 2 }, y:totable())
  end)
end)
