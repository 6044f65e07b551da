/* core/buf.h — a growable byte buffer owned by the library. */
#ifndef ZC_CORE_BUF_H
#define ZC_CORE_BUF_H

#include <stddef.h>

typedef struct {
    unsigned char *data; /* zc__malloc'd, or NULL */
    size_t size;         /* bytes in use */
    size_t cap;          /* bytes allocated */
} zc_buf;

/* Make room for at least `cap` bytes (keeps contents). */
int buf_reserve(zc_buf *b, size_t cap);
/* Append n bytes. */
int buf_append(zc_buf *b, const void *src, size_t n);
void buf_free(zc_buf *b);
/* Hand the data to the caller (who frees with zc__free) and reset b. */
void *buf_take(zc_buf *b, size_t *size);

#endif
