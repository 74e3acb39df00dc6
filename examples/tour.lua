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
local values, indices = a:max(1)
print("max over dim 1:", values, indices)
print("softmax:", sk.softmax(a, -1))
print("matmul a @ a^T:", sk.matmul(a, a:t()))

-- indexing (0-based, Python-style slices with exclusive stops)
local m = sk.arange(12):view(3, 4)
print("m[1] =", m[1], "m[{{0, 2}, {1, 4, 2}}] =", m[{{0, 2}, {1, 4, 2}}])
m[m:gt(8)] = 0
print("after m[m:gt(8)] = 0:", m)

sk.manual_seed(0)
print("rand:", sk.rand(2, 2), "randperm:", sk.randperm(5))

print("meta tensors have shapes only:", sk.empty({1024, 4096}, {device = "meta"}):sum({dim = 1}))

-- a custom op from Lua: meta function + CPU kernel give all three variants
local lib = sk.library("tour")
lib:structured {
  out = "softplus.out(Tensor self, float beta=1, *, Tensor(a!) out) -> Tensor(a!)",
  meta = function(meta, self) meta:set_output(0, self:shape(), self:dtype()) end,
  impl = { CPU = function(out, self, beta) out:copy_(((self * beta):exp() + 1):log() / beta) end },
}
print("sk.ops.tour.softplus:", sk.ops.tour.softplus(sk.tensor({-1.0, 0.0, 1.0})))

-- a backend from Lua that implements only add.out; the CPU fallback runs the rest
sk.backends.register("npu")
lib:impl("aten::add.out", "npu", function(self, other, alpha, out)
  return out:copy_(sk.add(self:cpu(), other:cpu(), {alpha = alpha}))
end)
lib:fallback("npu", sk.cpu_fallback)
local x = sk.ones(3, {device = "npu"})
print("on npu:", x + x, sk.mul(x, x), "fallback counts:")
for op, n in pairs(sk.fallback.counts("npu")) do print("", op, n) end

print("dispatch table of add.Tensor:")
local tbl = sk.dispatch_table("aten::add.Tensor")
local keys = {}
for key in pairs(tbl) do keys[#keys + 1] = key end
table.sort(keys)
for _, key in ipairs(keys) do print("", key, tbl[key].source, tbl[key].origin) end
print("CUDA available:", sk.cuda.is_available())
print("CPU instruction set:", sk.cpu_isa())
