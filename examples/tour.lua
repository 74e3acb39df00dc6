-- examples/tour.lua — a short walk through sk (run with `make demo`)
local sk = require "sk"

local a = sk.tensor({{1, 2, 3}, {4, 5, 6}}, {dtype = "float32"})
local b = sk.tensor({10, 20, 30})
print("a =", a)
print("a + b (broadcast, float32 + int64 -> float32):", a + b)
print("sk.add(a, b, {alpha = 2}):", sk.add(a, b, {alpha = 2}))
print("2 - a:", 2 - a)

local c = sk.empty({0})
sk.mul(a, a, {out = c})         -- an out with 0 elements is resized
print("mul into out:", c)

a:add_(1)                        -- in place, bumps the version counter
print("after a:add_(1), version", a:version(), a)

print("sum over dim 1, keepdim:", a:sum({dim = 1, keepdim = true}))
print("mean:", a:mean(), "amax(0):", a:amax(0), "argmax:", a:argmax())
print("matmul a @ a^T:", sk.matmul(a, a:t()))
print("view and transpose:", a:view(3, 2), a:transpose(0, 1):is_contiguous())

sk.manual_seed(0)
print("rand:", sk.rand(2, 2))
print("comparison:", a:gt(3), sk.where(a:gt(3), a, sk.zeros({2, 3})))

local m = sk.empty({1024, 4096}, {device = "meta"})
print("meta tensors have shapes only:", m:sum({dim = 1}))
print("dispatch table of add.Tensor:")
local tbl = sk.dispatch_table("aten::add.Tensor")
for key, e in pairs(tbl) do print("", key, e.source, e.origin) end
