-- sk.options — the one check of a Lua options table, for every Lua-side function that takes one
-- (the binding checks the generated ops' options in C, in the same words).
local core = require "sk.core"

-- opts (nil gives {}) after checking that it is a table whose keys are all keys of `allowed` (a
-- set, or a table of defaults: false values count); errors name fname at the caller's line:
-- "fname: unexpected option 'k' (expected a, b)".
return function(fname, opts, allowed)
  if opts == nil then return {} end
  if type(opts) ~= "table" or getmetatable(opts) == core.metatable then
    core.raise(string.format("%s: argument 'options' must be a table, got %s", fname,
                             getmetatable(opts) == core.metatable and "a tensor" or type(opts)))
  end
  for k in pairs(opts) do
    if allowed[k] == nil then
      local names = {}
      for a in pairs(allowed) do names[#names + 1] = tostring(a) end
      table.sort(names)
      core.raise(string.format("%s: unexpected option '%s' (expected %s)", fname, tostring(k), table.concat(names, ", ")))
    end
  end
  return opts
end
