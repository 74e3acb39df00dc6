-- codegen.ctypes: schema types -> C types, and the boxing of each to and from SkValue.
-- Invariant: the C types and boxing templates are the rows of sk.types (one per schema
-- base type); every emitter asks this module, so the unboxed signature, the adapters and
-- the C data agree by construction.
local types = require "sk.types"

local M = {}

local function row(T)
  local r = types.by_name[T.base]
  if not (r and r.c) then error("codegen: no C mapping for schema type " .. T.base, 0) end
  return r
end

function M.is_tensor(T) return T.base == "Tensor" end
function M.is_mutable(T) return T.alias ~= nil and T.alias.write end

function M.ctype(T)
  local r = row(T)
  if T.list then return r.list_c end
  if T.base == "Tensor" then return M.is_mutable(T) and "SkTensor *" or "const SkTensor *" end
  if T.optional and r.opt then return r.opt end
  return r.c
end

-- C expression reading stack value `v` (an SkValue lvalue) as type T.
function M.unbox(T, v)
  local r = row(T)
  if T.list then
    local present = r.listunbox:format(v, v)
    return T.optional and ("(%s.tag == SK_VAL_NONE ? (%s){NULL, 0} : %s)"):format(v, r.list_c, present) or present
  end
  if T.base == "Tensor" then
    return ("(%s.tag == SK_VAL_TENSOR ? %s.u.t : NULL)"):format(v, v)
  end
  if T.optional then
    local some = (r.optunbox or r.unbox):format(v)
    return ("(%s.tag == SK_VAL_NONE ? %s : %s)"):format(v, r.optnone or r.none, some)
  end
  return r.unbox:format(v)
end

-- C statement fragment (an int expression, 0 on success) pushing C value x of type T.
function M.push(T, s, x)
  local r = row(T)
  if T.list then
    local p = r.listpush:format(s, x, x)
    if T.optional then return ("(%s.data != NULL ? %s : sk_push_none(%s))"):format(x, p, s) end
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

-- C statement fragment pushing returned list x of type T, whose array the stack takes (malloc'd).
function M.push_owned(T, s, x)
  local p = row(T).listown:format(s, x, x)
  if T.optional then return ("(%s.data != NULL ? %s : sk_push_none(%s))"):format(x, p, s) end
  return p
end

-- C statement moving list value v (an SkValue lvalue) of type T into *dst, which then owns the array.
function M.take_list(T, dst, v)
  return ("if (%s.tag == SK_VAL_NONE) { %s->data = NULL; %s->n = 0; } else { %s->data = %s.u.%s; %s->n = %s.n; %s.tag = SK_VAL_NONE; }")
    :format(v, dst, dst, dst, v, row(T).listfield, dst, v, v)
end

-- C type of a result pointer for a non-aliasing return.
function M.ret_ctype(T)
  if T.base == "Tensor" then return T.list and "SkTensorList *" or "SkTensor **" end
  return M.ctype(T) .. " *"
end

-- SkBaseType enum name of a base type.
function M.enum(T) return row(T).enum end

return M
