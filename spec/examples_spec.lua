-- spec/examples_spec.lua — the extension examples run, each in its own lua5.4 process
-- (a C backend loads once per process), and docs/extending.md quotes them verbatim.
local source = debug.getinfo(1, "S").source:gsub("^@", "")
local root = source:match("^(.*)/spec/[^/]*$") or "."
if root == "spec" then root = "." end

local function read(path)
  local f = assert(io.open(root .. "/" .. path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function sh_quote(s) return "'" .. s:gsub("'", [['\'']]) .. "'" end

-- Runs a script from the repository root against the build tree; returns ok, exit code, output.
local BUILD = os.getenv("SK_BUILD") or "build"
local function run(script)
  local cmd = "cd " .. sh_quote(root) .. " && LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='" .. BUILD .. "/?.so;;' lua5.4 "
              .. sh_quote(script) .. " 2>&1"
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local ok, _, code = p:close()
  return ok, code, out
end

describe("examples/extending", function()
  for _, name in ipairs { "custom_op", "structured_op", "backend_lua", "backend_c" } do
    -- backend_c.lua loads build/examples/sk_cbackend.so by that path: #build (c_backend_spec covers SK_BUILD's)
    it(name .. ".lua runs and exits with status 0" .. (name == "backend_c" and " #build" or ""), function()
      if name == "backend_c" then
        local f = io.open(root .. "/build/examples/sk_cbackend.so", "rb")
        assert(f, "build/examples/sk_cbackend.so is missing: run `make build/examples/sk_cbackend.so`")
        f:close()
      end
      local ok, code, out = run("examples/extending/" .. name .. ".lua")
      assert(ok and code == 0, string.format("%s.lua exited with status %s:\n%s", name, tostring(code), out))
    end)
  end
end)

describe("docs/extending.md", function()
  -- every code block preceded by <!-- quote: PATH --> is a verbatim excerpt of PATH
  it("quotes the examples verbatim", function()
    local doc = read("docs/extending.md")
    local n = 0
    for path, block in doc:gmatch("<!%-%- quote: (%S+) %-%->\n```%w*\n(.-\n)```") do
      n = n + 1
      local text = read(path)
      assert(text:find(block, 1, true), "docs/extending.md quotes " .. path .. " but this block is not in it:\n" .. block)
    end
    local _, markers = doc:gsub("<!%-%- quote:", "")
    assert(n == markers, "a quote marker is not followed by a fenced code block")
    assert(n >= 8, "expected the guide to quote the examples, found " .. n .. " quoted blocks")
  end)
end)
