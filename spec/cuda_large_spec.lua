-- spec/cuda_large_spec.lua — CUDA tensors of more than 2^31 elements (uint8: 2 GiB of device memory).
-- Its own file so that memcheck-cuda-emu (cuda_spec under valgrind) leaves it out; cuda-emu-spec and
-- scripts/gpu_check.sh run it. Without CUDA it says why and checks nothing else.
local h = require "spec.helper"
local sk = h.sk

local available, why = sk.cuda.is_available()

describe("CUDA with more than 2^31 elements", function()
  if not available then
    it("needs CUDA", function() print("\n[cuda_large_spec] skipped: " .. why) end)
    return
  end
  local n = (1 << 31) + 40 -- 64-bit indices; a 32-bit grid-stride index would wrap

  it("fill, subtract in place over just under 2^31 of them, sum, and read back the ends", function()
    local x = sk.empty({n}, {dtype = "uint8", device = "cuda"})
    assert.equal(n, x:numel())
    x:fill_(3)
    -- just under 2^31 elements: a 32-bit grid-stride index would pass INT32_MAX before the loop test stops it
    local m = (1 << 31) - 100
    x[{{0, m}}]:sub_(1)
    -- every element, read on the host (a device sum over 2 GiB of distinct bytes costs the
    -- emulation minutes: it runs each thread's strided loop whole, a cache miss per element)
    assert.equal(2 * m + 3 * (n - m), x:cpu():sum():item()) -- an integer sum is int64
    -- a device reduction over more than 2^31 elements: of one byte, expanded (stride 0)
    local one = sk.full({1}, 1, {dtype = "uint8", device = "cuda"})
    assert.equal(n, one:expand(n):sum():item())
    assert.same({2, 2}, x[{{0, 2}}]:cpu():totable())
    assert.same({2, 2, 3, 3}, x[{{m - 2, m + 2}}]:cpu():totable())
    assert.same({3, 3}, x[{{n - 2, n}}]:cpu():totable())
    x = nil
    collectgarbage()
  end)
end)
