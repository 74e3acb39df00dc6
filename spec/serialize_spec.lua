-- spec/serialize_spec.lua — sk.save / sk.load (.safetensors, .npy, .npz), mmap, sk.frombuffer,
-- sk.from_file, Tensor:tobytes / data_ptr, view(dtype) and DLPack.
-- The fixtures in spec/fixtures/io were written by NumPy and PyTorch (scripts/make_io_fixtures.py);
-- their values follow value() below, which the spec computes on its own.
local h = require "spec.helper"
local sk = h.sk

local FIX = "spec/fixtures/io/"
local TMP = os.tmpname()
local NUMPY = { "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64" }
local ALL = { "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64" }

-- The fixtures' element at flat C-order index i.
local function value(dtype, i)
  if dtype == "bool" then return i % 3 == 0 end
  if dtype == "uint8" then return (37 * i) % 256 end
  if dtype:match("^int") then return 7 * i - 11 end
  return (i - 2.5) * 0.75
end
local function values(dtype, n)
  local r = {}
  for i = 0, n - 1 do r[i + 1] = value(dtype, i) end
  return r
end
local function make(dtype, shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  if n == 0 then return sk.empty(shape, { dtype = dtype }) end
  return sk.tensor(values(dtype, n), { dtype = dtype }):view(shape)
end
local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end
local function check(t, dtype, shape)
  assert.equal(dtype, t:dtype())
  assert.same(shape, t:shape())
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  assert.same(values(dtype, n), h.flat(t))
end

describe("fixtures written by NumPy and PyTorch", function()
  it("load every NumPy dtype from .npy, read and mapped", function()
    for _, d in ipairs(NUMPY) do
      check(sk.load(FIX .. d .. ".npy"), d, { 2, 3 })
      check(sk.load(FIX .. d .. ".npy", { mmap = true }), d, { 2, 3 })
    end
  end)

  it("load big-endian, Fortran-order, 0-d, empty, 1-d, version 2.0 and 3.0 files", function()
    for _, mmap in ipairs { false, true } do
      local o = { mmap = mmap }
      check(sk.load(FIX .. "float32_big.npy", o), "float32", { 2, 3 })
      check(sk.load(FIX .. "int16_big.npy", o), "int16", { 2, 3 })
      local f = sk.load(FIX .. "float64_fortran.npy", o)
      check(f, "float64", { 2, 3, 4 })
      assert.same({ 1, 2, 6 }, f:stride()) -- column-major, as NumPy holds it
      local s = sk.load(FIX .. "scalar.npy", o)
      assert.same({}, s:shape())
      assert.equal(1.5, s:item())
      check(sk.load(FIX .. "empty.npy", o), "int32", { 0, 3 })
      check(sk.load(FIX .. "vector.npy", o), "int64", { 5 })
      check(sk.load(FIX .. "v2.npy", o), "float32", { 2, 3 })
      check(sk.load(FIX .. "v3.npy", o), "float32", { 2, 3 })
      check(sk.load(FIX .. "torch_float32.npy", o), "float32", { 2, 3 })
    end
  end)

  it("load stored and deflated .npz archives", function()
    for _, name in ipairs { "stored", "deflated" } do
      local z = sk.load(FIX .. name .. ".npz")
      check(z.a, "float32", { 2, 3 })
      check(z.b, "int64", { 4 })
      check(z.c, "bool", { 2, 2 })
    end
  end)

  it("load .safetensors with every dtype and the metadata, read and mapped", function()
    for _, mmap in ipairs { false, true } do
      local t, meta = sk.load(FIX .. "all.safetensors", { mmap = mmap })
      for _, d in ipairs(ALL) do
        if d == "bfloat16" then
          assert.same(values("float32", 6), h.flat(t[d]:float())) -- every value is exact in bfloat16
        else
          check(t[d], d, { 2, 3 })
        end
      end
      assert.same({ format = "pt", source = "make_io_fixtures.py" }, meta)
      local m = sk.load(FIX .. "model.safetensors", { mmap = mmap })
      check(m["layer.0.weight"], "float32", { 3, 2 })
      check(m["layer.0.bias"], "float32", { 3 })
      assert.same({}, m.scalar:shape())
      assert.equal(-1.875, m.scalar:item())
      check(m.empty, "int32", { 0, 4 })
    end
  end)
end)

describe("sk's writers", function()
  it("write NumPy's and safetensors' bytes exactly", function()
    for _, d in ipairs(NUMPY) do
      sk.save(make(d, { 2, 3 }), TMP .. ".npy")
      assert.equal(read(FIX .. d .. ".npy"), read(TMP .. ".npy"))
    end
    sk.save(make("int64", { 5 }), TMP .. ".npy")
    assert.equal(read(FIX .. "vector.npy"), read(TMP .. ".npy"))
    sk.save(sk.tensor(1.5, { dtype = "float32" }), TMP .. ".npy")
    assert.equal(read(FIX .. "scalar.npy"), read(TMP .. ".npy"))
    sk.save(sk.zeros({ 0, 3 }, { dtype = "int32" }), TMP .. ".npy")
    assert.equal(read(FIX .. "empty.npy"), read(TMP .. ".npy"))
    local all = {}
    for _, d in ipairs(ALL) do all[d] = d == "bfloat16" and make("float32", { 2, 3 }):bfloat16() or make(d, { 2, 3 }) end
    sk.save(all, TMP .. ".safetensors", { metadata = { format = "pt", source = "make_io_fixtures.py" } })
    assert.equal(read(FIX .. "all.safetensors"), read(TMP .. ".safetensors"))
    sk.save({ layer = { [0] = { weight = make("float32", { 3, 2 }), bias = make("float32", { 3 }) } },
              scalar = sk.tensor(-1.875, { dtype = "float64" }), empty = sk.empty({ 0, 4 }, { dtype = "int32" }) },
            TMP .. ".safetensors")
    assert.equal(read(FIX .. "model.safetensors"), read(TMP .. ".safetensors"))
  end)

  it("round-trip every dtype through every format, byte for byte", function()
    local shapes = { {}, { 0 }, { 5 }, { 2, 3 }, { 2, 1, 3 } }
    for _, d in ipairs(ALL) do
      for _, shape in ipairs(shapes) do
        local t = make(d, shape)
        for _, ext in ipairs { "safetensors", "npz", "npy" } do
          if not (d == "bfloat16" and ext ~= "safetensors") then
            local path = TMP .. "." .. ext
            sk.save(ext == "npy" and t or { x = t }, path)
            local first = read(path)
            local back = sk.load(path)
            if ext ~= "npy" then back = back.x end
            assert.equal(d, back:dtype())
            assert.same(shape, back:shape())
            assert.same(h.flat(t), h.flat(back))
            sk.save(ext == "npy" and back or { x = back }, path)
            assert.equal(first, read(path))
          end
        end
      end
    end
    sk.save({ x = make("float32", { 2, 3 }) }, TMP .. ".npz", { compressed = true })
    check(sk.load(TMP .. ".npz").x, "float32", { 2, 3 })
    local m = sk.load(TMP .. ".npz", { device = "meta" }).x -- moved where `device` says
    assert.equal("meta", m:device())
    assert.same({ 2, 3 }, m:shape())
  end)

  it("write non-contiguous tensors in C order and nested tables under dotted names", function()
    local t = make("int32", { 3, 4 }):t()
    sk.save({ a = { b = t, c = { d = t } } }, TMP .. ".safetensors")
    local back = sk.load(TMP .. ".safetensors")
    assert.same(h.flat(t), h.flat(back["a.b"]))
    assert.same(h.flat(t), h.flat(back["a.c.d"]))
    sk.save(t, TMP .. ".npy")
    assert.same(h.flat(t), h.flat(sk.load(TMP .. ".npy")))
  end)

  it("save a module's state_dict and load it back", function()
    local net = sk.nn.Sequential(sk.nn.Linear(3, 2), sk.nn.ReLU(), sk.nn.Linear(2, 1))
    sk.save(net:state_dict(), TMP .. ".safetensors")
    local net2 = sk.nn.Sequential(sk.nn.Linear(3, 2), sk.nn.ReLU(), sk.nn.Linear(2, 1))
    net2:load_state_dict((sk.load(TMP .. ".safetensors")))
    local x = make("float32", { 4, 3 })
    assert.same(h.flat(net(x)), h.flat(net2(x)))
  end)

  it("refuse what the formats cannot hold, naming the tensor", function()
    assert.matches("tensor 'w': NumPy has no bfloat16", h.err(sk.save, { w = sk.ones({ 2 }, { dtype = "bfloat16" }) }, TMP .. ".npz"))
    assert.matches("NumPy has no bfloat16", h.err(sk.save, sk.ones({ 2 }, { dtype = "bfloat16" }), TMP .. ".npy"))
    assert.matches("an .npy file holds one tensor", h.err(sk.save, { a = sk.ones({ 2 }) }, TMP .. ".npy"))
    assert.matches("the extension must be", h.err(sk.save, sk.ones({ 2 }), TMP .. ".pt"))
    assert.matches("'x' is a number, not a tensor", h.err(sk.save, { x = 1 }, TMP .. ".safetensors"))
    assert.matches("not valid UTF%-8", h.err(sk.save, { ["\255"] = sk.ones({ 1 }) }, TMP .. ".safetensors"))
    assert.matches("two tensors are named 'a.b'", h.err(sk.save, { a = { b = sk.ones({ 1 }) }, ["a.b"] = sk.ones({ 1 }) }, TMP .. ".safetensors"))
    assert.matches("meta device", h.err(sk.save, { a = sk.empty({ 1 }, { device = "meta" }) }, TMP .. ".safetensors"))
    assert.matches("sk.save: unexpected option 'mmap' %(expected compressed, metadata%)", h.err(sk.save, sk.ones({ 1 }), TMP .. ".npy", { mmap = true }))
  end)
end)

describe("mmap", function()
  it("views the file without copying; writes are copy-on-write; the mapping outlives the table", function()
    sk.save({ a = make("float32", { 2, 3 }), b = make("int64", { 4 }) }, TMP .. ".safetensors")
    local before = read(TMP .. ".safetensors")
    local m = sk.load(TMP .. ".safetensors", { mmap = true })
    local a, b = m.a, m.b
    assert.equal(32, a:data_ptr() - b:data_ptr()) -- both in the file's mapping: b's 32 bytes come first
    a:fill_(7)
    assert.same({ 7, 7, 7, 7, 7, 7 }, h.flat(a))
    assert.equal(before, read(TMP .. ".safetensors")) -- the file did not change
    m = nil
    collectgarbage()
    collectgarbage()
    assert.same(values("int64", 4), h.flat(b)) -- b still holds the mapping
  end)

  it("maps .npy files, sk.from_file shares writes with the file when asked", function()
    sk.save(make("float64", { 4 }), TMP .. ".npy")
    local t = sk.load(TMP .. ".npy", { mmap = true })
    check(t, "float64", { 4 })
    write(TMP .. ".bin", string.pack("<i4i4i4i4", 1, 2, 3, 4))
    local s = sk.from_file(TMP .. ".bin", true, 4, { dtype = "int32" })
    assert.same({ 1, 2, 3, 4 }, h.flat(s))
    s:mul_(10)
    s = nil
    collectgarbage()
    assert.equal(string.pack("<i4i4i4i4", 10, 20, 30, 40), read(TMP .. ".bin"))
    local p = sk.from_file(TMP .. ".bin", false, 2, { dtype = "int64" })
    p:zero_()
    assert.equal(string.pack("<i4i4i4i4", 10, 20, 30, 40), read(TMP .. ".bin"))
    assert.same({ 0 }, sk.from_file(TMP .. ".bin", { dtype = "uint8" }):shape())
    assert.matches("holds 16 bytes, fewer than size 5", h.err(sk.from_file, TMP .. ".bin", false, 5, { dtype = "int32" }))
    assert.matches("No such file", h.err(sk.from_file, TMP .. ".none", false, 1))
  end)

  it("copies a tensor whose offset is not a multiple of its element size", function()
    -- a 3-byte uint8 tensor first: the float32 one after it starts at byte 3 of the data
    local path = TMP .. ".safetensors"
    local hdr = '{"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},"b":{"dtype":"F32","shape":[2],"data_offsets":[3,11]}}'
    write(path, string.pack("<I8", #hdr) .. hdr .. "\1\2\3" .. string.pack("<ff", 1.5, -2))
    local m = sk.load(path, { mmap = true })
    assert.same({ 1, 2, 3 }, h.flat(m.a))
    assert.same({ 1.5, -2 }, h.flat(m.b))
    assert.equal(0, m.b:data_ptr() % 4)
  end)
end)

describe("malformed files", function()
  local function st(hdr, data) write(TMP .. ".safetensors", string.pack("<I8", #hdr) .. hdr .. (data or "")) end
  local function st_err(hdr, data)
    st(hdr, data)
    return h.err(sk.load, TMP .. ".safetensors")
  end

  it("name the file and the tensor for bad safetensors headers", function()
    local e = st_err('{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,12]}}', string.rep("\0", 12))
    assert.matches("sk.load: '.-%.safetensors': tensor 'w': invalid shape, data type, or offset", e)
    assert.matches("tensor 'w': unknown dtype X", st_err('{"w":{"dtype":"X","shape":[1],"data_offsets":[0,4]}}', "\0\0\0\0"))
    assert.matches("dtype U16 has no sk dtype", st_err('{"w":{"dtype":"U16","shape":[1],"data_offsets":[0,2]}}', "\0\0"))
    assert.matches("shape must be a list of non%-negative integers",
                   st_err('{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', "\0\0\0\0"))
    assert.matches("shape must be a list of non%-negative integers",
                   st_err('{"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}', "\0\0\0\0"))
    assert.matches("element count overflows",
                   st_err('{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}', "\0\0\0\0"))
    assert.matches("size in bytes overflows",
                   st_err('{"w":{"dtype":"F64","shape":[4294967296,536870912],"data_offsets":[0,4]}}', "\0\0\0\0"))
    assert.matches("invalid offset for tensor 'b'.-inside the previous",
                   st_err('{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}',
                          "\0\0\0\0\0\0"))
    assert.matches("invalid offset for tensor 'b'.-after a hole",
                   st_err('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}}',
                          "\0\0\0\0\0\0"))
    assert.matches("file not fully covered", st_err('{"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', "\0\0\0"))
    assert.matches("file not fully covered", st_err('{"w":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}', "\0\0"))
    assert.matches("names tensor 'w' twice",
                   st_err('{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"\\u0077":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', "\0\0"))
    assert.matches("invalid JSON in header", st_err('{"w":', ""))
    assert.matches("not valid UTF%-8", st_err('{"\255":{}}', ""))
    assert.matches("does not start with '{'", st_err('["w"]', ""))
    assert.matches("__metadata__ must be an object of strings", st_err('{"__metadata__":{"a":1}}', ""))
    write(TMP .. ".safetensors", "\4\0\0")
    assert.matches("header too small", h.err(sk.load, TMP .. ".safetensors"))
    write(TMP .. ".safetensors", string.pack("<I8", 1 << 40) .. "{}")
    assert.matches("header too large", h.err(sk.load, TMP .. ".safetensors"))
    write(TMP .. ".safetensors", string.pack("<I8", 100) .. "{}")
    assert.matches("invalid header length 100", h.err(sk.load, TMP .. ".safetensors"))
    assert.matches("No such file", h.err(sk.load, TMP .. ".missing.safetensors"))
  end)

  it("name the file for bad .npy headers", function()
    local good = read(FIX .. "float32.npy")
    local function npy_err(s)
      write(TMP .. ".npy", s)
      return h.err(sk.load, TMP .. ".npy")
    end
    assert.matches("the magic string is not correct", npy_err("\x93NUMPX" .. good:sub(7)))
    assert.matches("we only support format version", npy_err(good:sub(1, 6) .. "\4\0" .. good:sub(9)))
    assert.matches("descr '<c8' has no sk dtype", npy_err((good:gsub("<f4", "<c8"))))
    assert.matches("Object arrays cannot be loaded", npy_err((good:gsub("'<f4'", "'|O' "))))
    assert.matches("Header does not contain the correct keys", npy_err((good:gsub("'shape'", "'shapx'"))))
    assert.matches("Header does not contain the correct keys", npy_err((good:gsub("}", "'x': 1}"))))
    assert.matches("fortran_order is not a valid bool", npy_err((good:gsub("False", "Fals ", 1))))
    assert.matches("shape is not valid", npy_err((good:gsub("%(2, 3%)", "(2, -3)"))))
    assert.matches("the file is truncated: shape %(2, 3%) of <f4 needs 24 bytes of data, it holds 20", npy_err(good:sub(1, -5)))
    assert.matches("element count overflows", npy_err((good:gsub("%(2, 3%)", "(4294967296, 4294967296)"))))
    assert.matches("the file is truncated: its header needs 128 bytes", npy_err(good:sub(1, 100)))
  end)

  it("name the archive and the member for bad .npz files", function()
    local good = read(FIX .. "stored.npz")
    write(TMP .. ".npz", good:sub(1, 200))
    assert.matches("not a readable zip archive", h.err(sk.load, TMP .. ".npz"))
    -- flip one byte of a stored member's data: the CRC no longer matches
    local at = good:find("\x93NUMPY", 1, true) + 130
    write(TMP .. ".npz", good:sub(1, at - 1) .. string.char((good:byte(at) + 1) % 256) .. good:sub(at + 1))
    assert.matches("': member 'a.npy': CRC error$", h.err(sk.load, TMP .. ".npz"))
  end)

  it("never crash on any truncation of a valid file", function()
    for _, name in ipairs { "all.safetensors", "float64_fortran.npy", "deflated.npz", "stored.npz" } do
      local s = read(FIX .. name)
      local path = TMP .. "." .. name:match("%.(%w+)$")
      for n = 0, #s - 1 do
        write(path, s:sub(1, n))
        local ok, e = pcall(sk.load, path)
        assert(not ok, name .. " truncated to " .. n .. " bytes loaded")
        assert.matches("sk.load: '", tostring(e))
      end
    end
  end)
end)

describe("bytes", function()
  it("sk.frombuffer copies a string's bytes as a dtype, with PyTorch's checks", function()
    local s = string.pack("<i4i4i4", 5, -6, 7)
    assert.same({ 5, -6, 7 }, h.flat(sk.frombuffer(s, { dtype = "int32" })))
    assert.same({ -6 }, h.flat(sk.frombuffer(s, { dtype = "int32", offset = 4, count = 1 })))
    assert.same({ 5, 0, 0, 0 }, h.flat(sk.frombuffer(s, { dtype = "uint8", count = 4 })))
    assert.matches("offset %(12 bytes%) must be non%-negative", h.err(sk.frombuffer, s, { dtype = "int32", offset = 12 }))
    assert.matches("must be a multiple of element size %(8%)", h.err(sk.frombuffer, s, { dtype = "int64" }))
    assert.matches("requested buffer length %(4 %* 4 bytes%)", h.err(sk.frombuffer, s, { dtype = "int32", count = 4 }))
    assert.matches("both buffer length %(0%) and count", h.err(sk.frombuffer, "", { dtype = "int32" }))
    assert.matches("option 'dtype' is required", h.err(sk.frombuffer, s))
    assert.matches("must be a string or a userdata, not a number", h.err(sk.frombuffer, 1, { dtype = "int32" }))
  end)

  it("Tensor:tobytes gives C-order bytes of any view; data_ptr the first element's address", function()
    local t = sk.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = "int16" })
    assert.equal(string.pack("<i2i2i2i2", 1, 2, 3, 4), t:tobytes())
    assert.equal(string.pack("<i2i2i2i2", 1, 3, 2, 4), t:t():tobytes())
    assert.equal(t:data_ptr() + 6, t[{ 1, 1 }]:data_ptr()) -- element (1, 1) is 3 int16 on
    assert.equal(2, t:element_size())
    assert.equal(8, t:nbytes())
    assert.equal("", sk.empty({ 0 }):tobytes())
  end)

  it("view(dtype) reinterprets the bytes, with PyTorch's conditions", function()
    local t = sk.tensor({ 1, 2 }, { dtype = "float32" })
    assert.same({ 1065353216, 1073741824 }, h.flat(t:view("int32")))
    assert.same({ 2, 8 }, sk.zeros({ 2, 2 }, { dtype = "float64" }):view("int16"):shape())
    local u = sk.tensor({ 1, 0, 2, 0 }, { dtype = "uint8" }):view("int16")
    assert.same({ 1, 2 }, h.flat(u))
    u:add_(1) -- a view: writes reach the bytes
    assert.same({ 2, 3 }, h.flat(u))
    assert.matches("self.size%(%-1%) must be divisible by 2 to view Char as Short", h.err(function()
      return sk.tensor({ 1, 2, 3 }, { dtype = "int8" }):view("int16") end))
    assert.matches("self.stride%(%-1%) must be 1", h.err(function() return sk.zeros({ 2, 2 }, { dtype = "int8" }):t():view("int16") end))
    assert.matches("self.dim%(%) cannot be 0", h.err(function() return sk.tensor(1, { dtype = "int8" }):view("int16") end))
    assert.matches("storage_offset%(%) must be divisible by 4",
                   h.err(function() return sk.zeros({ 8 }, { dtype = "uint8" }):narrow(0, 1, 4):view("int32") end))
  end)
end)

describe("DLPack", function()
  it("exports and imports without a copy; the deleter releases the tensor", function()
    local t = make("float32", { 2, 3 }):t()
    local cap = t:to_dlpack()
    assert.equal("userdata", type(cap))
    local u = sk.from_dlpack(cap)
    assert.equal(t:data_ptr(), u:data_ptr())
    assert.same(t:stride(), u:stride())
    u:fill_(1)
    assert.same({ 1, 1, 1, 1, 1, 1 }, h.flat(t))
    assert.matches("Bool type is not supported by dlpack", h.err(function() return sk.ones({ 1 }, { dtype = "bool" }):to_dlpack() end))
    assert.matches("require gradient", h.err(function() return sk.ones({ 1 }, { requires_grad = true }):to_dlpack() end))
    assert.matches("DLManagedTensor pointer", h.err(sk.from_dlpack, 1))
  end)

  it("exchanges a tensor with a C program without a copy (examples/dlpack)", function()
    local exe = TMP .. ".dlpack"
    -- the compiler runs without the sanitizer build's LD_PRELOAD; the program runs with it
    local cc = string.format("env -u LD_PRELOAD cc -std=gnu11 -Wall -Werror -I/usr/include/lua5.4 -o %s examples/dlpack/exchange.c -llua5.4", exe)
    assert(os.execute(cc), cc)
    local out, rc = h.run_child(exe)
    assert(rc == 0, out)
    assert.matches("C sees sk's doubling: 2 4 6 8", out)
    assert.matches("sk's arange in C: 0 1 2 3 4", out)
    assert.matches("producer's deleter ran once", out)
    os.remove(exe)
  end)
end)

-- The error of fn(...) without the position core.raise may add.
local function msg(fn, ...) return (h.err(fn, ...):gsub("^[^:]*:%d+: ", "")) end
local core = require "sk.core"
-- The bytes of a little-endian u32 at byte i (1-based) of s replaced by v.
local function put_u32(s, i, v) return s:sub(1, i - 1) .. string.pack("<I4", v) .. s:sub(i + 4) end

describe("loader boundaries", function()
  it("refuse a directory, a device and a missing path in every loader, naming the loader and the path", function()
    for _, ext in ipairs { "npy", "npz", "safetensors" } do
      local dir = TMP .. ".dir." .. ext
      assert(os.execute("mkdir -p " .. dir))
      assert.equal(string.format("sk.load: '%s': is a directory", dir), msg(sk.load, dir))
      assert.equal(string.format("sk.load: '%s': is a directory", dir), msg(sk.load, dir, { mmap = true }))
      os.remove(dir)
      local dev = TMP .. ".dev." .. ext
      assert(os.execute(string.format("ln -sf /dev/zero %s", dev)))
      assert.equal(string.format("sk.load: '%s': is not a regular file", dev), msg(sk.load, dev))
      os.remove(dev)
      local none = TMP .. ".none." .. ext
      assert.equal(string.format("sk.load: '%s': No such file or directory", none), msg(sk.load, none))
    end
    assert(os.execute("mkdir -p " .. TMP .. ".dir"))
    assert.equal(string.format("sk.from_file: '%s': is a directory", TMP .. ".dir"), msg(sk.from_file, TMP .. ".dir", false, 1))
    os.remove(TMP .. ".dir")
  end)

  it("make every loaded bool byte 0 or 1 (safetensors, .npy, .npz, frombuffer; read and mapped)", function()
    local bytes, want = "\0\2\1\255", { false, true, true, true }
    local function check(t, what)
      assert.equal(3, t:sum():item(), what)
      assert.equal(3, t:count_nonzero():item(), what)
      assert.same(want, t:totable(), what)
      assert.equal("\0\1\1\1", t:tobytes(), what)
    end
    check(sk.frombuffer(bytes, { dtype = "bool" }), "frombuffer")
    local header = '{"b":{"dtype":"BOOL","shape":[4],"data_offsets":[0,4]}}'
    header = header .. string.rep(" ", (8 - #header % 8) % 8)
    write(TMP .. ".safetensors", string.pack("<I8", #header) .. header .. bytes)
    check(sk.load(TMP .. ".safetensors").b, "safetensors")
    check(sk.load(TMP .. ".safetensors", { mmap = true }).b, "safetensors, mapped")
    assert.equal(bytes, read(TMP .. ".safetensors"):sub(-4)) -- the mapping is copy-on-write
    local npy = require("sk.formats.npy")(sk, core, require("sk.formats.util")(sk, core))
    local member = npy.header(sk.zeros({ 4 }, { dtype = "bool" }), error) .. bytes
    write(TMP .. ".npy", member)
    check(sk.load(TMP .. ".npy"), ".npy")
    check(sk.load(TMP .. ".npy", { mmap = true }), ".npy, mapped")
    for _, compressed in ipairs { false, true } do
      core.io.zip_write(TMP .. ".npz", { { name = "b.npy", data = member } }, compressed)
      check(sk.load(TMP .. ".npz").b, ".npz")
    end
  end)
end)

describe(".npz members", function()
  it("refuse a member whose zip entry states another size than its .npy header implies, before reading it", function()
    sk.save({ a = sk.arange(4, { dtype = "float32" }) }, TMP .. ".npz", { compressed = true })
    local s = read(TMP .. ".npz")
    local lh, cd = s:find("PK\3\4", 1, true), s:find("PK\1\2", 1, true)
    local size = string.unpack("<I4", s, lh + 22)
    assert.equal(128 + 16, size)
    for _, claim in ipairs { 1 << 30, size + 1 } do -- a 1 GiB claim in a file of a few hundred bytes
      write(TMP .. ".npz", put_u32(put_u32(s, lh + 22, claim), cd + 24, claim))
      assert.equal(string.format("sk.load: '%s': member 'a.npy': its .npy header implies 144 bytes, its zip entry states %d",
                                 TMP .. ".npz", claim), msg(sk.load, TMP .. ".npz"))
    end
    write(TMP .. ".npz", put_u32(put_u32(s, lh + 22, 140), cd + 24, 140))
    assert.matches("member 'a.npy': the file is truncated: shape %(4,%) of <f4 needs 16 bytes of data, it holds 12",
                   msg(sk.load, TMP .. ".npz"))
  end)

  it("load a member straight into its tensor: peak memory about the tensor's size #rss", function()
    local mib = 128
    sk.save({ z = sk.zeros({ mib << 18 }, { dtype = "float32" }) }, TMP .. ".npz", { compressed = true })
    collectgarbage("collect")
    local script = [[
      local sk = require "sk"
      local function kb(key) for l in io.lines("/proc/self/status") do local v = l:match("^" .. key .. ":%s*(%d+)") if v then return tonumber(v) end end end
      local before = kb("VmRSS")
      local t = sk.load(arg[1]).z
      assert(t:numel() == ]] .. (mib << 18) .. [[ and t:sum():item() == 0)
      print((kb("VmHWM") - before) / 1024)
    ]]
    write(TMP .. ".lua", script)
    local out = h.run_child(string.format("lua5.4 %s %s.npz", TMP .. ".lua", TMP))
    local grew = tonumber(out:match("^([%d.]+)"))
    assert(grew, out)
    assert.is_true(grew > mib * 0.9 and grew < mib * 1.25, string.format("loading a %d MiB tensor peaked %.0f MiB over the start", mib, grew))
  end)
end)

-- With python3-numpy present (optional): NumPy reads what sk writes and the reverse.
local PY = "env -u LD_PRELOAD /usr/bin/python3 " -- not under the sanitizer build's preloads
local has_numpy = os.execute(PY .. "-c 'import numpy' 2>/dev/null")
;(has_numpy and describe or pending)("with NumPy installed", function()
  it("NumPy reads sk's .npy and .npz files and sk reads NumPy's", function()
    local z = {}
    for _, d in ipairs(NUMPY) do z[d] = make(d, { 3, 2 }) end
    sk.save(z, TMP .. ".npz", { compressed = true })
    local py = [[
import numpy as np, sys
z = np.load(sys.argv[1] + ".npz")
for d in ["bool","uint8","int8","int16","int32","int64","float16","float32","float64"]:
    a = z[d]; i = np.arange(6)
    want = (i % 3 == 0) if d == "bool" else ((37*i) % 256) if d == "uint8" else (7*i - 11) if d.startswith("int") else (i - 2.5)*0.75
    assert a.dtype == np.dtype(d) and a.shape == (3, 2) and (a.ravel() == want).all(), d
np.save(sys.argv[1] + ".npy", np.arange(24, dtype=">i8").reshape(2, 3, 4).transpose(2, 0, 1))
]]
    write(TMP .. ".py", py)
    assert(os.execute(PY .. TMP .. ".py " .. TMP))
    local t = sk.load(TMP .. ".npy")
    assert.same({ 4, 2, 3 }, t:shape())
    assert.same(h.flat(sk.arange(24):view({ 2, 3, 4 }):permute({ 2, 0, 1 })), h.flat(t))
  end)
end)

teardown(function()
  for _, ext in ipairs { "", ".npy", ".npz", ".safetensors", ".bin", ".py", ".lua" } do os.remove(TMP .. ext) end
end)
