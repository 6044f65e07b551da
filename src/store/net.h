/* store/net.h — HTTP transfers for the object stores (http.c, s3.c), many at
 * once on libcurl's multi interface, with retries.
 *
 * A batch is an array of net_xfer. net_run keeps up to `concurrency` of them
 * in flight over reused keep-alive connections (each store keeps its idle
 * multi handles, so connections outlive a batch) and retries a transfer, with
 * exponential backoff and jitter, after a connection error, a timeout, a body
 * cut short, HTTP 5xx or 429, or when its check callback says so; a transfer
 * that still fails after `retries` retries gets ZC_EIO and a message naming
 * its URL. Any other answer (2xx, 3xx, 4xx) completes the transfer: the
 * caller reads `code`. Credentials never enter a URL or a message. */
#ifndef ZC_STORE_NET_H
#define ZC_STORE_NET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_ALL UINT64_MAX /* want_len: the whole body from want_start on */
#define NET_ERRBODY_MAX 640

struct curl_slist;
typedef struct net_xfer net_xfer;

/* Per-store settings (from the environment at open, see net_conf_from_env). */
typedef struct {
    int concurrency;      /* transfers in flight per batch (ZCUBE_IO_CONCURRENCY, default 64) */
    int retries;          /* retries per transfer (ZCUBE_IO_RETRIES, default 5) */
    long timeout_ms;      /* connecting, or a transfer slower than min_rate, for this long fails (ZCUBE_IO_TIMEOUT, s; default 30) */
    long min_rate;        /* bytes/s (ZCUBE_IO_MIN_RATE, default 1: a transfer fails only when it stalls) */
    long backoff_ms;      /* first retry delay, doubled each time, capped at 100x (ZCUBE_IO_BACKOFF_MS, default 100) */
    char cainfo[512];     /* certificates to trust for https, "" = the system's (net_conf_ca) */
    char sigv4[96];       /* "aws:amz:REGION:s3" to sign, "" = unsigned */
    char *userpwd;        /* "KEY:SECRET" for sigv4 (owned; wiped at close) */
} net_conf;

/* Trust the certificates of the file the environment variable `var` names
 * (a private CA: MinIO, Ceph, a proxy) when it is set; a file that cannot be
 * read is an error naming the variable. net_conf_from_env applies
 * SSL_CERT_FILE then CURL_CA_BUNDLE; S3 stores AWS_CA_BUNDLE over both. */
int net_conf_ca(net_conf *c, const char *var);

/* A store's transfer machinery: idle multi handles (kept connections). */
typedef struct {
    net_conf conf;
    pthread_mutex_t lock;
    void **idle;          /* idle CURLM handles */
    size_t nidle, cap;
} net_pool;

struct net_xfer {
    /* in */
    const char *url;          /* full URL, percent-encoded */
    const char *method;       /* NULL = GET; "HEAD", "PUT", "POST", "DELETE" */
    struct curl_slist *hdrs;  /* extra headers (caller's) */
    const void *body;         /* upload for PUT/POST */
    size_t body_len;
    char range[48];           /* byte range as libcurl takes it ("0-99", "100-", "-8" = the last 8), "" = none */
    /* where the body goes: bytes [want_start, want_start + want_len) of the object
     * into dst. want_start NET_ALL = the body as sent, from its first byte. */
    uint64_t want_start, want_len;
    unsigned char *dst;       /* caller's buffer of cap bytes, or NULL: allocated (zc__malloc) */
    size_t cap;
    /* Or, if set, each piece of the wanted bytes goes here instead of dst (the
     * object's offset `at`); < 0 aborts the transfer with that status. */
    int (*sink)(net_xfer *x, uint64_t at, const unsigned char *p, size_t n);
    /* Called when a transfer completed with a 2xx answer: 0 = done, 1 = retry
     * (message set with zc__err), 2 = run again now, not counted (it changed
     * the request), < 0 = fail with that status. */
    int (*check)(net_xfer *x);
    /* Optional: called once when the outputs below are final (a failed
     * transfer's allocated dst already freed), on the thread running net_run,
     * while the batch's other transfers go on. */
    void (*on_done)(net_xfer *x);
    void *ctx;                /* the caller's */
    /* out */
    int status;               /* 0, or ZC_EIO/ZC_ENOMEM/ZC_EINVAL (message in errmsg) */
    long code;                /* HTTP status of the last attempt */
    size_t got;               /* bytes placed in dst */
    bool owned;               /* dst was allocated here (the caller frees it) */
    uint64_t cr_start, cr_end, cr_total; /* Content-Range of a 206 (cr_total 0: none) */
    uint64_t clen;            /* Content-Length, NET_ALL if none */
    char etag[96];            /* ETag header, quotes included */
    char errbody[NET_ERRBODY_MAX]; /* start of a non-2xx body (S3 error XML), NUL-ended */
    char *errmsg;             /* failure message (zc__malloc'd) or NULL */
    /* private */
    uint64_t body_pos;        /* absolute offset of the next body byte */
    uint64_t eff_start;       /* want_start, or the first body byte's offset when that is NET_ALL */
    size_t dcap;              /* capacity of dst */
    size_t errlen;
    int attempts;
    int64_t not_before_ms;
    bool active, done, cut;   /* cut: the write callback refused (too small, no memory) */
    void *easy;
};

/* Defaults, then the ZCUBE_IO_* variables. */
int net_conf_from_env(net_conf *c);
int net_pool_init(net_pool *p, const net_conf *c);
void net_pool_destroy(net_pool *p);
/* Run every transfer to completion (statuses in each). Returns 0, or
 * ZC_ENOMEM when the batch could not start. */
int net_run(net_pool *p, net_xfer *x, size_t n);
/* Free the outputs a transfer allocated (dst if owned, errmsg). */
void net_xfer_release(net_xfer *x);
/* "<code> <S3 error code> (<message>)" for a non-2xx answer, into buf. */
void net_describe(const net_xfer *x, char *buf, size_t cap);
/* Copy of url without a "user:password@" part, for messages. */
void net_url_for_msg(const char *url, char *buf, size_t cap);

#endif
