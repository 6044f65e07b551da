/* core/buf.c — growable byte buffer. */
#include "core/buf.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

int buf_reserve(zc_buf *b, size_t cap)
{
    if (cap <= b->cap) return 0;
    /* the first reservation is exact (an encoder reserves its bound once); growth
     * after that doubles, so appends stay amortized O(1) */
    size_t ncap = cap;
    if (b->cap && b->cap <= (size_t)-1 / 2 && 2 * b->cap > cap) ncap = 2 * b->cap;
    unsigned char *p = zc__realloc(b->data, ncap);
    if (!p) return ZC_ENOMEM;
    b->data = p;
    b->cap = ncap;
    return 0;
}

int buf_append(zc_buf *b, const void *src, size_t n)
{
    if (n > (size_t)-1 - b->size) return zc__err(ZC_EOVERFLOW, "buffer size overflows");
    ZC_TRY(buf_reserve(b, b->size + n));
    if (n) memcpy(b->data + b->size, src, n);
    b->size += n;
    return 0;
}

void buf_free(zc_buf *b)
{
    zc__free(b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}

void *buf_take(zc_buf *b, size_t *size)
{
    void *d = b->data;
    if (size) *size = b->size;
    b->data = NULL;
    b->size = b->cap = 0;
    return d;
}
