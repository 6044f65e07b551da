/* kernels/cmplx.h — <complex.h> with C11's CMPLX and CMPLXF everywhere: glibc
 * defines them only for GCC >= 4.7, not for clang (which reports itself as
 * GCC 4.2), so clang gets the same builtin glibc uses. */
#ifndef ZC_KERNELS_CMPLX_H
#define ZC_KERNELS_CMPLX_H

#include <complex.h>

#if !defined(CMPLX) && defined(__clang__)
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#define CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#endif

#endif
