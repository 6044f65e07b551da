/* ops/dtypes.c — the array API's data type functions: result_type, can_cast,
 * finfo, iinfo (promotion itself lives in kernels/ew_promote.c). */
#include <float.h>
#include <stdint.h>

#include "core/error.h"
#include "kernels/elementwise.h"

int zc_result_type(int n, const zc_dtype *dtypes, zc_dtype *out)
{
    zc__err_clear();
    if (!out || !dtypes || n < 1) return zc__err(ZC_EINVAL, "result_type: no dtypes given");
    zc_dtype t = dtypes[0];
    ZC_TRY(ew_promote(t, t, &t));
    for (int i = 1; i < n; i++) {
        int rc = ew_promote(t, dtypes[i], &t);
        if (rc < 0) return zc__err_wrap(rc, "result_type (dtype %d)", i);
    }
    *out = t;
    return 0;
}

int zc_can_cast(zc_dtype from, zc_dtype to, int *result)
{
    zc__err_clear();
    if (!result) return zc__err(ZC_EINVAL, "can_cast: NULL argument");
    zc_dtype t;
    int rc = ew_promote(from, to, &t);
    if (rc < 0) return zc__err_wrap(rc, "can_cast");
    *result = t == to;
    return 0;
}

int zc_finfo(zc_dtype dtype, zc_finfo_t *info)
{
    zc__err_clear();
    if (!info) return zc__err(ZC_EINVAL, "finfo: NULL argument");
    switch (dtype) {
    case ZC_FLOAT16:
        *info = (zc_finfo_t){16, 0x1p-10, 65504.0, -65504.0, 0x1p-14, ZC_FLOAT16};
        return 0;
    case ZC_FLOAT32:
    case ZC_COMPLEX64:
        *info = (zc_finfo_t){32, FLT_EPSILON, FLT_MAX, -FLT_MAX, FLT_MIN, ZC_FLOAT32};
        return 0;
    case ZC_FLOAT64:
    case ZC_COMPLEX128:
        *info = (zc_finfo_t){64, DBL_EPSILON, DBL_MAX, -DBL_MAX, DBL_MIN, ZC_FLOAT64};
        return 0;
    default: return zc__err(ZC_EINVAL, "finfo: %s is not a floating-point dtype", zc_dtype_name(dtype));
    }
}

int zc_iinfo(zc_dtype dtype, zc_iinfo_t *info)
{
    zc__err_clear();
    if (!info) return zc__err(ZC_EINVAL, "iinfo: NULL argument");
    switch (dtype) {
    case ZC_INT8: *info = (zc_iinfo_t){8, INT8_MIN, INT8_MAX, dtype}; return 0;
    case ZC_INT16: *info = (zc_iinfo_t){16, INT16_MIN, INT16_MAX, dtype}; return 0;
    case ZC_INT32: *info = (zc_iinfo_t){32, INT32_MIN, INT32_MAX, dtype}; return 0;
    case ZC_INT64: *info = (zc_iinfo_t){64, INT64_MIN, INT64_MAX, dtype}; return 0;
    case ZC_UINT8: *info = (zc_iinfo_t){8, 0, UINT8_MAX, dtype}; return 0;
    case ZC_UINT16: *info = (zc_iinfo_t){16, 0, UINT16_MAX, dtype}; return 0;
    case ZC_UINT32: *info = (zc_iinfo_t){32, 0, UINT32_MAX, dtype}; return 0;
    case ZC_UINT64: *info = (zc_iinfo_t){64, 0, UINT64_MAX, dtype}; return 0;
    default: return zc__err(ZC_EINVAL, "iinfo: %s is not an integer dtype", zc_dtype_name(dtype));
    }
}
