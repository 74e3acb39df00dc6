-- spec/conformance_spec.lua — every op case of spec/conformance/cases.lua on the CPU (the
-- reference) and on each target of TARGETS, compared: results' shapes, dtypes, strides and
-- devices, values (exact for integers and bools, a tolerance per float dtype, NaN equal to NaN),
-- and error messages (modulo the device's name). In the style of ggml's test-backend-ops.
-- Invariant: a case is built afresh for every run from its description, so no run sees
-- another's tensors; the CPU result of a case is computed once and shared by the targets.
local h = require "spec.helper"
local sk = h.sk
local C = require "spec.conformance.cases"

-- {==== Targets ====
-- A target: name; device (the string passed as a device); values (compare values?);
-- move(t) (a CPU tensor to the target); and optionally available() (false: the target is not
-- run, e.g. no GPU); variants = {functional = true, ...} (the variants it runs; default all);
-- supports(case) -> false, reason (to skip a case); setup()/teardown(); before() (ahead of each
-- run); check(case, outcome) -> nil or a message (e.g. which dispatch path ran);
-- kernel_errors: patterns of CPU errors that only the CPU's kernels raise (a dtype their loops
-- lack), which a target running no kernel does not raise; error_context: patterns of context
-- the target adds in front of an error message, taken off before comparing; call(case, args, n,
-- kw, outs) (how the op is called, default the built-in sk.<op>); normalize(err, case) (applied to
-- both errors); not_structured: patterns of the binding's argument errors that mean the case
-- uses an overload the target does not have (counted, not compared); target_errors: patterns of
-- errors only the target's kernels raise where the CPU computes (a dtype PyTorch's kernels for
-- that device lack too), counted, not failed.
local host_lib, host_calls = nil, {}
-- The structured ops conf_host runs with kernels of its own: functional and in-place calls must
-- reach them through DefaultBackend, never the CPU fallback. op -> its out overload and kernel.
-- Each computes on CPU copies and returns the result with the fallback call that serves an out of
-- another shape (a direct out= call with an empty out, which the fallback resizes).
local HOST_KERNELS = {
  add = { out = "aten::add.out", fn = function(self, other, alpha, out)
    return sk.add(self:cpu(), other:cpu(), { alpha = alpha }),
           function() return sk.fallback.call("aten::add.out", self, other, { alpha = alpha, out = out }) end
  end },
  mul = { out = "aten::mul.out", fn = function(self, other, out)
    return sk.mul(self:cpu(), other:cpu()),
           function() return sk.fallback.call("aten::mul.out", self, other, { out = out }) end
  end },
  sum = { out = "aten::sum.IntList_out", fn = function(self, dim, keepdim, dtype, out)
    local kw = dtype and { dtype = dtype } or nil -- an empty options table would read as an argument
    local r = kw and sk.call("aten::sum.dim_IntList", self:cpu(), dim, keepdim, kw)
                  or sk.call("aten::sum.dim_IntList", self:cpu(), dim, keepdim)
    return r,
           function() return sk.fallback.call("aten::sum.IntList_out", self, dim, keepdim, { dtype = dtype, out = out }) end
  end },
}

local function same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- The run-time structured path: every built-in structured op re-declared in conf_rt through
-- lib:structured with its own meta function and CPU kernel (sk.structured_builtin).
local rt_lib, rt_names
local function rt_call(case, args, n, kw, outs)
  local o = {}
  for k, x in pairs(kw or {}) do o[k] = x end
  if case.variant == "out" then
    for i, name in ipairs(case.outs or { "out" }) do o[name] = outs[i] end
  end
  if next(o) then args[n + 1] = o; n = n + 1 end
  local f = sk.ops.conf_rt[case.variant == "inplace" and case.op .. "_" or case.op]
  return f(table.unpack(args, 1, n))
end
-- the binding's words for arguments no overload of the re-declared set takes: the case uses
-- an overload of the built-in op that is not structured
local NOT_REDECLARED = { "argument '[%w_]+' %(position %d+%) expected ", "too many arguments", "missing argument",
                         "unknown option" }

-- sk.plan: the case's call recorded with its top-level tensors as the plan's inputs (the rest
-- baked or captured), then one replay. Out cases are left out (a plan refuses to resize outs).
local call_variant -- the call of a case by its variant (below)
local function plan_call(case, args, n, kw, outs)
  local pos, ins = {}, {}
  for i = 1, n do if getmetatable(args[i]) == require("sk.core").metatable then pos[#pos + 1] = i; ins[#ins + 1] = args[i] end end
  local function fn(...)
    local a = table.move(args, 1, n, 1, {})
    for j, i in ipairs(pos) do a[i] = select(j, ...) end
    return call_variant(case, a, n, kw, outs)
  end
  local p = sk.plan(fn, table.unpack(ins))
  return p(table.unpack(ins))
end

local TARGETS = {
  {
    name = "runtime", device = "cpu", values = true,
    move = function(t) return t end,
    call = rt_call,
    not_structured = NOT_REDECLARED,
    -- "sk.ops.conf_rt.add: ", "Tensor:add: " and "sk.add: " name the same op
    normalize = function(e) return (e:gsub("^sk%.ops%.conf_rt%.([%w_]+): ", "%1: "):gsub("^sk%.([%w_]+): ", "%1: ")
                                     :gsub("^Tensor:([%w_]+): ", "%1: ")) end,
    setup = function()
      rt_lib, rt_names = sk.library("conf_rt"), {}
      for _, e in ipairs(require("sk.core").lib.structured_builtins()) do
        local b = sk.structured_builtin(e.out)
        local overload -- the functional member's, when the out's name does not give it
        for _, m in ipairs(e.members) do
          local name, ovl = m:match("^aten::([%w_]+)%.?(.*)$")
          if not name:match("_$") then overload = ovl end
          rt_names[name] = true
        end
        rt_lib:structured { out = e.schema, meta = b, impl = { CPU = b }, overload = overload }
        rt_names[e.out:match("^aten::([%w_]+)")] = true
      end
    end,
    teardown = function() rt_lib:close() end,
    supports = function(case)
      return rt_names[case.variant == "inplace" and case.op .. "_" or case.op] == true
    end,
  },
  {
    name = "plan", device = "cpu", values = true,
    move = function(t) return t end,
    call = plan_call,
    variants = { functional = true, method = true, inplace = true },
    -- a plan is for one device: cases mixing devices are left out
    supports = function(case) return not case.mixed end,
    -- ops whose result shapes (or results) depend on the data cannot be planned, whatever the CPU
    -- does with them (its own argument checks may come first); a writer that resizes cannot either
    refusals = { "which <dev> tensors do not have", "its values are needed", "has no values to infer",
                      "its result is a value computed from the data", "has a data-dependent result shape",
                      "are read as numbers", "expected tensor_indices_or_sections to be on",
                      "inside a plan an out must have its final shape", "meta tensors have no data" },
    -- an error of the op raised while recording or replaying, with the plan's words around it;
    -- a replayed step may be an op the called one ran (aten::_linalg_check_errors), so its
    -- message keeps the called op's name ("linalg.inv: "), which a direct call says in front
    normalize = function(e, case)
      local replayed
      e, replayed = e:gsub("sk%.plan: step %d+ %([^)]*%): ", "")
      local name = replayed > 0 and e:match("^([%w_.]+): ")
      if name and name:gsub("%.", "_") == case.op then e = e:sub(#name + 3) end
      return (e:gsub("sk%.plan: cannot record '[%w_:.]+': ", ""):gsub("^sk%.[%w_]+: ", ""):gsub("^Tensor:[%w_]+: ", ""))
    end,
  },
  {
    name = "meta", device = "meta", values = false,
    move = function(t) return t:to("meta") end,
    kernel_errors = { "\" not implemented for '", "is not supported on CPU" },
    supports = function(case) return not (case.skip and case.skip.meta), case.skip and case.skip.meta end,
  },
  {
    name = "cuda", device = "cuda", values = true,
    move = function(t) return t:to("cuda") end,
    available = function() return sk.cuda.is_available() end,
    -- an op without a CUDA kernel runs through the CPU fallback (of the key 'CUDA'), which
    -- wraps the CPU kernel's error with the op and the key
    error_context = { "aten::[%w_.]+ through the <dev> fallback for 'CUDA': " },
    -- PyTorch's CUDA matmul has no integer or bool types either ("addmm_cuda" not implemented for 'Long')
    target_errors = { "CUDA matmul supports float16, bfloat16, float32 and float64, not " },
    -- a kernel's name in "... not implemented for '<dtype>'" says cuda where the CPU's says cpu
    normalize = function(err) return (err:gsub('_cuda" not implemented for', '_cpu" not implemented for')) end,
  },
  {
    name = "conf_host", device = "conf_host", values = true,
    move = function(t) return t:to("conf_host") end,
    -- sk_cpu_fallback.c wraps an error of the CPU kernel with the op and the key, the Lua kernel
    -- call one raised in a Lua kernel (a direct out= call reaches the out kernels above)
    error_context = { "Lua kernel for 'aten::[%w_.]+' on <dev> raised: aten::[%w_.]+: ",
                      "aten::[%w_.]+ through the <dev> fallback for '<dev>': " },
    setup = function()
      sk.backends.register("conf_host", {fallback = "cpu"}) -- the record's policy: the CPU fallback
      host_lib = sk.library("conformance_host")
      -- out kernels computing on CPU copies; a direct out= call whose out has another shape
      -- (an empty out to resize) goes to the CPU fallback, which resizes
      for op, k in pairs(HOST_KERNELS) do
        host_calls[op] = 0
        host_lib:impl(k.out, "conf_host", function(...)
          local out = select(select("#", ...), ...)
          local r, fallback = k.fn(...)
          if not same_shape(r:shape(), out:shape()) then return fallback() end
          host_calls[op] = host_calls[op] + 1
          out:copy_(r)
          return out
        end)
      end
    end,
    teardown = function()
      host_lib:close()
      collectgarbage()
      collectgarbage()
      sk.backends.unregister("conf_host")
    end,
    before = function() sk.fallback.reset("conf_host") end,
    -- functional and in-place calls of an op with an own out kernel never fall back
    check = function(case, o)
      local k = HOST_KERNELS[case.op]
      if not k or case.variant == "out" or not o.ok then return nil end
      local n = sk.fallback.counts("conf_host")[k.out]
      if n then return string.format("%s fell back to the CPU %d time(s); its own kernel should serve it", k.out, n) end
      if host_calls[case.op] == o.calls_before then return "its own out kernel did not run" end
    end,
  },
}
-- }====

-- {==== Building inputs ====
local ISFLOAT = { float32 = true, float64 = true, float16 = true, bfloat16 = true }

-- deterministic values: floats on a grid of 1/8 (exact in every float dtype), integers, bools
local function fill_values(n, dtype, spec, seed)
  local s = seed
  local v = {}
  local lo, hi = spec.lo, spec.hi
  if dtype == "uint8" then lo, hi = math.max(lo or 0, 0), hi or 9 end
  for i = 1, n do
    s = (s * 1103515245 + 12345) % 2147483648
    local r = (s >> 8) % 1024 / 1024
    if dtype == "bool" then
      v[i] = r < 0.5
    elseif ISFLOAT[dtype] then
      local a, b = lo or -2, hi or 2
      local x = a + math.floor((b - a) * r * 8) / 8
      if spec.nonzero and x == 0 then x = b end
      v[i] = x
    else
      local a, b = math.floor(lo or -5), math.floor(hi or 5)
      local x = a + math.floor((b - a + 1) * r)
      if spec.nonzero and x == 0 then x = b end
      v[i] = x
    end
  end
  return v
end

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

-- The shape allocated before the layout's view is taken.
local function base_shape(spec)
  local s, layout = {}, spec.layout or "contiguous"
  for i, d in ipairs(spec.shape) do s[i] = d end
  if layout == "transposed" then
    s[#s], s[#s - 1] = s[#s - 1], s[#s]
  elseif layout == "expanded" then
    s[1] = 1
  elseif layout == "sliced" then
    s[#s] = 2 * s[#s]
  end
  return s
end

local function flat(v, out)
  if type(v) ~= "table" then out[#out + 1] = v return out end
  for _, x in ipairs(v) do flat(x, out) end
  return out
end

-- A tensor of spec, dtype the case's unless spec says; move puts its base on the run's device.
local function build_tensor(spec, dtype, seed, move)
  dtype = spec.dtype or dtype
  local bs = base_shape(spec)
  local t
  if spec.values ~= nil then
    t = sk.tensor(spec.values, { dtype = dtype })
    -- flat values as many as the shape holds fill it (row-major)
    if #bs > 1 and type(spec.values) == "table" and #spec.values == numel(bs) then t = t:reshape(bs) end
  elseif numel(bs) == 0 then
    t = sk.zeros(bs, { dtype = dtype })
  else
    local v = fill_values(numel(bs), dtype, spec, seed)
    t = #bs == 0 and sk.tensor(v[1], { dtype = dtype }) or sk.tensor(v, { dtype = dtype }):reshape(bs)
  end
  t = move(t, spec)
  local layout = spec.layout or "contiguous"
  if layout == "transposed" then
    t = t:transpose(-1, -2)
  elseif layout == "expanded" then
    t = t:expand(spec.shape)
  elseif layout == "sliced" then
    t = t:slice(-1, 0, bs[#bs], 2)
  end
  return t
end

-- The arguments of a case for one run: specs become tensors, "$device" the run's device.
local function materialize(v, ctx)
  local mt = getmetatable(v)
  if mt == C.Tensor then
    ctx.k = ctx.k + 1
    return build_tensor(v, ctx.dtype, 7919 * ctx.k + ctx.seed, ctx.move)
  elseif v == C.NONE then
    return nil
  elseif v == "$device" then
    return ctx.device
  elseif type(v) == "table" then
    local t = {}
    for k, x in pairs(v) do t[k] = materialize(x, ctx) end
    return t
  end
  return v
end
-- }====

-- {==== Running one case ====
local TENSOR_MT = require("sk.core").metatable
local function is_tensor(v) return getmetatable(v) == TENSOR_MT end

function call_variant(case, args, n, kw, outs)
  local op = case.op
  local function with_kw(extra)
    local o, any = {}, false
    for k, x in pairs(kw or {}) do o[k], any = x, true end
    for k, x in pairs(extra or {}) do o[k], any = x, true end
    if any then args[n + 1] = o return table.unpack(args, 1, n + 1) end
    return table.unpack(args, 1, n)
  end
  if case.variant == "functional" then
    local f = assert(sk[op], "sk." .. op .. " does not exist")
    return f(with_kw())
  elseif case.variant == "method" then
    local f = assert(sk.Tensor[op], "Tensor:" .. op .. " does not exist")
    return f(with_kw())
  elseif case.variant == "inplace" then
    local f = assert(sk.Tensor[op .. "_"] or sk[op .. "_"], op .. "_ does not exist")
    return f(with_kw())
  elseif case.variant == "backward" then
    -- floating tensor arguments become leaves (their layouts kept); the loss weighs each
    -- differentiable result by a fixed pattern; the results are the leaves' gradients
    local leaves = {}
    for i = 1, n do
      local a = args[i]
      if is_tensor(a) and ISFLOAT[a:dtype()] then args[i] = a:detach():requires_grad_(); leaves[#leaves + 1] = args[i] end
    end
    local f = assert(sk[op], "sk." .. op .. " does not exist")
    local r = table.pack(f(with_kw()))
    local loss
    for i = 1, r.n do
      local y = r[i]
      if is_tensor(y) and y:requires_grad() then
        local w = (sk.arange(y:numel(), { dtype = y:dtype() }):remainder(5) * 0.5 - 1):reshape(y:shape()):to(y:device())
        local term = (y * w):sum()
        loss = loss and loss + term or term
      end
    end
    if loss then loss:backward() end
    local grads = {}
    for i, l in ipairs(leaves) do grads[i] = l.grad or "no gradient" end
    return table.unpack(grads, 1, #leaves)
  else -- out
    local o = {}
    for i, name in ipairs(case.outs or { "out" }) do o[name] = outs[i] end
    return sk[op](with_kw(o))
  end
end

-- "file:123: sk.add: msg" -> "sk.add: msg", device names -> <dev>; for a case mixing devices,
-- the argument blamed (the one not on the device dispatched to, which differs by target) -> ?
local function norm_error(e, case)
  e = tostring(e):gsub("^[^\n]-:%d+: ", "")
  e = e:gsub("[%w_/%.%-]+%.lua:%d+: ", "")
  for _, d in ipairs { "conf_host:0", "conf_host", "cuda:0", "meta", "Meta", "cpu", "CPU" } do
    e = e:gsub("%f[%w_]" .. d:gsub("%p", "%%%0") .. "%f[^%w_:]", "<dev>")
  end
  if case.mixed then e = e:gsub("%(argument '[%w_]+' of ", "(argument '?' of ") end
  return e
end

-- Runs case on a device (move = how an input gets there). outcome = {ok, results, err, args}.
local function run(case, device, move, out_dtypes, target)
  local ctx = { k = 0, seed = case.index, dtype = case.dtype, device = device }
  ctx.move = function(t, spec)
    if spec.device == "other" then
      if device == "cpu" then return t:to("meta") end
      return t
    elseif spec.device == "cpu" then
      return t
    end
    return device == "cpu" and t or move(t)
  end
  local args = {}
  for i = 1, case.nargs do args[i] = materialize(case.args[i], ctx) end
  local kw = case.kw and materialize(case.kw, ctx)
  local outs = {}
  if case.variant == "out" then
    for i, d in ipairs(out_dtypes or {}) do outs[i] = sk.empty({ 0 }, { dtype = d, device = device }) end
  end
  if case.seed then sk.manual_seed(case.seed) end
  local o = { calls_before = case.op and host_calls[case.op] }
  if target and target.before then target.before() end
  local r = table.pack(pcall(target and target.call or call_variant, case, args, case.nargs, kw, outs))
  o.ok = r[1]
  if o.ok then
    o.results = { n = r.n - 1, table.unpack(r, 2, r.n) }
  else
    o.err = tostring(r[2])
  end
  o.args, o.outs = args, outs
  return o
end
-- }====

-- {==== Comparing ====
local TOL = { float32 = 1e-5, float64 = 1e-10, float16 = 1e-3, bfloat16 = 1e-2 }

local TENSOR_MT = require("sk.core").metatable
local function is_tensor(v) return getmetatable(v) == TENSOR_MT end

local function fmt(v)
  if type(v) == "table" then
    local t = {}
    for i = 1, #v do t[i] = fmt(v[i]) end
    return "{" .. table.concat(t, ", ") .. "}"
  end
  return tostring(v)
end

local function values_equal(a, b, tol)
  if type(a) == "table" then
    if type(b) ~= "table" or #a ~= #b then return false end
    for i = 1, #a do if not values_equal(a[i], b[i], tol) then return false end end
    return true
  end
  if type(a) == "number" and type(b) == "number" then
    if a ~= a or b ~= b then return a ~= a and b ~= b end
    if a == b then return true end
    return tol > 0 and math.abs(a - b) <= tol * math.max(1, math.abs(a))
  end
  return a == b
end

local function device_type(t) return (t:device():gsub(":%d+$", "")) end

-- nil when the target's value v matches the reference r, else what differs
local function compare(r, v, target, case, path)
  if is_tensor(r) then
    if not is_tensor(v) then return path .. ": expected a tensor, got " .. type(v) end
    if not same_shape(r:shape(), v:shape()) then
      return string.format("%s: shape %s, reference %s", path, fmt(v:shape()), fmt(r:shape()))
    end
    if r:dtype() ~= v:dtype() then return string.format("%s: dtype %s, reference %s", path, v:dtype(), r:dtype()) end
    local want_dev = device_type(r) == "cpu" and target.device or device_type(r)
    if device_type(v) ~= want_dev then
      return string.format("%s: device %s, expected %s", path, v:device(), want_dev)
    end
    if case.strides ~= false and v:numel() > 1 and not same_shape(r:stride(), v:stride()) then
      return string.format("%s: strides %s, reference %s", path, fmt(v:stride()), fmt(r:stride()))
    end
    if target.values and case.values ~= false and device_type(r) ~= "meta" then
      local a, b = r:totable(), v:to("cpu"):totable()
      if not values_equal(a, b, TOL[r:dtype()] or 0) then
        return string.format("%s: values %s, reference %s", path, fmt(b), fmt(a))
      end
    end
    return nil
  elseif type(r) == "table" then
    if type(v) ~= "table" or #v ~= #r then return path .. ": expected a list of " .. #r end
    for i = 1, #r do
      local d = compare(r[i], v[i], target, case, path .. "[" .. i .. "]")
      if d then return d end
    end
    return nil
  end
  if type(r) ~= type(v) then return string.format("%s: %s, reference %s", path, type(v), type(r)) end
  if target.values and not values_equal(r, v, 1e-6) then
    return string.format("%s: %s, reference %s", path, tostring(v), tostring(r))
  end
end

-- nil when got agrees with ref, else the difference; the second result names a tolerated kind
local function compare_outcomes(ref, got, target, case)
  for _, p in ipairs(not got.ok and target.refusals or {}) do
    if norm_error(got.err, case):find(p, 1, true) then return nil, "refused" end
  end
  if not ref.ok or not got.ok then
    if got.ok then
      for _, p in ipairs(target.kernel_errors or {}) do
        if ref.err:find(p, 1, true) then return nil, "kernel_only" end
      end
    end
    local a, b = ref.err and norm_error(ref.err, case), got.err and norm_error(got.err, case)
    if target.normalize then a, b = a and target.normalize(a, case), b and target.normalize(b, case) end
    if b and b ~= a then
      for _, p in ipairs(target.not_structured or {}) do
        if b:find(p) then return nil, "not_structured" end
      end
    end
    if ref.ok then
      for _, p in ipairs(target.target_errors or {}) do
        if b:find(p, 1, true) then return nil, "target_only" end
      end
      return "raised '" .. b .. "'; the CPU did not"
    end
    if got.ok then return "did not raise; the CPU raised '" .. a .. "'" end
    local kind
    for _, p in ipairs(target.error_context or {}) do
      local n
      b, n = b:gsub(p, "", 1)
      if n > 0 then kind = "context" end
    end
    if a ~= b then return string.format("error '%s', reference '%s'", b, a) end
    return nil, kind
  end
  if ref.results.n ~= got.results.n then
    return string.format("%d results, reference %d", got.results.n, ref.results.n)
  end
  for i = 1, ref.results.n do
    local d = compare(ref.results[i], got.results[i], target, case, "result " .. i)
    if d then return d end
  end
  -- an in-place op returns self, an out op its outs
  if case.variant == "inplace" and got.results[1] ~= got.args[1] then return "the in-place result is not self" end
  if case.variant == "out" then
    for i, o in ipairs(got.outs) do
      if got.results[i] ~= o then return "result " .. i .. " is not the out tensor" end
    end
  end
end
-- }====

-- {==== Expanding rows into cases ====
-- SK_CONFORMANCE_OP=name runs only that op's rows; SK_CONFORMANCE_ALL=1 lists every mismatch
local ONLY, SHOW_ALL = os.getenv("SK_CONFORMANCE_OP"), os.getenv("SK_CONFORMANCE_ALL")
-- A row expands to dtype × variant cases; the functional variant sweeps all the row's dtypes,
-- the others (method, in-place, out) those of VARIANT_DTYPES among them (the first dtype if none):
-- their dtype handling is the functional one's, and the suite stays small enough for valgrind.
local VARIANT_DTYPES = { float32 = true, float16 = true, int64 = true, bool = true }
local cases = {}
for ri, r in ipairs(C.rows) do
  if ONLY and r.op ~= ONLY then goto next_row end
  local nargs, mixed = 0, false
  for k in pairs(r.args or {}) do if math.type(k) == "integer" and k > nargs then nargs = k end end
  local function scan(v)
    if getmetatable(v) == C.Tensor then mixed = mixed or v.device == "other"
    elseif type(v) == "table" then for _, x in pairs(v) do scan(x) end end
  end
  scan(r.args or {})
  local dtypes = r.dtypes or { "float32" }
  local some = {}
  for _, d in ipairs(dtypes) do if VARIANT_DTYPES[d] then some[#some + 1] = d end end
  if #some == 0 then some[1] = dtypes[1] end
  local variants = {}
  for _, v in ipairs(r.variants or { "functional" }) do variants[#variants + 1] = v end
  -- autograd: every row with a functional float case gets one backward case (float64 where it has it)
  local grad_dtype
  for _, d in ipairs(dtypes) do if d == "float64" or (d == "float32" and not grad_dtype) then grad_dtype = d end end
  for _, v in ipairs(variants) do
    if v == "functional" and grad_dtype and not r.raises then variants[#variants + 1] = "backward" break end
  end
  for _, v in ipairs(variants) do
    for _, d in ipairs(v == "functional" and dtypes or v == "backward" and { grad_dtype } or some) do
      local c = setmetatable({ row = ri, dtype = d, variant = v, nargs = nargs, mixed = mixed,
                                index = #cases + 1 }, { __index = r })
      cases[#cases + 1] = c
    end
  end
  ::next_row::
end

local function case_name(c)
  local parts = {}
  local function desc(v)
    local mt = getmetatable(v)
    if mt == C.Tensor then
      return "T" .. fmt(v.shape) .. (v.dtype and ":" .. v.dtype or "") .. (v.layout and ":" .. v.layout or "")
        .. (v.device and ":" .. v.device or "")
    elseif mt == C.List then
      local t = {}
      for i = 1, #v do t[i] = v[i] == false and "None" or desc(v[i]) end
      return "[" .. table.concat(t, ", ") .. "]"
    elseif v == C.NONE then
      return "None"
    elseif type(v) == "table" then
      return fmt(v)
    end
    return tostring(v)
  end
  for i = 1, c.nargs do parts[i] = desc(c.args[i]) end
  local kws = {}
  for k, v in pairs(c.kw or {}) do kws[#kws + 1] = k .. "=" .. desc(v) end
  table.sort(kws)
  if #kws > 0 then parts[#parts + 1] = "{" .. table.concat(kws, ", ") .. "}" end
  return string.format("%s(%s) [%s, %s, row %d]", c.op, table.concat(parts, ", "), c.dtype, c.variant, c.row)
end

-- the reference: the CPU run of each case; an out case takes its outs' dtypes from the functional run
local reference = {}
local function ref_of(c)
  if reference[c.index] then return reference[c.index] end
  local dtypes
  if c.variant == "out" then
    local f = run(setmetatable({ variant = "functional" }, { __index = c }), "cpu")
    dtypes = {}
    if f.ok then
      for i = 1, f.results.n do dtypes[i] = is_tensor(f.results[i]) and f.results[i]:dtype() or c.dtype end
    else
      for i = 1, #(c.outs or { "out" }) do dtypes[i] = c.dtype end
    end
  end
  local o = run(c, "cpu", nil, dtypes)
  o.out_dtypes = dtypes
  reference[c.index] = o
  return o
end
-- }====

describe("conformance", function()
  it("every case of a row that expects an error raises it on the CPU, and every other row has a case that runs", function()
    local bad, okrows = {}, {}
    for _, c in ipairs(cases) do
      local o = ref_of(c)
      if c.raises then
        if o.ok or (c.raises ~= true and not o.err:find(c.raises, 1, true)) then
          bad[#bad + 1] = case_name(c) .. ": expected an error containing '" .. tostring(c.raises) .. "', got "
            .. (o.ok and "none" or o.err)
        end
      elseif o.ok then
        okrows[c.row] = true
      end
    end
    -- a row none of whose cases runs is an error row and says so (raises = ...)
    local first_err = {}
    for _, c in ipairs(cases) do first_err[c.row] = first_err[c.row] or (not reference[c.index].ok and c) end
    for ri, r in ipairs(C.rows) do
      if not r.raises and not okrows[ri] and first_err[ri] then
        bad[#bad + 1] = string.format("row %d: none of its cases runs on the CPU; mark it raises = \"...\": %s: %s",
                                      ri, case_name(first_err[ri]), norm_error(reference[first_err[ri].index].err, first_err[ri]))
      end
    end
    assert(#bad == 0, table.concat(bad, "\n"))
  end)

  it("names the op of every error on the CPU once (the binding drops a core message's repeat)", function()
    local bad = {}
    for _, c in ipairs(cases) do
      local o = ref_of(c)
      if not o.ok and h.doubled_prefix(o.err) then bad[#bad + 1] = case_name(c) .. ": " .. norm_error(o.err, c) end
    end
    assert(#bad == 0, table.concat(bad, "\n"))
  end)

  it("has a row or an exemption for every op of the dispatcher", function()
    local covered = {}
    for _, c in ipairs(cases) do
      covered[c.op] = true
      if c.variant == "inplace" then covered[c.op .. "_"] = true end
    end
    local missing, stale = {}, {}
    local core = require "sk.core"
    local names = {}
    for k in pairs(core.functions) do names[k] = true end
    for k in pairs(core.methods) do names[k] = true end
    for k in pairs(names) do
      if not covered[k] and not C.exempt[k] then missing[#missing + 1] = k end
    end
    for k in pairs(C.exempt) do if covered[k] or not names[k] then stale[#stale + 1] = k end end
    table.sort(missing)
    table.sort(stale)
    local n, e = 0, 0
    for _ in pairs(names) do n = n + 1 end
    for _ in pairs(C.exempt) do e = e + 1 end
    io.stderr:write(string.format("conformance: %d ops, %d with rows, %d exempt; %d rows, %d cases\n",
                                  n, n - e - #missing, e, #C.rows, #cases))
    if ONLY then return end
    assert(#missing == 0, "ops without a conformance row: " .. table.concat(missing, ", "))
    assert(#stale == 0, "exemptions for ops that have rows or do not exist: " .. table.concat(stale, ", "))
  end)

  -- SK_CONFORMANCE_SKIP=plan,...: targets left pending in this run (see memcheck-spec in the Makefile)
  local skip = {}
  for name in (os.getenv("SK_CONFORMANCE_SKIP") or ""):gmatch("[^,]+") do skip[name] = true end
  for ti, target in ipairs(TARGETS) do
    local run_it = not skip[target.name] and (target.available == nil or target.available()) and it or pending
    run_it("gives the CPU's results and errors on target " .. target.name, function()
      local t0 = os.clock()
      if target.setup then target.setup() end
      local fails, pend = {}, {}
      local counts = { ran = 0, skipped = 0, errors = 0, pending = 0 }
      local ok, err = pcall(function()
        for _, c in ipairs(cases) do
          if c.index % 200 == 0 then collectgarbage() end
          if not h.sampled(c.index, ti) then -- SK_SPEC_SAMPLE: another target runs it
            counts.sampled_out = (counts.sampled_out or 0) + 1
            goto next_case
          end
          local can, why = true, nil
          if target.variants and not target.variants[c.variant] then can = false end
          -- gradients are values, of sk's own ops (a runtime op is a Lua-registered twin, without a formula)
          if c.variant == "backward" and (not target.values or target.call) then can = false end
          if can and target.supports then can, why = target.supports(c) end
          if not can then
            counts.skipped = counts.skipped + 1
          else
            local ref = ref_of(c)
            local got = run(c, target.device, target.move, ref.out_dtypes, target)
            counts.ran = counts.ran + 1
            if not ref.ok then counts.errors = counts.errors + 1 end
            if c.variant == "backward" and ref.ok and ref.results.n > 0 and is_tensor(ref.results[1]) then
              counts.grads = (counts.grads or 0) + 1
            end
            local d, kind = compare_outcomes(ref, got, target, c)
            d = d or (target.check and target.check(c, got))
            if kind then counts[kind] = (counts[kind] or 0) + 1 end
            if d then
              local line = string.format("%s on %s: %s", case_name(c), target.name, d)
              local why = c.pending and c.pending[target.name]
              if why then
                counts.pending = counts.pending + 1
                if not pend[why] then pend[#pend + 1], pend[why] = why, { n = 0, first = line } end
                pend[why].n = pend[why].n + 1
              else
                fails[#fails + 1] = line
              end
            end
          end
          ::next_case::
        end
      end)
      if target.teardown then target.teardown() end
      assert(ok, err)
      assert(ONLY or not target.values or target.call or (counts.grads or 0) > 0, "no gradient was compared")
      io.stderr:write(string.format("conformance %-10s %5d cases run (%d raise on the CPU: %d only in CPU kernels, "
                                    .. "%d with the target's context; %d raise only in the target's kernels), %d skipped, "
                                    .. "%d on overloads not re-declared, %d refused by the target, %d pending, %d failed; "
                                    .. "%d gradients compared;%s %.1f s\n",
                                    target.name, counts.ran, counts.errors, counts.kernel_only or 0, counts.context or 0,
                                    counts.target_only or 0, counts.skipped, counts.not_structured or 0, counts.refused or 0,
                                    counts.pending, #fails, counts.grads or 0,
                                    counts.sampled_out and string.format(" %d left to the other targets (SK_SPEC_SAMPLE=%d);",
                                                                         counts.sampled_out, h.sample) or "",
                                    os.clock() - t0))
      for _, why in ipairs(pend) do
        io.stderr:write(string.format("  pending (%d): %s\n    e.g. %s\n", pend[why].n, why, pend[why].first))
      end
      if #fails > 0 then
        local shown = {}
        local limit = SHOW_ALL and #fails or 60
        for i = 1, math.min(#fails, limit) do shown[i] = fails[i] end
        error(string.format("%d mismatches on %s:\n%s%s", #fails, target.name, table.concat(shown, "\n"),
                            #fails > limit and "\n... (SK_CONFORMANCE_ALL=1 shows all)" or ""), 0)
      end
    end)
  end

  it("lets conf_host serve add, mul and sum with its own out kernels", function()
    if ONLY then return end -- a filtered run may not reach them
    for op in pairs(HOST_KERNELS) do
      assert(host_calls[op] and host_calls[op] > 0, op .. ": the conf_host kernel never ran")
    end
  end)
end)
