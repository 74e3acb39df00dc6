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
/* Drop the first "<op>: " in the message, at its start or after a context's
** ": ", that names op itself: whoever reports the error names op once, in
** front ("sk.tril: ...", "sk.plan: step 1 (aten::tril, ...): ..."). op is a
** qualified name ("aten::max.dim": the overload is cut) or one a user called
** ("sk.linalg.inv", "Tensor:repeat": any tail after '.' or ':'). The message's
** name matches with or without "torch.", '.' as '_', a leading '_' (a private
** twin) and a trailing '_' (the in-place twin).
** Another op's name is information and stays ("nll_loss: " under cross_entropy). */
void sk_error_drop_self(const char *op);

/* Warnings go to a handler (the binding installs one); default is stderr. */
typedef void (*SkWarnHandler)(const char *msg, void *ud);
void sk_warn(const char *fmt, ...) SK_PRINTF(1, 2);
void sk_set_warn_handler(SkWarnHandler h, void *ud);

#endif
