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
