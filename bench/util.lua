-- bench/util.lua — the timer the benchmarks share: best of rounds, wall clock
local now = require("blas_direct").now -- os.clock would add up the CPU time of all threads
local M = { now = now }

-- Seconds per call of fn: the best of `rounds` (default 5) timings of `reps` calls, after one warm-up call.
function M.best(reps, fn, rounds)
  fn()
  local t = math.huge
  for _ = 1, rounds or 5 do
    local t0 = now()
    for _ = 1, reps do fn() end
    t = math.min(t, (now() - t0) / reps)
  end
  return t
end

-- The rows a peer script prints ("name\tv1\tv2..."), run in /usr/bin/python3 with `threads`
-- for every threading library and `rounds` (default 5) timing rounds per case (PEER_ROUNDS,
-- bench/peer_timer.py); `args`, optional, follow the thread count on its command line:
-- name -> {numbers (nil for "-")}.
function M.peers(script, threads, rounds, args)
  local env = string.format("OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d MKL_NUM_THREADS=%d PEER_ROUNDS=%d",
    threads, threads, threads, rounds or 5)
  local p = io.popen(env .. " /usr/bin/python3 " .. script .. " " .. threads .. " " .. (args or "") .. " 2>/dev/null")
  local out = {}
  for line in p:lines() do
    local cols = {}
    for c in (line .. "\t"):gmatch("(.-)\t") do cols[#cols + 1] = c end
    if #cols >= 2 then
      local v = {}
      for i = 2, #cols do v[i - 1] = tonumber(cols[i]) end
      out[cols[1]] = v
    end
  end
  p:close()
  return out
end

-- sk's and a peer's best times for rows {name, reps, fn}, measured in `rounds` (default 5)
-- alternating rounds: one timing of every row in sk, then one run of the peer script.
-- These machines' speed drifts (20-50 % and more over minutes, perf_notes.md), so timings
-- taken one after the other, all of sk's and then the peer's, compare two different machines.
-- A row's optional fourth field is a scope to time it in, called as scope(fn, ...) (sk.no_grad).
-- `args` go to the peer script (M.peers). Returns sk: name -> seconds per call, peer: name ->
-- {numbers}, each the minimum over rounds.
function M.interleaved(rows, script, threads, rounds, args)
  local mine, peer = {}, {}
  for _ = 1, rounds or 5 do
    for _, r in ipairs(rows) do
      local t = r[4] and r[4](M.best, r[2], r[3], 1) or M.best(r[2], r[3], 1)
      mine[r[1]] = math.min(mine[r[1]] or math.huge, t)
      collectgarbage()
    end
    for name, v in pairs(M.peers(script, threads, 1, args)) do
      local best = peer[name] or {}
      for i, x in pairs(v) do best[i] = math.min(best[i] or math.huge, x) end
      peer[name] = best
    end
  end
  return mine, peer
end

return M
