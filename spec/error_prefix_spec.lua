-- spec/error_prefix_spec.lua — an error names the op the user called once, in front.
-- Core messages may start with their own op's name (PyTorch's texts do: "linalg.inv: ...",
-- "torch.histc: ..."); the binding names the op itself, so it drops that repeat
-- (sk_error_drop_self), on every path: a direct call, a method, sk.call, a plan being
-- recorded or replayed, the CPU fallback of another backend. Another op's name is
-- information and stays ("Tensor:tile: repeat: ...").
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

-- "file:12: sk.tril: msg" -> "sk.tril: msg"
local function message(fn)
  return (h.err(fn):gsub("^[^\n]-:%d+: ", ""))
end

local meta = function(shape) return sk.empty(shape, { device = "meta" }) end
local MAX = math.maxinteger

-- { the message, how to raise it }
local CASES = {
  { "sk.nonzero: the shape of the result depends on the values of 'self', which Meta tensors do not have",
    function() return sk.nonzero(meta({ 3 })) end },
  { "sk.tril: input tensor must have at least 2 dimensions", function() return sk.tril(T({ 1, 2 })) end },
  { "sk.triu: input tensor must have at least 2 dimensions", function() return sk.triu(T({ 1, 2 })) end },
  { "Tensor:tril: input tensor must have at least 2 dimensions", function() return T({ 1, 2 }):tril() end },
  { "Tensor:repeat: size 3 at dim 1 times 9223372036854775807 repeats overflows (argument 'repeats')",
    function() local m = sk.ones(2, 3) return m["repeat"](m, { 0, MAX }) end },
  { "Tensor:chunk: 9223372036854775807 chunks are too many", function() return sk.ones(0):chunk(MAX) end },
  { "sk.narrow: argument 'start' is a meta tensor: its values are needed",
    function() return sk.narrow(sk.ones(3), 0, meta({}):long(), 1) end },
  { "sk.arange: argument 'dtype' must not be bool", function() return sk.arange(0, 2, 1, { dtype = "bool" }) end },
  { "sk.prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = 2",
    function() return sk.prelu(sk.ones(2, 2), sk.ones(1, 1)) end },
  { "sk.linalg_inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix is singular.",
    function() return sk.linalg_inv(sk.zeros(2, 2)) end },
  { "sk.clamp: At least one of 'min' or 'max' must not be None", function() return sk.clamp(T({ 1.0 })) end },
  { "sk.histc: max must be larger than min", function() return sk.histc(T({ 1.0 }), 4, 2, 1) end },
  { "sk.renorm: expected maxnorm to be >= 0 but got -1", function() return sk.renorm(sk.ones(2, 2), 2, 0, -1) end },
  { "sk._ctc_loss: target 9 of batch entry 0 is out of range for 4 classes",
    function()
      return sk._ctc_loss(sk.zeros(5, 2, 4), T({ { 9, 1, 2 }, { 1, 2, 3 } }, { dtype = "int64" }), { 5, 4 }, { 3, 2 })
    end },
  { "aten::tril: input tensor must have at least 2 dimensions", function() return sk.call("aten::tril", T({ 1, 2 })) end },
  -- recorded into a plan: the plan's context, then the message without the op's name again
  { "sk.tril: sk.plan: cannot record 'aten::tril': input tensor must have at least 2 dimensions",
    function() return sk.plan(function(x) return sk.tril(x) end, T({ 1, 2 })) end },
  -- replayed: the step names the op, the message does not again
  { "sk.plan: step 1 (aten::_ctc_loss, called as aten::_ctc_loss): target 9 of batch entry 0 is out of range for 4 classes",
    function()
      local lp, len = sk.zeros(5, 2, 4), { 5, 4 }
      local p = sk.plan(function(x, t) return sk._ctc_loss(x, t, len, { 3, 2 }) end,
                        lp, T({ { 1, 1, 2 }, { 1, 2, 3 } }, { dtype = "int64" }))
      return p(lp, T({ { 9, 1, 2 }, { 1, 2, 3 } }, { dtype = "int64" }))
    end },
  -- an inner op's name is information
  { "Tensor:tile: repeat: size 2 at dim 0 times 4611686018427387904 repeats overflows (argument 'repeats')",
    function() return sk.ones(2, 3):tile({ 1 << 62, 1 }) end },
}

describe("error messages", function()
  it("name the op once, in front, on every path", function()
    local bad = {}
    for i, c in ipairs(CASES) do
      local msg = message(c[2])
      if msg ~= c[1] or h.doubled_prefix(msg) then
        bad[#bad + 1] = string.format("case %d: got '%s'%s", i, msg, h.doubled_prefix(msg) and " (doubled)" or "")
      end
    end
    assert.equal("", table.concat(bad, "\n"))
  end)
end)
