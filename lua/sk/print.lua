-- sk.print: tostring(t) in PyTorch's style; past 1000 elements each long dim
-- shows its first and last 3 entries around "...". Values are read only
-- through the tensor API (select, item, totable), never from C memory.
local M = {}

local THRESHOLD, EDGE = 1000, 3

local function fmt_value(v)
  if type(v) == "boolean" or math.type(v) == "integer" then return tostring(v) end
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" elseif v == -math.huge then return "-inf" end
  local a = math.abs(v)
  if a ~= 0 and (a >= 1e8 or a < 1e-4) then return string.format("%.4e", v) end
  if v == math.floor(v) then return string.format("%.0f.", v) end
  return string.format("%.4f", v)
end

-- Values of t as nested tables, keeping only the displayed entries of long dims.
local function corners(t, summarize)
  if not summarize then return t:totable() end
  local function walk(x)
    if x:dim() == 0 then return x:item() end
    local n, out = x:size(0), {}
    local function take(i) out[#out + 1] = walk(x:select(0, i)) end
    if n > 2 * EDGE then
      for i = 0, EDGE - 1 do take(i) end
      for i = n - EDGE, n - 1 do take(i) end
    else
      for i = 0, n - 1 do take(i) end
    end
    return out
  end
  return walk(t)
end

local function render(v, shape, d, indent, summarize)
  if d > #shape then return fmt_value(v) end
  local items, cut = {}, summarize and shape[d] > 2 * EDGE
  for k = 1, #v do
    if cut and k == EDGE + 1 then items[#items + 1] = "..." end
    items[#items + 1] = render(v[k], shape, d + 1, indent .. " ", summarize)
  end
  local sep = d == #shape and ", " or ("," .. string.rep("\n", #shape - d) .. indent .. " ")
  return "[" .. table.concat(items, sep) .. "]"
end

function M.tostring(t)
  local shape = t:shape()
  local suffix = string.format("shape={%s}, dtype=%s, device=%s", table.concat(shape, ", "), t:dtype(), t:device())
  if t:device() == "meta" then return "tensor(..., " .. suffix .. ")" end
  local summarize = t:numel() > THRESHOLD
  local body = render(corners(t, summarize), shape, 1, "       ", summarize)
  return "tensor(" .. body .. (#shape > 1 and ",\n       " or ", ") .. suffix .. ")"
end

return M
