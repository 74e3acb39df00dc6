/*
** sk_error.c — the thread-local error message and the warning handler
*/
#include "sk_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SK_ERROR_CAP 1024

static _Thread_local char errbuf[SK_ERROR_CAP];

int sk_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  va_end(ap);
  return -1;
}

int sk_error_context(const char *fmt, ...) {
  char prefix[256], old[SK_ERROR_CAP];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, errbuf, sizeof old);
  size_t n = strlen(prefix);
  if (n > sizeof errbuf - 3) n = sizeof errbuf - 3;
  memcpy(errbuf, prefix, n);
  memcpy(errbuf + n, ": ", 2);
  size_t rest = strlen(old);
  if (rest > sizeof errbuf - n - 3) rest = sizeof errbuf - n - 3;
  memcpy(errbuf + n + 2, old, rest);
  errbuf[n + 2 + rest] = 0;
  return -1;
}

const char *sk_error_message(void) { return errbuf; }

/* Whether a message's op name (n chars at a) is the op b (m chars): see sk_error_drop_self. */
static int same_op(const char *a, size_t n, const char *b, size_t m) {
  if (n > 6 && strncmp(a, "torch.", 6) == 0) a += 6, n -= 6;
  if (n && a[0] == '_') a++, n--;
  if (m && b[0] == '_') b++, m--;
  if (n && a[n - 1] == '_') n--;
  if (m && b[m - 1] == '_') m--;
  if (n != m || n == 0) return 0;
  for (size_t i = 0; i < n; i++)
    if ((a[i] == '.' ? '_' : a[i]) != (b[i] == '.' ? '_' : b[i])) return 0;
  return 1;
}

static int names_self(const char *op, const char *a, size_t n) {
  const char *q = strstr(op, "::");
  if (q) return q += 2, same_op(a, n, q, strcspn(q, "."));
  for (const char *p = op; *p; p++)
    if ((p == op || p[-1] == '.' || p[-1] == ':') && same_op(a, n, p, strlen(p))) return 1;
  return 0;
}

void sk_error_drop_self(const char *op) {
  for (char *p = errbuf; *p; p++) {
    if (p != errbuf && !(p - errbuf >= 2 && p[-2] == ':' && p[-1] == ' ')) continue;
    size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
    if (n && p[n] == ':' && p[n + 1] == ' ' && names_self(op, p, n)) {
      memmove(p, p + n + 2, strlen(p + n + 2) + 1);
      return;
    }
  }
}

static void warn_stderr(const char *msg, void *ud) {
  (void)ud;
  fprintf(stderr, "sk warning: %s\n", msg);
}

static SkWarnHandler warn_handler = warn_stderr;
static void *warn_ud;

void sk_set_warn_handler(SkWarnHandler h, void *ud) {
  warn_handler = h ? h : warn_stderr;
  warn_ud = ud;
}

void sk_warn(const char *fmt, ...) {
  char buf[SK_ERROR_CAP];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  warn_handler(buf, warn_ud);
}
