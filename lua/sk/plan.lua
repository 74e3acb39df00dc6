-- sk.plan(fn, examples..., {device =}): fn recorded once on Meta stand-ins of the examples,
-- replayed by p(...) through each op's kernel over one planned arena (docs/planning.md).
-- The recorder, the replay and the plan's tables are C (src/ops/sk_plan_*.c, lsk_plan.c);
-- this file reads the options and draws p:dot().
return function(sk, core)
  function sk.plan(fn, ...)
    local n, args = select("#", ...), table.pack(...)
    local device
    if n > 0 and type(args[n]) == "table" and getmetatable(args[n]) == nil then
      device = args[n].device
      n = n - 1
    end
    if type(fn) ~= "function" then core.raise("sk.plan: fn must be a function, got " .. type(fn)) end
    if device ~= nil and type(device) ~= "string" then device = tostring(device) end
    return core.plan_record(fn, device, table.unpack(args, 1, n))
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
