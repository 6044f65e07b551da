/* plan/rechunk_plan.c — choosing intermediate chunkings for a rechunk (see rechunk_plan.h).
 *
 * Task model. A copy from chunks A to chunks B runs one task per output chunk of B;
 * the task decodes every A chunk its output chunk overlaps (whole chunks), so
 *     task_mem(A, B) = N(A, B) * |A| + |B|      (bytes; |C| = full decoded chunk)
 * where N is the product over axes of the worst-case number of A chunks that one B
 * chunk overlaps. When B is aligned with A (on every axis one size divides the other),
 * N * |A| is the volume of the elementwise maximum of A and B: growing an axis costs
 * memory, shrinking one costs read amplification (a whole A chunk is decoded for each
 * smaller B chunk it feeds).
 *
 * Search. rechunker/Cubed interpolate chunk shapes geometrically between source and
 * target and add stages until each fits. Here the axes that grow (target chunk larger
 * than source) and the axes that shrink move along two independent fractions p and q
 * in [0, 1], because the best plans shrink some axes before growing others (shrink
 * space first, then gather time). Each axis has a "ladder" of sizes from its source to
 * its target size in which each size divides the next (so consecutive stages align),
 * and a fraction picks the rung nearest in log scale. The grid of (p, q) gives at most
 * (GRID+1)^2 candidate intermediate chunkings; a dynamic program over stage count finds,
 * among plans whose every task fits, the one with the least I/O: bytes read (decoded)
 * + bytes written + a fixed cost per chunk read or written. Fewer stages are preferred:
 * the direct copy whenever it fits, and each stage beyond the fewest that fit must cut
 * the cost by STAGE_PENALTY (with one output chunk per task, splitting a chunk decodes
 * it once per piece, so squeezing a rechunk into the fewest stages can multiply the
 * bytes decoded a hundredfold; e.g. ERA5 time->space at 500 MB: 57 array sizes of I/O
 * in 2 stages, 25 in 3).
 * Consolidation (rechunker's consolidate_reads/writes) falls out of that cost: larger
 * intermediate chunks mean fewer operations and less read amplification, so they are
 * taken up to the memory limit.
 *
 * Grouped copies. The engine runs a copy as grouped tasks (rechunker's copy chunks:
 * a block of output chunks covering whole source chunks, rechunk_copy_block) when
 * such a task fits, which decodes each source chunk once per stage instead of once
 * per output chunk it feeds (14x the data for ERA5 time->space at 1.5 GB). A copy
 * is usable if its one-chunk-per-task form fits; its cost is the grouped form's
 * when that fits too.
 *
 * Refusal. If no plan of at most RECHUNK_MAX_STAGES copies fits, a minimax version of
 * the same program gives the smallest max_mem that would work (rechunk_plan_min_mem),
 * and the error names it, the allowed figure and what to change. */
#include "plan/rechunk_plan.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"

#define MAX_DIMS 32
#define GRID 16                       /* steps of each interpolation fraction */
#define LADDER_MAX 72                 /* rungs per axis (each a divisor-chain step) */
#define SCAN_MAX 256                  /* output chunks scanned exactly per axis */
#define OP_COST_BYTES (256.0 * 1024.0) /* one chunk read or write, in bytes of transfer */
#define DIM_LIMIT ((int64_t)1 << 62)  /* shapes and chunks above this are refused */
#define STAGE_PENALTY 1.5             /* an extra stage must cut the I/O cost by this factor */

/* Worst number of chunks of size a that one chunk of size b overlaps, along an axis of
 * length s (the output chunks start at multiples of b; the last one is cut at s). */
static int64_t overlap_max(int64_t s, int64_t a, int64_t b)
{
    if (s <= 0) return 0;
    if (b >= s) return (s - 1) / a + 1;
    int64_t nfull = s / b, best = 0;
    if (s % b) { /* the partial last chunk */
        int64_t st = nfull * b;
        best = (s - 1) / a - st / a + 1;
    }
    /* A full chunk at offset r = j*b mod a overlaps (r + b - 1)/a + 1 chunks; r runs
     * over the multiples of g = gcd(a, b) with period a/g in j. */
    int64_t g = ck_gcd(a, b), period = a / g, m = nfull < period ? nfull : period;
    /* no residue does worse than the largest, a - g (and no chunk overlaps more than all) */
    int64_t cap = (a - g + b - 1) / a + 1, total = (s - 1) / a + 1;
    if (cap > total) cap = total;
    if (m <= SCAN_MAX) {
        for (int64_t j = 0; j < m && best < cap; j++) {
            int64_t st = j * b, c = (st + b - 1) / a - st / a + 1;
            if (c > best) best = c;
        }
    } else if (cap > best) { /* every residue occurs (or this bounds it from above) */
        best = cap;
    }
    return best;
}

/* Number of pieces when an axis of length s is cut at multiples of a and of b: the
 * (input chunk, output chunk) pairs that a copy touches along this axis. */
static double pieces(int64_t s, int64_t a, int64_t b)
{
    if (s <= 0) return 0;
    int64_t na = ck_ceildiv(s, a), nb = ck_ceildiv(s, b), g = ck_gcd(a, b), l, shared = 0;
    if (!ck_mul_i64(a / g, b, &l)) shared = (s - 1) / l; /* boundaries both grids share */
    return (double)(na - 1) + (double)(nb - 1) - (double)shared + 1.0;
}

static size_t chunk_bytes(int ndim, const int64_t *c, size_t itemsize)
{
    size_t n = itemsize;
    for (int d = 0; d < ndim; d++) n = ck_sat_mul(n, (size_t)c[d]);
    return n;
}

static bool is_empty(int ndim, const int64_t *shape)
{
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0) return true;
    return false;
}

size_t rechunk_task_mem(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize)
{
    if (is_empty(ndim, shape)) return 0; /* no tasks at all */
    size_t n = 1;
    for (int d = 0; d < ndim; d++) n = ck_sat_mul(n, (size_t)overlap_max(shape[d], from[d], to[d]));
    return ck_sat_add(ck_sat_mul(n, chunk_bytes(ndim, from, itemsize)), chunk_bytes(ndim, to, itemsize));
}

void rechunk_copy_block(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, int64_t *block)
{
    for (int d = 0; d < ndim; d++) {
        int64_t a = from[d], b = to[d], c = b;
        if (a > b) c = b * ck_ceildiv(a, b);
        int64_t top = b * ck_ceildiv(shape[d] > 0 ? shape[d] : 1, b); /* the shape in whole output chunks */
        block[d] = c < top ? c : top;
    }
}

size_t rechunk_copy_mem(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize)
{
    if (is_empty(ndim, shape)) return 0;
    int64_t c[MAX_DIMS];
    rechunk_copy_block(ndim, shape, from, to, c);
    size_t n = 1;
    for (int d = 0; d < ndim; d++) n = ck_sat_mul(n, (size_t)overlap_max(shape[d], from[d], c[d]));
    return ck_sat_add(ck_sat_mul(n, chunk_bytes(ndim, from, itemsize)), chunk_bytes(ndim, c, itemsize));
}

/* I/O cost of one copy in bytes: decoded reads, writes, and a fixed cost per chunk op.
 * Ungrouped, each (source chunk, output chunk) pair decodes the source chunk; grouped,
 * each (source chunk, copy block) pair. */
static double copy_cost(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize,
                        bool grouped)
{
    int64_t c[MAX_DIMS];
    if (grouped) rechunk_copy_block(ndim, shape, from, to, c);
    double reads = 1, nout = 1, vin = (double)itemsize, vout = (double)itemsize;
    for (int d = 0; d < ndim; d++) {
        reads *= grouped ? pieces(shape[d], from[d], c[d]) : pieces(shape[d], from[d], to[d]);
        nout *= (double)ck_ceildiv(shape[d], to[d]);
        vin *= (double)from[d];
        vout *= (double)to[d];
    }
    return reads * vin + nout * vout + (reads + nout) * OP_COST_BYTES;
}

double rechunk_copy_cost(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize,
                         bool grouped)
{
    if (is_empty(ndim, shape)) return 0;
    return copy_cost(ndim, shape, from, to, itemsize, grouped);
}

/* ---- single-pass sliced copies ---- */

#define RUN_COST_BYTES (OP_COST_BYTES / 4) /* one more range fetched from an open remote chunk */
/* The cost of a byte decoded with a part but not copied, against one copied
 * (rechunk_copy_cost counts a byte read and a byte written as one each). A fast
 * decoder (lz4, blosclz) copies the byte streams shuffling left raw and
 * expands the others: half of the stored-away fraction (1 - ratio), at least
 * 1/32; other decoders 1/2. Measured on two benchmark rechunks, 2 threads:
 * - fft_bench's (24, 360, 720) -> (1008, 60, 60) float64 blosc-lz4, ratio
 *   0.76 (0.12): tasks of 6, 12 and 72 blocks decode 12, 24 and 145 GB to
 *   copy 2.1 GB, in 2.2, 2.4 and 6.0 s; 72 tasks lose to two copies (3.1 s).
 * - compute_bench's (10, 1, 987, 1920) -> (200, 1, 100, 100), ratio 0.88
 *   (0.06): 10 tasks of 100 rows (25 GB decoded) 1.8-2.0 s, 4 of 300 rows
 *   (8 GB) 3.6-9.6 s. */
static double extra_weight(const slice_read *rd)
{
    if (!rd->fast) return 0.5;
    double w = (1.0 - rd->ratio) / 2;
    return w < 1.0 / 32 ? 1.0 / 32 : w > 0.5 ? 0.5 : w;
}

double rechunk_slice_cost(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize,
                          const slice_read *rd, const int64_t *block)
{
    if (ndim < 1 || ndim > MAX_DIMS) return INFINITY; /* ext and stride below hold MAX_DIMS */
    for (int d = 0; d < ndim; d++)
        if (from[d] < 1 || block[d] < 1) return INFINITY;
    if (is_empty(ndim, shape)) return 0;
    /* p: the last axis along which a block does not hold source chunks whole; the
     * axes after it are whole in every run */
    int p = -1;
    for (int d = ndim - 1; d >= 0 && p < 0; d--)
        if (!(block[d] % from[d] == 0 || block[d] >= shape[d])) p = d;
    double pairs = 1, nout = 1, vout = (double)itemsize, chunk = (double)chunk_bytes(ndim, from, itemsize);
    for (int d = 0; d < ndim; d++) {
        pairs *= pieces(shape[d], from[d], block[d]);
        nout *= (double)ck_ceildiv(shape[d], to[d]);
        vout *= (double)to[d];
    }
    double decoded = pairs * chunk, ops = pairs * OP_COST_BYTES, unit = (double)rd->unit;
    if (p >= 0 && rd->unit) {
        /* the average extent of a (source chunk, block) pair along each axis, and
         * the bytes of the source chunk one step along it spans */
        double ext[MAX_DIMS], stride[MAX_DIMS], sb = (double)itemsize, part = (double)itemsize;
        for (int d = ndim - 1; d >= 0; d--) {
            ext[d] = d > p ? (double)(from[d] < shape[d] ? from[d] : shape[d])
                           : (double)shape[d] / pieces(shape[d], from[d], block[d]);
            stride[d] = sb;
            sb *= (double)(from[d] < shape[d] ? from[d] : shape[d]);
            part *= ext[d];
        }
        double dec;
        if (rd->remote) {
            /* the part's runs (one per index of the axes before p) merge into one
             * span along an axis while the gap between them is shorter than a
             * block: no block lies in such a gap. A span is one range fetched,
             * its blocks (about its length + one block) fetched and decoded */
            double span = ext[p] * stride[p], spans = 1;
            int d = p - 1;
            for (; d >= 0 && stride[d] - span < unit; d--) span += (ext[d] - 1) * stride[d];
            for (; d >= 0; d--) spans *= ext[d];
            dec = spans * (span + unit);
            ops += pairs * spans * RUN_COST_BYTES;
        } else {
            /* from the part's first byte to its last (+ about a block): the part
             * counted as read, the rest as decoding only */
            double span = (double)itemsize;
            for (int d = 0; d < ndim; d++) span += (ext[d] - 1) * stride[d];
            double spanned = span + unit < chunk ? span + unit : chunk;
            dec = part + extra_weight(rd) * (spanned - part);
        }
        if (dec < decoded / pairs) decoded = pairs * dec;
    }
    return decoded + nout * vout + ops + nout * OP_COST_BYTES;
}

/* Bytes of a block (clipped to the shape) and the number of blocks. */
static void block_figures(int ndim, const int64_t *shape, size_t itemsize, const int64_t *b, size_t *bytes,
                          int64_t *tasks)
{
    *bytes = itemsize;
    *tasks = 1;
    for (int d = 0; d < ndim; d++) {
        *bytes = ck_sat_mul(*bytes, (size_t)(b[d] < shape[d] ? b[d] : shape[d]));
        int64_t n = ck_ceildiv(shape[d], b[d]);
        *tasks = n && *tasks > INT64_MAX / n ? INT64_MAX : *tasks * n;
    }
}

/* The cost of a block as wall time on `threads` threads: tasks run in rounds of
 * `threads`, each round as long as a whole block, so a last round that leaves
 * threads idle counts (5 equal tasks on 2 threads take 3 rounds: 1.2x 4 tasks'
 * work per round, measured on the compute benchmark's rechunk). */
static double slice_wall(int ndim, const int64_t *shape, const int64_t *block, int64_t threads, double cost)
{
    double vol = 1, bvol = 1, tasks = 1;
    for (int d = 0; d < ndim; d++) {
        vol *= (double)shape[d];
        bvol *= (double)(block[d] < shape[d] ? block[d] : shape[d]);
        tasks *= (double)ck_ceildiv(shape[d], block[d]);
    }
    double rounds = ceil(tasks / (double)threads);
    return cost * rounds * (double)threads * bvol / vol;
}

/* b counted `held` 1024ths */
static size_t held_bytes(size_t b, unsigned held) { return b / 1024 * held + b % 1024 * held / 1024; }

bool rechunk_slice_choose(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize,
                          const slice_read *rd, size_t fixed_mem, unsigned held, size_t max_mem, int64_t threads,
                          int64_t *block, size_t *mem, double *cost)
{
    if (ndim < 1 || ndim > MAX_DIMS || itemsize == 0 || is_empty(ndim, shape)) return false;
    if (threads < 1) threads = 1;
    int64_t top[MAX_DIMS], nch[MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        if (shape[d] > DIM_LIMIT || from[d] < 1 || to[d] < 1 || to[d] > DIM_LIMIT) return false;
        nch[d] = ck_ceildiv(shape[d], to[d]);
        top[d] = to[d] * nch[d]; /* the axis in whole output chunks */
        block[d] = to[d];
    }
    size_t bytes;
    int64_t tasks, min_tasks = threads;
    block_figures(ndim, shape, itemsize, block, &bytes, &tasks);
    *mem = ck_sat_add(held_bytes(bytes, held), fixed_mem);
    if (*mem > max_mem) return false;
    if (min_tasks > tasks) min_tasks = tasks;
    *cost = rechunk_slice_cost(ndim, shape, from, to, itemsize, rd, block);
    double wall = slice_wall(ndim, shape, block, threads, *cost);
    /* coordinate descent: grow one axis at a time to the size that lowers the
     * wall-time cost most; sizes that split the axis into q equal pieces
     * (q < 64), or doubling and the whole axis beyond that */
    for (int iter = 0; iter < 64 * ndim; iter++) {
        int64_t best[MAX_DIMS], cand[MAX_DIMS];
        double bw = wall, bc = *cost;
        size_t bm = 0;
        bool found = false;
        for (int d = 0; d < ndim; d++) {
            if (block[d] >= top[d]) continue;
            int64_t pieces = ck_ceildiv(nch[d], block[d] / to[d]);
            int64_t q0 = pieces - 1 < 64 ? pieces - 1 : 64; /* q0 = 64: doubling */
            for (int64_t q = q0; q >= 0; q--) {
                int64_t size;
                if (q == 64) size = block[d] <= top[d] / 2 ? block[d] * 2 : top[d];
                else size = q == 0 ? top[d] : to[d] * ck_ceildiv(nch[d], q);
                if (size <= block[d]) continue;
                memcpy(cand, block, (size_t)ndim * sizeof *cand);
                cand[d] = size;
                size_t cb;
                int64_t ct;
                block_figures(ndim, shape, itemsize, cand, &cb, &ct);
                size_t cm = ck_sat_add(held_bytes(cb, held), fixed_mem);
                if (cm > max_mem || ct < min_tasks) continue;
                double cc = rechunk_slice_cost(ndim, shape, from, to, itemsize, rd, cand);
                double cw = slice_wall(ndim, shape, cand, threads, cc);
                if (cw < bw) {
                    bw = cw;
                    bc = cc;
                    bm = cm;
                    memcpy(best, cand, (size_t)ndim * sizeof *best);
                    found = true;
                }
            }
        }
        if (!found) break;
        memcpy(block, best, (size_t)ndim * sizeof *block);
        wall = bw;
        *cost = bc;
        *mem = bm;
    }
    return true;
}

/* ---- ladders: per-axis chunk sizes between source and target ---- */

typedef struct {
    int n;                    /* rungs, ascending */
    int64_t v[LADDER_MAX];    /* sizes; v[0] = smaller end, v[n-1] = larger end */
    double pos[LADDER_MAX];   /* log position in [0, 1] from v[0] to v[n-1] */
} ladder;

/* Sizes from lo up to hi, each dividing the next when lo divides hi (prime factors of
 * hi/lo multiplied in alternating large/small order so steps stay even), else doubling
 * from lo and ending at hi. */
static void ladder_build(ladder *L, int64_t lo, int64_t hi)
{
    L->n = 0;
    L->v[L->n++] = lo;
    if (hi > lo && hi % lo == 0) {
        int64_t r = hi / lo, f[64];
        int nf = 0;
        for (int64_t p = 2; p <= 65536 && p * p <= r; p++)
            while (r % p == 0 && nf < 63) {
                f[nf++] = p;
                r /= p;
            }
        if (r > 1) f[nf++] = r; /* the cofactor (maybe composite) is one step */
        /* f is ascending; take from both ends alternately */
        int i = 0, j = nf - 1, big = 1;
        int64_t cur = lo;
        while (i <= j && L->n < LADDER_MAX - 1) {
            cur *= big ? f[j--] : f[i++];
            big = !big;
            L->v[L->n++] = cur;
        }
        L->v[L->n - 1] = hi;
    } else if (hi > lo) {
        int64_t cur = lo;
        while (cur <= hi / 2 && cur * 2 < hi && L->n < LADDER_MAX - 1) {
            cur *= 2;
            L->v[L->n++] = cur;
        }
        L->v[L->n++] = hi;
    }
    double span = hi > lo ? log((double)hi / (double)lo) : 1.0;
    for (int k = 0; k < L->n; k++) L->pos[k] = hi > lo ? log((double)L->v[k] / (double)lo) / span : 0.0;
}

static int64_t ladder_pick(const ladder *L, double f)
{
    int best = 0;
    for (int k = 1; k < L->n; k++)
        if (fabs(L->pos[k] - f) < fabs(L->pos[best] - f)) best = k;
    return L->v[best];
}

/* ---- the search ---- */

typedef struct {
    int ndim;
    const int64_t *shape, *src, *dst;
    size_t itemsize;
    int n;           /* nodes: 0 = src, 1..n-2 = intermediates, n-1 = dst */
    int64_t (*ch)[MAX_DIMS];
    size_t *mem;     /* n*n task memory of copy u -> v, one output chunk per task */
    double *cost;    /* n*n its I/O cost */
    size_t *gmem;    /* n*n the same for the grouped copy (rechunk_copy_block) */
    double *gcost;
} search;

static void search_free(search *s)
{
    zc__free(s->ch);
    zc__free(s->mem);
    zc__free(s->cost);
    zc__free(s->gmem);
    zc__free(s->gcost);
}

static int search_init(search *s, int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst,
                       size_t itemsize)
{
    memset(s, 0, sizeof *s);
    s->ndim = ndim;
    s->shape = shape;
    s->src = src;
    s->dst = dst;
    s->itemsize = itemsize;

    enum { NONE, GROW, SHRINK }; /* target chunk equal to, larger or smaller than the source's */
    int kind[MAX_DIMS];
    ladder *lad = zc__malloc_array((size_t)ndim, sizeof *lad);
    if (!lad) return ZC_ENOMEM;
    bool any_grow = false, any_shrink = false;
    for (int d = 0; d < ndim; d++) {
        int64_t a = src[d] < shape[d] ? src[d] : shape[d], b = dst[d] < shape[d] ? dst[d] : shape[d];
        kind[d] = a == b ? NONE : a < b ? GROW : SHRINK;
        any_grow |= kind[d] == GROW;
        any_shrink |= kind[d] == SHRINK;
        ladder_build(&lad[d], a < b ? a : b, a < b ? b : a);
    }
    int np = any_grow ? GRID + 1 : 1, nq = any_shrink ? GRID + 1 : 1;
    int cap = np * nq + 2;
    s->ch = zc__malloc_array((size_t)cap, sizeof *s->ch);
    if (!s->ch) {
        zc__free(lad);
        return ZC_ENOMEM;
    }
    memcpy(s->ch[0], src, (size_t)ndim * sizeof(int64_t));
    int n = 1;
    for (int pi = 0; pi < np; pi++)
        for (int qi = 0; qi < nq; qi++) {
            double p = (double)pi / GRID, q = (double)qi / GRID;
            int64_t *c = s->ch[n];
            for (int d = 0; d < ndim; d++) {
                if (kind[d] == GROW) c[d] = ladder_pick(&lad[d], p);
                else if (kind[d] == SHRINK) c[d] = ladder_pick(&lad[d], 1.0 - q);
                else c[d] = lad[d].v[0];
                if (c[d] < 1) c[d] = 1; /* empty axes */
            }
            bool dup = false;
            for (int k = 1; k < n && !dup; k++) dup = !memcmp(s->ch[k], c, (size_t)ndim * sizeof(int64_t));
            if (!dup) n++;
        }
    zc__free(lad);
    memcpy(s->ch[n++], dst, (size_t)ndim * sizeof(int64_t));
    s->n = n;

    s->mem = zc__malloc_array((size_t)n * (size_t)n, sizeof *s->mem);
    s->cost = zc__malloc_array((size_t)n * (size_t)n, sizeof *s->cost);
    s->gmem = zc__malloc_array((size_t)n * (size_t)n, sizeof *s->gmem);
    s->gcost = zc__malloc_array((size_t)n * (size_t)n, sizeof *s->gcost);
    if (!s->mem || !s->cost || !s->gmem || !s->gcost) {
        search_free(s);
        return ZC_ENOMEM;
    }
    for (int u = 0; u < n; u++)
        for (int v = 0; v < n; v++) {
            size_t k = (size_t)u * (size_t)n + (size_t)v;
            if (v == 0 || u == n - 1 || u == v) { /* never copy into the source or out of the target */
                s->mem[k] = s->gmem[k] = SIZE_MAX;
                s->cost[k] = s->gcost[k] = INFINITY;
                continue;
            }
            s->mem[k] = rechunk_task_mem(ndim, shape, s->ch[u], s->ch[v], itemsize);
            s->cost[k] = copy_cost(ndim, shape, s->ch[u], s->ch[v], itemsize, false);
            s->gmem[k] = rechunk_copy_mem(ndim, shape, s->ch[u], s->ch[v], itemsize);
            s->gcost[k] = copy_cost(ndim, shape, s->ch[u], s->ch[v], itemsize, true);
        }
    return 0;
}

/* Dynamic program over the number of stages. With minimax false: plans whose every task
 * is <= max_mem, and among them the least cost(k) * STAGE_PENALTY^(k - kmin), kmin being
 * the fewest stages that fit. With minimax true: the smallest possible largest task over
 * plans of at most RECHUNK_MAX_STAGES stages (max_mem ignored; fewer stages win ties).
 * Fills path[0..k] (path[0] = 0, path[k] = n-1) and returns the number of stages k, 0 if
 * nothing fits, or ZC_ENOMEM. */
static int search_run(const search *s, bool minimax, size_t max_mem, int *path, size_t *figure)
{
    int n = s->n, rows = RECHUNK_MAX_STAGES + 1;
    double *val = zc__malloc_array((size_t)rows * (size_t)n, sizeof *val);
    int *par = zc__malloc_array((size_t)rows * (size_t)n, sizeof *par);
    if (!val || !par) {
        zc__free(val);
        zc__free(par);
        return ZC_ENOMEM;
    }
    /* val[k*n + v]: best value reaching node v in exactly k copies (INFINITY: unreachable) */
    for (int i = 0; i < rows * n; i++) val[i] = INFINITY;
    val[0] = 0.0; /* zero copies reach the source */
    int found = 0, kmin = 0;
    double found_val = INFINITY;
    for (int k = 1; k < rows; k++) {
        for (int v = 1; v < n; v++) {
            double b = INFINITY;
            int bp = -1;
            for (int u = 0; u < n - 1; u++) {
                double pv = val[(k - 1) * n + u];
                if (pv == INFINITY) continue;
                size_t e = (size_t)u * (size_t)n + (size_t)v;
                if (s->mem[e] == SIZE_MAX || (!minimax && s->mem[e] > max_mem)) continue;
                /* the engine groups a copy whenever the grouped task fits */
                double ec = s->gmem[e] <= max_mem ? s->gcost[e] : s->cost[e];
                double c = minimax ? (pv > (double)s->mem[e] ? pv : (double)s->mem[e]) : pv + ec;
                if (c < b) {
                    b = c;
                    bp = u;
                }
            }
            val[k * n + v] = b;
            par[k * n + v] = bp;
        }
        double t = val[k * n + n - 1];
        if (t == INFINITY) continue;
        if (!kmin) kmin = k;
        if (!minimax) t *= pow(STAGE_PENALTY, k - kmin);
        if (t < found_val) { /* strictly better only: fewer stages win ties */
            found_val = t;
            found = k;
        }
    }
    if (found) {
        int v = n - 1;
        for (int k = found; k >= 0; k--) {
            path[k] = v;
            if (k) v = par[k * n + v];
        }
        if (figure) {
            size_t m = 0;
            for (int k = 0; k < found; k++) {
                size_t e = s->mem[(size_t)path[k] * (size_t)n + (size_t)path[k + 1]];
                if (e > m) m = e;
            }
            *figure = m;
        }
    }
    zc__free(val);
    zc__free(par);
    return found;
}

static int check_args(int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst, size_t itemsize)
{
    if (ndim < 1 || ndim > MAX_DIMS) return zc__err(ZC_EINVAL, "rechunk: ndim %d is not in 1..%d", ndim, MAX_DIMS);
    if (!shape || !src || !dst) return zc__err(ZC_EINVAL, "rechunk: shape or chunks missing");
    if (itemsize == 0) return zc__err(ZC_EINVAL, "rechunk: item size is 0");
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0 || shape[d] > DIM_LIMIT)
            return zc__err(ZC_EINVAL, "rechunk: shape[%d] = %lld is out of range", d, (long long)shape[d]);
        if (src[d] < 1 || src[d] > DIM_LIMIT)
            return zc__err(ZC_EINVAL, "rechunk: source chunks[%d] = %lld is out of range", d, (long long)src[d]);
        if (dst[d] < 1 || dst[d] > DIM_LIMIT)
            return zc__err(ZC_EINVAL, "rechunk: target chunks[%d] = %lld is out of range", d, (long long)dst[d]);
    }
    return 0;
}

static void fmt_tuple(char *buf, size_t size, int ndim, const int64_t *v)
{
    size_t k = 0;
    buf[0] = 0;
    for (int d = 0; d < ndim && k + 1 < size; d++) {
        int w = snprintf(buf + k, size - k, "%s%lld", d ? "," : "(", (long long)v[d]);
        if (w < 0) break;
        k += (size_t)w;
    }
    if (k + 1 < size) snprintf(buf + k, size - k, ")");
}

static void fmt_bytes(char *buf, size_t size, size_t n)
{
    static const char *const units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
    if (n < 1000) {
        snprintf(buf, size, "%zu B", n);
        return;
    }
    double v = (double)n / 1000.0;
    int u = 0;
    while (v >= 999.95 && u < 5) {
        v /= 1000.0;
        u++;
    }
    snprintf(buf, size, "%.1f %s", v, units[u]);
}

size_t rechunk_plan_min_mem(int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst, size_t itemsize)
{
    if (check_args(ndim, shape, src, dst, itemsize) < 0) return SIZE_MAX;
    if (is_empty(ndim, shape)) return 0;
    search s;
    if (search_init(&s, ndim, shape, src, dst, itemsize) < 0) return SIZE_MAX;
    int path[RECHUNK_MAX_STAGES + 1];
    size_t fig = SIZE_MAX;
    if (search_run(&s, true, 0, path, &fig) <= 0) fig = SIZE_MAX;
    search_free(&s);
    return fig;
}

int rechunk_plan_make(int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst, size_t itemsize,
                      size_t max_mem, rechunk_plan *out)
{
    return rechunk_plan_make_in(NULL, ndim, shape, src, dst, itemsize, max_mem, out);
}

/* ---- the memo: search tables kept for one planning session ---- */

#define MEMO_MAX 8 /* tables kept (a few MiB each at most: GRID^2 chunkings squared) */

typedef struct {
    bool live;
    int ndim;
    size_t itemsize;
    int64_t shape[MAX_DIMS], src[MAX_DIMS], dst[MAX_DIMS];
    search s;           /* its pointers point at the arrays above */
    unsigned long used; /* the memo's clock at its last use */
} memo_entry;

struct rechunk_memo {
    memo_entry e[MEMO_MAX];
    unsigned long clock;
};

rechunk_memo *rechunk_memo_new(void) { return zc__calloc(1, sizeof(rechunk_memo)); }

void rechunk_memo_free(rechunk_memo *m)
{
    if (!m) return;
    for (int i = 0; i < MEMO_MAX; i++)
        if (m->e[i].live) search_free(&m->e[i].s);
    zc__free(m);
}

/* The tables for these arguments: kept ones, or built in a free slot or in
 * place of the least recently used. */
static int memo_get(rechunk_memo *m, int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst,
                    size_t itemsize, search **out)
{
    size_t nb = (size_t)ndim * sizeof(int64_t);
    memo_entry *slot = NULL;
    for (int i = 0; i < MEMO_MAX; i++) {
        memo_entry *e = &m->e[i];
        if (e->live && e->ndim == ndim && e->itemsize == itemsize && !memcmp(e->shape, shape, nb) &&
            !memcmp(e->src, src, nb) && !memcmp(e->dst, dst, nb)) {
            e->used = ++m->clock;
            *out = &e->s;
            return 0;
        }
        if (!slot || (slot->live && (!e->live || e->used < slot->used))) slot = e;
    }
    if (slot->live) search_free(&slot->s);
    slot->live = false;
    slot->ndim = ndim;
    slot->itemsize = itemsize;
    memcpy(slot->shape, shape, nb);
    memcpy(slot->src, src, nb);
    memcpy(slot->dst, dst, nb);
    ZC_TRY(search_init(&slot->s, ndim, slot->shape, slot->src, slot->dst, itemsize));
    slot->live = true;
    slot->used = ++m->clock;
    *out = &slot->s;
    return 0;
}

int rechunk_plan_make_in(rechunk_memo *memo, int ndim, const int64_t *shape, const int64_t *src,
                         const int64_t *dst, size_t itemsize, size_t max_mem, rechunk_plan *out)
{
    if (!out) return zc__err(ZC_EINVAL, "rechunk: no plan to fill");
    memset(out, 0, sizeof *out);
    ZC_TRY(check_args(ndim, shape, src, dst, itemsize));
    out->nstages = 1;
    memcpy(out->chunks[0], src, (size_t)ndim * sizeof(int64_t));
    memcpy(out->chunks[1], dst, (size_t)ndim * sizeof(int64_t));
    out->task_mem[0] = rechunk_task_mem(ndim, shape, src, dst, itemsize);
    size_t grouped = rechunk_copy_mem(ndim, shape, src, dst, itemsize);
    if (grouped <= max_mem) out->task_mem[0] = grouped;
    out->cost = rechunk_copy_cost(ndim, shape, src, dst, itemsize, grouped <= max_mem);
    if (out->task_mem[0] <= max_mem) return 0; /* direct copy fits (or nothing to copy) */

    search local, *s = &local; /* the tables (independent of max_mem) */
    ZC_TRY(memo ? memo_get(memo, ndim, shape, src, dst, itemsize, &s) : search_init(s, ndim, shape, src, dst, itemsize));
    int path[RECHUNK_MAX_STAGES + 1];
    int k = search_run(s, false, max_mem, path, NULL);
    if (k > 0) {
        out->nstages = k;
        out->cost = 0;
        for (int i = 0; i <= k; i++) memcpy(out->chunks[i], s->ch[path[i]], (size_t)ndim * sizeof(int64_t));
        for (int i = 0; i < k; i++) {
            size_t e = (size_t)path[i] * (size_t)s->n + (size_t)path[i + 1];
            out->task_mem[i] = s->gmem[e] <= max_mem ? s->gmem[e] : s->mem[e];
            out->cost += s->gmem[e] <= max_mem ? s->gcost[e] : s->cost[e];
        }
        if (!memo) search_free(s);
        return 0;
    }
    size_t best = SIZE_MAX;
    if (k == 0) {
        k = search_run(s, true, 0, path, &best);
        if (k <= 0) best = SIZE_MAX;
    }
    if (!memo) search_free(s);
    if (k < 0) return k;
    memset(out, 0, sizeof *out);

    /* Name the figures and what to change. */
    char ts[32 * 22], tf[32 * 22], tt[32 * 22], need[32], allowed[32], what[96];
    fmt_tuple(ts, sizeof ts, ndim, shape);
    fmt_tuple(tf, sizeof tf, ndim, src);
    fmt_tuple(tt, sizeof tt, ndim, dst);
    fmt_bytes(need, sizeof need, best);
    fmt_bytes(allowed, sizeof allowed, max_mem);
    /* Lower bounds: a first-stage task decodes at least one source chunk; a last-stage
     * task holds its target chunk and source data covering it. */
    int64_t clip[MAX_DIMS];
    for (int d = 0; d < ndim; d++) clip[d] = dst[d] < shape[d] ? dst[d] : shape[d];
    size_t src_bytes = chunk_bytes(ndim, src, itemsize);
    size_t cb = ck_sat_add(chunk_bytes(ndim, dst, itemsize), chunk_bytes(ndim, clip, itemsize));
    char one[32];
    if (ck_sat_add(src_bytes, itemsize) > max_mem) {
        fmt_bytes(one, sizeof one, src_bytes);
        snprintf(what, sizeof what, "use smaller source chunks (one is %s)", one);
    } else if (cb > max_mem) {
        fmt_bytes(one, sizeof one, cb);
        snprintf(what, sizeof what, "choose smaller target chunks (writing one needs %s)", one);
    } else {
        snprintf(what, sizeof what, "choose target chunks closer to the source chunks");
    }
    return zc__err_mem(best, max_mem,
                   "rechunk of %s from chunks %s to %s (%zu-byte items) needs %s per task at best, allowed %s: "
                   "raise allowed_mem to at least %s or %s",
                   ts, tf, tt, itemsize, need, allowed, need, what);
}
