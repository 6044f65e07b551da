/* plan/elementwise.h — the EW node kind (ops/elementwise.c builds it): one
 * elementwise function of 1–3 inputs, with broadcasting. A node and the
 * unmaterialized EW nodes under it run as one fused program (kernels/
 * elementwise.h) over its leaves: the non-EW or materialized inputs of the
 * subtree, each region read once. */
#ifndef ZC_PLAN_ELEMENTWISE_H
#define ZC_PLAN_ELEMENTWISE_H

#include "plan/array.h"

/* A new EW node of op (an ew_op; EW_UNARY_END_ for where of 3 arguments; -1
 * for astype to `astype`) over args: the broadcast shape, chunks from the
 * largest argument, the promoted dtype. Arguments are checked by the caller
 * (ops/elementwise.c); `name` names the function in errors. */
int ew_node_make(const char *name, int op, int nargs, zc_array *const *args, zc_dtype astype, zc_array **out);
/* Build the fused program of an EW node over its subtree of unmaterialized EW
 * nodes (once; thread-safe). */
int node_fuse_ew(zc_array *a);
/* Release the fused program (end of a computation). */
void node_unfuse_ew(zc_array *a);
/* The distinct leaves of the fused subtree under n (what its region reads),
 * appended to out[k..64); the new count. */
int ew_node_leaves(const zc_array *n, const zc_array **out, int k);

#endif
