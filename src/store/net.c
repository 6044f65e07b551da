/* store/net.c — many HTTP transfers at once on a libcurl multi handle, with
 * retries (see net.h). One batch runs on the calling thread: its buffers and
 * libcurl's count against that thread's memory like any other allocation. */
#include "store/net.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"

/* libcurl's receive buffer per transfer (its default, 16 KiB, costs ~40% of
 * the throughput of a whole read over loopback; the curl tool uses 100 KiB),
 * and for a body of NET_BIG_BODY or more (a coalesced run): in pieces that
 * big, most of a sharded array's inner chunks (~200 KiB) arrive whole in one,
 * and are decoded from it with no copy (remote_get.c lends them), and the
 * recv calls are fewer. At most a quarter of the body it receives. */
#define NET_RECV_BUF 131072L
#define NET_BIG_RECV_BUF 1048576L
#define NET_BIG_BODY ((uint64_t)4 << 20)

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void) { global_rc = curl_global_init(CURL_GLOBAL_ALL); }

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int env_int(const char *name, long lo, long hi, long *v)
{
    const char *e = getenv(name);
    if (!e || !*e) return 0;
    char *end;
    errno = 0;
    long x = strtol(e, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return zc__err(ZC_EINVAL, "%s=\"%s\": expected an integer from %ld to %ld", name, e, lo, hi);
    *v = x;
    return 0;
}

int net_conf_from_env(net_conf *c)
{
    long conc = 64, retries = 5, timeout = 30, backoff = 100, rate = 1;
    ZC_TRY(env_int("ZCUBE_IO_CONCURRENCY", 1, 1024, &conc));
    ZC_TRY(env_int("ZCUBE_IO_RETRIES", 0, 100, &retries));
    ZC_TRY(env_int("ZCUBE_IO_TIMEOUT", 1, 86400, &timeout));
    ZC_TRY(env_int("ZCUBE_IO_BACKOFF_MS", 0, 60000, &backoff));
    ZC_TRY(env_int("ZCUBE_IO_MIN_RATE", 1, 1L << 30, &rate));
    *c = (net_conf){.concurrency = (int)conc, .retries = (int)retries, .timeout_ms = timeout * 1000,
                    .backoff_ms = backoff, .min_rate = rate};
    ZC_TRY(net_conf_ca(c, "SSL_CERT_FILE"));
    return net_conf_ca(c, "CURL_CA_BUNDLE");
}

int net_conf_ca(net_conf *c, const char *var)
{
    const char *path = getenv(var);
    if (!path || !*path) return 0;
    if (access(path, R_OK) < 0)
        return zc__err(ZC_EINVAL, "%s=\"%s\": cannot read it: %s", var, path, strerror(errno));
    if (strlen(path) >= sizeof c->cainfo) return zc__err(ZC_EINVAL, "%s=\"%.40s...\": the path is too long", var, path);
    snprintf(c->cainfo, sizeof c->cainfo, "%s", path);
    return 0;
}

int net_pool_init(net_pool *p, const net_conf *c)
{
    pthread_once(&global_once, global_init);
    *p = (net_pool){.conf = *c};
    if (global_rc != CURLE_OK) {
        p->conf.userpwd = NULL;
        if (c->userpwd) {
            memset(c->userpwd, 0, strlen(c->userpwd));
            zc__free(c->userpwd);
        }
        return zc__err(ZC_EIO, "libcurl: %s", curl_easy_strerror(global_rc));
    }
    pthread_mutex_init(&p->lock, NULL);
    return 0;
}

void net_pool_destroy(net_pool *p)
{
    for (size_t i = 0; i < p->nidle; i++) curl_multi_cleanup(p->idle[i]);
    zc__free(p->idle);
    if (p->conf.userpwd) {
        memset(p->conf.userpwd, 0, strlen(p->conf.userpwd));
        zc__free(p->conf.userpwd);
    }
    pthread_mutex_destroy(&p->lock);
}

static CURLM *pool_take(net_pool *p)
{
    CURLM *m = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->nidle) m = p->idle[--p->nidle];
    pthread_mutex_unlock(&p->lock);
    if (m) return m;
    m = curl_multi_init();
    if (!m) return NULL;
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)p->conf.concurrency);
    curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)p->conf.concurrency);
    return m;
}

static void pool_give(net_pool *p, CURLM *m)
{
    pthread_mutex_lock(&p->lock);
    if (p->nidle == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 4;
        void **v = zc__realloc(p->idle, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&p->lock);
            curl_multi_cleanup(m);
            return;
        }
        p->idle = v;
        p->cap = cap;
    }
    p->idle[p->nidle++] = m;
    pthread_mutex_unlock(&p->lock);
}

void net_url_for_msg(const char *url, char *buf, size_t cap)
{
    const char *sep = strstr(url, "://");
    const char *host = sep ? sep + 3 : url;
    const char *end = host + strcspn(host, "/?#");
    const char *at = NULL;
    for (const char *c = host; c < end; c++)
        if (*c == '@') at = c;
    if (!at) {
        snprintf(buf, cap, "%s", url);
        return;
    }
    snprintf(buf, cap, "%.*s%s", (int)(host - url), url, at + 1);
}

/* The text between <tag> and </tag> in xml, into buf ("" if absent). */
static void xml_field(const char *xml, const char *tag, char *buf, size_t cap)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = strstr(xml, open), *b = a ? strstr(a, close) : NULL;
    buf[0] = 0;
    if (a && b) snprintf(buf, cap, "%.*s", (int)(b - a - strlen(open)), a + strlen(open));
}

void net_describe(const net_xfer *x, char *buf, size_t cap)
{
    char code[64], msg[256];
    xml_field(x->errbody, "Code", code, sizeof code);
    xml_field(x->errbody, "Message", msg, sizeof msg);
    if (code[0] && msg[0]) snprintf(buf, cap, "HTTP %ld %s (%s)", x->code, code, msg);
    else if (code[0]) snprintf(buf, cap, "HTTP %ld %s", x->code, code);
    else snprintf(buf, cap, "HTTP %ld", x->code);
}

/* ------------------------------------------------------------ callbacks */

static bool starts_with(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    return n >= k && !strncasecmp(s, p, k);
}

static size_t on_header(char *s, size_t size, size_t n, void *ud)
{
    net_xfer *x = ud;
    size_t len = size * n;
    char line[256];
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), s);
    if (starts_with(line, len, "HTTP/")) { /* a new answer (after a 100 Continue or a redirect) */
        const char *sp = strchr(line, ' ');
        x->code = sp ? strtol(sp + 1, NULL, 10) : 0;
        x->cr_start = x->cr_end = x->cr_total = 0;
        x->clen = NET_ALL;
        x->etag[0] = 0;
    } else if (starts_with(line, len, "content-range:")) {
        unsigned long long a, b, t;
        if (sscanf(line + 14, " bytes %llu-%llu/%llu", &a, &b, &t) == 3 && a <= b && b < t) {
            x->cr_start = a;
            x->cr_end = b;
            x->cr_total = t;
        }
    } else if (starts_with(line, len, "content-length:")) {
        unsigned long long v;
        if (sscanf(line + 15, " %llu", &v) == 1) x->clen = v;
    } else if (starts_with(line, len, "etag:")) {
        const char *v = line + 5;
        while (*v == ' ') v++;
        snprintf(x->etag, sizeof x->etag, "%.*s", (int)strcspn(v, "\r\n"), v);
    }
    return len;
}

static size_t refuse(net_xfer *x, int status, const char *msg)
{
    x->cut = true;
    x->status = status;
    zc__free(x->errmsg);
    x->errmsg = zc__strdup(msg);
    return 0; /* libcurl aborts the transfer */
}

static size_t on_body(char *s, size_t size, size_t n, void *ud)
{
    net_xfer *x = ud;
    size_t len = size * n;
    if (x->code < 200 || x->code >= 300) { /* keep the start of an error body */
        size_t k = len < NET_ERRBODY_MAX - 1 - x->errlen ? len : NET_ERRBODY_MAX - 1 - x->errlen;
        memcpy(x->errbody + x->errlen, s, k);
        x->errlen += k;
        x->errbody[x->errlen] = 0;
        return len;
    }
    if (x->body_pos == NET_ALL) { /* first body byte: where is it in the object? */
        x->body_pos = x->code == 206 ? x->cr_start : 0;
        x->eff_start = x->want_start == NET_ALL ? x->body_pos : x->want_start;
    }
    uint64_t a = x->body_pos, b = a + len;
    x->body_pos = b;
    uint64_t ws = x->eff_start, we = x->want_len == NET_ALL ? UINT64_MAX : ws + x->want_len;
    if (b <= ws || a >= we) return len;
    uint64_t lo = a > ws ? a : ws, hi = b < we ? b : we;
    uint64_t need = hi - ws;
    if (x->sink) {
        int rc = x->sink(x, lo, (const unsigned char *)s + (lo - a), (size_t)(hi - lo));
        if (rc < 0) return refuse(x, rc, zc_errmsg());
        if (need > x->got) x->got = (size_t)need;
        return len;
    }
    if (need > x->dcap) {
        if (!x->owned && x->dst) return refuse(x, ZC_EINVAL, "the buffer is too small for the bytes sent");
        uint64_t want = x->want_len != NET_ALL ? x->want_len
                        : x->clen != NET_ALL && x->code == 200 && x->clen > ws ? x->clen - ws
                        : x->clen != NET_ALL && x->code == 206 ? x->cr_end + 1 - ws
                                                               : 0;
        if (want < need) want = need > 2 * x->dcap ? need : 2 * x->dcap;
        if (want > SIZE_MAX) return refuse(x, ZC_ENOMEM, "object too large for memory");
        unsigned char *d = zc__realloc(x->dst, (size_t)want);
        if (!d) return refuse(x, ZC_ENOMEM, zc_errmsg());
        x->dst = d;
        x->dcap = (size_t)want;
        x->owned = true;
    }
    memcpy(x->dst + (lo - ws), s + (lo - a), (size_t)(hi - lo));
    if (hi - ws > x->got) x->got = (size_t)(hi - ws);
    return len;
}

/* ------------------------------------------------------------ the loop */

static void set_fail(net_xfer *x, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_fail(net_xfer *x, int status, const char *fmt, ...)
{
    char msg[ZC_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    zc__free(x->errmsg);
    x->errmsg = zc__strdup(msg);
    x->status = status;
}

static int start(net_pool *p, CURLM *m, net_xfer *x, CURL *e)
{
    const net_conf *c = &p->conf;
    curl_easy_reset(e);
    x->easy = e;
    x->code = 0;
    x->got = 0;
    x->body_pos = NET_ALL;
    x->cr_start = x->cr_end = x->cr_total = 0;
    x->clen = NET_ALL;
    x->etag[0] = 0;
    x->errbody[0] = 0;
    x->errlen = 0;
    x->cut = false;
    x->status = 0;
    curl_easy_setopt(e, CURLOPT_URL, x->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    bool big = x->want_len != NET_ALL && x->want_len >= NET_BIG_BODY;
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, big ? NET_BIG_RECV_BUF : NET_RECV_BUF);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, c->min_rate); /* slower than this for the timeout: fails */
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (c->timeout_ms + 999) / 1000);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    if (x->hdrs) curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    if (x->range[0]) curl_easy_setopt(e, CURLOPT_RANGE, x->range);
    if (c->cainfo[0]) curl_easy_setopt(e, CURLOPT_CAINFO, c->cainfo);
    const char *mt = x->method ? x->method : "GET";
    if (c->sigv4[0]) {
        curl_easy_setopt(e, CURLOPT_AWS_SIGV4, c->sigv4);
        curl_easy_setopt(e, CURLOPT_USERPWD, c->userpwd);
    } else if (!strcmp(mt, "GET") || !strcmp(mt, "HEAD")) {
        /* data behind a redirect (a moved folder, a CDN), as curl -L and
         * fsspec follow; the Range header goes along. Not for signed
         * requests: a signature is for one URL. */
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
        curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    }
    if (!strcmp(mt, "HEAD")) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (!strcmp(mt, "PUT")) { /* the body from memory: no "Expect: 100-continue" round trip below 1 MiB */
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body ? x->body : "");
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
    } else if (!strcmp(mt, "POST")) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body ? x->body : "");
    } else if (strcmp(mt, "GET")) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, mt);
    }
    x->active = true;
    return curl_multi_add_handle(m, e) == CURLM_OK ? 0 : ZC_ENOMEM;
}

static bool fatal_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_LOGIN_DENIED:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_TOO_MANY_REDIRECTS:
        return true;
    default:
        return false;
    }
}

/* After an attempt: 0 done (status set), 1 retry (why in errmsg), 2 run
 * again at once, not counted as a retry (the check changed the request). */
static int judge(const net_conf *c, net_xfer *x, CURLcode rc)
{
    char u[512];
    net_url_for_msg(x->url, u, sizeof u);
    const char *mt = x->method ? x->method : "GET";
    if (x->cut) return 0;
    if (rc == CURLE_OPERATION_TIMEDOUT) { /* libcurl's "Timeout was reached" names neither cause nor setting */
        set_fail(x, ZC_EIO, "%s %s: timed out: no connection within %ld s, or slower than %ld bytes/s for %ld s "
                 "(ZCUBE_IO_TIMEOUT, ZCUBE_IO_MIN_RATE)", mt, u, c->timeout_ms / 1000, c->min_rate, c->timeout_ms / 1000);
        return 1;
    }
    if (rc != CURLE_OK) {
        set_fail(x, rc == CURLE_OUT_OF_MEMORY ? ZC_ENOMEM : ZC_EIO, "%s %s: %s%s", mt, u,
                 rc == CURLE_PARTIAL_FILE ? "body cut short: " : "", curl_easy_strerror(rc));
        return fatal_curl(rc) ? 0 : 1;
    }
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->code);
    if (x->code >= 500 || x->code == 429) {
        char d[400];
        net_describe(x, d, sizeof d);
        set_fail(x, ZC_EIO, "%s %s: %s", mt, u, d);
        return 1;
    }
    if (x->code >= 200 && x->code < 300 && x->check) {
        int r = x->check(x);
        if (r != 0) {
            if (r == 2) return 2;
            set_fail(x, r < 0 ? r : ZC_EIO, "%s %s: %s", mt, u, zc_errmsg());
            return r > 0 ? 1 : 0;
        }
    }
    x->status = 0;
    zc__free(x->errmsg);
    x->errmsg = NULL;
    return 0;
}

static uint64_t rng_next(void)
{
    static _Thread_local uint64_t s;
    if (!s) s = (uint64_t)now_ms() * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)&s;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

/* Full-jitter-ish exponential backoff: half the delay fixed, half random. */
static int64_t backoff(const net_conf *c, int attempt)
{
    int64_t d = c->backoff_ms << (attempt < 10 ? attempt - 1 : 9);
    if (d > 100 * c->backoff_ms) d = 100 * c->backoff_ms;
    return d / 2 + (d > 1 ? (int64_t)(rng_next() % (uint64_t)(d / 2 + 1)) : 0);
}

void net_xfer_release(net_xfer *x)
{
    if (x->owned) zc__free(x->dst);
    x->dst = NULL;
    x->owned = false;
    x->dcap = 0;
    zc__free(x->errmsg);
    x->errmsg = NULL;
}

/* A transfer is over: drop a failed one's buffer, tell the caller. */
static void complete(net_xfer *x)
{
    x->done = true;
    if (x->status < 0 && x->owned) {
        zc__free(x->dst);
        x->dst = NULL;
        x->owned = false;
        x->got = 0;
    }
    if (x->on_done) x->on_done(x);
}

int net_run(net_pool *p, net_xfer *xs, size_t n)
{
    if (!n) return 0;
    const net_conf *c = &p->conf;
    size_t conc = (size_t)c->concurrency < n ? (size_t)c->concurrency : n;
    CURLM *m = pool_take(p);
    CURL **easy = zc__calloc(conc, sizeof *easy);
    size_t *waiting = zc__malloc_array(n, sizeof *waiting);
    if (!m || !easy || !waiting) {
        if (m) pool_give(p, m);
        zc__free(easy);
        zc__free(waiting);
        return zc__err(ZC_ENOMEM, "starting %zu HTTP transfers", n);
    }
    size_t neasy = 0, nfree = 0, next = 0, nwait = 0, active = 0;
    CURL **freeh = easy; /* free easy handles are easy[0..nfree) */
    for (size_t i = 0; i < n; i++) {
        net_xfer *x = &xs[i];
        x->attempts = 0;
        x->done = x->active = false;
        x->errmsg = NULL;
        x->owned = false;
        x->dcap = x->dst ? x->cap : 0;
        x->status = 0;
    }
    for (;;) {
        int64_t now = now_ms(), wake = -1;
        while (active < conc) {
            net_xfer *x = NULL;
            for (size_t w = 0; w < nwait; w++)
                if (xs[waiting[w]].not_before_ms <= now) {
                    x = &xs[waiting[w]];
                    waiting[w] = waiting[--nwait];
                    break;
                }
            if (!x && next < n) x = &xs[next++];
            if (!x) break;
            CURL *e = nfree ? freeh[--nfree] : NULL;
            if (!e && neasy < conc && (e = curl_easy_init())) neasy++;
            if (!e || start(p, m, x, e) < 0) {
                set_fail(x, ZC_ENOMEM, "starting an HTTP transfer: out of memory");
                complete(x);
                if (e) freeh[nfree++] = e;
                continue;
            }
            active++;
        }
        for (size_t w = 0; w < nwait; w++)
            if (wake < 0 || xs[waiting[w]].not_before_ms < wake) wake = xs[waiting[w]].not_before_ms;
        if (!active && !nwait && next >= n) break;
        int running;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *e = msg->easy_handle;
            CURLcode res = msg->data.result;
            net_xfer *x;
            curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&x);
            int again = judge(&p->conf, x, res);
            curl_multi_remove_handle(m, e);
            freeh[nfree++] = e;
            x->easy = NULL;
            x->active = false;
            active--;
            if (again == 2) { /* a new request: its own retries */
                x->attempts = 0;
                x->not_before_ms = 0;
                waiting[nwait++] = (size_t)(x - xs);
            } else if (again && x->attempts < c->retries) {
                x->attempts++;
                x->not_before_ms = now_ms() + backoff(c, x->attempts);
                waiting[nwait++] = (size_t)(x - xs);
            } else {
                if (again) {
                    char tail[ZC_ERRMSG_MAX];
                    snprintf(tail, sizeof tail, "%s (gave up after %d attempts; ZCUBE_IO_RETRIES=%d)", x->errmsg,
                             x->attempts + 1, c->retries);
                    set_fail(x, ZC_EIO, "%s", tail);
                }
                complete(x);
            }
        }
        if (active || nwait || next < n) {
            int64_t t = 1000;
            if (nwait && !active) t = wake - now_ms();
            else if (nwait && wake - now_ms() < t) t = wake - now_ms();
            if (t < 0) t = 0;
            if (active) curl_multi_poll(m, NULL, 0, (int)t, NULL);
            else if (t > 0) {
                struct timespec ts = {t / 1000, (t % 1000) * 1000000};
                nanosleep(&ts, NULL);
            }
        }
    }
    for (size_t i = 0; i < neasy; i++) curl_easy_cleanup(easy[i]);
    zc__free(easy);
    zc__free(waiting);
    pool_give(p, m);
    return 0;
}
