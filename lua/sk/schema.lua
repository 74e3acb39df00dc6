-- sk.schema: the one parser/printer for PyTorch function schemas `[ns::]name[.overload](args) -> returns`.
-- Invariants: parse() never throws; it returns a record or nil, "bad schema '<text>': <why>".
-- Records are plain tables, treated as immutable. print(parse(s)) == s for every accepted s:
-- like torchgen, parse rejects text that is not in canonical form (", " between args, " -> ").
local M = {}

local types = require "sk.types"
local BASES = types.by_name -- the type names: sk.types has one row per base type
-- `__iadd__` etc. are the inplace forms of these dunder methods
local AUGMENTED = { add = 1, sub = 1, mul = 1, div = 1, mod = 1, pow = 1, lshift = 1, rshift = 1,
                    ["and"] = 1, xor = 1, ["or"] = 1 }
local IDENT = "^[%a_][%w_]*$"

local function trim(s) return (s:match("^%s*(.-)%s*$")) end

-- index of the bracket closing the one at s[i], skipping quoted strings; nil if unbalanced
local function closing(s, i)
  local depth, quote = 0, nil
  for j = i, #s do
    local c = s:sub(j, j)
    if quote then
      if c == quote then quote = nil end
    elseif c == '"' or c == "'" then quote = c
    elseif c == "(" or c == "[" then depth = depth + 1
    elseif c == ")" or c == "]" then
      depth = depth - 1
      if depth == 0 then return j end
    end
  end
end

-- split on "," at bracket depth 0, outside quotes; trims each part
local function split_top(s)
  local parts, depth, quote, start = {}, 0, nil, 1
  for j = 1, #s do
    local c = s:sub(j, j)
    if quote then
      if c == quote then quote = nil end
    elseif c == '"' or c == "'" then quote = c
    elseif c == "(" or c == "[" then depth = depth + 1
    elseif c == ")" or c == "]" then depth = depth - 1
    elseif c == "," and depth == 0 then
      parts[#parts + 1] = trim(s:sub(start, j - 1)); start = j + 1
    end
  end
  if trim(s) ~= "" then parts[#parts + 1] = trim(s:sub(start)) end
  return parts
end

local function is_set(x)  -- "a" or "a|b|c"
  return x:match("^[a-z]$") or (x:match("^[a-z][|a-z]*[a-z]$") and not x:find("[a-z][a-z]")
    and not x:find("||"))
end

local function alias_str(a)
  return a.set .. (a.write and "!" or "") .. (a.after and " -> " .. a.after or "")
end

-- "a", "a!", "a -> *", "a! -> a|b"
local function parse_alias(s)
  local set, bang, rest = s:match("^([|a-z]+)(!?)(.*)$")
  local after = rest and rest:match("^ %-> (.+)$")
  if not set or not is_set(set) or (rest ~= "" and not after) or (after and after ~= "*" and not is_set(after)) then
    return nil, "bad alias annotation '" .. s .. "'"
  end
  if bang == "!" and set:find("|") then
    return nil, "write alias annotation '" .. s .. "' must name exactly one alias set"
  end
  if set:find("|") and after and after:find("|") then
    return nil, "alias annotation '" .. s .. "' cannot have multiple sets both before and after"
  end
  return { set = set, write = bang == "!", after = after }
end

-- Type grammar: Tensor(annot)? prefix, then base [?] [ "[" N? "]" ] [?]
function M.parse_type(s)
  local text, alias = s, nil
  local annot, rest = s:match("^Tensor(%b())(.*)$")
  if annot then
    local a, err = parse_alias(annot:sub(2, -2))
    if not a then return nil, err end
    alias, s = a, "Tensor" .. rest
  end
  local t = { optional = false, elem_optional = false, alias = alias }
  if s:sub(-1) == "?" then t.optional, s = true, s:sub(1, -2) end
  local elem, size = s:match("^(.-)%[(%d*)%]$")
  if elem then
    t.list, s = { size = tonumber(size) }, elem
    if s:sub(-1) == "?" then t.elem_optional, s = true, s:sub(1, -2) end
  end
  if not s:match(IDENT) then return nil, "bad type '" .. text .. "'" end
  if not BASES[s] then return nil, "unknown type '" .. s .. "'" end
  t.base = s
  return t
end

function M.type_str(t)
  local s = t.base .. (t.alias and "(" .. alias_str(t.alias) .. ")" or "")
  if t.list then s = s .. (t.elem_optional and "?" or "") .. "[" .. (t.list.size or "") .. "]" end
  return s .. (t.optional and "?" or "")
end

local function valid_default(d)
  return d:match("^%-?[%a_][%w_]*$") or (d:match("^%-?[%d.]") and tonumber(d))
    or d:match("^%[.*%]$") or d:match('^".*"$') or d:match("^'.*'$")
end

local function parse_arg(s)
  local decl, default = s:match("^([^=]*)=(.*)$")
  decl = decl or s
  local tstr, name = decl:match("^(.*) ([%a_][%w_]*)$")
  if not tstr then return nil, "bad argument '" .. s .. "'" end
  if default and not valid_default(default) then return nil, "bad default '" .. default .. "' for '" .. name .. "'" end
  local t, err = M.parse_type(tstr)
  if not t then return nil, err end
  return { name = name, type = t, default = default }
end

local function parse_args(s)
  local args, kwarg, seen_out, names = {}, false, false, {}
  for _, part in ipairs(split_top(s)) do
    if part == "*" then
      if kwarg then return nil, "'*' may appear only once" end
      kwarg = true
    else
      local a, err = parse_arg(part)
      if not a then return nil, err end
      if names[a.name] then return nil, "duplicate argument name '" .. a.name .. "'" end
      names[a.name] = true
      a.kwarg_only, a.pos = kwarg, #args + 1
      a.is_out = kwarg and a.type.alias ~= nil and a.type.alias.write
      if seen_out and not a.is_out then
        return nil, "out arguments must come last; '" .. a.name .. "' follows an out argument"
      end
      seen_out = seen_out or a.is_out
      args[#args + 1] = a
    end
  end
  return args
end

local function parse_returns(s)
  local items = { s }
  if s == "()" then return {} end
  if s:sub(1, 1) == "(" then
    if closing(s, 1) ~= #s then return nil, "bad returns '" .. s .. "'" end
    items = split_top(s:sub(2, -2))
  end
  local rets = {}
  for _, item in ipairs(items) do
    local tstr, name = item:match("^(.-) ([%a_][%w_]*)$")
    local t, err = M.parse_type(tstr or item)
    if not t then return nil, err end
    rets[#rets + 1] = { name = name, type = t }
  end
  return rets
end

-- "add_" -> "add", true; "__iadd__" -> "__add__", true
local function split_name(name)
  local dunder = name:match("^__i(%l+)__$")
  if dunder and AUGMENTED[dunder] then return "__" .. dunder .. "__", true end
  if name:match("^__.*__$") or #name < 2 or name:sub(-1) ~= "_" then return name, false end
  return name:sub(1, -2), true
end

local function same_alias(x, y) return x and y and alias_str(x) == alias_str(y) end
local function is_write(t) return t.alias ~= nil and t.alias.write end
local function plain_tensor(t) return t.base == "Tensor" and not t.list and not t.optional end

-- torchgen's FunctionSchema.__post_init__ checks; returns an error message or nil
local function check(r)
  if r.base:match("_out$") then
    return "_out suffix is reserved and not permitted for operator names; did you mean to specify an out overload name instead?"
  end
  local outs, list_out, self = {}, false, nil
  for _, a in ipairs(r.args) do
    if a.is_out then outs[#outs + 1] = a; list_out = list_out or not plain_tensor(a.type) end
    if a.name == "self" and not a.kwarg_only then self = self or a end
  end
  for i, a in ipairs(outs) do
    if r.returns[i] and not same_alias(a.type.alias, r.returns[i].type.alias) then
      return "Out arguments must have matching return Tensor; furthermore, the ith-argument needs to correspond to the ith return"
    end
  end
  if #outs > 0 and list_out and #r.returns > 0 then
    return "out= ops that accept tensor lists as out arguments are expected to have no return type (since you can't do method chaining on them)"
  elseif #outs > 0 and not list_out and #outs ~= #r.returns then
    return "Must return as many arguments as there are out arguments, or no return at all"
  end
  if r.inplace then
    if #outs > 0 then return "inplace operators cannot have out arguments" end
    if not (self and is_write(self.type)) then
      return "inplace operator '" .. r.name .. "' must take a write-annotated self argument, e.g. Tensor(a!) self"
    end
    local want = self.type.list and 0 or 1
    if #r.returns ~= want or (want == 1 and not same_alias(r.returns[1].type.alias, self.type.alias)) then
      return "inplace operator '" .. r.name .. "' must return its self argument"
        .. (want == 1 and " ('" .. M.type_str(self.type) .. "')" or " as ()")
    end
  end
  for _, ret in ipairs(r.returns) do
    if is_write(ret.type) then
      local ok = false
      for _, a in ipairs(r.args) do
        ok = ok or ((a.is_out or a == self) and same_alias(a.type.alias, ret.type.alias))
      end
      if not ok then
        return 'All mutable returns must be aliased either to a keyword argument, or to "self". Did you forget to mark an out argument as keyword-only?'
      end
    end
  end
end

local function kind_of(r)
  if r.inplace then return "inplace" end
  local mutable = false
  for _, a in ipairs(r.args) do
    if a.is_out then return "out" end
    mutable = mutable or (not a.kwarg_only and a.name ~= "self" and is_write(a.type))
  end
  return mutable and "mutable" or "functional"
end

local function parse(text)
  local head = text:match("^([^(]*)%(")
  if not head then return nil, "expected '('" end
  local close = closing(text, #head + 1)
  if not close then return nil, "unbalanced parentheses" end
  local rets_text = text:sub(close + 1):match("^ %-> (.+)$")
  if not rets_text then return nil, "expected ' -> ' and returns after the arguments" end
  local ns, opname = head:match("^([%a_][%w_]*)::(.*)$")
  opname = opname or head
  local name, overload = opname:match("^([%a_][%w_]*)%.([%w_]+)$")
  if not name and opname:match(IDENT) then name, overload = opname, "" end
  if not name then return nil, "bad operator name '" .. head .. "'" end
  local args, err = parse_args(text:sub(#head + 2, close - 1))
  if not args then return nil, err end
  local returns, rerr = parse_returns(rets_text)
  if not returns then return nil, rerr end
  local base, inplace = split_name(name)
  local r = { text = text, namespace = ns or "aten", namespace_explicit = ns ~= nil, name = name,
              base = base, inplace = inplace, overload = overload, args = args, returns = returns }
  local msg = check(r)
  if msg then return nil, msg end
  r.kind, r.is_view = kind_of(r), false
  for _, ret in ipairs(returns) do r.is_view = r.is_view or (ret.type.alias ~= nil and not ret.type.alias.write) end
  local printed = M.print(r)
  if printed ~= text then return nil, "not in canonical form (expected '" .. printed .. "')" end
  return r
end

function M.parse(text)
  if type(text) ~= "string" then return nil, "bad schema: expected a string, got " .. type(text) end
  local r, err = parse(text)
  if not r then return nil, "bad schema '" .. text .. "': " .. err end
  return r
end

-- {==== What the runtime can hold ====
-- The grammar accepts schemas that sk's binding and structured runtime cannot
-- carry; check_limits refuses them (codegen and sk.library both call it), naming the limit.
M.limits = { args = 64, returns = 64 // 4, list = 64, outs = 4 }
local function check_default(a)
  local t, d = a.type, a.default
  if d == "None" then
    if not t.optional then return "default None for '" .. a.name .. "', which is not optional" end
    return nil
  end
  if t.list then
    local elem = types.by_name[t.base].element
    if not elem then return "a default for the list '" .. a.name .. "' (only int[], float[] and bool[] lists have defaults)" end
    local items = {}
    if d:match("^%[.*%]$") then
      for x in d:sub(2, -2):gmatch("[^,%s]+") do items[#items + 1] = x end
    else
      items[1] = d
    end
    if #items > M.limits.list then
      return "a default of " .. #items .. " elements for '" .. a.name .. "', at most " .. M.limits.list
    end
    for _, x in ipairs(items) do
      if not elem(x) then return "bad default '" .. d .. "' for " .. M.type_str(t) .. " '" .. a.name .. "'" end
    end
    return nil
  end
  local ok = types.by_name[t.base].default
  if not ok or not ok(d) then return "bad default '" .. d .. "' for " .. M.type_str(t) .. " '" .. a.name .. "'" end
end

-- An error message when the record (from parse) is beyond what sk's runtime holds, else nil.
function M.check_limits(r)
  local L = M.limits
  if #r.args > L.args then return #r.args .. " arguments, sk supports at most " .. L.args end
  if #r.returns > L.returns then return #r.returns .. " returns, sk supports at most " .. L.returns end
  local outs = 0
  for i, x in ipairs(r.returns) do
    local why = types.refusal(x.type, "return")
    if why then return "return " .. i .. " is " .. M.type_str(x.type) .. ": " .. why end
  end
  for _, a in ipairs(r.args) do
    local t = a.type
    local why = types.refusal(t, "argument")
    if why then return "argument '" .. a.name .. "' is " .. M.type_str(t) .. ": " .. why end
    if t.list and t.list.size and t.list.size > L.list then
      return "argument '" .. a.name .. "' is " .. M.type_str(t) .. ", sk supports fixed-size lists of at most " .. L.list
    end
    if a.is_out then
      outs = outs + 1
      if a.default then return "out argument '" .. a.name .. "' has a default; an out argument cannot have one" end
      if t.list then return "out argument '" .. a.name .. "' is a list; sk supports Tensor(a!) outs only" end
    end
    if r.inplace and a.name == "self" and t.list then
      return "in-place self '" .. M.type_str(t) .. "' is a list; sk supports a single Tensor(a!) self"
    end
    if a.default then
      local e = check_default(a)
      if e then return e end
    end
  end
  if outs > L.outs then return outs .. " out arguments, sk supports at most " .. L.outs end
end
-- }====

function M.print(r)
  local parts, star = {}, false
  for _, a in ipairs(r.args) do
    if a.kwarg_only and not star then parts[#parts + 1], star = "*", true end
    parts[#parts + 1] = M.type_str(a.type) .. " " .. a.name .. (a.default and "=" .. a.default or "")
  end
  local rets = {}
  for _, x in ipairs(r.returns) do rets[#rets + 1] = M.type_str(x.type) .. (x.name and " " .. x.name or "") end
  local ret = #rets == 1 and rets[1] or "(" .. table.concat(rets, ", ") .. ")"
  return (r.namespace_explicit and r.namespace .. "::" or "") .. r.name
    .. (r.overload ~= "" and "." .. r.overload or "") .. "(" .. table.concat(parts, ", ") .. ") -> " .. ret
end

local function strip(t)
  return { base = t.base, optional = t.optional, list = t.list, elem_optional = t.elem_optional }
end

-- index of the first of 4 consecutive kwargs dtype, layout, device, pin_memory (TensorOptions)
local function tensor_options_at(args)
  for i = 1, #args - 3 do
    if args[i].kwarg_only and args[i].name == "dtype" and args[i + 1].name == "layout"
      and args[i + 2].name == "device" and args[i + 3].name == "pin_memory" then return i end
  end
end

-- torchgen's FunctionSchema.signature(strip_default=True): the key that groups
-- functional / inplace / out / mutable variants of one op.
function M.signature(r)
  local args, rets, returned, muts = {}, {}, {}, { {}, {}, {} }  -- muts: self, out, other
  for _, x in ipairs(r.returns) do
    rets[#rets + 1] = { type = strip(x.type) }
    if x.type.alias then returned[alias_str(x.type.alias)] = true end
  end
  local topt = tensor_options_at(r.args)
  for i, a in ipairs(r.args) do
    if is_write(a.type) and not returned[alias_str(a.type.alias)] then
      local m = muts[(a.name == "self" and not a.kwarg_only) and 1 or a.is_out and 2 or 3]
      m[#m + 1] = { type = strip(a.type) }
    end
    if not a.is_out and not (topt and i >= topt and i < topt + 4) then
      args[#args + 1] = { name = a.name, type = strip(a.type), kwarg_only = a.kwarg_only }
    end
  end
  for _, m in ipairs(muts) do table.move(m, 1, #m, #rets + 1, rets) end
  local ns = r.namespace ~= "aten" and r.namespace_explicit
  return M.print({ namespace = r.namespace, namespace_explicit = ns, name = r.base, overload = "",
                   args = args, returns = rets })
end

return M
