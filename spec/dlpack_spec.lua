-- spec/dlpack_spec.lua — DLPack capsules: who owns the DLManagedTensor, and for how long.
-- A capsule is consumed once (PyTorch's "used_dltensor" rule); one never consumed runs its
-- deleter when collected or closed; an export pins its storage's memory until the deleter runs.
local h = require "spec.helper"
local sk = h.sk

local function allocated()
  collectgarbage("collect")
  collectgarbage("collect")
  return sk.memory_stats().allocated
end

describe("DLPack capsules", function()
  it("pin the exported memory: resize_ refuses to move it until the capsule's deleter runs", function()
    local a = sk.arange(4, { dtype = "float32" })
    local c = a:to_dlpack()
    assert.matches("resize_: cannot resize a storage whose memory is lent through DLPack",
                   h.err(function() return a:resize_(1 << 16) end))
    assert.same({ 4 }, a:shape()) -- the refused resize_ changed nothing
    local b = sk.from_dlpack(c)
    assert.same({ 0, 1, 2, 3 }, b:totable())
    a:resize_(2) -- shrinking moves nothing
    assert.same({ 0, 1 }, a:totable())
    b = nil
    collectgarbage("collect") -- b's storage runs the deleter: the pin goes
    a:resize_(1 << 16)
    assert.equal(1 << 16, a:numel())
    assert.same({ 0, 1 }, h.flat(a:narrow(0, 0, 2)))
  end)

  it("keep the storage when the exported tensor goes, views and non-contiguous tensors too", function()
    local a = sk.arange(12, { dtype = "int64" }):view({ 3, 4 })
    local c = a:t():to_dlpack()
    a = nil
    collectgarbage("collect")
    local b = sk.from_dlpack(c)
    assert.same({ 4, 3 }, b:shape())
    assert.same({ 1, 4 }, b:stride())
    assert.same({ { 0, 4, 8 }, { 1, 5, 9 }, { 2, 6, 10 }, { 3, 7, 11 } }, b:totable())
  end)

  it("are consumed once: a second sk.from_dlpack raises PyTorch's error", function()
    local c = sk.tensor({ 1, 2, 3 }):to_dlpack()
    assert.equal("DLPack capsule (unconsumed)", tostring(c))
    local b = sk.from_dlpack(c)
    assert.equal("DLPack capsule (consumed)", tostring(c))
    assert.equal("sk.from_dlpack: from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                 .. "only once, so you might have already constructed a tensor from it once.",
                 h.err(sk.from_dlpack, c):gsub("^.-:%d+: ", ""))
    assert.same({ 1, 2, 3 }, b:totable())
    assert.matches("sk.from_dlpack: argument 'capsule' must be a DLPack capsule %(Tensor:to_dlpack%) or a "
                   .. "DLManagedTensor pointer %(a light userdata%), not a table", h.err(sk.from_dlpack, {}))
    assert.matches("must be a DLPack capsule", h.err(sk.from_dlpack, io.stdout))
  end)

  it("free an unconsumed capsule's tensor when it is collected", function()
    local before = allocated()
    local c = sk.empty({ 1 << 20 }, { dtype = "float32" }):to_dlpack() -- 4 MiB held by the capsule alone
    assert.equal(before + (4 << 20), allocated())
    c = nil
    assert.equal(before, allocated())
  end)

  it("run the deleter once when closed, and not again when collected", function()
    local a = sk.arange(4, { dtype = "float32" })
    do
      local c <close> = a:to_dlpack()
      assert.matches("lent through DLPack", h.err(function() return a:resize_(1 << 16) end))
    end
    a:resize_(1 << 16) -- the close ran the deleter: unpinned
    local c = a:to_dlpack()
    getmetatable(c).__close(c)
    assert.equal("DLPack capsule (consumed)", tostring(c))
    assert.matches("consumed only once", h.err(sk.from_dlpack, c))
    c = nil
    collectgarbage("collect")
    a:resize_(1 << 17)
    assert.equal(1 << 17, a:numel())
  end)

  it("import a C host's bool tensor (kDLBool) with every nonzero byte made 1, in a copy: the host's bytes stay", function()
    -- a host hands sk bytes {0, 2, 1, 255} as DLPack 0.8's bool; sk reads them as false, true,
    -- true, true, and never writes memory a producer lent it
    local host = [[
#include <dlpack/dlpack.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
static unsigned char bytes[4] = {0, 2, 1, 255};
static int64_t shape[1] = {4};
static int deleted;
static void deleter(DLManagedTensor *m) { (void)m; deleted++; }
int main(void) {
  DLManagedTensor m = {.dl_tensor = {.data = bytes, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {6, 8, 1}, .shape = shape},
                       .deleter = deleter};
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  if (luaL_loadstring(L, "local t = require('sk').from_dlpack(...)\n"
                         "return string.format('%d %d %s', t:sum():item(), t:count_nonzero():item(), t:tobytes():byte(2))")
      || (lua_pushlightuserdata(L, &m), lua_pcall(L, 1, 1, 0))) { fprintf(stderr, "%s\n", lua_tostring(L, -1)); return 1; }
  printf("%s host bytes %d %d %d %d\n", lua_tostring(L, -1), bytes[0], bytes[1], bytes[2], bytes[3]);
  lua_close(L);
  printf("deleter ran %d\n", deleted);
  return 0;
}
]]
    local src, exe = os.tmpname(), os.tmpname()
    local f = assert(io.open(src .. ".c", "w"))
    f:write(host)
    f:close()
    local cc = string.format("env -u LD_PRELOAD cc -std=gnu11 -Wall -Werror -I/usr/include/lua5.4 -o %s %s.c -llua5.4", exe, src)
    assert(os.execute(cc), cc)
    local out = h.run_child(exe)
    os.remove(src); os.remove(src .. ".c"); os.remove(exe)
    assert.equal("3 3 1 host bytes 0 2 1 255\ndeleter ran 1\n", out)
  end)
end)
