-- spec/memory_spec.lua — memory stays bounded whatever collector mode the host chose
-- Tagged #rss: peak RSS means nothing under the sanitizer build (its quarantine keeps freed memory).
local helper = require "spec.helper"
local function run(mode, kind)
  local out = helper.run_child("lua5.4 bench/gc_loop.lua " .. mode .. " 300 " .. kind)
  local peak, _, now = out:match("^(%d+)%s+(%S+)%s+(%a+)")
  assert(peak, "gc_loop printed: " .. out)
  return tonumber(peak) / 1024, now
end

describe("memory under the standalone interpreter #rss", function()
  -- 300 iterations make 2.4 GB of 4 MiB temporaries; before the bound, generational mode kept them all
  for _, mode in ipairs { "default", "generational", "incremental" } do
    it("frees dead temporaries in " .. mode .. " mode and keeps that mode", function()
      local peak, now = run(mode, "temps")
      assert.is_true(peak < 120, string.format("peak RSS %.0f MiB", peak))
      assert.equal(mode == "incremental" and "incremental" or "generational", now)
      local mlp = run(mode, "mlp")
      assert.is_true(mlp < 120, string.format("MLP loop peak RSS %.0f MiB", mlp))
    end)
    it("frees autograd graphs reachable only through a dropped loss, results their nodes saved, and trains in bounded memory, in " .. mode .. " mode", function()
      local graphs = run(mode, "graphs") -- 300 graphs of 4 MiB of saved tensors: 1.2 GB if none were freed
      assert.is_true(graphs < 150, string.format("graphs loop peak RSS %.0f MiB", graphs))
      local outputs = run(mode, "outputs") -- 300 saved 4 MiB results, each through backward
      assert.is_true(outputs < 150, string.format("saved-outputs loop peak RSS %.0f MiB", outputs))
      local train = run(mode, "train")
      assert.is_true(train < 150, string.format("training loop peak RSS %.0f MiB", train))
    end)
  end
end)

describe("Lua values autograd's nodes hold, under the standalone interpreter #rss", function()
  local function grown(mode, kind)
    local out = helper.run_child("lua5.4 spec/fixtures/held_loop.lua " .. mode .. " " .. kind)
    local kb, now = out:match("^(%-?%d+)%s+(%a+)")
    assert(kb, "held_loop printed: " .. out)
    return tonumber(kb) / 1024, now
  end
  -- before the records: 55 MB (a ctx saving its output: a cycle through the registry), 40 MB
  -- (hook references past 256 a collection never dropped), 50 MB (hooks holding their tensor)
  for _, mode in ipairs { "default", "incremental" } do
    it("frees Functions saving their output, hooks of tensors dropped 300 at once, and hooks holding their tensor, in " .. mode .. " mode", function()
      for _, kind in ipairs { "function", "hooks", "selfhooks" } do
        local mib, now = grown(mode, kind)
        assert.is_true(mib < 10, string.format("%s: RSS grew %.1f MiB", kind, mib))
        assert.equal(mode == "incremental" and "incremental" or "generational", now)
      end
    end)
  end
end)

describe("memory in this process #rss", function()
  local sk = require("spec.helper").sk
  local function rss_mib()
    for l in io.lines("/proc/self/status") do
      local kb = l:match("^VmRSS:%s*(%d+)")
      if kb then return tonumber(kb) / 1024 end
    end
  end
  it("frees dead temporaries in this process, in both modes", function()
    local mode = collectgarbage("incremental") -- the host's mode, put back at the end
    for _, m in ipairs { "generational", "incremental" } do
      collectgarbage(m)
      collectgarbage("collect")
      local h = sk.ones(256, 1024) -- 1 MiB
      local before = rss_mib()
      for _ = 1, 400 do local a = h * 2; local b = h + 1; local _ = a, b end -- 800 MiB made
      assert.is_true(rss_mib() - before < 150, m .. string.format(": RSS grew %.0f MiB", rss_mib() - before))
    end
    collectgarbage(mode)
  end)
  it("obeys a stopped collector", function()
    local gced = 0
    collectgarbage("collect")
    collectgarbage("stop")
    local keep = setmetatable({}, { __gc = function() gced = gced + 1 end })
    keep = nil
    for _ = 1, 40 do local _ = sk.ones(256, 1024) * 2 end -- 40 MiB: past the first bound
    assert.equal(0, gced)
    collectgarbage("restart")
    collectgarbage("collect")
    assert.equal(1, gced)
  end)
end)

describe("the collector account", function()
  it("is one per lua_State: a second load of sk (busted's insulation reloads modules) pays no wrapped debt", function()
    local sk = require("spec.helper").sk
    local garbage = sk.rand(300007) + 1 -- 1.2 MB charged under this load, garbage under the next
    garbage = nil
    local first = {}
    for k, v in pairs(package.loaded) do
      if k == "sk" or k:match("^sk%.") then first[k], package.loaded[k] = v, nil end
    end
    local ok, err = pcall(function()
      local sk2 = require "sk"
      collectgarbage()
      collectgarbage() -- the first load's tensors are paid back to the one account
      local cycles = 0 -- collections seen, by a finalizer that re-arms itself
      local function arm() setmetatable({}, { __gc = function() cycles = cycles + 1; arm() end }) end
      arm()
      local a, b = sk2.ones(4), sk2.ones(4)
      for _ = 1, 2000 do local _ = a + b end
      -- a wrapped account forces a full collection on every op (2000 and more)
      assert.is_true(cycles < 500, cycles .. " collections in 2000 small ops")
    end)
    for k in pairs(package.loaded) do if k == "sk" or k:match("^sk%.") then package.loaded[k] = nil end end
    for k, v in pairs(first) do package.loaded[k] = v end
    assert(ok, err)
  end)
end)
