/* loader/sampler.c — sources, the shared index space, and reading one batch.
 *
 * Batch `step`: epoch e = step / batches_per_epoch, b = step % batches_per_epoch.
 * Slot i of the batch takes window perm_e(b × batch + i); a window rejected for
 * NaN/fill is replaced by draw hash(seed, step, i, attempt) mod N — still a pure
 * function of (seed, step), so any batch can be reproduced alone. Windows are
 * read in parallel on the pool, one task per slot (all sources of the slot), and
 * each lands straight in its place in the batch buffer. */
#include "loader/sampler.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "zarr/read.h"

#define MAX_WINDOWS_LOG2 62

int zc_sampler_create(const zc_sampler_opts *o, zc_sampler **out)
{
    zc__err_clear();
    if (!o || !out) return zc__err(ZC_EINVAL, "zc_sampler_create: NULL argument");
    *out = NULL;
    if (o->struct_size < offsetof(zc_sampler_opts, max_redraws) || o->struct_size > sizeof *o)
        return zc__err(ZC_EINVAL, "zc_sampler_create: struct_size %u is not a known version", o->struct_size);
    if (o->batch_size < 1) return zc__err(ZC_EINVAL, "batch size must be at least 1 (got %d)", o->batch_size);
    if (o->mode != ZC_SAMPLE_RANDOM && o->mode != ZC_SAMPLE_GRID)
        return zc__err(ZC_EINVAL, "unknown sampling mode %d", (int)o->mode);
    if (o->nthreads < 0 || o->prefetch < 0 || o->prefetch > 256)
        return zc__err(ZC_EINVAL, "threads must be >= 0 and prefetch 0..256");
    zc_sampler *s = zc__calloc(1, sizeof *s);
    if (!s) return ZC_ENOMEM;
    memcpy(&s->o, o, o->struct_size);
    if (s->o.max_redraws <= 0) s->o.max_redraws = 1000;
    pthread_mutex_init(&s->setup_lock, NULL);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->held = -1;
    *out = s;
    return 0;
}

void zc_sampler_free(zc_sampler *s)
{
    if (!s) return;
    sampler_prefetch_stop(s);
    sampler_prefetch_free(s);
    pthread_mutex_destroy(&s->setup_lock);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    zc__free(s);
}

static int find_axis(zc_sampler *s, const char *name)
{
    for (int i = 0; i < s->naxes; i++)
        if (!strcmp(s->axis_name[i], name)) return i;
    if (s->naxes == SAMPLER_MAX_AXES) return zc__err(ZC_EINVAL, "too many distinct dimension names (%d)", SAMPLER_MAX_AXES);
    snprintf(s->axis_name[s->naxes], sizeof s->axis_name[0], "%s", name);
    return s->naxes++;
}

int zc_sampler_add_source(zc_sampler *s, const zc_sampler_source *in)
{
    zc__err_clear();
    if (!s || !in || !in->array) return zc__err(ZC_EINVAL, "zc_sampler_add_source: NULL argument");
    if (in->struct_size < offsetof(zc_sampler_source, overlap) || in->struct_size > sizeof *in)
        return zc__err(ZC_EINVAL, "zc_sampler_add_source: struct_size %u is not a known version", in->struct_size);
    pthread_mutex_lock(&s->setup_lock);
    int rc = 0;
    if (s->ready) {
        rc = zc__err(ZC_EINVAL, "sources must be added before the first batch");
        goto out;
    }
    if (s->nsrc == SAMPLER_MAX_SOURCES) {
        rc = zc__err(ZC_EINVAL, "at most %d sources", SAMPLER_MAX_SOURCES);
        goto out;
    }
    zc_sampler_source src;
    memset(&src, 0, sizeof src);
    memcpy(&src, in, in->struct_size);
    sampler_source *k = &s->src[s->nsrc];
    memset(k, 0, sizeof *k);
    k->arr = src.array;
    const zarr_meta *m = &k->arr->m;
    snprintf(k->name, sizeof k->name, "%s", src.name ? src.name : k->arr->path);
    k->ndim = m->ndim;
    size_t elems = 1;
    for (int d = 0; d < m->ndim; d++) {
        int64_t w = src.window[d];
        if (w < 1 || w > m->shape[d]) {
            rc = zc__err(ZC_EINVAL, "source '%s': window %lld does not fit dimension %d of size %lld", k->name,
                         (long long)w, d, (long long)m->shape[d]);
            goto out;
        }
        if (src.jitter[d] < 0 || src.overlap[d] < 0 || src.overlap[d] >= w) {
            rc = zc__err(ZC_EINVAL, "source '%s': dimension %d needs jitter >= 0 and 0 <= overlap < window", k->name, d);
            goto out;
        }
        char dflt[32];
        const char *name = src.dims[d];
        json_t *dn = m->dimension_names ? json_array_get(m->dimension_names, (size_t)d) : NULL;
        if (!name && json_is_string(dn)) name = json_string_value(dn);
        if (!name) {
            snprintf(dflt, sizeof dflt, "dim%d", d);
            name = dflt;
        }
        for (int e = 0; e < d; e++)
            if (!strcmp(s->axis_name[k->axis[e]], name)) {
                rc = zc__err(ZC_EINVAL, "source '%s': dimension name '%s' is used twice", k->name, name);
                goto out;
            }
        if ((rc = find_axis(s, name)) < 0) goto out;
        k->axis[d] = rc;
        rc = 0;
        k->window[d] = w;
        k->offset[d] = src.offset[d];
        k->jitter[d] = src.jitter[d];
        k->overlap[d] = src.overlap[d];
        if (ck_mul_sz(elems, (size_t)w, &elems)) {
            rc = zc__err(ZC_EOVERFLOW, "source '%s': window size overflows", k->name);
            goto out;
        }
    }
    if (ck_mul_sz(elems, m->dtype.size, &k->win_bytes) ||
        ck_mul_sz(k->win_bytes, (size_t)s->o.batch_size, &elems)) {
        rc = zc__err(ZC_EOVERFLOW, "source '%s': batch size overflows", k->name);
        goto out;
    }
    zc_zarr_io_stats(k->arr, &k->base);
    s->nsrc++;
out:
    pthread_mutex_unlock(&s->setup_lock);
    return rc;
}

int sampler_prepare(zc_sampler *s)
{
    pthread_mutex_lock(&s->setup_lock);
    int rc = 0;
    if (s->ready) goto out;
    if (s->nsrc == 0) {
        rc = zc__err(ZC_EINVAL, "the sampler has no source");
        goto out;
    }
    for (int x = 0; x < s->naxes; x++) {
        s->lo[x] = INT64_MIN;
        s->hi[x] = INT64_MAX;
        s->stride[x] = 0;
    }
    for (int k = 0; k < s->nsrc; k++) {
        const sampler_source *c = &s->src[k];
        for (int d = 0; d < c->ndim; d++) {
            int x = c->axis[d];
            int64_t lo = c->jitter[d] - c->offset[d];
            int64_t hi = c->arr->m.shape[d] - c->window[d] - c->jitter[d] - c->offset[d];
            if (lo > s->lo[x]) s->lo[x] = lo;
            if (hi < s->hi[x]) s->hi[x] = hi;
            if (!s->stride[x]) s->stride[x] = s->o.mode == ZC_SAMPLE_GRID ? c->window[d] - c->overlap[d] : 1;
            if (s->hi[x] < s->lo[x]) {
                rc = zc__err(ZC_EINVAL,
                             "source '%s': dimension %d ('%s'): no window origin fits every source there "
                             "(window %lld, jitter %lld, offset %lld, size %lld)",
                             c->name, d, s->axis_name[x], (long long)c->window[d], (long long)c->jitter[d],
                             (long long)c->offset[d], (long long)c->arr->m.shape[d]);
                goto out;
            }
        }
    }
    int64_t n = 1;
    for (int x = 0; x < s->naxes; x++) {
        s->count[x] = (s->hi[x] - s->lo[x]) / s->stride[x] + 1;
        if (ck_mul_i64(n, s->count[x], &n) || n > (INT64_C(1) << MAX_WINDOWS_LOG2)) {
            rc = zc__err(ZC_EOVERFLOW, "more than 2^%d windows per epoch", MAX_WINDOWS_LOG2);
            goto out;
        }
    }
    s->nwindows = n;
    s->nbatches = n / s->o.batch_size;
    if (s->nbatches == 0) {
        rc = zc__err(ZC_EINVAL, "an epoch has %lld windows, fewer than one batch of %d", (long long)n, s->o.batch_size);
        goto out;
    }
    s->ready = true;
out:
    pthread_mutex_unlock(&s->setup_lock);
    return rc;
}

int zc_sampler_epoch_size(zc_sampler *s, int64_t *windows, int64_t *batches)
{
    zc__err_clear();
    if (!s) return zc__err(ZC_EINVAL, "zc_sampler_epoch_size: NULL sampler");
    ZC_TRY(sampler_prepare(s));
    if (windows) *windows = s->nwindows;
    if (batches) *batches = s->nbatches;
    return 0;
}

int zc_sampler_batch_bytes(zc_sampler *s, int k, size_t *nbytes)
{
    if (!s || !nbytes || k < 0 || k >= s->nsrc) return zc__err(ZC_EINVAL, "zc_sampler_batch_bytes: bad source %d", k);
    *nbytes = s->src[k].win_bytes * (size_t)s->o.batch_size;
    return 0;
}

/* ---- one batch ---- */

typedef struct {
    zc_sampler *s;
    int64_t step;
    perm p;
    int64_t first;          /* b × batch_size */
    void *const *data;
    int64_t *const *origins;
    atomic_llong rejected;
} batch_ctx;

static bool has_nan(const void *p, size_t n, zc_dtype t)
{
    switch (t) {
    case ZC_FLOAT32: case ZC_COMPLEX64: {
        const float *f = p;
        size_t m = n * (t == ZC_COMPLEX64 ? 2 : 1);
        for (size_t i = 0; i < m; i++)
            if (isnan(f[i])) return true;
        return false;
    }
    case ZC_FLOAT64: case ZC_COMPLEX128: {
        const double *f = p;
        size_t m = n * (t == ZC_COMPLEX128 ? 2 : 1);
        for (size_t i = 0; i < m; i++)
            if (isnan(f[i])) return true;
        return false;
    }
    case ZC_FLOAT16: {
        const uint16_t *h = p;
        for (size_t i = 0; i < n; i++)
            if ((h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff)) return true;
        return false;
    }
    default: return false;
    }
}

static bool has_fill(const zc_zarr *a, const unsigned char *p, size_t n)
{
    size_t isz = a->m.dtype.size;
    for (size_t i = 0; i < n; i++)
        if (!memcmp(p + i * isz, a->m.fill, isz)) return true;
    return false;
}

static int read_slot(void *vctx, size_t i, int slot)
{
    batch_ctx *c = vctx;
    zc_sampler *s = c->s;
    uint64_t w = perm_index(&c->p, (uint64_t)(c->first + (int64_t)i));
    for (int attempt = 0;; attempt++) {
        if (attempt > 0) {
            if (attempt > s->o.max_redraws)
                return zc__err(ZC_ERANGE, "batch %lld slot %zu: no acceptable window in %d draws (NaN or fill)",
                               (long long)c->step, i, s->o.max_redraws);
            w = hash4(s->o.seed, (uint64_t)c->step, i, (uint64_t)attempt) % (uint64_t)s->nwindows;
            atomic_fetch_add(&c->rejected, 1);
        }
        int64_t pos[SAMPLER_MAX_AXES];
        uint64_t r = w;
        for (int x = s->naxes - 1; x >= 0; x--) {
            pos[x] = s->lo[x] + (int64_t)(r % (uint64_t)s->count[x]) * s->stride[x];
            r /= (uint64_t)s->count[x];
        }
        bool reject = false;
        for (int k = 0; k < s->nsrc && !reject; k++) {
            const sampler_source *src = &s->src[k];
            zc_range sel[ZC_MAX_DIMS];
            int64_t *org = c->origins && c->origins[k] ? c->origins[k] + (int64_t)i * src->ndim : NULL;
            for (int d = 0; d < src->ndim; d++) {
                int64_t o = pos[src->axis[d]] + src->offset[d];
                if (src->jitter[d]) {
                    uint64_t h = hash4(s->o.seed ^ 0x6a6974746572ull, (uint64_t)c->step, i * 1024 + (uint64_t)attempt,
                                       (uint64_t)(k * ZC_MAX_DIMS + d));
                    o += (int64_t)(h % (uint64_t)(2 * src->jitter[d] + 1)) - src->jitter[d];
                }
                sel[d] = (zc_range){o, o + src->window[d], 1};
                if (org) org[d] = o;
            }
            unsigned char *dst = (unsigned char *)c->data[k] + i * src->win_bytes;
            /* windows come back to the same files: map them (read.h) */
            int rc = zarr_read_flags(src->arr, sel, dst, src->win_bytes, ZARR_READ_MAP);
            if (rc < 0) return zc__err_wrap(rc, "source '%s', batch %lld", src->name, (long long)c->step);
            size_t n = src->win_bytes / src->arr->m.dtype.size;
            if (s->o.reject_nan && has_nan(dst, n, src->arr->m.dtype.type)) reject = true;
            if (s->o.reject_fill && !src->arr->m.fill_null && has_fill(src->arr, dst, n)) reject = true;
        }
        if (!reject) return 0;
    }
}

int sampler_read_batch(zc_sampler *s, int64_t step, void *const *data, int64_t *const *origins, int64_t *rejected)
{
    if (step < 0) return zc__err(ZC_EINVAL, "batch step %lld is negative", (long long)step);
    batch_ctx c = {.s = s, .step = step, .data = data, .origins = origins};
    atomic_init(&c.rejected, 0);
    int64_t epoch = step / s->nbatches, b = step % s->nbatches;
    perm_init(&c.p, (uint64_t)s->nwindows, s->o.seed, (uint64_t)epoch);
    c.first = b * s->o.batch_size;
    int rc = pool_for(pool_default(), (size_t)s->o.batch_size, s->o.nthreads, read_slot, &c);
    if (rc < 0) return rc;
    int64_t rej = atomic_load(&c.rejected);
    atomic_fetch_add(&s->windows, s->o.batch_size);
    atomic_fetch_add(&s->rejected, rej);
    if (rejected) *rejected = rej;
    return 0;
}

int zc_sampler_read(zc_sampler *s, int64_t step, void *const *data, int64_t *const *origins)
{
    zc__err_clear();
    if (!s || !data) return zc__err(ZC_EINVAL, "zc_sampler_read: NULL argument");
    ZC_TRY(sampler_prepare(s));
    for (int k = 0; k < s->nsrc; k++)
        if (!data[k]) return zc__err(ZC_EINVAL, "zc_sampler_read: no buffer for source %d", k);
    return sampler_read_batch(s, step, data, origins, NULL);
}

int zc_sampler_stats(zc_sampler *s, zc_sampler_stats_t *st)
{
    if (!s || !st) return zc__err(ZC_EINVAL, "zc_sampler_stats: NULL argument");
    memset(st, 0, sizeof *st);
    st->windows = atomic_load(&s->windows);
    st->rejected = atomic_load(&s->rejected);
    for (int k = 0; k < s->nsrc; k++) {
        st->bytes_used += (int64_t)s->src[k].win_bytes * st->windows;
        bool seen = false; /* an array shared by two sources counts once */
        for (int j = 0; j < k; j++) seen |= s->src[j].arr == s->src[k].arr;
        if (seen) continue;
        zc_zarr_io_stats_t now;
        zc_zarr_io_stats(s->src[k].arr, &now);
        st->bytes_read += now.bytes_read - s->src[k].base.bytes_read;
        st->chunks_read += now.chunks_read - s->src[k].base.chunks_read;
    }
    return 0;
}
