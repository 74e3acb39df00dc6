-- codegen.lua — native_functions.yaml -> build/gen/*.c, *.h
-- Usage: lua5.4 codegen.lua [yaml] [outdir]. Files are rewritten only when their
-- text changes, so make rebuilds only what depends on a changed file.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local model = require "codegen.model"
local emit = require "codegen.emit"

local yaml_path = arg[1] or "native_functions.yaml"
local outdir = arg[2] or "build/gen"

local ok, m = pcall(model.load, yaml_path)
if not ok then io.stderr:write(tostring(m), "\n") os.exit(1) end

os.execute("mkdir -p '" .. outdir .. "'")
local files = emit.files(m)
local names = {}
for name in pairs(files) do names[#names + 1] = name end
table.sort(names)
for _, name in ipairs(names) do
  local path = outdir .. "/" .. name
  local f = io.open(path, "rb")
  local old = f and f:read("a")
  if f then f:close() end
  if old ~= files[name] then
    f = assert(io.open(path, "wb"))
    f:write(files[name])
    f:close()
  end
end
