/* plan/kind.c — the registry of node kinds (see kind.h) and the helpers the
 * kinds share: projecting a read of stored chunks, parameters in saved plans. */
#include "plan/kind.h"

#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/error.h"
#include "codec/codec.h"
#include "zarr/zarr.h"

/* the rows, each defined in its kind's file */
extern const node_kind_def kind_zarr, kind_buffer, kind_create, kind_scalar;  /* plan/source.c */
extern const node_kind_def kind_ew;                                           /* plan/elementwise.c */
extern const node_kind_def kind_slice;                                        /* plan/slice.c */
extern const node_kind_def kind_reduce;                                       /* plan/reduce.c */
extern const node_kind_def kind_rechunk;                                      /* plan/rechunk.c */
extern const node_kind_def kind_reshape, kind_view, kind_concat, kind_gather, kind_totals, kind_scan; /* plan/manip.c */
extern const node_kind_def kind_matmul;                                       /* plan/matmul.c */
extern const node_kind_def kind_decomp;                                       /* plan/decomp.c */
extern const node_kind_def kind_fft;                                          /* plan/fft.c */
extern const node_kind_def kind_compress;                                     /* plan/compress.c */
extern const node_kind_def kind_sort;                                         /* plan/sort.c */
extern const node_kind_def kind_search;                                       /* plan/search.c */
extern const node_kind_def kind_take_along;                                   /* plan/take_along.c */

static const node_kind_def *const KINDS[NODE_KIND_END_] = {
    [NODE_ZARR] = &kind_zarr,       [NODE_BUFFER] = &kind_buffer, [NODE_CREATE] = &kind_create,
    [NODE_SCALAR] = &kind_scalar,   [NODE_EW] = &kind_ew,         [NODE_SLICE] = &kind_slice,
    [NODE_REDUCE] = &kind_reduce,   [NODE_RECHUNK] = &kind_rechunk,
    [NODE_RESHAPE] = &kind_reshape, [NODE_VIEW] = &kind_view,     [NODE_CONCAT] = &kind_concat,
    [NODE_GATHER] = &kind_gather,   [NODE_TOTALS] = &kind_totals, [NODE_SCAN] = &kind_scan,
    [NODE_MATMUL] = &kind_matmul,   [NODE_DECOMP] = &kind_decomp, [NODE_FFT] = &kind_fft,
    [NODE_COMPRESS] = &kind_compress,
    [NODE_SORT] = &kind_sort,       [NODE_SEARCH] = &kind_search, [NODE_TAKE_ALONG] = &kind_take_along,
};

const node_kind_def *kind_def(node_kind k) { return KINDS[k]; }

int kind_by_json(const char *json, node_kind *k)
{
    for (int i = 0; i < NODE_KIND_END_; i++)
        if (KINDS[i] && !strcmp(KINDS[i]->json, json)) {
            *k = (node_kind)i;
            return 0;
        }
    return -1;
}

/* How a read's alignment is known: the worst over positions, a tile of a
 * grid from the origin, or exactly (sel is the very region read). */
typedef enum { AT_WORST, AT_TILE, AT_EXACT } read_at;

/* Bytes a read of exactly sel from an uncompressed array holds beyond the
 * destination (zarr/read.c): a unit it covers whole and that lands contiguous
 * in the destination is read straight into it; another one covered whole is
 * mapped (its pages counted); of a part of one, the bytes from its first
 * selected element to its last. SIZE_MAX: steps, or more units than this
 * sums (64, a batch's). */
static size_t plain_exact(const zc_array *a, const int64_t *chunks, const zc_range *sel)
{
    int nd = a->ndim;
    int64_t first[ZC_MAX_DIMS], nu[ZC_MAX_DIMS], idx[ZC_MAX_DIMS] = {0}, units = 1;
    for (int d = 0; d < nd; d++)
        if (range_count(&sel[d]) == 0) return 0;
    for (int d = 0; d < nd; d++) {
        if (sel[d].step != 1) return SIZE_MAX;
        first[d] = sel[d].start / chunks[d];
        nu[d] = (sel[d].stop - 1) / chunks[d] - first[d] + 1;
        if (nu[d] > 64 || (units *= nu[d]) > 64) return SIZE_MAX; /* checked as it grows: no overflow */
    }
    size_t total = 0;
    for (int64_t u = 0; u < units; u++) {
        int64_t cnt[ZC_MAX_DIMS];
        bool whole = true;
        for (int d = 0; d < nd; d++) {
            int64_t c0 = (first[d] + idx[d]) * chunks[d], c1 = c0 + chunks[d];
            int64_t s0 = sel[d].start > c0 ? sel[d].start : c0, s1 = sel[d].stop < c1 ? sel[d].stop : c1;
            cnt[d] = s1 - s0;
            whole &= cnt[d] == chunks[d]; /* an edge chunk is never whole (zarr/read.c unit_geometry) */
        }
        /* contiguous in the destination: full extent from the last dim on, then 1s */
        int k = nd - 1;
        while (k >= 0 && cnt[k] == range_count(&sel[k])) k--;
        bool contig = true;
        for (int d = k - 1; d >= 0; d--) contig &= cnt[d] == 1;
        size_t st = a->itemsize, span = 0; /* st: the chunk's bytes at the end */
        for (int d = nd - 1; d >= 0; d--) {
            span += (size_t)(cnt[d] - 1) * st;
            st *= (size_t)chunks[d];
        }
        if (!(whole && contig)) total += whole ? st : span + a->itemsize;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < nu[d]) break;
            idx[d] = 0;
        }
    }
    return total;
}

/* Bytes to read sel of a stored in chunks of `chunks`. Along each dim, a span
 * starting at offset o within a chunk touches (o + span - 1) / chunk + 1
 * chunks; o is at most chunk - 1, or, where sel is a tile of a grid from the
 * origin, chunk - gcd(span, chunk) (tiles start at multiples of span), or
 * exactly sel's. An uncompressed zarr array or intermediate is read straight
 * from its bytes (zarr/read.c: no scratch chunk), and where every unit lands
 * whole and contiguous in the destination, with no buffer of its own. */
static size_t proj_read(const zc_array *a, const int64_t *chunks, const zc_range *sel, read_at at)
{
    bool tiled = at == AT_TILE;
    for (int d = 0; d < a->ndim; d++) tiled &= sel[d].start == 0 && sel[d].step == 1;
    bool plain = a->stored_plain || (a->kind == NODE_ZARR && a->p.zarr.z && codec_chain_is_identity(a->p.zarr.z->chain));
    if (plain && at == AT_EXACT) {
        size_t b = plain_exact(a, chunks, sel);
        if (b != SIZE_MAX) return b;
    }
    size_t chunk = a->itemsize, touched = 1;
    for (int d = 0; d < a->ndim; d++) {
        int64_t n = range_count(&sel[d]), c = chunks[d];
        if (!n) return 0;
        chunk = ck_sat_mul(chunk, (size_t)c);
        int64_t span = (n - 1) * sel[d].step + 1, grid = ck_ceildiv(a->shape[d], c);
        int64_t o = at == AT_EXACT ? sel[d].start % c : tiled ? c - ck_gcd(span, c) : c - 1;
        int64_t t = (o + span - 1) / c + 1;
        touched = ck_sat_mul(touched, (size_t)(t < grid ? t : grid));
    }
    return ck_sat_mul(chunk, (plain ? 0 : 1) + (touched < 64 ? touched : 64));
}

size_t node_proj_read(const zc_array *a, const int64_t *chunks, const zc_range *sel)
{
    return proj_read(a, chunks, sel, AT_WORST);
}

size_t node_proj_read_tiled(const zc_array *a, const int64_t *chunks, const zc_range *sel)
{
    return proj_read(a, chunks, sel, AT_TILE);
}

size_t node_proj_read_exact(const zc_array *a, const int64_t *chunks, const zc_range *sel)
{
    return proj_read(a, chunks, sel, AT_EXACT);
}

json_t *kind_int_array(const int64_t *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
    return a;
}

void kind_view_to_json(json_t *o, const int *in_dim, const int64_t *start, const int64_t *step, const int64_t *fixed,
                       int ndim, int in_ndim)
{
    int64_t dims[ZC_MAX_DIMS];
    for (int d = 0; d < ndim; d++) dims[d] = in_dim[d];
    json_object_set_new(o, "in_dim", kind_int_array(dims, ndim));
    json_object_set_new(o, "start", kind_int_array(start, ndim));
    json_object_set_new(o, "step", kind_int_array(step, ndim));
    json_object_set_new(o, "fixed", kind_int_array(fixed, in_ndim));
}

int kind_ints(const json_t *a, int64_t *out, int max)
{
    if (!json_is_array(a) || json_array_size(a) > (size_t)max) return zc__err(ZC_EFORMAT, "plan: bad integer list");
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_integer(v)) return zc__err(ZC_EFORMAT, "plan: integer list holds a non-integer");
        out[i] = json_integer_value(v);
    }
    return (int)json_array_size(a);
}

int kind_get_ints(const json_t *o, const char *key, int64_t *out, int n, int i)
{
    if (kind_ints(json_object_get(o, key), out, ZC_MAX_DIMS) != n)
        return zc__err(ZC_EFORMAT, "plan: node %d: '%s' must list %d integers", i, key, n);
    return 0;
}

zc_dtype kind_dtype_of(const json_t *v)
{
    zc_dtype t = ZC_DTYPE_INVALID;
    const char *s = json_string_value(v);
    if (s && !strcmp(s, "raw")) return ZC_RAW;
    if (s && !strcmp(s, "bytes")) return ZC_BYTES;
    if (s && !strcmp(s, "unicode")) return ZC_UNICODE;
    if (s) zc_dtype_parse(s, &t, NULL);
    return t;
}

int kind_store_url(zc_store *st, char *buf, size_t size)
{
    if (!strncmp(st->url, "memory://", 9))
        return zc__err(ZC_EUNSUPPORTED, "store '%s' lives in this process's memory: workers cannot reach it", st->url);
    if (strstr(st->url, "://") && strncmp(st->url, "file://", 7)) { /* s3://, http(s)://: absolute already */
        snprintf(buf, size, "%s", st->url);
        return 0;
    }
    const char *path = !strncmp(st->url, "file://", 7) ? st->url + 7 : st->url;
    char real[PATH_MAX];
    if (!realpath(path, real)) return zc__err_sys(errno, "resolving store path '%s'", path);
    snprintf(buf, size, "%s", real);
    return 0;
}
