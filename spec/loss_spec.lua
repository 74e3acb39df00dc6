-- spec/loss_spec.lua — the losses and distances against their definitions evaluated in plain Lua
-- (element by element, sums over classes, norms over rows, CTC by enumerating every alignment),
-- each reduction, float32 and float64, Meta shapes, PyTorch's errors, and the nn modules.
local h = require "spec.helper"
local sk = h.sk

local function f64(v) return sk.tensor(v, { dtype = "float64" }) end
local function sum(t) local s = 0 for _, v in ipairs(t) do s = s + v end return s end
local function log1pexp(v) return v > 30 and v or math.log(1 + math.exp(v)) end
local function logsig(v) return -log1pexp(-v) end

-- {==== Elementwise losses: loss_i = f(x_i, t_i[, u_i]) ====
local X = { 0.05, 0.25, 0.5, 0.75, 0.95, 0.3 }
local P = { 0, 1, 0.5, 1, 0.2, 0 }     -- probabilities
local S = { 1, -1, 1, 1, -1, -1 }      -- signs
local Z = { -2.5, -0.5, 0.1, 0.6, 1.5, 3 }
local ELEMENTWISE = {
  { "binary_cross_entropy", { X, P }, {}, function(x, t) return -(t * math.log(x) + (1 - t) * math.log(1 - x)) end },
  { "binary_cross_entropy_with_logits", { Z, P }, {}, function(x, t) return -(t * logsig(x) + (1 - t) * logsig(-x)) end },
  { "l1_loss", { Z, X }, {}, function(x, t) return math.abs(x - t) end },
  { "smooth_l1_loss", { Z, X }, { beta = 0.8 }, function(x, t)
      local z = math.abs(x - t) return z < 0.8 and 0.5 * z * z / 0.8 or z - 0.4 end },
  { "smooth_l1_loss", { Z, X }, { beta = 0 }, function(x, t) return math.abs(x - t) end },
  { "huber_loss", { Z, X }, { delta = 0.8 }, function(x, t)
      local z = math.abs(x - t) return z < 0.8 and 0.5 * z * z or 0.8 * (z - 0.4) end },
  { "kl_div", { Z, P }, {}, function(x, t) return t > 0 and t * (math.log(t) - x) or 0 end },
  { "kl_div", { Z, Z }, { log_target = true }, function(x, t) return math.exp(t) * (t - x) end },
  { "poisson_nll_loss", { Z, { 0, 1, 2, 3, 4, 0.5 } }, {}, function(x, t) return math.exp(x) - t * x end },
  { "poisson_nll_loss", { X, { 0, 1, 2, 3, 4, 0.5 } }, { log_input = false, full = true }, function(x, t)
      local l = x - t * math.log(x + 1e-8)
      return t > 1 and l + t * math.log(t) - t + 0.5 * math.log(2 * math.pi * t) or l end },
  { "gaussian_nll_loss", { Z, X, { 0.5, 1, 2, 1e-9, 3, 0.25 } }, { full = true }, function(x, t, v)
      v = math.max(v, 1e-6) return 0.5 * (math.log(v) + (x - t) ^ 2 / v) + 0.5 * math.log(2 * math.pi) end },
  { "margin_ranking_loss", { Z, X, S }, { margin = 0.3 }, function(a, b, y) return math.max(0, -y * (a - b) + 0.3) end },
  { "hinge_embedding_loss", { Z, S }, { margin = 1.5 }, function(x, y) return y == 1 and x or math.max(0, 1.5 - x) end },
  { "soft_margin_loss", { Z, S }, {}, function(x, y) return log1pexp(-y * x) end },
}

describe("elementwise losses", function()
  for _, c in ipairs(ELEMENTWISE) do
    local op, inputs, kw, f = c[1], c[2], c[3], c[4]
    local name = op .. " " .. h.dump({ next(kw) })
    it(name .. " matches its definition for reduction none, sum and mean, in float64 and float32", function()
      local want = {}
      for i = 1, #inputs[1] do want[i] = f(inputs[1][i], inputs[2][i], inputs[3] and inputs[3][i]) end
      for _, dt in ipairs({ "float64", "float32" }) do
        local tol = dt == "float64" and 1e-12 or 1e-5
        local args = {}
        for i, v in ipairs(inputs) do args[i] = sk.tensor(v, { dtype = dt }) end
        for red, expect in pairs({ none = want, sum = sum(want), mean = sum(want) / #want }) do
          local o = {}
          for k, v in pairs(kw) do o[k] = v end
          o.reduction = red
          args[#inputs + 1] = o
          local y = sk[op](table.unpack(args, 1, #inputs + 1))
          assert.equal(dt, y:dtype())
          h.assert_close(red == "none" and y:totable() or y:item(), expect, tol)
        end
      end
    end)
  end

  it("binary_cross_entropy clamps its logs to -100, and its gradient is PyTorch's clamped formula", function()
    local x = f64({ 0, 1, 0, 1 }):requires_grad_()
    local t = f64({ 1, 0, 0, 1 })
    local y = sk.binary_cross_entropy(x, t, { reduction = "none" })
    assert.same({ 100, 100, 0, 0 }, y:totable())
    y:sum():backward()
    -- (x - t) / max(x (1 - x), 1e-12)
    assert.same({ -1e12, 1e12, 0, 0 }, x.grad:totable())
    local x2 = f64({ 0.2, 0.5 }):requires_grad_()
    local t2 = f64({ 0.3, 0.9 }):requires_grad_()
    sk.binary_cross_entropy(x2, t2, { weight = f64({ 2, 3 }) }):backward()
    h.assert_close(x2.grad:totable(), { 2 * (0.2 - 0.3) / (0.2 * 0.8) / 2, 3 * (0.5 - 0.9) / 0.25 / 2 }, 1e-12)
    h.assert_close(t2.grad:totable(), { 2 * math.log(0.8 / 0.2) / 2, 0 }, 1e-12)
  end)

  it("binary_cross_entropy_with_logits weighs the positive term by pos_weight (per class) and the loss by weight", function()
    local x, t = f64({ { -1, 0.5 }, { 2, -3 } }), f64({ { 1, 0 }, { 0.5, 1 } })
    local pw, w = f64({ 3, 0.5 }), f64({ 2, 1 })
    local y = sk.binary_cross_entropy_with_logits(x, t, { weight = w, pos_weight = pw, reduction = "none" })
    local want = {}
    for i, row in ipairs(x:totable()) do
      want[i] = {}
      for j, v in ipairs(row) do
        local tt, p = t:totable()[i][j], pw:totable()[j]
        want[i][j] = w:totable()[j] * -(p * tt * logsig(v) + (1 - tt) * logsig(-v))
      end
    end
    h.assert_close(y:totable(), want, 1e-12)
    -- large logits stay finite
    h.assert_close(sk.binary_cross_entropy_with_logits(f64({ 800, -800 }), f64({ 0, 1 }), { reduction = "none" }):totable(), { 800, 800 }, 1e-12)
  end)

  it("kl_div: batchmean is the sum over the batch size; xlogy(0, 0) = 0; NaN targets give NaN", function()
    local x = f64({ { -1, -2, -0.5 }, { -0.3, -1.2, -3 } })
    local t = f64({ { 0.2, 0, 0.8 }, { 0.5, 0.25, 0.25 } })
    local s = 0
    for i, row in ipairs(t:totable()) do
      for j, v in ipairs(row) do if v > 0 then s = s + v * (math.log(v) - x:totable()[i][j]) end end
    end
    h.assert_close(sk.kl_div(x, t, "batchmean"):item(), s / 2, 1e-12)
    h.assert_close(sk.kl_div(x, t, "sum"):item(), s, 1e-12)
    h.assert_close(sk.kl_div(x, t):item(), s / 6, 1e-12)
    h.assert_close(sk.kl_div(f64(-1), f64(0.5), "batchmean"):item(), 0.5 * (math.log(0.5) + 1), 1e-12) -- 0-dim: the sum
    local n = sk.kl_div(f64({ 1, 2 }), f64({ 0, 0 / 0 }), "none"):totable()
    assert.equal(0, n[1])
    assert.is_true(n[2] ~= n[2])
  end)

  it("gaussian_nll_loss takes var of input's shape, one dim short, or with a last dim of 1; clamps var to eps", function()
    local x, t = f64({ { 1, 2, 3 }, { 0, -1, 0.5 } }), f64({ { 0, 2, 2 }, { 1, 1, 1 } })
    local function want(v) -- v(i, j): the variance of element i, j
      local r = {}
      for i = 1, 2 do
        r[i] = {}
        for j = 1, 3 do
          local var, d = v(i, j), x:totable()[i][j] - t:totable()[i][j]
          r[i][j] = 0.5 * (math.log(var) + d * d / var)
        end
      end
      return r
    end
    local short = sk.gaussian_nll_loss(x, t, f64({ 2, 0.5 }), { reduction = "none" })
    h.assert_close(short:totable(), want(function(i) return ({ 2, 0.5 })[i] end), 1e-12)
    local last1 = sk.gaussian_nll_loss(x, t, f64({ { 2 }, { 0.5 } }), { reduction = "none" })
    h.assert_close(last1:totable(), short:totable(), 1e-12)
    local tiny = sk.gaussian_nll_loss(x, t, f64({ 0, 1e-9 }), { reduction = "none", eps = 1e-3 })
    h.assert_close(tiny:totable(), want(function() return 1e-3 end), 1e-12)
    -- the clamp leaves var's gradient alone (PyTorch clamps under no_grad): d/dv at v = eps
    local v = f64({ 0, 4 }):requires_grad_()
    sk.gaussian_nll_loss(f64({ 1, 1 }), f64({ 0, 0 }), v, { reduction = "sum", eps = 0.5 }):backward()
    h.assert_close(v.grad:totable(), { 0.5 * (1 / 0.5 - 1 / 0.25), 0.5 * (1 / 4 - 1 / 16) }, 1e-12)
    assert.matches("var is of incorrect size", h.err(sk.gaussian_nll_loss, x, t, f64({ 1, 2, 3 })), 1, true)
    assert.matches("var has negative entry/entries", h.err(sk.gaussian_nll_loss, x, t, f64({ 1, -2 })), 1, true)
  end)
end)
-- }====

-- {==== Class and pair losses ====
local XC = { { 0.1, -0.4, 0.9, 0.3 }, { 1.2, 0.2, -0.5, 0.6 }, { -0.3, 0.8, 0.75, 0 } }
local function reduce(per, red)
  if red == "none" then return per end
  local s = sum(per)
  return red == "sum" and s or s / #per
end

describe("class losses", function()
  it("multi_margin_loss: Σ_{i≠y} max(0, margin - x_y + x_i)^p · w_y / C, for p 1 and 2", function()
    local y, w = { 2, 0, 1 }, { 1, 0.5, 2, 3 }
    for _, p in ipairs({ 1, 2 }) do
      for _, weighted in ipairs({ false, true }) do
        local per = {}
        for n, row in ipairs(XC) do
          local s, yy = 0, y[n] + 1
          for i, v in ipairs(row) do
            if i ~= yy then s = s + math.max(0, 0.7 - row[yy] + v) ^ p * (weighted and w[yy] or 1) end
          end
          per[n] = s / 4
        end
        for _, red in ipairs({ "none", "sum", "mean" }) do
          local got = sk.multi_margin_loss(f64(XC), sk.tensor(y), { p = p, margin = 0.7, weight = weighted and f64(w) or nil, reduction = red })
          h.assert_close(red == "none" and got:totable() or got:item(), reduce(per, red), 1e-12)
        end
      end
    end
    -- one sample: [C] input and a 0-dim target give a 0-dim loss
    assert.same({}, sk.multi_margin_loss(f64(XC[1]), sk.tensor(2), { reduction = "none" }):shape())
  end)

  it("multilabel_margin_loss: the targets before the first -1 against every non-target class", function()
    local y = { { 2, 0, -1, 1 }, { 3, -1, 0, 0 }, { -1, 1, 2, 3 } }
    local per = {}
    for n, row in ipairs(XC) do
      local targets, is = {}, {}
      for _, v in ipairs(y[n]) do
        if v < 0 then break end
        targets[#targets + 1] = v + 1
        is[v + 1] = true
      end
      local s = 0
      for _, j in ipairs(targets) do
        for i, v in ipairs(row) do if not is[i] then s = s + math.max(0, 1 - (row[j] - v)) end end
      end
      per[n] = s / 4
    end
    for _, red in ipairs({ "none", "sum", "mean" }) do
      local got = sk.multilabel_margin_loss(f64(XC), sk.tensor(y), red)
      h.assert_close(red == "none" and got:totable() or got:item(), reduce(per, red), 1e-12)
    end
    h.assert_close(sk.multilabel_margin_loss(f64(XC[1]), sk.tensor(y[1]), "none"):item(), per[1], 1e-12)
  end)

  it("multilabel_soft_margin_loss: -(t logσ(x) + (1 - t) logσ(-x)) · w, the mean over classes", function()
    local t, w = { { 1, 0, 1, 0 }, { 0, 0, 1, 1 }, { 0.5, 1, 0, 0 } }, { 1, 2, 0.5, 1 }
    local per = {}
    for n, row in ipairs(XC) do
      local s = 0
      for i, v in ipairs(row) do s = s - w[i] * (t[n][i] * logsig(v) + (1 - t[n][i]) * logsig(-v)) end
      per[n] = s / 4
    end
    for _, red in ipairs({ "none", "sum", "mean" }) do
      local got = sk.multilabel_soft_margin_loss(f64(XC), f64(t), { weight = f64(w), reduction = red })
      h.assert_close(red == "none" and got:totable() or got:item(), reduce(per, red), 1e-12)
    end
  end)

  it("cosine_embedding_loss: 1 - cos for y = 1, max(0, cos - margin) for y = -1, over rows or one 1-D pair", function()
    local a, b, y = { { 1, 2, 0 }, { 0, 1, 1 }, { 3, -1, 2 } }, { { 2, 4, 0 }, { 1, 0, 0 }, { -1, 1, 1 } }, { 1, -1, -1 }
    local per = {}
    for n = 1, 3 do
      local d, na, nb = 0, 1e-12, 1e-12
      for i = 1, 3 do d, na, nb = d + a[n][i] * b[n][i], na + a[n][i] ^ 2, nb + b[n][i] ^ 2 end
      local cos = d / math.sqrt(na * nb)
      per[n] = y[n] == 1 and 1 - cos or math.max(0, cos + 0.2)
    end
    for _, red in ipairs({ "none", "sum", "mean" }) do
      local got = sk.cosine_embedding_loss(f64(a), f64(b), f64(y), -0.2, red)
      h.assert_close(red == "none" and got:totable() or got:item(), reduce(per, red), 1e-12)
    end
    h.assert_close(sk.cosine_embedding_loss(f64(a[3]), f64(b[3]), f64(-1), -0.2):item(), per[3], 1e-12)
  end)

  it("triplet_margin_loss: max(0, margin + d(a, p) - d(a, n)), d the p-norm of the difference + eps, swap", function()
    local A, Pp, N = { { 0, 0 }, { 1, 1 } }, { { 3, 4 }, { 1, 2 } }, { { 1, 0 }, { 1, 1.5 } }
    local function d(u, v, p) return (math.abs(u[1] - v[1] + 1e-6) ^ p + math.abs(u[2] - v[2] + 1e-6) ^ p) ^ (1 / p) end
    for _, swap in ipairs({ false, true }) do
      local per = {}
      for n = 1, 2 do
        local dn = d(A[n], N[n], 3)
        if swap then dn = math.min(dn, d(Pp[n], N[n], 3)) end
        per[n] = math.max(0, 1.5 + d(A[n], Pp[n], 3) - dn)
      end
      local got = sk.triplet_margin_loss(f64(A), f64(Pp), f64(N), { margin = 1.5, p = 3, swap = swap, reduction = "none" })
      h.assert_close(got:totable(), per, 1e-12)
    end
  end)
end)
-- }====

-- {==== Distances ====
describe("distances", function()
  local A = { { 0, 0, 1 }, { 3, 4, 0 }, { 1, -1, 2 } }
  local B = { { 1, 0, 0 }, { 0, 2, 2 } }
  local function dist(u, v, p, eps)
    eps = eps or 0
    if p == math.huge then
      local m = 0
      for i = 1, #u do m = math.max(m, math.abs(u[i] - v[i] + eps)) end
      return m
    end
    local s = 0
    for i = 1, #u do
      local e = math.abs(u[i] - v[i] + eps)
      s = s + (p == 0 and (e ~= 0 and 1 or 0) or e ^ p)
    end
    return p == 0 and s or s ^ (1 / p)
  end

  it("cosine_similarity: Σ x1 x2 / sqrt(max(Σ x1², eps²) max(Σ x2², eps²)) over dim, broadcasting", function()
    local want = {}
    for i = 1, 3 do
      local d, n1, n2 = 0, 0, 0
      for j = 1, 3 do d, n1, n2 = d + A[i][j] * B[1][j], n1 + A[i][j] ^ 2, n2 + B[1][j] ^ 2 end
      want[i] = d / math.sqrt(n1 * n2)
    end
    h.assert_close(sk.cosine_similarity(f64(A), f64({ B[1] })):totable(), want, 1e-12)
    h.assert_close(sk.cosine_similarity(f64(A):t(), f64({ B[1] }):t(), 0):totable(), want, 1e-12)
    -- tiny vectors: each squared norm is clamped to eps² separately
    h.assert_close(sk.cosine_similarity(f64({ { 1e-9, 0 } }), f64({ { 1e-9, 0 } })):totable(), { 0.01 }, 1e-12)
    assert.equal("float32", sk.cosine_similarity(sk.tensor({ { 1, 2 } }), sk.tensor({ { 1.5, 2 } })):dtype())
  end)

  it("pairwise_distance: the p-norm of x1 - x2 + eps over the last dim, for p 0, 1, 2, 3 and inf", function()
    for _, p in ipairs({ 0, 1, 2, 3, math.huge }) do
      local want = {}
      for i = 1, 3 do want[i] = dist(A[i], B[2], p, 1e-6) end
      h.assert_close(sk.pairwise_distance(f64(A), f64(B[2]), p):totable(), want, 1e-12)
    end
    assert.same({ 3, 1 }, sk.pairwise_distance(f64(A), f64(B[2]), { keepdim = true }):shape())
  end)

  it("pdist: the distances of the pairs i < j of rows, in order", function()
    for _, p in ipairs({ 0, 0.5, 1, 2, math.huge }) do
      h.assert_close(sk.pdist(f64(A), p):totable(), { dist(A[1], A[2], p), dist(A[1], A[3], p), dist(A[2], A[3], p) }, 1e-12)
    end
    assert.same({ 0 }, sk.pdist(f64({ { 1, 2 } })):shape())
  end)

  it("cdist: every row of x1 against every row of x2, batch dims broadcast; the matmul form for p = 2 agrees", function()
    for _, p in ipairs({ 0, 0.5, 1, 2, 3, math.huge }) do
      local want = {}
      for i = 1, 3 do want[i] = { dist(A[i], B[1], p), dist(A[i], B[2], p) } end
      h.assert_close(sk.cdist(f64(A), f64(B), p):totable(), want, 1e-12)
    end
    local x1, x2 = sk.randn({ 2, 30, 4 }, { dtype = "float64" }), sk.randn({ 5, 4 }, { dtype = "float64" })
    local direct = sk.cdist(x1, x2, 2, 2) -- never the matmul
    assert.same({ 2, 30, 5 }, direct:shape())
    h.assert_close(sk.cdist(x1, x2):totable(), direct:totable(), 1e-9) -- None: past 25 rows, the matmul
    h.assert_close(sk.cdist(x1, x2, 2, 1):totable(), direct:totable(), 1e-9)
    -- identical rows are at distance exactly 0 in the matmul form, with a zero gradient there
    local a = f64({ { 0.1, 0.2 }, { 3, 4 } }):requires_grad_()
    local d = sk.cdist(a, a, 2, 1)
    assert.same({ 0, 0 }, { d:totable()[1][1], d:totable()[2][2] })
    d:sum():backward()
    local g = 2 * (0.1 - 3) / dist({ 0.1, 0.2 }, { 3, 4 }, 2)
    h.assert_close(a.grad:totable()[1][1], g, 1e-9)
  end)
end)
-- }====

-- {==== ctc_loss against the sum over every alignment ====
-- The alignments of length T over C classes that collapse (merge repeats, drop blanks) to the target.
local function ctc_brute(lp, T, C, target, blank)
  local total, path = 0, {}
  local function rec(t)
    if t > T then
      local out, prev = {}, nil
      for i = 1, T do
        local k = path[i]
        if k ~= prev and k ~= blank then out[#out + 1] = k end
        prev = k
      end
      if #out ~= #target then return end
      for i = 1, #out do if out[i] ~= target[i] then return end end
      local p = 1
      for i = 1, T do p = p * math.exp(lp[i][path[i] + 1]) end
      total = total + p
      return
    end
    for k = 0, C - 1 do
      path[t] = k
      rec(t + 1)
    end
  end
  rec(1)
  return -math.log(total)
end

describe("ctc_loss", function()
  -- log_probs [T = 5, N = 3, C = 4]
  local LP = (sk.arange(60, { dtype = "float64" }):reshape({ 5, 3, 4 }):sin() * 2):log_softmax(2)
  local TARGETS = { { 1, 2, 2 }, { 3, 1 }, {} } -- a repeat (needs a blank between), and an empty target
  local IL = { 5, 4, 3 }
  local function brute(b, blank)
    local rows = {}
    for t = 1, IL[b] do rows[t] = LP:select(1, b - 1):totable()[t] end
    return ctc_brute(rows, IL[b], 4, TARGETS[b], blank or 0)
  end

  it("equals -log Σ over the alignments, for padded 2-D and concatenated 1-D targets and tensor lengths", function()
    local want = { brute(1), brute(2), brute(3) }
    local padded = sk.tensor({ { 1, 2, 2 }, { 3, 1, 0 }, { 0, 0, 0 } })
    h.assert_close(sk.ctc_loss(LP, padded, IL, { 3, 2, 0 }, { reduction = "none" }):totable(), want, 1e-10)
    h.assert_close(sk.ctc_loss(LP, sk.tensor({ 1, 2, 2, 3, 1 }), IL, { 3, 2, 0 }, { reduction = "none" }):totable(), want, 1e-10)
    h.assert_close(sk.ctc_loss(LP, padded:to("int32"), sk.tensor(IL), sk.tensor({ 3, 2, 0 }, { dtype = "int32" }),
                               { reduction = "none" }):totable(), want, 1e-10)
    -- mean divides by the target lengths (at least 1), then averages
    h.assert_close(sk.ctc_loss(LP, padded, IL, { 3, 2, 0 }):item(), (want[1] / 3 + want[2] / 2 + want[3]) / 3, 1e-10)
    h.assert_close(sk.ctc_loss(LP, padded, IL, { 3, 2, 0 }, { reduction = "sum" }):item(), sum(want), 1e-10)
    -- float32
    local f = sk.ctc_loss(LP:to("float32"), padded, IL, { 3, 2, 0 }, { reduction = "none" })
    assert.equal("float32", f:dtype())
    h.assert_close(f:totable(), want, 1e-5)
  end)

  it("takes an unbatched (T, C) input with a 1-D target, another blank, and gives inf (or 0) when T is too short", function()
    local lp = LP:select(1, 0)
    local y = sk.ctc_loss(lp, sk.tensor({ 1, 2, 2 }), { 5 }, { 3 }, { reduction = "none" })
    assert.same({}, y:shape())
    h.assert_close(y:item(), brute(1), 1e-10)
    h.assert_close(sk.ctc_loss(lp, sk.tensor({ 1, 2, 2 }), sk.tensor(5), sk.tensor(3), { reduction = "none" }):item(), brute(1), 1e-10)
    local rows = lp:totable()
    h.assert_close(sk.ctc_loss(lp, sk.tensor({ 0, 2 }), { 5 }, { 2 }, { blank = 3, reduction = "none" }):item(),
                   ctc_brute(rows, 5, 4, { 0, 2 }, 3), 1e-10)
    -- 1, 2, 2 needs 4 steps
    assert.equal(math.huge, sk.ctc_loss(lp, sk.tensor({ 1, 2, 2 }), { 3 }, { 3 }, { reduction = "none" }):item())
    assert.equal(0, sk.ctc_loss(lp, sk.tensor({ 1, 2, 2 }), { 3 }, { 3 }, { reduction = "none", zero_infinity = true }):item())
    -- an empty input and an empty target: probability 1
    assert.equal(0, sk.ctc_loss(lp, sk.zeros({ 0 }, { dtype = "int64" }), { 0 }, { 0 }, { reduction = "sum" }):item())
  end)

  it("has PyTorch's gradient: through log_softmax it matches the alignment sum's finite differences", function()
    local x = sk.tensor(LP:totable(), { dtype = "float64" }):requires_grad_()
    local tg, tl = sk.tensor({ { 1, 2, 2 }, { 3, 1, 0 }, { 0, 0, 0 } }), { 3, 2, 0 }
    sk.ctc_loss(sk.log_softmax(x, 2), tg, IL, tl, { reduction = "sum" }):backward()
    -- d/dx[t, b, k] of -log Σ, by central differences of the brute force
    local g = x.grad:totable()
    for _, e in ipairs({ { 1, 1, 2 }, { 3, 1, 3 }, { 2, 2, 4 }, { 3, 3, 1 }, { 5, 2, 1 } }) do
      local t, b, k = e[1], e[2], e[3]
      local function at(delta)
        local v = x:detach():clone()
        v[t - 1][b - 1][k - 1] = v[t - 1][b - 1][k - 1]:item() + delta
        local rows = sk.log_softmax(v, 2):select(1, b - 1):totable()
        for i = IL[b] + 1, 5 do rows[i] = nil end
        return ctc_brute(rows, IL[b], 4, TARGETS[b], 0)
      end
      h.assert_close(g[t][b][k], (at(1e-6) - at(-1e-6)) / 2e-6, 1e-5)
    end
    -- past an input's length the gradient is 0; zero_infinity zeroes an infinite sample's
    assert.same({ 0, 0, 0, 0 }, g[5][2])
    local z = sk.tensor(LP:totable(), { dtype = "float64" }):requires_grad_()
    sk.ctc_loss(z, tg, { 2, 4, 3 }, tl, { reduction = "sum", zero_infinity = true }):backward()
    assert.same({ 0, 0, 0, 0 }, z.grad:totable()[1][1])
  end)

  it("checks its arguments with PyTorch's messages", function()
    local tg = sk.tensor({ { 1, 2, 2 }, { 3, 1, 0 }, { 0, 0, 0 } })
    local cases = {
      { "Expected input_lengths to have value at most 5, but got value 6 (while checking arguments for ctc_loss_cpu)", tg, { 6, 4, 3 }, { 3, 2, 0 } },
      { "Expected tensor to have size at least 4 at dimension 1, but got size 3 for argument #2 'targets'", tg, IL, { 4, 2, 0 } },
      { "Expected tensor to have size 6 at dimension 0, but got size 5 for argument #2 'targets'", sk.tensor({ 1, 2, 2, 3, 1 }), IL, { 3, 3, 0 } },
      { "input_lengths must be of size batch_size", tg, { 5, 4 }, { 3, 2, 0 } },
      { "target_lengths must be of size batch_size", tg, IL, { 3, 2 } },
      { "ctc_loss: argument 'target_lengths' must be non-negative, got -1 for batch entry 1", tg, IL, { 3, -1, 0 } },
      { "target 7 of batch entry 1 is out of range for 4 classes", sk.tensor({ { 1, 2, 2 }, { 3, 7, 0 }, { 0, 0, 0 } }), IL, { 3, 2, 0 } },
    }
    for _, c in ipairs(cases) do
      assert.matches(c[1], h.err(sk.ctc_loss, LP, c[2], c[3], c[4]), 1, true)
    end
    assert.matches("blank must be in label range", h.err(sk.ctc_loss, LP, tg, IL, { 3, 2, 0 }, { blank = 4 }), 1, true)
    assert.matches("\"ctc_loss_cpu\" not implemented for 'Int'", h.err(sk.ctc_loss, LP:to("int32"), tg, IL, { 3, 2, 0 }), 1, true)
    assert.matches("input_lengths must be integral", h.err(sk.ctc_loss, LP, tg, f64(IL), sk.tensor({ 3, 2, 0 })), 1, true)
    assert.matches("not a valid value for reduction", h.err(sk.ctc_loss, LP, tg, IL, { 3, 2, 0 }, { reduction = "bogus" }), 1, true)
  end)

  it("gives _ctc_loss's shapes on Meta: the losses [N] and log_alpha [N, T, 2·max target + 1]", function()
    local lp = h.meta({ 5, 3, 4 }, "float32")
    local nll, alpha = sk._ctc_loss(lp, h.meta({ 3, 3 }, "int64"), IL, { 3, 2, 0 })
    assert.same({ 3 }, nll:shape())
    assert.same({ 3, 5, 7 }, alpha:shape())
    assert.equal("meta", sk.ctc_loss(lp, h.meta({ 3, 3 }, "int64"), IL, { 3, 2, 0 }):device())
    assert.same({ 5, 3, 4 }, sk._ctc_loss_backward(h.meta({ 3 }, "float32"), lp, h.meta({ 3, 3 }, "int64"), IL, { 3, 2, 0 },
                                                   nll, alpha, 0):shape())
  end)
end)
-- }====

-- {==== Dtypes, Meta shapes, errors ====
describe("losses on Meta tensors", function()
  it("give the CPU's shapes and dtypes", function()
    -- a tensor of shape and dtype (float32 by default): int64 class indices 0, floats in (0.25, 0.75)
    local function make(dev)
      return function(shape, dtype)
        dtype = dtype or "float32"
        if dev == "meta" then return h.meta(shape, dtype) end
        if dtype == "int64" then return sk.zeros(shape, { dtype = "int64" }) end
        return sk.rand(shape, { dtype = dtype }) * 0.5 + 0.25
      end
    end
    local cases = {
      { "bce", function(m) return sk.binary_cross_entropy(m({ 2, 3 }), m({ 2, 3 }), { reduction = "none" }) end },
      { "bce logits", function(m) return sk.binary_cross_entropy_with_logits(m({ 2, 3 }), m({ 2, 3 }), { pos_weight = m({ 3 }) }) end },
      { "l1", function(m) return sk.l1_loss(m({ 2, 3 }), m({ 3 }), "none") end },
      { "huber", function(m) return sk.huber_loss(m({ 2, 3 }, "float64"), m({ 2, 3 }, "float64")) end },
      { "kl_div", function(m) return sk.kl_div(m({ 4, 3 }), m({ 4, 3 }), "batchmean") end },
      { "poisson", function(m) return sk.poisson_nll_loss(m({ 2, 3 }), m({ 2, 3 }), { reduction = "none" }) end },
      { "gaussian", function(m) return sk.gaussian_nll_loss(m({ 2, 3 }), m({ 2, 3 }), m({ 2 }), { reduction = "none" }) end },
      { "margin ranking", function(m) return sk.margin_ranking_loss(m({ 4 }), m({ 4 }), m({ 4 }), 0, "none") end },
      { "multi margin", function(m) return sk.multi_margin_loss(m({ 4, 3 }), m({ 4 }, "int64"), { reduction = "none" }) end },
      { "multilabel margin", function(m) return sk.multilabel_margin_loss(m({ 4, 3 }), m({ 4, 3 }, "int64"), "none") end },
      { "multilabel soft", function(m) return sk.multilabel_soft_margin_loss(m({ 4, 3 }), m({ 4, 3 }), { reduction = "none" }) end },
      { "cosine embedding", function(m) return sk.cosine_embedding_loss(m({ 4, 3 }), m({ 4, 3 }), m({ 4 }), 0, "none") end },
      { "triplet", function(m) return sk.triplet_margin_loss(m({ 4, 3 }), m({ 4, 3 }), m({ 4, 3 }), { reduction = "none" }) end },
      { "cosine similarity", function(m) return sk.cosine_similarity(m({ 4, 3 }), m({ 3 }), -1) end },
      { "pairwise", function(m) return sk.pairwise_distance(m({ 4, 3 }), m({ 4, 3 }), 2, 1e-6, true) end },
      { "pdist", function(m) return sk.pdist(m({ 5, 3 }, "float64")) end },
      { "cdist", function(m) return sk.cdist(m({ 2, 30, 3 }), m({ 7, 3 })) end },
      { "cdist p=1", function(m) return sk.cdist(m({ 4, 3 }), m({ 2, 7, 3 }), 1) end },
    }
    h.assert_meta_like_cpu(cases, make("cpu"), make("meta"))
  end)
end)

describe("loss errors", function()
  local x = sk.tensor({ { 0.2, 0.5, 0.7 }, { 0.1, 0.9, 0.4 } })
  local CASES = {
    { "Using a target size ([2, 1]) that is different to the input size ([2, 3]) is deprecated. Please ensure they have the same size.",
      sk.binary_cross_entropy, x, sk.rand({ 2, 1 }) },
    { "all elements of input should be between 0 and 1", sk.binary_cross_entropy, x * 2, x },
    { "all elements of input should be between 0 and 1", sk.binary_cross_entropy, sk.tensor({ 0 / 0 }), sk.tensor({ 1.0 }) },
    { "Found dtype Double but expected Float", sk.binary_cross_entropy, x, x:double() },
    { "\"binary_cross_entropy\" not implemented for 'Long'", sk.binary_cross_entropy, sk.tensor({ 0, 1 }), sk.tensor({ 1, 0 }) },
    { "\"binary_cross_entropy\" not implemented for 'Half'", sk.binary_cross_entropy, x:half(), x:half() },
    { "Target size ([2, 1]) must be the same as input size ([2, 3])", sk.binary_cross_entropy_with_logits, x, sk.rand({ 2, 1 }) },
    { "not a valid value for reduction", sk.l1_loss, x, x, "bogus" },
    { "mean(): could not infer output dtype", sk.l1_loss, sk.tensor({ 1, 2 }), sk.tensor({ 2, 2 }) },
    { "smooth_l1_loss does not support negative values for beta.", sk.smooth_l1_loss, x, x, { beta = -1 } },
    { "huber_loss does not support non-positive values for delta.", sk.huber_loss, x, x, { delta = 0 } },
    { "\"huber_cpu\" not implemented for 'Int'", sk.huber_loss, x:int(), x:int() },
    { "\"smooth_l1_cpu\" not implemented for 'Long'", sk.smooth_l1_loss, sk.tensor({ 1 }), sk.tensor({ 2 }) },
    { "kl_div: Integral inputs not supported.", sk.kl_div, x, sk.tensor({ 1, 0, 1 }) },
    { "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: [3], input2: [3], target: [1, 3]",
      sk.margin_ranking_loss, x[0], x[1], sk.ones({ 1, 3 }) },
    { "only p == 1 and p == 2 supported", sk.multi_margin_loss, x, sk.tensor({ 0, 1 }), { p = 3 } },
    { "inconsistent target size, got: [3]", sk.multi_margin_loss, x, sk.tensor({ 0, 1, 1 }) },
    { "target out of range", sk.multi_margin_loss, x, sk.tensor({ 0, 3 }) },
    { "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 0]", sk.multi_margin_loss, sk.rand({ 2, 0 }), sk.tensor({ 0, 1 }) },
    { "inconsistent weight size, expected 3 but got [2]", sk.multi_margin_loss, x, sk.tensor({ 0, 1 }), { weight = sk.ones({ 2 }) } },
    { "\"multi_margin_loss_cpu_kernel\" not implemented for 'Int'", sk.multi_margin_loss, x:int(), sk.tensor({ 0, 1 }) },
    { "expected scalar type Long but found Int", sk.multi_margin_loss, x, sk.tensor({ 0, 1 }, { dtype = "int32" }) },
    { "inconsistent size [2] for argument #2 'target'", sk.multilabel_margin_loss, x, sk.tensor({ 0, 1 }) },
    { "argument #2 'target' is out of range", sk.multilabel_margin_loss, x, sk.tensor({ { 0, 3, -1 }, { 1, -1, 0 } }) },
    { "argument #2 'target' is out of range", sk.multilabel_margin_loss, x, sk.tensor({ { 0, -2, 1 }, { 1, -1, 0 } }) },
    { "\"multilabel_margin_loss_forward_out_frame\" not implemented for 'Int'", sk.multilabel_margin_loss, x:int(), sk.tensor({ { 0, 1, -1 }, { 1, -1, 0 } }) },
    { "1D target tensor expects 2D input tensors, but found inputs with sizes [3] and [3].", sk.cosine_embedding_loss, x[0], x[1], sk.ones({ 1 }) },
    { "0D target tensor expects 1D input tensors, but found inputs with sizes [2, 3] and [2, 3].", sk.cosine_embedding_loss, x, x, sk.tensor(1.0) },
    { "0D or 1D target tensor expected, multi-target not supported", sk.cosine_embedding_loss, x, x, sk.ones({ 2, 1 }) },
    { "All inputs should have same dimension but got 2D, 2D and 1D inputs.", sk.triplet_margin_loss, x, x, x[0] },
    { "expected common dtype to be floating point, yet common dtype is Long", sk.cosine_similarity, sk.tensor({ { 1 } }), sk.tensor({ { 2 } }) },
    { "pdist only supports 2D tensors, got: 1D", sk.pdist, x[0] },
    { "pdist only supports floating-point dtypes", sk.pdist, sk.tensor({ { 1, 2 } }) },
    { "pdist only supports non-negative p values", sk.pdist, x, -1 },
    { "cdist only supports at least 2D tensors, X1 got: 1D", sk.cdist, x[0], x },
    { "X1 and X2 must have the same number of columns. X1: 3 X2: 2", sk.cdist, x, sk.rand({ 2, 2 }) },
    { "cdist only supports floating-point dtypes, X1 got: Int", sk.cdist, x:int(), x:int() },
    { "expected scalar type Float but found Double", sk.cdist, x, x:double() },
    { "cdist only supports non-negative p values", sk.cdist, x, x, -1 },
    { "possible modes: 0, 1, 2, but was: 5", sk.cdist, x, x, 2, 5 },
    { "\"cdist\" not implemented for 'Half'", sk.cdist, x:half(), x:half() },
  }
  for _, c in ipairs(CASES) do
    it("raises: " .. c[1], function()
      assert.matches(c[1], h.err(c[2], table.unpack(c, 3)), 1, true)
    end)
  end
end)
-- }====

-- {==== nn modules ====
describe("loss modules", function()
  local nn = sk.nn
  local x, t = sk.tensor({ { 0.2, 0.5, 0.7 }, { 0.1, 0.9, 0.4 } }), sk.tensor({ { 0, 1, 1 }, { 1, 0, 0.5 } })
  local s = sk.tensor({ { 1, -1, 1 }, { -1, -1, 1 } })
  local MODULES = {
    { nn.BCELoss { weight = sk.tensor({ 1, 2, 3.0 }) }, function() return sk.binary_cross_entropy(x, t, { weight = sk.tensor({ 1, 2, 3.0 }) }) end, { x, t } },
    { nn.BCEWithLogitsLoss { pos_weight = sk.tensor({ 2.0, 1, 1 }), reduction = "sum" },
      function() return sk.binary_cross_entropy_with_logits(x, t, { pos_weight = sk.tensor({ 2.0, 1, 1 }), reduction = "sum" }) end, { x, t } },
    { nn.L1Loss(), function() return sk.l1_loss(x, t) end, { x, t } },
    { nn.SmoothL1Loss { beta = 0.3 }, function() return sk.smooth_l1_loss(x, t, { beta = 0.3 }) end, { x, t } },
    { nn.HuberLoss { delta = 0.3 }, function() return sk.huber_loss(x, t, { delta = 0.3 }) end, { x, t } },
    { nn.KLDivLoss { reduction = "batchmean" }, function() return sk.kl_div(x, t, "batchmean") end, { x, t } },
    { nn.PoissonNLLLoss { log_input = false }, function() return sk.poisson_nll_loss(x, t, false) end, { x, t } },
    { nn.GaussianNLLLoss(), function() return sk.gaussian_nll_loss(x, t, x) end, { x, t, x } },
    { nn.MarginRankingLoss { margin = 0.1 }, function() return sk.margin_ranking_loss(x, t, s, 0.1) end, { x, t, s } },
    { nn.HingeEmbeddingLoss(), function() return sk.hinge_embedding_loss(x, s) end, { x, s } },
    { nn.SoftMarginLoss(), function() return sk.soft_margin_loss(x, s) end, { x, s } },
    { nn.MultiLabelSoftMarginLoss(), function() return sk.multilabel_soft_margin_loss(x, t) end, { x, t } },
    { nn.MultiMarginLoss { p = 2 }, function() return sk.multi_margin_loss(x, sk.tensor({ 1, 2 }), { p = 2 }) end, { x, sk.tensor({ 1, 2 }) } },
    { nn.MultiLabelMarginLoss(), function() return sk.multilabel_margin_loss(x, sk.tensor({ { 1, -1, 0 }, { 2, 0, -1 } })) end,
      { x, sk.tensor({ { 1, -1, 0 }, { 2, 0, -1 } }) } },
    { nn.CosineEmbeddingLoss(), function() return sk.cosine_embedding_loss(x, t, sk.tensor({ 1, -1 })) end, { x, t, sk.tensor({ 1, -1 }) } },
    { nn.TripletMarginLoss { margin = 2 }, function() return sk.triplet_margin_loss(x, t, s, { margin = 2 }) end, { x, t, s } },
    { nn.CosineSimilarity { dim = 0 }, function() return sk.cosine_similarity(x, t, 0) end, { x, t } },
    { nn.PairwiseDistance { p = 1 }, function() return sk.pairwise_distance(x, t, 1) end, { x, t } },
    { nn.CTCLoss { reduction = "sum" }, function() return sk.ctc_loss(x:log_softmax(1):reshape({ 2, 1, 3 }), sk.tensor({ { 1 } }), { 2 }, { 1 }, { reduction = "sum" }) end,
      { x:log_softmax(1):reshape({ 2, 1, 3 }), sk.tensor({ { 1 } }), { 2 }, { 1 } } },
  }
  for _, m in ipairs(MODULES) do
    it(m[1]._name .. " computes its functional with the options it was made with", function()
      assert.same(m[2]():totable(), m[1](table.unpack(m[3])):totable())
    end)
  end
  it("keep PyTorch's defaults as fields", function()
    local m = nn.TripletMarginLoss()
    assert.same({ 1, 2, 1e-6, false, "mean" }, { m.margin, m.p, m.eps, m.swap, m.reduction })
    assert.equal(-100, nn.CrossEntropyLoss().ignore_index)
    assert.same({ 0, false }, { nn.CTCLoss().blank, nn.CTCLoss().zero_infinity })
  end)
end)
-- }====

-- {==== Lengths and counts at the int64 limits: an error naming the argument, never a wrapped sum ====
describe("ctc_loss and pdist at the int64 limits", function()
  local MAX, MIN = math.maxinteger, math.mininteger
  local lp = sk.log_softmax(sk.zeros({ 5, 2, 3 }), 2)
  local padded, flat = sk.tensor({ { 1, 2 }, { 1, 1 } }), sk.tensor({ 1, 2, 1 })

  it("checks every length against its bounds before adding it to anything", function()
    local cases = {
      -- the concatenated targets' offsets are the running sum of target_lengths: MAX + 1 wrapped to
      -- MIN (PyTorch 1.13's message then reads "Expected tensor to have size -9223372036854775808")
      { "ctc_loss: argument 'target_lengths' sums past the int64 range at batch entry 1 (1), but 'targets' has 3 elements",
        flat, { 5, 5 }, { MAX, 1 } },
      { "ctc_loss: argument 'target_lengths' sums past the int64 range at batch entry 1 (4611686018427387904)",
        flat, { 5, 5 }, { 1 << 62, 1 << 62 } },
      { "Expected tensor to have size at least 9223372036854775807 at dimension 1, but got size 2 for argument #2 'targets'",
        padded, { 5, 5 }, { MAX, 1 } },
      { "Expected input_lengths to have value at most 5, but got value 9223372036854775807", padded, { MAX, 5 }, { 1, 1 } },
      { "ctc_loss: argument 'input_lengths' must be non-negative, got -9223372036854775808 for batch entry 0",
        padded, { MIN, 5 }, { 1, 1 } },
      { "ctc_loss: argument 'target_lengths' must be non-negative, got -9223372036854775808 for batch entry 1",
        flat, { 5, 5 }, { 1, MIN } },
    }
    for _, c in ipairs(cases) do
      assert.matches(c[1], h.err(sk.ctc_loss, lp, c[2], c[3], c[4]), 1, true)
    end
    -- the longest target sizes log_alpha [N, T, 2·max + 1]: an expanded Meta targets reaches MAX
    local tg = sk.empty({ 1, 1 }, { device = "meta", dtype = "int64" }):expand(1, MAX)
    local mlp = sk.empty({ 5, 1, 3 }, { device = "meta" })
    assert.matches("ctc_loss: argument 'target_lengths': the longest target (9223372036854775807) is too long for log_alpha",
                   h.err(sk._ctc_loss, mlp, tg, { 5 }, { MAX }), 1, true)
    local _, alpha = sk._ctc_loss(mlp, tg, { 5 }, { 1 << 40 })
    assert.same({ 1, 5, (1 << 41) + 1 }, alpha:shape())
  end)

  it("pdist counts the pairs of an expanded input in checked arithmetic", function()
    -- n·(n - 1)/2 for n = 2^62 rows is past int64: it was computed wrapped and the index
    -- arrays written past a short allocation
    for _, n in ipairs({ 1 << 33, 1 << 62, MAX }) do
      assert.matches("pdist: the pairs of " .. n .. " rows are more than memory can hold",
                     h.err(sk.pdist, sk.ones(1, 1):expand(n, 1)), 1, true)
    end
    h.assert_close({ 5, 10, 5 }, sk.pdist(f64({ { 0, 0 }, { 3, 4 }, { 6, 8 } })):totable(), 1e-6)
  end)
end)
-- }====
