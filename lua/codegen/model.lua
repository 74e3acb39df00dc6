-- codegen.model: native_functions.yaml -> validated op records grouped by schema signature.
-- Invariants: every record's schema comes from sk.schema.parse; every error is raised as the
-- string "<file>:<line>: <opname>: <message>" (line of the entry's "- func:"); records and
-- groups keep file order; dispatch keys are normalized (CompositeExplicitAutograd ->
-- DefaultBackend, CompositeImplicitAutograd -> Math).
local lyaml = require "lyaml"
local schema = require "sk.schema"
local types = require "sk.types"

local M = {}

local KEYS = {
  func = true, variants = true, structured = true, structured_delegate = true, structured_inherits = true,
  precomputed = true, dispatch = true, device_check = true, device_guard = true,
}
-- torchgen keys that sk reads nowhere: refused, so an entry never says more than sk does
local REFUSED = {
  autogen = "sk does not generate out variants; declare the out op (a structured family, or an out kernel) yourself",
  tags = "sk has no operator tags",
  python_module = "sk has no Python bindings",
  category_override = "sk has no Python bindings",
  manual_kernel_registration = "sk registers every kernel the dispatch table names; omit the key (or the dispatch entry)",
}
local backends = require "codegen.backends"
local DISPATCH = {
  Meta = "Meta", BackendSelect = "BackendSelect", Math = "Math",
  DefaultBackend = "DefaultBackend", CompositeExplicitAutograd = "DefaultBackend",
  CompositeImplicitAutograd = "Math",
}
local DELEGATED_KEYS = {} -- generated for delegating ops: every backend's, Meta's, DefaultBackend's
for _, b in ipairs(backends) do
  DISPATCH[b.key] = b.key
  DELEGATED_KEYS[#DELEGATED_KEYS + 1] = b.key
end
DELEGATED_KEYS[#DELEGATED_KEYS + 1] = "Meta"
DELEGATED_KEYS[#DELEGATED_KEYS + 1] = "DefaultBackend"

local function fail(file, line, opname, msg)
  error(string.format("%s:%d: %s: %s", file, line, opname, msg), 0)
end

local function trim(s) return (s:match("^%s*(.-)%s*$")) end

local function split_commas(s)
  local out = {}
  for item in s:gmatch("[^,]+") do out[#out + 1] = trim(item) end
  return out
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = tostring(k) end
  table.sort(ks)
  return ks
end

-- field reader for one entry: bad(msg) raises with the entry's file:line: opname prefix
local function reader(e, bad)
  return function(key, ty, default)
    local v = e[key]
    if v == nil or v == lyaml.null then return default end
    if type(v) ~= ty then bad("'" .. key .. "' must be a " .. (ty == "table" and "list or mapping" or ty)) end
    return v
  end
end

local function parse_variants(s, bad)
  local v = { func = false, method = false }
  for _, item in ipairs(split_commas(s)) do
    if item == "function" then v.func = true
    elseif item == "method" then v.method = true
    else bad("unknown variant '" .. item .. "'") end
  end
  return v
end

-- returns normalized {key = kernel} and {normalized key = key as written}
local function parse_dispatch(d, bad)
  local out, written = {}, {}
  for _, raw in ipairs(sorted_keys(d)) do
    local kernel = d[raw]
    if type(kernel) ~= "string" then bad("dispatch kernel for '" .. raw .. "' must be a string") end
    for _, k in ipairs(split_commas(raw)) do
      local norm = DISPATCH[k] or bad("unknown dispatch key '" .. k .. "'")
      if out[norm] then bad("duplicate dispatch key '" .. k .. "'") end
      out[norm], written[norm] = kernel, k
    end
  end
  if out.DefaultBackend and out.Math then
    bad("cannot specify both CompositeExplicitAutograd (DefaultBackend) and CompositeImplicitAutograd (Math) on a single kernel")
  end
  return out, written
end

local function parse_fields(s, bad)
  local fields = {}
  for _, item in ipairs(split_commas(s)) do
    local tstr, name = item:match("^(.-) ([%a_][%w_]*)$")
    local T, err = schema.parse_type(tstr or item)
    if not (tstr and T) then bad("precomputed: " .. (err or "bad field '" .. item .. "'")) end
    local why = types.by_name[T.base].refused
    if why then bad("precomputed: " .. T.base .. ": " .. why) end
    fields[#fields + 1] = { type = tstr, name = name }
  end
  return fields
end

-- "kernel_size -> int kH, int kW"; the last line may omit "x ->" (extra values, replaces = nil)
local function parse_precomputed(list, s, bad)
  local out, argnames = {}, {}
  for _, a in ipairs(s.args) do argnames[a.name] = true end
  for i, item in ipairs(list) do
    if type(item) ~= "string" then bad("precomputed entries must be strings") end
    local replaces, rest = item:match("^([%w_]+) %-> (.+)$")
    if not replaces and i < #list then bad("precomputed: bad entry '" .. item .. "'") end
    if replaces and not argnames[replaces] then bad("precomputed: no argument '" .. replaces .. "'") end
    out[#out + 1] = { replaces = replaces, fields = parse_fields(rest or item, bad) }
  end
  return out
end

local function parse_entry(e, line, file)
  local opname = type(e.func) == "string" and e.func:match("^[^(]*") or "?"
  local function bad(msg) fail(file, line, opname, msg) end
  for _, k in ipairs(sorted_keys(e)) do
    if REFUSED[k] then bad("key '" .. k .. "' is not supported: " .. REFUSED[k]) end
    if not KEYS[k] then bad("unknown key '" .. k .. "'") end
  end
  local get = reader(e, bad)
  local s, err = schema.parse(get("func", "string"))
  if not s then bad(err) end
  local limit = schema.check_limits(s)
  if limit then bad(limit) end
  local dispatch, written = parse_dispatch(get("dispatch", "table", {}), bad)
  local r = {
    line = line, schema = s, opname = opname,
    variants = parse_variants(get("variants", "string", "function"), bad),
    structured = get("structured", "boolean", false),
    structured_delegate = get("structured_delegate", "string"),
    structured_inherits = get("structured_inherits", "string"),
    dispatch = dispatch,
    device_check = get("device_check", "string", "ExactSame"),
    device_guard = get("device_guard", "boolean", true), -- CUDA kernels enter a device guard (codegen.emit)
  }
  local pre = get("precomputed", "table")
  r.precomputed = pre and parse_precomputed(pre, s, bad)
  local is_out = s.kind == "out"
  if r.device_check ~= "NoCheck" and r.device_check ~= "ExactSame" then
    bad("device_check must be NoCheck or ExactSame")
  end
  if r.structured_inherits and r.structured_inherits ~= "TensorIteratorBase" then
    bad("structured_inherits must be TensorIteratorBase, not '" .. r.structured_inherits .. "'")
  end
  if r.structured and r.structured_delegate then bad("Cannot have both structured and structured_delegate on function") end
  if r.structured and not is_out then bad("Put structured field on the out= variant of a function; did you mean structured_delegate?") end
  if r.structured_delegate and is_out then bad("structured_delegate field not allowed on out= functions; did you mean structured?") end
  if r.structured_inherits and not r.structured then bad("structured_inherits must also imply structured: True") end
  if r.precomputed and not r.structured then bad("precomputed must also imply structured: True") end
  if not r.device_guard and (r.structured or r.structured_delegate) then
    bad("device_guard: False is not respected by structured kernels")
  end
  if is_out and r.variants.method then
    bad("Native functions with out arguments MUST be declared with only function variant; e.g., variants: function; otherwise you will tickle a Python argument binding bug (which usually manifests itself as the result variable being undefined.)")
  end
  if r.structured then
    for _, k in ipairs({ "Meta", "DefaultBackend" }) do
      if dispatch[k] then
        bad("Do not explicitly specify " .. written[k] .. " dispatch key on structured functions, they will be automatically generated for you")
      end
    end
    if dispatch.Math then bad("structured kernels cannot have a " .. written.Math .. " kernel (structured composite kernels are not supported)") end
  end
  if r.structured_delegate then
    for _, k in ipairs(DELEGATED_KEYS) do
      if dispatch[k] then bad("if structured_delegate, then must not have " .. written[k] .. " in dispatch dictionary (it is delegated!)") end
    end
  end
  return r
end

-- line numbers of the entries that start with "- <key>:", in order (derivatives.yaml's too)
function M.entry_lines(text, key)
  local lines, n, pat = {}, 0, "^%- " .. (key or "func") .. ":"
  for l in (text .. "\n"):gmatch("(.-)\r?\n") do
    n = n + 1
    if l:match(pat) then lines[#lines + 1] = n end
  end
  return lines
end
local entry_lines = M.entry_lines

local function read_yaml(text, file)
  local ok, doc = pcall(lyaml.load, text)
  if not ok then error(file .. ":" .. tostring(doc), 0) end
  doc = doc or {}
  local lines = entry_lines(text)
  if type(doc) ~= "table" or #doc ~= #lines or #sorted_keys(doc) ~= #doc then
    error(file .. ": expected a list of entries, each starting with '- func:' (found "
      .. #lines .. " '- func:' lines)", 0)
  end
  for i, e in ipairs(doc) do
    if type(e) ~= "table" then error(file .. ":" .. lines[i] .. ": entry is not a mapping", 0) end
  end
  return doc, lines
end

local function group_all(functions, file)
  local groups, by_sig = {}, {}
  for _, r in ipairs(functions) do
    r.signature = schema.signature(r.schema)
    local g = by_sig[r.signature]
    if not g then
      g = { signature = r.signature, structured = false }
      groups[#groups + 1], by_sig[r.signature] = g, g
    end
    local kind = r.schema.kind
    if g[kind] then
      fail(file, r.line, r.opname, "duplicate " .. kind .. " variant for signature '" .. r.signature .. "' (already "
        .. g[kind].opname .. " at line " .. g[kind].line .. ")")
    end
    g[kind] = r
    g.structured = g.out ~= nil and g.out.structured
  end
  return groups, by_sig
end

local function check_delegates(functions, by_name, by_sig, file)
  for _, r in ipairs(functions) do
    local d = r.structured_delegate
    local function bad(msg) fail(file, r.line, r.opname, msg) end
    if d then
      local target, g = by_name[d], by_sig[r.signature]
      if not (target and target.structured) then bad("structured_delegate '" .. d .. "' is not a structured op") end
      if not g.out then
        bad(r.opname .. " delegates to " .. d .. " but its group (signature '" .. r.signature .. "') has no out= variant")
      end
      if g.out ~= target then bad(r.opname .. " delegates to " .. d .. " but its actual delegate is " .. g.out.opname) end
    end
  end
end

function M.load_string(text, filename)
  local file = filename or "native_functions.yaml"
  local doc, lines = read_yaml(text, file)
  local functions, by_name = {}, {}
  for i, e in ipairs(doc) do
    local r = parse_entry(e, lines[i], file)
    local prev = by_name[r.opname]
    if prev then fail(file, r.line, r.opname, "duplicate operator name '" .. r.opname .. "' (first defined at line " .. prev.line .. ")") end
    functions[#functions + 1], by_name[r.opname] = r, r
  end
  local groups, by_sig = group_all(functions, file)
  check_delegates(functions, by_name, by_sig, file)
  return { functions = functions, by_name = by_name, groups = groups, by_signature = by_sig }
end

function M.load(path)
  local f, err = io.open(path, "r")
  if not f then error(tostring(err), 0) end
  local text = f:read("a")
  f:close()
  return M.load_string(text, path:match("[^/]*$"))
end

return M
