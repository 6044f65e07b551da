/* core/error.h — internal error reporting.
 *
 * Every failing path calls zc__err(code, fmt, ...) once, at the place that knows
 * what failed; callers higher up may prepend where it happened with
 * zc__err_wrap(code, "array 'x' chunk '0.1'"). The message is thread-local;
 * the pool copies a worker's message back to the calling thread. */
#ifndef ZC_CORE_ERROR_H
#define ZC_CORE_ERROR_H

#include "zcube.h"

#define ZC_ERRMSG_MAX 1024

/* zc__err(code, fmt, ...): set the thread's message (printf format) and give
 * `code`. A macro so that the compiler sees the (negative) code returned: a
 * value a ZC_TRY'd call sets on success is then known set (no false "may be
 * used uninitialized" at -O3). */
void zc__err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define zc__err(code, ...)                                                      \
    __extension__({                                                             \
        int zc_code_ = (code);                                                  \
        zc__err_msg(__VA_ARGS__);                                               \
        zc_code_;                                                               \
    })
/* As zc__err for ZC_EMEMBOUND, also keeping the refusal's figures: bytes per
 * task projected and allowed (zc_errmem). Returns ZC_EMEMBOUND. */
int zc__err_mem(size_t projected, size_t allowed, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* After a ZC_EMEMBOUND: the smallest allowed_mem the refused plan fits
 * (zc_errmem_fit), until the thread's next error. */
void zc__err_mem_fit(size_t allowed_mem);
/* Prepend "<prefix>: " to the thread's message and return `code`. */
int zc__err_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Map an errno value to a ZC_E* code. */
int zc__errno_code(int err);
/* Set a message from errno: "<what>: <strerror> (errno N)"; returns the mapped code. */
int zc__err_sys(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clear the thread's message (at the start of public calls). */
void zc__err_clear(void);
/* Replace the thread's message with `msg` (used to carry worker errors back). */
void zc__err_set_text(const char *msg);
/* Around a best-effort step (a cleanup after a failure, a probe whose failure
 * means "no"): keep the standing message, and put it back after the step if
 * the step replaced it. */
typedef struct {
    char text[ZC_ERRMSG_MAX];
} zc__err_kept;
void zc__err_keep(zc__err_kept *k);
void zc__err_restore(const zc__err_kept *k);

/* Propagate a negative status. */
#define ZC_TRY(expr)                                                            \
    do {                                                                        \
        int zc_rc_ = (expr);                                                    \
        if (zc_rc_ < 0) return zc_rc_;                                          \
    } while (0)

#endif
