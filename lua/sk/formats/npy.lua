-- sk.formats.npy — NumPy's .npy format (numpy/lib/format.py, versions 1.0, 2.0 and 3.0):
-- "\x93NUMPY", version, header length, a Python dict literal {'descr', 'fortran_order',
-- 'shape'} padded with spaces and "\n" so the data starts at a multiple of 64.
-- The writer produces NumPy 1.24's bytes exactly (sorted keys, the spare spaces of
-- _write_array_header, version 1.0 while the header fits); the reader takes both byte
-- orders and Fortran order, and refuses what sk has no dtype for.
return function(sk, core, util)
  local M = {}
  local MAGIC = "\x93NUMPY"
  local MAX_HEADER = 1 << 20 -- NumPy refuses over 10000 characters, which real many-field files exceed
  -- sk dtype -> NumPy's descr (dtype.str); bfloat16 has none.
  local descr = { bool = "|b1", uint8 = "|u1", int8 = "|i1", int16 = "<i2", int32 = "<i4", int64 = "<i8",
                  float16 = "<f2", float32 = "<f4", float64 = "<f8" }
  local by_code = { b1 = "bool", u1 = "uint8", i1 = "int8", i2 = "int16", i4 = "int32", i8 = "int64", f2 = "float16",
                    f4 = "float32", f8 = "float64" }

  -- {==== Reading ====
  -- The header dict's three values; the text must hold nothing else.
  local function parse_dict(h, fail)
    local rest, vals = h, {}
    local function take(key, pat)
      local v
      rest = rest:gsub("([{,]%s*)[\"']" .. key .. "[\"']%s*:%s*" .. pat .. "%s*,?", function(lead, x) v = x return lead end, 1)
      if not v then fail("Header does not contain the correct keys: " .. h) end
      vals[key] = v
    end
    take("descr", "[\"']([^\"']*)[\"']")
    take("fortran_order", "(%a+)")
    take("shape", "(%b())")
    if not rest:match("^%s*{[%s,]*}%s*$") then fail("Header does not contain the correct keys: " .. h) end
    return vals
  end

  -- Parses a .npy header from the first bytes `head` of a file of `size` bytes:
  -- {dtype, shape, fortran, swap, data_at, bytes}.
  local function parse(head, size, fail)
    if #head < 8 and head:sub(1, 6) == MAGIC:sub(1, #head) then fail(string.format("the file is truncated: it has %d bytes", size)) end
    if head:sub(1, 6) ~= MAGIC then fail("the magic string is not correct; expected b'\\x93NUMPY'") end
    local major, minor = head:byte(7, 8)
    local at = major == 1 and minor == 0 and 10 or (major == 2 or major == 3) and minor == 0 and 12
    if not at then fail(string.format("we only support format version (1,0), (2,0), and (3,0), not (%d, %d)", major, minor)) end
    if #head < at then fail(string.format("the file is truncated: it has %d bytes", size)) end
    local hlen = string.unpack(at == 10 and "<I2" or "<I4", head, 9)
    if hlen > MAX_HEADER then fail(string.format("header of %d bytes is larger than sk reads (%d)", hlen, MAX_HEADER)) end
    if at + hlen > size or at + hlen > #head then
      return nil, at + hlen -- the caller reads that much and calls again
    end
    local h = head:sub(at + 1, at + hlen)
    if major < 3 and h:find("[\128-\255]") or not utf8.len(h) then fail("the header is not valid text") end
    local v = parse_dict(h, fail)
    local order, kind = v.descr:match("^([<>|=]?)(%a%d+)$")
    local dtype = kind and by_code[kind]
    if not dtype then
      if v.descr:find("O") then fail("Object arrays cannot be loaded (a pickled array)") end
      fail(string.format("descr '%s' has no sk dtype (sk reads bool, u1, i1, i2, i4, i8, f2, f4 and f8)", v.descr))
    end
    if v.fortran_order ~= "True" and v.fortran_order ~= "False" then
      fail("fortran_order is not a valid bool: " .. v.fortran_order)
    end
    local shape, inner = {}, v.shape:sub(2, -2)
    if not inner:match("^%s*$") and not inner:match("^%s*%d+%s*,?%s*$") and not inner:match("^%s*%d+%s*,[%d%s,]*%d%s*,?%s*$") then
      fail("shape is not valid: " .. v.shape)
    end
    for d in inner:gmatch("%d+") do
      shape[#shape + 1] = math.tointeger(tonumber(d))
      if not shape[#shape] or #d > 18 then fail("shape is not valid: " .. v.shape) end
    end
    if #shape > 16 then fail(string.format("%d dimensions: sk tensors have at most 16", #shape)) end
    local n, itemsize = 1, util.itemsize(dtype)
    for _, s in ipairs(shape) do
      if s ~= 0 and n > math.maxinteger // s then fail("the shape's element count overflows: " .. v.shape) end
      n = n * s
    end
    if n > (size - at - hlen) // itemsize then
      fail(string.format("the file is truncated: shape %s of %s needs %d bytes of data, it holds %d", v.shape, v.descr,
                         n * itemsize, size - at - hlen))
    end
    return { dtype = dtype, shape = shape, fortran = v.fortran_order == "True", swap = order == ">" and itemsize > 1,
             data_at = at + hlen, bytes = n * itemsize }
  end

  -- The tensor a parsed header describes, from a contiguous tensor of its bytes.
  local function finish(h, t)
    if h.swap then core.io.byteswap_(t) end
    util.normalize_bool(t)
    if h.fortran and #h.shape > 1 then -- column-major: the reversed shape in C order, permuted back
      local dims = {}
      for i = 1, #h.shape do dims[i] = #h.shape - i end
      t = t:permute(dims)
    end
    return t
  end
  local function c_shape(h)
    if not h.fortran then return h.shape end
    local r = {}
    for i = 1, #h.shape do r[i] = h.shape[#h.shape + 1 - i] end
    return r
  end

  -- load(path, opts, fail) -> tensor
  function M.load(path, opts, fail)
    local f, size = util.open(path, fail)
    local head = f:read(4096) or ""
    local ok, h, need = pcall(parse, head, size, fail)
    if ok and not h and need <= size then
      f:seek("set", 0)
      head = f:read(need) or ""
      ok, h, need = pcall(parse, head, size, fail)
    end
    if not ok or not h then
      f:close()
      if ok then fail(string.format("the file is truncated: its header needs %d bytes, the file has %d", need, size)) end
      error(h, 0)
    end
    local t
    if opts.mmap then
      f:close()
      t = util.view_bytes(util.try(fail, core.io.map_file, path, false), h.data_at, h.dtype, c_shape(h))
      if h.swap then t = t:clone() end -- the mapping keeps the file's bytes; the swap is a copy's
    else
      t = sk.empty(c_shape(h), { dtype = h.dtype })
      f:seek("set", h.data_at)
      local got = util.try(fail, core.io.read_into, f, t)
      f:close()
      if got ~= h.bytes then fail("the file ends inside its data") end
    end
    return finish(h, t)
  end

  -- from_zip(z, i, size, fail) -> the tensor of member i of an .npz archive (core.io.zip_open),
  -- whose zip entry states `size` bytes: the header is read first, then the data straight into
  -- the tensor, so memory follows the .npy header, never the zip entry's claim; a member whose
  -- inflated size is not what its .npy header implies is refused.
  function M.from_zip(z, i, size, fail)
    local head = util.try(fail, core.io.zip_read, z, i, 12)
    local h, need = parse(head, size, fail)
    if not h and need <= size then
      head = head .. util.try(fail, core.io.zip_read, z, i, need - #head)
      h, need = parse(head, size, fail)
    end
    if not h then fail(string.format("the member is truncated: its header needs %d bytes, its zip entry states %d", need, size)) end
    local want = h.data_at + h.bytes
    if size ~= want then fail(string.format("its .npy header implies %d bytes, its zip entry states %d", want, size)) end
    local t = sk.empty(c_shape(h), { dtype = h.dtype })
    local got = util.try(fail, core.io.zip_read_into, z, i, t)
    if got ~= h.bytes then
      fail(string.format("it inflates to %d bytes, its .npy header implies %d", h.data_at + got, want))
    end
    if not util.try(fail, core.io.zip_at_end, z, i) then
      fail(string.format("it inflates to more than the %d bytes its .npy header implies", want))
    end
    return finish(h, t)
  end
  -- }====

  -- {==== Writing ====
  -- The header NumPy 1.24 writes for a C-order array of t's dtype and shape.
  function M.header(t, fail, name)
    local d = descr[t:dtype()]
    if not d then
      fail(string.format("%sNumPy has no bfloat16 (convert it first, e.g. t:float())", name and ("tensor '" .. name .. "': ") or ""))
    end
    local shape = t:shape()
    for i, s in ipairs(shape) do shape[i] = string.format("%d", s) end
    local tuple = #shape == 1 and "(" .. shape[1] .. ",)" or "(" .. table.concat(shape, ", ") .. ")"
    local h = "{'descr': '" .. d .. "', 'fortran_order': False, 'shape': " .. tuple .. ", }"
    if #shape > 0 then h = h .. string.rep(" ", 21 - #shape[1]) end -- GROWTH_AXIS_MAX_DIGITS
    local version, fmt = 1, "<I2"
    if #h + 1 + 10 > 65535 then version, fmt = 2, "<I4" end
    local pre = 8 + (version == 1 and 2 or 4)
    local pad = 64 - (pre + #h + 1) % 64
    return MAGIC .. string.char(version, 0) .. string.pack(fmt, #h + 1 + pad) .. h .. string.rep(" ", pad) .. "\n"
  end

  function M.save(t, path, fail)
    util.write_file(path, fail, M.header(t, fail), { { t = t } })
  end

  -- to_bytes(t, fail, name) -> the .npy file of t as a string (an .npz member)
  function M.to_bytes(t, fail, name)
    return M.header(t, fail, name) .. t:to("cpu"):contiguous():tobytes()
  end
  -- }====
  return M
end
