/* ops/held.h — the temporaries of one library call: the arrays a builder makes
 * on its way to its results, released together at its end (the results are
 * handed out with one more reference each); and the conjugate transpose the
 * linear algebra builders (ops/decomp.c, ops/linalg_ext.c) share. */
#ifndef ZC_OPS_HELD_H
#define ZC_OPS_HELD_H

#include "plan/array.h"

#define HELD_MAX 512

typedef struct {
    zc_array *v[HELD_MAX];
    int n;
} held;

/* Keep a, made by the call that returned rc (rc < 0 passes through). */
int held_add(held *h, int rc, zc_array *a);
/* Keep *pa and give it in *out: held_take(h, f(..., &x), &x, &y) reads x only
 * after f has set it (the order arguments are evaluated in is unspecified). */
int held_take(held *h, int rc, zc_array *const *pa, zc_array **out);
/* Release every kept array. */
void held_drop(held *h);
/* Hand a kept array to the caller: one more reference (nothing when out is NULL). */
void held_give(zc_array *a, zc_array **out);
/* aᴴ: a's matrix transpose, conjugated when complex; kept. */
int held_conj_t(held *h, zc_array *a, zc_array **out);

#endif
