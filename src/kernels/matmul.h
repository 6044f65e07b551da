/* kernels/matmul.h — C += A·B for one pair of C-order matrices of one dtype:
 * OpenBLAS gemm for float32/64 and complex64/128, a plain loop for bool and
 * integers (wrapping like NumPy, no undefined overflow). OpenBLAS is set to
 * one thread on first use: the callers are already the engine's pool threads. */
#ifndef ZC_KERNELS_MATMUL_H
#define ZC_KERNELS_MATMUL_H

#include <stdbool.h>
#include <stdint.h>

#include "zcube.h"

/* True if kern_matmul handles dtype (float16 is computed in float32 by the caller). */
bool kern_matmul_supported(zc_dtype dt);

/* c[m×n] += a[m×k] · b[k×n]; row strides lda, ldb, ldc in elements. Fails with
 * ZC_EUNSUPPORTED for a dtype it does not handle or a dimension over INT_MAX. */
int kern_matmul(zc_dtype dt, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda, const void *b, int64_t ldb,
                void *c, int64_t ldc);

#endif
