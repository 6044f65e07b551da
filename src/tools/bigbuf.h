/* tools/bigbuf.h — buffers of megabytes for whole-array file IO.
 *
 * A buffer of BIGBUF_HUGE_MIN or more is aligned to 2 MiB and advised to use
 * 2 MiB pages where the system offers them on request (THP "madvise", the
 * Debian default): its first use then costs a fault per 2 MiB, not per 4 KiB
 * (`zcube get` of 512 MiB into one 256 MiB buffer of 4 KiB pages: 64,000
 * faults, a third of its system time), and the kernel's copies to and from
 * it take fewer TLB misses. Smaller buffers are plain malloc. */
#ifndef ZC_TOOLS_BIGBUF_H
#define ZC_TOOLS_BIGBUF_H

#include <stdbool.h>
#include <stddef.h>

#define BIGBUF_HUGE_MIN ((size_t)2 << 20)

/* n bytes (at least 1), or NULL. Free with bigbuf_free. */
void *bigbuf_alloc(size_t n);
void bigbuf_free(void *p);

#endif
