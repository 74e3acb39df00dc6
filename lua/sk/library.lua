-- sk.library: ops, kernels, meta functions, structured families and fallbacks
-- registered at run time, owned by one object. Everything lands in the C
-- dispatcher through core.lib; schemas are parsed by sk.schema, the one parser.
-- Invariants: a library remembers each registration it made and removes them
-- in reverse order on close (restoring what they shadowed); a library
-- collected while a Lua kernel runs is closed at the next safe point.
local schema = require "sk.schema"
local structured = require "sk.structured"
local types = require "sk.types"

return function(core)
  -- The C primitives raise at the user's line: frames of sk's own files are skipped.
  local C, raise = core.lib, core.raise
  local Library = {}
  Library.__index = Library
  local pending = {} -- libraries collected while a kernel was running

  local function qualify(self, name)
    if name:find("::", 1, true) then return name end
    return self.ns .. "::" .. name
  end

  local function check_open(self, what)
    if self.closed then raise(what .. ": library '" .. self.ns .. "' is closed") end
  end

  local function drain()
    for i = #pending, 1, -1 do
      if pcall(Library.close, pending[i]) then table.remove(pending, i) end
    end
  end

  -- lib:define(schema) -> "ns::name.overload"
  function Library:define(text)
    check_open(self, "lib:define")
    drain()
    if type(text) ~= "string" then raise("lib:define: argument 'schema' expected a string, got " .. type(text)) end
    local rec, err = schema.parse(text)
    if not rec then raise("lib:define: " .. err) end
    local limit = schema.check_limits(rec)
    if limit then raise("lib:define: '" .. text .. "': " .. limit) end
    if rec.namespace_explicit and rec.namespace ~= self.ns then
      raise(string.format("lib:define: schema namespace '%s' differs from the library's '%s'", rec.namespace, self.ns))
    end
    rec.namespace = self.ns
    local q = self.ns .. "::" .. rec.name .. (rec.overload ~= "" and "." .. rec.overload or "")
    local ok, _, existing = pcall(core.dispatch_table, q)
    if ok then
      if existing == text:gsub("^[%w_]+::", "") then
        raise(string.format("lib:define: operator '%s' is already defined", q))
      end
      raise(string.format("lib:define: operator '%s' is already defined as '%s'", q, existing))
    end
    rec.text = schema.print(setmetatable({ namespace_explicit = false }, { __index = rec }))
    -- the SkArg rows, as codegen writes them for built-in ops
    rec.c_args, rec.c_rets = {}, {}
    for i, a in ipairs(rec.args) do rec.c_args[i] = types.skarg(a) end
    for i, r in ipairs(rec.returns) do rec.c_rets[i] = types.skarg(r, types.alias_of(rec, i)) end
    local name = C.define(rec)
    self.defined[#self.defined + 1] = name
    return name
  end

  local function add(self, op, id) self.regs[#self.regs + 1] = { op = op, id = id } end

  -- lib:impl(op, key, fn): a Lua kernel for any key, on any op (built-in ones too).
  function Library:impl(op, key, fn)
    check_open(self, "lib:impl")
    drain()
    local q = qualify(self, op)
    add(self, q, C.register_kernel(q, key, fn, "sk.library('" .. self.ns .. "')"))
  end

  -- lib:autograd(op, {backward = fn(ctx, grad...), setup_context = fn(ctx, inputs, output)}): the
  -- gradient of an op defined from Lua (torch.library.register_autograd): an Autograd-key kernel
  -- that runs the op below Autograd and records a node calling backward.
  function Library:autograd(op, spec)
    check_open(self, "lib:autograd")
    drain()
    local q = qualify(self, op)
    if type(spec) ~= "table" then raise("lib:autograd: argument 'spec' expected a table, got " .. type(spec)) end
    for k in pairs(spec) do
      if k ~= "backward" and k ~= "setup_context" then
        raise(string.format("lib:autograd: unexpected field '%s' (expected backward, setup_context)", tostring(k)))
      end
    end
    local ok, _, text = pcall(core.dispatch_table, q)
    if not ok then raise(string.format("lib:autograd: no operator '%s' (define it first with lib:define)", q)) end
    local rec = schema.parse(text)
    if rec.kind ~= "functional" then
      raise(string.format("lib:autograd: Cannot register autograd formula for non-functional operator %s. Please create a functional operator and register an autograd formula for that.", q))
    end
    local ns, rest = q:match("^(.-)::(.*)$")
    local fn = core.op_function(ns, (rest:gsub("%..*$", "")))
    local F = require("sk").autograd.Function {
      name = (rec.name:gsub("^%l", string.upper)),
      forward = function(...) return fn(...) end,
      setup_context = spec.setup_context or function() end,
      backward = spec.backward,
    }
    self:impl(op, "Autograd", function(...) return F:apply(...) end)
  end

  -- lib:meta(op, fn): the Meta kernel of op from a meta function fn(m, args...).
  function Library:meta(op, fn)
    check_open(self, "lib:meta")
    drain()
    local q = qualify(self, op)
    add(self, q, C.register_meta(q, fn, "sk.library('" .. self.ns .. "')"))
  end

  -- The functional and in-place schemas of a structured out op.
  -- overload: the functional's, when the out's name does not give it (max.dim_max -> max.dim).
  local function derived(rec, overload)
    local parts, star = {}, false
    for _, a in ipairs(rec.args) do
      if not a.is_out then
        if a.kwarg_only and not star then parts[#parts + 1], star = "*", true end
        parts[#parts + 1] = schema.type_str(a.type) .. " " .. a.name .. (a.default and "=" .. a.default or "")
      end
    end
    local ovl = {}
    for p in rec.overload:gmatch("[^_]+") do if p ~= "out" then ovl[#ovl + 1] = p end end
    local suffix = #ovl > 0 and "." .. table.concat(ovl, "_") or ""
    if overload then suffix = overload ~= "" and "." .. overload or "" end
    local rets = {}
    for _, r in ipairs(rec.returns) do rets[#rets + 1] = "Tensor" .. (r.name and " " .. r.name or "") end
    local ret = #rets == 1 and rets[1] or "(" .. table.concat(rets, ", ") .. ")"
    local functional = rec.name .. suffix .. "(" .. table.concat(parts, ", ") .. ") -> " .. ret
    local first = rec.args[1]
    local inplace
    if #rec.returns == 1 and first and first.name == "self" and first.type.base == "Tensor" and not first.type.list
        and not first.type.optional then
      parts[1] = "Tensor(a!) self"
      inplace = rec.name .. "_" .. suffix .. "(" .. table.concat(parts, ", ") .. ") -> Tensor(a!)"
    end
    return functional, inplace
  end

  -- lib:structured{ out = schema, meta = fn(m, args...), impl = { CPU = fn(out, args...) }[, overload = name] }
  -- overload: the functional and in-place variants' overload name when dropping "out" from the
  -- out's does not give it (max.dim_max's functional is max.dim: overload = "dim").
  function Library:structured(spec)
    check_open(self, "lib:structured")
    drain()
    if type(spec) ~= "table" or type(spec.out) ~= "string" or (type(spec.meta) ~= "function" and type(spec.meta) ~= "userdata")
       or type(spec.impl) ~= "table" then
      raise("lib:structured: expected { out = <schema string>, meta = <function>, impl = { <key> = <function> } }")
    end
    local rec, err = schema.parse(spec.out)
    if not rec then raise("lib:structured: " .. err) end
    if rec.kind ~= "out" then raise("lib:structured: '" .. spec.out .. "' is not an out op (it needs a kwarg-only Tensor(a!) out)") end
    if spec.overload ~= nil and type(spec.overload) ~= "string" then
      raise("lib:structured: 'overload' expected a string, got " .. type(spec.overload))
    end
    local functional, inplace = derived(rec, spec.overload)
    local ndefined = #self.defined
    local ok, e = pcall(function()
      local out_q = self:define(spec.out)
      local fun_q = self:define(functional)
      local inp_q = inplace and self:define(inplace)
      local impl_keys = {}
      for k in pairs(spec.impl) do impl_keys[#impl_keys + 1] = tostring(k) end
      table.sort(impl_keys)
      local members = {}
      for _, m in ipairs { { out_q, "out" }, { fun_q, "functional" }, { inp_q, "inplace" } } do
        if m[1] then members[#members + 1] = { m[1], structured.kernel_keys(m[2], impl_keys) } end
      end
      for _, r in ipairs(C.register_structured(members, spec.meta, spec.impl, "sk.library('" .. self.ns .. "')")) do
        add(self, r[1], r[2])
      end
    end)
    if not ok then
      -- nothing of a failed family stays: the C side has undone its kernels, undefine its ops
      for i = #self.defined, ndefined + 1, -1 do
        C.undefine(self.defined[i])
        self.defined[i] = nil
      end
      local msg = tostring(e):gsub("^.-lib:", "lib:")
      raise(msg:find("^lib:structured:") and msg or "lib:structured: " .. msg)
    end
  end

  -- lib:fallback(key, fn or sk.cpu_fallback): a boxed fallback for every op on key.
  function Library:fallback(key, fn)
    check_open(self, "lib:fallback")
    drain()
    self.fallbacks[#self.fallbacks + 1] = C.register_fallback(key, fn, "sk.library('" .. self.ns .. "')")
  end

  function Library:close()
    if self.closed then return end
    -- refuse before changing anything when another library still has kernels on one of our ops
    local own = {}
    for _, r in ipairs(self.regs) do own[r.op] = (own[r.op] or 0) + 1 end
    for _, q in ipairs(self.defined) do
      local ok, n = pcall(C.op_registrations, q)
      if ok and n > (own[q] or 0) then
        raise(string.format("lib:close: operator '%s' still has kernels registered by another library (close it first)", q))
      end
    end
    for i = #self.regs, 1, -1 do
      C.deregister(self.regs[i].op, self.regs[i].id)
      self.regs[i] = nil
    end
    for i = #self.fallbacks, 1, -1 do
      C.deregister_fallback(self.fallbacks[i])
      self.fallbacks[i] = nil
    end
    for i = #self.defined, 1, -1 do
      C.undefine(self.defined[i])
      self.defined[i] = nil
    end
    self.closed = true
  end

  local mt = { __index = Library, __close = Library.close }
  mt.__gc = function(self)
    if not pcall(Library.close, self) then pending[#pending + 1] = self end
  end

  return function(ns)
    if type(ns) ~= "string" or not ns:match("^[%a_][%w_]*$") then
      raise("sk.library: argument 'ns' must be a namespace name such as \"myops\"")
    end
    drain()
    return setmetatable({ ns = ns, regs = {}, fallbacks = {}, defined = {}, closed = false }, mt)
  end
end
