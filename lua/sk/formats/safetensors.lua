-- sk.formats.safetensors — the safetensors format (Hugging Face's; README and tensor.rs of
-- safetensors 0.4): [u64 LE N][N bytes of UTF-8 JSON][data], each tensor's data_offsets
-- relative to the data, little-endian, C order. The reader applies the reference reader's
-- checks in its order (a file is untrusted input); the writer lays tensors out as it does
-- (descending alignment, then name) with the JSON padded by spaces to a multiple of 8.
return function(sk, core, util)
  local cjson = require("cjson").new() -- a private instance: its settings are this module's
  cjson.decode_max_depth(8)             -- metadata and tensor entries nest 3 deep
  cjson.decode_invalid_numbers(false)   -- no NaN, Infinity or hex in a header
  -- a JSON string; cjson writes '/' as "\/", valid but unlike other writers: undone (a "\/" of
  -- cjson's output is always an escaped slash, its backslashes come doubled)
  local function json_string(s) return (cjson.encode(s):gsub("\\/", "/")) end

  local M = {}
  local MAX_HEADER = 100000000 -- the reference reader's limit
  -- sk dtype <-> safetensors dtype; U16/U32/U64, complex and the float8 types have no sk dtype.
  local names = { bool = "BOOL", uint8 = "U8", int8 = "I8", int16 = "I16", int32 = "I32", int64 = "I64",
                  float16 = "F16", bfloat16 = "BF16", float32 = "F32", float64 = "F64" }
  local dtypes = {}
  for d, n in pairs(names) do dtypes[n] = d end
  local KNOWN = { U16 = 1, U32 = 1, U64 = 1, C64 = 1, F8_E5M2 = 1, F8_E4M3 = 1, F8_E8M0 = 1, F8_E4M3FNUZ = 1,
                  F8_E5M2FNUZ = 1, F4 = 1, F6_E2M3 = 1, F6_E3M2 = 1 }

  -- {==== Reading ====
  local function int_field(v) -- a JSON number that is an exact non-negative integer, or nil
    return type(v) == "number" and v >= 0 and v < 2 ^ 53 and math.tointeger(v) or nil
  end

  -- The header's tensors, checked: {name, dtype, shape, begin, stop, bytes} sorted by offset, and the metadata.
  local function parse_header(fail, header, data_bytes)
    if header:byte(1) ~= 123 then fail("the header does not start with '{'") end
    local pos = utf8.len(header)
    if not pos then
      local _, bad = utf8.len(header)
      fail(string.format("the header is not valid UTF-8 (byte %d)", bad))
    end
    local ok, h = pcall(cjson.decode, header)
    if not ok then fail("invalid JSON in header: " .. tostring(h):gsub("^.-: ", "")) end
    if type(h) ~= "table" then fail("the header is not a JSON object") end
    local dup = util.duplicate_key(header, cjson.decode)
    if dup then fail(string.format("the header names tensor '%s' twice", dup)) end
    local meta = h.__metadata__
    if meta ~= nil then
      if type(meta) ~= "table" then fail("__metadata__ must be an object of strings") end
      for k, v in pairs(meta) do
        if type(k) ~= "string" or type(v) ~= "string" then fail("__metadata__ must be an object of strings") end
      end
    end
    local list = {}
    for name, e in pairs(h) do
      if name ~= "__metadata__" then
        local function bad(what) fail(string.format("tensor '%s': %s", name, what)) end
        if type(e) ~= "table" then bad("its entry is not an object") end
        local dt = dtypes[e.dtype]
        if not dt then
          bad(KNOWN[e.dtype] and string.format("dtype %s has no sk dtype", e.dtype)
              or string.format("unknown dtype %s", tostring(e.dtype)))
        end
        if type(e.shape) ~= "table" or #e.shape > 16 then bad("shape must be a list of at most 16 sizes") end
        local shape, numel = {}, 1
        for i, s in ipairs(e.shape) do
          shape[i] = int_field(s)
          if not shape[i] then bad("shape must be a list of non-negative integers") end
        end
        if next(e.shape, #e.shape > 0 and #e.shape or nil) ~= nil then bad("shape must be a list of non-negative integers") end
        for _, s in ipairs(shape) do
          if s ~= 0 and numel > math.maxinteger // s then bad("its shape's element count overflows") end
          numel = numel * s
        end
        local itemsize = util.itemsize(dt)
        if numel > math.maxinteger // itemsize then bad("its size in bytes overflows") end
        local off = e.data_offsets
        local b, s = type(off) == "table" and int_field(off[1]), type(off) == "table" and int_field(off[2])
        if not b or not s or #off ~= 2 then bad("data_offsets must be two non-negative integers") end
        if s < b or s - b ~= numel * itemsize then bad("invalid shape, data type, or offset for tensor") end
        list[#list + 1] = { name = name, dtype = dt, shape = shape, begin = b, stop = s, bytes = numel * itemsize }
      end
    end
    table.sort(list, function(a, b) return a.begin < b.begin or a.begin == b.begin and a.stop < b.stop end)
    local at = 0
    for _, e in ipairs(list) do
      if e.begin ~= at then
        fail(string.format("invalid offset for tensor '%s': its data starts at %d, %s", e.name, e.begin,
             e.begin < at and string.format("inside the previous tensor's (which ends at %d)", at)
             or string.format("after a hole (the previous tensor's ends at %d)", at)))
      end
      at = e.stop
    end
    if at ~= data_bytes then
      fail(string.format("incomplete metadata, file not fully covered: the tensors hold %d bytes, the file %d after the header",
                         at, data_bytes))
    end
    return list, meta
  end

  -- load(path, opts) -> {name = tensor}, metadata (a table of strings, or nil)
  function M.load(path, opts, fail)
    local f, size = util.open(path, fail)
    local head = f:read(8)
    if not head or #head < 8 then f:close() fail(string.format("header too small: the file has %d bytes", size)) end
    local n = string.unpack("<I8", head)
    if n < 0 or n > MAX_HEADER then f:close() fail(string.format("header too large (%d bytes, at most %d)", n, MAX_HEADER)) end
    if 8 + n > size then f:close() fail(string.format("invalid header length %d: the file has %d bytes", n, size)) end
    local header = f:read(n) or ""
    local ok, list, meta = pcall(parse_header, fail, header, size - 8 - n)
    if not ok then f:close() error(list, 0) end
    local out, start = {}, 8 + n
    if opts.mmap then
      f:close()
      local map = util.try(fail, core.io.map_file, path, false)
      for _, e in ipairs(list) do out[e.name] = util.normalize_bool(util.view_bytes(map, start + e.begin, e.dtype, e.shape)) end
    else
      for _, e in ipairs(list) do
        local t = sk.empty(e.shape, { dtype = e.dtype })
        f:seek("set", start + e.begin)
        local got = util.try(fail, core.io.read_into, f, t)
        if got ~= e.bytes then f:close() fail(string.format("tensor '%s': the file ends inside its data", e.name)) end
        out[e.name] = util.normalize_bool(t)
      end
      f:close()
    end
    return out, meta
  end
  -- }====

  -- {==== Writing ====
  -- save(named, path, metadata): named {name = tensor}, already flat and checked.
  function M.save(named, path, metadata, fail)
    local list = {}
    for name, t in pairs(named) do
      local code = names[t:dtype()]
      if not code then fail(string.format("tensor '%s': dtype %s", name, t:dtype())) end
      list[#list + 1] = { name = name, t = t, code = code, size = util.itemsize(t:dtype()) }
    end
    table.sort(list, function(a, b) return a.size > b.size or a.size == b.size and a.name < b.name end)
    local parts, at = {}, 0
    if metadata and next(metadata) then
      local keys = {}
      for k, v in pairs(metadata) do
        if type(k) ~= "string" or type(v) ~= "string" then fail("metadata must be a table of strings") end
        keys[#keys + 1] = k
      end
      table.sort(keys)
      local m = {}
      for i, k in ipairs(keys) do m[i] = json_string(k) .. ":" .. json_string(metadata[k]) end
      parts[1] = '"__metadata__":{' .. table.concat(m, ",") .. "}"
    end
    for _, e in ipairs(list) do
      local shape = e.t:shape()
      local bytes = e.t:numel() * e.size
      for i, s in ipairs(shape) do shape[i] = string.format("%d", s) end
      parts[#parts + 1] = string.format('%s:{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}', json_string(e.name),
                                        e.code, table.concat(shape, ","), at, at + bytes)
      at = at + bytes
    end
    local header = "{" .. table.concat(parts, ",") .. "}"
    header = header .. string.rep(" ", (8 - #header % 8) % 8)
    util.write_file(path, fail, string.pack("<I8", #header) .. header, list)
  end
  -- }====
  return M
end
