/* zarr/keys.c — chunk and metadata keys.
 *
 *   v3 default encoding:  <path>/c/<i>/<j>   ("c" alone for 0-d; separator '/' or '.')
 *   v2 encoding:          <path>/<i>.<j>     ("0" for 0-d; separator '.' or '/') */
#include <stdio.h>

#include "core/error.h"
#include "zarr/zarr.h"

int zarr_chunk_key(const zc_zarr *a, const int64_t *idx, char *buf, size_t size)
{
    size_t k = 0;
    int n;
    char sep = a->m.separator;
    if (a->path[0]) {
        n = snprintf(buf, size, "%s/", a->path);
        if (n < 0 || (size_t)n >= size) goto too_long;
        k = (size_t)n;
    }
    if (!a->m.v2_key_encoding) {
        if (k + 2 > size) goto too_long;
        buf[k++] = 'c';
        buf[k] = 0;
    } else if (a->m.ndim == 0) {
        n = snprintf(buf + k, size - k, "0");
        if (n < 0 || (size_t)n >= size - k) goto too_long;
        return 0;
    }
    for (int d = 0; d < a->m.ndim; d++) {
        bool first = a->m.v2_key_encoding && d == 0;
        n = first ? snprintf(buf + k, size - k, "%lld", (long long)idx[d])
                  : snprintf(buf + k, size - k, "%c%lld", sep, (long long)idx[d]);
        if (n < 0 || (size_t)n >= size - k) goto too_long;
        k += (size_t)n;
    }
    return 0;
too_long:
    return zc__err(ZC_EOVERFLOW, "chunk key for array '%s' is too long", a->path);
}

int zarr_meta_key(const char *path, const char *name, char *buf, size_t size)
{
    int n = path[0] ? snprintf(buf, size, "%s/%s", path, name) : snprintf(buf, size, "%s", name);
    if (n < 0 || (size_t)n >= size) return zc__err(ZC_EOVERFLOW, "key '%s/%s' is too long", path, name);
    return 0;
}
