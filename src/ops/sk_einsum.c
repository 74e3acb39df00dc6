/*
** sk_einsum.c — einsum: PyTorch's equation language over permute, diagonal, sum, mul and bmm.
** Every operand is brought to one layout of N dims (the output's subscripts in output order,
** then the contracted ones), size 1 where it lacks a subscript. A dim "is in" an operand when
** its size there is not 1 (size-1 dims broadcast). Dims only one operand has and nothing later
** needs are summed in that operand first; a pair is contracted with one bmm (batch: in both
** and kept; left/right: in one; summed: in both and needed by nobody else) or, with nothing
** to sum, one mul. The pair order is the `path` argument (opt_einsum's format) or the order
** of least multiply-adds: exact over subsets up to 8 operands, greedy past that.
*/
#include "sk_kernels.h"
#include "sk_composite_util.h"
#include "sk_checked.h"

#include <math.h>
#include <string.h>

enum { NLETTER = 52, MAXLAB = NLETTER + SK_MAX_DIMS, EXACT_MAX = 8 };

static int label_of(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : -1; }
static char letter_of(int l) { return (char)(l < 26 ? 'A' + l : 'a' + l - 26); }

/* {==== The equation ==== */
typedef struct {
  int n;                          /* operands */
  int8_t (*sub)[SK_MAX_DIMS];     /* per operand, per dim: label id */
  int E;                          /* ellipsis dims (the widest operand's) */
  int nout, out[MAXLAB];          /* output labels in order */
  int pos[MAXLAB], N;             /* label -> layout position; number of positions */
  int64_t size[MAXLAB];           /* broadcast size per label */
} Eq;

/* One operand's (or the output's, op < 0) subscripts, eq[from..to): its letters in lab, the
** ellipsis position among them in *ell (-1 none). */
static int parse_term(const char *eq, size_t from, size_t to, int op, int lab[], int *nlab, int *ell) {
  *nlab = 0, *ell = -1;
  char who[32];
  if (op < 0) snprintf(who, sizeof who, "output");
  else snprintf(who, sizeof who, "operand %d", op);
  for (size_t i = from; i < to; i++) {
    char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (*ell >= 0) return sk_error("einsum(): found '.' for %s for which an ellipsis was already found", who);
      if (i + 2 >= to || eq[i + 1] != '.' || eq[i + 2] != '.')
        return sk_error("einsum(): found '.' for %s that is not part of any ellipsis%s", who, op < 0 ? " (...)" : "");
      *ell = *nlab, i += 2;
      continue;
    }
    int l = label_of(c);
    if (l < 0) return sk_error("einsum(): invalid subscript given at index %zu in the equation string, subscripts must be in [a-zA-Z]", i);
    if (*nlab == SK_MAX_DIMS) return sk_error("einsum(): %s has more than %d subscripts (sk's tensors have at most %d dimensions)", who, SK_MAX_DIMS, SK_MAX_DIMS);
    lab[(*nlab)++] = l;
  }
  return 0;
}

static int parse(const char *eq, SkTensorList ts, Eq *e) {
  if (!eq) return sk_error("einsum(): argument 'equation' must be a string");
  if (ts.n == 0) return sk_error("einsum(): must provide at least one operand");
  for (int i = 0; i < ts.n; i++)
    if (!ts.data[i]) return sk_error("einsum(): argument 'tensors' has no tensor at position %d", i);
  size_t len = strlen(eq), arrow = len;
  for (size_t i = 0; i < len; i++)
    if (eq[i] == '-') {
      if (arrow != len || i + 1 >= len || eq[i + 1] != '>')
        return sk_error("einsum(): invalid subscript given at index %zu in the equation string, subscripts must be in [a-zA-Z]", i);
      arrow = i;
    }
  for (size_t i = arrow; i < len; i++)
    if (eq[i] == ',') return sk_error("einsum(): invalid subscript given at index %zu in the equation string, subscripts must be in [a-zA-Z]", i);
  int nterms = 1;
  for (size_t i = 0; i < arrow; i++) nterms += eq[i] == ',';
  if (ts.n > nterms) return sk_error("einsum(): more operands were provided than specified in the equation");
  if (ts.n < nterms) return sk_error("einsum(): fewer operands were provided than specified in the equation");

  int count[MAXLAB] = {0}, in_out[MAXLAB] = {0};
  for (int l = 0; l < MAXLAB; l++) e->size[l] = 1, e->pos[l] = -1;
  e->E = 0;
  size_t from = 0;
  for (int k = 0; k < ts.n; k++) {
    size_t to = from;
    while (to < arrow && eq[to] != ',') to++;
    int lab[SK_MAX_DIMS], nl, ell;
    if (parse_term(eq, from, to, k, lab, &nl, &ell)) return -1;
    const SkTensor *t = ts.data[k];
    if (ell < 0 && nl != t->ndim)
      return sk_error("einsum(): the number of subscripts in the equation (%d) does not match the number of dimensions (%d) "
                      "for operand %d and no ellipsis was given", nl, t->ndim, k);
    if (ell >= 0 && nl > t->ndim)
      return sk_error("einsum(): the number of subscripts in the equation (%d) is more than the number of dimensions (%d) "
                      "for operand %d", nl, t->ndim, k);
    int ne = t->ndim - nl; /* the operand's ellipsis dims, right-aligned among the E */
    if (ell >= 0 && ne > e->E) e->E = ne;
    for (int d = 0, j = 0; d < t->ndim; d++) {
      int l = ell >= 0 && d >= ell && d < ell + ne ? -1 - (d - ell) : lab[j++];
      e->sub[k][d] = (int8_t)l; /* ellipsis dims: -1 - index within this operand's ellipsis; fixed below */
      if (l >= 0) count[l]++;
    }
    from = to + 1;
  }
  if (e->E + NLETTER > MAXLAB) return sk_error("einsum(): internal: too many ellipsis dims");
  /* ellipsis dims become labels NLETTER.., right-aligned; check the sizes */
  for (int k = 0; k < ts.n; k++) {
    const SkTensor *t = ts.data[k];
    int ne = 0;
    for (int d = 0; d < t->ndim; d++) ne += e->sub[k][d] < 0;
    for (int d = 0; d < t->ndim; d++) {
      int l = e->sub[k][d];
      if (l < 0) e->sub[k][d] = (int8_t)(l = NLETTER + e->E - ne + (-1 - l));
      int64_t s = t->sizes[d];
      for (int d2 = 0; d2 < d; d2++)
        if (e->sub[k][d2] == l && t->sizes[d2] != s)
          return sk_error("einsum(): subscript %c is repeated for operand %d but the sizes don't match, %lld != %lld",
                          letter_of(l), k, (long long)t->sizes[d2], (long long)s);
      if (s == 1) continue;
      if (e->size[l] != 1 && e->size[l] != s) {
        if (l < NLETTER)
          return sk_error("einsum(): subscript %c has size %lld for operand %d which does not broadcast with previously seen size %lld",
                          letter_of(l), (long long)s, k, (long long)e->size[l]);
        return sk_error("einsum(): dimension %d covered by ellipsis in operand %d has size %lld which does not broadcast with "
                        "previously seen ellipsis with size %lld for the respective dimension", d, k, (long long)s, (long long)e->size[l]);
      }
      e->size[l] = s;
    }
  }
  /* the output */
  e->nout = 0;
  if (arrow < len) {
    int lab[SK_MAX_DIMS], nl, ell;
    if (parse_term(eq, arrow + 2, len, -1, lab, &nl, &ell)) return -1;
    for (int j = 0; j <= nl; j++) {
      if (j == ell)
        for (int x = 0; x < e->E; x++) e->out[e->nout++] = NLETTER + x, in_out[NLETTER + x] = 1;
      if (j == nl) break;
      int l = lab[j];
      if (in_out[l]) return sk_error("einsum(): output subscript %c appears more than once in the output", letter_of(l));
      if (!count[l]) return sk_error("einsum(): output subscript %c does not appear in the equation for any input operand", letter_of(l));
      in_out[l] = 1, e->out[e->nout++] = l;
    }
  } else { /* implicit: the ellipsis dims, then the letters used exactly once, A..Z a..z */
    for (int x = 0; x < e->E; x++) e->out[e->nout++] = NLETTER + x, in_out[NLETTER + x] = 1;
    for (int l = 0; l < NLETTER; l++)
      if (count[l] == 1) in_out[l] = 1, e->out[e->nout++] = l;
  }
  e->N = 0;
  for (int j = 0; j < e->nout; j++) e->pos[e->out[j]] = e->N++;
  for (int l = 0; l < NLETTER + e->E; l++)
    if (!in_out[l] && (l >= NLETTER || count[l])) e->pos[l] = e->N++;
  if (e->N > SK_MAX_DIMS)
    return sk_error("einsum(): the equation has %d distinct subscripts (ellipsis dims included); sk's tensors have at most %d dimensions",
                    e->N, SK_MAX_DIMS);
  return 0;
}
/* }==== */

/* {==== Steps on owned tensors ==== */
/* *t becomes the result of a call that stored into r; the old *t is released */
#define STEP(t, call)                         \
  do {                                        \
    SkTensor *r = NULL;                       \
    if (call) return -1;                      \
    sk_tensor_release(*(t));                  \
    *(t) = r;                                 \
  } while (0)

/* operand k of ts in the layout: diagonals for repeated subscripts, permuted, size-1 dims added */
static int prepare(const Eq *e, int k, const SkTensor *src, SkDType dt, SkTensor **out) {
  SkTensor **t = out;
  *t = sk_tensor_retain((SkTensor *)src);
  if (src->dtype != dt) STEP(t, sk_to_dtype(&r, *t, dt, 0, 0, -1));
  int cur[SK_MAX_DIMS], n = src->ndim;
  for (int d = 0; d < n; d++) cur[d] = e->sub[k][d];
  for (;;) { /* a repeated subscript: its diagonal, which diagonal puts last */
    int p = -1, q = -1;
    for (int i = 0; i < n && p < 0; i++)
      for (int j = i + 1; j < n; j++)
        if (cur[i] == cur[j]) { p = i, q = j; break; }
    if (p < 0) break;
    STEP(t, sk_diagonal(&r, *t, 0, p, q));
    int l = cur[p], m = 0;
    for (int i = 0; i < n; i++)
      if (i != p && i != q) cur[m++] = cur[i];
    cur[m++] = l, n = m;
  }
  int64_t perm[SK_MAX_DIMS], sizes[SK_MAX_DIMS];
  int m = 0;
  for (int g = 0; g < e->N; g++) sizes[g] = 1;
  for (int g = 0; g < e->N; g++)
    for (int i = 0; i < n; i++)
      if (e->pos[cur[i]] == g) perm[m++] = i, sizes[g] = (*t)->sizes[i];
  if (n) STEP(t, sk_permute(&r, *t, (SkIntList){perm, n}));
  if (n != e->N) STEP(t, sk_reshape(&r, *t, (SkIntList){sizes, e->N}));
  return 0;
}

static uint32_t dims_in(const SkTensor *t) {
  uint32_t m = 0;
  for (int g = 0; g < t->ndim; g++) m |= (uint32_t)(t->sizes[g] != 1) << g;
  return m;
}

/* sum the dims of *t in mask m (kept, size 1) by sum, so with sum's dtype rule (integers and
** bool give int64) */
static int sum_dims(SkTensor **t, uint32_t m) {
  int64_t d[SK_MAX_DIMS];
  int n = 0;
  for (int g = 0; g < (*t)->ndim; g++)
    if (m >> g & 1) d[n++] = g;
  if (n) STEP(t, sk_sum_dim_IntList(&r, *t, (SkIntList){d, n}, 1, -1));
  return 0;
}

/* sum the summable dims of *t that `others` (a mask) lacks */
static int sum_lonely(SkTensor **t, uint32_t others, uint32_t summable) {
  return sum_dims(t, dims_in(*t) & summable & ~others);
}

/* a times b (both in the layout, lonely dims summed), summing `sum` (dims in both) */
static int contract(SkTensor *a, SkTensor *b, uint32_t sum, SkTensor **out) {
  if (!sum) return sk_mul(out, a, b);
  if (a->dtype != b->dtype) { /* an integer operand's earlier sum made it int64 */
    SkTensor *x = NULL, *y = NULL;
    SkDType dt = sk_dtype_promote(a->dtype, b->dtype);
    int rc = sk_to_dtype(&x, a, dt, 0, 0, -1) || sk_to_dtype(&y, b, dt, 0, 0, -1) || contract(x, y, sum, out);
    sk_tensor_release(x), sk_tensor_release(y);
    return rc;
  }
  int N = a->ndim;
  uint32_t ia = dims_in(a), ib = dims_in(b);
  uint32_t batch = ia & ib & ~sum, lo = ia & ~ib, ro = ib & ~ia;
  /* dim orders: a [batch lo sum rest], b [batch sum ro rest], result [batch lo ro rest] */
  uint32_t groups_a[4] = {batch, lo, sum, ~(batch | lo | sum)}, groups_b[4] = {batch, sum, ro, ~(batch | sum | ro)},
           groups_c[4] = {batch, lo, ro, ~(batch | lo | ro)};
  int64_t pa[SK_MAX_DIMS], pb[SK_MAX_DIMS], pc[SK_MAX_DIMS], inv[SK_MAX_DIMS], cs[SK_MAX_DIMS];
  int na = 0, nb = 0, nc = 0;
  for (int k = 0; k < 4; k++)
    for (int g = 0; g < N; g++) {
      if (groups_a[k] >> g & 1) pa[na++] = g;
      if (groups_b[k] >> g & 1) pb[nb++] = g;
      if (groups_c[k] >> g & 1) pc[nc++] = g;
    }
  int64_t B = 1, LO = 1, RO = 1, K = 1;
  for (int g = 0; g < N; g++) {
    int64_t s = (ia >> g & 1) ? a->sizes[g] : b->sizes[g];
    if (batch >> g & 1) B *= s;
    if (lo >> g & 1) LO *= s;
    if (ro >> g & 1) RO *= s;
    if (sum >> g & 1) K *= s;
  }
  for (int j = 0; j < N; j++) {
    int g = (int)pc[j];
    cs[j] = (batch | lo) >> g & 1 ? a->sizes[g] : ro >> g & 1 ? b->sizes[g] : 1;
    inv[g] = j;
  }
  SkTensor *x = NULL, *y = NULL, *z = NULL, *w = NULL, *xa = NULL, *yb = NULL, *c = NULL;
  int64_t sa[3] = {B, LO, K}, sb[3] = {B, K, RO};
  int rc = sk_permute(&xa, a, (SkIntList){pa, N}) || sk_reshape(&x, xa, (SkIntList){sa, 3}) ||
           sk_permute(&yb, b, (SkIntList){pb, N}) || sk_reshape(&y, yb, (SkIntList){sb, 3}) || sk_bmm(&z, x, y) ||
           sk_reshape(&w, z, (SkIntList){cs, N}) || sk_permute(&c, w, (SkIntList){inv, N});
  SkTensor *tmp[] = {xa, x, yb, y, z, w};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) sk_tensor_release(tmp[i]);
  if (rc) return sk_tensor_release(c), -1;
  *out = c;
  return 0;
}
/* }==== */

/* {==== The order of the pairs ==== */
/* the dims of the contraction of subset s that the output or an operand outside s needs */
static uint32_t kept(const uint32_t *masks, int n, uint32_t s, uint32_t out) {
  uint32_t in = 0, rest = out;
  for (int i = 0; i < n; i++) {
    if (s >> i & 1) in |= masks[i];
    else rest |= masks[i];
  }
  return in & rest;
}
/* the product of the sizes of dims: a pairwise contraction's multiply-adds over their union */
static double volume(const Eq *e, uint32_t dims) {
  double v = 1;
  for (int l = 0; l < NLETTER + e->E; l++)
    if (e->pos[l] >= 0 && (dims >> e->pos[l] & 1)) v *= (double)e->size[l];
  return v;
}

/* the path (pairs of positions in the shrinking list, the result appended) for n operands */
static int plan(const Eq *e, const uint32_t *masks, int n, uint32_t outm, int64_t *path) {
  int np = 0;
  if (n <= EXACT_MAX) {
    uint32_t full = (1u << n) - 1;
    double best[1 << EXACT_MAX];
    uint32_t split[1 << EXACT_MAX], kp[1 << EXACT_MAX];
    for (uint32_t s = 1; s <= full; s++) {
      kp[s] = kept(masks, n, s, outm);
      if (!(s & (s - 1))) { best[s] = 0, split[s] = 0; continue; }
      best[s] = INFINITY, split[s] = 0;
      uint32_t low = s & -s;
      for (uint32_t s1 = (s - 1) & s; s1; s1 = (s1 - 1) & s) {
        if (!(s1 & low)) continue; /* each split once: s1 holds the lowest operand */
        uint32_t s2 = s & ~s1;
        double c = best[s1] + best[s2] + volume(e, kp[s1] | kp[s2]);
        if (c < best[s]) best[s] = c, split[s] = s1;
      }
    }
    /* post-order over the tree, tracking which subset sits at which list position */
    uint32_t list[EXACT_MAX * 2], stack[EXACT_MAX * 2];
    int nl = n, sp = 0, done[EXACT_MAX * 2] = {0};
    for (int i = 0; i < n; i++) list[i] = 1u << i;
    stack[sp++] = full;
    while (sp) {
      uint32_t s = stack[sp - 1];
      uint32_t s1 = split[s], s2 = s & ~s1;
      if (!done[sp - 1] && s1) {
        done[sp - 1] = 1;
        stack[sp] = s2, done[sp++] = 0;
        stack[sp] = s1, done[sp++] = 0;
        continue;
      }
      sp--;
      if (!s1) continue;
      int i = -1, j = -1;
      for (int k = 0; k < nl; k++) {
        if (list[k] == s1) i = k;
        if (list[k] == s2) j = k;
      }
      path[np++] = i, path[np++] = j;
      int lo = i < j ? i : j, hi = i < j ? j : i, m = 0;
      for (int k = 0; k < nl; k++)
        if (k != lo && k != hi) list[m++] = list[k];
      list[m++] = s, nl = m;
    }
    return np;
  }
  /* greedy: the cheapest pair each time */
  uint32_t *cur = malloc((size_t)n * sizeof *cur);
  if (!cur) return sk_error("out of memory");
  memcpy(cur, masks, (size_t)n * sizeof *cur);
  for (int left = n; left > 1; left--) {
    int bi = 0, bj = 1;
    double bc = INFINITY;
    for (int i = 0; i < left; i++)
      for (int j = i + 1; j < left; j++) {
        double c = volume(e, cur[i] | cur[j]);
        if (c < bc) bc = c, bi = i, bj = j;
      }
    uint32_t rest = outm;
    for (int k = 0; k < left; k++)
      if (k != bi && k != bj) rest |= cur[k];
    uint32_t merged = (cur[bi] | cur[bj]) & rest;
    path[np++] = bi, path[np++] = bj;
    int m = 0;
    for (int k = 0; k < left; k++)
      if (k != bi && k != bj) cur[m++] = cur[k];
    cur[m] = merged;
  }
  free(cur);
  return np;
}
/* }==== */

int sk_math_einsum(SkTensor **result, const char *equation, SkTensorList tensors, SkIntList path) {
  Eq e = {0};
  int n = tensors.n;
  e.sub = calloc((size_t)(n > 0 ? n : 1), sizeof *e.sub);
  SkTensor **ops = calloc((size_t)(n > 0 ? n : 1), sizeof *ops);
  int64_t *order = malloc((size_t)(2 * (n > 1 ? n : 1)) * sizeof *order);
  uint32_t *masks = malloc((size_t)(n > 0 ? n : 1) * sizeof *masks);
  int rc = -1;
  if (!e.sub || !ops || !order || !masks) { sk_error("out of memory"); goto done; }
  if (parse(equation, tensors, &e)) goto done;
  SkDType dt = tensors.data[0]->dtype;
  for (int k = 1; k < n; k++) {
    if (!sk_device_eq(tensors.data[k]->device, tensors.data[0]->device)) {
      char a[32], b[32];
      sk_device_format(tensors.data[0]->device, a, sizeof a), sk_device_format(tensors.data[k]->device, b, sizeof b);
      sk_error("einsum(): expected all operands on one device, but operand 0 is on %s and operand %d on %s", a, k, b);
      goto done;
    }
    dt = sk_dtype_promote(dt, tensors.data[k]->dtype);
  }
  uint32_t outm = (e.nout ? (1u << e.nout) - 1 : 0), summable = ((1u << e.N) - 1) & ~outm;
  /* in opmath: a half type's chain of contractions runs in float32, rounded once at the end */
  for (int k = 0; k < n; k++) {
    if (prepare(&e, k, tensors.data[k], sk_opmath_dtype(dt), &ops[k])) goto done;
    masks[k] = dims_in(ops[k]);
  }
  int np;
  if (path.data) {
    np = (int)path.n;
    if (path.n != 2 * (int64_t)(n - 1)) {
      sk_error("einsum(): expected contraction path given in path parameter to have size %d but got %lld", 2 * (n - 1), (long long)path.n);
      goto done;
    }
    memcpy(order, path.data, (size_t)np * sizeof *order);
  } else if ((np = n > 2 ? plan(&e, masks, n, outm, order) : 2 * (n - 1)) < 0) {
    goto done;
  } else if (n == 2) {
    order[0] = 0, order[1] = 1;
  }
  int left = n;
  /* one operand: every summed subscript is summed by sum, size 1 too, as PyTorch's einsum does
  ** (an integer operand gives int64 whenever a subscript is summed away) */
  if (left == 1 && sum_dims(&ops[0], summable)) goto done;
  for (int s = 0; s < np; s += 2) {
    int64_t i = order[s], j = order[s + 1];
    if (j < i) { int64_t x = i; i = j, j = x; }
    if (i == j || i < 0 || j >= left) {
      sk_error("einsum(): invalid contraction (%lld, %lld) %s", (long long)order[s], (long long)order[s + 1],
               i == j ? "cannot contract an operand with itself" : "operand index is out of bounds");
      goto done;
    }
    SkTensor *a = ops[i], *b = ops[j], *c = NULL;
    int m = 0;
    for (int k = 0; k < left; k++)
      if (k != i && k != j) ops[m++] = ops[k];
    ops[m] = a, ops[m + 1] = b; /* still owned by the list while they are contracted */
    uint32_t rest = 0;
    for (int k = 0; k < m; k++) rest |= dims_in(ops[k]);
    if (sum_lonely(&ops[m], rest | dims_in(b), summable) || sum_lonely(&ops[m + 1], rest | dims_in(ops[m]), summable)) goto done;
    a = ops[m], b = ops[m + 1];
    uint32_t sum = dims_in(a) & dims_in(b) & summable & ~rest;
    if (contract(a, b, sum, &c)) goto done;
    sk_tensor_release(a), sk_tensor_release(b);
    ops[m + 1] = NULL, ops[m] = c, left = m + 1;
    if (left == 1 && sum_lonely(&ops[0], 0, summable)) goto done;
  }
  int64_t sizes[SK_MAX_DIMS];
  for (int j = 0; j < e.nout; j++) sizes[j] = ops[0]->sizes[j];
  SkTensor *y = NULL;
  rc = sk_reshape(&y, ops[0], (SkIntList){sizes, e.nout});
  if (!rc && sk_dtype_is_half(dt)) {
    rc = sk_to_dtype(result, y, dt, 0, 0, -1);
    sk_tensor_release(y);
  } else if (!rc) {
    *result = y;
  }
done:
  if (ops)
    for (int k = 0; k < n; k++) sk_tensor_release(ops[k]);
  free(ops), free(e.sub), free(order), free(masks);
  return rc;
}
