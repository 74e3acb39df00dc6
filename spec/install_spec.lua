-- spec/install_spec.lua — `make install` puts sk where lua5.4 finds it from any folder.
-- It installs the current build (`make install-files`, what `make install` runs after `make all`),
-- so the spec rebuilds nothing and writes only under a temporary DESTDIR.
describe("make install #build", function()
  it("installs the Lua files, the C module and the public headers under PREFIX", function()
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
    -- the out-of-tree backend example builds against the installed headers alone, and the
    -- installed sk loads it
    local inc, so = dest .. "/usr/local/include/sk", dest .. "/cbackend.so"
    assert.truthy(io.open(inc .. "/sk.h"))
    assert.is_true(os.execute(string.format("cc -shared -fPIC -std=gnu11 -Wall -Werror -I%s -o %s examples/backend_c/sk_cbackend.c",
                                            inc, so)))
    cmd = string.format("cd / && LUA_PATH='%s/?.lua;%s/?/init.lua' LUA_CPATH='%s/?.so' lua5.4 -e " ..
      "'local sk = require \"sk\"; sk.load_backend(\"%s\"); local t = sk.tensor({1.0, 2.0}):to(\"cdev\"); " ..
      "io.write(t:device(), \" \", tostring((t + t):to(\"cpu\"):sum():item()))'", share, share, lib, so)
    p = io.popen(cmd)
    out = p:read("a")
    p:close()
    assert.equal("cdev:0 6.0", out)
    os.execute("rm -rf " .. dest)
  end)
end)
