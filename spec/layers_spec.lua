-- spec/layers_spec.lua — the folders are layers, and the include paths keep them apart:
-- every header compiles alone with its own layer's flags, and no layer sees a higher one's.
local LAYERS = { "core", "dispatch", "structured", "ops", "autograd", "binding" }
local HEADER_OF = { -- a header of each layer, to probe the layers below it with
  core = "sk_tensor.h", dispatch = "sk_dispatch.h", structured = "sk_structured.h", ops = "sk_cpu_fallback.h",
  autograd = "sk_autograd.h", binding = "lsk.h" }
local FOLDERS = { core = { "src/core" }, dispatch = { "src/dispatch" }, structured = { "src/structured" },
                  ops = { "src/ops", "kernels/cpu" }, autograd = { "src/autograd" }, binding = { "src/binding" } }

local inc = require("spec.helper").layer_flags

local function compiles(flags, header)
  local src = os.tmpname() .. ".c"
  local f = assert(io.open(src, "w"))
  f:write('#include "', header, '"\nint sk_layers_probe;\n')
  f:close()
  local ok = os.execute(string.format("cc -std=gnu11 -fsyntax-only %s %s 2>/dev/null", flags, src))
  os.remove(src)
  return ok == true
end

describe("the layers #build", function()
  local flags = {}
  setup(function() for _, l in ipairs(LAYERS) do flags[l] = inc(l) end end)

  it("compile every header alone with its own layer's include paths", function()
    for _, l in ipairs(LAYERS) do
      for _, dir in ipairs(FOLDERS[l]) do
        local p = assert(io.popen("ls " .. dir .. "/*.h"))
        for path in p:lines() do
          assert(compiles(flags[l], path:match("[^/]+$")), path .. " does not compile with the " .. l .. " layer's paths")
        end
        p:close()
      end
    end
  end)

  it("keep kernels from calling the dispatcher: no file under kernels/ includes sk_ops.h", function()
    -- a kernel is what the dispatcher calls; what it needs (a dense or broadcast copy) it does itself
    local p = assert(io.popen("grep -l '#include \"sk_ops.h\"' kernels/*/* 2>/dev/null"))
    local found = p:read("a")
    p:close()
    assert.equal("", found)
  end)

  it("keep each layer from including a higher layer's header", function()
    for i, low in ipairs(LAYERS) do
      for j = i + 1, #LAYERS do
        local high = LAYERS[j]
        assert(not compiles(flags[low], HEADER_OF[high]),
               string.format("the %s layer can include %s (of the %s layer)", low, HEADER_OF[high], high))
      end
    end
  end)
end)
