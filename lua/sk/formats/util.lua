-- sk.formats.util — what the file formats share: element sizes, views of a mapped file,
-- the one bulk writer, and the duplicate-key check JSON libraries do not make.
return function(sk, core)
  local U = {}
  local SIZES = { bool = 1, uint8 = 1, int8 = 1, int16 = 2, int32 = 4, int64 = 8, float16 = 2, bfloat16 = 2,
                  float32 = 4, float64 = 8 }
  function U.itemsize(dtype) return SIZES[dtype] end

  -- The tensor of dtype and shape whose bytes start at byte `at` of map (a uint8 tensor over
  -- a mapped file): a view when `at` is a multiple of the element size, else a copy (the
  -- kernels read elements at their natural alignment).
  function U.view_bytes(map, at, dtype, shape)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    local bytes = map:narrow(0, at, n * SIZES[dtype])
    if at % SIZES[dtype] ~= 0 then bytes = bytes:clone() end
    return bytes:view(dtype):view(shape)
  end

  -- The size in bytes of the regular file at path; what every loader asks first, so that a
  -- directory, a device or an unreadable file is refused by name ("is a directory").
  function U.file_size(path, fail)
    return U.try(fail, core.io.file_size, path)
  end

  -- The regular file at path opened for reading, and its size in bytes.
  function U.open(path, fail)
    local size = U.file_size(path, fail)
    local f, err = io.open(path, "rb")
    if not f then fail(err) end
    return f, size
  end

  -- t, a freshly loaded tensor, with each bool element's byte made 0 or 1: a file or a
  -- producer may hold any nonzero byte for true, which sum() would count as its value.
  -- Written only when a byte is past 1 (a valid mapping's pages stay the file's). `borrowed`:
  -- t's memory is another program's (DLPack), which sk never writes: such a t is replaced by
  -- a normalized copy.
  function U.normalize_bool(t, borrowed)
    if t:dtype() == "bool" and t:numel() > 0 then
      local bytes = t:view("uint8")
      if bytes:max():item() > 1 then
        if borrowed then return bytes:clamp_max(1):view("bool") end
        bytes:clamp_max_(1)
      end
    end
    return t
  end

  -- fn(...)'s results; its error (one of core.io's, which carry no position) goes to fail.
  function U.try(fail, fn, ...)
    local r = table.pack(pcall(fn, ...))
    if not r[1] then fail(tostring(r[2])) end
    return table.unpack(r, 2, r.n)
  end

  -- Writes prefix, then the bytes of each entry's tensor `t` in order (C order, CPU), in one
  -- buffered stream; a failed write removes the partial file.
  function U.write_file(path, fail, prefix, list)
    local f, err = io.open(path, "wb")
    if not f then fail(err) end
    local ok, e = pcall(function()
      assert(f:write(prefix))
      for _, x in ipairs(list) do core.io.write_from(f, x.t:to("cpu"):contiguous()) end
      assert(f:close())
    end)
    if not ok then
      pcall(f.close, f)
      os.remove(path)
      fail((tostring(e):gsub("^.-:%d+: ", "")))
    end
  end

  -- The first key that a JSON object (the text of one that parsed) gives twice at its top
  -- level, or nil. It walks strings and brackets only; keys are compared decoded.
  function U.duplicate_key(text, decode)
    local seen, depth, i, n = {}, 0, 1, #text
    while i <= n do
      local c = text:byte(i)
      if c == 34 then -- a string: to its closing quote, past escapes
        local j = i + 1
        while true do
          local k = text:find('[\\"]', j)
          if not k then return nil end
          if text:byte(k) == 92 then j = k + 2 else j = k break end
        end
        if depth == 1 and text:find("^%s*:", j + 1) then
          local key = decode(text:sub(i, j))
          if seen[key] then return key end
          seen[key] = true
        end
        i = j + 1
      else
        if c == 123 or c == 91 then depth = depth + 1 elseif c == 125 or c == 93 then depth = depth - 1 end
        i = i + 1
      end
    end
  end

  -- Flattens nested tables of tensors to dotted names ({layer = {weight = t}} -> "layer.weight").
  function U.flatten(obj, fail)
    local out, mt = {}, core.metatable
    local function walk(prefix, v, depth)
      if depth > 64 then fail("the table of tensors nests too deep (a cycle?)") end
      for k, x in pairs(v) do
        if type(k) ~= "string" and math.type(k) ~= "integer" then
          fail(string.format("a key of the table of tensors is a %s, not a string or an integer", type(k)))
        end
        local name = prefix .. tostring(k)
        if getmetatable(x) == mt then
          if out[name] then fail(string.format("two tensors are named '%s'", name)) end
          out[name] = x
        elseif type(x) == "table" then walk(name .. ".", x, depth + 1)
        else fail(string.format("'%s' is a %s, not a tensor or a table of tensors", name, type(x))) end
      end
    end
    walk("", obj, 0)
    for name in pairs(out) do
      if not utf8.len(name) then fail(string.format("the name '%s' is not valid UTF-8", name)) end
    end
    return out
  end
  return U
end
