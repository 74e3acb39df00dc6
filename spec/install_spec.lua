-- spec/install_spec.lua — `make install` puts sk where lua5.4 finds it from any folder
describe("make install #build", function()
  it("installs the Lua files and the C module under PREFIX", function()
    local dest = os.tmpname()
    os.remove(dest)
    assert.is_true(os.execute("make -s install DESTDIR=" .. dest .. " >/dev/null"))
    local share, lib = dest .. "/usr/local/share/lua/5.4", dest .. "/usr/local/lib/lua/5.4"
    assert.truthy(io.open(share .. "/sk/init.lua"))
    assert.truthy(io.open(lib .. "/sk/core.so"))
    -- from another folder, with only the install tree on the paths (as /usr/local is by default)
    local cmd = string.format("cd / && LUA_PATH='%s/?.lua;%s/?/init.lua' LUA_CPATH='%s/?.so' lua5.4 -e " ..
      "'local sk = require \"sk\"; io.write(tostring(sk.ones(3):sum():item()))'", share, share, lib)
    local p = io.popen(cmd)
    local out = p:read("a")
    p:close()
    assert.equal("3.0", out)
    os.execute("rm -rf " .. dest)
  end)
end)
