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

return M
