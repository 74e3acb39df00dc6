-- sk.autograd: reverse-mode autograd from Lua (the engine and the nodes are C: src/autograd).
-- Installed by init.lua: require("sk.autograd")(sk, core, methods) adds the tensor methods
-- (backward, requires_grad_, detach, grad_fn, register_hook, ...) and sk.autograd, sk.no_grad,
-- sk.enable_grad, sk.is_grad_enabled, sk.set_grad_enabled.
return function(sk, core, methods)
  local C = core.autograd
  local raise = core.raise

  methods.requires_grad = C.requires_grad
  methods.requires_grad_ = C.requires_grad_
  methods.is_leaf = C.is_leaf
  methods.detach = C.detach
  methods.detach_ = C.detach_
  methods.grad_fn = C.grad_fn
  methods.register_hook = C.register_hook
  methods.retain_grad = C.retain_grad

  local check_opts = require "sk.options"

  local function is_tensor(x) return getmetatable(x) == core.metatable end
  local function mode(opts)
    local create = opts.create_graph == true
    local retain = opts.retain_graph
    if retain == nil then retain = create end
    return retain, create
  end
  -- backward(inputs = {...}) accumulates into those tensors' .grad only
  local function accumulate(inputs, grads)
    sk.no_grad(function()
      for i, x in ipairs(inputs) do
        local g = grads[i]
        if g then
          local old = C.get_grad(x)
          C.set_grad(x, old and old:add(g) or g:clone())
        end
      end
    end)
  end

  -- t:backward([gradient][, {retain_graph =, create_graph =, inputs =}])
  local BACKWARD = { retain_graph = true, create_graph = true, inputs = true }
  local function backward(fname, tensors, grads, opts)
    opts = check_opts(fname, opts, BACKWARD)
    local retain, create = mode(opts)
    local inputs = opts.inputs
    if is_tensor(inputs) then inputs = { inputs } end
    local r = C.run(tensors, grads, inputs, retain, create, true, fname)
    if inputs then accumulate(inputs, r) end
  end
  function methods.backward(t, gradient, opts)
    if opts == nil and type(gradient) == "table" and not is_tensor(gradient) then gradient, opts = nil, gradient end
    backward("Tensor:backward", { t }, gradient and { gradient } or nil, opts)
  end

  local autograd = {}
  -- sk.autograd.backward(tensors[, grad_tensors][, {retain_graph =, create_graph =}])
  function autograd.backward(tensors, grad_tensors, opts)
    if opts == nil and type(grad_tensors) == "table" and not is_tensor(grad_tensors) and grad_tensors[1] == nil
       and next(grad_tensors) ~= nil then
      grad_tensors, opts = nil, grad_tensors
    end
    backward("sk.autograd.backward", tensors, grad_tensors, opts)
  end

  -- sk.autograd.grad(outputs, inputs[, {grad_outputs =, retain_graph =, create_graph =, allow_unused =}])
  -- returns the gradients as a list (one per input; nil for an unused one with allow_unused)
  local GRAD = { grad_outputs = true, retain_graph = true, create_graph = true, allow_unused = true }
  function autograd.grad(outputs, inputs, opts)
    opts = check_opts("sk.autograd.grad", opts, GRAD)
    local retain, create = mode(opts)
    local go = opts.grad_outputs
    if is_tensor(go) then go = { go } end
    local r = C.run(outputs, go, is_tensor(inputs) and { inputs } or inputs, retain, create,
                    opts.allow_unused == true, "sk.autograd.grad")
    for i = 1, #r do if r[i] == false then r[i] = nil end end
    return r
  end

  -- Runs fn(...) with grad mode set to `on`, restoring it however fn ends.
  local function with_grad_mode(on, fname)
    return function(fn, ...)
      if type(fn) ~= "function" then raise(fname .. ": argument 'fn' expected a function, got " .. type(fn)) end
      local was = C.set_grad_enabled(on)
      local r = table.pack(pcall(fn, ...))
      C.set_grad_enabled(was)
      if not r[1] then error(r[2], 0) end
      return table.unpack(r, 2, r.n)
    end
  end
  sk.no_grad = with_grad_mode(false, "sk.no_grad")
  sk.enable_grad = with_grad_mode(true, "sk.enable_grad")
  sk.is_grad_enabled = C.is_grad_enabled
  function sk.set_grad_enabled(on)
    if type(on) ~= "boolean" then raise("sk.set_grad_enabled: argument 'mode' expected a boolean, got " .. type(on)) end
    C.set_grad_enabled(on)
  end

  -- {==== Custom functions ====
  -- F = sk.autograd.Function{forward = fn(ctx, ...), backward = fn(ctx, grad...)[, name =]}
  -- (or setup_context = fn(ctx, inputs, output) with forward = fn(...), as PyTorch 2's).
  -- F(...) / F:apply(...) runs forward under no_grad and gives its tensor results a node whose
  -- backward returns one gradient per argument (nil: none). ctx has save_for_backward,
  -- saved_tensors (in backward), needs_input_grad, mark_dirty, mark_non_differentiable,
  -- set_materialize_grads.
  local Ctx = {}
  Ctx.__index = Ctx
  function Ctx:save_for_backward(...) self._saved = table.pack(...) end
  function Ctx:mark_dirty(...) for _, t in ipairs { ... } do self._dirty[t] = true end end
  function Ctx:mark_non_differentiable(...) for _, t in ipairs { ... } do self._nondiff[t] = true end end
  function Ctx:set_materialize_grads(on) self._materialize = on ~= false end

  local Function = {}
  Function.__index = Function
  Function.__call = function(F, ...) return F:apply(...) end
  function Function:apply(...)
    local args = table.pack(...)
    local any = false
    local needs = {}
    for i = 1, args.n do
      needs[i] = is_tensor(args[i]) and args[i]:requires_grad() or false
      any = any or needs[i]
    end
    local ctx = setmetatable({ needs_input_grad = needs, _saved = { n = 0 }, _dirty = {}, _nondiff = {}, _materialize = true }, Ctx)
    local outs
    if self.setup_context then
      outs = table.pack(sk.no_grad(self.forward, ...))
      self.setup_context(ctx, args, outs.n == 1 and outs[1] or outs)
    else
      outs = table.pack(sk.no_grad(self.forward, ctx, ...))
    end
    if not (any and C.is_grad_enabled()) then return table.unpack(outs, 1, outs.n) end
    local saved = {}
    for i = 1, ctx._saved.n do
      local t = ctx._saved[i]
      if t ~= nil and not is_tensor(t) then raise(self.name .. ": save_for_backward takes tensors (or nil), got " .. type(t)) end
      saved[i] = t or false
    end
    for t in pairs(ctx._dirty) do
      local found = false
      for i = 1, args.n do found = found or rawequal(args[i], t) end
      if not found then
        raise("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there is no need to pass it to mark_dirty().")
      end
    end
    local list = {}
    for i = 1, outs.n do list[i] = outs[i] or false end
    local r = C.function_node(self.name, self.backward, ctx, args, args.n, list, saved, ctx._dirty, ctx._nondiff, ctx._materialize)
    -- the node keeps what it needs (saved values as any node's): a ctx holding no tensor forms
    -- no cycle with the outputs whose node holds it
    ctx._saved, ctx._dirty, ctx._nondiff = nil, nil, nil
    for i = 1, outs.n do if r[i] == false then r[i] = nil end end
    return table.unpack(r, 1, outs.n)
  end

  function autograd.Function(spec)
    if type(spec) ~= "table" then raise("sk.autograd.Function: argument 'spec' expected a table, got " .. type(spec)) end
    for k in pairs(spec) do
      if k ~= "forward" and k ~= "backward" and k ~= "setup_context" and k ~= "name" then
        raise(string.format("sk.autograd.Function: unexpected field '%s' (expected forward, backward, setup_context, name)", tostring(k)))
      end
    end
    for _, k in ipairs { "forward", "backward" } do
      if type(spec[k]) ~= "function" then raise("sk.autograd.Function: field '" .. k .. "' expected a function, got " .. type(spec[k])) end
    end
    if spec.setup_context ~= nil and type(spec.setup_context) ~= "function" then
      raise("sk.autograd.Function: field 'setup_context' expected a function, got " .. type(spec.setup_context))
    end
    return setmetatable({ forward = spec.forward, backward = spec.backward, setup_context = spec.setup_context,
                          name = (spec.name or "Function") .. "Backward" }, Function)
  end
  -- }====

  local checks = require("sk.gradcheck")(sk, core)
  autograd.gradcheck, autograd.gradgradcheck = checks.gradcheck, checks.gradgradcheck
  sk.autograd = autograd
  return autograd
end
