-- spec/overflow_spec.lua — sizes, strides and offsets near the int64 limits: an exact result or an error naming the op
-- Every op that computes a size, a count, a stride or an offset from its arguments is called with values near
-- 2^31, 2^32, 2^62, 2^63 - 1 and math.mininteger; expected values are worked out by hand, messages are PyTorch's
-- where it has one ("numel: integer multiplication overflow").
local h = require "spec.helper"
local sk = h.sk
local T = sk.tensor
local MAX, MIN = math.maxinteger, math.mininteger
local P31, P32, P40, P62 = 1 << 31, 1 << 32, 1 << 40, 1 << 62

-- The error of fn(...), which must contain each of the plain strings in `parts`.
local function fails(parts, fn, ...)
  local e = h.err(fn, ...)
  for _, p in ipairs(parts) do
    assert(e:find(p, 1, true), string.format("error %q lacks %q", e, p))
  end
end

local function meta(sizes, dtype) return sk.empty(sizes, {device = "meta", dtype = dtype}) end
local function shapes(list)
  local out = {}
  for i, t in ipairs(list) do out[i] = t:shape() end
  return out
end
local function isnan(v) return v ~= v end

describe("element counts and byte counts", function()
  it("refuses sizes whose numel overflows, even with a zero among them", function()
    fails({"sk.empty: numel: integer multiplication overflow"}, sk.empty, {P32, P32})
    fails({"sk.empty: numel: integer multiplication overflow"}, sk.empty, {P40, P40, 0})
    fails({"sk.zeros: numel: integer multiplication overflow"}, sk.zeros, {P62, 2}, {device = "meta"})
    fails({"sk.ones: numel: integer multiplication overflow"}, sk.ones, {MAX, 2})
  end)
  it("refuses storages whose byte count overflows, on any device", function()
    fails({"sk.empty: storage size calculation overflowed: 4611686018427387904 elements of 4 bytes"}, sk.empty, {P31, P31})
    fails({"sk.zeros: storage size calculation overflowed: 4611686018427387904 elements of 8 bytes"}, sk.zeros,
      {P62}, {device = "meta", dtype = "float64"})
    fails({"sk.empty: storage size calculation overflowed: 9223372036854775807 elements of 2 bytes"}, sk.empty, {MAX},
      {device = "meta", dtype = "int16"})
  end)
  it("accepts the largest representable shapes as meta tensors and empty tensors", function()
    assert.same({P62}, meta({P62}, "uint8"):shape())
    assert.same({MAX}, meta({MAX}, "bool"):shape())
    local e = sk.empty({P40, 0})
    assert.same({P40, 0}, e:shape())
    assert.same({1, 1}, e:stride())
    assert.same({0, MAX}, sk.empty({0, MAX}):shape())
    assert.same({5, 0, 1 << 50}, sk.empty({5, 0, 1 << 50}):shape())
  end)
  it("names the overflow in broadcasting ops", function()
    local a, b = sk.ones(1, 1):expand({P40, 1}), sk.ones(1, 1):expand({1, P40})
    fails({"sk.add: numel: integer multiplication overflow"}, sk.add, a, b)
    local c, d = sk.ones(1, 1, 2, 2):expand({P40, 1, 2, 2}), sk.ones(1, 1, 2, 2):expand({1, P40, 2, 2})
    fails({"sk.matmul: ", "numel: integer multiplication overflow"}, sk.matmul, c, d)
  end)
end)

describe("views", function()
  it("expand refuses a numel past int64 and keeps the largest one", function()
    fails({"Tensor:expand: numel: integer multiplication overflow"}, function() return sk.ones(1, 1):expand({P32, P32}) end)
    fails({"Tensor:expand: numel: integer multiplication overflow"}, function() return sk.ones(1):expand({P62, 2}) end)
    local e = sk.ones(1, 1):expand({MAX, 1})
    assert.equal(MAX, e:numel())
    assert.same({0, 1}, e:stride())
    local big = sk.ones(1, 1):expand({P31, P31})
    assert.equal(P62, big:numel())
    assert.same({P62}, big:flatten():shape())
  end)
  it("slice with a huge step takes one element, and its stride never overflows", function()
    local x = sk.arange(10)
    local s = x:slice(0, 1, nil, P62)
    assert.same({1}, s:shape())
    assert.same({1}, s:stride()) -- 2^62 elements of 8 bytes is no byte offset: a size-1 dim's stride becomes 1
    assert.same({1}, s:totable())
    assert.same({7}, s:fill_(7):totable())
    assert.same({P62}, sk.arange(10, {dtype = "int8"}):slice(0, 1, nil, P62):stride()) -- 2^62 bytes fit
    assert.same({0}, x:slice(0, 0, MAX, MAX):totable())
    assert.same({0, 3, 6, 9}, x:slice(0, MIN, MAX, 3):totable())
    assert.same({0}, x:slice(0, MAX, MIN, 1):shape())
    assert.same({}, x:slice(0, MAX, nil, 1):totable())
    local m = sk.arange(20):view(4, 5)
    local r = m:slice(0, 1, nil, MAX) -- stride 5 * MAX overflows: the single row keeps stride 5
    assert.same({1, 5}, r:shape())
    assert.same({5, 1}, r:stride())
    assert.same({{5, 6, 7, 8, 9}}, r:totable())
    assert.same({{1}, {6}, {11}, {16}}, m:slice(1, 1, nil, MAX):totable())
  end)
  it("narrow and select name the bad start, length or index", function()
    local x = sk.arange(10)
    fails({"Tensor:narrow: start (2) + length (9223372036854775807) exceeds dimension size (10)."},
      function() return x:narrow(0, 2, MAX) end)
    fails({"Tensor:narrow: start out of range (expected to be in range of [-10, 10], but got -9223372036854775808)"},
      function() return x:narrow(0, MIN, 1) end)
    fails({"Tensor:narrow: start out of range", "but got 9223372036854775807"}, function() return x:narrow(0, MAX, 1) end)
    fails({"Tensor:narrow: narrow(): length must be non-negative"}, function() return x:narrow(0, 0, MIN) end)
    assert.same({7, 8, 9}, x:narrow(0, -3, 3):totable())
    fails({"Tensor:select: select(): index -9223372036854775808 out of range for tensor of size [10] at dimension 0"},
      function() return x:select(0, MIN) end)
    fails({"Tensor:select: select(): index 9223372036854775807 out of range"}, function() return x:select(0, MAX) end)
    local e = sk.empty({P40, 0}):t()
    local n = e:narrow(1, P40, 0)
    assert.same({0, 0}, n:shape())
    assert.equal(P40, n:storage_offset())
  end)
  it("view and reshape check the known sizes' numel, even when one is 0", function()
    fails({"Tensor:view: shape '[4611686018427387904, -1]' is invalid for input of size 3"},
      function() return sk.ones(3):view(P62, -1) end)
    fails({"Tensor:view: argument 'size' [0, 1099511627776, 1099511627776]: numel: integer multiplication overflow"},
      function() return sk.ones(0):view(0, P40, P40) end)
    fails({"Tensor:reshape: argument 'shape' [9223372036854775807, 0, 2]: numel: integer multiplication overflow"},
      function() return sk.ones(0):reshape(MAX, 0, 2) end)
    local v = sk.ones(0):view(-1, MAX)
    assert.same({0, MAX}, v:shape())
    assert.same({1, 1}, v:stride()) -- MAX elements of 4 bytes is no byte offset: the size-0 dim's stride becomes 1
  end)
  it("dim arguments near the int64 limits are out of range, not wrapped", function()
    local m = sk.ones(2, 3)
    local range = "dimension out of range (expected to be in range of [-2, 1], but got "
    fails({"Tensor:permute: argument 'dims': " .. range .. "-9223372036854775808)"}, function() return m:permute({MIN, 0}) end)
    fails({"Tensor:permute: argument 'dims': " .. range .. "9223372036854775807)"}, function() return m:permute({MAX, 0}) end)
    fails({"Tensor:transpose: argument 'dim0': " .. range .. "9223372036854775807)"}, function() return m:transpose(MAX, 0) end)
    fails({"Tensor:flatten: argument 'start_dim': " .. range .. "-9223372036854775808)"}, function() return m:flatten(MIN) end)
    fails({"Tensor:squeeze: argument 'dim': " .. range .. "9223372036854775807)"}, function() return m:squeeze(MAX) end)
    fails({"Tensor:unsqueeze: argument 'dim': dimension out of range", "-9223372036854775808"},
      function() return m:unsqueeze(MIN) end)
    fails({"sk.split: argument 'dim': " .. range .. "-9223372036854775808)"}, sk.split, m, 1, MIN)
  end)
end)

describe("sizes made from arguments", function()
  it("tile and repeat refuse a result size past int64", function()
    local m = sk.ones(2, 3)
    fails({"Tensor:tile: repeat: size 2 at dim 0 times 4611686018427387904 repeats overflows (argument 'repeats')"},
      function() return m:tile({P62, 1}) end)
    fails({"Tensor:tile: repeat: the result size [4294967296, 6442450944] (argument 'repeats'): numel: integer multiplication overflow"},
      function() return m:tile({P31, P31}) end)
    fails({"Tensor:repeat: size 3 at dim 1 times 9223372036854775807 repeats overflows"},
      function() return m["repeat"](m, {0, MAX}) end)
    fails({"Tensor:repeat: the result size [0, 2199023255552, 3298534883328] (argument 'repeats'): numel"},
      function() return m["repeat"](m, {0, P40, P40}) end)
    local z = m["repeat"](m, {0, P40})
    assert.same({0, 3 * P40}, z:shape())
    assert.same({0, P40}, sk.ones(0, 1):tile({1, P40}):shape())
  end)
  it("unflatten checks the product of its sizes", function()
    fails({"Tensor:unflatten: argument 'sizes' [4611686018427387904, 4]: numel: integer multiplication overflow"},
      function() return sk.ones(6):unflatten(0, {P62, 4}) end)
    fails({"unflatten: argument 'sizes' [4294967296, 4294967296]: numel: integer multiplication overflow"},
      function() return sk.ones(6):unflatten(0, {P32, P32}) end)
    fails({"unflatten: argument 'sizes' [0, 1099511627776, 1099511627776]: numel"},
      function() return sk.ones(0):unflatten(0, {0, P40, P40}) end)
    fails({"unflatten: Provided sizes [-1, 4611686018427387904] don't multiply up to the size of dim 0 (6)"},
      function() return sk.ones(6):unflatten(0, {-1, P62}) end)
    assert.same({0, MAX}, sk.ones(0):unflatten(0, {0, MAX}):shape())
    assert.same({2, 3}, sk.ones(6):unflatten(0, {-1, 3}):shape())
  end)
  it("split and chunk with huge sizes return the whole dim, never a wrapped count", function()
    local x = sk.arange(10)
    assert.same({{10}}, shapes(x:split(P62)))
    assert.same({{10}}, shapes(x:split(MAX)))
    assert.same({{9}, {1}}, shapes(x:split(9)))
    assert.same({{1}, {1}, {1}, {1}, {1}}, shapes(sk.ones(5):chunk(MAX)))
    assert.same({{1}, {1}, {1}, {1}, {1}}, shapes(sk.ones(5):chunk(P62)))
    assert.same({{3}, {2}}, shapes(sk.ones(5):chunk(2)))
    fails({"Tensor:chunk: 9223372036854775807 chunks are too many"}, function() return sk.ones(0):chunk(MAX) end)
    fails({"Tensor:unbind: 1099511627776 pieces are too many"}, function() return sk.ones(1):expand({P40}):unbind(0) end)
  end)
  it("split_with_sizes refuses sizes whose sum overflows to the dim size", function()
    local msg = "sk.split_with_sizes: split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at dimension 0)"
    fails({msg, "[4611686018427387904, 4611686018427387904, 4611686018427387904, 4611686018427387904, 5]"},
      sk.split_with_sizes, sk.ones(5), {P62, P62, P62, P62, 5})
    fails({msg}, sk.split_with_sizes, sk.ones(5), {MAX, MAX, 7})
    fails({"Tensor:split: split_with_sizes expects split_sizes to sum exactly to 5"},
      function() return sk.ones(5):split({MAX, MAX, 7}) end)
    assert.same({{0}, {5}, {0}}, shapes(sk.split_with_sizes(sk.ones(5), {0, 5, 0})))
  end)
  it("cat and stack refuse a result size past int64", function()
    local e = sk.ones(1):expand({P62})
    fails({"sk.cat: torch.cat(): the result's size at dimension 0 overflows at tensor number 1 in the list"}, sk.cat, {e, e})
    fails({"sk.stack: numel: integer multiplication overflow"}, sk.stack, {e, e, e})
    local half = meta({1}, "uint8"):expand({1 << 61})
    assert.same({P62}, sk.cat({half, half}):shape())
    assert.same({3, (1 << 61) - 1}, sk.stack({meta({(1 << 61) - 1}, "uint8"), meta({(1 << 61) - 1}, "uint8"), meta({(1 << 61) - 1}, "uint8")}):shape())
  end)
end)

describe("diagonal offsets near the int64 limits", function()
  local m = sk.arange(6):view(2, 3) -- {{0, 1, 2}, {3, 4, 5}}
  it("tril and triu keep everything or nothing", function()
    local all, none = {{0, 1, 2}, {3, 4, 5}}, {{0, 0, 0}, {0, 0, 0}}
    assert.same(all, m:tril(MAX):totable())
    assert.same(all, m:tril(MAX - 1):totable())
    assert.same(none, m:tril(MIN):totable())
    assert.same(none, m:tril(MIN + 1):totable())
    assert.same(none, m:triu(MAX):totable())
    assert.same(all, m:triu(MIN):totable())
    assert.same({{0, 0, 0}, {3, 0, 0}}, m:tril(-1):totable())
    assert.same({{0, 0, 2}, {0, 0, 0}}, m:triu(2):totable())
    assert.same(none, m:clone():tril_(MIN):totable())
    assert.same(all, m:clone():triu_(MIN):totable())
    local b = sk.arange(12):view(2, 2, 3)
    assert.same({{{0, 1, 2}, {3, 4, 5}}, {{6, 7, 8}, {9, 10, 11}}}, b:tril(MAX):totable())
    assert.same({{{0, 0, 0}, {0, 0, 0}}, {{0, 0, 0}, {0, 0, 0}}}, b:triu(MAX):totable())
  end)
  it("diagonal and diagonal_scatter are empty past the corners (fuzz: -offset of INT64_MIN)", function()
    assert.same({0}, m:diagonal(MIN):shape())
    assert.same({0}, m:diagonal(MIN + 1):shape())
    assert.same({0}, m:diagonal(MAX):shape())
    assert.same({0}, m:diagonal(-2):shape())
    assert.same({3}, m:diagonal(-1):totable())
    assert.same({{0, 1, 2}, {3, 4, 5}}, sk.diagonal_scatter(m, sk.zeros({0}, {dtype = "int64"}), MIN):totable())
  end)
  it("rot90 names a dim out of range at the limits of int64 (fuzz F19: INT64_MIN - 1)", function()
    assert.matches("Rotation dim0 out of range, dim0 = %-9223372036854775808", h.err(sk.rot90, m, 1, {MIN, 1}))
    assert.matches("Rotation dim1 out of range, dim1 = 9223372036854775807", h.err(sk.rot90, m, 1, {0, MAX}))
    assert.matches("expected rotation dims to be different", h.err(sk.rot90, m, 1, {1, -1}))
    assert.same({{1, 4}, {0, 3}}, sk.rot90(m:narrow(1, 0, 2), 1, {0, 1}):totable())
  end)
  it("triu_indices with 2^63 - 1 rows and a few elements walks only those rows (fuzz F18: a hang)", function()
    -- rows 0..5 of a 3-column upper triangle at offset -3 hold 3, 3, 3, 3, 2, 1 elements
    local t = sk.triu_indices(MAX, 3, -3)
    assert.same({2, 15}, t:shape())
    assert.same({5, 2}, {t[0][14]:item(), t[1][14]:item()})
    assert.same({2, 0}, sk.triu_indices(MAX, 3, MAX):shape())
    assert.same({2, 0}, sk.tril_indices(MAX, 3, MIN):shape())
  end)
  it("diag of a matrix is empty past its corners, and of a vector needs n + |k| to fit", function()
    assert.same({0}, m:diag(MAX):shape())
    assert.same({0}, m:diag(MIN):shape())
    assert.same({0}, m:diag(3):shape())
    assert.same({3}, m:diag(-1):totable())
    assert.same({2}, m:diag(2):totable())
    fails({"Tensor:diag: diag(): the result size 3 + |-9223372036854775808| overflows (argument 'diagonal')"},
      function() return sk.ones(3):diag(MIN) end)
    fails({"Tensor:diag: diag(): the result size 3 + |9223372036854775807| overflows (argument 'diagonal')"},
      function() return sk.ones(3):diag(MAX) end)
    fails({"Tensor:diag: numel: integer multiplication overflow"}, function() return sk.ones(3):diag(P62) end)
    fails({"Tensor:diag: numel: integer multiplication overflow"}, function() return sk.ones(0):diag(MAX) end)
    assert.same({P31 + 1, P31 + 1}, meta({1}, "uint8"):diag(-P31):shape())
    assert.same({{0, 0}, {7, 0}}, T({7}):diag(-1):totable())
  end)
end)

describe("factories", function()
  it("arange counts and values near the int64 limits", function()
    assert.same({MIN, -P62, 0, P62}, sk.arange(MIN, MAX, P62):totable())
    assert.same({MAX, -1}, sk.arange(MAX, MIN, MIN):totable())
    assert.same({MIN, -1}, sk.arange(MIN, 0, MAX):totable())
    assert.same({0}, sk.arange(0, MAX, MAX):totable())
    assert.same({MAX - 1}, sk.arange(MAX - 1, MAX):totable())
    fails({"sk.arange: invalid size, possible overflow?"}, sk.arange, MIN, MAX)
    fails({"sk.arange: invalid size, possible overflow?"}, sk.arange, MAX, MIN, -1)
  end)
  it("linspace, randperm and eye check their sizes", function()
    fails({"sk.linspace: storage size calculation overflowed: 4611686018427387904 elements of 4 bytes"}, sk.linspace, 0, 1, P62)
    fails({"sk.randperm: storage size calculation overflowed: 9223372036854775807 elements of 8 bytes"}, sk.randperm, MAX)
    fails({"sk.eye: numel: integer multiplication overflow"}, sk.eye, P32, P32)
    assert.same({0, MAX}, sk.eye(0, MAX):shape())
    assert.same({MAX, 0}, sk.eye(MAX, 0):shape())
    assert.same({1, MAX}, sk.eye(1, MAX, {dtype = "bool", device = "meta"}):shape())
    assert.same({{1, 0, 0}, {0, 1, 0}}, sk.eye(2, 3, {dtype = "int64"}):totable())
  end)
end)

describe("random_ ranges near the int64 limits", function()
  it("draws from one-value ranges at both ends", function()
    local t = sk.empty({4}, {dtype = "int64"})
    assert.same({MAX - 1, MAX - 1, MAX - 1, MAX - 1}, t:random_(MAX - 1, MAX):totable())
    assert.same({MIN, MIN, MIN, MIN}, t:random_(MIN, MIN + 1):totable())
    assert.same({MAX, MAX, MAX, MAX}, t:random_(MAX):totable()) -- to = None: [MAX, MAX]
  end)
  it("draws from ranges wider than INT64_MAX, and the full 2^64", function()
    sk.manual_seed(7)
    local function count(t, f) local n = 0 for _, v in ipairs(t:totable()) do if f(v) then n = n + 1 end end return n end
    local t = sk.empty({1000}, {dtype = "int64"})
    t:random_(MIN, P62) -- 3 * 2^62 values
    assert.equal(0, count(t, function(v) return v >= P62 end))
    assert.is_true(count(t, function(v) return v < -P62 end) > 200)
    assert.is_true(count(t, function(v) return v > 0 end) > 100)
    t:random_(MIN) -- [MIN, MAX]: all 2^64 values
    assert.is_true(count(t, function(v) return v < -P62 end) > 150)
    assert.is_true(count(t, function(v) return v > P62 end) > 150)
    t:random_(MIN, MAX)
    assert.is_true(count(t, function(v) return v < 0 end) > 400)
    assert.is_true(count(t, function(v) return v > 0 end) > 400)
    local r = sk.randint(MIN, MAX, {1000})
    assert.is_true(count(r, function(v) return v < 0 end) > 400)
  end)
  it("checks from < to before computing to - 1, with PyTorch's message", function()
    local t = sk.empty({4}, {dtype = "int64"})
    fails({"Tensor:random_: random_ expects 'from' to be less than 'to', but got from=9223372036854775807 >= to=-9223372036854775808"},
      function() return t:random_(MAX, MIN) end)
    fails({"random_ expects 'from' to be less than 'to', but got from=-9223372036854775808 >= to=-9223372036854775808"},
      function() return t:random_(MIN, MIN) end)
    fails({"random_ expects 'from' to be less than 'to'"}, function() return meta({2}, "int64"):random_(MIN, MIN) end)
    fails({"Tensor:random_: the range [-9223372036854775808, -1] does not fit in int32"},
      function() return sk.empty({2}, {dtype = "int32"}):random_(MIN, 0) end)
  end)
end)

describe("round with any decimals", function()
  -- PyTorch 1.13 computes 10^|d| in the compute type: past its range that is inf and every value nan
  local x64 = T({1.5, -2.25, 123.456}, {dtype = "float64"})
  local x32 = T({1.5, -2.25, 123.456})
  local function all_nan(t) for _, v in ipairs(t:totable()) do if not isnan(v) then return false end end return true end
  it("matches PyTorch in range", function()
    assert.same({0, -0.0, 120}, x64:round({decimals = -1}):totable())
    assert.same({1.5, -math.huge, math.huge}, x64:round({decimals = 308}):totable())
    assert.same({0, -0.0, 0}, x64:round({decimals = -308}):totable())
    assert.same({1.5, -2.25, math.huge}, x32:round({decimals = 38}):totable())
    assert.same({0, -0.0, 0}, x32:round({decimals = -38}):totable())
  end)
  it("gives nan past the compute type's range, for every int64 decimals", function()
    for _, d in ipairs({309, -309, P31, -P31, P62, -P62, MAX, MIN, MIN + 1}) do
      assert.is_true(all_nan(x64:round({decimals = d})), "float64 decimals " .. d)
    end
    for _, d in ipairs({39, -39, MAX, MIN}) do
      assert.is_true(all_nan(x32:round({decimals = d})), "float32 decimals " .. d)
    end
    assert.is_true(all_nan(x64:clone():round_({decimals = MIN})))
  end)
end)

describe("printing and totable cost what they show", function()
  it("prints a tensor with no elements as [] with its shape, whatever the sizes", function()
    assert.equal("tensor([], shape={1099511627776, 0}, dtype=float32, device=cpu)", tostring(sk.empty({P40, 0})))
    assert.equal("tensor([], shape={0, 1099511627776}, dtype=int64, device=cpu)", tostring(sk.empty({0, P40}, {dtype = "int64"})))
    assert.equal("tensor([], shape={3, 0}, dtype=float32, device=cpu)", tostring(sk.empty({3, 0})))
    assert.equal("tensor([], shape={0}, dtype=float32, device=cpu)", tostring(sk.empty({0})))
    assert.equal("tensor([], shape={1, 0, 9223372036854775807}, dtype=bool, device=cpu)",
      tostring(sk.empty({1, 0, MAX}, {dtype = "bool"})))
    fails({"sk.empty: numel: integer multiplication overflow"}, sk.empty, {2, 0, MAX}) -- nonzero sizes multiply past int64
  end)
  it("prints a huge expanded tensor from its corners", function()
    local s = tostring(sk.ones(1, 1):expand({P31, P31}))
    assert.is_truthy(s:find("shape={2147483648, 2147483648}", 1, true))
    assert.is_truthy(s:find("[[1., 1., 1., ..., 1., 1., 1.],", 1, true))
  end)
  it("totable of an empty tensor nests down to its first 0 and refuses a huge nest", function()
    assert.same({{}, {}, {}}, sk.empty({3, 0}):totable())
    assert.same({}, sk.empty({0, P40}):totable())
    assert.same({{}, {}}, sk.empty({2, 0, 1 << 61}):totable())
    fails({"Tensor:totable: a tensor of shape [1099511627776, 0] has no elements but would need more than 1048576 nested tables"},
      function() return sk.empty({P40, 0}):totable() end)
  end)
end)
