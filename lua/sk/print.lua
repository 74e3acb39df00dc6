-- sk.print: tostring(t) in PyTorch's style; past 1000 elements each long dim
-- shows its first and last 3 entries around "...". Values are read only
-- through the tensor API (select, item, totable), never from C memory.
-- Like PyTorch, one format serves all shown values: integers as they are;
-- floats with 4 decimals, trailing "." when all are whole, or scientific
-- notation when the magnitudes are very large or very small. A tensor with
-- no elements prints as "[]" with its shape; a summarized one reads only
-- the shown entries, so printing costs O(shown elements) for any sizes.
local M = {}

local THRESHOLD, EDGE = 1000, 3

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

-- The formatter for the float values in v: PyTorch's choice among whole, fixed and scientific.
local function float_format(v)
  local whole, lo, hi = true, math.huge, 0
  local function visit(x)
    if type(x) == "table" then for _, y in ipairs(x) do visit(y) end return end
    if x ~= x or x == math.huge or x == -math.huge then return end
    if x ~= math.floor(x) then whole = false end
    local a = math.abs(x)
    if a > 0 then lo = math.min(lo, a) end
    hi = math.max(hi, a)
  end
  visit(v)
  local sci = hi >= 1e8 or (lo < 1e-4 and lo > 0 and not whole) or (hi > 0 and hi / lo > 1000 and not whole and lo < 1e-2)
  return function(x)
    if x ~= x then return "nan" end
    if x == math.huge then return "inf" elseif x == -math.huge then return "-inf" end
    if sci then return string.format("%.4e", x) end
    if whole then return string.format("%.0f.", x) end
    return string.format("%.4f", x)
  end
end

local function render(v, shape, d, indent, summarize, fmt)
  if d > #shape then return fmt(v) end
  local items, cut = {}, summarize and shape[d] > 2 * EDGE
  for k = 1, #v do
    if cut and k == EDGE + 1 then items[#items + 1] = "..." end
    items[#items + 1] = render(v[k], shape, d + 1, indent .. " ", summarize, fmt)
  end
  local sep = d == #shape and ", " or ("," .. string.rep("\n", #shape - d) .. indent .. " ")
  return "[" .. table.concat(items, sep) .. "]"
end

function M.tostring(t)
  local shape, dtype = t:shape(), t:dtype()
  local suffix = string.format("shape={%s}, dtype=%s, device=%s", table.concat(shape, ", "), dtype, t:device())
  if t:device() == "meta" then return "tensor(..., " .. suffix .. ")" end
  -- no elements: one "[]" whatever the sizes (PyTorch's tensor([], size=...)), in O(1)
  if t:numel() == 0 then return "tensor([], " .. suffix .. ")" end
  local summarize = t:numel() > THRESHOLD
  local values = corners(t, summarize)
  local floating = dtype:find("float") ~= nil
  local fmt = floating and float_format(values) or tostring
  local body = render(values, shape, 1, "       ", summarize, fmt)
  return "tensor(" .. body .. (#shape > 1 and ",\n       " or ", ") .. suffix .. ")"
end

return M
