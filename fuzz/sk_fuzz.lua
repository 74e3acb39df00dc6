-- fuzz/sk_fuzz.lua — random calls of every op and method of sk with bad and edge arguments.
-- Run under the sanitizer build (`make fuzz`); a finding is a process that dies (a sanitizer
-- report, a signal), an error value that is not a string, or a case that outlives its time.
--
--   lua5.4 fuzz/sk_fuzz.lua [--calls N] [--seed S] [--case K] [--from K] [--kind NAME] [--no-skip] [--verbose]
--   (or SK_FUZZ_CALLS, SK_FUZZ_SEED; SK_FUZZ_OPS, a Lua pattern, keeps only the ops it matches;
--   --kind runs one kind of case of the CASES table, such as "linalg grad")
--
-- Every case k draws from its own generator, math.randomseed(seed, k), so `--case k` replays
-- it alone (if it needs the cases before it, `--from k-100 --calls 101`). The supervisor
-- (the default mode) runs the cases in a worker process, and when the worker dies it records
-- the case, keeps the sanitizer's log in $SK_FUZZ_DIR/case-K.log and goes on with case k+1.
--
-- The generator is data: GEN maps each schema base type to argument generators (good, edge
-- and wrong values), TENSORS lists tensor makers, CASES the kinds of case with their weights;
-- one loop draws a case kind, describes the case in one line, checks it against SKIP and runs it.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path

-- {==== Known-bad classes, skipped until their fixes land (each names its finding) ====
-- A case whose description matches `pattern` (a Lua pattern) is not run; the summary counts them.
local SKIP = { -- empty: every finding of fuzz/FINDINGS.md is fixed; add { pattern = ..., finding = "Fn" } rows here
}
for i, s in ipairs(SKIP) do s.index = i end
-- }====

local argv = { ... }
local opt = { calls = tonumber(os.getenv("SK_FUZZ_CALLS")) or 100000, seed = tonumber(os.getenv("SK_FUZZ_SEED")) or 1 }
do
  local i = 1
  while argv[i] do
    local a = argv[i]
    if a == "--no-skip" then opt.noskip = true
    elseif a == "--verbose" then opt.verbose = true
    elseif a == "--worker" then opt.worker = true
    elseif a:match("^%-%-") and argv[i + 1] then
      opt[a:sub(3)] = tonumber(argv[i + 1]) or argv[i + 1]; i = i + 1
    else error("sk_fuzz: unknown argument '" .. a .. "'") end
    i = i + 1
  end
  if opt.case then opt.from, opt.calls = opt.case, 1 end
  opt.from = opt.from or 1
end
local DIR = os.getenv("SK_FUZZ_DIR") or "build-san/fuzz"
local LIMIT = tonumber(os.getenv("SK_FUZZ_CASE_SECONDS")) or 30 -- a case running longer is a hang

-- {==== Supervisor: runs the worker, records the cases that kill it ====
if not opt.worker then
  os.execute("mkdir -p '" .. DIR .. "'")
  local self_cmd = "lua5.4 " .. arg[0] .. " --worker --seed " .. opt.seed .. (opt.noskip and " --no-skip" or "")
    .. (opt.verbose and " --verbose" or "") .. (opt.kind and " --kind '" .. opt.kind .. "'" or "")
  local last = opt.from + opt.calls - 1
  local from, findings, ran, skipped, skipinfo = opt.from, {}, 0, 0, {}
  local t0 = os.time()
  while from <= last do
    local log = DIR .. "/worker.log"
    local trace = DIR .. "/trace"
    os.remove(trace)
    -- a watchdog kills the worker when its trace (rewritten at each case) is older than LIMIT s
    local cmd = string.format("SK_FUZZ_TRACE='%s' %s --from %d --calls %d > '%s' 2>&1 & p=$!; " ..
      "while kill -0 $p 2>/dev/null; do sleep 1; " ..
      "if [ $(( $(date +%%s) - $(stat -c %%Y '%s' 2>/dev/null || date +%%s) )) -gt %d ]; then " ..
      "echo 'fuzz: the case ran over %d s (a hang)' >> '%s'; kill -9 $p; fi; done; wait $p",
      trace, self_cmd, from, last - from + 1, log, trace, LIMIT, LIMIT, log)
    local ok = os.execute(cmd)
    local f = io.open(log)
    local out = f and f:read("a") or ""
    if f then f:close() end
    local done = out:match("\nworker: ran (%d+) skipped (%d+)")
    if ok and done then
      ran, skipped = ran + tonumber(done), skipped + tonumber(out:match("\nworker: ran %d+ skipped (%d+)"))
      for k, n in out:gmatch("\nskip (%S+) (%d+)") do skipinfo[k] = (skipinfo[k] or 0) + tonumber(n) end
      for line in out:gmatch("finding[^\n]*") do findings[#findings + 1] = { line = line } end
      break
    end
    -- the worker died: the trace names the case it was in
    local tf = io.open(trace)
    local t = tf and tf:read("a") or ""
    if tf then tf:close() end
    local k, desc = t:match("^case (%d+): ([^\n]*)")
    k = tonumber(k) or from
    for sk_, n in t:gmatch("\nskip (%S+) (%d+)") do skipinfo[sk_] = (skipinfo[sk_] or 0) + tonumber(n) end
    ran = ran + (k - from + 1) - (tonumber(t:match("\nskipped (%d+)")) or 0)
    skipped = skipped + (tonumber(t:match("\nskipped (%d+)")) or 0)
    local summary = out:match("SUMMARY: [^\n]*") or out:match("runtime error: [^\n]*") or out:match("fuzz: the case ran over[^\n]*")
      or out:match("ERROR: [^\n]*") or ("worker exited: " .. (out:sub(-200):gsub("\n", " | ")))
    local keep = DIR .. "/case-" .. k .. ".log"
    os.rename(log, keep)
    findings[#findings + 1] = { case = k, desc = desc or "?", summary = summary, log = keep }
    print(string.format("finding: case %d: %s\n  %s\n  log %s; replay: lua5.4 %s --seed %d --case %d",
      k, desc or "?", summary, keep, arg[0], opt.seed, k))
    io.stdout:flush()
    from = k + 1
  end
  local classes = {}
  for _, f in ipairs(findings) do classes[f.summary or f.line] = true end
  local nclass = 0
  for _ in pairs(classes) do nclass = nclass + 1 end
  for _, s in ipairs(SKIP) do
    if not opt.noskip then
      print(string.format("skipped %d case(s) matching '%s' (%s)", skipinfo[tostring(s.index)] or 0,
        s.pattern, s.finding))
    end
  end
  print(string.format("fuzz: %d calls, seed %d, %d skipped (%d filters), %d findings (%d distinct), %ds",
    ran, opt.seed, skipped, opt.noskip and 0 or #SKIP, #findings, nclass, os.time() - t0))
  os.exit(#findings == 0 and 0 or 1)
end
-- }====

local sk = require "sk"
local schema = require "sk.schema"
local lyaml = require "lyaml"
local R = math.random
local function pick(t) return t[R(#t)] end
local function chance(p) return R() < p end

-- the host-memory backend every case may use, with the CPU fallback for the ops it lacks
sk.backends.register("fuzzdev")
local devlib = sk.library("fuzzdev_fallback")
devlib:fallback("fuzzdev", sk.cpu_fallback)

-- {==== Values ====
local DTYPES = { "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" }
local BAD_DTYPES = { "floaty", "", "Float", "complex64", "int128" }
local mi, ma = math.mininteger, math.maxinteger
-- near ±2^31, ±2^32, ±2^62 and the extremes: as sizes they allocate nothing (meta) or overflow
local HUGE_INTS = { 2^31 - 1, 2^31, 2^31 + 1, 2^32 - 1, 2^32, 2^32 + 1, -2^31, -2^31 - 1, -2^32, 2^62, 2^62 + 1,
                    -2^62, ma, mi, ma - 1, mi + 1, 2^53 + 1 }
for i, v in ipairs(HUGE_INTS) do HUGE_INTS[i] = math.tointeger(v) or v end
-- on a device with data, huge sizes that could be allocated (2^31 elements) stay out: only ones
-- that overflow or cannot be allocated (2^40 elements and up) or are negative
local HUGE_REAL = { 2^40, 2^48, 2^62, 2^62 + 1, -2^62, ma, mi, ma - 1, mi + 1, -1, -2, -2^31 }
for i, v in ipairs(HUGE_REAL) do HUGE_REAL[i] = math.tointeger(v) or v end
local SMALL_INTS = { 0, 1, 2, 3, -1, -2, -3, 4, 5 }
local FLOATS = { 0.0, -0.0, 1.5, -2.5, 0 / 0, 1 / 0, -1 / 0, 1e308, -1e308, 5e-324, 65504.0, 65520.0, 3.4e38,
                 2^63, -2^63, 2^64, 1e-8, 0.5 }
local STRINGS = { "", "floor", "trunc", "none", "mean", "sum", "x", ("x"):rep(300), "cpu", "meta", "fuzzdev",
                  "cuda", "cuda:1", "cpu:-1", "meta:99999999999", "\0", "%s%n",
                  -- the reductions' modes (scatter_reduce, segment_reduce, quantile)
                  "prod", "amax", "amin", "max", "min", "linear", "lower", "higher", "midpoint", "nearest" }
local DEVICES = { "cpu", "meta", "fuzzdev", "cuda", "fuzzdev:1", "cpu:2147483648", "npu", "meta:-1", "" }
-- in a meta case (huge sizes allowed) a Device argument names no device with data: 2^31 real elements are slow, not a bug
local META_DEVICES = { "meta", "cuda", "cpu:2147483648", "npu", "meta:-1", "" }

local ctx -- per case: ctx.real (sizes may allocate), ctx.dev, ctx.lib, ctx.tensors, ctx.parts (description)
local function a_device() return pick(ctx.real and DEVICES or META_DEVICES) end

local function int_edge() return ctx.real and pick(HUGE_REAL) or pick(HUGE_INTS) end
local function an_int()
  local r = R()
  if r < 0.75 then return pick(SMALL_INTS) elseif r < 0.9 then return int_edge() else return R(-64, 64) end
end
local function a_float() return chance(0.6) and pick(FLOATS) or (R() - 0.5) * 10 end
local function note(s) ctx.parts[#ctx.parts + 1] = s end

-- a userdata that is not a tensor, given the tensor metatable (the binding must not trust it)
local TENSOR_MT = debug.getmetatable(sk.zeros(1))
local function forged()
  local u = io.tmpfile()
  ctx.forged = ctx.forged or {}
  ctx.forged[#ctx.forged + 1] = { u, debug.getmetatable(u) }
  debug.setmetatable(u, TENSOR_MT)
  return u
end

-- nested tables of numbers for sk.tensor: regular, ragged, with holes, metatables, cycles
local function nested(depth, n)
  local t = {}
  for i = 1, n do
    if depth > 1 then t[i] = nested(depth - 1, n) else t[i] = chance(0.9) and an_int() * 1.0 or a_float() end
  end
  return t
end
local NESTED = {
  { "regular", function() return nested(R(1, 3), R(0, 3)) end },
  { "scalar", function() return a_float() end },
  { "bools", function() return { true, false, true } end },
  { "ints", function() return { an_int(), an_int(), int_edge() } end },
  { "ragged", function() return { 1, { 2 } } end },
  { "ragged2", function() return { { 1, 2 }, { 3 } } end },
  { "ragged3", function() return { { 1 }, 2 } end },
  { "holes", function() return { 1, nil, 3 } end },
  { "mixed", function() return { 1, true, "x" } end },
  { "empty", function() return {} end },
  { "emptyrows", function() return { {}, {} } end },
  { "deep", function() local t = 1; for _ = 1, R(20, 200) do t = { t } end return t end },
  { "cycle", function() local t = { 1, 2 }; t[3] = t; return t end },
  { "selfcycle", function() local t = {}; t[1] = t; return t end },
  { "metatable", function()
      return setmetatable({}, { __len = function() return 3 end, __index = function(_, i) return i * 1.5 end })
    end },
  { "meta_gc", function()
      return setmetatable({ 1, 2 }, { __index = function() collectgarbage(); return 7 end,
                                      __len = function() return 4 end })
    end },
  { "meta_err", function() return setmetatable({ 1 }, { __len = function() error("len fails") end }) end },
  { "hugelen", function() return setmetatable({}, { __len = function() return int_edge() end }) end },
  { "tensors", function() return { sk.zeros(2), sk.ones(2) } end },
}
-- }====

-- {==== Tensors ====
local function sizes(max_dim)
  local s = {}
  for i = 1, R(0, max_dim or 3) do s[i] = R(0, 3) == 0 and (chance(0.3) and 0 or 1) or R(1, 4) end
  return s
end
local a_grad_tensor
local function base_tensor(dt, dev, shape)
  local ok, t = pcall(sk.empty, shape or sizes(), { dtype = dt, device = dev })
  if not ok then t = sk.zeros({ 2, 3 }) end
  if dev ~= "meta" then pcall(function() t:copy_(sk.randn(t:shape()):mul(3)) end) end
  return t
end
-- a tensor in autograd's graph: the dtype becomes float32 when it is not floating
local FLOATING = { float16 = true, bfloat16 = true, float32 = true, float64 = true }
a_grad_tensor = function(dt, dev, how)
  local t = base_tensor(FLOATING[dt] and dt or "float32", dev, how == "view" and { 3, 4 } or nil)
  t:requires_grad_()
  if how == "leaf" then return t end
  local y = t * 1
  if how == "view" then return y[{ { 0, 3, 2 } }] end
  return y
end
-- tensor makers: name, fn(dtype, device) -> tensor
local TENSORS = {
  { "contig", function(dt, dev) return base_tensor(dt, dev) end },
  { "zerodim", function(dt, dev) return base_tensor(dt, dev, {}) end },
  { "empty", function(dt, dev) return base_tensor(dt, dev, { R(0, 3), 0 }) end },
  { "empty1", function(dt, dev) return base_tensor(dt, dev, { 0 }) end },
  { "transposed", function(dt, dev) return base_tensor(dt, dev, { R(1, 4), R(1, 4) }):t() end },
  { "stepped", function(dt, dev) return base_tensor(dt, dev, { 3, 6 })[{ {}, { 0, 6, 2 } }] end },
  { "narrowed", function(dt, dev) return base_tensor(dt, dev, { 5 })[{ { 1, 4 } }] end },
  { "expanded", function(dt, dev) return base_tensor(dt, dev, { 1, 3 }):expand(4, 3) end },
  { "expanded0", function(dt, dev) return base_tensor(dt, dev, {}):expand(R(0, 5)) end },
  { "permuted", function(dt, dev) return base_tensor(dt, dev, { 2, 3, 4 }):permute(2, 0, 1) end },
  { "meta", function(dt) return base_tensor(dt, "meta") end },
  { "fuzzdev", function(dt) return base_tensor(dt, "fuzzdev") end },
  { "big", function(dt, dev) return base_tensor(dt, dev, { 64, 33 }) end },
  { "alias", function() return ctx.tensors[1] or sk.zeros(3) end },
  { "aliasview", function()
      local t = ctx.tensors[1]
      if not t then return sk.zeros(3) end
      local ok, v = pcall(function() return t:dim() > 0 and t[{ { 0, nil, 1 } }] or t:view(1) end)
      return ok and v or t
    end },
  { "aliasT", function() local t = ctx.tensors[1]; return t and t:dim() == 2 and t:t() or t or sk.zeros(3) end },
  { "closed", function(dt, dev) local t = base_tensor(dt, dev); t:close(); return t end },
  -- autograd: a leaf that requires grad, a non-leaf with a history, a view of one (floating dtypes)
  { "gradleaf", function(dt, dev) return a_grad_tensor(dt, dev, "leaf") end },
  { "gradnode", function(dt, dev) return a_grad_tensor(dt, dev, "node") end },
  { "gradview", function(dt, dev) return a_grad_tensor(dt, dev, "view") end },
}
local TENSOR_WEIGHTS = { contig = 6, zerodim = 2, expanded = 2, transposed = 2, alias = 2, aliasview = 1 }

local function a_tensor(role)
  local maker = pick(TENSORS)
  if TENSOR_WEIGHTS[maker[1]] == nil and chance(0.5) then maker = TENSORS[1] end
  local dt = chance(0.15) and pick(DTYPES) or ctx.dtype
  local dev = chance(0.1) and pick({ "cpu", "meta", "fuzzdev" }) or ctx.dev
  local ok, t = pcall(maker[2], dt, dev)
  if not ok then t = sk.zeros(2) end
  note(role .. "=" .. maker[1] .. ":" .. dt .. "@" .. dev)
  ctx.tensors[#ctx.tensors + 1] = t
  return t
end
-- }====

-- {==== Arguments per schema type: GEN[base](ty, name) -> value, and wrong values for any type ====
local WRONG = {
  { "nil", function() return nil end }, { "string", function() return "str" end },
  { "table", function() return {} end }, { "boolean", function() return true end },
  { "float", function() return 1.5 end }, { "forged", function() return forged() end },
  { "function", function() return print end }, { "thread", function() return coroutine.create(print) end },
  { "raising_table", function() return setmetatable({}, { __index = function() error("index fails") end }) end },
}
local function wrong(role)
  local w = pick(WRONG)
  note((role or "arg") .. "=wrong:" .. w[1])
  return w[2]()
end

local function dim_value()
  if chance(0.7) then return R(-3, 3) end
  return pick(HUGE_INTS)
end
local ARGNAME_INT = { -- int arguments by name: dims are small or edge, sizes follow ctx.real
  dim = dim_value, dim0 = dim_value, dim1 = dim_value, start_dim = dim_value, end_dim = dim_value,
  -- ctc_loss's lengths are summed and compared: small, or at the int64 limits
  input_lengths = dim_value, target_lengths = dim_value,
}
local GEN = {
  Tensor = function() return a_tensor("t") end,
  int = function(_, name) if ARGNAME_INT[name] then return ARGNAME_INT[name]() end return an_int() end,
  float = a_float,
  bool = function() return chance(0.9) and chance(0.5) or pick { 0, 1, "true" } end,
  str = function() return pick(STRINGS) end,
  Scalar = function()
    local r = R()
    if r < 0.4 then return an_int() elseif r < 0.8 then return a_float() elseif r < 0.9 then return chance(0.5)
    else return base_tensor(pick(DTYPES), ctx.dev, {}) end
  end,
  ScalarType = function() return chance(0.9) and pick(DTYPES) or pick(BAD_DTYPES) end,
  Layout = function() return pick { "strided", "sparse", 1 } end,
  Device = function() return a_device() end,
  MemoryFormat = function() return pick { "contiguous_format", "preserve_format", "channels_last", 0 } end,
  Generator = function() return nil end,
  Dimname = function() return "N" end,
}
GEN.SymInt = GEN.int

-- a list of `ty`'s elements: usual lengths, then holes, metatables, huge lengths
local function a_list(ty, name)
  -- a fixed size (int[2]) is honoured up to 70 elements: the list is built here, in Lua
  local r, n = R(), math.min(ty.list.size or R(0, 4), 70)
  local function elem()
    if ty.elem_optional and chance(0.2) then return false end
    return GEN[ty.base](ty, name)
  end
  if r < 0.7 then
    local t = {}
    for i = 1, n do t[i] = elem() end
    if ty.base ~= "Tensor" and n > 0 and chance(0.3) then t[R(n)] = int_edge() end
    return t
  elseif r < 0.75 then local t = { elem(), nil, elem() }; note("list=holes"); return t
  elseif r < 0.8 then note("list=meta_len")
    return setmetatable({}, { __len = function() return int_edge() end, __index = function() return elem() end })
  elseif r < 0.85 then note("list=meta_gc")
    return setmetatable({ elem() }, { __len = function() collectgarbage(); return 2 end,
                                      __index = function() collectgarbage(); return elem() end })
  elseif r < 0.9 then note("list=long")
    local t = {}
    for i = 1, R(30, 200) do t[i] = ty.base == "Tensor" and (ctx.tensors[1] or sk.zeros(1)) or 1 end
    return t
  elseif r < 0.95 then note("list=scalar"); return elem()
  else note("list=mixed"); return { elem(), "x", {} } end
end

local function an_arg(a)
  local ty = a.type
  if ty.optional and chance(0.25) then return nil end
  if chance(0.04) then return wrong(a.name) end
  if ty.list then return a_list(ty, a.name) end
  local v = GEN[ty.base](ty, a.name)
  if ty.base ~= "Tensor" and type(v) ~= "userdata" then note(a.name .. "=" .. tostring(v):sub(1, 20)) end
  return v
end
-- }====

-- {==== Options tables with metamethods, and the out argument ====
local function hostile_options(opts)
  local what = pick { "gc", "error", "close", "value" }
  note("options=meta_" .. what)
  local function act()
    if what == "gc" then collectgarbage()
    elseif what == "error" then error("options metamethod raised")
    elseif what == "close" and ctx.lib then pcall(ctx.lib.close, ctx.lib) end
  end
  return setmetatable({}, {
    __index = function(_, k) act(); return opts[k] end,
    __pairs = function() act(); return next, opts, nil end,
    __len = function() act(); return #opts end,
  })
end

local function an_out(rec_out)
  local r = R()
  if r < 0.35 then note("out=empty0"); return sk.empty({ 0 }, { dtype = ctx.dtype, device = ctx.dev }) end
  if r < 0.55 then note("out=input"); return ctx.tensors[1] or sk.zeros(1) end
  if r < 0.7 then note("out=view_of_input")
    local t = ctx.tensors[1]
    if t and t:dim() > 0 then local ok, v = pcall(function() return t[{ { 0, nil, 1 } }] end); if ok then return v end end
    return t or sk.zeros(1)
  end
  if r < 0.8 then note("out=expanded"); return sk.zeros({ 1, 3 }, { dtype = ctx.dtype }):expand(4, 3) end
  if r < 0.85 then note("out=transposed_input")
    local t = ctx.tensors[1]
    return t and t:dim() == 2 and t:t() or sk.zeros(2, 2)
  end
  if r < 0.9 then note("out=wrongshape"); return sk.zeros({ 5 }, { dtype = ctx.dtype }) end
  if r < 0.95 and rec_out > 1 then note("out=same_twice"); return "same" end
  return a_tensor("out")
end
-- }====

-- {==== Op calls from the schemas ====
-- SK_FUZZ_OPS, a Lua pattern, keeps the ops whose names match it (`SK_FUZZ_OPS=linalg`).
local OPS, ONLY_OPS = {}, os.getenv("SK_FUZZ_OPS")
do
  local f = assert(io.open("native_functions.yaml"))
  for _, e in ipairs(lyaml.load(f:read("a"))) do
    local rec = assert(schema.parse(e.func))
    local variants = e.variants or "function"
    if not ONLY_OPS or rec.name:match(ONLY_OPS) then
      OPS[#OPS + 1] = { rec = rec, fn = variants:find("function") ~= nil, method = variants:find("method") ~= nil,
                        qname = "aten::" .. rec.name .. (rec.overload ~= "" and "." .. rec.overload or "") }
    end
  end
  f:close()
end

-- builds the arguments of `rec`; returns a function that calls it one of the ways the Lua API offers
local function prepare_call(rec, fn_name, how, func)
  local pos, kw, outs = {}, {}, {}
  local self_val
  -- a factory (no tensor argument) allocates on the CPU unless told otherwise: its sizes are real
  local factory = true
  for _, a in ipairs(rec.args) do if a.type.base == "Tensor" then factory = false end end
  if factory then ctx.real = true end
  for _, a in ipairs(rec.args) do
    if a.is_out then
      outs[#outs + 1] = a
    else
      local v = an_arg(a)
      if a.name == "self" and not a.kwarg_only then self_val = v end
      if a.kwarg_only or (a.default and chance(0.3)) then kw[a.name] = v else pos[#pos + 1] = v end
    end
  end
  if #outs > 0 then
    local vals, first = {}, nil
    for i, a in ipairs(outs) do
      local o = an_out(#outs)
      if o == "same" then o = first or sk.empty({ 0 }) end
      first = first or o
      vals[i] = o
      kw[a.name] = o
    end
    if chance(0.5) then kw = { out = #vals == 1 and vals[1] or vals } end
  end
  if chance(0.03) then pos[#pos + 1] = wrong("extra_arg") end
  local opts = kw
  if next(kw) == nil and chance(0.5) then opts = nil end
  if opts and chance(0.05) then opts = hostile_options(opts) end
  if opts then pos[#pos + 1] = opts end
  if how == "method" then
    if type(self_val) ~= "userdata" then self_val = a_tensor("self") end
    table.remove(pos, 1)
    return function() local m = self_val[fn_name]; return m(self_val, table.unpack(pos, 1, #pos)) end
  end
  return function() return func(table.unpack(pos, 1, #pos)) end
end
local function call_schema(...) return prepare_call(...)() end

local function case_op()
  local op = pick(OPS)
  local name = op.rec.name
  local hows = {}
  if op.fn and sk[name] then hows[#hows + 1] = "function" end
  if op.method then hows[#hows + 1] = "method" end
  hows[#hows + 1] = "call"
  local how = pick(hows)
  local func = how == "call" and function(...) return sk.call(op.qname, ...) end or sk[name]
  return "op " .. op.qname .. " " .. how, prepare_call(op.rec, name, how, func)
end
-- }====

-- {==== Operators, indexing, construction, tensor methods ====
local function an_operand()
  local r = R()
  if r < 0.6 then return a_tensor("x") elseif r < 0.85 then return chance(0.5) and an_int() or a_float() end
  return wrong()
end
local BINOPS = {
  ["+"] = function(a, b) return a + b end, ["-"] = function(a, b) return a - b end,
  ["*"] = function(a, b) return a * b end, ["/"] = function(a, b) return a / b end,
  ["%"] = function(a, b) return a % b end, ["^"] = function(a, b) return a ^ b end,
  ["//"] = function(a, b) return a // b end, ["&"] = function(a, b) return a & b end,
  ["|"] = function(a, b) return a | b end, ["~"] = function(a, b) return a ~ b end,
  ["<<"] = function(a, b) return a << b end, [">>"] = function(a, b) return a >> b end,
  ["u-"] = function(a) return -a end, ["u~"] = function(a) return ~a end,
  ["=="] = function(a, b) return a == b end, ["<"] = function(a, b) return a < b end,
  ["#"] = function(a) return #a end, [".."] = function(a, b) return a .. b end,
}
local BINOP_NAMES = {}
for k in pairs(BINOPS) do BINOP_NAMES[#BINOP_NAMES + 1] = k end
table.sort(BINOP_NAMES)
local function case_operator()
  local name = pick(BINOP_NAMES)
  local a = a_tensor("a")
  local b = an_operand()
  if chance(0.3) then a, b = b, a end
  return "operator " .. name, function() return BINOPS[name](a, b) end
end

local function an_index()
  local r = R()
  if r < 0.3 then return an_int() end
  if r < 0.55 then
    local t = {}
    for i = 1, R(0, 4) do
      local e = R()
      t[i] = e < 0.35 and an_int() or e < 0.5 and {} or e < 0.58 and sk.newaxis or e < 0.66 and "..."
        or e < 0.85 and { an_int(), an_int(), chance(0.7) and R(1, 3) or an_int() } or a_tensor("idx")
    end
    return t
  end
  if r < 0.7 then return sk.tensor({ true, false, true }) end
  if r < 0.8 then return sk.tensor({ an_int(), an_int() }) end
  if r < 0.9 then return a_tensor("index") end
  if r < 0.93 then return sk.newaxis end
  return wrong()
end
local function case_index()
  local t, k = a_tensor("t"), an_index()
  if chance(0.5) then
    local v = an_operand()
    return "index set", function() t[k] = v end
  end
  return "index get", function() return t[k] end
end

local function case_construct()
  local maker = pick(NESTED)
  local data = maker[2]()
  local o = chance(0.5) and { dtype = chance(0.9) and pick(DTYPES) or pick(BAD_DTYPES),
                              device = chance(0.7) and ctx.dev or a_device() } or nil
  if o and chance(0.1) then o = hostile_options(o) end
  return "tensor " .. maker[1], function() return sk.tensor(data, o) end
end

-- the tensor methods that are not ops, with their argument generators
local METHODS = {
  { "tostring", function(t) return tostring(t) end },
  { "totable", function(t) return t:totable() end },
  { "item", function(t) return t:item() end },
  { "shape", function(t) return t:shape() end },
  { "size", function(t) return t:size(dim_value()) end },
  { "stride", function(t) return t:stride(chance(0.5) and dim_value() or nil) end },
  { "dim", function(t) return t:dim(), t:numel(), t:dtype(), t:device(), t:storage_offset(), t:version() end },
  { "is_contiguous", function(t) return t:is_contiguous() end },
  { "shares_storage", function(t) return t:shares_storage(an_operand()) end },
  { "close", function(t) t:close(); return t:dim(), tostring(t) end },
  { "view", function(t) local s = sizes(4); if chance(0.3) then s[#s + 1] = int_edge() end return t:view(s) end },
  { "view_ints", function(t) return t:view(an_int(), int_edge()) end },
  { "expand", function(t) local s = sizes(4); if chance(0.4) then s[#s + 1] = int_edge() end return t:expand(s) end },
  { "reshape", function(t) return t:reshape(an_int(), an_int()) end },
  { "to", function(t) return t:to(chance(0.5) and pick(DTYPES) or pick(DEVICES)) end },
  { "to_opts", function(t) return t:to(pick(DEVICES), { dtype = pick(DTYPES) }) end },
  { "cpu", function(t) return t:cpu():totable() end },
  { "narrow", function(t) return t:narrow(dim_value(), an_int(), an_int()) end },
  { "select", function(t) return t:select(dim_value(), int_edge()) end },
  { "as_strided", function(t)
      return sk.as_strided(t, sizes(3), { an_int(), int_edge(), an_int() }, chance(0.5) and int_edge() or 0)
    end },
  { "method_string", function(t) return t[pick { "nope", "__index", "close", "" }] end },
  { "call_method_on_number", function(t) return sk.Tensor.add(1, t) end },
  { "tobytes", function(t) return t:tobytes(), t:data_ptr(), t:nbytes() end },
  { "view_dtype", function(t) return t:view(pick(DTYPES)):tobytes() end },
  { "dlpack", function(t) local u = sk.from_dlpack(t:to_dlpack()); return u:tobytes() end },
  { "frombuffer", function(t)
      local s = t:tobytes()
      return sk.frombuffer(chance(0.8) and s or an_int(), { dtype = pick(DTYPES), offset = chance(0.5) and an_int() or nil,
                                                           count = chance(0.5) and an_int() or nil })
    end },
}
local function case_method()
  local m = pick(METHODS)
  local t = a_tensor("t")
  return "method " .. m[1], function() return m[2](t) end
end

-- autograd: a small random graph, then backward or autograd.grad with good and bad options,
-- sometimes after an in-place write to a saved value, with hooks that misbehave
local UNARY = { "exp", "tanh", "sigmoid", "relu", "sin", "abs", "sqrt", "log", "neg", "square", "t", "clone" }
local function case_autograd()
  local x = a_grad_tensor(ctx.dtype, ctx.dev, pick { "leaf", "node", "view" })
  local w = a_tensor("w")
  local ops = {}
  for i = 1, R(1, 4) do ops[i] = pick(UNARY) end
  local mode = pick { "backward", "grad", "grad_create", "twice", "inplace", "hook", "badgrad", "inputs", "retain" }
  note("x=" .. x:dtype() .. " ops=" .. table.concat(ops, ",") .. " mode=" .. mode)
  return "autograd " .. mode, function()
    local y = x
    for _, op in ipairs(ops) do y = y[op](y) end
    if chance(0.5) then y = y * w end
    if mode == "hook" then
      y:register_hook(pick { function() error("hook failed") end, function() return 1 end,
        function() return sk.ones(7) end, function(g) return g * 2 end, function() return sk.ones(1):close() end })
    end
    if mode == "inplace" then pcall(function() y:add_(1) end) end
    local l = chance(0.7) and y:sum() or y
    if mode == "badgrad" then return l:backward(pick { sk.ones(5), sk.ones(l:shape(), { dtype = "int64" }), 3, {}, w }) end
    if mode == "grad" or mode == "grad_create" then
      local gs = sk.autograd.grad(l, pick { { x }, { x, w }, { w }, x, {}, { 1 } },
        { create_graph = mode == "grad_create", allow_unused = chance(0.5), retain_graph = chance(0.5) })
      if mode == "grad_create" and gs[1] then gs[1]:sum():backward() end
      return
    end
    if mode == "inputs" then return l:backward({ inputs = pick { { x }, {}, { w }, x } }) end
    l:backward({ retain_graph = mode == "retain" or chance(0.2), create_graph = chance(0.2) })
    if mode == "twice" or mode == "retain" then l:backward() end
  end
end

-- hooks: one to three hooks on a leaf, a non-leaf or a view and on a result of it, each drawn
-- from hooks that return nil, a good gradient, one of another size, dtype or device, a
-- non-tensor or a closed tensor, raise, close their tensor, hold their own tensor (a cycle
-- through the collector), register another hook or backward again from inside; the tensors
-- are sometimes dropped and collected before backward, or the graph dropped with no backward
-- (sk has no hook handles: a hook goes with its tensor or node)
local function case_hooks()
  local how = pick { "leaf", "node", "view" }
  local x = a_grad_tensor(ctx.dtype, ctx.dev, how)
  local names = {}
  local HOOKS = {
    none = function() return function() end end,
    double = function() return function(g) return g * 2 end end,
    size = function() return function() return sk.ones(7) end end,
    dtype = function() return function(g) return g:to(g:dtype() == "float64" and "float32" or "float64") end end,
    device = function() return function(g) return g:to(g:device() == "meta" and "cpu" or "meta") end end,
    number = function() return function() return 1 end end,
    closed = function() return function() local c = sk.ones(1); c:close(); return c end end,
    raise = function() return function() error("hook failed") end end,
    self = function(t) return function(g) return g + t * 0 end end,
    close = function(t) return function() t:close() end end,
    nested = function(t) return function() t:register_hook(function(g) return g end) end end,
    reenter = function(t) return function() t:sum():backward() end end,
  }
  local KEYS = {}
  for k in pairs(HOOKS) do KEYS[#KEYS + 1] = k end
  table.sort(KEYS)
  local plan = {}
  for i = 1, R(1, 3) do plan[i] = { on = pick { "x", "y" }, hook = pick(KEYS) }; names[i] = plan[i].on .. ":" .. plan[i].hook end
  local ending = pick { "backward", "grad", "drop", "collect" }
  note("x=" .. how .. " hooks=" .. table.concat(names, ",") .. " then=" .. ending)
  return "hooks " .. ending, function()
    local y = x:exp() * 1
    for _, h in ipairs(plan) do
      local t = h.on == "x" and x or y
      t:register_hook(HOOKS[h.hook](t))
    end
    local l = y:sum()
    if ending == "drop" then x, y, l = nil, nil, nil; collectgarbage(); return sk.ones(1) + 1 end
    if ending == "collect" then x, y = nil, nil; collectgarbage(); collectgarbage() end
    if ending == "grad" then return sk.autograd.grad(l, { y }, { allow_unused = true }) end
    l:backward()
  end
end

-- custom Functions (sk.autograd.Function and lib:autograd): outputs that get no gradient
-- (marked non-differentiable, integer), set_materialize_grads(false), save_for_backward of
-- outputs, inputs, nil and non-tensors, a ctx holding its output, mark_dirty; backward
-- returning good, wrong-count, wrong-size or non-tensor gradients, or raising; then backward
-- through one output, both, or none (the graph dropped and collected)
local fuzzlib
local function case_custom_fn()
  local x = a_grad_tensor(ctx.dtype, ctx.dev, pick { "leaf", "node", "view" })
  local o = {
    nondiff = chance(0.5), materialize = chance(0.7), save = pick { "out", "in", "both", "nil", "number", "none" },
    keep = chance(0.3), dirty = chance(0.1), ret = pick { "good", "good", "good", "count", "size", "number", "raise" },
    ending = pick { "first", "both", "drop", "twice" }, lib = chance(0.2),
  }
  local parts = {}
  for k, v in pairs(o) do parts[#parts + 1] = k .. "=" .. tostring(v) end
  table.sort(parts)
  note(table.concat(parts, " "))
  local function backward(ctx_, g, gi)
    if o.ret == "raise" then error("backward failed") end
    if o.ret == "count" then return g, g end
    if o.ret == "size" then return sk.ones(7) end
    if o.ret == "number" then return 2 end
    for _, t in ipairs(ctx_.saved_tensors or {}) do local _ = t end
    return gi and g * 2 + gi:sum() * 0 or (g and g * 2)
  end
  return "custom fn " .. o.ending, function()
    local y, i
    if o.lib then
      if not fuzzlib then
        fuzzlib = sk.library("fuzzag")
        fuzzlib:define("twice_argmax(Tensor x) -> (Tensor, Tensor)")
        fuzzlib:impl("twice_argmax", "CompositeExplicitAutograd", function(a) return a * 2, a:argmax() end)
        fuzzlib:autograd("twice_argmax", { backward = function(c, g, gi) return backward(c, g, gi) end })
      end
      y, i = sk.ops.fuzzag.twice_argmax(x)
    else
      local F = sk.autograd.Function {
        forward = function(c, a)
          local r = o.dirty and a or a * 2
          if o.dirty then pcall(function() r:mul_(2) end); c:mark_dirty(a) end
          local idx = a:argmax()
          if o.nondiff then c:mark_non_differentiable(idx) end
          if not o.materialize then c:set_materialize_grads(false) end
          if o.save == "out" then c:save_for_backward(r)
          elseif o.save == "in" then c:save_for_backward(a)
          elseif o.save == "both" then c:save_for_backward(a, r, idx)
          elseif o.save == "nil" then c:save_for_backward(nil, r)
          elseif o.save == "number" then c:save_for_backward(3) end
          if o.keep then c.out = r end
          return r, idx
        end,
        backward = backward,
      }
      y, i = F(x)
    end
    if o.ending == "drop" then y, i = nil, nil; collectgarbage(); return sk.ones(1) + 1 end
    local l = o.ending == "both" and (y:sum() + i:sum()) or y:sum()
    l:backward({ retain_graph = o.ending == "twice" })
    if o.ending == "twice" then l:backward() end
  end
end

-- sk.linalg's backward formulas: one op on a (batch of) small matrices that require grad (square,
-- wide, tall, empty; random values, so singular ones too), then backward, or grad with
-- create_graph and a second backward through it
local LINALG_GRAD = {
  inv = function(a) return { sk.linalg.inv(a) } end,
  det = function(a) return { sk.linalg.det(a) } end,
  slogdet = function(a) return { sk.linalg.slogdet(a) } end,
  solve = function(a, b) return { sk.linalg.solve(a, b, { left = chance(0.7) }) } end,
  solve_triangular = function(a, b)
    return { sk.linalg.solve_triangular(a, b, { upper = chance(0.5), left = chance(0.5), unitriangular = chance(0.5) }) }
  end,
  lstsq = function(a, b) return { (sk.linalg.lstsq(a, b)) } end,
  cholesky = function(a) return { sk.linalg.cholesky(a:matmul(a:transpose(-2, -1)), { upper = chance(0.5) }) } end,
  lu = function(a) return { sk.linalg.lu(a, { pivot = chance(0.8) }) } end,
  lu_factor = function(a) return { sk.linalg.lu_factor(a) } end,
  lu_solve = function(a, b)
    local LU, piv = sk.linalg.lu_factor(a)
    return { sk.linalg.lu_solve(LU, piv, b, { left = chance(0.5), adjoint = chance(0.5) }) }
  end,
  qr = function(a) return { sk.linalg.qr(a, pick { "reduced", "complete", "r" }) } end,
  eigh = function(a) return { sk.linalg.eigh(a) } end,
  eigvalsh = function(a) return { sk.linalg.eigvalsh(a) } end,
  eig = function(a) return { sk.linalg.eig(a) } end,
  eigvals = function(a) return { sk.linalg.eigvals(a) } end,
  svd = function(a) return { sk.linalg.svd(a, { full_matrices = chance(0.5) }) } end,
  svdvals = function(a) return { sk.linalg.svdvals(a) } end,
  pinv = function(a) return { sk.linalg.pinv(a) } end,
  matrix_exp = function(a) return { sk.linalg.matrix_exp(a) } end,
  householder_product = function(a) -- tau from a's first row: batch + [k], k <= n
    local t = a:select(-2, 0)
    return { sk.linalg.householder_product(a, t:narrow(-1, 0, math.min(t:shape()[t:dim()], R(0, 4))) * 0.5) }
  end,
}
local LINALG_GRAD_NAMES = {}
for k in pairs(LINALG_GRAD) do LINALG_GRAD_NAMES[#LINALG_GRAD_NAMES + 1] = k end
table.sort(LINALG_GRAD_NAMES)
local function case_linalg_grad()
  local name = pick(LINALG_GRAD_NAMES)
  local dt = pick { "float32", "float64", "float64", ctx.dtype }
  local m, n = R(0, 4), R(0, 4)
  if chance(0.6) then n = m end
  local batch = {}
  for i = 1, R(0, 2) do batch[i] = R(0, 2) end
  local function mat(r, c)
    local sh = {}
    for i, v in ipairs(batch) do sh[i] = v end
    sh[#sh + 1], sh[#sh + 2] = r, c
    if chance(0.1) then sh = sizes() end
    return base_tensor(FLOATING[dt] and dt or "float32", ctx.dev, sh)
  end
  local a = mat(m, n):requires_grad_()
  local b = chance(0.2) and base_tensor(dt, ctx.dev, { m }) or chance(0.6) and mat(m, R(0, 3)) or mat(R(0, 3), m)
  if chance(0.5) then b:requires_grad_() end
  local how = pick { "backward", "grad_create" }
  note(string.format("linalg=%s m=%d n=%d b=%s how=%s", name, m, n, table.concat(b:shape(), "x"), how))
  return "linalg grad " .. name, function()
    local outs = LINALG_GRAD[name](a, b)
    local l
    for _, o in ipairs(outs) do
      if FLOATING[o:dtype()] then l = l and l + o:sum() or o:sum() end
    end
    if how == "backward" then return l:backward() end
    local gs = sk.autograd.grad(l, { a }, { create_graph = true, allow_unused = true })
    if gs[1] and gs[1]:requires_grad() then gs[1]:sum():backward() end
  end
end

local function case_forged()
  local u = forged()
  local what = pick { "add", "sum", "tostring", "totable", "item", "shape", "view", "close", "index", "gc", "t" }
  return "forged " .. what, function()
    if what == "tostring" then return tostring(u)
    elseif what == "index" then return u[0]
    elseif what == "gc" then u = nil; collectgarbage(); return
    elseif what == "add" then return sk.add(sk.ones(2), u)
    else local f = sk.Tensor[what] or sk[what]; return f(u) end
  end
end
-- }====

-- {==== Libraries: mutated schemas, misbehaving kernels and meta functions ====
local SEED_SCHEMAS = {
  "f(Tensor self) -> Tensor", "f(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
  "f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "f(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
  "f(Tensor[] tensors, int dim=0) -> Tensor", "f(Tensor self) -> (Tensor, Tensor)",
  "f(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
  "f_(Tensor(a!) self, float lo=-1) -> Tensor(a!)", "f(Tensor(a) self) -> Tensor(a)",
}
local ARG_SNIPPETS = {
  "int[4000] x=1", "bool[3] b=[True,False,True]", "float[] f=[1.5]", "Tensor(a!)[] self", "Tensor(a!) out=None",
  "int[2147483647] big", "int[99999999999999999999] huge", "str s=\"x\"", "Scalar? s=None", "Tensor? t",
  "int x=9223372036854775807", "int x=-9223372036854775808", "float y=inf", "float y=nan", "float y=1e999",
  "int[] l=[]", "int[3] l=[1, 2]", "Tensor?[] ts", "Device d=cpu", "ScalarType t=float32", "bool b=maybe",
  "int x=1.5", "Generator? g=None", "SymInt[] s", "Layout? l=None", "MemoryFormat m=contiguous_format",
}
local OUT_SNIPPETS = { "Tensor(a!) out", "Tensor(b!) out1", "Tensor(c!) out2", "Tensor(d!) out3", "Tensor(e!) out4",
                       "Tensor(f!) out5" }
local TYPES = { "Tensor", "int", "float", "bool", "str", "Scalar", "int[]", "Tensor[]", "Tensor?", "int[2]", "ScalarType",
                "Tensor(a)", "Tensor(a!)", "float[]", "bool[]", "Device", "Tensor?[]" }

local function mutate(text)
  local r = R()
  local head, args, ret = text:match("^(.-)%((.*)%) %-> (.*)$")
  if not head then return text end
  local parts = {}
  for p in (args .. ", "):gmatch("(.-), ") do parts[#parts + 1] = p end
  if r < 0.3 then -- insert an argument snippet
    table.insert(parts, R(#parts + 1), pick(ARG_SNIPPETS))
  elseif r < 0.45 then -- many outs
    local n = R(2, 6)
    if not text:find("%*") then parts[#parts + 1] = "*" end
    local rets = {}
    for i = 1, n do parts[#parts + 1] = OUT_SNIPPETS[i]; rets[i] = OUT_SNIPPETS[i]:match("^(%S+)") end
    head = head:match("%.") and head or head .. ".out"
    ret = "(" .. table.concat(rets, ", ") .. ")"
  elseif r < 0.65 and #parts > 0 then -- change a type
    local i = R(#parts)
    parts[i] = parts[i]:gsub("^%S+", pick(TYPES))
  elseif r < 0.75 and #parts > 0 then table.remove(parts, R(#parts))
  elseif r < 0.85 then ret = pick { "()", "Tensor", "(Tensor, Tensor)", "int", "Tensor[]", "(Tensor a, int b)" }
  else -- a random character edit
    local s = text
    local i = R(#s)
    return s:sub(1, i - 1) .. pick { "", "(", ")", "[", "]", "!", "?", "=", ",", " ", "*", "a" } .. s:sub(i + 1)
  end
  return head .. "(" .. table.concat(parts, ", ") .. ") -> " .. ret
end

-- what a Lua kernel or meta function does: good behaviours and bad ones, as data
local BEHAVIOURS = {
  { "clone", function(_, x) if type(x) == "userdata" then return x:clone() end return sk.zeros(1) end },
  { "error", function() error("kernel raised") end },
  { "error_table", function() error({ "not a string" }) end },
  { "error_nil", function() error(nil) end },
  { "nothing", function() end },
  { "number", function() return 1 end },
  { "many", function(_, x) return x, x, x, x, x end },
  { "gc", function(_, x) collectgarbage(); collectgarbage(); return x end },
  { "close_lib", function(_, x) if ctx.lib then pcall(ctx.lib.close, ctx.lib) end return x end },
  { "drop_lib_gc", function(_, x) ctx.lib = nil; collectgarbage(); return x end },
  { "write_input", function(_, x) if type(x) == "userdata" then pcall(x.add_, x, 1) end return x end },
  { "meta_tensor", function() return sk.empty({ 2 }, { device = "meta" }) end },
  { "recurse", function(self_fn, ...) return self_fn(...) end },
  { "keep_m", function(m) _G.fuzz_kept_m = m; return nil end },
  { "use_kept_m", function() local m = _G.fuzz_kept_m; if m then m:set_output(0, { 2 }, "float32") end end },
  { "set_output_ok", function(m, x)
      if type(m) == "userdata" and m.set_output then
        local s = type(x) == "userdata" and x:shape() or { 2 }
        m:set_output(0, s, type(x) == "userdata" and x:dtype() or "float32")
      end
    end },
  { "set_output_bad", function(m)
      if type(m) == "userdata" and m.set_output then
        m:set_output(pick { 0, 1, -1, int_edge() }, chance(0.5) and { int_edge(), 2 } or { 3 },
          pick(DTYPES), chance(0.5) and { int_edge(), 0 } or (chance(0.5) and { -1 } or nil))
      end
    end },
  { "set_output_twice", function(m)
      if type(m) == "userdata" and m.set_output then m:set_output(0, { 2 }, "float32"); m:set_output(0, { 3 }, "int64") end
    end },
  { "out_copy", function(out, x) if type(out) == "userdata" and type(x) == "userdata" then out:copy_(x) end end },
}
local function behaviour(tag)
  local b = pick(BEHAVIOURS)
  note(tag .. "=" .. b[1])
  -- the behaviours take (first argument, second argument...): recurse calls the op again
  return function(...)
    if b[1] == "recurse" then
      ctx.depth = (ctx.depth or 0) + 1
      if ctx.depth > 30 or not ctx.call then return ... end
      return ctx.call(...)
    end
    return b[2](...)
  end
end

local KEYS = { "CPU", "Meta", "fuzzdev", "DefaultBackend", "Math", "CUDA", "npu", "" }
local BUILTINS = require("sk.core").lib.structured_builtins()
-- A built-in structured op's meta and CPU kernel (sk.structured_builtin), plugged in whole or mixed
-- with Lua functions, another op's built-in, bad overload names and keys that are not host memory.
local function builtin_spec(e)
  local b = sk.structured_builtin(e.out)
  local other = sk.structured_builtin(pick(BUILTINS).out)
  local impl = {}
  for _ = 1, R(1, 2) do impl[pick(KEYS)] = pick { b, b, other, (behaviour("impl")) } end
  return { out = e.schema, meta = pick { b, b, b, other, (behaviour("meta")) }, impl = impl,
           overload = chance(0.2) and pick { "", "x", 1, e.out:match("%.(.*)$") } or nil }
end
local function case_library()
  local ns = "fz" .. ctx.case
  local text = pick(SEED_SCHEMAS)
  for _ = 1, R(0, 3) do text = mutate(text) end
  local structured = chance(0.4)
  local builtin = structured and chance(0.3) and pick(BUILTINS)
  if builtin then text = builtin.schema end
  return (builtin and "builtin " or structured and "structured " or "define ") .. text, function()
    local lib = sk.library(ns)
    ctx.lib = lib
    local rec = schema.parse(text)
    local name
    if structured then
      local impl = {}
      for _ = 1, R(0, 2) do impl[pick(KEYS)] = (behaviour("impl")) end
      if chance(0.1) then impl = pick { 1, "x", { CPU = 1 } } end
      local spec = { out = text, meta = chance(0.9) and (behaviour("meta")) or nil, impl = impl }
      if builtin then spec = builtin_spec(builtin) end
      if chance(0.05) then spec = hostile_options(spec) end
      lib:structured(spec)
      if rec then name = rec.name:gsub("_$", "") end
    else
      name = lib:define(text):match("::([^.]+)")
      for _ = 1, R(0, 2) do lib:impl(rec.name .. (rec.overload ~= "" and "." .. rec.overload or ""), pick(KEYS), (behaviour("impl"))) end
      if chance(0.5) then lib:meta(rec.name .. (rec.overload ~= "" and "." .. rec.overload or ""), (behaviour("meta"))) end
    end
    if not (rec and name) then return end
    local f = sk.ops[ns][name]
    ctx.call = f
    if chance(0.3) then lib = nil end -- the library may be collected during the call
    for _ = 1, R(1, 3) do
      pcall(call_schema, rec, name, "function", f)
    end
    if chance(0.3) then collectgarbage() end
    if lib and chance(0.8) then lib:close() end
    if chance(0.2) then pcall(f, sk.zeros(2)) end -- an op of a closed library
  end
end

local function case_fallback_lua()
  -- a Lua fallback on the fuzz backend, misbehaving, then an op on that backend
  local ns = "fzfb" .. ctx.case
  return "lua_fallback", function()
    devlib:close()
    local lib = sk.library(ns)
    ctx.lib = lib
    local ok = pcall(lib.fallback, lib, "fuzzdev", (behaviour("fallback")))
    local a = base_tensor(ctx.dtype, "fuzzdev")
    pcall(sk.mul, a, a)
    pcall(sk.sum, a)
    if ok then lib:close() end
    devlib = sk.library("fuzzdev_fallback")
    devlib:fallback("fuzzdev", sk.cpu_fallback)
  end
end
-- }====

local function case_backend()
  -- a backend record from Lua with good and bad options, used, then unregistered
  local name = "fzbk" .. ctx.case
  local FALLBACKS = { "cpu", "none", "gpu", 1, true, false }
  local opts = pick { nil, {}, { fallback = pick(FALLBACKS) }, { on_copy = function() end, fallback = pick(FALLBACKS) },
                      { on_copy = 3 }, { fallbak = "cpu" }, "cpu" }
  return "backend", function()
    if not pcall(sk.backends.register, name, opts) then return end
    local a = base_tensor(ctx.dtype)
    pcall(function() local d = a:to(name); local _ = sk.mul(d, d), sk.sum(d), sk.zeros(2, { device = name }) end)
    a = nil
    collectgarbage()
    collectgarbage()
    local ok, err = pcall(sk.backends.unregister, name) -- nothing of it is left alive
    if not ok then error({ "backend " .. name .. " stays registered: " .. tostring(err) }) end -- a finding
  end
end

-- a file of each format, mutated (bytes flipped, cut, repeated, numbers in the header changed),
-- loaded read and mapped; what loads is read whole, so a view past the data is a finding
local FILE_SEEDS = { "all.safetensors", "model.safetensors", "float64_fortran.npy", "float32_big.npy", "scalar.npy",
                     "stored.npz", "deflated.npz" }
local function case_file()
  local name = pick(FILE_SEEDS)
  local f = assert(io.open("spec/fixtures/io/" .. name, "rb"))
  local s = f:read("a")
  f:close()
  local edits = {}
  for _ = 1, R(1, 4) do
    local r, i = R(), R(#s)
    if r < 0.3 then s = s:sub(1, i - 1) .. string.char(R(0, 255)) .. s:sub(i + 1); edits[#edits + 1] = "flip@" .. i
    elseif r < 0.45 then s = s:sub(1, i); edits[#edits + 1] = "cut@" .. i
    elseif r < 0.55 then s = s:sub(1, i) .. s:sub(R(#s)); edits[#edits + 1] = "splice@" .. i
    elseif r < 0.85 then -- a number of the header (the first 200 bytes) becomes an edge value
      local n = 0
      local big = tostring(pick { 0, 1, -1, 255, 65536, 2 ^ 31, 2 ^ 32, 2 ^ 53, 2 ^ 63, 9223372036854775807, 1e300 })
      s = s:sub(1, 200):gsub("%d+", function(d) n = n + 1; if n == R(1, 8) then return big:gsub("%.0$", "") end end) .. s:sub(201)
      edits[#edits + 1] = "number=" .. big
    else s = s:sub(1, i) .. s:sub(i, i + R(0, 64)) .. s:sub(i + 1); edits[#edits + 1] = "repeat@" .. i end
  end
  local mmap = chance(0.5)
  note(name .. " " .. table.concat(edits, ",") .. (mmap and " mmap" or ""))
  local path = DIR .. "/file." .. name:match("%.(%w+)$")
  return "file", function()
    local g = assert(io.open(path, "wb"))
    g:write(s)
    g:close()
    local r = sk.load(path, { mmap = mmap })
    for _, t in pairs(type(r) == "table" and r or { r }) do local _ = t:tobytes(), t:sum() end
  end
end

-- DLPack round trips: a tensor of any maker and dtype exported, then steps in any order: imports
-- (a second one must raise), resize_ of the source (refused while lent), the capsule dropped or
-- closed unconsumed, the source dropped, writes through an import; what imports is read whole
local DLPACK_STEPS = { "import", "import", "resize", "drop", "close", "collect", "drop_source", "write" }
local function case_dlpack()
  ctx.dev, ctx.real = pick { "cpu", "cpu", "cpu", "fuzzdev" }, true -- DLPack has CPU (and CUDA) memory only
  local src = a_tensor("x")
  local steps = {}
  for i = 1, R(1, 4) do steps[i] = pick(DLPACK_STEPS) end
  local size = chance(0.5) and R(0, 64) or R(1 << 10, 1 << 16)
  note("steps=" .. table.concat(steps, ",") .. " resize=" .. size)
  return "dlpack", function()
    local c, outs = src:to_dlpack(), {}
    for _, step in ipairs(steps) do
      pcall(function()
        if step == "import" then outs[#outs + 1] = sk.from_dlpack(c)
        elseif step == "resize" then src:resize_(size)
        elseif step == "drop" then c = nil; collectgarbage()
        elseif step == "close" then getmetatable(c).__close(c)
        elseif step == "collect" then collectgarbage()
        elseif step == "drop_source" then src, ctx.tensors = nil, {}; collectgarbage()
        elseif step == "write" then outs[1]:fill_(1) end
      end)
    end
    for _, u in ipairs(outs) do local _ = u:tobytes(), u:sum() end
  end
end

-- .npz archives made member by member (stored or deflated): .npy members cut, padded, with a
-- header number made an edge value or bool bytes past 1; then the zip entries' stated sizes
-- rewritten or a byte flipped. What loads is read whole.
local ZIP_SIZES = { 0, 1, 63, 64, 127, 128, 4096, 1 << 20, 1 << 30, 0xffffffff }
local function case_npz()
  local core = require "sk.core"
  local npy = require("sk.formats.npy")(sk, core, require("sk.formats.util")(sk, core))
  local members, edits = {}, {}
  for i = 1, R(1, 3) do
    local dt = pick { "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64" }
    local t = base_tensor(dt, "cpu", sizes())
    local head, data = npy.header(t, error), t:contiguous():tobytes()
    local r = R()
    if r < 0.2 then data = data:sub(1, R(0, #data)); edits[#edits + 1] = "cut" .. i
    elseif r < 0.35 then data = data .. ("\1"):rep(R(1, 64)); edits[#edits + 1] = "pad" .. i
    elseif r < 0.55 then
      local n = 0
      local big = pick { "0", "1", "255", "65536", "2147483648", "4294967296", "9223372036854775807", "99999999999999999999" }
      head = head:gsub("%d+", function(d) n = n + 1; if n == R(1, 6) then return big end end)
      edits[#edits + 1] = "header" .. i .. "=" .. big
    elseif r < 0.7 and dt == "bool" then
      data = data:gsub(".", function() return string.char(R(0, 255)) end); edits[#edits + 1] = "boolbytes" .. i
    end
    members[i] = { name = "m" .. i .. ".npy", data = head .. data }
  end
  local compressed, zipedit = chance(0.5), R()
  local claim = pick(ZIP_SIZES)
  note(table.concat(edits, ",") .. (compressed and " deflated" or " stored"))
  if zipedit < 0.4 then note("zipsize=" .. claim) elseif zipedit < 0.6 then note("zipflip") end
  local path = DIR .. "/case.npz"
  return "npz", function()
    core.io.zip_write(path, members, compressed)
    local f = assert(io.open(path, "rb"))
    local s = f:read("a")
    f:close()
    local function put(at, v) s = s:sub(1, at - 1) .. string.pack("<I4", v) .. s:sub(at + 4) end
    if zipedit < 0.4 then -- one member's stated inflated size, in its local and central headers
      local k, lh, cd = R(#members), 0, 0
      for _ = 1, k do lh = s:find("PK\3\4", lh + 1, true) or lh end
      for _ = 1, k do cd = s:find("PK\1\2", cd + 1, true) or cd end
      if lh > 0 then put(lh + 22, claim) end
      if cd > 0 then put(cd + 24, claim) end
    elseif zipedit < 0.6 then
      local i = R(#s)
      s = s:sub(1, i - 1) .. string.char(R(0, 255)) .. s:sub(i + 1)
    end
    f = assert(io.open(path, "wb"))
    f:write(s)
    f:close()
    for _, t in pairs(sk.load(path)) do local _ = t:tobytes(), t:sum() end
  end
end

-- sk.plan: an op call (as case_op builds it, its tensors captured) recorded, then replayed twice;
-- a random function of two such calls chained through its first result, with an input.
local function case_plan()
  ctx.dev = pick { "cpu", "cpu", "cpu", "cpu", "fuzzdev" } -- a plan replays where there is data
  ctx.real = true
  local op = pick(OPS)
  local name = op.rec.name
  local how = op.method and chance(0.5) and "method" or "call"
  local func = function(...) return sk.call(op.qname, ...) end
  local call = prepare_call(op.rec, name, how, func)
  local x = a_tensor("x")
  local dynamic = chance(0.2)
  return "plan " .. op.qname .. " " .. how .. (dynamic and " dynamic" or ""), function()
    local function fn(a)
      local r = call()
      if getmetatable(r) == TENSOR_MT and getmetatable(a) == TENSOR_MT and chance(0.5) then return r, a + 0 end
      return r
    end
    local p = dynamic and sk.plan(fn, x, { dynamic = true }) or sk.plan(fn, x)
    local _ = p(x), p:stats(), p:graph()
    p(x)
    if dynamic then p(a_tensor("x")) end
    if chance(0.2) then p(x, { out = { x } }) end -- an out that is the input: refused, never replayed
  end
end

local CASES = {
  { "op", 60, case_op }, { "operator", 8, case_operator }, { "index", 8, case_index },
  { "construct", 5, case_construct }, { "method", 8, case_method }, { "forged", 1, case_forged },
  { "library", 8, case_library }, { "fallback", 1, case_fallback_lua }, { "backend", 1, case_backend },
  { "autograd", 6, case_autograd }, { "linalg grad", 2, case_linalg_grad }, { "file", 3, case_file },
  { "plan", 3, case_plan }, { "dlpack", 2, case_dlpack }, { "npz", 2, case_npz },
  { "hooks", 3, case_hooks }, { "custom fn", 3, case_custom_fn },
}
local TOTAL_WEIGHT = 0
for _, c in ipairs(CASES) do TOTAL_WEIGHT = TOTAL_WEIGHT + c[2] end
local function pick_case()
  if opt.kind then -- --kind NAME: only that kind of case (a new feature's own run)
    for _, c in ipairs(CASES) do if c[1] == opt.kind then return c end end
    error("sk_fuzz: no case kind '" .. opt.kind .. "'")
  end
  local r = R() * TOTAL_WEIGHT
  for _, c in ipairs(CASES) do r = r - c[2]; if r <= 0 then return c end end
  return CASES[1]
end

-- {==== The loop ====
local trace_path = os.getenv("SK_FUZZ_TRACE")
local trace = trace_path and assert(io.open(trace_path, "w"))
local ran, skipped, findings, skipcount = 0, 0, 0, {}
local function write_trace(k, desc)
  if not trace then return end
  trace:seek("set")
  local lines = { string.format("case %d: %s", k, desc), "skipped " .. skipped }
  for key, n in pairs(skipcount) do lines[#lines + 1] = "skip " .. key .. " " .. n end
  local s = table.concat(lines, "\n") .. "\n"
  trace:write(s, (" "):rep(200)) -- blanks over a longer previous line
  trace:flush()
end

for k = opt.from, opt.from + opt.calls - 1 do
  math.randomseed(opt.seed, k)
  ctx = { case = k, parts = {}, tensors = {}, dtype = pick(DTYPES) }
  ctx.dev = pick { "cpu", "cpu", "cpu", "meta", "fuzzdev" }
  ctx.real = ctx.dev ~= "meta"
  local kind = pick_case()
  local built, desc, run = pcall(kind[3])
  if not built then desc, run = "build error: " .. tostring(desc), function() end end
  desc = desc .. " " .. table.concat(ctx.parts, " ") .. " dtype=" .. ctx.dtype .. "@" .. ctx.dev
  local skip
  if not opt.noskip then
    for _, s in ipairs(SKIP) do if desc:find(s.pattern) then skip = s; break end end
  end
  if skip then
    skipped = skipped + 1
    local key = skip.index
    skipcount[key] = (skipcount[key] or 0) + 1
  else
    write_trace(k, desc)
    if opt.verbose then io.stderr:write("case ", k, ": ", desc, "\n") end
    local ok, err = pcall(run)
    if opt.verbose then io.stderr:write("  -> ", ok and "ok" or tostring(err), "\n") end
    if not ok and type(err) ~= "string" then
      findings = findings + 1
      print(string.format("finding: case %d: %s: error value of type %s", k, desc, type(err)))
    end
    for _, f in ipairs(ctx.forged or {}) do debug.setmetatable(f[1], f[2]) end
    ran = ran + 1
    if k % 200 == 0 then collectgarbage() end
  end
end
ctx = { parts = {}, tensors = {} }
collectgarbage()
print(string.format("\nworker: ran %d skipped %d", ran, skipped))
for key, n in pairs(skipcount) do print("skip " .. key .. " " .. n) end
-- }====
