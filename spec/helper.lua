-- spec/helper.lua — shared by the specs: load sk from the build tree, compare values.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
-- SK_BUILD names another build tree (`make sanitize` runs the specs against build-san).
local BUILD = os.getenv("SK_BUILD") or "build"
package.cpath = BUILD .. "/?.so;" .. package.cpath
local M = {}
M.build = BUILD
M.sk = require "sk"

-- SK_SPEC_SAMPLE=k: the suites that repeat one mechanism over many generated cases (the
-- conformance targets, gradcheck's rows) run every k-th (memcheck-spec: valgrind's 30x is
-- spent on breadth, the plain and sanitizer runs take them all). sampled(i, shift): whether
-- case i runs; a suite shifts by its part (a target's number) so the parts cover every case.
M.sample = math.max(1, math.tointeger(tonumber(os.getenv("SK_SPEC_SAMPLE") or "1")) or 1)
function M.sampled(i, shift) return (i + (shift or 0)) % M.sample == 0 end

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

-- Deterministic pseudo-random numbers in [lo, hi) with a short decimal expansion.
function M.lcg(seed)
  local s = seed
  return function(lo, hi)
    s = (s * 1103515245 + 12345) % 2147483648
    return lo + (hi - lo) * (s % 1000) / 1000
  end
end

-- rows x cols table of f(i, j), i and j 0-based.
function M.grid(rows, cols, f)
  local t = {}
  for i = 0, rows - 1 do
    t[i + 1] = {}
    for j = 0, cols - 1 do t[i + 1][j + 1] = f(i, j) end
  end
  return t
end

-- A tensor of shape `shape` (float64 unless dtype) whose element k (row-major, 0-based) is f(k).
function M.filled(shape, f, dtype)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local v = {}
  for k = 0, n - 1 do v[k + 1] = f(k) end
  return M.sk.tensor(v, { dtype = dtype or "float64" }):reshape(shape)
end

-- A tensor's elements as a flat Lua list, row-major.
function M.flat(t) return t:contiguous():reshape({ -1 }):totable() end

-- An empty Meta tensor.
function M.meta(shape, dtype) return M.sk.empty(shape, { device = "meta", dtype = dtype }) end

-- m, computed on Meta, has the device "meta" and the shape and dtype of cpu.
function M.same_meta(cpu, m)
  local check = require "luassert"
  check.equal("meta", m:device())
  check.same(cpu:shape(), m:shape())
  check.equal(cpu:dtype(), m:dtype())
end

-- For each case {name, fn}: fn(make) on Meta tensors gives the shape and dtype of fn(make) on the CPU.
function M.assert_meta_like_cpu(cases, cpu, meta)
  local check = require "luassert"
  for _, c in ipairs(cases) do
    local want, got = c[2](cpu), c[2](meta)
    check.equal("meta", got:device(), c[1])
    check.same(want:shape(), got:shape(), c[1])
    check.equal(want:dtype(), got:dtype(), c[1])
  end
end

-- The error message of fn(...), or fails when it does not raise.
function M.err(fn, ...)
  local ok, e = pcall(fn, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end

-- Runs `command` (a lua5.4 command line, or a program embedding Lua) in a shell that finds this
-- build's sk, after `prefix` (environment settings, `ulimit`...); its stdout and stderr, and its
-- exit status (0 on success).
function M.run_child(command, prefix)
  local p = assert(io.popen(string.format('%sLUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="%s/?.so;;" %s 2>&1',
                                          prefix or "", BUILD, command)))
  local out = p:read("a")
  local ok, _, rc = p:close()
  return out, ok and 0 or rc
end

-- The op name an error message repeats after its prefix ("sk.tril: tril: ", "Tensor:random_:
-- random_: ", "sk.linalg_inv: linalg.inv: ", "sk.clamp: torch.clamp: ", also behind a
-- context such as "sk.plan: cannot record 'aten::tril': "), or nil. The names compare as
-- sk_error_drop_self compares them.
local function op_name(name) return (name:gsub("^torch%.", ""):gsub("^_", ""):gsub("_$", ""):gsub("%.", "_")) end
function M.doubled_prefix(msg)
  msg = msg:gsub("^[^\n]-:%d+: ", "")
  local outer = msg:match("^([%w_.:]+): ")
  if not outer then return nil end
  local op = op_name(outer:gsub("^sk%.", ""):gsub("^Tensor:", ""):gsub("^aten::", ""))
  for inner in (": " .. msg:sub(#outer + 3)):gmatch(": ([%w_.]+): ") do
    if op_name(inner) == op then return inner end
  end
end

-- The include flags of a source layer ("core", ..., "ops", "binding"), as the Makefile gives them.
function M.layer_flags(layer)
  local p = assert(io.popen("MAKEFLAGS= make --no-print-directory -s print-inc-" .. layer))
  local flags = p:read("l")
  p:close()
  return flags
end

return M
