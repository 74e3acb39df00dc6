-- codegen.names: the C names of ops, their kernels, meta functions and parameters.
-- Invariant: every generated identifier comes from here, so a name is spelled once.
local M = {}

-- Static-symbol id: "add_Tensor", "add__Tensor", "neg".
function M.uid(s) return s.overload ~= "" and (s.name .. "_" .. s.overload) or s.name end

-- Public C API name: the "Tensor" (or empty) overload is the plain name.
function M.cname(s)
  if s.overload == "" or s.overload == "Tensor" then return "sk_" .. s.name end
  return "sk_" .. s.name .. "_" .. s.overload
end

-- The structured runtime's descriptor of a structured op.
function M.desc(s) return "sk_sd_" .. M.uid(s) end
-- The boxed adapters of a structured out op's meta function and CPU kernel (sk_structured_builtin).
function M.builtin_meta(s) return "sk_smeta_" .. M.uid(s) end
function M.builtin_impl(s) return "sk_simpl_" .. M.uid(s) end

function M.qualname(s) return s.namespace .. "::" .. s.name .. (s.overload ~= "" and ("." .. s.overload) or "") end

-- Meta function of a structured out op: the overload without its "out" parts.
function M.meta_fn(s)
  local parts = {}
  for p in s.overload:gmatch("[^_]+") do if p ~= "out" then parts[#parts + 1] = p end end
  return "sk_meta_" .. s.name .. (#parts > 0 and ("_" .. table.concat(parts, "_")) or "")
end

local backends = require "codegen.backends"
-- Keys that are not backends; the backends' come from codegen.backends.
local PREFIX = { Meta = "sk_meta_kernel_", DefaultBackend = "sk_default_", Math = "sk_math_", BackendSelect = "sk_bs_" }
local KEY_ENUM = { Meta = "SK_KEY_META", DefaultBackend = "SK_KEY_DEFAULT_BACKEND", Math = "SK_KEY_MATH",
                   BackendSelect = "SK_KEY_BACKEND_SELECT" }
for _, b in ipairs(backends) do
  PREFIX[b.key] = b.prefix
  KEY_ENUM[b.key] = "SK_KEY_" .. b.key:upper()
end
function M.kernel(key, name) return assert(PREFIX[key], key) .. name end
function M.key_enum(key) return assert(KEY_ENUM[key], key) end

local C_KEYWORDS = {}
for w in ([[auto break case char const continue default do double else enum extern float for goto if inline int
  long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
  result s v k op rc m it]]):gmatch("%S+") do C_KEYWORDS[w] = true end
-- A schema argument name usable as a C parameter (never clashes with generated locals).
function M.param(name) return C_KEYWORDS[name] and (name .. "_") or name end

return M
