-- sk.formats.npz — NumPy's .npz: a zip archive of "<name>.npy" members, stored (np.savez)
-- or deflated (np.savez_compressed); libzip reads and writes the archive (zip64 included)
-- and checks each member's CRC-32; a member is read straight into its tensor.
return function(sk, core, util, npy)
  local M = {}

  -- load(path, opts, fail) -> {name = tensor}, the names without ".npy" as np.load gives them
  function M.load(path, opts, fail)
    util.file_size(path, fail) -- a directory or a device is refused by name before libzip opens it
    local out = {}
    local z, members = util.try(fail, core.io.zip_open, path)
    for i, m in ipairs(members) do
      local name = m.name:gsub("%.npy$", "")
      if out[name] then fail(string.format("the archive holds '%s' twice", name)) end
      out[name] = npy.from_zip(z, i, m.size, function(msg) fail(string.format("member '%s': %s", m.name, msg)) end)
    end
    core.io.zip_close(z)
    return out
  end

  -- save(named, path, compressed, fail): one "<name>.npy" member per tensor, in name order.
  function M.save(named, path, compressed, fail)
    local names = {}
    for name in pairs(named) do names[#names + 1] = name end
    table.sort(names)
    if #names == 0 then fail("an .npz archive needs at least one tensor") end
    local members = {}
    for i, name in ipairs(names) do members[i] = { name = name .. ".npy", data = npy.to_bytes(named[name], fail, name) } end
    util.try(fail, core.io.zip_write, path, members, compressed)
  end
  return M
end
