/*
** sk_error.h — errors as values
** A failing C function returns -1 (or NULL) after sk_error() recorded one
** message in a thread-local buffer; the Lua binding turns it into one Lua
** error. Nothing below the binding longjmps or aborts.
*/
#ifndef SK_ERROR_H
#define SK_ERROR_H

#include <stddef.h>

#if defined(__GNUC__)
#define SK_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SK_PRINTF(a, b)
#endif

/* Record a message and return -1, so `return sk_error(...)` reads naturally. */
int sk_error(const char *fmt, ...) SK_PRINTF(1, 2);
/* Prefix the current message with "what: " (adds context on the way up). */
int sk_error_context(const char *fmt, ...) SK_PRINTF(1, 2);
const char *sk_error_message(void);

/* Warnings go to a handler (the binding installs one); default is stderr. */
typedef void (*SkWarnHandler)(const char *msg, void *ud);
void sk_warn(const char *fmt, ...) SK_PRINTF(1, 2);
void sk_set_warn_handler(SkWarnHandler h, void *ud);

#endif
