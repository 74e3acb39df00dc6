-- spec/cuda_spec.lua — the CUDA backend: parity with the CPU, written once as data
-- Without a GPU (or without nvcc at build time) the parity cases are skipped with
-- the reason printed, and only the clear "CUDA is not available" errors are checked.
local h = require "spec.helper"
local sk = h.sk

local available, why = sk.cuda.is_available()

describe("CUDA availability", function()
  it("answers is_available and device_count, and says why not", function()
    if available then
      assert.is_true(sk.cuda.device_count() >= 1)
    else
      assert.equal(0, sk.cuda.device_count())
      assert.matches("^CUDA is not available: ", why)
      assert.matches("CUDA is not available: ", h.err(sk.zeros, {3}, {device = "cuda"}))
      assert.matches("CUDA is not available: ", h.err(function() return sk.ones(2):cuda() end))
      print("\n[cuda_spec] parity cases skipped: " .. why)
    end
  end)
end)

if not available then return end

-- Every case: a name, input shapes and dtypes, and the op applied to the inputs.
local TOL = { float32 = 1e-5, float64 = 1e-12, float16 = 2e-3, bfloat16 = 2e-2, int64 = 0, int32 = 0, bool = 0 }
local cases = {}
local function case(name, shapes, dtypes, fn) cases[#cases + 1] = { name = name, shapes = shapes, dtypes = dtypes, fn = fn } end
local function binary(name, fn)
  for _, dt in ipairs { "float32", "float64", "float16", "bfloat16", "int64", "int32" } do
    case(name .. " " .. dt, { {33, 65}, {33, 65} }, { dt, dt }, fn)
    case(name .. " broadcast " .. dt, { {4, 1, 7}, {5, 1} }, { dt, dt }, fn)
  end
  case(name .. " mixed", { {9, 3}, {3} }, { "float32", "int64" }, fn)
  case(name .. " large", { {1 << 20} }, { "float32" }, function(a) return fn(a, a) end)
  case(name .. " empty", { {0, 3}, {3} }, { "float32", "float32" }, fn)
end
binary("add", function(a, b) return sk.add(a, b, {alpha = 2}) end)
binary("sub", function(a, b) return a - b end)
binary("mul", function(a, b) return a * b end)
for _, f in ipairs { "exp", "log", "sqrt", "tanh", "sigmoid", "neg", "abs" } do
  case(f .. " float32", { {100, 37} }, { "float32" }, function(a) return sk[f](a:abs() + 0.5) end)
  case(f .. " float64 transposed", { {40, 30} }, { "float64" }, function(a) return sk[f](a:t():abs() + 0.5) end)
end
for _, f in ipairs { "eq", "lt", "ge" } do case(f, { {20, 20}, {20} }, { "float32", "float32" }, function(a, b) return a[f](a, b) end) end
for _, dt in ipairs { "float32", "float64" } do
  case("sum dim " .. dt, { {64, 300} }, { dt }, function(a) return a:sum(1) end)
  case("mean dims " .. dt, { {8, 9, 10} }, { dt }, function(a) return a:mean({dim = {0, 2}}) end)
  case("amax " .. dt, { {50, 70} }, { dt }, function(a) return a:amax(0) end)
  case("argmax " .. dt, { {50, 70} }, { dt }, function(a) return a:argmax(1) end)
  case("mm " .. dt, { {64, 48}, {48, 80} }, { dt, dt }, function(a, b) return sk.mm(a, b) end)
  case("mm transposed " .. dt, { {48, 64}, {80, 48} }, { dt, dt }, function(a, b) return sk.mm(a:t(), b:t()) end)
  case("bmm " .. dt, { {6, 16, 8}, {6, 8, 24} }, { dt, dt }, function(a, b) return sk.bmm(a, b) end)
  case("addmm " .. dt, { {16}, {8, 32}, {32, 16} }, { dt, dt, dt }, function(c, a, b) return sk.addmm(c, a, b, {beta = 0.5, alpha = 2}) end)
end
case("matmul half", { {32, 64}, {64, 16} }, { "float16", "float16" }, function(a, b) return sk.matmul(a, b) end)
case("fallback op (where)", { {10, 10} }, { "float32" }, function(a) return sk.where(a:gt(0.5), a, a * 2) end)

local function make(shape, dtype)
  local t = sk.rand(shape):mul(4):sub(2)
  if dtype == "int64" or dtype == "int32" then return (t * 10):to(dtype) end
  return t:to(dtype)
end

describe("CUDA parity with the CPU", function()
  for _, c in ipairs(cases) do
    it(c.name, function()
      sk.manual_seed(1234)
      local cpu_in, gpu_in = {}, {}
      for i, shape in ipairs(c.shapes) do
        cpu_in[i] = make(shape, c.dtypes[i])
        gpu_in[i] = cpu_in[i]:cuda()
      end
      local want = c.fn(table.unpack(cpu_in))
      local got = c.fn(table.unpack(gpu_in))
      assert.equal("cuda:0", got:device())
      assert.equal(want:dtype(), got:dtype())
      assert.same(want:shape(), got:shape())
      h.assert_close(got:cpu():to("float64"):totable(), want:to("float64"):totable(), TOL[want:dtype()] or 1e-5)
    end)
  end
  it("draws the same random numbers as the CPU for the same seed", function()
    sk.manual_seed(99)
    local a = sk.rand(1000)
    sk.manual_seed(99)
    local b = sk.rand(1000, {device = "cuda"})
    h.assert_close(b:cpu():totable(), a:totable(), 1e-7)
  end)
  it("counts the ops that fell back to the CPU", function()
    sk.fallback.reset("cuda")
    sk.where(sk.ones(3, {device = "cuda"}):gt(0), sk.ones(3, {device = "cuda"}), sk.zeros(3, {device = "cuda"}))
    assert.is_true((sk.fallback.counts("cuda")["aten::where.self_out"] or 0) >= 1)
  end)
  it("refuses mixed devices, and caches memory", function()
    assert.matches("expected all tensors to be on the same device", h.err(sk.add, sk.ones(3, {device = "cuda"}), sk.ones(3)))
    local before = sk.cuda.memory_stats().num_cache_hits
    for _ = 1, 5 do local _ = sk.ones(1000, {device = "cuda"}) collectgarbage() end
    assert.is_true(sk.cuda.memory_stats().num_cache_hits > before)
    sk.cuda.empty_cache()
    sk.cuda.synchronize()
  end)
end)

describe("CUDA tensors", function()
  it("are made on the device by empty, without the CPU fallback (t:cuda(), zeros)", function()
    sk.fallback.reset("cuda")
    local z = sk.zeros({2, 3}, {device = "cuda"})
    local c = sk.tensor({1, 2, 3}):cuda()
    assert.equal("cuda:0", z:device())
    assert.same({{0, 0, 0}, {0, 0, 0}}, z:cpu():totable())
    assert.same({1, 2, 3}, c:cpu():totable())
    assert.is_nil(sk.fallback.counts("cuda")["aten::empty.memory_format"])
  end)
  it("take numbers and CPU 0-dim tensors as operands, read on the host", function()
    local x = sk.tensor({1, 2, 3}):cuda()
    assert.same({1.5, 2.5, 3.5}, (x + 0.5):cpu():totable())
    assert.same({2, 4, 6}, (sk.tensor(2.0) * x):cpu():totable())
    assert.same({0, 1, 2}, (x - sk.tensor(1)):cpu():totable())
    assert.same({false, true, true}, x:gt(sk.tensor(1.5)):cpu():totable())
    local i = sk.tensor({5, 7}, {dtype = "int64"}):cuda()
    assert.same({15, 21}, (i * 3):cpu():totable())
  end)
  it("are allocated on the device they name", function()
    if sk.cuda.device_count() < 2 then return print("\n[cuda_spec] one device: cuda:1 not checked") end
    local a = sk.ones(4, {device = "cuda:1"})
    assert.equal("cuda:1", a:device())
    assert.same({3, 3, 3, 3}, (a * 2 + 1):cpu():totable())
    assert.same({2, 2, 2, 2}, sk.tensor({1, 1, 1, 1}):to("cuda:1"):add(a):cpu():totable())
  end)
end)

describe("CUDA kernels", function()
  it("give zeros for a matrix product over k = 0 and nothing for an empty one, as the CPU", function()
    local z = sk.mm(sk.ones(3, 0):cuda(), sk.ones(0, 4):cuda())
    assert.same({{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}, z:cpu():totable())
    assert.same({3, 0}, sk.mm(sk.ones(3, 2):cuda(), sk.ones(2, 0):cuda()):shape())
    assert.same({2, 1, 2}, sk.bmm(sk.ones(2, 1, 0):cuda(), sk.ones(2, 0, 2):cuda()):shape())
    local c = sk.addmm(sk.full({2, 2}, 3.0):cuda(), sk.ones(2, 0):cuda(), sk.ones(0, 2):cuda(), {beta = 0.5})
    assert.same({{1.5, 1.5}, {1.5, 1.5}}, c:cpu():totable())
  end)
  it("compare int64 values exactly, beyond 2^53", function()
    local a = sk.tensor({9007199254740993, 5}, {dtype = "int64"}):cuda()
    local b = sk.tensor({9007199254740992, 5}, {dtype = "int64"}):cuda()
    assert.same({true, false}, a:gt(b):cpu():totable())
    assert.same({false, true}, a:eq(b):cpu():totable())
  end)
  it("read transposed and sliced matrices in place through cuBLAS's op flags, as the CPU computes", function()
    local function close(a, b) -- float32 products: a few ulps apart
      local d = (a - b):abs():amax():item()
      assert(d < 1e-4, "max difference " .. d)
    end
    local a, b = sk.rand(5, 7), sk.rand(7, 3)
    local ca, cb = a:cuda(), b:cuda()
    local at, bt = sk.rand(7, 5), sk.rand(3, 7) -- to be used transposed
    local cat_, cbt = at:cuda(), bt:cuda()
    local stats = sk.cuda.memory_stats()
    local r = sk.mm(cat_:t(), cbt:t())
    assert.equal(stats.num_allocs + 1, sk.cuda.memory_stats().num_allocs) -- the result only: no dense copies
    close(r:cpu(), sk.mm(at:t(), bt:t()))
    close(sk.mm(ca, cbt:t()):cpu(), sk.mm(a, bt:t()))
    local wide = sk.rand(5, 12)
    close(sk.mm(wide:cuda():narrow(1, 2, 7), cb):cpu(), sk.mm(wide:narrow(1, 2, 7), b)) -- row stride 12
    local o = sk.zeros(3, 5):cuda():t() -- a column-major out
    sk.mm(ca, cb:narrow(1, 0, 3), {out = o})
    close(o:cpu(), sk.mm(a, b))
    local c = sk.rand(5, 3)
    local oc = c:cuda():t():contiguous():t()
    oc:addmm_(ca, cb, {beta = 0.5, alpha = 2}) -- in place on a column-major self
    close(oc:cpu(), sk.addmm(c, a, b, {beta = 0.5, alpha = 2}))
    local x, y = sk.rand(4, 6, 2), sk.rand(4, 3, 6) -- batches with their matrices transposed
    close(sk.bmm(x:cuda():transpose(1, 2), y:cuda():transpose(1, 2)):cpu(), sk.bmm(x:transpose(1, 2), y:transpose(1, 2)))
    local z, w = sk.rand(6, 4, 5), sk.rand(4, 5, 2) -- the batch dim not outermost in memory
    close(sk.bmm(z:cuda():permute({1, 0, 2}), w:cuda()):cpu(), sk.bmm(z:permute({1, 0, 2}), w))
  end)
  it("copy between tensors of one device strided, broadcast and converted, as the CPU", function()
    local x = sk.arange(12):reshape({3, 4})
    local xt = x:cuda():t() -- strided
    local o = sk.empty({4, 3}, {dtype = "float32", device = "cuda"})
    o:copy_(xt)
    assert.same(x:t():to("float32"):totable(), o:cpu():totable())
    local big = sk.tensor({9007199254740993, -3}, {dtype = "int64"})
    local w = sk.empty({2, 2}, {dtype = "int64", device = "cuda"}):t()
    w:copy_(big:cuda()) -- a row broadcast over a transposed out, int64 through int64
    assert.same({{9007199254740993, -3}, {9007199254740993, -3}}, w:cpu():totable())
    local f = sk.tensor({-1.5, 0.0, 2.7, 300.0}):cuda()
    for _, dt in ipairs { "int8", "uint8", "bool", "float16", "int64" } do
      local d = sk.empty({4}, {dtype = dt, device = "cuda"})
      d:copy_(f)
      local ref = sk.empty({4}, {dtype = dt})
      ref:copy_(f:cpu())
      assert.same(ref:totable(), d:cpu():totable(), dt)
    end
    local v = sk.ones(2, 3):cuda()
    local before = v:version()
    v:select(1, 1):copy_(sk.tensor({7.0, 8.0}):cuda())
    assert.same({{1, 7, 1}, {1, 8, 1}}, v:cpu():totable())
    assert.is_true(v:version() > before)
  end)
  it("reduce into a non-contiguous out as into its view", function()
    local x = sk.arange(24):to("float32"):reshape({2, 3, 4})
    local o = sk.zeros(4, 2):cuda():t()
    sk.sum(x:cuda(), 1, {out = o})
    assert.same(x:sum(1):totable(), o:cpu():totable())
    local k = sk.zeros(4, 1, 2):cuda():permute({2, 1, 0})
    sk.sum(x:cuda(), 1, {keepdim = true, out = k})
    assert.same(x:sum(1, {keepdim = true}):totable(), k:cpu():totable())
  end)
end)

-- The caching allocator (kernels/cuda/sk_cuda_alloc.c), watched through memory_stats on
-- cuda:1, which holds nothing between these cases: requests round up to 512 bytes, small
-- ones (≤ 1 MiB) come from 2 MiB segments, large ones below 10 MiB from 20 MiB segments.
describe("CUDA caching allocator", function()
  local KiB, MiB = 1024, 1024 * 1024
  local function floats(bytes) return sk.empty({bytes // 4}, {device = "cuda:1"}) end
  local function stats() return sk.cuda.memory_stats(1) end
  local function settle() collectgarbage() collectgarbage() sk.cuda.empty_cache() end
  before_each(function()
    if sk.cuda.device_count() < 2 then return end
    settle()
    assert.same({0, 0}, {stats().allocated, stats().reserved})
  end)
  after_each(settle)
  local function two_devices()
    if sk.cuda.device_count() >= 2 then return true end
    print("\n[cuda_spec] one device: the allocator cases not run")
  end

  it("reuses a freed block: num_cache_hits grows, reserved stays", function()
    if not two_devices() then return end
    local a = floats(4000)
    local s = stats()
    assert.same({4096, 2 * MiB, 2 * MiB - 4096}, {s.allocated, s.reserved, s.cached}) -- rounded to 512 bytes
    a = nil
    collectgarbage()
    assert.same({0, 2 * MiB}, {stats().allocated, stats().reserved})
    local b = floats(4000)
    local t = stats()
    assert.equal(s.num_cache_hits + 1, t.num_cache_hits)
    assert.equal(s.num_allocs + 1, t.num_allocs)
    assert.same({4096, 2 * MiB}, {t.allocated, t.reserved})
    assert.equal(4096, t.peak_allocated)
    assert.truthy(b)
  end)

  it("splits a segment into blocks and merges the free neighbours back", function()
    if not two_devices() then return end
    local t, hits = {}, stats().num_cache_hits
    for i = 1, 8 do t[i] = floats(256 * KiB) end -- eight blocks tile one 2 MiB segment: one new, seven hits
    local s = stats()
    assert.same({2 * MiB, 2 * MiB, hits + 7}, {s.allocated, s.reserved, s.num_cache_hits})
    t[4], t[6] = nil, nil -- two free blocks, not neighbours: no 512 KiB hole
    collectgarbage()
    local hole = floats(512 * KiB)
    assert.equal(4 * MiB, stats().reserved) -- a second segment
    t[2], t[3] = nil, nil -- 2, 3 and 4 merge: 768 KiB
    collectgarbage()
    local before = stats()
    local fit = floats(768 * KiB) -- the merged block fits exactly; the second segment has 1.5 MiB left too
    local after = stats()
    assert.equal(before.num_cache_hits + 1, after.num_cache_hits)
    assert.same({4 * MiB, 2 * MiB + 256 * KiB}, {after.reserved, after.allocated})
    local rest = floats(MiB) -- from the second segment's 1.5 MiB remainder (the merged block was not taken from it)
    assert.same({4 * MiB, 3 * MiB + 256 * KiB}, {stats().reserved, stats().allocated})
    t, hole, fit, rest = nil, nil, nil, nil
    collectgarbage()
    local one = floats(MiB) -- everything merged back: two whole free segments
    assert.same({4 * MiB, MiB}, {stats().reserved, stats().allocated})
    assert.truthy(one)
  end)

  it("empty_cache gives back every wholly free segment and keeps the ones in use", function()
    if not two_devices() then return end
    local keep = floats(1000)
    local big = floats(3 * MiB) -- large, below 10 MiB: a 20 MiB segment
    local huge = floats(17 * MiB + 512) -- more than the 17 MiB left there; from 10 MiB on, a segment of its own size rounded to 2 MiB
    assert.equal(2 * MiB + 20 * MiB + 18 * MiB, stats().reserved)
    big, huge = nil, nil
    collectgarbage()
    assert.equal(40 * MiB, stats().reserved)
    sk.cuda.empty_cache()
    local s = stats()
    assert.same({2 * MiB, 1024, 2 * MiB - 1024}, {s.reserved, s.allocated, s.cached})
    assert.truthy(keep)
  end)

  it("keeps a pool per device: a block freed on cuda:0 is not reused for cuda:1", function()
    if not two_devices() then return end
    local z = sk.ones(1000, {device = "cuda:0"})
    z = nil
    collectgarbage()
    local s0 = sk.cuda.memory_stats(0)
    assert.is_true(s0.cached >= 4096)
    local s = stats()
    local a = sk.ones(1000, {device = "cuda:1"}) -- its kernel's pointers are checked against cuda:1 by the emulation
    assert.same({4096, 2 * MiB, s.num_cache_hits}, {stats().allocated, stats().reserved, stats().num_cache_hits})
    assert.same({s0.cached, s0.num_cache_hits}, {sk.cuda.memory_stats(0).cached, sk.cuda.memory_stats(0).num_cache_hits})
    assert.same({3, 3}, (a * 3):narrow(0, 0, 2):cpu():totable())
  end)

  -- Out of memory, in a child lua5.4 under a small emulated memory (SK_CUDA_EMU_MEMORY), with
  -- the collector stopped so that dropped tensors stay garbage until the allocator asks.
  local emulated = (os.getenv("SK_CUDA_MODULE") or ""):match("/emu/") ~= nil
  local function child(limit, script)
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write('local sk = require "sk"\ncollectgarbage("stop")\n', script)
    f:close()
    local p = assert(io.popen("SK_CUDA_EMU_MEMORY=" .. limit .. " lua5.4 " .. path .. " 2>&1", "r"))
    local out = p:read("a")
    local ok, _, code = p:close()
    os.remove(path)
    assert(ok and code == 0, "the child exited with status " .. tostring(code) .. ":\n" .. out)
    return out
  end

  it("fails with an error naming the device and the sizes when memory runs out", function()
    if not emulated then return print("\n[cuda_spec] not on the emulation: out-of-memory cases not run") end
    local out = child(24 * MiB, [[
      local held = {}
      local ok, err = pcall(function() for i = 1, 10 do held[i] = sk.empty({1 << 20}, {device = "cuda"}) end end)
      local s = sk.cuda.memory_stats()
      print(ok, #held, s.num_ooms, s.allocated, s.reserved)
      print(err)
    ]])
    -- five 4 MiB tensors fill the 20 MiB segment; a second one does not fit in 24 MiB
    assert.matches("^false\t5\t1\t20971520\t20971520\n", out)
    assert.matches("sk.empty: CUDA out of memory: tried to allocate 4194304 bytes on cuda:0 %(4194304 bytes free of 25165824%); "
                   .. "20971520 bytes allocated by sk, 20971520 reserved", out)
  end)

  it("collects garbage and retries when out of memory: dropped tensors' blocks serve the request", function()
    if not emulated then return end
    local out = child(24 * MiB, [[
      local held = {}
      for i = 1, 5 do held[i] = sk.empty({1 << 20}, {device = "cuda"}) end
      held = nil -- garbage, not collected: the collector is stopped
      local big = sk.empty({3 << 20}, {device = "cuda"}) -- 12 MiB: no room for its segment until the 20 MiB one is free
      local s = sk.cuda.memory_stats()
      print(s.num_ooms, s.allocated, s.reserved, s.num_cache_hits, big:numel())
      big = nil
      print(pcall(sk.empty, {(6 << 20) + 1}, {device = "cuda"})) -- a 26 MiB segment: too much even with the 20 MiB one given back
      print(sk.cuda.memory_stats().num_ooms, sk.cuda.memory_stats().reserved)
    ]])
    -- the merged 20 MiB segment serves 12 MiB (cache hit after the collection)
    assert.matches("^1\t12582912\t20971520\t5\t3145728\n", out)
    assert.matches("\nfalse\tsk.empty: CUDA out of memory: tried to allocate 25165828 bytes on cuda:0 %(25165824 bytes free of 25165824%); "
                   .. "0 bytes allocated by sk, 0 reserved\n2\t0\n$", out)
  end)
end)

describe("CUDA reductions", function()
  local nan = 0 / 0
  -- fn on the device as on the CPU: dtype, shape, and values within tol (0: exactly)
  local function same(fn, x, tol)
    local want, got = fn(x), fn(x:cuda())
    assert.equal("cuda:0", got:device())
    assert.equal(want:dtype(), got:dtype())
    assert.same(want:shape(), got:shape())
    h.assert_close(got:cpu():to("float64"):totable(), want:to("float64"):totable(), tol)
  end
  local function rows_of(n, f) local t = {} for i = 1, n do t[i] = f(i) end return t end

  it("reduce 1<<20 and 1000003 elements fully in two passes, as the CPU", function()
    for _, n in ipairs { 1 << 20, 1000003 } do
      sk.manual_seed(n)
      local x = sk.rand(n)
      same(function(t) return t:sum() end, x, 1e-6)
      same(function(t) return t:mean() end, x, 1e-6)
      same(function(t) return t:amax() end, x, 0)
      same(function(t) return t:argmax() end, x, 0)
    end
  end)

  it("take products, minima and their indices as the CPU: two passes, any dim, NaN and ties", function()
    sk.manual_seed(11)
    local x = sk.rand(1000003)
    same(function(t) return t:amin() end, x, 0)
    same(function(t) return t:argmin() end, x, 0)
    local m = sk.rand({33, 70}):add(0.5)
    for _, d in ipairs { 0, 1 } do
      same(function(t) return t:prod(d) end, m, 1e-5)
      same(function(t) return t:amin(d) end, m, 0)
      same(function(t) return t:argmin(d, {keepdim = true}) end, m, 0)
    end
    local v = sk.tensor({3.0, 1.0, nan, 1.0, nan})
    same(function(t) return t:amin() end, v, 0) -- NaN wins
    same(function(t) return t:argmin() end, v, 0) -- the first NaN
    same(function(t) return t:argmin() end, sk.tensor({2.0, 1.0, 5.0, 1.0}), 0) -- ties: the first index
    local i = sk.tensor({3, 1 << 40, 1 << 30, -2}, {dtype = "int64"})
    same(function(t) return t:prod(0) end, i, 0) -- int64 products wrap as the CPU's
    same(function(t) return t:amin(0) end, i, 0)
    same(function(t) return t:prod(0) end, sk.tensor({true, true, false}), 0) -- bool to int64
  end)

  it("sum in a fixed order that matches the CPU's within float tolerance", function()
    sk.manual_seed(7)
    local x = (sk.rand(300007) - 0.5) * 1e6 -- cancellations: the exact float32 result depends on order
    local got, want = x:cuda():sum():item(), x:sum():item()
    local scale = x:abs():sum():item()
    assert.is_true(math.abs(got - want) <= 1e-7 * scale, ("got %g, want %g"):format(got, want))
    assert.equal(got, x:cuda():sum():item()) -- the same order every time
  end)

  it("reduce over inner, outer and middle dims, and several, with keepdim, as the CPU", function()
    sk.manual_seed(3)
    local x = sk.rand({37, 129, 65}):sub(0.5)
    for _, keep in ipairs { false, true } do
      local o = {keepdim = keep}
      same(function(t) return t:sum(2, o) end, x, 1e-6)
      same(function(t) return t:sum(0, o) end, x, 1e-6)
      same(function(t) return t:sum(1, o) end, x, 1e-6)
      same(function(t) return t:mean({dim = {0, 2}, keepdim = keep}) end, x, 1e-6)
      same(function(t) return t:amax({dim = {0, 1}, keepdim = keep}) end, x, 0)
      same(function(t) return t:amax(1, o) end, x, 0)
      same(function(t) return t:argmax(0, o) end, x, 0)
      same(function(t) return t:argmax(2, o) end, x, 0)
    end
  end)

  it("split a long reduction over an outer dim with few outputs into two passes", function()
    sk.manual_seed(5)
    local x = sk.rand({200003, 3})
    same(function(t) return t:sum(0) end, x, 1e-6)
    same(function(t) return t:mean(0) end, x, 1e-6)
    same(function(t) return t:amax(0) end, x, 0)
    same(function(t) return t:argmax(0) end, x, 0)
    local y = sk.rand({3, 200003}) -- inner: rows, split too
    same(function(t) return t:sum(1) end, y, 1e-6)
    same(function(t) return t:argmax(1) end, y, 0)
  end)

  it("write both passes' results through a strided out", function()
    sk.manual_seed(17)
    local x = sk.rand({100003, 4})
    local o = sk.zeros(4, 2):cuda():select(1, 1)
    sk.sum(x:cuda(), 0, {out = o})
    h.assert_close(o:cpu():totable(), x:sum(0):totable(), 1e-6)
    local i = sk.zeros(4, 3, {dtype = "int64"}):cuda():select(1, 2)
    sk.argmax(x:cuda(), 0, {out = i})
    assert.same(x:argmax(0):totable(), i:cpu():totable())
  end)

  it("read transposed, permuted and sliced inputs in place, as the CPU", function()
    sk.manual_seed(11)
    local x = sk.rand({300, 170})
    same(function(t) return t:t():sum(1) end, x, 1e-6)
    same(function(t) return t:t():sum(0) end, x, 1e-6)
    same(function(t) return t:narrow(1, 5, 101):sum(1) end, x, 1e-6)
    same(function(t) return t:narrow(0, 7, 200):t():argmax(1) end, x, 0)
    same(function(t) return t:reshape({30, 10, 170}):permute({2, 0, 1}):mean({dim = {0, 2}}) end, x, 1e-6)
    same(function(t) return t:t():amax() end, x, 0)
  end)

  it("keep the dtype rules: float16 and float64 values, int64 results for integers", function()
    sk.manual_seed(13)
    local x = sk.rand({513, 77}):sub(0.5)
    same(function(t) return t:to("float16"):sum(0) end, x, 2e-3)
    same(function(t) return t:to("float16"):mean(1) end, x, 2e-3)
    same(function(t) return t:to("float16"):amax() end, x, 0)
    same(function(t) return t:to("float16"):argmax(0) end, x, 0)
    same(function(t) return t:to("float64"):sum() end, x, 1e-12)
    same(function(t) return t:to("float64"):argmax(1) end, x, 0)
    same(function(t) return (t * 1000):to("int32"):sum(1) end, x, 0)
    same(function(t) return (t * 1000):to("int64"):amax(0) end, x, 0)
    same(function(t) return t:gt(0):sum() end, x, 0)
    same(function(t) return t:sum({dtype = "float16"}) end, x, 2e-3)
  end)

  it("sum and compare int64 exactly beyond 2^53", function()
    local v = rows_of(70001, function(i) return i == 1 and (1 << 60) or 1 end)
    local x = sk.tensor(v, {dtype = "int64"})
    assert.equal((1 << 60) + 70000, x:cuda():sum():item())
    local big = sk.tensor(rows_of(3000, function(i) return (1 << 62) + (i * 7919) % 3001 end), {dtype = "int64"})
    assert.equal(big:amax():item(), big:cuda():amax():item())
    assert.equal(big:argmax():item(), big:cuda():argmax():item())
    assert.same(big:reshape({30, 100}):argmax(1):totable(), big:cuda():reshape({30, 100}):argmax(1):cpu():totable())
  end)

  it("let NaN win amax and argmax, and keep the first index of ties, in one pass and in two", function()
    for _, n in ipairs { 1000, 100003 } do
      local v = rows_of(n, function(i) return (i == 11 or i == 21) and 5 or 1 end)
      local x = sk.tensor(v)
      assert.equal(10, x:cuda():argmax():item())
      v[n - 500], v[n - 100] = nan, nan
      x = sk.tensor(v)
      local m = x:cuda():amax():item()
      assert.is_true(m ~= m)
      assert.equal(n - 501, x:cuda():argmax():item())
    end
    local r = sk.tensor({{1, nan, 3}, {4, 5, 6}, {nan, 2, nan}})
    same(function(t) return t:amax(1) end, r, 0)
    same(function(t) return t:argmax(1) end, r, 0)
    same(function(t) return t:argmax(0) end, r, 0)
  end)

  it("give 0 for an empty sum and NaN for an empty mean, and refuse an empty amax or argmax", function()
    local e = sk.zeros({0, 5})
    same(function(t) return t:sum(0) end, e, 0)
    same(function(t) return t:mean(0) end, e, 0)
    same(function(t) return t:sum(1) end, e, 0)
    assert.equal(h.err(function() return e:amax(0) end), h.err(function() return e:cuda():amax(0) end))
    assert.equal(h.err(function() return e:argmax() end), h.err(function() return e:cuda():argmax() end))
  end)
end)

describe("CUDA autograd", function()
  it("gives the CPU's gradients for an MLP step and a softmax attention, gradients on the device", function()
    local function grads(dev)
      sk.manual_seed(5)
      local x = sk.randn(6, 8, { dtype = "float64" }):to(dev)
      local w1 = sk.randn(8, 5, { dtype = "float64" }):to(dev):requires_grad_()
      local b1 = sk.randn(5, { dtype = "float64" }):to(dev):requires_grad_()
      local q = sk.randn(2, 4, 3, { dtype = "float64" }):to(dev):requires_grad_()
      local h = (x:matmul(w1) + b1):tanh()
      local att = sk.softmax(q:matmul(q:transpose(1, 2)) / 2, -1)
      local loss = sk.cross_entropy(h, sk.tensor({ 0, 1, 2, 3, 4, 0 }):to(dev)) + att:pow(2):sum() + h:mean()
      loss:backward()
      assert.equal(dev == "cuda" and "cuda:0" or "cpu", w1.grad:device())
      return { w1.grad:cpu():totable(), b1.grad:cpu():totable(), q.grad:cpu():totable() }
    end
    h.assert_close(grads("cuda"), grads("cpu"), 1e-10)
  end)
end)

describe("CUDA plans", function()
  it("replay on the device over a device arena, as eager computes, numbers and CPU 0-dim tensors as constants", function()
    sk.manual_seed(6)
    local x, w = sk.randn(16, 8):cuda(), sk.randn(8, 4):cuda()
    local i = (sk.arange(128, { dtype = "int64" }):view({ 16, 8 }) % 5):cuda()
    local c = sk.tensor(0.25) -- a CPU 0-dim tensor, captured
    local function f(a, idx) return sk.gelu((a + idx):matmul(w) * 0.5 + c):sum(1), (a * 2):t() end
    local p = sk.plan(f, x, i)
    local r1, r2 = p(x, i)
    local e1, e2 = f(x, i)
    assert.equal("cuda:0", r1:device())
    assert.is_true(sk.equal(r1:cpu(), e1:cpu()) and sk.equal(r2:cpu(), e2:cpu()))
    local st = p:stats()
    assert.equal(6, st.out_steps)
    assert.equal(0, st.temporaries) -- device kernels convert as they load and store
    assert.is_true(st.arena_bytes > 0)
    local o1, o2 = sk.empty(16):cuda(), sk.empty(8, 16):cuda()
    assert.matches("output 2 is a view of an intermediate", h.err(p, x, i, { out = { o1, o2 } }))
    assert.matches("sk.plan: argument 1 is on cpu, the plan was made for cuda:0", h.err(p, x:cpu(), i))
    local cpu8 = sk.ones(8)
    assert.matches("a tensor on cpu is used in a plan for cuda:0", h.err(sk.plan, function(a) return a + cpu8 end, x))
    assert.matches("'aten::ones' makes a tensor on cpu inside a plan for cuda:0",
                   h.err(sk.plan, function(a) return a + sk.ones(8, { device = "cpu" }) end, x))
    -- a factory given no device makes its tensor on the CPU, as in eager
    assert.matches("'aten::ones' makes a tensor on cpu inside a plan for cuda:0", h.err(sk.plan, function(a) return a + sk.ones(8) end, x))
    assert.is_true(sk.equal(sk.plan(function(a) return a + sk.ones(8, { device = "cuda" }) end, x)(x):cpu(), x:cpu() + 1))
  end)
end)
