-- sk.optim: SGD, Adam and AdamW with PyTorch's update rules (torch.optim, 1.13, the
-- single-tensor path), as in-place ops under no_grad. optim.X(params, {options}); params is
-- a list of tensors or of groups {params = {...}, lr = ...} whose fields override the options.
return function(sk, core)
  local raise = core.raise
  local optim = {}

  local Optimizer = {}
  Optimizer.__index = Optimizer

  local function is_tensor(v) return getmetatable(v) == core.metatable end
  local function typename(v) return is_tensor(v) and "tensor" or type(v) end
  -- a number as Python prints it in PyTorch's messages (Lua's 0/0 prints "-nan")
  local function num(v) return v ~= v and "nan" or tostring(v) end

  -- {==== Options: each one's rule, shared by every optimizer that has it ====
  -- A rule returns the message for a bad value (PyTorch's text where it has one), else nil.
  -- PyTorch's SGD tests `v < 0`, which lets NaN through; sk's tests refuse NaN everywhere.
  local function at_least_zero(what)
    return function(v, k)
      if type(v) ~= "number" then return string.format("option '%s' must be a number, got %s", k, typename(v)) end
      if not (v >= 0) then return string.format("Invalid %s: %s", what, num(v)) end
    end
  end
  local function boolean(v, k)
    if type(v) ~= "boolean" then return string.format("option '%s' must be a boolean, got %s", k, typename(v)) end
  end
  local RULES = {
    lr = at_least_zero("learning rate"),
    momentum = at_least_zero("momentum value"),
    weight_decay = at_least_zero("weight_decay value"),
    eps = at_least_zero("epsilon value"),
    dampening = function(v, k) -- any number for PyTorch; NaN would make every parameter NaN
      if type(v) ~= "number" then return string.format("option '%s' must be a number, got %s", k, typename(v)) end
      if v ~= v then return "Invalid dampening value: nan" end
    end,
    betas = function(v, k)
      if type(v) ~= "table" or is_tensor(v) or #v ~= 2 or type(v[1]) ~= "number" or type(v[2]) ~= "number" then
        return string.format("option '%s' must be a list of two numbers, got %s", k, typename(v))
      end
      for i = 1, 2 do
        if not (v[i] >= 0 and v[i] < 1) then return string.format("Invalid beta parameter at index %d: %s", i - 1, num(v[i])) end
      end
    end,
    nesterov = boolean, amsgrad = boolean, maximize = boolean,
  }
  -- opts' options for optimizer `name` whose options are the keys of `defaults`; `where` names
  -- a parameter group in the message; a group keeps keys that are not options (PyTorch's groups
  -- carry e.g. a 'name'), while the optimizer's own options have none (sk.options checks them)
  local function check_options(name, defaults, opts, where)
    for k, v in pairs(opts) do
      if defaults[k] ~= nil then
        local bad = RULES[k](v, k)
        if bad then raise(string.format("sk.optim.%s: %s%s", name, bad, where or "")) end
      end
    end
  end
  -- The rules across a group's merged options; `where` names the group in the message.
  local function check_group(name, g, where)
    if g.nesterov and (g.momentum <= 0 or g.dampening ~= 0) then
      raise(string.format("sk.optim.%s: Nesterov momentum requires a momentum and zero dampening%s", name, where))
    end
  end
  -- A group's own copy of a list option (betas), so that no two groups or optimizers share one.
  local function own(v) return type(v) == "table" and not is_tensor(v) and table.move(v, 1, #v, 1, {}) or v end
  -- }====

  -- {==== Parameters: a list of tensors (one group) or of groups {params = ..., option = ...} ====
  local function group_params(name, v, gi)
    local ps = is_tensor(v.params) and { v.params } or v.params
    if type(ps) ~= "table" or is_tensor(ps) then
      raise(string.format("sk.optim.%s: params[%d] (a parameter group) must have a 'params' list of tensors, got %s", name,
        gi, typename(v.params)))
    end
    for i, p in ipairs(ps) do
      if not is_tensor(p) then
        raise(string.format("sk.optim.%s: params[%d].params[%d] must be a tensor, got %s", name, gi, i, typename(p)))
      end
    end
    return ps
  end

  -- The groups of params, each a list of tensors (checked: leaves that require grad, each in one
  -- group once; PyTorch only warns about a parameter twice in one group, sk refuses it too).
  local function param_groups(name, params)
    if type(params) ~= "table" or is_tensor(params) then
      raise(string.format("sk.optim.%s: argument 'params' must be a list of tensors or of parameter groups, got %s", name,
        typename(params)))
    end
    if #params == 0 then raise("sk.optim." .. name .. ": optimizer got an empty parameter list") end
    local groups, loose = {}, is_tensor(params[1])
    for i, v in ipairs(params) do
      if not is_tensor(v) and (type(v) ~= "table" or getmetatable(v) ~= nil) then
        raise(string.format("sk.optim.%s: params[%d] must be a tensor or a parameter group table, got %s", name, i, typename(v)))
      end
      if is_tensor(v) ~= loose then
        raise(string.format("sk.optim.%s: params[%d] is a %s but params[1] is a %s: give a list of tensors or a list of "
          .. "parameter groups", name, i, loose and "parameter group" or "tensor", loose and "tensor" or "parameter group"))
      end
    end
    if loose then groups[1] = { params = params }
    else for gi, v in ipairs(params) do groups[gi] = v end end
    local seen = {}
    for gi, g in ipairs(groups) do
      local here = {}
      for i, p in ipairs(loose and g.params or group_params(name, g, gi)) do
        if not p:requires_grad() then raise("sk.optim." .. name .. ": can't optimize a tensor that does not require grad") end
        if not p:is_leaf() then raise("sk.optim." .. name .. ": can't optimize a non-leaf Tensor") end
        if here[p] then
          raise(string.format("sk.optim.%s: optimizer contains a parameter group with duplicate parameters (params %d and %d "
            .. "of group %d)", name, here[p], i, gi))
        end
        if seen[p] then raise("sk.optim." .. name .. ": some parameters appear in more than one parameter group") end
        here[p] = i
      end
      for p in pairs(here) do seen[p] = true end
    end
    return groups, loose
  end
  -- }====

  local function new(name, defaults, params, opts, step)
    opts = require "sk.options"("sk.optim." .. name, opts, defaults)
    check_options(name, defaults, opts)
    local d = {}
    for k, v in pairs(defaults) do
      if opts[k] ~= nil then v = opts[k] end
      d[k] = own(v)
    end
    local given, loose = param_groups(name, params)
    local groups = {}
    for gi, g in ipairs(given) do
      if not loose then check_options(name, defaults, g, string.format(" (parameter group %d)", gi)) end
      local grp = {}
      for k, v in pairs(d) do grp[k] = own(v) end
      for k, v in pairs(g) do grp[k] = own(v) end
      if is_tensor(grp.params) then grp.params = { grp.params } end
      check_group(name, grp, loose and "" or string.format(" (parameter group %d)", gi))
      groups[gi] = grp
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
      for k, v in pairs(g) do if k ~= "params" then opts[k] = own(v) end end
      for _, p in ipairs(g.params) do
        idx[#idx + 1] = i
        local st = self.state[p]
        if st then
          local c = {}
          for k, v in pairs(st) do c[k] = is_tensor(v) and v:clone() or v end
          state[i] = c
        end
        i = i + 1
      end
      opts.params = idx
      groups[#groups + 1] = opts
    end
    return { state = state, param_groups = groups }
  end

  -- Everything checked before anything is written: a bad state dict leaves the optimizer as it was.
  function Optimizer:load_state_dict(sd)
    local pre = "sk.optim." .. self.name .. ":load_state_dict: "
    if type(sd) ~= "table" or is_tensor(sd) then raise(pre .. "argument 'state_dict' must be a table, got " .. typename(sd)) end
    if type(sd.state) ~= "table" then raise(pre .. "the state dict has no 'state' table (got " .. typename(sd.state) .. ")") end
    if type(sd.param_groups) ~= "table" then
      raise(pre .. "the state dict has no 'param_groups' list (got " .. typename(sd.param_groups) .. ")")
    end
    if #sd.param_groups ~= #self.param_groups then raise(pre .. "loaded state dict has a different number of parameter groups") end
    local i = 0
    for gi, g in ipairs(self.param_groups) do
      local sg = sd.param_groups[gi]
      if type(sg) ~= "table" or type(sg.params) ~= "table" or #sg.params ~= #g.params then
        raise(pre .. "loaded state dict contains a parameter group that doesn't match the size of optimizer's group")
      end
      local where = string.format(" (loaded parameter group %d)", gi)
      check_options(self.name .. ":load_state_dict", self.defaults, sg, where)
      local merged = {}
      for k, v in pairs(g) do merged[k] = v end
      for k, v in pairs(sg) do merged[k] = v end
      check_group(self.name .. ":load_state_dict", merged, where)
      for _ in ipairs(g.params) do
        if sd.state[i] ~= nil and type(sd.state[i]) ~= "table" then
          raise(string.format("%sstate[%d] must be a table, got %s", pre, i, typename(sd.state[i])))
        end
        i = i + 1
      end
    end
    i = 0
    for gi, g in ipairs(self.param_groups) do
      for k, v in pairs(sd.param_groups[gi]) do if k ~= "params" then g[k] = own(v) end end
      for _, p in ipairs(g.params) do
        local st = sd.state[i]
        if st then
          local c = {}
          for k, v in pairs(st) do c[k] = is_tensor(v) and v:clone() or v end
          self.state[p] = c
        end
        i = i + 1
      end
    end
  end

  -- {==== SGD ====
  local SGD = { lr = 1e-3, momentum = 0, dampening = 0, nesterov = false, weight_decay = 0, maximize = false }
  function optim.SGD(params, opts)
    local o = new("SGD", SGD, params, opts, function(p, grad, st, g)
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
  function optim.Adam(params, opts) return new("Adam", ADAM, params, opts, adam_step(false)) end
  function optim.AdamW(params, opts) return new("AdamW", ADAMW, params, opts, adam_step(true)) end
  -- }====

  return optim
end
