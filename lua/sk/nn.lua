-- sk.nn: modules on top of the ops and autograd, with PyTorch's names, defaults and
-- initialization (drawn from sk's seeded generator). A module is callable (m(x) runs
-- m:forward(x)); its parameters and submodules are its fields, registered in order.
return function(sk, core)
  local raise = core.raise
  local nn = {}
  local function is_tensor(x) return getmetatable(x) == core.metatable end

  -- {==== Module ====
  local Module = {}
  Module.__index = function(self, k)
    local v = rawget(self, "_fields")[k]
    if v ~= nil then return v end
    return getmetatable(self).methods[k]
  end
  Module.__newindex = function(self, k, v)
    local f = rawget(self, "_fields")
    if f[k] == nil and v ~= nil then rawget(self, "_order")[#rawget(self, "_order") + 1] = k end
    f[k] = v
  end
  Module.__call = function(self, ...) return self:forward(...) end
  Module.__name = "sk.nn.Module"
  local methods = {}

  -- nn.Module(name[, base]) makes a module class: class.new(...) builds one with init(self, ...)
  local function class(name, init, forward)
    local mt = { __index = Module.__index, __newindex = Module.__newindex, __call = Module.__call, __name = "sk.nn." .. name,
                 methods = setmetatable({ forward = forward, _name = name }, { __index = methods }) }
    return setmetatable({ methods = mt.methods }, { __call = function(_, ...)
      local m = setmetatable({ _fields = {}, _order = {} }, mt)
      m.training = true
      if init then init(m, ...) end
      return m
    end })
  end
  nn.class = class

  local function is_module(v) return type(v) == "table" and rawget(v, "_fields") ~= nil end

  function methods:named_children()
    local r = {}
    for _, k in ipairs(rawget(self, "_order")) do
      local v = rawget(self, "_fields")[k]
      if is_module(v) then r[#r + 1] = { k, v } end
    end
    return r
  end
  function methods:children()
    local r = {}
    for _, c in ipairs(self:named_children()) do r[#r + 1] = c[2] end
    return r
  end
  -- {name, tensor} of every parameter (a tensor field that requires grad), submodules' as "child.name"
  function methods:named_parameters(prefix, seen)
    local r = {}
    prefix, seen = prefix or "", seen or {}
    for _, k in ipairs(rawget(self, "_order")) do
      local v = rawget(self, "_fields")[k]
      if is_tensor(v) and v:requires_grad() and not seen[v] then
        seen[v] = true
        r[#r + 1] = { prefix .. k, v }
      elseif is_module(v) then
        for _, p in ipairs(v:named_parameters(prefix .. k .. ".", seen)) do r[#r + 1] = p end
      end
    end
    return r
  end
  function methods:parameters()
    local r = {}
    for _, p in ipairs(self:named_parameters()) do r[#r + 1] = p[2] end
    return r
  end
  function methods:train(mode)
    if mode == nil then mode = true end
    self.training = mode
    for _, c in ipairs(self:children()) do c:train(mode) end
    return self
  end
  function methods:eval() return self:train(false) end
  function methods:zero_grad()
    for _, p in ipairs(self:parameters()) do p.grad = nil end
  end
  -- the parameters and buffers (tensor fields) by dotted name, detached (they share data)
  function methods:state_dict(prefix, out)
    out, prefix = out or {}, prefix or ""
    for _, k in ipairs(rawget(self, "_order")) do
      local v = rawget(self, "_fields")[k]
      if is_tensor(v) then out[prefix .. k] = v:detach()
      elseif is_module(v) then v:state_dict(prefix .. k .. ".", out) end
    end
    return out
  end
  function methods:load_state_dict(sd, strict)
    if type(sd) ~= "table" or is_tensor(sd) then
      raise("Module:load_state_dict: argument 'state_dict' must be a table, got " .. (is_tensor(sd) and "tensor" or type(sd)))
    end
    if strict ~= nil and type(strict) ~= "boolean" then
      raise("Module:load_state_dict: argument 'strict' must be a boolean, got " .. (is_tensor(strict) and "tensor" or type(strict)))
    end
    if strict == nil then strict = true end
    local own = self:state_dict()
    local missing, unexpected = {}, {}
    for k in pairs(own) do if sd[k] == nil then missing[#missing + 1] = k end end
    for k in pairs(sd) do if own[k] == nil then unexpected[#unexpected + 1] = k end end
    table.sort(missing)
    table.sort(unexpected)
    if strict and (#missing > 0 or #unexpected > 0) then
      raise(string.format("Error(s) in loading state_dict for %s: missing keys [%s], unexpected keys [%s]", self._name,
        table.concat(missing, ", "), table.concat(unexpected, ", ")))
    end
    -- every entry checked before any is copied: a bad state dict leaves the module as it was
    for k, t in pairs(own) do
      local v = sd[k]
      if v ~= nil then
        if not is_tensor(v) then
          raise(string.format("Module:load_state_dict: state_dict['%s'] must be a tensor, got %s", k, type(v)))
        end
        local a, b = table.concat(t:shape(), ", "), table.concat(v:shape(), ", ")
        if a ~= b then
          raise(string.format("Error(s) in loading state_dict for %s: size mismatch for %s: copying a param with shape [%s] from checkpoint, the shape in current model is [%s].",
            self._name, k, b, a))
        end
      end
    end
    sk.no_grad(function()
      for k, t in pairs(own) do if sd[k] ~= nil then t:copy_(sd[k]) end end
    end)
    return self
  end
  function methods:forward() raise(self._name .. ": forward is not implemented") end
  -- }====

  -- {==== Initialization (nn.init, under no_grad) ====
  local init = {}
  local function fans(t)
    local s = t:shape()
    if #s < 2 then raise("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions") end
    local rf = 1
    for i = 3, #s do rf = rf * s[i] end
    return s[2] * rf, s[1] * rf
  end
  local function gain(nonlinearity, a)
    if nonlinearity == "relu" then return math.sqrt(2) end
    if nonlinearity == "leaky_relu" then a = a or 0.01; return math.sqrt(2 / (1 + a * a)) end
    if nonlinearity == "tanh" then return 5 / 3 end
    return 1
  end
  init.calculate_gain = gain
  function init.uniform_(t, a, b) return sk.no_grad(function() return t:uniform_(a or 0, b or 1) end) end
  function init.normal_(t, mean, std) return sk.no_grad(function() return t:normal_(mean or 0, std or 1) end) end
  function init.constant_(t, v) return sk.no_grad(function() return t:fill_(v) end) end
  function init.zeros_(t) return init.constant_(t, 0) end
  function init.ones_(t) return init.constant_(t, 1) end
  function init.xavier_uniform_(t, g)
    local fi, fo = fans(t)
    local b = (g or 1) * math.sqrt(6 / (fi + fo))
    return init.uniform_(t, -b, b)
  end
  function init.xavier_normal_(t, g)
    local fi, fo = fans(t)
    return init.normal_(t, 0, (g or 1) * math.sqrt(2 / (fi + fo)))
  end
  -- kaiming_uniform_(t, {a =, mode = "fan_in"|"fan_out", nonlinearity = "leaky_relu"}), PyTorch's defaults
  function init.kaiming_uniform_(t, o)
    o = o or {}
    local fi, fo = fans(t)
    local b = gain(o.nonlinearity or "leaky_relu", o.a or 0) * math.sqrt(3 / (o.mode == "fan_out" and fo or fi))
    return init.uniform_(t, -b, b)
  end
  function init.kaiming_normal_(t, o)
    o = o or {}
    local fi, fo = fans(t)
    return init.normal_(t, 0, gain(o.nonlinearity or "leaky_relu", o.a or 0) / math.sqrt(o.mode == "fan_out" and fo or fi))
  end
  nn.init = init
  -- }====

  local function param(t) return t:requires_grad_() end
  -- a factory with an optional dtype option
  local function make(f, shape, dtype)
    if dtype then return f(shape, { dtype = dtype }) end
    return f(shape)
  end

  -- {==== Layers ====
  nn.Linear = class("Linear", function(self, i, o, opts)
    opts = opts or {}
    self.in_features, self.out_features = i, o
    self.weight = param(make(sk.empty, { o, i }, opts.dtype))
    init.kaiming_uniform_(self.weight, { a = math.sqrt(5) })
    if opts.bias ~= false then
      local b = 1 / math.sqrt(i)
      self.bias = param(make(sk.empty, { o }, opts.dtype))
      init.uniform_(self.bias, -b, b)
    end
  end, function(self, x) return sk.linear(x, self.weight, self.bias) end)

  -- Bilinear(in1, in2, out, {bias, dtype}): weight (out, in1, in2), both drawn from U(-1/√in1, 1/√in1)
  nn.Bilinear = class("Bilinear", function(self, i1, i2, o, opts)
    opts = opts or {}
    self.in1_features, self.in2_features, self.out_features = i1, i2, o
    local b = 1 / math.sqrt(i1)
    self.weight = param(make(sk.empty, { o, i1, i2 }, opts.dtype))
    init.uniform_(self.weight, -b, b)
    if opts.bias ~= false then
      self.bias = param(make(sk.empty, { o }, opts.dtype))
      init.uniform_(self.bias, -b, b)
    end
  end, function(self, x1, x2) return sk.bilinear(x1, x2, self.weight, self.bias) end)

  nn.Embedding = class("Embedding", function(self, n, d, opts)
    opts = opts or {}
    self.num_embeddings, self.embedding_dim = n, d
    self.padding_idx = opts.padding_idx
    self.weight = param(make(sk.empty, { n, d }, opts.dtype))
    init.normal_(self.weight)
    if opts.padding_idx then sk.no_grad(function() self.weight:select(0, opts.padding_idx):zero_() end) end
  end, function(self, idx) return sk.embedding(self.weight, idx, self.padding_idx or -1) end)

  -- EmbeddingBag(n, d, {mode = "mean", padding_idx, include_last_offset, dtype}): forward(input,
  -- offsets, per_sample_weights) with a 1-d input and offsets, or a 2-d input of equal bags
  local BAG_MODES = { sum = 0, mean = 1, max = 2 }
  nn.EmbeddingBag = class("EmbeddingBag", function(self, n, d, opts)
    opts = opts or {}
    self.num_embeddings, self.embedding_dim, self.mode = n, d, opts.mode or "mean"
    if not BAG_MODES[self.mode] then raise("EmbeddingBag: mode must be 'sum', 'mean' or 'max', got '" .. tostring(self.mode) .. "'") end
    self.padding_idx, self.include_last_offset = opts.padding_idx, opts.include_last_offset or false
    self.weight = param(make(sk.empty, { n, d }, opts.dtype))
    init.normal_(self.weight)
    if opts.padding_idx then sk.no_grad(function() self.weight:select(0, opts.padding_idx):zero_() end) end
  end, function(self, input, offsets, psw)
    if input:dim() == 2 then
      if offsets then raise("EmbeddingBag: if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences.") end
      local b, l = input:shape()[1], input:shape()[2]
      offsets = sk.arange(0, b * l, math.max(l, 1), { dtype = "int64", device = input:device() })
      if l == 0 then offsets = sk.zeros({ b }, { dtype = "int64", device = input:device() }) end
      input = input:reshape({ -1 })
    elseif not offsets then raise("EmbeddingBag: offsets has to be a 1D Tensor but got None") end
    return (sk.embedding_bag(self.weight, input, offsets, false, BAG_MODES[self.mode], false, psw, self.include_last_offset,
      self.padding_idx))
  end)

  nn.LayerNorm = class("LayerNorm", function(self, shape, opts)
    opts = opts or {}
    self.normalized_shape = type(shape) == "table" and shape or { shape }
    self.eps = opts.eps or 1e-5
    if opts.elementwise_affine ~= false then
      self.weight = param(make(sk.ones, self.normalized_shape, opts.dtype))
      self.bias = param(make(sk.zeros, self.normalized_shape, opts.dtype))
    end
  end, function(self, x) return sk.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps) end)

  -- Conv1d/2d/3d(in, out, kernel_size, {stride, padding ("same", "valid" or ints), dilation, groups,
  -- bias, dtype}) and ConvTranspose1d/2d/3d (also output_padding), with PyTorch's initialization.
  -- An int stands for every spatial dim.
  local function conv_class(name, n, transposed)
    nn[name] = class(name, function(self, i, o, k, opts)
      opts = opts or {}
      local groups = opts.groups or 1
      if i % groups ~= 0 then raise(name .. ": in_channels must be divisible by groups") end
      if o % groups ~= 0 then raise(name .. ": out_channels must be divisible by groups") end
      local mode = opts.padding_mode or "zeros"
      if mode ~= "zeros" and mode ~= "reflect" and mode ~= "replicate" and mode ~= "circular" then
        raise(name .. ": padding_mode must be one of 'zeros', 'reflect', 'replicate' or 'circular', but got padding_mode='"
          .. tostring(mode) .. "'")
      end
      if transposed and mode ~= "zeros" then raise(name .. ': Only "zeros" padding mode is supported for ' .. name) end
      local ks = type(k) == "table" and k or {}
      if type(k) ~= "table" then for d = 1, n do ks[d] = k end end
      self.padding_mode = mode
      if mode ~= "zeros" then -- F.pad's (left, right) pairs from the last dim, then an unpadded conv
        local p, dil, pads = opts.padding or 0, opts.dilation or 1, {}
        for d = n, 1, -1 do
          local l, r
          if p == "valid" then l, r = 0, 0
          elseif p == "same" then
            local total = (type(dil) == "table" and dil[d] or dil) * (ks[d] - 1)
            l = total // 2; r = total - l
          else l = type(p) == "table" and p[d] or p; r = l end
          pads[#pads + 1], pads[#pads + 2] = l, r
        end
        self.mode_pads = pads
      end
      self.in_channels, self.out_channels, self.kernel_size = i, o, ks
      self.stride, self.padding, self.dilation = opts.stride or 1, opts.padding or 0, opts.dilation or 1
      self.groups, self.output_padding = groups, opts.output_padding or 0
      local shape = transposed and { i, o // groups } or { o, i // groups }
      for d = 1, n do shape[2 + d] = ks[d] end
      self.weight = param(make(sk.empty, shape, opts.dtype))
      init.kaiming_uniform_(self.weight, { a = math.sqrt(5) })
      if opts.bias ~= false then
        local b = 1 / math.sqrt((fans(self.weight)))
        self.bias = param(make(sk.empty, { o }, opts.dtype))
        init.uniform_(self.bias, -b, b)
      end
    end, function(self, x)
      if transposed then
        return sk["conv_transpose" .. n .. "d"](x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
          self.groups, self.dilation)
      end
      if self.mode_pads then
        return sk["conv" .. n .. "d"](sk.pad(x, self.mode_pads, self.padding_mode), self.weight, self.bias, self.stride, 0,
          self.dilation, self.groups)
      end
      return sk["conv" .. n .. "d"](x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
    end)
  end
  for n = 1, 3 do
    conv_class("Conv" .. n .. "d", n, false)
    conv_class("ConvTranspose" .. n .. "d", n, true)
  end

  -- Pooling: MaxPool1d/2d/3d(kernel_size, {stride, padding, dilation, ceil_mode, return_indices}),
  -- AvgPool1d/2d/3d(kernel_size, {stride, padding, ceil_mode, count_include_pad, divisor_override}),
  -- AdaptiveAvgPool/AdaptiveMaxPool1d/2d/3d(output_size, {return_indices}), MaxUnpool1d/2d/3d
  -- (kernel_size, {stride, padding}; called with the indices), LPPool1d/2d(norm_type, kernel_size, {stride, ceil_mode}).
  for n = 1, 3 do
    nn["MaxPool" .. n .. "d"] = class("MaxPool" .. n .. "d", function(self, k, o)
      o = o or {}
      self.kernel_size, self.stride, self.padding, self.dilation = k, o.stride or {}, o.padding or 0, o.dilation or 1
      self.ceil_mode, self.return_indices = o.ceil_mode or false, o.return_indices or false
    end, function(self, x)
      local v, i = sk["max_pool" .. n .. "d_with_indices"](x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)
      if self.return_indices then return v, i end
      return v
    end)
    nn["AvgPool" .. n .. "d"] = class("AvgPool" .. n .. "d", function(self, k, o)
      o = o or {}
      self.kernel_size, self.stride, self.padding = k, o.stride or {}, o.padding or 0
      self.ceil_mode, self.count_include_pad, self.divisor_override = o.ceil_mode or false, o.count_include_pad ~= false, o.divisor_override
    end, function(self, x)
      if n == 1 then return sk.avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad) end
      return sk["avg_pool" .. n .. "d"](x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
        self.divisor_override)
    end)
    nn["AdaptiveAvgPool" .. n .. "d"] = class("AdaptiveAvgPool" .. n .. "d", function(self, size) self.output_size = size end,
      function(self, x) return sk["adaptive_avg_pool" .. n .. "d"](x, self.output_size) end)
    nn["AdaptiveMaxPool" .. n .. "d"] = class("AdaptiveMaxPool" .. n .. "d", function(self, size, o)
      self.output_size, self.return_indices = size, (o or {}).return_indices or false
    end, function(self, x)
      local v, i = sk["adaptive_max_pool" .. n .. "d"](x, self.output_size)
      if self.return_indices then return v, i end
      return v
    end)
    -- the output size a max_pool with these parameters came from (PyTorch's default_output_size)
    nn["MaxUnpool" .. n .. "d"] = class("MaxUnpool" .. n .. "d", function(self, k, o)
      o = o or {}
      self.kernel_size, self.stride, self.padding = k, o.stride or k, o.padding or 0
    end, function(self, x, indices, output_size)
      local function at(v, i) return type(v) == "table" and (v[i] or v[1]) or v end
      if not output_size then
        output_size = {}
        local s = x:shape()
        for i = 1, n do
          output_size[i] = (s[#s - n + i] - 1) * at(self.stride, i) - 2 * at(self.padding, i) + at(self.kernel_size, i)
        end
      end
      if n == 3 then
        local st, pd = {}, {}
        for i = 1, 3 do st[i], pd[i] = at(self.stride, i), at(self.padding, i) end
        return sk.max_unpool3d(x, indices, output_size, st, pd)
      end
      return sk["max_unpool" .. n .. "d"](x, indices, output_size)
    end)
  end
  for n = 1, 2 do
    nn["LPPool" .. n .. "d"] = class("LPPool" .. n .. "d", function(self, p, k, o)
      o = o or {}
      self.norm_type, self.kernel_size, self.stride, self.ceil_mode = p, k, o.stride or {}, o.ceil_mode or false
    end, function(self, x) return sk["lp_pool" .. n .. "d"](x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode) end)
  end

  -- BatchNorm1d/2d/3d(num_features, {eps = 1e-5, momentum = 0.1, affine = true,
  -- track_running_stats = true, dtype}): running_mean, running_var and num_batches_tracked are
  -- buffers (tensor fields without grad: in state_dict, not in parameters).
  for n, dims in ipairs({ { 2, 3 }, { 4 }, { 5 } }) do
    local name = "BatchNorm" .. n .. "d"
    nn[name] = class(name, function(self, c, o)
      o = o or {}
      self.num_features, self.eps, self.momentum = c, o.eps or 1e-5, o.momentum or 0.1
      if o.affine ~= false then
        self.weight = param(make(sk.ones, { c }, o.dtype))
        self.bias = param(make(sk.zeros, { c }, o.dtype))
      end
      if o.track_running_stats ~= false then
        self.running_mean = make(sk.zeros, { c }, o.dtype)
        self.running_var = make(sk.ones, { c }, o.dtype)
        self.num_batches_tracked = sk.zeros({}, { dtype = "int64" })
      end
    end, function(self, x)
      local d = x:dim()
      if d ~= dims[1] and d ~= dims[#dims] then
        raise(string.format("expected %s input (got %dD input)", #dims == 2 and "2D or 3D" or (dims[1] .. "D"), d))
      end
      local batch_stats = self.training or not self.running_mean
      if self.training and self.running_mean then
        sk.no_grad(function() self.num_batches_tracked:add_(1) end)
      end
      return sk.batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var, batch_stats, self.momentum,
        self.eps, false)
    end)
  end

  -- GroupNorm(num_groups, num_channels, {eps, affine, dtype}); InstanceNorm1d/2d/3d(num_features,
  -- {eps, momentum, affine = false, track_running_stats = false}); LocalResponseNorm(size, {alpha, beta, k}).
  nn.GroupNorm = class("GroupNorm", function(self, g, c, o)
    o = o or {}
    self.num_groups, self.num_channels, self.eps = g, c, o.eps or 1e-5
    if c % g ~= 0 then raise("GroupNorm: num_channels must be divisible by num_groups") end
    if o.affine ~= false then
      self.weight = param(make(sk.ones, { c }, o.dtype))
      self.bias = param(make(sk.zeros, { c }, o.dtype))
    end
  end, function(self, x) return sk.group_norm(x, self.num_groups, self.weight, self.bias, self.eps) end)
  for n = 1, 3 do
    local name = "InstanceNorm" .. n .. "d"
    nn[name] = class(name, function(self, c, o)
      o = o or {}
      self.num_features, self.eps, self.momentum = c, o.eps or 1e-5, o.momentum or 0.1
      if o.affine then
        self.weight = param(make(sk.ones, { c }, o.dtype))
        self.bias = param(make(sk.zeros, { c }, o.dtype))
      end
      if o.track_running_stats then
        self.running_mean = make(sk.zeros, { c }, o.dtype)
        self.running_var = make(sk.ones, { c }, o.dtype)
      end
    end, function(self, x)
      return sk.instance_norm(x, self.weight, self.bias, self.running_mean, self.running_var,
        self.training or not self.running_mean, self.momentum, self.eps, false)
    end)
  end
  nn.LocalResponseNorm = class("LocalResponseNorm", function(self, size, o)
    o = o or {}
    self.size, self.alpha, self.beta, self.k = size, o.alpha or 1e-4, o.beta or 0.75, o.k or 1
  end, function(self, x) return sk.local_response_norm(x, self.size, self.alpha, self.beta, self.k) end)

  -- {==== Shaping layers ====
  -- Padding: ZeroPad1d/2d/3d(padding), ConstantPad1d/2d/3d(padding, value), ReflectionPad, ReplicationPad
  -- and CircularPad 1d/2d/3d(padding): an int pads both sides of each of the last n dims.
  local function pads_of(p, n)
    if type(p) == "table" then return p end
    local t = {}
    for i = 1, 2 * n do t[i] = p end
    return t
  end
  for n = 1, 3 do
    for _, c in ipairs({ { "Zero", "constant" }, { "Constant", "constant" }, { "Reflection", "reflect" },
                         { "Replication", "replicate" }, { "Circular", "circular" } }) do
      local name = c[1] .. "Pad" .. n .. "d"
      nn[name] = class(name, function(self, p, value)
        self.padding, self.value = pads_of(p, n), c[1] == "Constant" and value or nil
      end, function(self, x)
        if c[2] == "constant" then return sk.pad(x, self.padding, "constant", self.value or 0) end
        return sk.pad(x, self.padding, c[2])
      end)
    end
  end
  -- Upsample({size =, scale_factor =, mode = "nearest", align_corners =, recompute_scale_factor =}),
  -- UpsamplingNearest2d and UpsamplingBilinear2d (align_corners = true), as PyTorch's
  nn.Upsample = class("Upsample", function(self, o)
    o = o or {}
    self.size, self.scale_factor, self.mode = o.size, o.scale_factor, o.mode or "nearest"
    self.align_corners, self.recompute_scale_factor = o.align_corners, o.recompute_scale_factor
  end, function(self, x)
    return sk.interpolate(x, { size = self.size, scale_factor = self.scale_factor, mode = self.mode,
      align_corners = self.align_corners, recompute_scale_factor = self.recompute_scale_factor })
  end)
  for _, c in ipairs({ { "UpsamplingNearest2d", "nearest" }, { "UpsamplingBilinear2d", "bilinear" } }) do
    nn[c[1]] = class(c[1], function(self, o)
      o = o or {}
      self.size, self.scale_factor = o.size, o.scale_factor
    end, function(self, x)
      return sk.interpolate(x, { size = self.size, scale_factor = self.scale_factor, mode = c[2],
        align_corners = c[2] == "bilinear" or nil })
    end)
  end
  -- Unfold(kernel_size, {dilation, padding, stride}) and Fold(output_size, kernel_size, {...}): im2col, col2im
  nn.Unfold = class("Unfold", function(self, k, o)
    o = o or {}
    self.kernel_size, self.dilation, self.padding, self.stride = k, o.dilation or 1, o.padding or 0, o.stride or 1
  end, function(self, x) return sk.im2col(x, self.kernel_size, self.dilation, self.padding, self.stride) end)
  nn.Fold = class("Fold", function(self, size, k, o)
    o = o or {}
    self.output_size, self.kernel_size = size, k
    self.dilation, self.padding, self.stride = o.dilation or 1, o.padding or 0, o.stride or 1
  end, function(self, x) return sk.col2im(x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride) end)
  nn.PixelShuffle = class("PixelShuffle", function(self, r) self.upscale_factor = r end,
    function(self, x) return sk.pixel_shuffle(x, self.upscale_factor) end)
  nn.PixelUnshuffle = class("PixelUnshuffle", function(self, r) self.downscale_factor = r end,
    function(self, x) return sk.pixel_unshuffle(x, self.downscale_factor) end)
  -- }====

  nn.Dropout = class("Dropout", function(self, p) self.p = p or 0.5 end,
    function(self, x) return sk.dropout(x, self.p, self.training) end)

  nn.Sequential = class("Sequential", function(self, ...)
    for i, m in ipairs { ... } do self[tostring(i - 1)] = m end
  end, function(self, x)
    for _, c in ipairs(self:children()) do x = c(x) end
    return x
  end)

  nn.ModuleList = class("ModuleList", function(self, list)
    for i, m in ipairs(list or {}) do self[tostring(i - 1)] = m end
  end, nil)
  function nn.ModuleList.methods:append(m) self[tostring(#self:children())] = m; return self end
  function nn.ModuleList.methods:at(i) return self[tostring(i - 1)] end
  function nn.ModuleList.methods:len() return #self:children() end

  local function activation(name, fn) nn[name] = class(name, function(self, a) self.arg = a end, fn) end
  activation("ReLU", function(_, x) return x:relu() end)
  activation("GELU", function(self, x) return sk.gelu(x, { approximate = self.arg or "none" }) end)
  activation("SiLU", function(_, x) return sk.silu(x) end)
  activation("Tanh", function(_, x) return x:tanh() end)
  activation("Sigmoid", function(_, x) return x:sigmoid() end)
  activation("Softmax", function(self, x) return sk.softmax(x, self.arg or -1) end)
  activation("LogSoftmax", function(self, x) return sk.log_softmax(x, self.arg or -1) end)
  activation("Softmin", function(self, x) return sk.softmin(x, self.arg or -1) end)
  activation("LeakyReLU", function(self, x) return sk.leaky_relu(x, self.arg or 0.01) end)
  activation("CELU", function(self, x) return sk.celu(x, self.arg or 1) end)
  activation("Softshrink", function(self, x) return sk.softshrink(x, self.arg or 0.5) end)
  activation("Hardshrink", function(self, x) return sk.hardshrink(x, self.arg or 0.5) end)
  activation("GLU", function(self, x) return sk.glu(x, self.arg or -1) end)
  for name, op in pairs({ SELU = "selu", ReLU6 = "relu6", Hardswish = "hardswish", Hardsigmoid = "hardsigmoid",
                          Softsign = "softsign", Tanhshrink = "tanhshrink", LogSigmoid = "log_sigmoid", Mish = "mish" }) do
    activation(name, function(_, x) return sk[op](x) end)
  end
  -- two-argument activations: ELU(alpha), Hardtanh(min, max), Softplus(beta, threshold), Threshold(t, v)
  local function activation2(name, fn, d1, d2)
    nn[name] = class(name, function(self, a, b) self.a, self.b = a or d1, b or d2 end, fn)
  end
  activation2("ELU", function(self, x) return sk.elu(x, self.a) end, 1)
  activation2("Hardtanh", function(self, x) return sk.hardtanh(x, self.a, self.b) end, -1, 1)
  activation2("Softplus", function(self, x) return sk.softplus(x, self.a, self.b) end, 1, 20)
  activation2("Threshold", function(self, x) return sk.threshold(x, self.a, self.b) end)
  activation2("RReLU", function(self, x) return sk.rrelu(x, self.a, self.b, self.training) end, 1 / 8, 1 / 3)
  -- PReLU(num_parameters = 1, {init = 0.25}): a learnable slope, one or one per channel
  nn.PReLU = class("PReLU", function(self, n, o)
    o = o or {}
    self.weight = param(make(sk.empty, { n or 1 }, o.dtype):fill_(o.init or 0.25))
  end, function(self, x) return sk.prelu(x, self.weight) end)
  -- }====

  -- {==== Losses and distances ====
  -- One op each: the module keeps the op's options (PyTorch's defaults; an absent default is
  -- the op's own) from an options table, e.g. nn.SmoothL1Loss{ beta = 0.5, reduction = "sum" },
  -- as fields, and its forward passes its inputs and them on: m(input, target, ...).
  local R = { "reduction", "mean" }
  local LOSSES = {
    { "MSELoss", "mse_loss", { R } },
    { "NLLLoss", "nll_loss", { { "weight" }, R, { "ignore_index", -100 } } },
    { "CrossEntropyLoss", "cross_entropy", { { "weight" }, R, { "ignore_index", -100 }, { "label_smoothing", 0 } } },
    { "BCELoss", "binary_cross_entropy", { { "weight" }, R } },
    { "BCEWithLogitsLoss", "binary_cross_entropy_with_logits", { { "weight" }, R, { "pos_weight" } } },
    { "L1Loss", "l1_loss", { R } },
    { "SmoothL1Loss", "smooth_l1_loss", { R, { "beta", 1 } } },
    { "HuberLoss", "huber_loss", { R, { "delta", 1 } } },
    { "KLDivLoss", "kl_div", { R, { "log_target", false } } },
    { "PoissonNLLLoss", "poisson_nll_loss", { { "log_input", true }, { "full", false }, { "eps", 1e-8 }, R } },
    { "GaussianNLLLoss", "gaussian_nll_loss", { { "full", false }, { "eps", 1e-6 }, R } },
    { "MarginRankingLoss", "margin_ranking_loss", { { "margin", 0 }, R } },
    { "HingeEmbeddingLoss", "hinge_embedding_loss", { { "margin", 1 }, R } },
    { "SoftMarginLoss", "soft_margin_loss", { R } },
    { "MultiLabelSoftMarginLoss", "multilabel_soft_margin_loss", { { "weight" }, R } },
    { "MultiMarginLoss", "multi_margin_loss", { { "p", 1 }, { "margin", 1 }, { "weight" }, R } },
    { "MultiLabelMarginLoss", "multilabel_margin_loss", { R } },
    { "CosineEmbeddingLoss", "cosine_embedding_loss", { { "margin", 0 }, R } },
    { "TripletMarginLoss", "triplet_margin_loss", { { "margin", 1 }, { "p", 2 }, { "eps", 1e-6 }, { "swap", false }, R } },
    { "CTCLoss", "ctc_loss", { { "blank", 0 }, R, { "zero_infinity", false } } },
    { "CosineSimilarity", "cosine_similarity", { { "dim", 1 }, { "eps", 1e-8 } } },
    { "PairwiseDistance", "pairwise_distance", { { "p", 2 }, { "eps", 1e-6 }, { "keepdim", false } } },
  }
  for _, l in ipairs(LOSSES) do
    local name, op, options = l[1], l[2], l[3]
    nn[name] = class(name, function(self, opts)
      opts = opts or {}
      for _, o in ipairs(options) do
        local v = opts[o[1]]
        if v == nil then v = o[2] end
        self[o[1]] = v
      end
    end, function(self, ...)
      local kw, fields = {}, rawget(self, "_fields")
      for _, o in ipairs(options) do kw[o[1]] = fields[o[1]] end
      local args = table.pack(...)
      args[args.n + 1] = kw
      return sk[op](table.unpack(args, 1, args.n + 1))
    end)
  end
  -- }====

  nn.Module = class("Module", nil, nil)
  return nn
end
