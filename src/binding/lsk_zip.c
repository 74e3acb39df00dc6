/*
** lsk_zip.c — zip archives through libzip, for .npz (core.io.zip_read, core.io.zip_write)
** The archive and member handles live in a userdata on the Lua stack whose __gc closes
** them, so a Lua error (a memory error while a member is read) leaks nothing.
*/
#include "lsk.h"

#include <string.h>
#include <zip.h>

#define ZIP_BOX_MT "sk.ZipBox"
typedef struct ZipBox { zip_t *z; zip_file_t *f; } ZipBox;

static int zipbox_gc(lua_State *L) {
  ZipBox *b = lua_touserdata(L, 1);
  if (b->f) zip_fclose(b->f), b->f = NULL;
  if (b->z) zip_discard(b->z), b->z = NULL;
  return 0;
}

static ZipBox *new_box(lua_State *L) {
  ZipBox *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->z = NULL, b->f = NULL;
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

/* zip_read(path) -> a list of {name = , data = } for the members, in the archive's order;
** a member's data is checked against its stated size and CRC-32. */
static int l_zip_read(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  ZipBox *b = new_box(L);
  int box = lua_gettop(L), code;
  if (!(b->z = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code))) return open_error(L, "not a readable zip archive", code);
  zip_int64_t n = zip_get_num_entries(b->z, 0);
  lua_createtable(L, n > 0 && n < 1 << 20 ? (int)n : 0, 0);
  for (zip_int64_t i = 0; i < n; i++) {
    zip_stat_t st;
    if (zip_stat_index(b->z, (zip_uint64_t)i, 0, &st) || !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE))
      return lsk_raise_plain(L, "member %d: %s", (int)i + 1, zip_strerror(b->z));
    lua_createtable(L, 0, 2);
    lua_pushstring(L, st.name);
    lua_setfield(L, -2, "name");
    if (st.size > (zip_uint64_t)(SIZE_MAX / 2)) return lsk_raise_plain(L, "member '%s' is too large", st.name);
    luaL_Buffer buf;
    char *p = luaL_buffinitsize(L, &buf, (size_t)st.size);
    if (!(b->f = zip_fopen_index(b->z, (zip_uint64_t)i, 0)))
      return lsk_raise_plain(L, "member '%s': %s", st.name, zip_strerror(b->z));
    zip_uint64_t got = 0;
    while (got < st.size) {
      zip_int64_t r = zip_fread(b->f, p + got, st.size - got);
      if (r < 0) return lsk_raise_plain(L, "member '%s': %s", st.name, zip_file_strerror(b->f));
      if (r == 0) break;
      got += (zip_uint64_t)r;
    }
    char extra;
    zip_int64_t r = got == st.size ? zip_fread(b->f, &extra, 1) : 0; /* at the end: libzip checks the CRC */
    if (r < 0) return lsk_raise_plain(L, "member '%s': %s", st.name, zip_file_strerror(b->f));
    if (got != st.size || r > 0)
      return lsk_raise_plain(L, "member '%s' does not hold the %I bytes its header states", st.name, (lua_Integer)st.size);
    zip_fclose(b->f), b->f = NULL;
    luaL_pushresultsize(&buf, (size_t)got);
    lua_setfield(L, -2, "data");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_replace(L, box); /* the list; the box goes to the collector, which closes the archive */
  zip_discard(b->z), b->z = NULL;
  lua_settop(L, box);
  return 1;
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
  lua_pushcfunction(L, l_zip_read);
  lua_setfield(L, -2, "zip_read");
  lua_pushcfunction(L, l_zip_write);
  lua_setfield(L, -2, "zip_write");
}
