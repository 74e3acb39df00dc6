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
-- for every threading library: name -> {numbers (nil for "-")}.
function M.peers(script, threads)
  local env = string.format("OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d MKL_NUM_THREADS=%d", threads, threads, threads)
  local p = io.popen(env .. " /usr/bin/python3 " .. script .. " " .. threads .. " 2>/dev/null")
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

return M
