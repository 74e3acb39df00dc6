-- sk.indexing — Lua indexing syntax for tensors: t[i], t[{...}], t[mask], and assignment through them.
--
-- The form (indices and dims are 0-based, as in PyTorch):
--   t[i]                  i an integer: select along dim 0, a view; negative i counts from the end
--   t[{e0, e1, ...}]      one entry per dim from dim 0; dims left over are taken whole
--     integer i             select (the dim goes away)
--     sk.newaxis            a new dim of size 1 here (PyTorch's None); it takes no dim of t
--     "..." (sk.ellipsis)   as many whole dims as the other entries leave (PyTorch's Ellipsis; one at most)
--     {}                    the whole dim
--     {start, stop}         a slice, stop exclusive (Python's start:stop); negatives count from the end,
--     {start, stop, step}   nil start / stop mean the ends ({nil, 3} = :3, {2} = 2:), step > 0
--     a tensor              advanced indexing as PyTorch: int64/int32 index tensors broadcast together,
--                           bool masks select their true positions; adjacent tensor entries keep their
--                           place in the result, separated ones put the indexed dims first
--   t[mask]               bool tensor of t's shape: masked_select (a 1-D copy); a mask over t's
--                         leading dims selects along them (as PyTorch: mask shape [2] of t [2, 3]
--                         picks rows)
--   t[idx]                int64/int32 tensor: index_select along dim 0 (a copy); a 0-dim idx selects
--   t[name]               a string: the method of that name, so t:sum() keeps working
-- Integer entries and slices give views; anything with a tensor entry gives a copy.
--
-- Assignment writes into t:
--   t[...] = v            through integers and slices: v (a number, or a tensor broadcast to the view)
--                         is copied into the view (fill_ / copy_, converting the dtype)
--   t[mask] = v           masked_fill_ for a mask of t's shape and a number or 0-dim tensor,
--                         else index_put_ (v broadcast to the selected elements)
--   t[idx] = v, t[{..., tensor, ...}] = v
--                         index_put_ (v converted to t's dtype, broadcast to the indexed shape)
--
-- Installed by init.lua: require("sk.indexing")(sk, mt, methods) replaces mt.__index (core's C
-- lookup of methods first, then this file's indexing for non-string keys) and sets mt.__newindex.
local M = {}

local fmt = string.format
local sk, tensor_mt

-- Raises msg at the user's line (the first frame outside sk), without the position an inner error picked up.
local function raise(msg)
  require("sk.core").raise((tostring(msg):gsub("^[^\n]-%.lua:%d+: ", "", 1)))
end

local function shape_str(s) return "[" .. table.concat(s, ", ") .. "]" end

local function is_tensor(x) return getmetatable(x) == tensor_mt end

-- PyTorch's None in an index: a value no other entry can be
M.newaxis = setmetatable({}, { __name = "sk.newaxis", __tostring = function() return "sk.newaxis" end,
                               __newindex = function() error("sk.newaxis is read-only", 2) end })
M.ellipsis = "..."
local NEWAXIS, ELLIPSIS = M.newaxis, M.ellipsis

local function same_shape(a, b)
  if a:dim() ~= b:dim() then return false end
  for d = 0, a:dim() - 1 do if a:size(d) ~= b:size(d) then return false end end
  return true
end

local function integer(x, what)
  local i = math.tointeger(x)
  if not i then error(fmt("sk: %s %s is not an integer", what, tostring(x)), 0) end
  return i
end

-- {==== Reading ====
-- Applies the integer and slice entries of `key` to t (a view) and collects the tensor entries:
-- returns the view and a list of { dim = d (in the view), t = index tensor (int64/int32 or bool) }.
local function basic(t, key)
  local v, dim, adv, used, ellipses = t, 0, {}, 0, 0
  local n = #key
  for i = 1, n do -- count the dims first: selecting past the last dim would fail with a less clear message
    local e = key[i]
    if e == ELLIPSIS then ellipses = ellipses + 1
    elseif e ~= NEWAXIS then used = used + (is_tensor(e) and e:dtype() == "bool" and math.max(e:dim(), 1) or 1) end
  end
  if ellipses > 1 then error("sk: an index can only have a single ellipsis ('...')", 0) end
  if used > t:dim() then error(fmt("sk: too many indices for tensor of dimension %d (got %d)", t:dim(), used), 0) end
  for i = 1, n do
    local e = key[i]
    local et = type(e)
    if e == NEWAXIS then
      v = v:unsqueeze(dim)
      dim = dim + 1
    elseif e == ELLIPSIS then
      dim = dim + t:dim() - used
    elseif et == "number" then
      v = v:select(dim, integer(e, "index"))
    elseif is_tensor(e) then
      local span = e:dtype() == "bool" and math.max(e:dim(), 1) or 1
      adv[#adv + 1] = { dim = dim, t = e }
      dim = dim + span
    elseif et == "table" then
      if e[1] ~= nil or e[2] ~= nil or e[3] ~= nil then
        local start = e[1] ~= nil and integer(e[1], "slice start") or nil
        local stop = e[2] ~= nil and integer(e[2], "slice stop") or nil
        v = v:slice(dim, start, stop, e[3] ~= nil and integer(e[3], "slice step") or 1)
      end
      dim = dim + 1
    else
      error(fmt("sk: index entry %d must be an integer, a table, a tensor, sk.newaxis or \"...\", got %s", i,
                et == "string" and fmt("the string %q", e) or et), 0)
    end
  end
  return v, adv
end

-- The tensor entries as int64 index tensors, one per indexed dim: a mask of k dims becomes
-- the k columns of its nonzero(), after PyTorch's check that it matches the dims it covers.
local function expand_masks(v, adv)
  local out = {}
  for _, a in ipairs(adv) do
    if a.t:dtype() == "bool" and a.t:dim() > 0 then
      local ms, vs = a.t:shape(), v:shape()
      for k = 1, #ms do
        if ms[k] ~= vs[a.dim + k] then
          error(fmt("sk: The shape of the mask %s at index %d does not match the shape of the indexed tensor %s at index %d",
                    shape_str(ms), k - 1, shape_str(vs), a.dim + k - 1), 0)
        end
      end
      local nz = a.t:nonzero()
      for c = 0, a.t:dim() - 1 do out[#out + 1] = { dim = a.dim + c, t = nz:select(1, c) } end
    else
      out[#out + 1] = a
    end
  end
  return out
end

-- Broadcast shape of the index tensors.
local function broadcast_shape(list)
  local shape = {}
  for _, a in ipairs(list) do
    local s = a.t:shape()
    local off = #shape - #s
    if off < 0 then
      for _ = 1, -off do table.insert(shape, 1, 1) end
      off = 0
    end
    for q = 1, #s do
      local cur = shape[off + q]
      if cur == 1 then shape[off + q] = s[q]
      elseif s[q] ~= 1 and s[q] ~= cur then
        local shapes = {}
        for _, b in ipairs(list) do shapes[#shapes + 1] = shape_str(b.t:shape()) end
        error("sk: shape mismatch: indexing tensors could not be broadcast together with shapes "
              .. table.concat(shapes, ", "), 0)
      end
    end
  end
  return shape
end

-- v with the indexed dims moved to the front (in their order), the index tensors in that order,
-- and where the broadcast dims belong in PyTorch's result (their first dim when adjacent, else 0).
local function front(v, list)
  local perm, seen, idx = {}, {}, {}
  local adjacent = true
  for j, a in ipairs(list) do
    perm[#perm + 1] = a.dim
    seen[a.dim] = true
    idx[j] = a.t
    if j > 1 and a.dim ~= list[j - 1].dim + 1 then adjacent = false end
  end
  for d = 0, v:dim() - 1 do if not seen[d] then perm[#perm + 1] = d end end
  local prefix = true
  for j = 1, #list do prefix = prefix and perm[j] == j - 1 end
  local w = prefix and v or v:permute(perm)
  return w, idx, adjacent and list[1].dim or 0, perm
end

-- Calls f(w, ...), reporting a bad index at its dim of v rather than of the permuted w.
local function on_front(perm, f, ...)
  local ok, r = pcall(f, ...)
  if ok then return r end
  local msg = tostring(r):gsub("^[^\n]-indexing%.lua:%d+: ", "")
  msg = msg:gsub("(out of bounds for dimension )(%d+)", function(pre, d) return pre .. perm[tonumber(d) + 1] end)
  error(msg, 0)
end

-- The permutation that moves a block of `nb` leading dims (of `nd`) to start at dim `at`.
local function block_to(nd, nb, at)
  local perm = {}
  for d = nb, nb + at - 1 do perm[#perm + 1] = d end
  for d = 0, nb - 1 do perm[#perm + 1] = d end
  for d = nb + at, nd - 1 do perm[#perm + 1] = d end
  return perm
end

local function advanced(v, adv)
  local list = expand_masks(v, adv)
  local bshape = broadcast_shape(list)
  local w, idx, at, perm = front(v, list)
  local r = on_front(perm, sk.index, w, idx)
  if at == 0 then return r end
  return r:permute(block_to(r:dim(), #bshape, at)):contiguous()
end

local function get(t, k)
  if k == NEWAXIS then k = { k } end
  local kt = type(k)
  if kt == "number" then return t:select(0, integer(k, "index")) end
  if is_tensor(k) then
    if k:dtype() == "bool" then
      if same_shape(t, k) then return sk.masked_select(t, k) end
      return sk.index(t, { k })
    end
    if k:dim() == 0 then return t:select(0, k:item()) end
    if k:dim() == 1 then return sk.index_select(t, 0, k) end
    return sk.index(t, { k })
  end
  if kt == "table" then
    local v, adv = basic(t, k)
    if #adv == 0 then return v end
    return advanced(v, adv)
  end
  error(fmt("sk: a tensor index must be an integer, a table or a tensor, got %s", kt), 0)
end
-- }====

-- {==== Writing ====
-- val as a tensor of t's dtype (numbers become 0-dim tensors).
local function values_for(t, val)
  if is_tensor(val) then return val:dtype() == t:dtype() and val or val:to(t:dtype()) end
  if type(val) == "number" or type(val) == "boolean" then return sk.full({}, val, { dtype = t:dtype() }) end
  error(fmt("sk: a tensor element can be set from a number, a boolean or a tensor, got %s", type(val)), 0)
end

local function assign(view, val)
  if is_tensor(val) then view:copy_(val)
  elseif type(val) == "number" or type(val) == "boolean" then view:fill_(val)
  else error(fmt("sk: a tensor element can be set from a number, a boolean or a tensor, got %s", type(val)), 0) end
end

-- index_put_ into the view v through the tensor entries adv; val broadcasts to PyTorch's result shape.
local function put(v, adv, val)
  local list = expand_masks(v, adv)
  local bshape = broadcast_shape(list)
  local w, idx, at, perm = front(v, list)
  local vals = values_for(v, val)
  if at > 0 then
    -- the result of w[idx] is [bshape..., rest...]; PyTorch's has bshape at `at`: reorder the values
    local rshape, rest = {}, {}
    local wshape = w:shape()
    for d = #list + 1, #wshape do rest[#rest + 1] = wshape[d] end
    for d = 1, at do rshape[#rshape + 1] = rest[d] end
    for _, s in ipairs(bshape) do rshape[#rshape + 1] = s end
    for d = at + 1, #rest do rshape[#rshape + 1] = rest[d] end
    local nb, nd = #bshape, #rshape
    local vperm = {}
    for d = at, at + nb - 1 do vperm[#vperm + 1] = d end
    for d = 0, at - 1 do vperm[#vperm + 1] = d end
    for d = at + nb, nd - 1 do vperm[#vperm + 1] = d end
    vals = vals:expand(rshape):permute(vperm)
  end
  on_front(perm, sk.index_put_, w, idx, vals)
end

local function set(t, k, val)
  if k == NEWAXIS then k = { k } end
  local kt = type(k)
  if kt == "number" then return assign(t:select(0, integer(k, "index")), val) end
  if is_tensor(k) then
    if k:dtype() == "bool" and same_shape(t, k) and (not is_tensor(val) or val:dim() == 0) then
      return t:masked_fill_(k, val)
    end
    if k:dtype() ~= "bool" and k:dim() == 0 then return assign(t:select(0, k:item()), val) end
    return sk.index_put_(t, { k }, values_for(t, val))
  end
  if kt == "table" then
    local v, adv = basic(t, k)
    if #adv == 0 then return assign(v, val) end
    return put(v, adv, val)
  end
  if kt == "string" then
    if k == "grad" then return require("sk.core").autograd.set_grad(t, val) end
    error(fmt("sk: cannot set field '%s' of a tensor", k), 0)
  end
  error(fmt("sk: a tensor index must be an integer, a table or a tensor, got %s", kt), 0)
end
-- }====

-- Installs the metamethods; methods stay a table others may add to.
function M.install(sk_, mt, methods)
  sk, tensor_mt = sk_, mt
  mt.__index = require("sk.core").tensor_index(methods, function(t, k)
    local ok, r = pcall(get, t, k)
    if ok then return r end
    raise(r)
  end)
  mt.__newindex = function(t, k, v)
    local ok, r = pcall(set, t, k, v)
    if not ok then raise(r) end
  end
end

return setmetatable(M, { __call = function(_, ...) return M.install(...) end })
