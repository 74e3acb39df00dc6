-- sk.types: the one table of schema base types — what each is in C, in the boxed
-- convention and in Lua, and where a schema may use it.
-- Readers: sk.schema (the type names, defaults, and refusing what sk cannot carry),
-- codegen.ctypes (C types and the boxing expressions of generated code), codegen.emit
-- and sk.library (the SkArg row of an argument). The C binding converts by the C enum,
-- in one pair of functions (src/binding/lsk_value.c: lsk_read_value / lsk_push_value).
-- Invariants: rows are in the order of SkBaseType (src/dispatch/sk_dispatch.h), so a row's code
-- is its index - 1 (the generated binding table asserts each enum's value); a type
-- refused here is refused by codegen (with the YAML line) and by lib:define (with the
-- schema string) alike, because both call sk.schema.check_limits.
local M = {}

-- Fields of a row:
--   name, enum                  schema name, SkBaseType constant
--   lua                         what a Lua value of the type is (messages, docs)
--   ret, list, elem_optional    may be a return / a list T[] / a list of optionals T?[]
--   only_optional               may appear only as T? (its only value is None)
--   refused                     why sk refuses the type everywhere
--   default(text)               a default text is valid; element(text) for a list's elements
--   c, opt, list_c              C type; when optional (else c); of a list
--   unbox, none, push, present  codegen templates (see codegen.ctypes): C expression of a
--                               present value, of None, pushing one, testing presence
--   optunbox, optnone, optpush  the same for the optional C type when it differs
--   listunbox, listpush         a list argument; listown pushes a returned list (owned array),
--   listfield                   the SkValue field holding a list's array
local function number_text(d) return tonumber(d) ~= nil or d == "inf" or d == "-inf" or d == "nan" end
local function int_text(d) return math.tointeger(tonumber(d)) ~= nil end
local function bool_text(d) return d == "True" or d == "False" end
local function quoted(d) return d:match('^".*"$') or d:match("^'.*'$") end

-- the dtype names a ScalarType default may use (PyTorch's and sk's)
local DTYPES = {}
for d in ("bool uint8 int8 int16 int32 int64 float16 bfloat16 float32 float64 float double half long int short "
          .. "byte char"):gmatch("%S+") do DTYPES[d] = true end

-- Values of the enums sk passes as integers: position - 1 is the value (PyTorch's numbering).
M.LAYOUTS = { "strided" }
M.MEMORY_FORMATS = { "contiguous_format", "preserve_format", "channels_last", "channels_last_3d" }
local function one_of(list)
  local set = {}
  for _, n in ipairs(list) do set[n] = true end
  return function(d) return set[d] ~= nil end
end

M.rows = {
  { name = "Tensor", enum = "SK_T_TENSOR", lua = "a tensor", ret = true, list = true, elem_optional = true,
    c = "const SkTensor *", list_c = "SkTensorList", unbox = "%s.u.t", none = "NULL",
    push = "sk_push_tensor_borrowed(%s, %s)", present = "%s != NULL",
    listunbox = "sk_value_tensorlist(&%s)", listpush = "sk_push_tensorlist(%s, %s.data, %s.n)",
    listown = "sk_push_tensorlist_owned(%s, (SkTensor **)%s.data, %s.n)", listfield = "tensors" },
  { name = "int", enum = "SK_T_INT", lua = "an integer", ret = true, list = true, default = int_text, element = int_text,
    c = "int64_t", opt = "SkOptInt", list_c = "SkIntList", unbox = "%s.u.i", push = "sk_push_int(%s, %s)",
    optunbox = "(SkOptInt){1, %s.u.i}", optnone = "(SkOptInt){0, 0}", optpush = "sk_push_int(%s, %s.v)", present = "%s.has",
    listunbox = "sk_value_intlist(&%s)", listpush = "sk_push_intlist(%s, %s.data, %s.n)",
    listown = "sk_push_intlist_owned(%s, (int64_t *)%s.data, %s.n)", listfield = "ints" },
  { name = "float", enum = "SK_T_FLOAT", lua = "a number", ret = true, list = true, default = number_text, element = number_text,
    c = "double", opt = "SkOptDouble", list_c = "SkDoubleList", unbox = "%s.u.d", push = "sk_push_double(%s, %s)",
    optunbox = "(SkOptDouble){1, %s.u.d}", optnone = "(SkOptDouble){0, 0}", optpush = "sk_push_double(%s, %s.v)",
    present = "%s.has", listunbox = "(SkDoubleList){%s.u.doubles, %s.n}", listpush = "sk_push_doublelist(%s, %s.data, %s.n)",
    listown = "sk_push_doublelist_owned(%s, (double *)%s.data, %s.n)", listfield = "doubles" },
  { name = "bool", enum = "SK_T_BOOL", lua = "a boolean", ret = true, list = true, default = bool_text, element = bool_text,
    c = "int", list_c = "SkIntList", unbox = "%s.u.b", none = "-1", push = "sk_push_bool(%s, %s)", present = "%s >= 0",
    listunbox = "sk_value_intlist(&%s)", listpush = "sk_push_boollist(%s, %s.data, %s.n)",
    listown = "sk_push_boollist_owned(%s, (int64_t *)%s.data, %s.n)", listfield = "ints" },
  -- not a return: a string is borrowed for the length of a call, and a result outlives it
  { name = "str", enum = "SK_T_STR", lua = "a string", default = quoted,
    c = "const char *", unbox = "%s.u.str", none = "NULL", push = "sk_push_string(%s, %s)", present = "%s != NULL" },
  { name = "Scalar", enum = "SK_T_SCALAR", lua = "a number or boolean", ret = true,
    default = function(d) return number_text(d) or bool_text(d) end,
    c = "SkScalar", unbox = "sk_value_scalar(&%s)", none = "(SkScalar){SK_SCALAR_NONE, {0}}",
    push = "sk_push_scalar(%s, %s)", present = "%s.kind != SK_SCALAR_NONE" },
  { name = "ScalarType", enum = "SK_T_SCALAR_TYPE", lua = 'a dtype name such as "float32"', ret = true,
    default = function(d) return DTYPES[d] end,
    c = "SkDType", opt = "int", unbox = "%s.u.dtype", optunbox = "(int)%s.u.dtype", none = "-1",
    push = "sk_push_dtype(%s, (SkDType)%s)", present = "%s >= 0" },
  { name = "Layout", enum = "SK_T_LAYOUT", lua = 'a layout name ("strided")', ret = true, default = one_of(M.LAYOUTS),
    c = "int", unbox = "(int)%s.u.i", none = "-1", push = "sk_push_int(%s, %s)", present = "%s >= 0" },
  { name = "Device", enum = "SK_T_DEVICE", lua = 'a device name such as "cpu"', ret = true, default = quoted,
    c = "SkDevice", unbox = "%s.u.device", none = "sk_device(-1, 0)", push = "sk_push_device(%s, %s)",
    present = "%s.type >= 0" },
  { name = "MemoryFormat", enum = "SK_T_MEMORY_FORMAT", ret = true, default = one_of(M.MEMORY_FORMATS),
    lua = 'a memory format name ("contiguous_format", "preserve_format", "channels_last" or "channels_last_3d")',
    c = "int", unbox = "(int)%s.u.i", none = "-1", push = "sk_push_int(%s, %s)", present = "%s >= 0" },
  -- sk has no generator objects: a Generator? argument is always None (the global generator)
  { name = "Generator", enum = "SK_T_GENERATOR", lua = "nil (sk has no generator objects)", only_optional = true,
    c = "void *", unbox = "NULL", none = "NULL", push = "sk_push_none(%s)", present = "0 && %s" },
  { name = "Dimname", refused = "sk has no named tensors" },
}

M.by_name = {}
for i, r in ipairs(M.rows) do
  r.code = r.enum and i - 1
  M.by_name[r.name] = r
end
M.by_name.SymInt = M.by_name.int -- SymInt is int: sk has no symbolic shapes

local function list_names()
  local t = {}
  for _, r in ipairs(M.rows) do if r.list then t[#t + 1] = r.name end end
  return table.concat(t, ", ")
end

-- Why T (a record of sk.schema.parse_type) cannot be `role` ("argument" or "return"), or nil.
function M.refusal(T, role)
  local r = M.by_name[T.base]
  if r.refused then return r.refused end
  if role == "return" and not r.ret then
    return r.name .. " cannot be returned" .. (r.name == "str" and " (sk borrows strings for the length of a call)" or "")
  end
  if T.list and not r.list then return "sk has lists of " .. list_names() .. " only" end
  if T.elem_optional and not r.elem_optional then return "only a Tensor?[] list may hold None" end
  if r.only_optional and not T.optional then return r.name .. " must be optional (" .. r.lua .. ")" end
end

-- The fields of the SkArg row of argument or return `a` (alias_of: the aliased argument's
-- index, 0-based, or -1), in the order of the struct.
function M.skarg(a, alias_of)
  local T = a.type
  local function b(x) return x and 1 or 0 end
  return { name = a.name or "", type = M.by_name[T.base].code, enum = M.by_name[T.base].enum, is_list = b(T.list),
           optional = b(T.optional), elem_optional = b(T.elem_optional), kwarg_only = b(a.kwarg_only),
           is_out = b(a.is_out), is_write = b(T.alias and T.alias.write), is_alias = b(T.alias),
           list_size = T.list and T.list.size or 0, alias_of = alias_of or -1, default = a.default }
end
M.SKARG_FIELDS = { "name", "enum", "is_list", "optional", "elem_optional", "kwarg_only", "is_out", "is_write",
                   "is_alias", "list_size", "alias_of", "default" }

-- 0-based index of the argument whose alias set return i of schema s shares, or -1.
function M.alias_of(s, i)
  local set = s.returns[i].type.alias and s.returns[i].type.alias.set
  local found = -1
  for j, a in ipairs(s.args) do
    if set and a.type.alias and a.type.alias.set == set then found = j - 1 end
  end
  return found
end

return M
