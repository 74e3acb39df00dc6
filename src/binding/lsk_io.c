/*
** lsk_io.c — bytes in and out of tensors: file mappings, bulk reads and writes on Lua
** file handles, Lua strings and byte swaps (core.io).
** The file formats themselves are Lua (lua/sk/formats): these functions move the data
** so that no element passes through a Lua value. Each takes CPU tensors and checks the
** contiguity it needs; the Lua side names the file and the tensor in its errors.
*/
#include "lsk.h"
#include "sk_error.h"
#include "sk_ops.h"
#include "sk_parallel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A CPU tensor whose elements are contiguous in memory (any of them may be read as bytes). */
static SkTensor *check_bytes_tensor(lua_State *L, int idx, const char *fname) {
  SkTensor *t = lsk_check_tensor(L, idx, fname, "self");
  if (t->device.type != SK_DEVICE_CPU) lsk_raise(L, "%s: expected a CPU tensor", fname);
  if (!sk_tensor_is_contiguous(t)) lsk_raise(L, "%s: expected a contiguous tensor", fname);
  return t;
}

static size_t tensor_bytes(const SkTensor *t) { return (size_t)t->numel * sk_tensor_itemsize(t); }

/* A function that makes a tensor starts with lsk_call_entry, so that pushing it takes a
** spare box and raises no memory error while C owns the tensor. */
static void push_new(lua_State *L, SkTensor *t) {
  if (!lsk_push_spare(L, lsk_state(L), t)) lsk_push_tensor(L, t);
}

/* {==== File mappings ==== */
typedef struct Mapping { void *addr; size_t len; } Mapping;

static void mapping_release(void *ctx) {
  Mapping *m = ctx;
  if (m->len) munmap(m->addr, m->len);
  free(m);
}

/* The file at path opened with flags, which must be a regular file: its descriptor, *st its
** status. Every loader reaches files through here (map_file, file_size), so a directory, a
** device or an unreadable path gets one error that says which ("is a directory"). */
static int open_regular(lua_State *L, const char *path, int flags, struct stat *st) {
  int fd = open(path, flags);
  if (fd < 0) return lsk_raise_plain(L, "%s", strerror(errno));
  if (fstat(fd, st) < 0) {
    int e = errno;
    close(fd);
    return lsk_raise_plain(L, "%s", strerror(e));
  }
  if (!S_ISREG(st->st_mode)) {
    close(fd);
    return lsk_raise_plain(L, "%s", S_ISDIR(st->st_mode) ? "is a directory" : "is not a regular file");
  }
  return fd;
}

/* file_size(path) -> the size in bytes of the regular file at path, which can be read. */
static int l_file_size(lua_State *L) {
  struct stat st;
  close(open_regular(L, luaL_checkstring(L, 1), O_RDONLY, &st));
  lua_pushinteger(L, (lua_Integer)st.st_size);
  return 1;
}

/* map_file(path, shared) -> a uint8 tensor over the whole file. shared: MAP_SHARED, the
** file opened for writing (writes reach it); else MAP_PRIVATE: copy-on-write, writes stay
** in this process. The mapping lives as long as a view of the tensor. */
static int l_map_file(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int shared = lua_toboolean(L, 2);
  struct stat st;
  lsk_call_entry(L, lsk_state(L));
  int fd = open_regular(L, path, shared ? O_RDWR : O_RDONLY, &st);
  Mapping *m = malloc(sizeof *m);
  if (!m) { close(fd); return lsk_raise_plain(L, "%s", "out of memory"); }
  m->len = (size_t)st.st_size;
  m->addr = NULL;
  if (m->len) {
    m->addr = mmap(NULL, m->len, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    if (m->addr == MAP_FAILED) {
      int e = errno;
      close(fd), free(m);
      return lsk_raise_plain(L, "cannot map the file: %s", strerror(e));
    }
  }
  close(fd); /* the mapping holds the file */
  int64_t n = (int64_t)m->len;
  SkTensor *t = sk_tensor_from_external(m->addr, m->len, SK_CPU, SK_DTYPE_UINT8, 1, &n, NULL, 0, mapping_release, m);
  if (!t) {
    mapping_release(m);
    return lsk_raise_plain(L, "%s", sk_error_message());
  }
  push_new(L, t);
  return 1;
}
/* }==== */

/* {==== Bulk reads and writes on Lua file handles ==== */
static FILE *check_file(lua_State *L, int idx) {
  luaL_Stream *p = luaL_checkudata(L, idx, LUA_FILEHANDLE);
  if (!p->closef) lsk_raise(L, "attempt to use a closed file");
  return p->f;
}

/* A read of bytes [begin, end) of dst from the file at `at`, one range per thread: a large
** tensor's pages are first touched (faulted in) and filled by all threads at once. */
typedef struct ReadJob { int fd; char *dst; off_t at; int err; } ReadJob;
static void read_range(void *ctx, int64_t begin, int64_t end) {
  ReadJob *j = ctx;
  while (begin < end) {
    ssize_t r = pread(j->fd, j->dst + begin, (size_t)(end - begin), j->at + begin);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) { __atomic_store_n(&j->err, r < 0 ? errno : EIO, __ATOMIC_RELAXED); return; }
    begin += r;
  }
}

/* read_into(file, t) -> the bytes read: fills a contiguous CPU tensor from the file's
** position (fewer bytes when the file ends first), and moves the position past them. */
static int l_read_into(lua_State *L) {
  FILE *f = check_file(L, 1);
  SkTensor *t = check_bytes_tensor(L, 2, "read_into");
  struct stat st;
  long pos = ftell(f);
  if (pos < 0 || fstat(fileno(f), &st) < 0) return lsk_raise_plain(L, "%s", strerror(errno));
  size_t want = tensor_bytes(t), left = st.st_size > pos ? (size_t)(st.st_size - pos) : 0, n = want < left ? want : left;
  ReadJob j = {fileno(f), sk_tensor_data(t), (off_t)pos, 0};
  sk_parallel_for(0, (int64_t)n, 8 << 20, read_range, &j);
  sk_tensor_bump_version(t);
  if (j.err) return lsk_raise_plain(L, "%s", strerror(j.err));
  if (fseek(f, pos + (long)n, SEEK_SET) < 0) return lsk_raise_plain(L, "%s", strerror(errno));
  lua_pushinteger(L, (lua_Integer)n);
  return 1;
}

/* write_from(file, t): writes a contiguous CPU tensor's bytes at the file's position. */
static int l_write_from(lua_State *L) {
  FILE *f = check_file(L, 1);
  SkTensor *t = check_bytes_tensor(L, 2, "write_from");
  size_t n = tensor_bytes(t);
  if (n && fwrite(sk_tensor_data(t), 1, n, f) != n) return lsk_raise_plain(L, "%s", strerror(errno));
  return 0;
}
/* }==== */

/* {==== Lua strings ==== */
/* tobytes(t) -> a string of a contiguous CPU tensor's bytes, in memory order. */
static int l_tobytes(lua_State *L) {
  SkTensor *t = check_bytes_tensor(L, 1, "Tensor:tobytes");
  size_t n = tensor_bytes(t);
  luaL_Buffer b;
  char *p = luaL_buffinitsize(L, &b, n);
  if (n) memcpy(p, sk_tensor_data(t), n);
  luaL_pushresultsize(&b, n);
  return 1;
}

/* frombuffer(buf, dtype, offset, count) -> a 1-d tensor of count elements copied from a
** string or a full userdata's bytes (count -1: all that follow offset); PyTorch's checks. */
static int l_frombuffer(lua_State *L) {
  size_t len;
  const char *buf;
  if (lua_type(L, 1) == LUA_TSTRING) buf = lua_tolstring(L, 1, &len);
  else if (lua_type(L, 1) == LUA_TUSERDATA) buf = lua_touserdata(L, 1), len = lua_rawlen(L, 1);
  else return lsk_raise(L, "sk.frombuffer: argument 'buffer' must be a string or a userdata, not a %s", luaL_typename(L, 1));
  SkDType dt;
  if (sk_dtype_from_name(luaL_checkstring(L, 2), &dt)) return lsk_raise(L, "sk.frombuffer: unknown dtype '%s'", lua_tostring(L, 2));
  lua_Integer offset = luaL_checkinteger(L, 3), count = luaL_checkinteger(L, 4), size = (lua_Integer)sk_dtype_size(dt);
  if (count == 0 || len == 0)
    return lsk_raise(L, "sk.frombuffer: both buffer length (%I) and count (%I) must not be 0", (lua_Integer)len, count);
  if (offset < 0 || (size_t)offset >= len)
    return lsk_raise(L, "sk.frombuffer: offset (%I bytes) must be non-negative and no greater than buffer length (%I bytes) "
                      "minus 1", offset, (lua_Integer)len);
  lua_Integer rest = (lua_Integer)len - offset;
  if (count < 0) {
    if (rest % size)
      return lsk_raise(L, "sk.frombuffer: buffer length (%I bytes) after offset (%I bytes) must be a multiple of element "
                        "size (%I)", rest, offset, size);
    count = rest / size;
  } else if (count > rest / size)
    return lsk_raise(L, "sk.frombuffer: requested buffer length (%I * %I bytes) after offset (%I bytes) must not be "
                      "greater than actual buffer length (%I bytes)", count, size, offset, (lua_Integer)len);
  int64_t n = count;
  lsk_call_entry(L, lsk_state(L));
  SkTensor *t = sk_tensor_empty(1, &n, dt, SK_CPU);
  if (!t) return lsk_raise(L, "sk.frombuffer: %s", sk_error_message());
  memcpy(sk_tensor_data(t), buf + offset, (size_t)(count * size));
  push_new(L, t);
  return 1;
}

/* data_ptr(t) -> the address of t's first element as an integer (0 when it has no data). */
static int l_data_ptr(lua_State *L) {
  SkTensor *t = lsk_check_tensor(L, 1, "Tensor:data_ptr", "self");
  lua_pushinteger(L, (lua_Integer)(uintptr_t)sk_tensor_data(t));
  return 1;
}
/* }==== */

/* byteswap_(t): reverses the bytes of each element of a contiguous CPU tensor (big-endian data). */
static int l_byteswap(lua_State *L) {
  SkTensor *t = check_bytes_tensor(L, 1, "byteswap_");
  size_t k = sk_tensor_itemsize(t);
  unsigned char *p = sk_tensor_data(t);
  for (int64_t i = 0; k > 1 && i < t->numel; i++, p += k)
    for (size_t a = 0, b = k - 1; a < b; a++, b--) { unsigned char c = p[a]; p[a] = p[b], p[b] = c; }
  sk_tensor_bump_version(t);
  return 0;
}

void lsk_open_io(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"file_size", l_file_size}, {"map_file", l_map_file}, {"read_into", l_read_into}, {"write_from", l_write_from}, {"tobytes", l_tobytes},
    {"frombuffer", l_frombuffer}, {"data_ptr", l_data_ptr}, {"byteswap_", l_byteswap}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lsk_open_dlpack(L);
  lsk_open_zip(L);
}
