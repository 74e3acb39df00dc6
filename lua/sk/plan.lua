-- sk.plan(fn, examples..., {device =}): fn recorded once on Meta stand-ins of the examples,
-- replayed by p(...) through each op's kernel over one planned arena (docs/planning.md).
-- The recorder, the replay and the plan's tables are C (src/ops/sk_plan_*.c, lsk_plan.c);
-- this file reads the options and draws p:dot().
return function(sk, core)
  local KEEP = 4 -- plans a dynamic plan keeps, the most recently used first

  -- {dynamic = true}: a call whose inputs no kept plan was made for records fn again on them
  local function dynamic_plan(fn, device, first)
    local plans, replans = { first }, 0
    local function pick(...)
      local n = select("#", ...)
      local last = n > 0 and select(n, ...) or nil
      if type(last) == "table" and getmetatable(last) == nil then n = n - 1 end -- {out = ...}
      local args = table.pack(...)
      for i, p in ipairs(plans) do
        if p:matches(table.unpack(args, 1, n)) then
          if i > 1 then table.insert(plans, 1, table.remove(plans, i)) end
          return p
        end
      end
      local p = core.plan_record(fn, device, table.unpack(args, 1, n))
      replans = replans + 1
      table.insert(plans, 1, p)
      if #plans > KEEP then table.remove(plans):close() end
      return p
    end
    local methods = {
      stats = function(_) local s = plans[1]:stats() s.replans, s.plans = replans, #plans return s end,
      graph = function(_) return plans[1]:graph() end,
      dot = function(_) return plans[1]:dot() end,
      matches = function(_, ...) return plans[1]:matches(...) end,
      close = function(_) for _, p in ipairs(plans) do p:close() end end,
    }
    return setmetatable({}, { __index = methods, __call = function(_, ...) return pick(...)(...) end,
                              __close = methods.close, __name = "sk.DynamicPlan" })
  end

  function sk.plan(fn, ...)
    local n, args = select("#", ...), table.pack(...)
    local device, dynamic
    if n > 0 and type(args[n]) == "table" and getmetatable(args[n]) == nil then
      device, dynamic = args[n].device, args[n].dynamic
      n = n - 1
    end
    if type(fn) ~= "function" then core.raise("sk.plan: fn must be a function, got " .. type(fn)) end
    if device ~= nil and type(device) ~= "string" then device = tostring(device) end
    local p = core.plan_record(fn, device, table.unpack(args, 1, n))
    if dynamic then return dynamic_plan(fn, device, p) end
    return p
  end

  -- p:dot(): the plan as Graphviz text, values as ellipses, ops as boxes (from p:graph())
  local function dot(p)
    local g = p:graph()
    local out = { "digraph plan {", "  rankdir=TB;" }
    for id, v in ipairs(g.values) do
      out[#out + 1] = string.format('  v%d [shape=ellipse, label="%s [%s] %s"];', id, v.kind, table.concat(v.shape, ","),
        v.dtype)
    end
    for i, op in ipairs(g.ops) do
      out[#out + 1] = string.format('  op%d [shape=box, label="%d: %s"];', i, i, op.op)
      for _, v in ipairs(op.inputs) do out[#out + 1] = string.format("  v%d -> op%d;", v, i) end
      for _, v in ipairs(op.outputs) do out[#out + 1] = string.format("  op%d -> v%d;", i, v) end
    end
    out[#out + 1] = "}"
    return table.concat(out, "\n") .. "\n"
  end
  local mt = debug.getregistry()["sk.Plan"]
  mt.__index.dot = dot
end
