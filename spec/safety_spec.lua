-- spec/safety_spec.lua — no crash, no silent wrong answer: the classes of issue 9 that live in the
-- binding and the structured runtime (each case built here, values worked out by hand)
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor

local function lua_child(code, limit_kb)
  return h.run_child("lua5.4 -e " .. string.format("%q", code), limit_kb and ("ulimit -v " .. limit_kb .. "; "))
end

describe("tensors are recognised by what a script cannot forge", function()
  it("refuses a foreign userdata given the tensor metatable", function()
    local u = io.tmpfile()
    local own = getmetatable(u)
    debug.setmetatable(u, getmetatable(T({1.0})))
    assert.matches("sk.add: argument 'self' %(position 1%) expected a tensor, got userdata", h.err(sk.add, u, 1))
    assert.matches("expected a tensor", h.err(function() return u + 1 end))
    assert.matches("Tensor:numel: argument 'self' expected a tensor, got userdata", h.err(sk.Tensor.numel, u))
    debug.setmetatable(u, own)
    u:close()
  end)
  it("says a closed tensor is closed", function()
    local t = T({1.0, 2.0})
    t:close()
    assert.matches("sk.neg: argument 'self' %(position 1%) expected a tensor, got closed tensor", h.err(sk.neg, t))
    assert.matches("is a closed tensor", h.err(sk.Tensor.numel, t))
  end)
end)

describe("sk.tensor on any nested table", function()
  it("refuses ragged data whichever way it is ragged", function()
    assert.matches("sk.tensor: ragged nested table: a table at depth 2 where a number was expected", h.err(T, {1, {2}}))
    assert.matches("sk.tensor: ragged nested table: a number at depth 2 where a table was expected", h.err(T, {{1}, 2}))
    assert.matches("expected a sequence of length 0 at depth 2, got 1", h.err(T, {{}, {1}}))
    assert.matches("a table at depth 3 where a number was expected", h.err(T, {{1, 2}, {3, {4}}}))
    assert.matches("expected numbers, booleans or nested tables, got string", h.err(T, {1, "2"}))
  end)
  it("reads tables raw: metamethods neither run nor change the shape", function()
    local ran = false
    local lying = setmetatable({1, 2}, { __len = function() ran = true return 5 end,
                                         __index = function() ran = true return 7 end })
    assert.same({1, 2}, T(lying):totable())
    assert.same({{1, 2}, {1, 2}}, T({lying, lying}):totable())
    assert.is_false(ran)
  end)
end)

describe("numbers that do not fit the dtype", function()
  it("are errors wherever a Lua number becomes an element, as in PyTorch", function()
    assert.matches("Tensor:fill_: value cannot be converted to type int8 without overflow",
                   h.err(function() return sk.zeros(2, {dtype = "int8"}):fill_(1e300) end))
    assert.matches("sk.full: value cannot be converted to type int64 without overflow", h.err(sk.full, {2}, 0 / 0, {dtype = "int64"}))
    assert.matches("sk.tensor: value cannot be converted to type int32 without overflow", h.err(T, {1e30}, {dtype = "int32"}))
    assert.matches("to type int8 without overflow", h.err(T, {300}, {dtype = "int8"}))
    assert.matches("to type int8 without overflow", h.err(function() return sk.zeros(2, {dtype = "int8"}):fill_(127.9) end))
    assert.matches("to type uint8 without overflow", h.err(T, {-256}, {dtype = "uint8"}))
    assert.matches("to type float16 without overflow", h.err(function() return sk.zeros(2, {dtype = "float16"}):fill_(1e5) end))
    assert.matches("to type float32 without overflow", h.err(sk.full, {1}, 1e39))
    assert.matches("to type int32 without overflow", h.err(function() return sk.zeros(1, {dtype = "int32"}):fill_(1 / 0) end))
    assert.matches("to type int64 without overflow", h.err(function() return sk.zeros(1, {dtype = "int64"}):fill_(9.3e18) end))
    assert.matches("sk.masked_fill: value cannot be converted to type int8",
                   h.err(sk.masked_fill, sk.zeros(2, {dtype = "int8"}), T({true, false}), 1000))
    assert.matches("sk.clamp: value cannot be converted to type int8", h.err(sk.clamp, sk.zeros(2, {dtype = "int8"}), {max = 1000}))
    assert.matches("sk.clamp_max: value cannot be converted to type int8", h.err(sk.clamp_max, sk.zeros(2, {dtype = "int8"}), 1000))
    assert.matches("sk.linspace: value cannot be converted to type int8", h.err(sk.linspace, 0, 300, 3, {dtype = "int8"}))
    assert.matches("sk.linspace: value cannot be converted to type uint8", h.err(sk.linspace, -300, 0, 3, {dtype = "uint8"}))
    assert.same({1, -24}, sk.logspace(0, 3, 2, {dtype = "int8"}):totable()) -- exponents, not elements: wraps as in PyTorch
    local t = sk.zeros(3, {dtype = "int8"})
    assert.matches("cannot be converted to type int8", h.err(function() t[0] = 200 end))
    assert.same({0, 0, 0}, t:totable())
  end)
  it("accepts what fits, including PyTorch's wrapping of negative uint8 values", function()
    assert.same({255}, T({-1}, {dtype = "uint8"}):totable())
    assert.same({1}, T({-255}, {dtype = "uint8"}):totable())
    assert.same({math.maxinteger}, sk.zeros(1, {dtype = "int64"}):fill_(math.maxinteger):totable())
    assert.same({-128, 127}, T({-128, 127.0}, {dtype = "int8"}):totable())
    assert.same({1 / 0}, sk.zeros(1, {dtype = "float16"}):fill_(1 / 0):totable())
    assert.same({true, true}, sk.zeros(2, {dtype = "bool"}):fill_(5):totable())
    assert.same({-23, -23}, (sk.ones(2, {dtype = "int8"}) + 1000):totable()) -- an operand, not an element: wraps as in PyTorch
  end)
end)

describe("what an op writes", function()
  local function expanded() return sk.zeros(1):expand(3) end
  local internal = "more than one element of the written%-to tensor '(%a+)' refers to a single memory location"
  it("refuses an expanded out or self in every kind of op", function()
    local cases = {
      {"mm", function() return sk.mm(sk.ones(2, 2), sk.ones(2, 2), {out = sk.zeros(1, 1):expand(2, 2)}) end},
      {"sum", function() return sk.sum(sk.ones(3, 3), 0, {out = expanded()}) end},
      {"cumsum", function() return sk.cumsum(sk.ones(3), 0, {out = expanded()}) end},
      {"softmax", function() return sk.softmax(sk.ones(3), 0, {out = expanded()}) end},
      {"nonzero", function() return sk.nonzero(sk.ones(1), {out = sk.zeros(1, 1, {dtype = "int64"}):expand(3, 1)}) end},
      {"masked_select", function() return sk.masked_select(sk.ones(3), T({true, true, true}), {out = expanded()}) end},
      {"cumsum_", function() return expanded():cumsum_(0) end},
      {"index_put_", function() return sk.index_put_(expanded(), {T({0})}, T(1.0)) end},
      {"addmm_", function() return sk.zeros(1, 1):expand(2, 2):addmm_(sk.ones(2, 2), sk.ones(2, 2)) end},
      {"fill_", function() return expanded():fill_(1) end},
      {"masked_fill_", function() return expanded():masked_fill_(T({true, false, true}), 1) end},
      {"index assignment", function() local e = expanded(); e[{{0, 2}}] = 1 end},
    }
    for _, c in ipairs(cases) do assert.matches(internal, h.err(c[2]), c[1]) end
  end)
  it("refuses an out sharing memory with an input, and an out to resize that is an input", function()
    local a = sk.ones(2, 2)
    assert.matches("some elements of the input tensor 'self' and the written%-to tensor 'out' refer to a single memory location",
                   h.err(sk.mm, a, sk.ones(2, 2), {out = a}))
    local b = sk.empty({0})
    assert.matches("the written%-to tensor 'out' must be resized, but it shares its memory with the input tensor 'tensors'",
                   h.err(sk.cat, {sk.ones(3), b}, {out = b}))
    assert.same({0}, b:shape())
    local e = sk.empty({0})
    assert.matches("must be resized, but it shares its memory with the input tensor 'self'", h.err(sk.diag, e, 0, {out = e}))
    local x = sk.arange(6.0)
    assert.matches("some elements of the input tensor 'self'", h.err(sk.add, x:narrow(0, 0, 3), 1, {out = x:narrow(0, 1, 3)}))
    assert.same({0, 1, 2, 3, 4, 5}, x:totable())
  end)
  it("lets elementwise ops and kernels that compute in place write their very input", function()
    local a = T({1.0, 2.0})
    sk.add(a, a, {out = a})
    assert.same({2, 4}, a:totable())
    a:mul_(a)
    assert.same({4, 16}, a:totable())
    local s = T({0.0, 0.0})
    sk.softmax(s, 0, {out = s})
    assert.same({0.5, 0.5}, s:totable())
  end)
  it("leaves every argument as it was when the call fails", function()
    local o = sk.empty({0}, {dtype = "bool"})
    assert.matches("not implemented for 'Bool'", h.err(sk.floor, sk.ones(2, {dtype = "bool"}), {out = o}))
    assert.same({0}, o:shape())
    assert.equal(0, o:version())
    local out = sk.empty({0})
    assert.matches("sk.div", h.err(sk.div, T({1.0}), T({1.0}), {rounding_mode = "bad", out = out}))
    assert.same({0}, out:shape())
  end)
end)

describe("devices", function()
  sk.backends.register("safetydev")
  local lib = sk.library("safety_dev") -- referenced by the cases below, so it is not collected (and closed) meanwhile
  lib:fallback("safetydev", sk.cpu_fallback)
  local x = sk.ones(4, {device = "safetydev"})
  local function kept() return lib end
  it("mixing a CPU tensor and a backend tensor is the same error in either order", function()
    local same = "expected all tensors to be on the same device, but found at least two devices"
    assert.matches("sk.add: " .. same .. ", cpu and safetydev:0", h.err(function() return sk.ones(4) + x end))
    assert.matches("sk.add: " .. same .. ", safetydev:0 and cpu", h.err(function() return x + sk.ones(4) end))
    assert.matches(same, h.err(sk.mul, sk.ones(4), x))
    -- an unstructured op, through the CPU fallback
    assert.matches("Tensor:masked_fill_: " .. same .. ", safetydev:0 and cpu %(argument 'mask'",
                   h.err(function() return x:masked_fill_(T({true, false, true, false}), 1) end))
  end)
  it("lets a CPU 0-dim tensor join tensors of another device, which decide the result's device", function()
    assert.is_false(kept().closed)
    assert.equal("safetydev:0", (x + T(2.0)):device())
    assert.equal("safetydev:0", (T(2.0) + x):device())
    assert.same({3, 3, 3, 3}, (T(2.0) + x):cpu():totable())
    local y = sk.ones(2, {device = "safetydev"})
    y:masked_fill_(T({true, false}):to("safetydev"), T(5.0))
    assert.same({5, 1}, y:cpu():totable())
  end)
end)

describe("Lua code running in the middle of a call", function()
  it("an options table's metamethods never run while arguments are read", function()
    local lib = sk.library("safety_mid1")
    lib:define("f(Tensor self, *, int k=1) -> Tensor")
    lib:impl("f", "CPU", function(t, k) return t * k end)
    local ran = false
    local opts = setmetatable({ k = 3 }, { __index = function() ran = true lib:close() end })
    assert.same({3}, sk.ops.safety_mid1.f(T({1.0}), opts):totable())
    assert.is_false(ran)
    lib:close()
  end)
  it("a finalizer that closes the library of the op being called neither crashes nor calls freed memory", function()
    for round = 1, 20 do
      local lib = sk.library("safety_mid2")
      lib:define("g(Tensor self) -> Tensor")
      lib:impl("g", "CPU", function(t) collectgarbage() return t + 1 end)
      local g = sk.ops.safety_mid2.g
      setmetatable({}, { __gc = function() pcall(lib.close, lib) end })
      local x = sk.ones(256, 256) -- enough memory made for the next call to run the collector
      for _ = 1, 4 do
        local ok, e = pcall(g, x)
        assert(ok or tostring(e):find("removed") or tostring(e):find("no kernel"), tostring(e))
      end
      collectgarbage()
      lib:close()
      local ok, e = pcall(g, x)
      assert.is_false(ok, round)
      assert.matches("sk.ops.safety_mid2.g: this op was removed", e)
    end
  end)
  it("a kernel closing its own library is refused, and the op still works afterwards", function()
    local lib = sk.library("safety_mid3")
    lib:define("h(Tensor self) -> Tensor")
    lib:impl("h", "CPU", function(t) lib:close() return t end)
    assert.matches("lib:close: cannot change registrations while a Lua kernel", h.err(sk.ops.safety_mid3.h, T({1.0})))
    lib:close()
  end)
end)

describe("schemas the runtime cannot hold", function()
  local lib = sk.library("safety_schema")
  it("are refused by define and structured, naming the limit", function()
    assert.matches("lib:define: .*int%[4000%] x.*fixed%-size lists of at most 64", h.err(lib.define, lib, "a(Tensor self, int[4000] x=1) -> Tensor"))
    assert.matches("out argument 'out' has a default", h.err(lib.define, lib, "b.out(Tensor self, *, Tensor(a!) out=None) -> Tensor(a!)"))
    assert.matches("in%-place self 'Tensor%(a!%)%[%]' is a list", h.err(lib.define, lib, "c_(Tensor(a!)[] self) -> ()"))
    assert.matches("bad default 'x' for int 'k'", h.err(lib.define, lib, "d(Tensor self, int k=x) -> Tensor"))
    assert.matches("a default of 65 elements", h.err(lib.define, lib, "e(Tensor self, int[] k=[" .. string.rep("1, ", 64) .. "1]) -> Tensor"))
    local outs = {}
    for i = 1, 5 do outs[i] = "Tensor(" .. string.char(96 + i) .. "!) o" .. i end
    assert.matches("5 out arguments, sk supports at most 4", h.err(lib.structured, lib, {
      out = "f.out(Tensor self, *, " .. table.concat(outs, ", ") .. ") -> (" .. ("Tensor(a!), "):rep(0) .. table.concat(
        (function() local r = {} for i = 1, 5 do r[i] = "Tensor(" .. string.char(96 + i) .. "!)" end return r end)(), ", ") .. ")",
      meta = function() end, impl = { CPU = function() end } }))
  end)
  it("pass bool[] and float[] defaults as their type", function()
    lib:define("k(Tensor self, bool[3] b=[True, False, True], float[] f=[1.5, -2.25]) -> Tensor")
    local got
    lib:impl("k", "CPU", function(t, b, f) got = {b, f} return t end)
    sk.ops.safety_schema.k(T({1.0}))
    assert.same({{true, false, true}, {1.5, -2.25}}, got)
  end)
end)

describe("process-level state", function()
  it("has no caps on op names or overloads", function()
    local lib = sk.library("safety_many")
    for i = 1, 2100 do lib:define("op" .. i .. "(Tensor self) -> Tensor") end
    for i = 1, 20 do
      local ints = {}
      for j = 1, i do ints[j] = "int k" .. j end
      lib:define("ov.o" .. i .. "(Tensor self, " .. table.concat(ints, ", ") .. ") -> Tensor")
    end
    lib:impl("op2100", "CPU", function(t) return t + 2100 end)
    lib:impl("ov.o20", "CPU", function(t) return t + 20 end)
    assert.same({2101}, sk.ops.safety_many.op2100(T({1.0})):totable())
    assert.same({21}, sk.ops.safety_many.ov(T({1.0}), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20):totable())
    lib:close()
  end)
  it("a function kept from sk.ops says its op was removed, even once another op takes the name", function()
    local l1 = sk.library("safety_keep")
    l1:define("g(Tensor self) -> Tensor")
    l1:impl("g", "CPU", function(t) return t + 1 end)
    local g = sk.ops.safety_keep.g
    l1:close()
    local l2 = sk.library("safety_keep")
    l2:define("g(Tensor self) -> Tensor")
    l2:impl("g", "CPU", function(t) return t + 100 end)
    assert.matches("sk.ops.safety_keep.g: this op was removed", h.err(g, T({1.0})))
    assert.same({101}, sk.ops.safety_keep.g(T({1.0})):totable())
    l2:close()
  end)
  it("refuses thread counts out of range, and one the process cannot run, without exiting #rss", function()
    assert.matches("must be between 1 and 1024, got 0", h.err(sk.set_num_threads, 0))
    assert.matches("must be between 1 and 1024, got 2147483649", h.err(sk.set_num_threads, 2 ^ 31 + 1))
    assert.matches("expected an integer", h.err(sk.set_num_threads, 1.5))
    local out, rc = lua_child([[local sk = require "sk"; print(pcall(sk.set_num_threads, 1000)); print(sk.get_num_threads())]],
                              1024 * 1024)
    assert.equal(0, rc, out)
    assert.matches("false\t.*sk.set_num_threads: cannot run 1000 threads", out)
  end)
end)

describe("errors point at the user's line", function()
  local here = "spec/safety_spec.lua:%d+: "
  it("for operators, sk's own Lua files and indexing", function()
    local i = T({1, 2})
    assert.matches(here .. "sk.floor_divide: ZeroDivisionError", h.err(function() return i // 0 end))
    assert.matches(here .. "Tensor:to: argument 'device'", h.err(function() return T({1.0}):to("nodevice") end))
    assert.matches(here .. "sk: too many indices", h.err(function() return i[{0, 0}] end))
    assert.matches(here .. "sk.add: argument 'other'", h.err(function() return sk.add(i, "x") end))
    assert.matches(here .. "lib:define: bad schema", h.err(function() local q = sk.library("safety_pos"):define("(") return q end))
  end)
end)

describe("SK_CPU_MAX_ALLOC", function()
  it("makes a CPU allocation past it an out-of-memory error, and smaller ones work", function()
    local p = assert(io.popen("SK_CPU_MAX_ALLOC=1000000 lua5.4 -e 'local sk = require \"sk\"; " ..
      "print(pcall(sk.zeros, {1000000})); print(sk.ones({1000}):sum():item())' 2>&1", "r"))
    local out = p:read("a")
    p:close()
    assert.matches("false\tsk.zeros: out of memory allocating 4000000 bytes on cpu %(SK_CPU_MAX_ALLOC is 1000000%)", out)
    assert.matches("\n1000", out)
  end)

  it("gives oneDNN's buffers the allocator's error, not a failed pass", function()
    -- 17 channels fit under the cap as the user's tensor (4456448 bytes) but not padded to oneDNN's
    -- blocked layout (24 or 32 channels): the reorder buffer is the allocation that fails
    local p = assert(io.popen("SK_CPU_MAX_ALLOC=5000000 lua5.4 -e 'local sk = require \"sk\"; " ..
      "io.write(sk.cpu_isa(), \" \"); print(pcall(sk.conv2d, sk.ones({1, 17, 256, 256}), sk.ones({16, 17, 3, 3}), nil, 1, 1))' 2>&1", "r"))
    local out = p:read("a")
    p:close()
    if out:match("^baseline") then -- oneDNN keeps the plain layout below AVX2: no buffer, the call runs
      assert.matches("true\ttensor", out)
    else
      assert.matches("false\tsk.conv2d: out of memory allocating %d+ bytes on cpu %(SK_CPU_MAX_ALLOC is 5000000%)", out)
    end
  end)
end)

describe("the CPU block cache", function()
  it("keeps freed blocks from 4 KiB up in size classes and hands them out again; smaller ones go back to malloc", function()
    local sk = require("spec.helper").sk
    local function drop() collectgarbage("collect") collectgarbage("collect") end
    drop()
    collectgarbage("stop") -- only drop() frees: no step in between puts other blocks in the cache
    sk.empty_cache()
    local small = sk.empty({ 1023 }) -- 4 bytes short of 4 KiB: malloc's
    small = nil; drop()
    assert.equal(0, sk.cached_bytes())
    local fine = sk.empty({ 2500 }) -- 10000 bytes: the 12 KiB class (4 KiB steps below 64 KiB)
    fine = nil; drop()
    assert.equal(12 * 1024, sk.cached_bytes())
    local again = sk.empty({ 2049 }) -- 8196 bytes: the same class, the same block
    assert.equal(0, sk.cached_bytes())
    again = nil; drop()
    local mid = sk.empty({ 100 * 1024 }) -- 400 KiB: the 448 KiB class (64 KiB steps)
    mid = nil; drop()
    assert.equal(12 * 1024 + 448 * 1024, sk.cached_bytes())
    local big = sk.empty({ 3 * 256 * 1024 }) -- 3 MiB rounds to 4 MiB (huge pages)
    big = nil; drop()
    assert.equal(12 * 1024 + 448 * 1024 + 4 * 1024 * 1024, sk.cached_bytes())
    -- a class keeps at most 32 blocks: the 33rd goes back to malloc
    local many = {}
    for i = 1, 40 do many[i] = sk.empty({ 5000 }) end -- 20000 bytes: the 20 KiB class
    many = nil; drop()
    assert.equal(12 * 1024 + 448 * 1024 + 4 * 1024 * 1024 + 32 * 20 * 1024, sk.cached_bytes())
    sk.empty_cache()
    assert.equal(0, sk.cached_bytes())
    collectgarbage("restart")
  end)

  it("counts in sk.memory_stats(): blocks handed out, cache hits, frees, bytes live and their peak", function()
    local sk = require("spec.helper").sk
    local function drop() collectgarbage("collect") collectgarbage("collect") end
    drop()
    collectgarbage("stop")
    sk.empty_cache()
    local s0 = sk.memory_stats()
    local tiny = sk.empty({ 16 }) -- 64 bytes: inline in the tensor, never the allocator's
    local a = sk.empty({ 2500 })  -- 10000 bytes: a fresh block of the 12 KiB class
    local s1 = sk.memory_stats()
    assert.equal(s0.num_allocs + 1, s1.num_allocs)
    assert.equal(s0.num_cache_hits, s1.num_cache_hits)
    assert.equal(s0.allocated + 10000, s1.allocated)
    assert.is_true(s1.peak_allocated >= s1.allocated)
    a = nil; drop()
    local s2 = sk.memory_stats()
    assert.equal(s1.num_frees + 1, s2.num_frees)
    assert.equal(s0.allocated, s2.allocated)
    assert.equal(12 * 1024, s2.cached)
    local b = sk.empty({ 2049 }) -- 8196 bytes: the same class, from the cache
    local s3 = sk.memory_stats()
    assert.equal(s2.num_allocs + 1, s3.num_allocs)
    assert.equal(s2.num_cache_hits + 1, s3.num_cache_hits)
    assert.equal(0, s3.cached)
    assert.equal(s1.peak_allocated, s3.peak_allocated) -- 8196 live now, 10000 at the peak
    assert.equal(0, s3.num_ooms - s0.num_ooms)
    tiny, b = nil, nil; drop()
    sk.empty_cache()
    collectgarbage("restart")
  end)
end)
