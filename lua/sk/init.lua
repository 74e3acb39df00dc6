-- sk — the Lua half of `require "sk"`: the module table, tensor methods and operators.
-- The C module (sk.core) owns tensors and ops; this file only arranges names.
-- Invariant: sets no global; every op closure comes from the C overload sets.
local core = require "sk.core"
-- errors skip the frames of sk's own Lua files and point at the user's line
core.hide_source((debug.getinfo(1, "S").source:gsub("init%.lua$", "")))
local printing = require "sk.print"

local sk = {}
local mt, methods = core.metatable, {}

for name, fn in pairs(core.functions) do sk[name] = fn end
for name, fn in pairs(core.tensor_methods) do methods[name] = fn end
for name, fn in pairs(core.methods) do methods[name] = fn end

-- sk.special.X is torch.special.X: every special_X op under its short name.
sk.special = {}
for name, fn in pairs(core.functions) do
  local short = name:match("^special_(.+)$")
  if short then sk.special[short] = fn end
end

-- sk.linalg.X is torch.linalg.X: every linalg_X op under its short name.
sk.linalg = {}
for name, fn in pairs(core.functions) do
  local short = name:match("^linalg_(.+)$")
  if short then sk.linalg[short] = fn end
end

for _, name in ipairs { "tensor", "manual_seed", "set_num_threads", "get_num_threads", "empty_cache",
                        "cached_bytes", "memory_stats", "dispatch_table", "call", "cpu_isa" } do
  sk[name] = core[name]
end

-- {==== Shape helpers PyTorch defines in Python ====
-- sk.broadcast_shapes(shape, ...): the broadcast of sizes lists (an integer is a 1-d shape), as a list.
function sk.broadcast_shapes(...)
  local out, n = {}, 0
  for i = 1, select("#", ...) do
    local s = select(i, ...)
    if math.type(s) == "integer" then s = { s } end
    if type(s) ~= "table" then
      core.raise(string.format("sk.broadcast_shapes: argument %d must be a list of sizes or an integer, not a %s", i, type(s)))
    end
    for _, v in ipairs(s) do
      if math.type(v) ~= "integer" then core.raise(string.format("sk.broadcast_shapes: argument %d has a size that is not an integer", i)) end
      if v < 0 then core.raise(string.format("Trying to create tensor with negative dimension (%d): (%d)", v, v)) end
    end
    local m = math.max(n, #s)
    local r = {}
    for k = 1, m do
      local a, b = out[k - (m - n)] or 1, s[k - (m - #s)] or 1
      if a ~= b and a ~= 1 and b ~= 1 then core.raise("Shape mismatch: objects cannot be broadcast to a single shape") end
      r[k] = a == 1 and b or a
    end
    out, n = r, m
  end
  return out
end

-- sk.tensordot(a, b, dims): dims an integer (a's last dims against b's first ones, 2 by
-- default), a pair of lists {dims_a, dims_b}, or the op's own two list arguments.
local tensordot = sk.tensordot
function sk.tensordot(a, b, dims, ...)
  if getmetatable(a) ~= mt or getmetatable(b) ~= mt then return tensordot(a, b, dims, ...) end -- the op names the bad argument
  if dims == nil or math.type(dims) == "integer" then
    dims = dims or 2
    if dims < 0 then core.raise(string.format("tensordot expects dims >= 0, but got dims=%d", dims)) end
    local most = math.min(a:dim(), b:dim())
    if dims > most then
      core.raise(string.format("tensordot expects dims <= %d (the fewer dimensions of the two tensors), but got dims=%d", most, dims))
    end
    local da, db, na = {}, {}, a:dim()
    for i = 1, dims do da[i], db[i] = na - dims + i - 1, i - 1 end
    return tensordot(a, b, da, db, ...)
  end
  if type(dims) == "table" and type(dims[1]) == "table" then return tensordot(a, b, dims[1], dims[2], ...) end
  return tensordot(a, b, dims, ...)
end

-- sk.einsum(equation, a, b, ...[, options]) as torch.einsum takes its operands, or the op's
-- own sk.einsum(equation, {a, b, ...}[, options]).
local einsum = sk.einsum
function sk.einsum(equation, first, ...)
  if getmetatable(first) ~= mt then return einsum(equation, first, ...) end
  local ops, n = { first }, select("#", ...)
  for i = 1, n do
    local v = select(i, ...)
    if getmetatable(v) ~= mt then
      if i < n then core.raise(string.format("sk.einsum: argument %d must be a tensor or the last, options, argument", i + 2)) end
      return einsum(equation, ops, v)
    end
    ops[#ops + 1] = v
  end
  return einsum(equation, ops)
end

-- sk.unique(t, {sorted =, return_inverse =, return_counts =, dim =}): PyTorch's torch.unique, through
-- _unique2 (or unique_dim with dim): the unique values, then the inverse and the counts when asked.
function sk.unique(t, options)
  local o = options or {}
  if type(o) ~= "table" then core.raise("sk.unique: argument 'options' must be a table") end
  local sorted = o.sorted == nil and true or o.sorted
  local out, inv, cnt
  if o.dim ~= nil then out, inv, cnt = sk.unique_dim(t, o.dim, sorted, o.return_inverse or false, o.return_counts or false)
  else out, inv, cnt = sk._unique2(t, sorted, o.return_inverse or false, o.return_counts or false) end
  if o.return_inverse and o.return_counts then return out, inv, cnt end
  if o.return_inverse then return out, inv end
  if o.return_counts then return out, cnt end
  return out
end
methods.unique = sk.unique
-- }====

-- dtype names, so sk.float32 reads like torch.float32
for _, d in ipairs { "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" } do
  sk[d] = d
end

-- Tensor:to(dtype_or_device[, options]): a dtype name or a device string.
methods.to = core.to
-- PyTorch's dtype shortcuts: t:float() is t:to("float32") (t itself when it is float32), t:long() int64 ...
for name, dtype in pairs { float = "float32", double = "float64", half = "float16", bfloat16 = "bfloat16",
                           int = "int32", long = "int64", short = "int16", char = "int8", byte = "uint8", bool = "bool" } do
  methods[name] = function(t, options) return core.to(t, dtype, options) end
end
function methods.cpu(t) return core.to(t, "cpu") end
function methods.cuda(t, device) return core.to(t, device and ("cuda:" .. device) or "cuda") end
sk.cuda = core.cuda

-- {==== Extending sk at run time ====
sk.library = require("sk.library")(core)
sk.cpu_fallback = core.lib.cpu_fallback
sk.load_backend = core.lib.load_backend
-- sk.structured_builtin("aten::add.out"): a built-in op's meta function and CPU kernel, to re-declare it with lib:structured
sk.structured_builtin = core.lib.structured_builtin

-- sk.ops.<namespace>.<name>: every op by its schema name, built-in (aten) or defined at run time.
sk.ops = setmetatable({}, { __index = function(_, ns)
  return setmetatable({}, { __index = function(_, name)
    local f = core.op_function(ns, name)
    if not f then error(string.format("sk.ops.%s has no op '%s'", ns, name), 2) end
    return f
  end })
end })

local L = core.lib
sk.fallback = {
  counts = L.fallback_counts, reset = L.fallback_reset, call = L.fallback_call,
  allow_views = L.fallback_allow_views, set_log = L.fallback_set_log,
}
-- sk.fallback.allow(key, {ops}) / deny(key, {ops}) / clear(key, {ops})
for name, rule in pairs { allow = "allow", deny = "deny", clear = "default" } do
  sk.fallback[name] = function(key, ops)
    for _, op in ipairs(type(ops) == "table" and ops or { ops }) do L.fallback_rule(key, op, rule) end
  end
end

sk.backends = {
  -- register(name, {on_copy = fn(direction, nbytes), fallback = "none" | "cpu"})
  register = function(name, opts)
    opts = require "sk.options"("sk.backends.register", opts, { on_copy = true, fallback = true })
    local fb = opts.fallback or "none"
    if fb ~= "none" and fb ~= "cpu" then
      core.raise(string.format("sk.backends.register: option 'fallback' must be \"none\" or \"cpu\", not %s",
                               type(fb) == "string" and "'" .. fb .. "'" or "a " .. type(fb)))
    end
    return L.register_backend(name, opts.on_copy, fb == "cpu")
  end,
  unregister = L.unregister_backend,
  stats = L.backend_stats,
}
-- }====

require("sk.autograd")(sk, core, methods)
sk.nn = require("sk.nn")(sk, core)
sk.optim = require("sk.optim")(sk, core)
require("sk.serialize")(sk, core, methods)
require("sk.plan")(sk, core)
mt.__index = methods
require("sk.indexing")(sk, mt, methods) -- t[i], t[{...}], t[mask] and assignment; methods stay first
sk.newaxis, sk.ellipsis = require("sk.indexing").newaxis, require("sk.indexing").ellipsis
mt.__add = sk.add
mt.__sub = sk.sub
mt.__mul = sk.mul
mt.__div = sk.div
mt.__mod = sk.remainder
mt.__pow = sk.pow
mt.__unm = core.unm
mt.__idiv = core.idiv
mt.__band = sk.bitwise_and
mt.__bor = sk.bitwise_or
mt.__bxor = sk.bitwise_xor
mt.__shl = sk.bitwise_left_shift
mt.__shr = sk.bitwise_right_shift
mt.__bnot = core.bnot
mt.__tostring = printing.tostring
sk.Tensor = methods

return sk
