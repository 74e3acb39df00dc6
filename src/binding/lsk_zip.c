/*
** lsk_zip.c — zip archives through libzip, for .npz (core.io.zip_open … zip_write)
** The archive and member handles live in a userdata on the Lua stack whose __gc closes
** them, so a Lua error (a memory error while a member is read) leaks nothing.
** A member is read as a stream, in pieces the caller bounds (zip_read for the .npy header,
** zip_read_into for the data, straight into the tensor): nothing is sized from the zip
** header's claim, which an archive may state falsely.
*/
#include "lsk.h"

#include <string.h>
#include <zip.h>

#define ZIP_BOX_MT "sk.ZipBox"
typedef struct ZipBox { zip_t *z; zip_file_t *f; zip_int64_t member; } ZipBox; /* f: member `member` open */

static void close_member(ZipBox *b) {
  if (b->f) zip_fclose(b->f), b->f = NULL;
  b->member = -1;
}

static int zipbox_gc(lua_State *L) {
  ZipBox *b = lua_touserdata(L, 1);
  close_member(b);
  if (b->z) zip_discard(b->z), b->z = NULL;
  return 0;
}

static ZipBox *new_box(lua_State *L) {
  ZipBox *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->z = NULL, b->f = NULL, b->member = -1;
  if (luaL_newmetatable(L, ZIP_BOX_MT)) {
    lua_pushcfunction(L, zipbox_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

/* Errors carry no position and no path (lsk_raise_plain): sk.load's and sk.save's callers add the file's name. */
static int open_error(lua_State *L, const char *what, int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  lua_pushfstring(L, "%s (%s)", what, zip_error_strerror(&e));
  zip_error_fini(&e);
  return lua_error(L);
}

/* zip_open(path) -> the archive, a list of {name = , size = } for its members in order
** (size: the inflated size the zip header states). */
static int l_zip_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  ZipBox *b = new_box(L);
  int code;
  if (!(b->z = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code))) return open_error(L, "not a readable zip archive", code);
  zip_int64_t n = zip_get_num_entries(b->z, 0);
  lua_createtable(L, n > 0 && n < 1 << 20 ? (int)n : 0, 0);
  for (zip_int64_t i = 0; i < n; i++) {
    zip_stat_t st;
    if (zip_stat_index(b->z, (zip_uint64_t)i, 0, &st) || !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE))
      return lsk_raise_plain(L, "member %d: %s", (int)i + 1, zip_strerror(b->z));
    if (st.size > (zip_uint64_t)INT64_MAX) return lsk_raise_plain(L, "member '%s' states a size past 2^63 bytes", st.name);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, st.name);
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, (lua_Integer)st.size);
    lua_setfield(L, -2, "size");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 2;
}

/* Member i (1-based) of the archive at idx, open at its current position: a new member
** opens at its start, closing the one before. Errors of a member's reads do not name it:
** the caller (npy.from_zip) does. */
static ZipBox *open_member(lua_State *L, int idx, lua_Integer i) {
  ZipBox *b = luaL_checkudata(L, idx, ZIP_BOX_MT);
  if (!b->z) lsk_raise_plain(L, "%s", "the archive is closed");
  if (i < 1 || i > zip_get_num_entries(b->z, 0)) lsk_raise_plain(L, "no member %I", i);
  if (b->member == i - 1) return b;
  close_member(b);
  if (!(b->f = zip_fopen_index(b->z, (zip_uint64_t)(i - 1), 0)))
    lsk_raise_plain(L, "%s", zip_strerror(b->z));
  b->member = i - 1;
  return b;
}

/* Reads up to n bytes of the open member into p; the bytes read (fewer only at its end). */
static size_t read_member(lua_State *L, ZipBox *b, char *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    zip_int64_t r = zip_fread(b->f, p + got, n - got);
    if (r < 0) lsk_raise_plain(L, "%s", zip_file_strerror(b->f));
    if (r == 0) break;
    got += (size_t)r;
  }
  return got;
}

/* zip_read(z, i, n) -> a string of the next n bytes of member i (fewer at its end). */
static int l_zip_read(lua_State *L) {
  lua_Integer i = luaL_checkinteger(L, 2), n = luaL_checkinteger(L, 3);
  luaL_argcheck(L, n >= 0 && n <= 1 << 24, 3, "a read of 0 to 16 MiB");
  ZipBox *b = open_member(L, 1, i);
  luaL_Buffer buf;
  char *p = luaL_buffinitsize(L, &buf, (size_t)n);
  luaL_pushresultsize(&buf, read_member(L, b, p, (size_t)n));
  return 1;
}

/* zip_read_into(z, i, t) -> the bytes read: fills a contiguous CPU tensor from member i's
** next bytes (fewer when the member ends first). */
static int l_zip_read_into(lua_State *L) {
  lua_Integer i = luaL_checkinteger(L, 2);
  SkTensor *t = lsk_check_tensor(L, 3, "zip_read_into", "t");
  if (t->device.type != SK_DEVICE_CPU || !sk_tensor_is_contiguous(t)) lsk_raise_plain(L, "%s", "expected a contiguous CPU tensor");
  ZipBox *b = open_member(L, 1, i);
  size_t got = read_member(L, b, sk_tensor_data(t), (size_t)t->numel * sk_tensor_itemsize(t));
  sk_tensor_bump_version(t);
  lua_pushinteger(L, (lua_Integer)got);
  return 1;
}

/* zip_at_end(z, i) -> whether member i has no bytes left; reading its end makes libzip
** check the CRC-32, whose mismatch is an error. */
static int l_zip_at_end(lua_State *L) {
  char extra;
  ZipBox *b = open_member(L, 1, luaL_checkinteger(L, 2));
  lua_pushboolean(L, read_member(L, b, &extra, 1) == 0);
  return 1;
}

/* zip_close(z): closes the archive now rather than at collection. */
static int l_zip_close(lua_State *L) {
  luaL_checkudata(L, 1, ZIP_BOX_MT);
  return zipbox_gc(L);
}

/* zip_write(path, members, compress): writes {{name = , data = }, ...}, stored or deflated,
** with the 1980-01-01 timestamp NumPy uses (the same input makes the same bytes). */
static int l_zip_write(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  int compress = lua_toboolean(L, 3), code;
  lua_Integer n = luaL_len(L, 2);
  ZipBox *b = new_box(L);
  if (!(b->z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code))) {
    return open_error(L, "cannot create the archive", code);
  }
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 2, i);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "data");
    size_t len;
    const char *name = lua_tostring(L, -2), *data = lua_tolstring(L, -1, &len);
    if (!name || !data) return lsk_raise_plain(L, "member %d needs a name and data", (int)i);
    /* the strings stay alive in `members` until zip_close has read them */
    zip_source_t *src = zip_source_buffer(b->z, data, len, 0);
    zip_int64_t idx = src ? zip_file_add(b->z, name, src, ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
      if (src) zip_source_free(src);
      return lsk_raise_plain(L, "member '%s': %s", name, zip_strerror(b->z));
    }
    if (zip_set_file_compression(b->z, (zip_uint64_t)idx, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) ||
        zip_file_set_dostime(b->z, (zip_uint64_t)idx, 0, (1 << 5) | 1, 0))
      return lsk_raise_plain(L, "member '%s': %s", name, zip_strerror(b->z));
    lua_pop(L, 3);
  }
  if (zip_close(b->z)) return lsk_raise_plain(L, "%s", zip_strerror(b->z));
  b->z = NULL;
  return 0;
}

void lsk_open_zip(lua_State *L) {
  static const luaL_Reg fns[] = {
    {"zip_open", l_zip_open}, {"zip_read", l_zip_read}, {"zip_read_into", l_zip_read_into}, {"zip_at_end", l_zip_at_end},
    {"zip_close", l_zip_close}, {"zip_write", l_zip_write}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
