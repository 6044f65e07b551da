/* core/checked.h — overflow-checked integer arithmetic for sizes and shapes. */
#ifndef ZC_CORE_CHECKED_H
#define ZC_CORE_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Each returns true on overflow (like __builtin_*_overflow). */
static inline bool ck_mul_i64(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r); }
static inline bool ck_add_i64(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r); }
static inline bool ck_mul_sz(size_t a, size_t b, size_t *r) { return __builtin_mul_overflow(a, b, r); }
static inline bool ck_add_sz(size_t a, size_t b, size_t *r) { return __builtin_add_overflow(a, b, r); }

/* Saturating size arithmetic: an overflow gives SIZE_MAX (a projection that
 * overflows is "too big", never a small wrapped figure). */
static inline size_t ck_sat_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }
static inline size_t ck_sat_mul(size_t a, size_t b) { return b && a > SIZE_MAX / b ? SIZE_MAX : a * b; }

/* Ceiling division for non-negative a, positive b. */
static inline int64_t ck_ceildiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }
/* Greatest common divisor of a >= 0 and b >= 0 (Euclid). */
static inline int64_t ck_gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

#endif
