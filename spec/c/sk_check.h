/*
** sk_check.h — the C test programs' one assertion: CHECK counts a pass or prints the failure
** with its line and the last sk error, and the program exits non-zero when any failed.
*/
#ifndef SK_CHECK_H
#define SK_CHECK_H

#include "sk_error.h"

#include <stdio.h>

static int passed, failed;

#define CHECK(cond, what)                                                   \
  do {                                                                      \
    if (cond) passed++;                                                     \
    else { failed++; printf("FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, what, sk_error_message()); } \
  } while (0)

#endif
