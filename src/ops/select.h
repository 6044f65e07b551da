/* ops/select.h — selection by a bool vector, shared by the data-dependent
 * operations of ops/ (x[mask] and nonzero in select.c, unique_* in unique.c). */
#ifndef ZC_OPS_SELECT_H
#define ZC_OPS_SELECT_H

#include "plan/array.h"

/* The rows (along dim 0) of each of the n arrays xs[i] where bool vector m1 is
 * true, in order: outs[i], n COMPRESS nodes (plan/compress.c) made from one
 * count pass of m1 under spec. Every xs[i] has m1's length along dim 0; the
 * segments follow the row chunks of xs[0]. On failure no out is left. */
int select_compress(const zc_spec *spec, zc_array *m1, int n, zc_array *const *xs, zc_array **outs);

/* fn(a, v) for an int64 array a and an integer v (a weak scalar). */
int select_int_op(const char *fn, zc_array *a, int64_t v, zc_array **out);

#endif
