-- examples/char_transformer.lua — a small character-level transformer language model
-- (sk.nn, sk.optim.AdamW) trained on text generated from a repeating grammar. One block,
-- causal self-attention with 2 heads, d = 32, context 16; prints the loss as it falls, then
-- a sample. Usage: lua5.4 examples/char_transformer.lua [steps]
local sk = require "sk"
local nn, optim = sk.nn, sk.optim

local M = {}

-- sentences of a tiny grammar, from a seeded Lua generator
function M.text(n, seed)
  local subj = { "the cat", "a dog", "the bird", "my fox" }
  local verb = { "sat on", "ran to", "looked at", "jumped over" }
  local obj = { "the mat", "a tree", "the park", "my hat" }
  local state = seed or 1
  local function pick(t) state = (state * 1103515245 + 12345) % 2147483648; return t[state % #t + 1] end
  local out = {}
  for i = 1, n do out[i] = pick(subj) .. " " .. pick(verb) .. " " .. pick(obj) .. ". " end
  return table.concat(out)
end

local function vocab(text)
  local set, chars = {}, {}
  for c in text:gmatch(".") do if not set[c] then set[c] = true; chars[#chars + 1] = c end end
  table.sort(chars)
  local idx = {}
  for i, c in ipairs(chars) do idx[c] = i - 1 end
  return chars, idx
end

local Block = nn.class("Block", function(self, d, heads, ctx)
  self.heads, self.d = heads, d
  self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
  self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
  self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
  self.mask = sk.ones(ctx, ctx):triu(1):to("bool") -- the future, hidden
end, function(self, x)
  local b, t, d, h = x:size(0), x:size(1), self.d, self.heads
  local dh = d // h
  local qkv = self.qkv(self.ln1(x)):view({ b, t, 3, h, dh }):permute({ 2, 0, 3, 1, 4 }) -- 3, b, h, t, dh
  local q, k, v = qkv[0], qkv[1], qkv[2]
  local att = q:matmul(k:transpose(-2, -1)) / math.sqrt(dh)
  att = sk.softmax(att:masked_fill(self.mask:narrow(0, 0, t):narrow(1, 0, t), -1e9), -1)
  local o = att:matmul(v):transpose(1, 2):reshape({ b, t, d })
  x = x + self.proj(o)
  return x + self.fc2(sk.gelu(self.fc1(self.ln2(x))))
end)

local Model = nn.class("CharTransformer", function(self, nvocab, d, heads, ctx)
  self.tok, self.pos = nn.Embedding(nvocab, d), nn.Embedding(ctx, d)
  self.block = Block(d, heads, ctx)
  self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, nvocab)
end, function(self, idx)
  local t = idx:size(1)
  local x = self.tok(idx) + self.pos(sk.arange(t))
  return self.head(self.ln(self.block(x)))
end)

-- trains for `steps`; returns the first and the last loss, the model and the vocabulary
function M.train(steps, seed)
  sk.manual_seed(seed or 0)
  local text = M.text(400, seed)
  local chars, idx = vocab(text)
  local codes = {}
  for i = 1, #text do codes[i] = idx[text:sub(i, i)] end
  local data = sk.tensor(codes)
  local ctx, batch = 16, 32
  local model = Model(#chars, 32, 2, ctx)
  local opt = optim.AdamW(model:parameters(), { lr = 3e-3, weight_decay = 0.01 })
  local first, last
  for step = 1, steps do
    local starts = sk.randint(data:numel() - ctx - 1, { batch })
    local offs = sk.arange(ctx)
    local pos = starts:unsqueeze(1) + offs
    local x, y = data:index_select(0, pos:reshape(-1)):view({ batch, ctx }), data:index_select(0, (pos + 1):reshape(-1))
    local logits = model(x)
    local loss = sk.cross_entropy(logits:reshape({ batch * ctx, #chars }), y)
    opt:zero_grad()
    loss:backward()
    opt:step()
    first = first or loss:item()
    last = loss:item()
  end
  return first, last, model, chars, idx
end

-- greedy continuation of a prompt
function M.sample(model, chars, idx, prompt, n)
  local codes = {}
  for c in prompt:gmatch(".") do codes[#codes + 1] = idx[c] end
  return sk.no_grad(function()
    for _ = 1, n do
      local ctxcodes = {}
      for i = math.max(1, #codes - 15), #codes do ctxcodes[#ctxcodes + 1] = codes[i] end
      local logits = model(sk.tensor({ ctxcodes }))
      codes[#codes + 1] = logits[{ 0, -1 }]:argmax():item()
    end
    local s = {}
    for i, c in ipairs(codes) do s[i] = chars[c + 1] end
    return table.concat(s)
  end)
end

if arg and arg[0] and arg[0]:match("char_transformer%.lua$") then
  local steps = tonumber(arg[1]) or 300
  local first, last, model, chars, idx = M.train(steps, 1)
  print(string.format("char transformer: %d steps, loss %.3f -> %.3f", steps, first, last))
  print("sample: " .. M.sample(model, chars, idx, "the cat ", 40))
end
return M
