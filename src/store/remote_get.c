/* store/remote_get.c — a batch of reads as concurrent HTTP GETs.
 *
 * Plain ranges of one key are sorted, and those closer than the store's gap
 * become one ranged GET (a "run") whose bytes land straight in each
 * request's buffer as they arrive (the bytes between are dropped: no buffer
 * for the whole run, so memory is what the requests ask for). A range
 * counted from the end (shard index) is one suffix-range GET ("-N"); its
 * Content-Range is checked, and a server that answers a suffix range wrongly
 * (s3rver does) or ignores ranges gets one more GET with the explicit range.
 * A body shorter than what the object holds for the range is retried, never
 * returned. Zero-length requests are a HEAD (the object must exist and the
 * offset fit). Runs go to net_run in slices of SLICE, which bounds the
 * transfer records in memory whatever the batch size. A request is filled
 * in, and the caller told (store_get_many_each), the moment its bytes are in:
 * a run's requests one by one as its body arrives (decoded while the bytes
 * are still in the cache, while the rest of the run and the other runs keep
 * coming). A request that lets the store lend its bytes (store_req.lend) and
 * arrives whole in one piece of a body is told with the piece itself: no
 * copy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "store/remote.h"

#define SLICE 1024

enum { K_RANGE, K_TO_END, K_SUFFIX, K_WHOLE_BUT, K_HEAD };

typedef struct {
    store_each_fn each;  /* the caller's, or NULL */
    void *ctx;
    bool *told;          /* per request: told already (a run's requests as their bytes complete) */
    int first_rc;        /* the batch's first failure (not ENOENT/ERANGE) and its message */
    char first[ZC_ERRMSG_MAX];
} batch;

typedef struct {
    batch *b;
    store_req *reqs;     /* the batch's */
    const size_t *order;
    int kind;
    int redo;            /* a suffix answered wrongly was redone with an explicit range */
    uint64_t start, end; /* K_RANGE: the bytes the GET asks for */
    uint64_t off, len;   /* K_SUFFIX: the request's offset and length from the end; K_WHOLE_BUT: offset */
    uint64_t total;      /* object size, from the answer */
    bool erange;         /* the suffix range does not fit the object */
    size_t first, count; /* the run's requests: order[first .. first + count) */
} run;

typedef struct {
    const store_req *reqs;
    size_t i;
} item;

static int by_key_offset(const void *a, const void *b)
{
    const store_req *x = &((const item *)a)->reqs[((const item *)a)->i];
    const store_req *y = &((const item *)b)->reqs[((const item *)b)->i];
    int c = strcmp(x->key, y->key);
    if (c) return c;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The object's size as a 2xx answer tells it. */
static bool answer_total(const net_xfer *x, uint64_t *total)
{
    if (x->code == 206 && x->cr_total) *total = x->cr_total;
    else if (x->code != 206 && x->clen != NET_ALL) *total = x->clen;
    else return false;
    return true;
}

static int check(net_xfer *x)
{
    run *r = x->ctx;
    uint64_t total = 0;
    if (r->kind == K_WHOLE_BUT && x->clen == NET_ALL) total = x->got; /* chunked: the body is the object */
    else if (!answer_total(x, &total)) return zc__err(ZC_EIO, "HTTP %ld without a size (Content-Range)", x->code), 1;
    r->total = total;
    if (r->kind == K_HEAD) return 0;
    if (r->kind == K_SUFFIX) {
        if (r->off + r->len > total) {
            r->erange = true;
            return 0;
        }
        uint64_t a = total - r->off - r->len;
        if (x->code == 206 && x->cr_start == a && x->cr_end == total - 1 - r->off) {
            if (x->got < r->len)
                return zc__err(ZC_EIO, "body cut short: %zu of %llu bytes", x->got, (unsigned long long)r->len), 1;
            return 0;
        }
        if (r->redo++)
            return zc__err(ZC_EIO, "the server answers byte ranges wrongly (Content-Range %llu-%llu/%llu)",
                           (unsigned long long)x->cr_start, (unsigned long long)x->cr_end,
                           (unsigned long long)x->cr_total);
        snprintf(x->range, sizeof x->range, "%llu-%llu", (unsigned long long)a, (unsigned long long)(a + r->len - 1));
        x->want_start = a;
        return 2;
    }
    uint64_t s = x->want_start == NET_ALL ? 0 : x->want_start;
    uint64_t expect = s >= total ? 0 : total - s;
    if (x->want_len != NET_ALL && x->want_len < expect) expect = x->want_len;
    if (x->got < expect)
        return zc__err(ZC_EIO, "body cut short: %zu of %llu bytes", x->got, (unsigned long long)expect), 1;
    return 0;
}

/* Sort the requests into runs; order[] lists request indices run by run. */
static size_t plan_runs(const remote *r, const store_req *reqs, size_t n, item *items, size_t *order, run *runs)
{
    size_t nr = 0, ni = 0, no = 0;
    for (size_t i = 0; i < n; i++) {
        const store_req *q = &reqs[i];
        run u = {.first = no, .count = 1};
        if (q->length == 0) {
            u.kind = K_HEAD;
        } else if (!q->from_end && q->length != STORE_TO_END) {
            items[ni++] = (item){reqs, i};
            continue;
        } else if (!q->from_end) {
            u.kind = K_TO_END;
            u.start = q->offset;
        } else if (q->length != STORE_TO_END) {
            u.kind = K_SUFFIX;
            u.off = q->offset;
            u.len = q->length;
        } else {
            u.kind = K_WHOLE_BUT;
            u.off = q->offset;
        }
        order[no++] = i;
        runs[nr++] = u;
    }
    qsort(items, ni, sizeof *items, by_key_offset);
    for (size_t k = 0; k < ni; k++) {
        const store_req *q = &reqs[items[k].i];
        uint64_t a = q->offset, b = q->length > UINT64_MAX - a ? UINT64_MAX : a + q->length;
        run *u = nr ? &runs[nr - 1] : NULL;
        bool join = u && u->kind == K_RANGE && !strcmp(reqs[order[u->first]].key, q->key) &&
                    a <= u->end + r->gap && (b > u->end ? b : u->end) - u->start <= r->span_max;
        if (join) {
            if (b > u->end) u->end = b;
            u->count++;
        } else {
            runs[nr++] = (run){.kind = K_RANGE, .start = a, .end = b, .first = no, .count = 1};
        }
        order[no++] = items[k].i;
    }
    return nr;
}

/* Request i (of run u) has all its bytes, at q->data: tell the caller now. */
static void tell_early(run *u, size_t i, uint64_t total)
{
    store_req *q = &u->reqs[i];
    q->size = (size_t)q->length;
    q->total = total;
    q->status = 0;
    u->b->told[i] = true;
    u->b->each(u->reqs, i, u->b->ctx);
}

/* A piece of a coalesced run's body: into every request of the run it overlaps
 * (bytes arrive in order, so a request whose last byte is here is complete). */
static int scatter(net_xfer *x, uint64_t at, const unsigned char *p, size_t n)
{
    run *u = x->ctx;
    uint64_t total = 0;
    bool early = u->b->each && answer_total(x, &total);
    for (size_t k = 0; k < u->count; k++) {
        size_t i = u->order[u->first + k];
        store_req *q = &u->reqs[i];
        uint64_t a = q->offset, b = a + q->length;
        if (b <= at || a >= at + n || u->b->told[i]) continue;
        if (early && b > total) early = false; /* past the end: finish() says so */
        if (early && q->lend && !q->data && a >= at && b <= at + n) { /* whole in the piece: lent */
            q->data = (void *)(p + (a - at));
            tell_early(u, i, total);
            q->data = NULL;
            continue;
        }
        if (!q->data) { /* first bytes: its buffer */
            if (q->buf && q->buf_cap < q->length)
                return zc__err(ZC_EINVAL, "buffer of %zu bytes too small for %llu bytes", q->buf_cap,
                               (unsigned long long)q->length);
            if (q->length > SIZE_MAX) return zc__err(ZC_ENOMEM, "range of %llu bytes", (unsigned long long)q->length);
            q->data = q->buf ? q->buf : zc__malloc((size_t)q->length);
            if (!q->data) return ZC_ENOMEM;
        }
        uint64_t lo = a > at ? a : at, hi = b < at + n ? b : at + n;
        memcpy((unsigned char *)q->data + (lo - a), p + (lo - at), (size_t)(hi - lo));
        if (early && hi == b) tell_early(u, i, total);
    }
    return 0;
}

/* Set up the GET (or HEAD) of one run; 0, or a status for all its requests. */
static int prepare(remote *r, run *u, store_req *reqs, const size_t *order, net_xfer *x)
{
    store_req *q = &reqs[order[u->first]];
    *x = (net_xfer){.hdrs = r->hdrs, .check = check, .ctx = u, .want_start = 0, .want_len = NET_ALL};
    bool single = u->count == 1;
    switch (u->kind) {
    case K_HEAD:
        x->method = "HEAD";
        break;
    case K_RANGE:
        snprintf(x->range, sizeof x->range, "%llu-%llu", (unsigned long long)u->start, (unsigned long long)u->end - 1);
        x->want_start = u->start;
        x->want_len = u->end - u->start;
        if (!single) x->sink = scatter;
        break;
    case K_TO_END:
        if (u->start) snprintf(x->range, sizeof x->range, "%llu-", (unsigned long long)u->start);
        x->want_start = u->start;
        break;
    case K_SUFFIX:
        if (u->off > UINT64_MAX - u->len) return ZC_ERANGE;
        snprintf(x->range, sizeof x->range, "-%llu", (unsigned long long)(u->off + u->len));
        x->want_start = NET_ALL;
        x->want_len = u->len;
        break;
    default: /* K_WHOLE_BUT: the whole object into our own buffer, then the part asked for */
        single = false;
        break;
    }
    if (single && q->buf && u->kind != K_HEAD) {
        if (x->want_len != NET_ALL && q->buf_cap < x->want_len)
            return zc__err(ZC_EINVAL, "buffer of %zu bytes too small for %llu bytes", q->buf_cap,
                           (unsigned long long)x->want_len);
        x->dst = q->buf;
        x->cap = q->buf_cap;
    }
    x->url = remote_url(r, q->key, NULL);
    return x->url ? 0 : ZC_ENOMEM;
}

/* Give request q its bytes: `src` (len bytes) copied into its buffer or a new one. */
static int deliver_copy(store_req *q, const unsigned char *src, uint64_t len)
{
    if (q->buf) {
        if (q->buf_cap < len) return zc__err(ZC_EINVAL, "buffer of %zu bytes too small for %llu bytes", q->buf_cap,
                                             (unsigned long long)len);
        q->data = q->buf;
    } else if (!(q->data = zc__malloc(len ? (size_t)len : 1))) {
        return ZC_ENOMEM;
    }
    if (len) memcpy(q->data, src, (size_t)len);
    q->size = (size_t)len;
    return 0;
}

/* Hand request q the transfer's buffer (it owns it then) holding len bytes. */
static int deliver_take(store_req *q, net_xfer *x, uint64_t len)
{
    if (x->dst && x->dst != q->buf && !x->owned) return deliver_copy(q, x->dst, len);
    if (!x->dst) return deliver_copy(q, NULL, 0);
    q->data = x->dst;
    q->size = (size_t)len;
    x->owned = false;
    x->dst = NULL;
    return 0;
}

/* Fill the requests of run u from its finished transfer. */
static void finish(run *u, net_xfer *x, store_req *reqs, const size_t *order)
{
    int st = x->status;
    if (st == 0 && (x->code < 200 || x->code >= 300)) st = remote_answer_error(x);
    else if (st < 0) zc__err(st, "%s", x->errmsg ? x->errmsg : "transfer failed");
    else if (u->erange) st = ZC_ERANGE;
    for (size_t k = 0; k < u->count; k++) {
        if (u->b->told[order[u->first + k]]) continue; /* complete before the run was */
        store_req *q = &reqs[order[u->first + k]];
        int rc = st;
        q->total = st == 0 ? u->total : 0;
        if (rc == 0) {
            uint64_t a, len;
            switch (u->kind) {
            case K_HEAD:
                rc = store_resolve_range(q, u->total, &a, &len);
                if (rc == 0) rc = deliver_copy(q, NULL, 0);
                break;
            case K_RANGE:
                rc = store_resolve_range(q, u->total, &a, &len);
                if (rc == 0 && u->count == 1) rc = deliver_take(q, x, len);
                else if (rc == 0) q->size = (size_t)len; /* scatter placed the bytes */
                break;
            case K_TO_END:
            case K_SUFFIX:
                rc = store_resolve_range(q, u->total, &a, &len);
                if (rc == 0) rc = deliver_take(q, x, len);
                break;
            default:
                rc = store_resolve_range(q, u->total, &a, &len);
                if (rc == 0) rc = deliver_copy(q, x->dst, len);
                break;
            }
        }
        q->status = rc;
        if (rc < 0) {
            if (q->data && q->data != q->buf) zc__free(q->data);
            q->data = NULL;
            q->size = 0;
        }
    }
}

/* Note the first failure among requests first .. first + count of order[]. */
static void note_failures(batch *b, const store_req *reqs, const size_t *order, size_t first, size_t count)
{
    for (size_t k = 0; k < count && !b->first_rc; k++) {
        int st = reqs[order[first + k]].status;
        if (st < 0 && st != ZC_ENOENT && st != ZC_ERANGE) {
            b->first_rc = st;
            snprintf(b->first, sizeof b->first, "%s", zc_errmsg());
        }
    }
}

static void tell(batch *b, store_req *reqs, const size_t *order, size_t first, size_t count)
{
    note_failures(b, reqs, order, first, count);
    if (b->each)
        for (size_t k = 0; k < count; k++)
            if (!b->told[order[first + k]]) b->each(reqs, order[first + k], b->ctx);
}

/* net_run's completion hook: the run's requests get their outputs now. */
static void run_done(net_xfer *x)
{
    run *u = x->ctx;
    finish(u, x, u->reqs, u->order);
    tell(u->b, u->reqs, u->order, u->first, u->count);
}

int remote_get_many(store *s, store_req *reqs, size_t n) { return remote_get_many_each(s, reqs, n, NULL, NULL); }

int remote_get_many_each(store *s, store_req *reqs, size_t n, store_each_fn each, void *ctx)
{
    remote *r = (remote *)s;
    for (size_t i = 0; i < n; i++) {
        reqs[i].data = NULL;
        reqs[i].size = 0;
        reqs[i].total = 0;
        reqs[i].status = 0;
    }
    item *items = zc__malloc_array(n, sizeof *items);
    size_t *order = zc__malloc_array(n, sizeof *order);
    run *runs = zc__malloc_array(n, sizeof *runs);
    net_xfer *xs = zc__malloc_array(n < SLICE ? n : SLICE, sizeof *xs);
    bool *told = zc__calloc(n ? n : 1, sizeof *told);
    if (!items || !order || !runs || !xs || !told) {
        zc__free(told);
        zc__free(items);
        zc__free(order);
        zc__free(runs);
        zc__free(xs);
        for (size_t i = 0; i < n; i++) reqs[i].status = ZC_ENOMEM;
        return zc__err(ZC_ENOMEM, "reading %zu keys from store %s", n, s->url);
    }
    size_t nr = plan_runs(r, reqs, n, items, order, runs);
    batch bt = {.each = each, .ctx = ctx, .told = told};
    for (size_t k = 0; k < nr; k++) {
        runs[k].b = &bt;
        runs[k].reqs = reqs;
        runs[k].order = order;
    }
    for (size_t b = 0; b < nr; b += SLICE) {
        size_t m = nr - b < SLICE ? nr - b : SLICE, nx = 0;
        for (size_t k = b; k < b + m; k++) {
            int rc = prepare(r, &runs[k], reqs, order, &xs[nx]);
            if (rc == 0) {
                xs[nx++].on_done = run_done;
                continue;
            }
            zc__free((char *)xs[nx].url);
            for (size_t j = 0; j < runs[k].count; j++) reqs[order[runs[k].first + j]].status = rc;
            tell(&bt, reqs, order, runs[k].first, runs[k].count);
        }
        if (net_run(&r->net, xs, nx) < 0) /* none started */
            for (size_t j = 0; j < nx; j++) {
                xs[j].status = ZC_ENOMEM;
                run_done(&xs[j]);
            }
        for (size_t j = 0; j < nx; j++) {
            net_xfer_release(&xs[j]);
            zc__free((char *)xs[j].url);
        }
    }
    zc__free(told);
    zc__free(items);
    zc__free(order);
    zc__free(runs);
    zc__free(xs);
    if (bt.first_rc) zc__err(bt.first_rc, "%s", bt.first);
    return 0;
}
