/* bench/bench_util.h — helpers shared by the bench programs: wall and CPU clocks
 * in seconds, and the exit-on-error wrapper for zcube calls (prints
 * "<program>: <what>: <error name> (<message>)" and exits 1). Header-only, static
 * inline so a program that uses only part of it builds warning-free. */
#ifndef ZC_BENCH_UTIL_H
#define ZC_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "zcube.h"

static inline double bench_clock(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* wall seconds (monotonic) */
static inline double bench_now(void) { return bench_clock(CLOCK_MONOTONIC); }

/* CPU seconds of the whole process, all threads (the pool's included) */
static inline double bench_cpu_now(void) { return bench_clock(CLOCK_PROCESS_CPUTIME_ID); }

static inline void bench_die_zc(const char *prog, const char *what, int rc)
{
    fprintf(stderr, "%s: %s: %s (%s)\n", prog, what, zc_errname(rc), zc_errmsg());
    exit(1);
}

/* A fresh array's buffer of n bytes as NumPy (1.17 and later) allocates one
 * on Linux, so that a read into it pays what a read into np.empty() would:
 * malloc, and from 4 MiB on the pages past the first page boundary advised
 * MADV_HUGEPAGE (numpy/core/src/multiarray/alloc.c). NULL when out of memory;
 * free() it. */
static inline void *bench_numpy_alloc(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    if (p && n >= ((size_t)1 << 22)) {
        size_t off = 4096 - (uintptr_t)p % 4096;
        madvise(p + off, n - off, MADV_HUGEPAGE);
    }
    return p;
}

/* call a zcube function; on a negative return, bench_die_zc(prog, what, rc) */
#define BENCH_ZC(prog, call, what)                 \
    do {                                           \
        int rc_ = (call);                          \
        if (rc_ < 0) bench_die_zc(prog, what, rc_); \
    } while (0)

#endif
