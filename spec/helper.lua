-- spec/helper.lua — shared by the specs: load sk from the build tree, compare values.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local M = {}
M.sk = require "sk"

-- Deep comparison of nested tables of numbers with a tolerance.
function M.close(a, b, tol)
  tol = tol or 1e-5
  if type(a) == "table" then
    if type(b) ~= "table" or #a ~= #b then return false end
    for i = 1, #a do if not M.close(a[i], b[i], tol) then return false end end
    return true
  end
  if type(a) == "number" and type(b) == "number" then
    if a ~= a then return b ~= b end
    return math.abs(a - b) <= tol * math.max(1, math.abs(b))
  end
  return a == b
end

function M.assert_close(got, want, tol)
  if not M.close(got, want, tol) then
    error(string.format("values differ:\n got  %s\n want %s", M.dump(got), M.dump(want)), 2)
  end
end

function M.dump(v)
  if type(v) ~= "table" then return tostring(v) end
  local t = {}
  for i = 1, #v do t[i] = M.dump(v[i]) end
  return "{" .. table.concat(t, ", ") .. "}"
end

-- The error message of fn(...), or fails when it does not raise.
function M.err(fn, ...)
  local ok, e = pcall(fn, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end

return M
