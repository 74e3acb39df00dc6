-- sk — the Lua half of `require "sk"`: the module table, tensor methods and operators.
-- The C module (sk.core) owns tensors and ops; this file only arranges names.
-- Invariant: sets no global; every op closure comes from the C overload sets.
local core = require "sk.core"
local printing = require "sk.print"

local sk = {}
local mt, methods = core.metatable, {}

for name, fn in pairs(core.functions) do sk[name] = fn end
for name, fn in pairs(core.tensor_methods) do methods[name] = fn end
for name, fn in pairs(core.methods) do methods[name] = fn end

for _, name in ipairs { "tensor", "manual_seed", "set_num_threads", "get_num_threads", "empty_cache",
                        "cached_bytes", "dispatch_table", "call" } do
  sk[name] = core[name]
end

-- dtype names, so sk.float32 reads like torch.float32
for _, d in ipairs { "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" } do
  sk[d] = d
end

-- Tensor:to(dtype_or_device[, options]): a dtype name or a device string.
methods.to = core.to
function methods.cpu(t) return core.to(t, "cpu") end

mt.__index = methods
mt.__add = sk.add
mt.__sub = sk.sub
mt.__mul = sk.mul
mt.__div = sk.div
mt.__mod = sk.remainder
mt.__pow = sk.pow
mt.__unm = core.unm
mt.__idiv = core.idiv
mt.__tostring = printing.tostring
sk.Tensor = methods

return sk
