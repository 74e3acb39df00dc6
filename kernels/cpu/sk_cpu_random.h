/*
** sk_cpu_random.h — argument checks the random kernels share with their Meta kernels
*/
#ifndef SK_CPU_RANDOM_H
#define SK_CPU_RANDOM_H

#include "sk_tensor.h"

/* Checks multinomial's arguments; gives the rows and categories of self. */
int sk_multinomial_check(const SkTensor *self, int64_t num_samples, int replacement, int64_t *rows, int64_t *cats);

#endif
