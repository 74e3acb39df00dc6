-- sk.optim: SGD, Adam and AdamW with PyTorch's update rules (torch.optim, 1.13, the
-- single-tensor path), as in-place ops under no_grad. optim.X(params, {options}); params is
-- a list of tensors or of groups {params = {...}, lr = ...} whose fields override the options.
return function(sk, core)
  local raise = core.raise
  local optim = {}

  local Optimizer = {}
  Optimizer.__index = Optimizer

  local function new(name, defaults, params, opts, known, step)
    opts = opts or {}
    for k in pairs(opts) do
      if known[k] == nil then raise(string.format("sk.optim.%s: unexpected option '%s'", name, tostring(k))) end
    end
    local d = {}
    for k, v in pairs(defaults) do d[k] = opts[k] == nil and v or opts[k] end
    if type(d.lr) ~= "number" or d.lr < 0 then raise(string.format("sk.optim.%s: Invalid learning rate: %s", name, tostring(d.lr))) end
    if type(params) ~= "table" or #params == 0 then raise("sk.optim." .. name .. ": optimizer got an empty parameter list") end
    local groups = {}
    if getmetatable(params[1]) == core.metatable then params = { { params = params } } end
    for _, g in ipairs(params) do
      local grp = {}
      for k, v in pairs(d) do grp[k] = v end
      for k, v in pairs(g) do grp[k] = v end
      for _, p in ipairs(grp.params) do
        if not p:requires_grad() then raise("sk.optim." .. name .. ": can't optimize a tensor that does not require grad") end
      end
      groups[#groups + 1] = grp
    end
    return setmetatable({ name = name, param_groups = groups, defaults = d, state = {}, _step = step }, Optimizer)
  end

  -- zero_grad({set_to_none = true}): PyTorch 2's default (1.13's was false)
  function Optimizer:zero_grad(opts)
    local none = not (opts and opts.set_to_none == false)
    sk.no_grad(function()
      for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g.params) do
          local gr = p.grad
          if gr then if none then p.grad = nil else gr:zero_() end end
        end
      end
    end)
  end

  function Optimizer:step(closure)
    local loss
    if closure then loss = sk.enable_grad(closure) end
    sk.no_grad(function()
      for _, g in ipairs(self.param_groups) do
        for _, p in ipairs(g.params) do
          local grad = p.grad
          if grad then
            local st = self.state[p]
            if not st then st = {}; self.state[p] = st end
            self._step(p, grad, st, g)
          end
        end
      end
    end)
    return loss
  end

  -- state (per parameter, by its index over the groups) and the groups' options
  function Optimizer:state_dict()
    local state, groups, i = {}, {}, 0
    for _, g in ipairs(self.param_groups) do
      local opts, idx = {}, {}
      for k, v in pairs(g) do if k ~= "params" then opts[k] = v end end
      for _, p in ipairs(g.params) do
        idx[#idx + 1] = i
        local st = self.state[p]
        if st then
          local c = {}
          for k, v in pairs(st) do c[k] = getmetatable(v) == core.metatable and v:clone() or v end
          state[i] = c
        end
        i = i + 1
      end
      opts.params = idx
      groups[#groups + 1] = opts
    end
    return { state = state, param_groups = groups }
  end

  function Optimizer:load_state_dict(sd)
    local i = 0
    for gi, g in ipairs(self.param_groups) do
      local sg = sd.param_groups[gi]
      if not sg or #sg.params ~= #g.params then
        raise("loaded state dict contains a parameter group that doesn't match the size of optimizer's group")
      end
      for k, v in pairs(sg) do if k ~= "params" then g[k] = v end end
      for _, p in ipairs(g.params) do
        local st = sd.state[i]
        if st then
          local c = {}
          for k, v in pairs(st) do c[k] = getmetatable(v) == core.metatable and v:clone() or v end
          self.state[p] = c
        end
        i = i + 1
      end
    end
  end

  -- {==== SGD ====
  local SGD = { lr = 1e-3, momentum = 0, dampening = 0, nesterov = false, weight_decay = 0, maximize = false }
  function optim.SGD(params, opts)
    local o = new("SGD", SGD, params, opts, SGD, function(p, grad, st, g)
      local d = g.maximize and -grad or grad
      if g.weight_decay ~= 0 then d = d:add(p, { alpha = g.weight_decay }) end
      if g.momentum ~= 0 then
        local buf = st.momentum_buffer
        if not buf then
          buf = d:clone()
          st.momentum_buffer = buf
        else
          buf:mul_(g.momentum):add_(d, { alpha = 1 - g.dampening })
        end
        d = g.nesterov and d:add(buf, { alpha = g.momentum }) or buf
      end
      p:add_(d, { alpha = -g.lr })
    end)
    local d = o.defaults
    if d.nesterov and (d.momentum <= 0 or d.dampening ~= 0) then
      raise("sk.optim.SGD: Nesterov momentum requires a momentum and zero dampening")
    end
    return o
  end
  -- }====

  -- {==== Adam, AdamW ====
  local ADAM = { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0, amsgrad = false, maximize = false }
  local ADAMW = { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 1e-2, amsgrad = false, maximize = false }
  local function adam_step(decoupled)
    return function(p, grad, st, g)
      local b1, b2 = g.betas[1], g.betas[2]
      if g.maximize then grad = -grad end
      if not st.step then
        st.step = 0
        st.exp_avg = sk.zeros_like(p)
        st.exp_avg_sq = sk.zeros_like(p)
        if g.amsgrad then st.max_exp_avg_sq = sk.zeros_like(p) end
      end
      st.step = st.step + 1
      if g.weight_decay ~= 0 then
        if decoupled then p:mul_(1 - g.lr * g.weight_decay)
        else grad = grad:add(p, { alpha = g.weight_decay }) end
      end
      st.exp_avg:mul_(b1):add_(grad, { alpha = 1 - b1 })
      st.exp_avg_sq:mul_(b2):addcmul_(grad, grad, { value = 1 - b2 })
      local bc1, bc2 = 1 - b1 ^ st.step, 1 - b2 ^ st.step
      local v = st.exp_avg_sq
      if g.amsgrad then
        sk.maximum(st.max_exp_avg_sq, v, { out = st.max_exp_avg_sq })
        v = st.max_exp_avg_sq
      end
      local denom = (v:sqrt() / math.sqrt(bc2)):add_(g.eps)
      p:addcdiv_(st.exp_avg, denom, { value = -g.lr / bc1 })
    end
  end
  function optim.Adam(params, opts) return new("Adam", ADAM, params, opts, ADAM, adam_step(false)) end
  function optim.AdamW(params, opts) return new("AdamW", ADAMW, params, opts, ADAMW, adam_step(true)) end
  -- }====

  return optim
end
