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

  local function check_opts(fname, opts, allowed)
    if opts == nil then return {} end
    if type(opts) ~= "table" then raise(fname .. ": options expected a table, got " .. type(opts)) end
    for k in pairs(opts) do
      if not allowed[k] then raise(string.format("%s: unexpected option '%s'", fname, tostring(k))) end
    end
    return opts
  end

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

  local checks = require("sk.gradcheck")(sk, core)
  autograd.gradcheck, autograd.gradgradcheck = checks.gradcheck, checks.gradgradcheck
  sk.autograd = autograd
  return autograd
end
