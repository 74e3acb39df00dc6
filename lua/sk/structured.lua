-- sk.structured: which kernels each member of a structured family gets — the one rule,
-- read by codegen (for the generated families) and sk.library (for lib:structured).
local M = {}

-- kind: "functional" | "inplace" | "out"; impl_keys: the backend keys with a kernel of the
-- out op, in a fixed order. Every member gets one per backend and Meta's (from the meta
-- function); functional and in-place also DefaultBackend's, which calls the out op
-- through the dispatcher (so a backend with only the out kernel gets all three).
function M.kernel_keys(kind, impl_keys)
  local keys = {}
  for _, k in ipairs(impl_keys) do keys[#keys + 1] = k end
  keys[#keys + 1] = "Meta"
  if kind ~= "out" then keys[#keys + 1] = "DefaultBackend" end
  return keys
end

return M
