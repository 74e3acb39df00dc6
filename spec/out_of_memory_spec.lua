-- spec/out_of_memory_spec.lua — an allocation that fails is an error naming the op, never a crash
-- A composite that continues after a failed step must not read the step's NULL result, and a
-- failure it records must keep its message. The calls run in a child interpreter with
-- SK_CPU_MAX_ALLOC at 4 GiB (as make fuzz sets it), so every huge size below fails the same way
-- whatever the machine's overcommit policy; a crash shows as a missing line and the exit status.
local h = require "spec.helper"
local sk = h.sk

local function child(code) return h.run_child("lua5.4 -e " .. string.format("%q", code), "SK_CPU_MAX_ALLOC=4294967296 ") end

describe("ops given sizes that cannot be allocated", function()
  it("interpolate fails in any pass, in every mode, and the next call works", function()
    -- a 2-d resample is two passes (W, then H): the W pass's taps (2^40 of them) fail, and the
    -- H pass (2 to 2, the identity) used to read its input's sizes through the failed result
    local out, rc = child([[
      local sk = require "sk"
      local x = sk.ones(1, 1, 2, 2)
      for _, o in ipairs({{size = {2, 1 << 40}}, {size = {1 << 40, 2}}, {size = {1 << 40, 1 << 40}},
                          {size = {2, 1 << 40}, mode = "bilinear"}, {size = {3, 1 << 40}, mode = "bicubic"},
                          {size = {2, 1 << 40}, mode = "nearest-exact"}}) do
        print(select(2, pcall(sk.interpolate, x, o)))
      end
      print(select(2, pcall(sk.upsample_nearest3d, sk.ones(1, 1, 2, 2, 2), {2, 2, 1 << 40})))
      print(sk.interpolate(x, {size = {3, 3}}):sum():item())]])
    assert.are.equal(0, rc, out)
    -- the first failing pass allocates taps·2^40 int64 indices: 1 tap for nearest, 2 linear, 4 cubic
    local oom = "out of memory allocating %d bytes on cpu %%(SK_CPU_MAX_ALLOC is 4294967296%%)"
    local taps = {1, 1, 1, 2, 4, 1}
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(8, #lines, out)
    for i = 1, 6 do assert.matches("^sk%.interpolate: " .. oom:format(taps[i] * 8 << 40), lines[i]) end
    assert.matches("^sk%.upsample_nearest3d: " .. oom:format(8 << 40), lines[7])
    assert.are.equal("9.0", lines[8])
  end)

  it("other ops with a huge result say out of memory or overflow", function()
    local out, rc = child([[
      local sk = require "sk"
      local H = 1 << 40
      for _, f in ipairs({
        function() return sk.zeros(1 << 50) end,
        function() return sk.zeros(H, H) end,
        function() return sk.pad(sk.ones(1, 1, 2, 2), {H, H, 0, 0}, "replicate") end,
        function() return sk.repeat_interleave(sk.ones(2), H) end,
        function() return sk.one_hot(sk.tensor({1}, {dtype = "int64"}), H) end,
        function() return sk.adaptive_avg_pool2d(sk.ones(1, 1, 2, 2), {2, H}) end}) do
        print(select(2, pcall(f)))
      end]])
    assert.are.equal(0, rc, out)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(6, #lines, out)
    assert.matches("sk%.zeros: out of memory allocating 4503599627370496 bytes on cpu", lines[1])
    assert.matches("sk%.zeros: numel: integer multiplication overflow", lines[2])
    assert.matches("sk%.pad: out of memory allocating %d+ bytes on cpu", lines[3])
    assert.matches("sk%.repeat_interleave: out of memory allocating 8796093022208 bytes on cpu", lines[4])
    assert.matches("sk%.one_hot: out of memory allocating 8796093022208 bytes on cpu", lines[5])
    assert.matches("sk%.adaptive_avg_pool2d: out of memory allocating %d+ bytes on cpu", lines[6])
  end)

  it("a failure a composite records outside a step keeps its message", function()
    -- rrelu's bounds check and the in-place form's write-back from copy_ (which refuses an
    -- overlapping self) fail outside a step: the latter was raised empty
    assert.matches("sk.rrelu: Lower bound should be less than or equal to the upper bound",
                   h.err(sk.rrelu, sk.ones(3), 0.5, 0.1, true), 1, true)
    assert.matches("sk.rrelu_: unsupported operation: more than one element of the written-to tensor 'self' " ..
                   "refers to a single memory location", h.err(sk.rrelu_, sk.ones(3):expand(2, 3), 0, 1, true), 1, true)
  end)
end)
