/* kernels/matmul.c — the per-block matrix product (see matmul.h). */
#include "kernels/matmul.h"

#include <cblas.h>
#include <complex.h>
#include <limits.h>
#include <string.h>

#include "core/error.h"
#include "kernels/lapack.h"

bool kern_matmul_supported(zc_dtype dt)
{
    switch (dt) {
    case ZC_BOOL: case ZC_INT8: case ZC_INT16: case ZC_INT32: case ZC_INT64: case ZC_UINT8: case ZC_UINT16:
    case ZC_UINT32: case ZC_UINT64: case ZC_FLOAT32: case ZC_FLOAT64: case ZC_COMPLEX64: case ZC_COMPLEX128:
        return true;
    default: return false;
    }
}

/* Integers: i-k-j order (rows of b and c stream), arithmetic in the unsigned type
 * of the same width (W: at least unsigned int, so no promotion to int) so that
 * overflow wraps as in NumPy without undefined behaviour. */
#define INT_KERNEL(name, T, U, W)                                                                                   \
    static void name(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb, T *c,     \
                     int64_t ldc)                                                                                 \
    {                                                                                                              \
        for (int64_t i = 0; i < m; i++) {                                                                          \
            U *ci = (U *)(c + i * ldc);                                                                            \
            for (int64_t p = 0; p < k; p++) {                                                                      \
                U x = (U)a[i * lda + p];                                                                           \
                if (!x) continue;                                                                                  \
                const T *bp = b + p * ldb;                                                                         \
                for (int64_t j = 0; j < n; j++) ci[j] = (U)((W)ci[j] + (W)x * (W)(U)bp[j]);                     \
            }                                                                                                      \
        }                                                                                                          \
    }

INT_KERNEL(mm_i8, int8_t, uint8_t, uint32_t)
INT_KERNEL(mm_i16, int16_t, uint16_t, uint32_t)
INT_KERNEL(mm_i32, int32_t, uint32_t, uint32_t)
INT_KERNEL(mm_i64, int64_t, uint64_t, uint64_t)
INT_KERNEL(mm_u8, uint8_t, uint8_t, uint32_t)
INT_KERNEL(mm_u16, uint16_t, uint16_t, uint32_t)
INT_KERNEL(mm_u32, uint32_t, uint32_t, uint32_t)
INT_KERNEL(mm_u64, uint64_t, uint64_t, uint64_t)

/* bool: c |= a & b (NumPy's matmul of booleans) */
static void mm_bool(int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda, const uint8_t *b, int64_t ldb,
                    uint8_t *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++) {
            if (!a[i * lda + p]) continue;
            const uint8_t *bp = b + p * ldb;
            uint8_t *ci = c + i * ldc;
            for (int64_t j = 0; j < n; j++) ci[j] |= bp[j] != 0;
        }
}

int kern_matmul(zc_dtype dt, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda, const void *b, int64_t ldb,
                void *c, int64_t ldc)
{
    if (m <= 0 || n <= 0 || k <= 0) return 0;
    switch (dt) {
    case ZC_BOOL: mm_bool(m, n, k, a, lda, b, ldb, c, ldc); return 0;
    case ZC_INT8: mm_i8(m, n, k, a, lda, b, ldb, c, ldc); return 0;
    case ZC_INT16: mm_i16(m, n, k, a, lda, b, ldb, c, ldc); return 0;
    case ZC_INT32: mm_i32(m, n, k, a, lda, b, ldb, c, ldc); return 0;
    case ZC_INT64: mm_i64(m, n, k, a, lda, b, ldb, c, ldc); return 0;
    case ZC_UINT8: mm_u8(m, n, k, a, lda, b, ldb, c, ldc); return 0;
    case ZC_UINT16: mm_u16(m, n, k, a, lda, b, ldb, c, ldc); return 0;
    case ZC_UINT32: mm_u32(m, n, k, a, lda, b, ldb, c, ldc); return 0;
    case ZC_UINT64: mm_u64(m, n, k, a, lda, b, ldb, c, ldc); return 0;
    default: break;
    }
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
        return zc__err(ZC_EUNSUPPORTED, "matmul: a block of %lld x %lld x %lld exceeds the BLAS index range", (long long)m,
                       (long long)k, (long long)n);
    la_init(); /* one OpenBLAS thread */
    blasint M = (blasint)m, N = (blasint)n, K = (blasint)k, LA = (blasint)lda, LB = (blasint)ldb, LC = (blasint)ldc;
    switch (dt) {
    case ZC_FLOAT32: cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, LA, b, LB, 1.0f, c, LC); return 0;
    case ZC_FLOAT64: cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, a, LA, b, LB, 1.0, c, LC); return 0;
    case ZC_COMPLEX64: {
        const float one[2] = {1, 0};
        cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, one, a, LA, b, LB, one, c, LC);
        return 0;
    }
    case ZC_COMPLEX128: {
        const double one[2] = {1, 0};
        cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, one, a, LA, b, LB, one, c, LC);
        return 0;
    }
    default: return zc__err(ZC_EUNSUPPORTED, "matmul of %s is not supported", zc_dtype_name(dt));
    }
}
