-- examples/spirals.lua — an MLP classifier trained on two interleaved spirals with sk.nn and
-- sk.optim: 2-64-64-2, tanh, cross-entropy, Adam; prints the loss and the accuracy.
-- Usage: lua5.4 examples/spirals.lua [steps]   (the spec runs it with a fixed seed and a bound)
local sk = require "sk"
local nn, optim = sk.nn, sk.optim

local M = {}

-- n points per class on two spirals, with a little noise
function M.data(n, seed)
  sk.manual_seed(seed or 0)
  local t = sk.rand(n) * 3 * math.pi + 0.5
  local noise = sk.randn(2 * n, 2) * 0.05
  local r = t / (3 * math.pi + 0.5)
  local xa = sk.stack({ r * t:cos(), r * t:sin() }, 1)
  local xb = -xa
  local x = sk.cat({ xa, xb }, 0) + noise
  local y = sk.cat({ sk.zeros(n, { dtype = "int64" }), sk.ones(n, { dtype = "int64" }) }, 0)
  return x, y
end

function M.train(steps, seed)
  local x, y = M.data(500, seed)
  sk.manual_seed(seed or 0)
  local model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
  local opt = optim.Adam(model:parameters(), { lr = 0.01 })
  local lossf = nn.CrossEntropyLoss()
  local loss
  for step = 1, steps do
    opt:zero_grad()
    loss = lossf(model(x), y)
    loss:backward()
    opt:step()
  end
  local acc = sk.no_grad(function() return model(x):argmax(1):eq(y):to("float32"):mean():item() end)
  return loss:item(), acc, model
end

if arg and arg[0] and arg[0]:match("spirals%.lua$") then
  local steps = tonumber(arg[1]) or 1000
  local loss, acc = M.train(steps, 0)
  print(string.format("spirals: %d steps, loss %.4f, accuracy %.2f %%", steps, loss, acc * 100))
end
return M
