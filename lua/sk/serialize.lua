-- sk.serialize — sk.save, sk.load and the byte-level API (sk.frombuffer, sk.from_file,
-- Tensor:tobytes, Tensor:data_ptr, DLPack). The format comes from the file's extension;
-- each lives in lua/sk/formats. Errors name the function, the file and the tensor.
return function(sk, core, methods)
  local util = require("sk.formats.util")(sk, core)
  -- the formats load on first use: `require "sk"` needs neither lua-cjson nor their code
  local loaded = {}
  local function format(name)
    if not loaded[name] then
      loaded[name] = name == "npz" and require("sk.formats.npz")(sk, core, util, format("npy"))
                     or require("sk.formats." .. name)(sk, core, util)
    end
    return loaded[name]
  end
  local mt = core.metatable

  local function failer(fname, path)
    return function(msg) core.raise(string.format("%s: '%s': %s", fname, path, msg)) end
  end
  local function format_of(fname, path)
    if type(path) ~= "string" then core.raise(string.format("%s: argument 'path' must be a string, not a %s", fname, type(path))) end
    local ext = path:match("%.([%w_]+)$")
    ext = ext and ext:lower()
    if ext ~= "safetensors" and ext ~= "npy" and ext ~= "npz" then
      core.raise(string.format("%s: '%s': the extension must be .safetensors, .npy or .npz", fname, path))
    end
    return ext
  end
  local check_options = require "sk.options"

  -- sk.save(obj, path[, {metadata =, compressed =}]): obj a tensor, or a table of named tensors
  -- (nested tables flatten to dotted names; a .npy file holds one tensor).
  function sk.save(obj, path, opts)
    local fmt = format_of("sk.save", path)
    opts = check_options("sk.save", opts, { metadata = true, compressed = true })
    local fail = failer("sk.save", path)
    if fmt == "npy" then
      if getmetatable(obj) ~= mt then fail("an .npy file holds one tensor: argument 'obj' must be a tensor") end
      return format("npy").save(obj, path, fail)
    end
    local named
    if getmetatable(obj) == mt then named = { tensor = obj }
    elseif type(obj) == "table" then named = util.flatten(obj, fail)
    else fail(string.format("argument 'obj' must be a tensor or a table of tensors, not a %s", type(obj))) end
    for name, t in pairs(named) do
      if t:device() == "meta" then fail(string.format("tensor '%s' is on the meta device: it has no data", name)) end
    end
    if fmt == "npz" then return format("npz").save(named, path, opts.compressed, fail) end
    if opts.metadata ~= nil and type(opts.metadata) ~= "table" then fail("option 'metadata' must be a table of strings") end
    return format("safetensors").save(named, path, opts.metadata, fail)
  end

  -- sk.load(path[, {mmap =, device =}]) -> a tensor (.npy), or a table of named tensors and the
  -- metadata (.safetensors) / a table of named tensors (.npz).
  function sk.load(path, opts)
    local fmt = format_of("sk.load", path)
    opts = check_options("sk.load", opts, { mmap = true, device = true })
    local fail = failer("sk.load", path)
    local function to_device(t) return opts.device and t:to(opts.device) or t end
    if fmt == "npy" then return to_device(format("npy").load(path, opts, fail)) end
    local out, meta
    out, meta = format(fmt).load(path, opts, fail)
    if opts.device then for k, t in pairs(out) do out[k] = to_device(t) end end
    return out, meta
  end

  -- sk.frombuffer(buffer[, {dtype =, offset =, count =}]): a 1-d tensor of the bytes of a
  -- string or a full userdata, copied (Lua strings are immutable).
  function sk.frombuffer(buffer, opts)
    opts = check_options("sk.frombuffer", opts, { dtype = true, offset = true, count = true })
    if opts.dtype == nil then core.raise("sk.frombuffer: option 'dtype' is required") end
    local off, count = opts.offset or 0, opts.count or -1
    if math.type(off) ~= "integer" then core.raise("sk.frombuffer: option 'offset' must be an integer") end
    if math.type(count) ~= "integer" then core.raise("sk.frombuffer: option 'count' must be an integer") end
    return util.normalize_bool(core.io.frombuffer(buffer, opts.dtype, off, count))
  end

  -- sk.from_file(path[, shared[, size]][, {dtype =}]) as torch.from_file: size elements
  -- mapped from the file's start; shared = true writes through to the file, else the
  -- mapping is copy-on-write.
  function sk.from_file(path, shared, size, opts)
    if type(shared) == "table" then opts, shared, size = shared, shared.shared, shared.size
    elseif type(size) == "table" then opts, size = size, nil end
    opts = check_options("sk.from_file", opts, { dtype = true, shared = true, size = true })
    size = size or 0
    if type(path) ~= "string" then core.raise("sk.from_file: argument 'path' must be a string") end
    if math.type(size) ~= "integer" or size < 0 then core.raise("sk.from_file: argument 'size' must be a non-negative integer") end
    local dtype = opts.dtype or "float32"
    local itemsize = util.itemsize(dtype)
    if not itemsize then core.raise(string.format("sk.from_file: unknown dtype '%s'", tostring(dtype))) end
    local map = util.try(function(msg) core.raise(string.format("sk.from_file: '%s': %s", path, msg)) end,
                          core.io.map_file, path, shared)
    if size > map:numel() // itemsize then
      core.raise(string.format("sk.from_file: '%s' holds %d bytes, fewer than size %d × %d bytes", path, map:numel(), size, itemsize))
    end
    return map:narrow(0, 0, size * itemsize):view(dtype)
  end

  function methods.tobytes(t) return core.io.tobytes(t:to("cpu"):contiguous()) end
  methods.data_ptr = core.io.data_ptr
  function methods.element_size(t) return util.itemsize(t:dtype()) end
  function methods.nbytes(t) return t:numel() * util.itemsize(t:dtype()) end
  methods.to_dlpack = core.io.to_dlpack
  function sk.from_dlpack(capsule) return util.normalize_bool(core.io.from_dlpack(capsule), true) end
end
