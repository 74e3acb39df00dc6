-- codegen.lua — native_functions.yaml and derivatives.yaml -> build/gen/*.c, *.h
-- Usage: lua5.4 codegen.lua [yaml] [outdir] [ops.md] [derivatives.yaml]. Files are rewritten only when their
-- text changes, so make rebuilds only what depends on a changed file; a shard (sk_ops_K.c)
-- left by a build with more shards is removed.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local model = require "codegen.model"
local emit = require "codegen.emit"
local derivatives = require "codegen.derivatives"
local autograd = require "codegen.autograd"

local yaml_path = arg[1] or "native_functions.yaml"
local outdir = arg[2] or "build/gen"
local docs_path = arg[3] or "docs/ops.md"
local deriv_path = arg[4] or (yaml_path:match("^(.*/)") or "") .. "derivatives.yaml"
local HELPERS = "src/autograd/sk_grad_helpers.h"

local ok, m = pcall(model.load, yaml_path)
if not ok then io.stderr:write(tostring(m), "\n") os.exit(1) end
local helpers = autograd.read_helpers(HELPERS)
local entries = {}
local df = io.open(deriv_path, "r") -- a native_functions.yaml of a spec may come without one
if df or arg[4] then
  if df then df:close() end
  ok, entries = pcall(derivatives.load, deriv_path, m, autograd.known_fn(m, helpers))
  if not ok then io.stderr:write(tostring(entries), "\n") os.exit(1) end
end

os.execute("mkdir -p '" .. outdir .. "'")
local files = emit.files(m)
ok, files["sk_autograd_gen.c"] = pcall(autograd.file, entries, m, helpers)
if not ok then io.stderr:write(tostring(files["sk_autograd_gen.c"]), "\n") os.exit(1) end
local names = {}
for name in pairs(files) do names[#names + 1] = name end
table.sort(names)
local function write_if_changed(path, text)
  local f = io.open(path, "rb")
  local old = f and f:read("a")
  if f then f:close() end
  if old ~= text then
    f = assert(io.open(path, "wb"))
    f:write(text)
    f:close()
  end
end

write_if_changed(docs_path, emit.ops_doc(m))
for _, name in ipairs(names) do
  write_if_changed(outdir .. "/" .. name, files[name])
end
-- a shard no longer generated (the count shrank) would be stale: remove it
local ls = assert(io.popen("ls '" .. outdir .. "'"))
for name in ls:lines() do
  if name:match("^sk_ops_%d+%.c$") and not files[name] then assert(os.remove(outdir .. "/" .. name)) end
end
ls:close()
