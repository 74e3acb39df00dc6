-- spec/install_spec.lua — `make install` puts sk where lua5.4 finds it from any folder.
-- It installs the current build (`make install-files`, what `make install` runs after `make all`),
-- so the spec rebuilds nothing and writes only under a temporary DESTDIR.
describe("make install #build", function()
  it("installs the Lua files and the C module under PREFIX", function()
    assert.equal(0, select(3, os.execute("MAKEFLAGS= make --no-print-directory -q all")), "the build is not current: run make first")
    local dest = os.tmpname()
    os.remove(dest)
    assert.is_true(os.execute("MAKEFLAGS= make --no-print-directory -s install-files DESTDIR=" .. dest .. " >/dev/null"))
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
