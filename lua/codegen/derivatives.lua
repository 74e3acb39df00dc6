-- codegen.derivatives: derivatives.yaml -> validated entries with parsed formulas.
-- Invariants: every error is "<file>:<line>: <name>: <message>" (line of the entry's "- name:");
-- an entry's name is the exact schema of a function of native_functions.yaml; each formula key
-- names tensor arguments of it; each identifier of a formula is grad, grads[i], an argument, a
-- return (result, resultN), an attribute of an argument (x.sizes(), x.scalar_type(), x.dim(),
-- x.numel(); x.sizes() of a Tensor? is None when x is), grad_input_mask (which inputs of the
-- key want a gradient, as bool[]), a literal (numbers, strings, [] for the empty int list), not_implemented("name") (backward raises), or a call of a function that codegen.autograd can resolve (a helper of
-- src/autograd/sk_grad_helpers.h or an op of native_functions.yaml).
local lyaml = require "lyaml"
local schema = require "sk.schema"

local M = {}

M.ATTRIBUTES = { sizes = "int[]", scalar_type = "ScalarType", dim = "int", numel = "int" }

-- {==== Formulas: a small expression language (PyTorch's C++ formulas, as sk writes them) ====
-- expr := term {(+|-) term}; term := unary {(*|/) unary}; unary := - unary | postfix
-- postfix := primary {. name ( args )}; primary := number | name [( args )] | grads [ int ] | ( expr )
local function tokenize(src, bad)
  local toks, i = {}, 1
  while i <= #src do
    local c = src:sub(i, i)
    if c:match("%s") then i = i + 1
    elseif c:match("[%a_]") then
      local id = src:match("^[%w_]+", i)
      toks[#toks + 1] = { k = "id", v = id }
      i = i + #id
    elseif c:match("%d") or (c == "." and src:sub(i + 1, i + 1):match("%d")) then
      local num = src:match("^%d*%.?%d*[eE][-+]?%d+", i) or src:match("^%d*%.?%d*", i)
      toks[#toks + 1] = { k = "num", v = tonumber(num), int = not num:find("[.eE]") }
      i = i + #num
    elseif c == '"' then
      local j = src:find('"', i + 1, true)
      if not j then bad("unterminated string in formula '" .. src .. "'") end
      toks[#toks + 1] = { k = "str", v = src:sub(i + 1, j - 1) }
      i = j + 1
    elseif c:match("[-+*/(),.%[%]]") then
      toks[#toks + 1] = { k = "op", v = c }
      i = i + 1
    else bad("unexpected character '" .. c .. "' in formula '" .. src .. "'") end
  end
  return toks
end

function M.parse_formula(src, bad)
  local toks, p = tokenize(src, bad), 1
  local function peek(v) local t = toks[p]; return t and t.k == "op" and t.v == v end
  local function expect(v)
    if not peek(v) then bad("expected '" .. v .. "' in formula '" .. src .. "'") end
    p = p + 1
  end
  local expr
  local function args()
    expect("(")
    local list = {}
    if not peek(")") then
      repeat list[#list + 1] = expr() until not (peek(",") and (function() p = p + 1; return true end)())
    end
    expect(")")
    return list
  end
  local function primary()
    local t = toks[p]
    if not t then bad("formula '" .. src .. "' ends early") end
    p = p + 1
    if t.k == "num" then return { tag = "num", v = t.v, int = t.int } end
    if t.k == "str" then return { tag = "str", v = t.v } end
    if t.k == "op" and t.v == "[" then -- [] : the empty int list (a reduction over all dims)
      expect("]")
      return { tag = "emptylist" }
    end
    if t.k == "op" and t.v == "(" then
      local e = expr()
      expect(")")
      return e
    end
    if t.k ~= "id" then bad("unexpected '" .. tostring(t.v) .. "' in formula '" .. src .. "'") end
    if t.v == "grads" and peek("[") then
      p = p + 1
      local i = toks[p]
      if not (i and i.k == "num" and i.int) then bad("grads[...] takes an integer in formula '" .. src .. "'") end
      p = p + 1
      expect("]")
      return { tag = "grads", i = i.v }
    end
    if peek("(") then return { tag = "call", fn = t.v, args = args() } end
    return { tag = "id", name = t.v }
  end
  local function postfix()
    local e = primary()
    while peek(".") do
      p = p + 1
      local m = toks[p]
      if not (m and m.k == "id") then bad("expected a method name after '.' in formula '" .. src .. "'") end
      p = p + 1
      local a = args()
      if e.tag == "id" and M.ATTRIBUTES[m.v] and #a == 0 then e = { tag = "attr", of = e.name, attr = m.v }
      else
        table.insert(a, 1, e)
        e = { tag = "call", fn = m.v, args = a }
      end
    end
    return e
  end
  local function unary()
    if peek("-") then p = p + 1; return { tag = "neg", a = unary() } end
    return postfix()
  end
  -- a left-associative chain of operand (op1|op2 operand)*
  local function chain(operand, op1, op2)
    return function()
      local e = operand()
      while peek(op1) or peek(op2) do
        local op = toks[p].v
        p = p + 1
        e = { tag = "bin", op = op, a = e, b = operand() }
      end
      return e
    end
  end
  local term = chain(unary, "*", "/")
  expr = chain(term, "+", "-")
  local e = expr()
  if toks[p] then bad("unexpected '" .. tostring(toks[p].v) .. "' in formula '" .. src .. "'") end
  return e
end

-- Calls fn(node) for every node of e, outermost first.
function M.walk(e, fn)
  fn(e)
  if e.args then for _, a in ipairs(e.args) do M.walk(a, fn) end end
  if e.a then M.walk(e.a, fn) end
  if e.b then M.walk(e.b, fn) end
end
-- }====

local function trim(s) return (s:match("^%s*(.-)%s*$")) end

-- Validates one entry against the native model; `known_fn(name)` says whether a call resolves.
local function parse_entry(e, line, file, native, known_fn)
  local name = type(e.name) == "string" and e.name or "?"
  local function bad(msg) error(string.format("%s:%d: %s: %s", file, line, name:match("^[^(]*"), msg), 0) end
  if type(e.name) ~= "string" then bad("entry has no 'name' (the op's exact schema)") end
  local s, err = schema.parse(e.name)
  if not s then bad(err) end
  local opname = s.name .. (s.overload ~= "" and ("." .. s.overload) or "")
  local f = native.by_name[opname]
  if not f or f.schema.text ~= s.text then
    bad("could not find a function for schema '" .. e.name .. "' in native_functions.yaml"
      .. (f and (" (it declares '" .. f.schema.text .. "')") or ""))
  end
  local r = { line = line, name = opname, schema = f.schema, func = f, keys = {}, nondiff = {}, file = file }
  local args, named = {}, {}
  for i, a in ipairs(s.args) do args[a.name] = { arg = a, index = i } end
  local rets = {}
  for i, ret in ipairs(s.returns) do
    rets[#s.returns == 1 and "result" or ("result" .. (i - 1))] = i
    if ret.name then rets[ret.name] = i end
  end
  local keys = {}
  for k in pairs(e) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = e[k]
    if k == "name" then -- done
    elseif k == "output_differentiability" then
      if type(v) ~= "table" then bad("'output_differentiability' must be a list of booleans") end
      for i, b in ipairs(v) do if type(b) ~= "boolean" then bad("output_differentiability[" .. i .. "] must be a boolean") end end
      if #v > #s.returns then bad("output_differentiability has " .. #v .. " entries for " .. #s.returns .. " returns") end
      r.output_differentiability = v
    elseif k == "dispatch" then bad("key 'dispatch' is not supported: sk has one Autograd key")
    elseif k:match("^result%d*$") or rets[k] then
      bad("forward-mode formulas ('" .. k .. "') are not supported: sk has reverse mode only")
    else
      if type(v) ~= "string" then bad("formula for '" .. k .. "' must be a string") end
      local names = {}
      for n in k:gmatch("[^,]+") do names[#names + 1] = trim(n) end
      for _, n in ipairs(names) do
        local a = args[n]
        if not a then bad("unknown key '" .. n .. "': it is not an argument of " .. opname) end
        if a.arg.type.base ~= "Tensor" then bad("'" .. n .. "' is not a Tensor argument of " .. opname) end
        if #names > 1 and a.arg.type.list then bad("key '" .. k .. "': the list '" .. n .. "' cannot share a formula") end
        if named[n] then bad("'" .. n .. "' has two formulas") end
        named[n] = true
      end
      if trim(v) == "non_differentiable" then
        for _, n in ipairs(names) do r.nondiff[n] = true end
      else
        local ast = M.parse_formula(v, bad)
        local uses_grad, uses_grads = false, false
        local what = "formula for '" .. k .. "'"
        M.walk(ast, function(x)
          if x.tag == "id" then
            if x.name == "grad" then uses_grad = true
            elseif x.name == "grads" then uses_grads = true -- all of them, as a list
            elseif not (args[x.name] or rets[x.name] or x.name == "true" or x.name == "false" or x.name == "grad_input_mask") then
              bad(what .. " uses '" .. x.name .. "', which is neither an argument nor a return of " .. opname)
            end
          elseif x.tag == "attr" then
            if not args[x.of] then bad(what .. " uses '" .. x.of .. "." .. x.attr .. "()', but '" .. x.of .. "' is not an argument") end
          elseif x.tag == "grads" then
            uses_grads = true
            if x.i >= #s.returns then bad("Out of bounds grads access: grads[" .. x.i .. "] of " .. #s.returns .. " returns") end
          elseif x.tag == "call" and x.fn == "not_implemented" then
            if not (#x.args == 1 and x.args[1].tag == "str") then bad("not_implemented takes the input's name as a string") end
          elseif x.tag == "call" and not known_fn(x.fn) then
            bad(what .. " calls '" .. x.fn .. "', which is neither a helper of sk_grad_helpers.h nor an op")
          end
        end)
        if uses_grad and uses_grads then bad(what .. " illegally mixes use of 'grad' and 'grads'") end
        -- one edge per input; the inputs of a shared formula (PyTorch's "input, weight, bias:") share
        -- one group: its formula returns a tuple, element i the gradient of inputs[i]
        local group = #names > 1 and { inputs = names, src = v, ast = ast } or nil
        for _, n in ipairs(names) do
          r.keys[#r.keys + 1] = { input = n, index = args[n].index, src = v, ast = ast, group = group }
        end
      end
    end
  end
  table.sort(r.keys, function(x, y) return x.index < y.index end)
  if #r.keys == 0 then bad("no formula for any input (an op without gradients needs no entry)") end
  return r
end

function M.load_string(text, file, native, known_fn)
  local ok, doc = pcall(lyaml.load, text)
  if not ok then error(file .. ":" .. tostring(doc), 0) end
  doc = doc or {}
  local lines = require("codegen.model").entry_lines(text, "name")
  local nkeys = 0
  for _ in pairs(type(doc) == "table" and doc or {}) do nkeys = nkeys + 1 end
  if type(doc) ~= "table" or #doc ~= #lines or nkeys ~= #doc then
    error(file .. ": expected a list of entries, each starting with '- name:' (found " .. #lines .. " '- name:' lines)", 0)
  end
  local entries, seen = {}, {}
  for i, e in ipairs(doc) do
    if type(e) ~= "table" then error(file .. ":" .. lines[i] .. ": entry is not a mapping", 0) end
    local r = parse_entry(e, lines[i], file, native, known_fn)
    if seen[r.name] then error(string.format("%s:%d: %s: a second entry (the first is at line %d)", file, r.line, r.name, seen[r.name]), 0) end
    seen[r.name] = r.line
    entries[#entries + 1] = r
  end
  return entries
end

function M.load(path, native, known_fn)
  local f, err = io.open(path, "r")
  if not f then error(tostring(err), 0) end
  local text = f:read("a")
  f:close()
  return M.load_string(text, path:match("[^/]*$"), native, known_fn)
end

return M
