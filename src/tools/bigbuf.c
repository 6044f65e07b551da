/* tools/bigbuf.c — buffers of megabytes for whole-array file IO. See bigbuf.h. */
#include "bigbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

void *bigbuf_alloc(size_t n)
{
    if (n < BIGBUF_HUGE_MIN) return malloc(n ? n : 1);
    size_t whole = (n + BIGBUF_HUGE_MIN - 1) & ~(BIGBUF_HUGE_MIN - 1);
    if (whole < n) return NULL; /* overflow */
    void *p = NULL;
    if (posix_memalign(&p, BIGBUF_HUGE_MIN, whole)) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, whole, MADV_HUGEPAGE); /* advice only: failure changes nothing */
#endif
    return p;
}

void bigbuf_free(void *p) { free(p); }
