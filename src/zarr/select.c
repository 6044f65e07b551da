/* zarr/select.c — planning a hyperslab over the chunk grid (see select.h). */
#include "zarr/select.h"

#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"

int zarr_sel_plan(const zc_zarr *a, const zc_range *sel, zarr_sel *s)
{
    memset(s, 0, sizeof *s);
    const zarr_meta *m = &a->m;
    s->ndim = m->ndim;
    size_t nch = 1, nel = 1;
    for (int d = 0; d < m->ndim; d++) {
        int64_t start = sel ? sel[d].start : 0, stop = sel ? sel[d].stop : m->shape[d];
        int64_t step = sel ? sel[d].step : 1;
        if (step <= 0) return zc__err(ZC_ERANGE, "dimension %d: step %lld must be positive", d, (long long)step);
        if (start < 0 || stop > m->shape[d] || start > stop)
            return zc__err(ZC_ERANGE, "dimension %d: selection %lld:%lld is outside 0:%lld", d, (long long)start,
                           (long long)stop, (long long)m->shape[d]);
        s->start[d] = start;
        s->step[d] = step;
        s->count[d] = stop > start ? (stop - start - 1) / step + 1 : 0;
        if (ck_mul_sz(nel, (size_t)s->count[d], &nel))
            return zc__err(ZC_EOVERFLOW, "selection size overflows");
    }
    s->nelems = nel;
    /* strides */
    int64_t os = (int64_t)m->dtype.size, cs = (int64_t)m->dtype.size;
    for (int d = m->ndim - 1; d >= 0; d--) {
        s->ostride[d] = os;
        s->cstride[d] = cs;
        os *= s->count[d] ? s->count[d] : 1;
        cs *= a->rchunk[d];
    }
    if (nel == 0) {
        s->nchunks = 0;
        return 0;
    }
    for (int d = 0; d < m->ndim; d++) {
        int64_t cs_d = a->rchunk[d], n = s->count[d], a0 = s->start[d], st = s->step[d];
        /* count spans first: O(touched chunks) */
        int64_t k = 0, ns = 0;
        while (k < n) {
            int64_t c = (a0 + k * st) / cs_d;
            int64_t klast = ((c + 1) * cs_d - 1 - a0) / st;
            if (klast > n - 1) klast = n - 1;
            k = klast + 1;
            ns++;
        }
        s->spans[d] = zc__malloc_array((size_t)ns, sizeof(zarr_span));
        if (!s->spans[d]) {
            zarr_sel_free(s);
            return ZC_ENOMEM;
        }
        k = 0;
        ns = 0;
        while (k < n) {
            int64_t i = a0 + k * st, c = i / cs_d;
            int64_t klast = ((c + 1) * cs_d - 1 - a0) / st;
            if (klast > n - 1) klast = n - 1;
            s->spans[d][ns++] = (zarr_span){c, k, i - c * cs_d, klast - k + 1};
            k = klast + 1;
        }
        s->nspans[d] = ns;
        if (ck_mul_sz(nch, (size_t)ns, &nch)) {
            zarr_sel_free(s);
            return zc__err(ZC_EOVERFLOW, "number of chunks overflows");
        }
    }
    s->nchunks = nch;
    return 0;
}

void zarr_sel_free(zarr_sel *s)
{
    for (int d = 0; d < ZC_MAX_DIMS; d++) {
        zc__free(s->spans[d]);
        s->spans[d] = NULL;
    }
}

void zarr_sel_unravel(const zarr_sel *s, size_t t, int64_t *j)
{
    for (int d = s->ndim - 1; d >= 0; d--) {
        j[d] = (int64_t)(t % (size_t)s->nspans[d]);
        t /= (size_t)s->nspans[d];
    }
}

int zc_zarr_selection_size(const zc_zarr *a, const zc_range *sel, size_t *nbytes)
{
    zc__err_clear();
    if (!a || !nbytes) return zc__err(ZC_EINVAL, "zc_zarr_selection_size: NULL argument");
    zarr_sel s;
    /* plan without spans: only counts are needed */
    size_t n = 1;
    for (int d = 0; d < a->m.ndim; d++) {
        int64_t start = sel ? sel[d].start : 0, stop = sel ? sel[d].stop : a->m.shape[d];
        int64_t step = sel ? sel[d].step : 1;
        if (step <= 0 || start < 0 || stop > a->m.shape[d] || start > stop)
            return zarr_sel_plan(a, sel, &s); /* same checks, same message */
        size_t c = stop > start ? (size_t)((stop - start - 1) / step + 1) : 0;
        if (ck_mul_sz(n, c, &n)) return zc__err(ZC_EOVERFLOW, "selection size overflows");
    }
    if (ck_mul_sz(n, a->m.dtype.size, nbytes)) return zc__err(ZC_EOVERFLOW, "selection size overflows");
    return 0;
}
