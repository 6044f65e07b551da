/* plan/sort.c — the SORT node: regions, projections, the planner's choice of
 * steps, names, JSON (see sort.h).
 *
 * Geometry shared by the steps: in the values' dims (x for WHOLE and RUNS,
 * the node itself for MERGE) a region is O × K × I (O: elements before the
 * axis, K along it, I after it); its lines are the O·I pairs (o, i), in C
 * order, which is also the C order of the RUNS node's leading dims. */
#include "plan/sort.h"

#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "kernels/sort.h"
#include "plan/kind.h"

#define PAIR_BYTES (2 * sizeof(sort_pair)) /* per element sorted: pairs and the radix sort's copy */


static size_t vsize(const zc_array *a)
{
    size_t isz;
    zc_dtype t;
    zc_dtype_parse(zc_dtype_name(a->p.sort.vdtype), &t, &isz);
    return isz;
}

/* Bytes of one record of the runs. */
static size_t rec_size(const zc_array *a) { return vsize(a) + (a->p.sort.indices ? 8 : 0); }

/* Elements of run r of a line of n, and its samples. */
static int64_t run_len(const zc_array *a, int64_t n, int64_t r)
{
    int64_t e = n - r * a->p.sort.run;
    return e < a->p.sort.run ? e : a->p.sort.run;
}
static int64_t run_samples(const zc_array *a, int64_t len) { return len < a->p.sort.samples ? len : a->p.sort.samples; }
/* Position in its run of sample j of a run of len elements with s samples. */
static int64_t sample_pos(int64_t j, int64_t len, int64_t s) { return j * len / s; }

/* O and I of a region given in the values' dims. */
static void lines_of(int ndim, int ax, const zc_range *sel, int64_t *O, int64_t *I)
{
    *O = *I = 1;
    for (int d = 0; d < ndim; d++) {
        if (d < ax) *O *= range_count(&sel[d]);
        if (d > ax) *I *= range_count(&sel[d]);
    }
}

/* Write the result of element e (a pair's payload indexes `recs`) to out. */
static void put_result(const zc_array *a, const unsigned char *rec, size_t vsz, int64_t index, unsigned char *out)
{
    if (!a->p.sort.indices) memcpy(out, rec, vsz);
    else memcpy(out, &index, 8);
}

/* ---- WHOLE: whole lines pulled and sorted ---- */

static int whole_region(zc_array *a, const zc_range *sel, unsigned char *out)
{
    zc_array *x = a->inputs[0];
    int ax = a->p.sort.axis;
    int64_t n = x->shape[ax], O, I, K = range_count(&sel[ax]);
    zc_range isel[ZC_MAX_DIMS];
    memcpy(isel, sel, sizeof(zc_range) * (size_t)a->ndim);
    isel[ax] = (zc_range){0, n, 1};
    lines_of(a->ndim, ax, sel, &O, &I);
    if (!O || !I || !K) return 0;
    size_t vsz = x->itemsize, osz = a->itemsize, nb = node_region_bytes(x, isel);
    unsigned char *in = zc__malloc(nb ? nb : 1);
    sort_pair *p = zc__malloc(PAIR_BYTES * (size_t)n);
    int rc = !in || !p ? ZC_ENOMEM : node_region(x, isel, in);
    for (int64_t o = 0; o < O && rc == 0; o++)
        for (int64_t i = 0; i < I && rc == 0; i++) {
            const unsigned char *line = in + ((size_t)(o * n * I + i)) * vsz;
            sort_keys(x->dtype, a->p.sort.descending, line, (ptrdiff_t)(I * (int64_t)vsz), (size_t)n, p, 0);
            sort_pair *s = sort_radix(p, p + n, (size_t)n);
            if (!s) {
                rc = zc__err(ZC_EUNSUPPORTED, "sort: lines of more than 2^32 elements are not supported");
                break;
            }
            for (int64_t k = 0; k < K; k++) {
                int64_t e = (int64_t)s[sel[ax].start + k * sel[ax].step].val;
                put_result(a, line + (size_t)(e * I) * vsz, vsz, e, out + (size_t)((o * K + k) * I + i) * osz);
            }
        }
    zc__free(in);
    zc__free(p);
    return rc;
}

/* ---- RUNS: each run sorted, followed by its samples ---- */

static int runs_region(zc_array *a, const zc_range *sel, unsigned char *out)
{
    zc_array *x = a->inputs[0];
    int ax = a->p.sort.axis, last = a->ndim - 1;
    int64_t n = x->shape[ax], L = a->p.sort.run, W = L + a->p.sort.samples, K = range_count(&sel[last]);
    size_t vsz = x->itemsize, rec = a->itemsize;
    zc_range isel[ZC_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        if (d != ax) isel[d] = sel[d < ax ? d : d - 1];
    int64_t O, I;
    isel[ax] = (zc_range){0, 1, 1};
    lines_of(x->ndim, ax, isel, &O, &I);
    if (!O || !I || !K) return 0;
    unsigned char *in = NULL, *line = zc__malloc((size_t)W * rec);
    sort_pair *p = zc__malloc(PAIR_BYTES * (size_t)L);
    int rc = !line || !p ? ZC_ENOMEM : 0;
    int64_t first = sel[last].start, lastel = sel[last].start + (K - 1) * sel[last].step;
    for (int64_t r = first / W; r <= lastel / W && rc == 0; r++) {
        int64_t len = run_len(a, n, r), s = run_samples(a, len);
        isel[ax] = (zc_range){r * L, r * L + len, 1};
        zc__free(in);
        size_t nb = node_region_bytes(x, isel);
        if (!(in = zc__malloc(nb ? nb : 1)) || (rc = node_region(x, isel, in)) < 0) {
            if (!in) rc = ZC_ENOMEM;
            break;
        }
        for (int64_t o = 0; o < O && rc == 0; o++)
            for (int64_t i = 0; i < I; i++) {
                const unsigned char *src = in + (size_t)(o * len * I + i) * vsz;
                sort_keys(x->dtype, a->p.sort.descending, src, (ptrdiff_t)(I * (int64_t)vsz), (size_t)len, p, 0);
                sort_pair *q = sort_radix(p, p + len, (size_t)len);
                if (!q) {
                    rc = zc__err(ZC_EUNSUPPORTED, "sort: runs of more than 2^32 elements are not supported");
                    break;
                }
                memset(line, 0, (size_t)W * rec);
                for (int64_t k = 0; k < len; k++) {
                    int64_t e = (int64_t)q[k].val, index = r * L + e;
                    memcpy(line + (size_t)k * rec, src + (size_t)(e * I) * vsz, vsz);
                    if (a->p.sort.indices) memcpy(line + (size_t)k * rec + vsz, &index, 8);
                }
                for (int64_t j = 0; j < s; j++)
                    memcpy(line + (size_t)(L + j) * rec, line + (size_t)sample_pos(j, len, s) * rec, rec);
                /* the part of this run the region asks for */
                unsigned char *dst = out + (size_t)((o * I + i) * K) * rec;
                for (int64_t k = 0; k < K; k++) {
                    int64_t g = first + k * sel[last].step;
                    if (g / W == r) memcpy(dst + (size_t)k * rec, line + (size_t)(g - r * W) * rec, rec);
                }
            }
    }
    zc__free(in);
    zc__free(line);
    zc__free(p);
    return rc;
}

/* ---- MERGE ---- */

typedef struct {
    zc_array *runs;
    zc_range sel[ZC_MAX_DIMS]; /* one line of the runs (leading dims), the last dim set per read */
    int64_t n, R, L, W, s;
    size_t rec, vsz;
    zc_dtype vt;
    bool desc;
} merge_ctx;

static int read_runs(merge_ctx *m, int64_t from, int64_t to, unsigned char *dst)
{
    if (to <= from) return 0;
    m->sel[m->runs->ndim - 1] = (zc_range){from, to, 1};
    return node_region(m->runs, m->sel, dst);
}

/* Bounds of the count of run r's elements before a cut with c samples of r before it. */
static int64_t lo_of(const merge_ctx *m, int64_t r, int64_t c, const zc_array *a)
{
    int64_t len = run_len(a, m->n, r), s = run_samples(a, len);
    return c == 0 ? 0 : sample_pos(c - 1, len, s) + 1;
}
static int64_t hi_of(const merge_ctx *m, int64_t r, int64_t c, const zc_array *a)
{
    int64_t len = run_len(a, m->n, r), s = run_samples(a, len);
    return c >= s ? len : sample_pos(c, len, s);
}

/* A min-heap of runs by (key of their next sample, run): the samples of all
 * runs in the values' order, without sorting them (each run's are sorted). */
typedef struct {
    sort_pair *h; /* key, run */
    int64_t n;
} heap;

static bool heap_less(const sort_pair *x, const sort_pair *y) { return x->key < y->key || (x->key == y->key && x->val < y->val); }

static void heap_down(heap *q, int64_t i)
{
    for (;;) {
        int64_t l = 2 * i + 1, m = i;
        if (l < q->n && heap_less(&q->h[l], &q->h[m])) m = l;
        if (l + 1 < q->n && heap_less(&q->h[l + 1], &q->h[m])) m = l + 1;
        if (m == i) return;
        sort_pair t = q->h[i];
        q->h[i] = q->h[m];
        q->h[m] = t;
        i = m;
    }
}

/* The cuts of a merge of [o0, o1): the last sample whose rank is surely <= o0
 * (clo: per run, samples before it; its key and run and index in the run) and
 * the first whose rank is surely >= o1 (chi; T = after every sample). */
typedef struct {
    int64_t *clo, *chi;
    uint64_t key;
    int64_t run, j;
    bool end; /* the upper cut is after every sample */
} cuts;

/* Walk the samples in order, keeping per run the count before the walk's
 * place (c) and the sums of the bounds of the rank there (LO, HI). */
static void find_cuts(const zc_array *a, const merge_ctx *m, const uint64_t *keys, int64_t o0, int64_t o1,
                      int64_t *c, sort_pair *hp, cuts *k)
{
    int64_t R = m->R, LO = 0, HI = 0, last = -1;
    uint64_t lastkey = 0;
    heap q = {hp, 0};
    for (int64_t r = 0; r < R; r++) {
        c[r] = 0;
        if (run_samples(a, run_len(a, m->n, r)) > 0) q.h[q.n++] = (sort_pair){keys[r * m->s], (uint64_t)r};
    }
    for (int64_t i = q.n / 2 - 1; i >= 0; i--) heap_down(&q, i);
    bool lo_found = false;
    for (;;) {
        if (!lo_found && HI > o0) { /* the place before the last step was the lower cut */
            memcpy(k->clo, c, sizeof *c * (size_t)R);
            k->clo[last]--;
            k->key = lastkey;
            k->run = last;
            k->j = k->clo[last];
            lo_found = true;
        }
        if (LO >= o1 || q.n == 0) break;
        int64_t r = (int64_t)q.h[0].val;
        lastkey = q.h[0].key;
        last = r;
        LO -= lo_of(m, r, c[r], a);
        HI -= hi_of(m, r, c[r], a);
        c[r]++;
        LO += lo_of(m, r, c[r], a);
        HI += hi_of(m, r, c[r], a);
        if (c[r] < run_samples(a, run_len(a, m->n, r))) q.h[0].key = keys[r * m->s + c[r]];
        else q.h[0] = q.h[--q.n];
        heap_down(&q, 0);
    }
    k->end = LO < o1; /* every sample walked: the upper cut is the end */
    memcpy(k->chi, c, sizeof *c * (size_t)R);
    if (!lo_found) { /* all samples surely <= o0: the lower cut is the last one */
        memcpy(k->clo, c, sizeof *c * (size_t)R);
        k->clo[last]--;
        k->key = lastkey;
        k->run = last;
        k->j = k->clo[last];
    }
}

/* Elements [o0, o1) of one sorted line into out (`ostride` bytes apart). */
static int merge_line(const zc_array *a, merge_ctx *m, int64_t o0, int64_t o1, unsigned char *out, size_t ostride)
{
    int64_t R = m->R;
    int64_t *c = zc__malloc(sizeof(int64_t) * (size_t)(4 * R));
    uint64_t *keys = zc__malloc(sizeof(uint64_t) * (size_t)(R * m->s));
    unsigned char *samp = zc__malloc((size_t)m->s * m->rec), *data = NULL;
    sort_pair *hp = zc__malloc(sizeof(sort_pair) * (size_t)R), *dp = NULL;
    int rc = !c || !keys || !samp || !hp ? ZC_ENOMEM : 0;
    /* the samples' keys, run by run (each run's in order) */
    for (int64_t r = 0; r < R && rc == 0; r++) {
        int64_t len = run_len(a, m->n, r), s = run_samples(a, len);
        if ((rc = read_runs(m, r * m->W + m->L, r * m->W + m->L + s, samp)) < 0) break;
        for (int64_t j = 0; j < s; j++) keys[r * m->s + j] = sort_key(m->vt, m->desc, samp + (size_t)j * m->rec);
    }
    cuts k = {.clo = c + R, .chi = c + 2 * R};
    int64_t *lo = c + R, *end = c + 2 * R, *off = c + 3 * R, M = 0, base = 0;
    if (rc == 0) {
        find_cuts(a, m, keys, o0, o1, c, hp, &k);
        for (int64_t r = 0; r < R; r++) {
            lo[r] = lo_of(m, r, k.clo[r], a);
            end[r] = k.end ? run_len(a, m->n, r) : hi_of(m, r, k.chi[r], a);
            off[r] = M;
            M += end[r] - lo[r];
            base += lo[r];
        }
        data = zc__malloc((size_t)M * m->rec + 1);
        dp = zc__malloc(PAIR_BYTES * (size_t)M + 1);
        if (!data || !dp) rc = ZC_ENOMEM;
    }
    for (int64_t r = 0; r < R && rc == 0; r++)
        rc = read_runs(m, r * m->W + lo[r], r * m->W + end[r], data + (size_t)off[r] * m->rec);
    sort_pair *ms = NULL;
    if (rc == 0) {
        sort_keys(m->vt, m->desc, data, (ptrdiff_t)m->rec, (size_t)M, dp, 0);
        if (!(ms = sort_radix(dp, dp + M, (size_t)M))) rc = zc__err(ZC_EUNSUPPORTED, "sort: merge too large");
    }
    if (rc == 0) {
        /* the lower cut's place in what was read: the elements before it are less */
        int64_t len = run_len(a, m->n, k.run);
        uint64_t bc = (uint64_t)(off[k.run] + sample_pos(k.j, len, run_samples(a, len)) - lo[k.run]);
        int64_t l = 0, h = M;
        while (l < h) {
            int64_t mid = l + (h - l) / 2;
            if (ms[mid].key < k.key || (ms[mid].key == k.key && ms[mid].val < bc)) l = mid + 1;
            else h = mid;
        }
        int64_t rank = base + l; /* of the lower cut */
        if (o0 < rank || l + o1 - rank > M) {
            rc = zc__err(ZC_EINTERNAL, "sort: merge of [%lld, %lld) found the cut at %lld (read %lld)", (long long)o0,
                         (long long)o1, (long long)rank, (long long)M);
        } else {
            for (int64_t j = o0; j < o1; j++) {
                int64_t e = (int64_t)ms[l + j - rank].val;
                const unsigned char *rp = data + (size_t)e * m->rec;
                int64_t index = 0;
                if (a->p.sort.indices) memcpy(&index, rp + m->vsz, 8);
                put_result(a, rp, m->vsz, index, out + (size_t)(j - o0) * ostride);
            }
        }
    }
    zc__free(c);
    zc__free(keys);
    zc__free(samp);
    zc__free(hp);
    zc__free(data);
    zc__free(dp);
    return rc;
}

static int merge_region(zc_array *a, const zc_range *sel, unsigned char *out)
{
    merge_ctx m = {.runs = a->inputs[0], .n = a->shape[a->p.sort.axis], .R = a->p.sort.nruns, .L = a->p.sort.run,
                   .s = a->p.sort.samples, .vt = a->p.sort.vdtype, .desc = a->p.sort.descending};
    m.W = m.L + m.s;
    m.rec = m.runs->itemsize;
    m.vsz = vsize(a);
    int ax = a->p.sort.axis;
    int64_t O, I, K = range_count(&sel[ax]);
    lines_of(a->ndim, ax, sel, &O, &I);
    if (!O || !I || !K) return 0;
    int64_t o0 = sel[ax].start, o1 = sel[ax].start + (K - 1) * sel[ax].step + 1, span = o1 - o0;
    size_t osz = a->itemsize;
    unsigned char *tmp = NULL;
    if (sel[ax].step != 1 && !(tmp = zc__malloc((size_t)span * osz))) return ZC_ENOMEM;
    int rc = 0;
    for (int64_t l = 0; l < O * I && rc == 0; l++) {
        /* the line's index in the runs' leading dims (x's other dims, in order) */
        int64_t rest = l;
        for (int d = a->ndim - 1; d >= 0; d--) {
            if (d == ax) continue;
            int64_t cd = range_count(&sel[d]), g = sel[d].start + (rest % cd) * sel[d].step;
            rest /= cd;
            int rd = d < ax ? d : d - 1;
            m.sel[rd] = (zc_range){g, g + 1, 1};
        }
        int64_t o = l / I, i = l % I;
        unsigned char *dst = out + (size_t)(o * K * I + i) * osz;
        if (!tmp) {
            rc = merge_line(a, &m, o0, o1, dst, (size_t)I * osz);
            continue;
        }
        if ((rc = merge_line(a, &m, o0, o1, tmp, osz)) == 0)
            for (int64_t k = 0; k < K; k++) memcpy(dst + (size_t)(k * I) * osz, tmp + (size_t)(k * sel[ax].step) * osz, osz);
    }
    zc__free(tmp);
    return rc;
}

static int sort_region(zc_array *a, const zc_range *sel, void *out)
{
    switch (a->p.sort.step) {
    case SORT_WHOLE: return whole_region(a, sel, out);
    case SORT_RUNS: return runs_region(a, sel, out);
    case SORT_MERGE: return merge_region(a, sel, out);
    }
    return zc__err(ZC_EINTERNAL, "sort: unknown step %d", a->p.sort.step);
}

/* ---- projections ---- */

/* Elements a merge of a span of K reads per line, at most. */
static int64_t merge_reads(const zc_array *a, int64_t K)
{
    int64_t g = ck_ceildiv(a->p.sort.run, a->p.sort.samples);
    return K + 2 * (a->p.sort.nruns + 1) * g;
}

static size_t sort_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    const zc_array *x = a->inputs[0];
    int ax = a->p.sort.axis;
    if (a->p.sort.step == SORT_MERGE) {
        int64_t K = range_count(&sel[ax]), span = K ? (K - 1) * sel[ax].step + 1 : 0;
        int64_t M = merge_reads(a, span), RS = a->p.sort.nruns * a->p.sort.samples, L = a->p.sort.run;
        size_t rec = x->itemsize, arena = (size_t)(M < L ? M : L) * rec;
        if ((size_t)a->p.sort.samples * rec > arena) arena = (size_t)a->p.sort.samples * rec;
        /* sample keys, one run's sample records, the heap and counts; what is read and its pairs */
        return (size_t)RS * sizeof(uint64_t) + (size_t)a->p.sort.samples * rec +
               (size_t)a->p.sort.nruns * (sizeof(sort_pair) + 4 * sizeof(int64_t)) + (size_t)M * (rec + PAIR_BYTES) +
               2 + arena + (sel[ax].step != 1 ? (size_t)span * a->itemsize : 0);
    }
    zc_range isel[ZC_MAX_DIMS];
    int64_t n = x->shape[ax];
    if (a->p.sort.step == SORT_WHOLE) {
        memcpy(isel, sel, sizeof(zc_range) * (size_t)a->ndim);
        isel[ax] = (zc_range){0, n, 1};
        return node_region_bytes(x, isel) + proj(x, isel) + PAIR_BYTES * (size_t)n;
    }
    /* RUNS: one run of the lines at a time */
    for (int d = 0; d < x->ndim; d++)
        if (d != ax) isel[d] = sel[d < ax ? d : d - 1];
    int64_t L = a->p.sort.run < n ? a->p.sort.run : n;
    isel[ax] = (zc_range){0, L, 1};
    return node_region_bytes(x, isel) + proj(x, isel) + PAIR_BYTES * (size_t)L +
           (size_t)(L + a->p.sort.samples) * a->itemsize;
}

static bool sort_copy_block(const zc_array *a, int64_t *block)
{
    block[0] = 0;
    int ax = a->p.sort.axis;
    int64_t along = a->p.sort.step == SORT_WHOLE ? a->shape[ax] : a->p.sort.step == SORT_MERGE ? a->p.sort.block : 0;
    if (a->ndim == 0 || along <= a->chunks[ax]) return false;
    for (int d = 0; d < a->ndim; d++) block[d] = a->chunks[d];
    block[ax] = ck_ceildiv(along, a->chunks[ax]) * a->chunks[ax];
    return true;
}

/* ---- the planner's choice ---- */

typedef size_t (*sort_task_fn)(const zc_array *a, const int64_t *block);

/* RUNS node r fitted to a run of L elements of a line of n, with samples for
 * merge tasks of `block` elements reading at most (1 + 1/k) x block. */
static void fit_runs(zc_array *r, int64_t n, int64_t L, int64_t block, int64_t k)
{
    int64_t R = ck_ceildiv(n, L), s = ck_ceildiv(2 * k * (R + 1) * L, block);
    if (s > L) s = L;
    r->p.sort.run = L;
    r->p.sort.samples = s;
    r->p.sort.nruns = R;
    r->shape[r->ndim - 1] = R * (L + s);
    r->chunks[r->ndim - 1] = L + s;
}

/* The projection of a's task as the MERGE of runs r, read as stored (a and r
 * are left as they were). */
static size_t merge_task(zc_array *a, zc_array *r, int64_t block, sort_task_fn task)
{
    typeof(a->p.sort) keep = a->p.sort;
    zc_array *in = a->inputs[0];
    int rstage = r->stage;
    r->stage = 0; /* materialized: the planner's mark (plan/plan.c) */
    a->p.sort.step = SORT_MERGE;
    a->p.sort.run = r->p.sort.run;
    a->p.sort.samples = r->p.sort.samples;
    a->p.sort.nruns = r->p.sort.nruns;
    a->p.sort.block = block;
    a->inputs[0] = r;
    int64_t blk[ZC_MAX_DIMS];
    size_t m = task(a, sort_copy_block(a, blk) ? blk : NULL);
    a->inputs[0] = in;
    a->p.sort = keep;
    r->stage = rstage;
    return m;
}

static int sort_plan(zc_array *a, size_t limit, sort_task_fn task)
{
    if (a->p.sort.step != SORT_WHOLE) return 0;
    int64_t blk[ZC_MAX_DIMS];
    zc_array *x = a->inputs[0];
    int ax = a->p.sort.axis, nd = a->ndim;
    int64_t n = a->shape[ax], C = a->chunks[ax];
    if (task(a, sort_copy_block(a, blk) ? blk : NULL) <= limit || n < 2) return 0;
    /* runs: x's other dims, then the runs along the last */
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    for (int d = 0, k = 0; d < nd; d++)
        if (d != ax) {
            shape[k] = x->shape[d];
            chunks[k++] = a->chunks[d];
        }
    shape[nd - 1] = n;
    chunks[nd - 1] = n;
    zc_array *r;
    ZC_TRY(node_new(NODE_SORT, nd, shape, chunks, ZC_RAW, 1, &x, &r));
    r->p.sort = a->p.sort;
    r->p.sort.step = SORT_RUNS;
    r->itemsize = rec_size(a);
    /* the longest run whose task fits (a merge task writes about a run's length) ... */
    int64_t lo = 1, hi = n - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        fit_runs(r, n, mid, mid / C * C > C ? mid / C * C : C, 1);
        if (task(r, NULL) <= limit) lo = mid;
        else hi = mid - 1;
    }
    /* ... shortened while no merge fits (shorter runs: smaller merges but more
     * samples); more samples per run (k) make what a merge reads beyond its
     * block smaller, smaller blocks need more samples */
    for (int64_t L = lo; L >= 1; L = L * 7 / 8)
        for (int64_t k = 1; k <= 4; k *= 2)
            for (int64_t b = L / C * C > C ? L / C * C : C; b >= C; b = b / 2 / C * C) {
                fit_runs(r, n, L, b, k);
                if (task(r, NULL) > limit || merge_task(a, r, b, task) > limit) continue;
                a->p.sort.step = SORT_MERGE;
                a->p.sort.run = r->p.sort.run;
                a->p.sort.samples = r->p.sort.samples;
                a->p.sort.nruns = r->p.sort.nruns;
                a->p.sort.block = b;
                a->inputs[0] = r; /* takes the reference; r holds x */
                zc_array_release(x);
                return 0;
            }
    zc_array_release(r); /* nothing fits: the WHOLE stage's projection says so */
    return 0;
}

static const char *sort_name(const zc_array *a)
{
    static const char *const names[2][3] = {{"sort", "sort (runs)", "sort (merge)"},
                                            {"argsort", "argsort (runs)", "argsort (merge)"}};
    int st = a->p.sort.step < 0 || a->p.sort.step > 2 ? 0 : a->p.sort.step;
    return names[a->p.sort.indices != 0][st];
}

/* ---- JSON ---- */

static int sort_to_json(const zc_array *a, json_t *o)
{
    const typeof(a->p.sort) *p = &a->p.sort;
    json_object_set_new(o, "sort", json_pack("{s:i, s:i, s:b, s:b, s:s, s:I, s:I, s:I, s:I}", "axis", p->axis, "step",
                                             p->step, "descending", p->descending, "indices", p->indices, "vdtype",
                                             zc_dtype_name(p->vdtype), "run", (json_int_t)p->run, "samples",
                                             (json_int_t)p->samples, "nruns", (json_int_t)p->nruns, "block",
                                             (json_int_t)p->block));
    return 0;
}

static int sort_from_json(const json_t *o, zc_array *a, int i)
{
    typeof(a->p.sort) *p = &a->p.sort;
    const char *vd = NULL;
    int desc = 0, idx = 0;
    json_int_t run = 0, samples = 0, nruns = 0, block = 0;
    if (a->ninputs != 1 ||
        json_unpack(json_object_get(o, "sort"), "{s:i, s:i, s:b, s:b, s:s, s:I, s:I, s:I, s:I}", "axis", &p->axis,
                    "step", &p->step, "descending", &desc, "indices", &idx, "vdtype", &vd, "run", &run, "samples",
                    &samples, "nruns", &nruns, "block", &block) < 0)
        return zc__err(ZC_EFORMAT, "plan: node %d: sort: missing or malformed parameters", i);
    size_t isz;
    p->descending = desc;
    p->indices = idx;
    p->run = run;
    p->samples = samples;
    p->nruns = nruns;
    p->block = block;
    const zc_array *in = a->inputs[0];
    if (zc_dtype_parse(vd, &p->vdtype, &isz) < 0 || !sort_dtype_ok(p->vdtype) || p->step < SORT_WHOLE ||
        p->step > SORT_MERGE || a->ndim < 1 || p->axis < 0 || p->axis >= a->ndim || in->ndim != a->ndim)
        return zc__err(ZC_EFORMAT, "plan: node %d: sort: parameters do not fit its shape", i);
    size_t rec = isz + (idx ? 8 : 0);
    zc_dtype rt = idx ? ZC_INT64 : p->vdtype;
    bool ok;
    if (p->step == SORT_WHOLE) {
        ok = in->dtype == p->vdtype && a->dtype == rt;
        for (int d = 0; ok && d < a->ndim; d++) ok = in->shape[d] == a->shape[d];
    } else {
        const zc_array *vals = p->step == SORT_RUNS ? in : a; /* x's shape */
        int64_t n = vals->shape[p->axis], W = run + samples;
        ok = run >= 1 && samples >= 1 && samples <= run && nruns == ck_ceildiv(n, run) && nruns <= INT32_MAX &&
             !ck_mul_i64(nruns, W, &W);
        if (p->step == SORT_RUNS) {
            ok = ok && a->dtype == ZC_RAW && a->itemsize == rec && in->dtype == p->vdtype &&
                 a->shape[a->ndim - 1] == nruns * (run + samples) && a->chunks[a->ndim - 1] == run + samples;
            for (int d = 0; ok && d < a->ndim; d++)
                if (d != p->axis) ok = a->shape[d < p->axis ? d : d - 1] == in->shape[d];
        } else {
            ok = ok && a->dtype == rt && block >= 1 && in->kind == NODE_SORT && in->p.sort.step == SORT_RUNS &&
                 in->p.sort.axis == p->axis && in->p.sort.run == run && in->p.sort.samples == samples &&
                 in->p.sort.nruns == nruns && in->p.sort.indices == idx && in->p.sort.vdtype == p->vdtype &&
                 in->p.sort.descending == desc && in->itemsize == rec &&
                 in->shape[in->ndim - 1] == nruns * (run + samples);
            for (int d = 0; ok && d < a->ndim; d++)
                if (d != p->axis) ok = in->shape[d < p->axis ? d : d - 1] == a->shape[d];
        }
    }
    if (!ok) return zc__err(ZC_EFORMAT, "plan: node %d: parameters or input do not fit a %s", i, sort_name(a));
    return 0;
}

/* Every step is a stage of its own: runs and merges are read by parts, whole
 * lines are sorted once per task block. */
const node_kind_def kind_sort = {
    .json = "sort", .flags = KIND_STORED | KIND_UNCOMPRESSED, .min_inputs = 1, .max_inputs = 1,
    .name = sort_name, .region = sort_region, .proj = sort_proj, .to_json = sort_to_json,
    .from_json = sort_from_json, .expand = sort_plan, .task_block = sort_copy_block,
};
