-- bench/bench_plan.lua — sk.plan against eager sk, same process, interleaved rounds (best of
-- each): a chain of 200 small pointwise ops on 1K float32 tensors, and a transformer block
-- forward (bench/transformer_block.lua: d = 256, 4 heads, sequence 128, batch 8).
-- Rows: time per call eager / replay (and replay into caller outs), the arena against the sum
-- of the intermediates and against the best an eager run could hold (each intermediate freed at
-- its last use), and planning time per recorded op. `lua5.4 bench/bench_plan.lua [threads]`.
local sk = require "sk"
local util = require "util"
local ROUNDS = tonumber(os.getenv("ROUNDS") or "5")
sk.set_num_threads(tonumber(arg[1] or "1"))

local function chain_case()
  local x = sk.randn({ 1024 })
  local function chain(a)
    for i = 1, 200 do
      local k = i % 4
      if k == 0 then a = a * 1.001 elseif k == 1 then a = a + 0.5 elseif k == 2 then a = a:neg() else a = a - 0.25 end
    end
    return a
  end
  return "200 pointwise ops, 1K float32", chain, { x }, 20
end

local function block_case()
  local forward, _, x = require("transformer_block").make(false)
  return "transformer block d256 h4 s128 b8", forward, { x }, 2
end

print(string.format("%d thread(s); best of %d interleaved rounds", sk.get_num_threads(), ROUNDS))
print(string.format("%-32s %10s %10s %10s %7s %9s %9s %9s %7s %8s", "case", "eager us", "replay us", "+out us",
  "ratio", "arena KiB", "inter KiB", "peak KiB", "a/inter", "plan us/op"))
for _, mk in ipairs { chain_case, block_case } do
  local name, fn, inputs, reps = mk()
  local unpack = table.unpack
  local p = sk.plan(fn, unpack(inputs))
  local out = { p(unpack(inputs)) }
  local call_in = { unpack(inputs) }
  call_in[#call_in + 1] = { out = out }
  local te, tr, to, tp = math.huge, math.huge, math.huge, math.huge
  local st = p:stats()
  for _ = 1, ROUNDS do
    te = math.min(te, util.best(reps, function() return fn(unpack(inputs)) end, 1))
    tr = math.min(tr, util.best(reps, function() return p(unpack(inputs)) end, 1))
    to = math.min(to, util.best(reps, function() return p(unpack(call_in)) end, 1))
    tp = math.min(tp, util.best(3, function() sk.plan(fn, unpack(inputs)):close() end, 1))
    collectgarbage()
  end
  assert(sk.equal(p(unpack(inputs)), fn(unpack(inputs))), name .. ": replay differs from eager")
  print(string.format("%-32s %10.1f %10.1f %10.1f %6.2fx %9.1f %9.1f %9.1f %7.2f %8.2f", name, te * 1e6, tr * 1e6,
    to * 1e6, tr / te, st.arena_bytes / 1024, st.intermediate_bytes / 1024, st.eager_peak_bytes / 1024,
    st.arena_bytes / st.intermediate_bytes, tp / st.steps * 1e6))
end
