-- bench/gc_loop.lua — a loop of large temporaries, run as its own lua5.4 process
-- (by bench/bench.lua and spec/memory_spec.lua): prints its peak RSS in KiB,
-- the seconds the loop took, and the collector's mode at the end.
-- usage: lua5.4 bench/gc_loop.lua [default|incremental|generational] [iterations] [kind]
--   kind "temps": two 4 MiB temporaries per iteration; "mlp": a small MLP step with views and in-place updates;
--   "graphs": autograd graphs of 4 MiB of saved tensors each, reachable only through a 0-dim loss
--   that is dropped without backward; "outputs": 4 MiB results their own nodes save (softmax),
--   backward through each; "train": training steps of an MLP with sk.nn and sk.optim.
local mode, iters, kind = arg[1] or "default", tonumber(arg[2] or 300), arg[3] or "temps"
if mode ~= "default" then collectgarbage(mode) end
local sk = require "sk"
sk.manual_seed(0)
local t0 = os.clock()
if kind == "temps" then
  local h = sk.randn(1024, 1024)
  for _ = 1, iters do local a = h * 2; local b = h * 2; local _ = a, b end
elseif kind == "graphs" then
  local x = sk.randn(1024, 256, { requires_grad = true })
  local keep
  for _ = 1, iters do
    local h = x
    for _ = 1, 4 do h = (h * 1.0001):tanh() end -- tanh saves its 1 MiB result
    keep = h:sum()
  end
  local _ = keep
elseif kind == "outputs" then
  -- the result is boxed while its node holds a saved alias of it: the box must still be
  -- charged its 4 MiB (it once was not, and 300 iterations kept 1.2 GB)
  local x = sk.randn(1024, 1024, { requires_grad = true })
  local g = sk.randn(1024, 1024)
  for _ = 1, iters do
    sk.softmax(x, -1):backward(g)
    x.grad = nil
  end
elseif kind == "train" then
  local model = sk.nn.Sequential(sk.nn.Linear(256, 256), sk.nn.ReLU(), sk.nn.Linear(256, 10))
  local opt = sk.optim.Adam(model:parameters(), { lr = 1e-3 })
  local x, y = sk.randn(64, 256), sk.randint(10, { 64 })
  for _ = 1, iters do
    opt:zero_grad()
    local loss = sk.cross_entropy(model(x), y)
    loss:backward()
    opt:step()
  end
else
  local w1, w2 = sk.randn(256, 512) * 0.05, sk.randn(512, 64) * 0.05
  local x = sk.randn(128, 256)
  for _ = 1, iters do
    local hdn = sk.relu(sk.matmul(x, w1))
    local y = sk.matmul(hdn, w2)
    local g = y:t():matmul(hdn):t() * 1e-4
    w2:sub_(g)
    local _ = y:sum():item()
  end
end
local dt = os.clock() - t0
local peak
for l in io.lines("/proc/self/status") do peak = peak or tonumber(l:match("^VmHWM:%s*(%d+)")) end
-- collectgarbage(mode) returns the previous mode: the mode the loop ran in
local now = collectgarbage("incremental")
print(peak, dt, now)
