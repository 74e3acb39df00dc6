-- codegen.ctypes: schema types -> C types, and the boxing of each to and from SkValue.
-- Invariant: one table row per schema base type; every emitter asks this module,
-- so the unboxed signature, the adapters and the C data agree by construction.
local M = {}

-- base -> { c = plain C type, opt = C type when optional, list = C type of a list,
--           unbox = fmt(v) for a present value, none = C expr for None,
--           push = fmt(s, x) for a present value, present = fmt(x) test for optional }
local ROWS = {
  Tensor = { c = "const SkTensor *", list = "SkTensorList", unbox = "%s.u.t", none = "NULL",
             push = "sk_push_tensor_borrowed(%s, %s)", present = "%s != NULL",
             listunbox = "sk_value_tensorlist(&%s)", listpush = "sk_push_tensorlist(%s, %s.data, %s.n)" },
  int = { c = "int64_t", opt = "SkOptInt", list = "SkIntList", unbox = "%s.u.i",
          push = "sk_push_int(%s, %s)", optunbox = "(SkOptInt){1, %s.u.i}", optnone = "(SkOptInt){0, 0}",
          optpush = "sk_push_int(%s, %s.v)", present = "%s.has",
          listunbox = "sk_value_intlist(&%s)", listnone = "(SkIntList){NULL, 0}",
          listpush = "sk_push_intlist(%s, %s.data, %s.n)", listpresent = "%s.data != NULL" },
  float = { c = "double", opt = "SkOptDouble", list = "SkDoubleList", unbox = "%s.u.d",
            push = "sk_push_double(%s, %s)", optunbox = "(SkOptDouble){1, %s.u.d}", optnone = "(SkOptDouble){0, 0}",
            optpush = "sk_push_double(%s, %s.v)", present = "%s.has",
            listunbox = "(SkDoubleList){%s.u.doubles, %s.n}", listpush = "sk_push_doublelist(%s, %s.data, %s.n)" },
  bool = { c = "int", opt = "int", list = "SkIntList", unbox = "%s.u.b", none = "-1", push = "sk_push_bool(%s, %s)",
           present = "%s >= 0", listunbox = "sk_value_intlist(&%s)", listpush = "sk_push_boollist(%s, %s.data, %s.n)" },
  str = { c = "const char *", unbox = "%s.u.str", none = "NULL", push = "sk_push_string(%s, %s)", present = "%s != NULL" },
  Scalar = { c = "SkScalar", unbox = "sk_value_scalar(&%s)", none = "(SkScalar){SK_SCALAR_NONE, {0}}",
             push = "sk_push_scalar(%s, %s)", present = "%s.kind != SK_SCALAR_NONE" },
  ScalarType = { c = "SkDType", opt = "int", unbox = "%s.u.dtype", none = "-1",
                 push = "sk_push_dtype(%s, (SkDType)%s)", present = "%s >= 0" },
  Layout = { c = "int", unbox = "(int)%s.u.i", none = "-1", push = "sk_push_int(%s, %s)", present = "%s >= 0" },
  MemoryFormat = { c = "int", unbox = "(int)%s.u.i", none = "-1", push = "sk_push_int(%s, %s)", present = "%s >= 0" },
  Device = { c = "SkDevice", unbox = "%s.u.device", none = "sk_device(-1, 0)",
             push = "sk_push_device(%s, %s)", present = "%s.type >= 0" },
  Generator = { c = "void *", unbox = "NULL", none = "NULL", push = "sk_push_none(%s)", present = "0 && %s" },
}
ROWS.SymInt = ROWS.int

local function row(T)
  local r = ROWS[T.base]
  if not r then error("codegen: no C mapping for schema type " .. T.base, 0) end
  return r
end

function M.is_tensor(T) return T.base == "Tensor" end
function M.is_mutable(T) return T.alias ~= nil and T.alias.write end

function M.ctype(T)
  local r = row(T)
  if T.list then return r.list end
  if T.base == "Tensor" then return M.is_mutable(T) and "SkTensor *" or "const SkTensor *" end
  if T.optional and r.opt then return r.opt end
  return r.c
end

-- C expression reading stack value `v` (an SkValue lvalue) as type T.
function M.unbox(T, v)
  local r = row(T)
  if T.list then
    local present = r.listunbox:format(v, v)
    return T.optional and ("(%s.tag == SK_VAL_NONE ? %s : %s)"):format(v, r.listnone or "(SkIntList){NULL, 0}", present) or present
  end
  if T.base == "Tensor" then
    return ("(%s.tag == SK_VAL_TENSOR ? %s.u.t : NULL)"):format(v, v)
  end
  if T.optional then
    local some = r.optunbox and r.optunbox:format(v) or
      (T.base == "ScalarType" and ("(int)%s.u.dtype"):format(v) or r.unbox:format(v))
    return ("(%s.tag == SK_VAL_NONE ? %s : %s)"):format(v, r.optnone or r.none, some)
  end
  return r.unbox:format(v)
end

-- C statement fragment (an int expression, 0 on success) pushing C value x of type T.
function M.push(T, s, x)
  local r = row(T)
  if T.list then
    local p = r.listpush:format(s, x, x)
    if T.optional then return ("(%s ? %s : sk_push_none(%s))"):format((r.listpresent or "%s.data != NULL"):format(x), p, s) end
    return p
  end
  if T.base == "Tensor" then
    -- the typed entries reject a NULL required tensor before they box
    return (T.optional and r.push or "sk_push_tensor_present(%s, %s)"):format(s, x)
  end
  if T.optional then
    local p = (r.optpush or r.push):format(s, x)
    return ("(%s ? %s : sk_push_none(%s))"):format(r.present:format(x), p, s)
  end
  return r.push:format(s, x)
end

-- C type of a result pointer for a non-aliasing return.
function M.ret_ctype(T)
  if T.base == "Tensor" then return T.list and "SkTensorList *" or "SkTensor **" end
  local r = row(T)
  return r.c .. " *"
end

-- SkBaseType enum name of a base type.
local ENUM = { Tensor = "SK_T_TENSOR", int = "SK_T_INT", SymInt = "SK_T_INT", float = "SK_T_FLOAT", bool = "SK_T_BOOL",
  str = "SK_T_STR", Scalar = "SK_T_SCALAR", ScalarType = "SK_T_SCALAR_TYPE", Layout = "SK_T_LAYOUT",
  Device = "SK_T_DEVICE", MemoryFormat = "SK_T_MEMORY_FORMAT", Generator = "SK_T_GENERATOR", Dimname = "SK_T_DIMNAME" }
function M.enum(T) return ENUM[T.base] end

return M
