-- sk.autograd.gradcheck / gradgradcheck: analytical gradients (one backward per output
-- element, a one-hot grad_output) against central finite differences, as
-- torch.autograd.gradcheck's slow mode: |analytical - numerical| <= atol + rtol * |numerical|.
-- Inputs are perturbed in place under no_grad, one element at a time; non-contiguous and
-- expanded inputs are perturbed through their own strides (an expanded element moves every
-- place that shares it, as in PyTorch).
return function(sk, core)
  local raise = core.raise
  local M = {}

  local function is_tensor(x) return getmetatable(x) == core.metatable end
  local function as_list(r)
    if is_tensor(r) then return { r } end
    if type(r) ~= "table" then raise("gradcheck: the function must return a tensor or a list of tensors") end
    return r
  end
  local function flat(t) return t:detach():contiguous():reshape(-1):to("float64"):totable() end

  -- the multi-index of flat element k of a tensor of shape sh
  local function coords(sh, k)
    local c = {}
    for d = #sh, 1, -1 do
      c[d] = k % sh[d]
      k = k // sh[d]
    end
    return c
  end
  local function at(t, c) -- 0-dim view of element c
    local v = t
    for d = 1, #c do v = v:select(0, c[d]) end
    return v
  end

  local check_options = require "sk.options"
  local OPTS = { eps = true, atol = true, rtol = true, raise_exception = true }

  function M.gradcheck(fn, inputs, opts)
    opts = check_options("sk.autograd.gradcheck", opts, OPTS)
    local eps, atol, rtol = opts.eps or 1e-6, opts.atol or 1e-5, opts.rtol or 1e-3
    if is_tensor(inputs) then inputs = { inputs } end
    local diff = {}
    for i, x in ipairs(inputs) do
      if is_tensor(x) and x:requires_grad() then diff[#diff + 1] = i end
    end
    if #diff == 0 then raise("sk.autograd.gradcheck: gradcheck expects at least one input tensor to require gradient") end
    local function call() return as_list(fn(table.unpack(inputs, 1, #inputs))) end
    -- analytical: row k of J^T for each output element k
    local outs = call()
    local dins = {}
    for j, i in ipairs(diff) do dins[j] = inputs[i] end
    local analytical = {} -- analytical[o][j][k][e]: d out_o[k] / d in_j[e]
    for o, y in ipairs(outs) do
      analytical[o] = {}
      for j = 1, #diff do analytical[o][j] = {} end
      if y:requires_grad() then
        local n = y:numel()
        for k = 0, n - 1 do
          local go = sk.zeros_like(y)
          if n > 0 then
            local v = y:dim() == 0 and go or at(go, coords(y:shape(), k))
            v:fill_(1)
          end
          local gs = sk.autograd.grad({ y }, dins, { grad_outputs = { go }, retain_graph = true, allow_unused = true })
          for j = 1, #diff do
            analytical[o][j][k + 1] = gs[j] and flat(gs[j]) or nil
          end
        end
      end
    end
    -- numerical, and the comparison
    for j, i in ipairs(diff) do
      local x = inputs[i]
      local sh, n = x:shape(), x:numel()
      for e = 0, n - 1 do
        local c = coords(sh, e)
        -- the element is written under no_grad; fn runs with grad mode as the caller has it
        -- (gradgradcheck's fn differentiates)
        local v = sk.no_grad(function() return x:dim() == 0 and x or at(x, c) end)
        local orig = v:item()
        local function eval(val)
          sk.no_grad(function() v:fill_(val) end)
          local ys = call()
          for o = 1, #ys do ys[o] = flat(ys[o]) end
          return ys
        end
        local plus, minus = eval(orig + eps), eval(orig - eps)
        sk.no_grad(function() v:fill_(orig) end)
        for o = 1, #outs do
          local p, m = plus[o], minus[o]
          for k = 1, #p do
            local num = (p[k] - m[k]) / (2 * eps)
            local row = analytical[o][j][k]
            local ana = row and row[e + 1] or 0.0
            if not (math.abs(ana - num) <= atol + rtol * math.abs(num)) then
              if opts.raise_exception == false then return false end
              raise(string.format("sk.autograd.gradcheck: Jacobian mismatch for output %d with respect to input %d, "
                .. "at output element %d and input element %d (0-based): numerical %.10g, analytical %.10g",
                o - 1, i - 1, k - 1, e, num, ana))
            end
          end
        end
      end
    end
    return true
  end

  -- gradcheck of the gradient: fn's VJP with random grad_outputs (float64 in [-1, 1], requiring grad)
  function M.gradgradcheck(fn, inputs, grad_outputs, opts)
    if is_tensor(inputs) then inputs = { inputs } end
    if grad_outputs ~= nil and not is_tensor(grad_outputs) and type(grad_outputs) == "table" and grad_outputs[1] == nil then
      grad_outputs, opts = nil, grad_outputs
    end
    local n = #inputs
    local diff = {}
    for i, x in ipairs(inputs) do if is_tensor(x) and x:requires_grad() then diff[#diff + 1] = i end end
    local outs = as_list(fn(table.unpack(inputs, 1, n)))
    local gos = grad_outputs and (is_tensor(grad_outputs) and { grad_outputs } or grad_outputs) or {}
    if not grad_outputs then
      for o, y in ipairs(outs) do
        gos[o] = (sk.rand(y:shape(), { dtype = y:dtype() }) * 2 - 1):requires_grad_()
      end
    end
    local all = {}
    for i = 1, n do all[i] = inputs[i] end
    for o = 1, #gos do all[n + o] = gos[o] end
    local function vjp(...)
      local args = table.pack(...)
      local ys = as_list(fn(table.unpack(args, 1, n)))
      local xs, g = {}, {}
      for j, i in ipairs(diff) do xs[j] = args[i] end
      for o = 1, #ys do g[o] = args[n + o] end
      local r = sk.autograd.grad(ys, xs, { grad_outputs = g, create_graph = true, allow_unused = true })
      local res = {}
      for j = 1, #xs do res[#res + 1] = r[j] or sk.zeros_like(xs[j]) end
      return res
    end
    return M.gradcheck(vjp, all, opts)
  end

  return M
end
