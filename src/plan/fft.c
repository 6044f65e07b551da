/* plan/fft.c — the FFT node: regions, projection, names, JSON (see fft.h).
 *
 * The input region (O = elements of the region before the axis, L = input
 * elements used along it, I = after it) is read where it already is when it
 * can be (a zc_asarray buffer, or a source chunk kept decoded for the
 * computation: input_view), else copied into one buffer laid out [O][L][I].
 * Whole output lines from input lines used as they are (no padding, no
 * conjugated input, the whole transformed axis asked for) go straight from
 * there into the output [O][K][I] through strided FFTW plans, batch by batch,
 * scale/conjugation/twiddle applied in place after each batch (direct_region):
 * no copy of the lines at all. Otherwise (or for strided lines longer than
 * FFT_STRIDED_LINE_BYTES, whose strided transforms miss the cache) lines are
 * copied in batches of about FFT_BATCH_BYTES into an aligned work buffer
 * (conjugated and zero-padded as asked), transformed by one FFTW plan for the
 * batch, then scaled/twiddled into the output. When I > 1 the copies go element
 * index outermost, so consecutive lines of a batch (which are consecutive in I)
 * are read and written contiguously. */
#include "plan/fft.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "kernels/fft.h"
#include "plan/kind.h"
#include "zarr/zarr.h"

#define FFT_BATCH_BYTES ((size_t)256 << 10)
/* Strided lines (the axis not the region's last dim of extent > 1) of at most
 * this many input bytes are transformed by FFTW where they are; longer ones are
 * gathered into batches. Measured end to end (1 thread, CPU time): 128-point
 * complex128 lines along axis 0 of (128, 32768|65536) 10-35% faster in place,
 * 256-point lines faster gathered when the block's width is a power of two
 * (FFTW's strided passes then conflict in the cache), 512+ point lines about
 * even or faster gathered. */
#define FFT_STRIDED_LINE_BYTES ((size_t)2048)

static int64_t cnt_of(const zc_range *s) { return s->stop > s->start ? (s->stop - s->start - 1) / s->step + 1 : 0; }

static bool is_single(zc_dtype t) { return t == ZC_FLOAT32 || t == ZC_COMPLEX64; }

static bool in_complex(fftk_kind k) { return k != FFTK_R2C; }
static bool out_complex(fftk_kind k) { return k != FFTK_C2R; }

/* Input elements used along the axis. */
static int64_t used_len(const zc_array *a)
{
    fftk_kind k = (fftk_kind)a->p.fft.kind;
    int64_t m = a->inputs[0]->shape[a->p.fft.axis];
    if (k == FFTK_NONE) return m;
    int64_t l = fftk_in_len(k, a->p.fft.n);
    return m < l ? m : l;
}

typedef struct {
    int64_t O, I, K, use, lines;
    size_t fsz, in_isz, line_in, line_out;
    int B;
} geom;

static void geometry(const zc_array *a, const zc_range *sel, geom *g)
{
    int ax = a->p.fft.axis;
    fftk_kind k = (fftk_kind)a->p.fft.kind;
    g->O = g->I = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (d < ax) g->O *= cnt_of(&sel[d]);
        if (d > ax) g->I *= cnt_of(&sel[d]);
    }
    g->K = cnt_of(&sel[ax]);
    g->use = used_len(a);
    g->lines = g->O * g->I;
    g->fsz = is_single(a->dtype) ? 4 : 8;
    g->in_isz = a->inputs[0]->itemsize;
    g->B = 0;
    g->line_in = g->line_out = 0;
    if (k == FFTK_NONE) return;
    g->line_in = (size_t)fftk_in_len(k, a->p.fft.n) * g->fsz * (in_complex(k) ? 2 : 1);
    g->line_out = (size_t)fftk_out_len(k, a->p.fft.n) * g->fsz * (out_complex(k) ? 2 : 1);
    size_t big = g->line_in > g->line_out ? g->line_in : g->line_out;
    int64_t b = (int64_t)(FFT_BATCH_BYTES / big);
    if (b < 1) b = 1;
    /* the same batch for every region of a node (one plan), unless the node has fewer lines */
    int64_t most = 1;
    for (int d = 0; d < a->ndim; d++)
        if (d != ax) most *= a->chunks[d];
    if (b > most) b = most;
    if (b > 4096) b = 4096;
    g->B = (int)b;
}

/* Index along dim `td` of line (o, i) of the region. */
static int64_t line_coord(const zc_array *a, const zc_range *sel, int64_t o, int64_t i, int td)
{
    int ax = a->p.fft.axis;
    int64_t r = td < ax ? o : i, div = 1;
    int lo = td < ax ? 0 : ax + 1, hi = td < ax ? ax : a->ndim;
    for (int d = hi - 1; d > td && d >= lo; d--) div *= cnt_of(&sel[d]);
    int64_t idx = (r / div) % cnt_of(&sel[td]);
    return sel[td].start + idx * sel[td].step;
}

/* exp(sign·2πi·(k·j mod n)/n) */
static void twiddle(int64_t k, int64_t j, int64_t n, int sign, double *re, double *im)
{
    int64_t r = (int64_t)(((unsigned __int128)k * (unsigned __int128)j) % (unsigned __int128)n);
    /* use the smaller angle for accuracy: r/n in (-1/2, 1/2] */
    if (2 * r > n) r -= n;
    double t = (double)sign * 2.0 * M_PI * ((double)r / (double)n);
    *re = cos(t);
    *im = sin(t);
}

static inline double ld(const unsigned char *p, size_t off, bool single)
{
    if (single) {
        float f;
        memcpy(&f, p + off * 4, 4);
        return f;
    }
    double d;
    memcpy(&d, p + off * 8, 8);
    return d;
}

static inline void st(unsigned char *p, size_t off, double v, bool single)
{
    if (single) {
        float f = (float)v;
        memcpy(p + off * 4, &f, 4);
    } else {
        memcpy(p + off * 8, &v, 8);
    }
}

/* Twiddle-only node: out = in(sel) · twiddle · scale. */
static int none_region(zc_array *a, const zc_range *sel, unsigned char *out)
{
    ZC_TRY(node_region(a->inputs[0], sel, out));
    geom g;
    geometry(a, sel, &g);
    bool single = is_single(a->dtype);
    int ax = a->p.fft.axis, td = a->p.fft.tw_dim;
    double s = a->p.fft.scale, cj = a->p.fft.conj_out ? -1 : 1;
    for (int64_t o = 0; o < g.O; o++)
        for (int64_t q = 0; q < g.K; q++) {
            int64_t k = sel[ax].start + q * sel[ax].step;
            for (int64_t i = 0; i < g.I; i++) {
                size_t e = (size_t)((o * g.K + q) * g.I + i) * 2;
                double re = ld(out, e, single), im = cj * ld(out, e + 1, single), wr = 1, wi = 0;
                /* tw_dim == axis: the chirp exp(sign·2πi·k²/tw_n) of Bluestein's algorithm */
                if (td >= 0)
                    twiddle(k, td == ax ? k : line_coord(a, sel, o, i, td), a->p.fft.tw_n, a->p.fft.tw_sign, &wr, &wi);
                st(out, e, s * (re * wr - im * wi), single);
                st(out, e + 1, s * (re * wi + im * wr), single);
            }
        }
    return 0;
}

typedef struct {
    const zc_array *a;
    const zc_range *sel;
    const geom *g;
    const unsigned char *wout;
    unsigned char *out;
    const int64_t *coord;
    int64_t l0, lout;
    int co;
    bool single, cout;
    double s, cj_out;
    int td;
} scatter_ctx;

/* Output element q of batch line b: scaled, conjugated, twiddled. */
static inline void put(const scatter_ctx *c, int64_t b, int64_t q)
{
    const geom *g = c->g;
    int ax = c->a->p.fft.axis;
    int64_t k = c->sel[ax].start + q * c->sel[ax].step, l = c->l0 + b, o = l / g->I, i = l % g->I;
    size_t src = (size_t)(b * c->lout + k) * (size_t)c->co, dst = (size_t)((o * g->K + q) * g->I + i) * (size_t)c->co;
    double re = ld(c->wout, src, c->single);
    if (!c->cout) {
        st(c->out, dst, c->s * re, c->single);
        return;
    }
    double im = c->cj_out * ld(c->wout, src + 1, c->single);
    if (c->td >= 0) {
        double wr, wi;
        twiddle(k, c->coord[b], c->a->p.fft.tw_n, c->a->p.fft.tw_sign, &wr, &wi);
        double r2 = re * wr - im * wi;
        im = re * wi + im * wr;
        re = r2;
    }
    st(c->out, dst, c->s * re, c->single);
    st(c->out, dst + 1, c->s * im, c->single);
}

/* Where the values of region sel of node `in` already are, when they need not
 * be computed or copied: *base = its first element, bst[d] = the byte step
 * along dim d. A caller's buffer (zc_asarray; through unmaterialized
 * rechunks), or one source chunk kept decoded for the computation
 * (zc_array.cache) holding the whole region. */
static bool input_view(zc_array *in, const zc_range *sel, const unsigned char **base, int64_t *bst)
{
    while (in->kind == NODE_RECHUNK && !in->mat) in = in->inputs[0];
    if (in->mat || in->ndim < 1) return false;
    int64_t st = (int64_t)in->itemsize, off = 0;
    const unsigned char *p = NULL;
    zc_range box[ZC_MAX_DIMS];
    if (in->kind == NODE_BUFFER) {
        p = in->p.buffer.data;
        for (int d = 0; d < in->ndim; d++) box[d] = (zc_range){0, in->shape[d], 1};
    } else if (in->kind == NODE_ZARR && in->cache) {
        const zc_zarr *z = in->p.zarr.z;
        for (int d = 0; d < in->ndim; d++) {
            int64_t c = z->rchunk[d], n = cnt_of(&sel[d]), i = sel[d].start / c;
            if (n < 1 || c < 1 || (sel[d].start + (n - 1) * sel[d].step) / c != i) return false;
            box[d] = (zc_range){i * c, (i + 1) * c < in->shape[d] ? (i + 1) * c : in->shape[d], 1};
        }
        const void *v;
        if (!node_cache_view(in, box, &v)) return false;
        p = v;
    } else {
        return false;
    }
    for (int d = in->ndim - 1; d >= 0; d--) {
        off += (sel[d].start - box[d].start) * st;
        bst[d] = cnt_of(&sel[d]) > 1 ? st * sel[d].step : st; /* a single element's step may be huge */
        st *= box[d].stop - box[d].start;
    }
    *base = p + off;
    return true;
}

/* Whole output lines (K = out length, step 1) from input lines used as they are
 * (use = in length, not conjugated): FFTW straight from where they are (base,
 * byte steps bst per dim of the input region) into out, no copy. Lines are
 * taken by runs (the non-axis dims that merge into one step on both sides,
 * innermost first), in batches of up to g->B lines, one strided plan per batch
 * size and alignment; scale, conjugation and twiddle then go over each batch
 * in place while it is in cache. preserve: base is not ours (c2r keeps it). */
static int direct_region(zc_array *a, const zc_range *sel, const geom *g, const unsigned char *base,
                         const int64_t *bst, bool preserve, unsigned char *out)
{
    fftk_kind kind = (fftk_kind)a->p.fft.kind;
    const int ax = a->p.fft.axis, nd = a->ndim, td = a->p.fft.tw_dim;
    const bool single = is_single(a->dtype), cout = out_complex(kind);
    const size_t ies = g->in_isz, oes = a->itemsize;
    const double s = a->p.fft.scale, cj = a->p.fft.conj_out ? -1 : 1;
    const bool post = s != 1 || a->p.fft.conj_out || td >= 0;
    int64_t cnt[ZC_MAX_DIMS], ist[ZC_MAX_DIMS], ost[ZC_MAX_DIMS], os = 1;
    for (int d = nd - 1; d >= 0; d--) {
        cnt[d] = d == ax ? g->K : cnt_of(&sel[d]);
        ost[d] = os;
        os *= cnt[d];
        ist[d] = bst[d] / (int64_t)ies;
    }
    /* the run: the innermost non-axis dim of extent > 1, with the dims before it
     * whose steps continue it on both sides */
    bool in_run[ZC_MAX_DIMS] = {false};
    int64_t R = 1, rs = 0, ors = 0;
    for (int d = nd - 1; d >= 0; d--) {
        if (d == ax || cnt[d] == 1) continue;
        if (R == 1) {
            R = cnt[d];
            rs = ist[d];
            ors = ost[d];
        } else if (ist[d] == rs * R && ost[d] == ors * R) {
            R *= cnt[d];
        } else {
            break;
        }
        in_run[d] = true;
    }
    int64_t idx[ZC_MAX_DIMS] = {0}, batches = 0;
    const int64_t W = g->B > 0 ? g->B : 1, KI = g->K * g->I;
    void *fplan = NULL;
    int64_t pnb = -1;
    int pai = -1, pao = -1;
    for (;;) {
        const unsigned char *ip = base;
        unsigned char *op = out;
        for (int d = 0; d < nd; d++)
            if (d != ax && !in_run[d]) {
                ip += idx[d] * bst[d];
                op += (size_t)(idx[d] * ost[d]) * oes;
            }
        for (int64_t r0 = 0; r0 < R; r0 += W) {
            int64_t nb = R - r0 < W ? R - r0 : W;
            const unsigned char *bi = ip + r0 * rs * (int64_t)ies;
            unsigned char *bo = op + (size_t)(r0 * ors) * oes;
            int ai = fftk_alignment(bi, single), ao = fftk_alignment(bo, single);
            if (nb != pnb || ai != pai || ao != pao) {
                ZC_TRY(fftk_plan_strided(kind, single, a->p.fft.n, nb, ist[ax], rs, ost[ax], ors, preserve, bi, bo,
                                         &fplan));
                pnb = nb;
                pai = ai;
                pao = ao;
            }
            fftk_execute(kind, single, fplan, (void *)(uintptr_t)bi, bo);
            batches++;
            if (!post) continue;
            for (int64_t j = 0; j < nb; j++) {
                unsigned char *lp = bo + (size_t)(j * ors) * oes;
                int64_t off = (int64_t)((size_t)(lp - out) / oes), o = off / KI, i = off % KI;
                int64_t coord = td >= 0 ? line_coord(a, sel, o, i, td) : 0;
                for (int64_t q = 0; q < g->K; q++) {
                    size_t e = (size_t)(q * ost[ax]) * (cout ? 2 : 1);
                    double re = ld(lp, e, single);
                    if (!cout) {
                        st(lp, e, s * re, single);
                        continue;
                    }
                    double im = cj * ld(lp, e + 1, single);
                    if (td >= 0) {
                        double wr, wi;
                        twiddle(q, coord, a->p.fft.tw_n, a->p.fft.tw_sign, &wr, &wi);
                        double r2 = re * wr - im * wi;
                        im = re * wi + im * wr;
                        re = r2;
                    }
                    st(lp, e, s * re, single);
                    st(lp, e + 1, s * im, single);
                }
            }
        }
        int d = nd - 1;
        for (; d >= 0; d--) {
            if (d == ax || in_run[d]) continue;
            if (++idx[d] < cnt[d]) break;
            idx[d] = 0;
        }
        if (d < 0) break;
    }
    fftk_count_direct(batches, preserve);
    return 0;
}

static int fftn_region(zc_array *a, const zc_range *sel, void *outv)
{
    unsigned char *out = outv;
    fftk_kind kind = (fftk_kind)a->p.fft.kind;
    if (kind == FFTK_NONE) return none_region(a, sel, out);
    zc_array *in = a->inputs[0];
    int ax = a->p.fft.axis, td = a->p.fft.tw_dim;
    geom g;
    geometry(a, sel, &g);
    if (g.lines == 0 || g.K == 0) return 0;
    bool single = is_single(a->dtype), cin = in_complex(kind), cout = out_complex(kind);
    int64_t lin = fftk_in_len(kind, a->p.fft.n), lout = fftk_out_len(kind, a->p.fft.n);
    zc_range isel[ZC_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) isel[d] = sel[d];
    isel[ax] = (zc_range){0, g.use, 1};
    size_t inbytes = node_region_bytes(in, isel);
    /* the input where it is (a view), else one copy of the region: base + Σ idx·bst */
    const unsigned char *base = NULL;
    int64_t bst[ZC_MAX_DIMS];
    unsigned char *ib = NULL, *win = NULL, *wout = NULL;
    const bool direct = fftk_direct_enabled(), view = direct && input_view(in, isel, &base, bst);
    int rc = 0;
    if (!view) {
        if (!(ib = fftk_alloc(inbytes ? inbytes : 1))) return ZC_ENOMEM;
        if ((rc = node_region(in, isel, ib)) < 0) goto out;
        int64_t bs = (int64_t)g.in_isz;
        for (int d = a->ndim - 1; d >= 0; d--) {
            bst[d] = bs;
            bs *= d == ax ? g.use : cnt_of(&isel[d]);
        }
        base = ib;
    }
    /* whole lines used as they come: FFTW straight from base into out, unless the
     * lines are long and strided (FFTW's strided passes over them miss the
     * cache: gathering them into a batch costs less) */
    if (direct && g.use == lin && !a->p.fft.conj_in && g.K == lout && sel[ax].step == 1 &&
        (g.I == 1 || (size_t)lin * g.in_isz <= FFT_STRIDED_LINE_BYTES)) {
        rc = direct_region(a, sel, &g, base, bst, view, out);
        goto out;
    }
    win = fftk_alloc((size_t)g.B * g.line_in);
    wout = fftk_alloc((size_t)g.B * g.line_out);
    void *fplan = NULL;
    if (!win || !wout) {
        rc = ZC_ENOMEM;
        goto out;
    }
    if ((rc = fftk_plan(kind, single, a->p.fft.n, g.B, win, wout, &fplan)) < 0) goto out;
    memset(win, 0, (size_t)g.B * g.line_in);
    const int ci = cin ? 2 : 1, co = cout ? 2 : 1;
    const double s = a->p.fft.scale, cj_in = a->p.fft.conj_in ? -1 : 1, cj_out = a->p.fft.conj_out ? -1 : 1;
    int64_t coord[4096];
    const size_t ges = (size_t)ci * g.fsz, gls = (size_t)lin * ges;
    const int64_t tstep = bst[ax];
    for (int64_t l0 = 0; l0 < g.lines; l0 += g.B) {
        int64_t nb = g.lines - l0 < g.B ? g.lines - l0 : g.B;
        for (int64_t b = 0; b < nb; b++) coord[b] = td >= 0 ? line_coord(a, sel, (l0 + b) / g.I, (l0 + b) % g.I, td) : 0;
        if (nb < g.B) memset(win + (size_t)nb * g.line_in, 0, (size_t)(g.B - nb) * g.line_in);
        /* gather: line b of the batch is region line l0 + b = (o, i), at byte
         * offset boff[b] of base; when I > 1, element index outermost so
         * consecutive lines read consecutive memory */
        int64_t boff[4096];
        for (int64_t b = 0; b < nb; b++) {
            int64_t l = l0 + b, o = l / g.I, i = l % g.I, off = 0;
            for (int d = a->ndim - 1; d >= 0; d--) {
                if (d == ax) continue;
                int64_t *r = d < ax ? &o : &i, c = cnt_of(&isel[d]);
                off += (*r % c) * bst[d];
                *r /= c;
            }
            boff[b] = off;
        }
        if (!a->p.fft.conj_in && (g.I > 1 || tstep != (int64_t)ges)) {
            /* plain element copies (4, 8 or 16 bytes) */
            for (int64_t t = 0; t < g.use; t++) {
                const unsigned char *src = base + t * tstep;
                unsigned char *dst = win + (size_t)t * ges;
                if (ges == 16)
                    for (int64_t b = 0; b < nb; b++) memcpy(dst + (size_t)b * gls, src + boff[b], 16);
                else if (ges == 8)
                    for (int64_t b = 0; b < nb; b++) memcpy(dst + (size_t)b * gls, src + boff[b], 8);
                else
                    for (int64_t b = 0; b < nb; b++) memcpy(dst + (size_t)b * gls, src + boff[b], 4);
            }
        } else if (!a->p.fft.conj_in) {
            for (int64_t b = 0; b < nb; b++) memcpy(win + (size_t)b * gls, base + boff[b], (size_t)g.use * ges);
        } else {
            for (int64_t t = 0; t < g.use; t++)
                for (int64_t b = 0; b < nb; b++) {
                    const unsigned char *src = base + boff[b] + t * tstep;
                    size_t dst = (size_t)(b * lin + t) * (size_t)ci;
                    st(win, dst, ld(src, 0, single), single);
                    if (cin) st(win, dst + 1, cj_in * ld(src, 1, single), single);
                }
        }
        /* FFTW's c2r overwrites its input: the zero padding is restored for every batch */
        if (kind == FFTK_C2R && g.use < lin)
            for (int64_t b = 0; b < nb; b++)
                memset(win + (size_t)(b * lin + g.use) * (size_t)ci * g.fsz, 0, (size_t)(lin - g.use) * (size_t)ci * g.fsz);
        fftk_execute(kind, single, fplan, win, wout);
        /* scatter the requested part of each line (line-major when lines are rows of out) */
        scatter_ctx sc = {a, sel, &g, wout, out, coord, l0, lout, co, single, cout, s, cj_out, td};
        if (g.I == 1 && td < 0 && !a->p.fft.conj_out && sel[ax].step == 1) {
            /* rows of out: a copy (or a scaled copy) of a run of each line */
            size_t es = (size_t)co * g.fsz, run = (size_t)g.K * es;
            for (int64_t b = 0; b < nb; b++) {
                const unsigned char *from = wout + (size_t)(b * lout + sel[ax].start) * es;
                unsigned char *to = out + (size_t)((l0 + b) * g.K) * es;
                if (s == 1) memcpy(to, from, run);
                else if (single) {
                    const float *f = (const float *)(const void *)from;
                    float *t = (float *)(void *)to, fs = (float)s;
                    for (size_t e = 0; e < run / 4; e++) t[e] = f[e] * fs;
                } else {
                    const double *f = (const double *)(const void *)from;
                    double *t = (double *)(void *)to;
                    for (size_t e = 0; e < run / 8; e++) t[e] = f[e] * s;
                }
            }
        } else if (g.I == 1) {
            for (int64_t b = 0; b < nb; b++)
                for (int64_t q = 0; q < g.K; q++) put(&sc, b, q);
        } else if (td < 0 && !a->p.fft.conj_out) {
            /* columns of out: element copies, then scaled as reals (complex = 2 parts) */
            size_t es = (size_t)co * g.fsz;
            int64_t obase[4096];
            for (int64_t b = 0; b < nb; b++) obase[b] = ((l0 + b) / g.I) * g.K * g.I + (l0 + b) % g.I;
            for (int64_t q = 0; q < g.K; q++) {
                int64_t k = sel[ax].start + q * sel[ax].step;
                unsigned char *dst = out + (size_t)(q * g.I) * es;
                const unsigned char *src = wout + (size_t)k * es;
                size_t ls = (size_t)lout * es;
                /* constant sizes: element moves, not a library call per element */
                if (es == 16)
                    for (int64_t b = 0; b < nb; b++) memcpy(dst + (size_t)obase[b] * 16, src + (size_t)b * ls, 16);
                else if (es == 8)
                    for (int64_t b = 0; b < nb; b++) memcpy(dst + (size_t)obase[b] * 8, src + (size_t)b * ls, 8);
                else
                    for (int64_t b = 0; b < nb; b++) memcpy(dst + (size_t)obase[b] * es, src + (size_t)b * ls, es);
            }
            if (s != 1)
                for (int64_t q = 0; q < g.K; q++)
                    for (int64_t b = 0; b < nb; b++) {
                        size_t e = (size_t)(obase[b] + q * g.I) * (size_t)co;
                        for (int c = 0; c < co; c++) st(out, e + (size_t)c, s * ld(out, e + (size_t)c, single), single);
                    }
        } else {
            for (int64_t q = 0; q < g.K; q++)
                for (int64_t b = 0; b < nb; b++) put(&sc, b, q);
        }
    }
out:
    fftk_free(ib);
    fftk_free(win);
    fftk_free(wout);
    return rc;
}

static size_t fftn_proj(const zc_array *a, const zc_range *sel, node_proj_fn proj)
{
    if ((fftk_kind)a->p.fft.kind == FFTK_NONE) return proj(a->inputs[0], sel);
    geom g;
    geometry(a, sel, &g);
    zc_range isel[ZC_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) isel[d] = sel[d];
    isel[a->p.fft.axis] = (zc_range){0, g.use, 1};
    /* FFTW's own plan data and buffers are outside our allocator; count a line's worth */
    return node_region_bytes(a->inputs[0], isel) + proj(a->inputs[0], isel) + (size_t)g.B * (g.line_in + g.line_out) +
           2 * (FFTK_ALIGN + sizeof(void *)) + 64;
}

/* FFTW, per FFT node: the planner's state and codelet tables once, and a few
 * plans of the node's length (contiguous and strided, per alignment), each
 * with its twiddles: about one complex line (16 bytes per point) */
#define FFT_FIXED ((size_t)2 << 20)
#define FFT_PLAN_LINES 4
#define FFT_POINT_BYTES 16

static size_t fftn_library_mem(const zc_array *a)
{
    size_t n = (size_t)a->p.fft.n, per = FFT_PLAN_LINES * FFT_POINT_BYTES;
    return n > (SIZE_MAX - FFT_FIXED) / per ? SIZE_MAX : FFT_FIXED + per * n;
}

static const char *fftn_name(const zc_array *a)
{
    static const char *const names[] = {"fft", "ifft", "rfft", "irfft", "twiddle"};
    int k = a->p.fft.kind;
    return k >= 0 && k <= FFTK_NONE ? names[k] : "fft?";
}

/* A transform as asked becomes its algorithm for the bound (its builder, ops/fft.c). */
static int fftn_expand(zc_array *a, size_t limit, size_t (*task_proj)(const zc_array *a, const int64_t *block))
{
    (void)task_proj;
    return a->p.fft.expand ? a->p.fft.expand(a, limit) : 0;
}

static int fftn_to_json(const zc_array *a, json_t *o)
{
    const typeof(a->p.fft) *p = &a->p.fft;
    if (p->expand) return zc__err(ZC_EINTERNAL, "plan: an fft node not expanded to its algorithm");
    json_t *f = json_pack("{s:i, s:i, s:I, s:f, s:b, s:b, s:i, s:I, s:i}", "axis", p->axis, "kind", p->kind, "n",
                          (json_int_t)p->n, "scale", p->scale, "conj_in", p->conj_in, "conj_out", p->conj_out,
                          "tw_dim", p->tw_dim, "tw_n", (json_int_t)p->tw_n, "tw_sign", p->tw_sign);
    if (!f) return zc__err(ZC_ENOMEM, "plan: fft node parameters");
    return json_object_set_new(o, "fft", f) < 0 ? zc__err(ZC_ENOMEM, "plan: fft node parameters") : 0;
}

static int fftn_from_json(const json_t *o, zc_array *a, int node)
{
    (void)node; /* its messages name the kind */
    json_t *f = json_object_get(o, "fft");
    typeof(a->p.fft) *p = &a->p.fft;
    int cin = 0, cout = 0;
    json_int_t n = 0, twn = 0;
    if (a->ninputs != 1 || !json_is_object(f) ||
        json_unpack(f, "{s:i, s:i, s:I, s:F, s:b, s:b, s:i, s:I, s:i}", "axis", &p->axis, "kind", &p->kind, "n", &n,
                    "scale", &p->scale, "conj_in", &cin, "conj_out", &cout, "tw_dim", &p->tw_dim, "tw_n", &twn,
                    "tw_sign", &p->tw_sign) < 0)
        return zc__err(ZC_EFORMAT, "plan: fft node: missing or malformed parameters");
    p->conj_in = cin;
    p->conj_out = cout;
    p->n = n;
    p->tw_n = twn;
    const zc_array *in = a->inputs[0];
    if (p->axis < 0 || p->axis >= a->ndim || in->ndim != a->ndim || p->kind < 0 || p->kind > FFTK_NONE ||
        (p->kind != FFTK_NONE && (p->n < 1 || p->n > INT32_MAX ||
                                  a->shape[p->axis] != fftk_out_len((fftk_kind)p->kind, p->n))) ||
        (p->tw_dim >= 0 && (p->tw_dim >= a->ndim || (p->tw_dim == p->axis && p->kind != FFTK_NONE) || p->tw_n < 1 ||
                            (p->tw_sign != 1 && p->tw_sign != -1))) ||
        p->tw_dim < -1)
        return zc__err(ZC_EFORMAT, "plan: fft node: parameters do not fit its shape");
    for (int d = 0; d < a->ndim; d++)
        if ((d != p->axis || p->kind == FFTK_NONE) && in->shape[d] != a->shape[d])
            return zc__err(ZC_EFORMAT, "plan: fft node: input shape differs off the axis (or anywhere, for a twiddle)");
    /* dtypes as ops/fft.c makes them: the region code reads and writes by these sizes */
    bool single = is_single(a->dtype);
    zc_dtype want_in = p->kind == FFTK_R2C ? (single ? ZC_FLOAT32 : ZC_FLOAT64) : (single ? ZC_COMPLEX64 : ZC_COMPLEX128);
    zc_dtype want_out = p->kind == FFTK_C2R ? (single ? ZC_FLOAT32 : ZC_FLOAT64) : (single ? ZC_COMPLEX64 : ZC_COMPLEX128);
    if (a->dtype != want_out || in->dtype != want_in || a->itemsize != (size_t)(single ? 4 : 8) * (p->kind == FFTK_C2R ? 1 : 2) ||
        in->itemsize != (size_t)(single ? 4 : 8) * (p->kind == FFTK_R2C ? 1 : 2))
        return zc__err(ZC_EFORMAT, "plan: fft node: dtypes %s -> %s do not fit a transform of kind %d",
                       zc_dtype_name(in->dtype), zc_dtype_name(a->dtype), p->kind);
    return 0;
}

const node_kind_def kind_fft = {
    .json = "fft", .flags = KIND_FUSED | KIND_UNCOMPRESSED, .min_inputs = 1, .max_inputs = 1,
    .name = fftn_name, .region = fftn_region, .proj = fftn_proj, .library_mem = fftn_library_mem,
    .to_json = fftn_to_json, .from_json = fftn_from_json, .expand = fftn_expand,
};
