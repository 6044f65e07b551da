/* store/remote.h — what the HTTP and S3 stores share: a base URL that keys
 * are appended to (percent-encoded), the transfer pool, and the batched
 * read (remote_get.c): ranges of one key closer than a gap become one ranged
 * GET, shard indexes one suffix-range GET; a missing key is ZC_ENOENT in its
 * request (read as fill_value), 403 / NoSuchBucket fail at once with the URL. */
#ifndef ZC_STORE_REMOTE_H
#define ZC_STORE_REMOTE_H

#include "store/net.h"
#include "store/store.h"

typedef struct remote {
    store base;               /* must be first */
    net_pool net;
    char *base_url;           /* ends with '/'; keys are appended */
    struct curl_slist *hdrs;  /* headers every request carries (S3: x-amz-content-sha256, token) */
    struct curl_slist *put_hdrs; /* those and a Content-Type for PUTs (S3) */
    uint64_t gap;             /* coalesce ranges of a key this close (ZCUBE_IO_COALESCE_GAP, default 1 MiB) */
    uint64_t span_max;        /* but no merged GET longer than this (16 MiB or 4 x gap) */
} remote;

/* Set up r (base fields, pool, settings from the environment); base_url is
 * copied, conf->userpwd taken (freed here if the pool cannot start). On
 * failure with r->base.vt set, the caller closes r as usual. */
int remote_init(remote *r, const store_vtable *vt, const char *url, unsigned flags, const char *base_url,
                const net_conf *conf);
void remote_fini(remote *r);
/* base_url + key percent-encoded ('/' kept) + query (may be NULL; "?..."), zc__malloc'd. */
char *remote_url(const remote *r, const char *key, const char *query);
/* Append s to out (cap bytes used so far: *len), percent-encoding all but
 * unreserved characters (and '/' when keep_slash). Returns the new string. */
char *remote_encode(char *out, size_t *len, const char *s, bool keep_slash);
/* The status for a non-2xx answer: 404 -> ZC_ENOENT (NoSuchBucket -> ZC_EIO),
 * 416 -> ZC_ERANGE, else ZC_EIO; a message naming the URL except for those two. */
int remote_answer_error(const net_xfer *x);

/* vtable entries */
int remote_get_many(store *s, store_req *reqs, size_t n);
int remote_get_many_each(store *s, store_req *reqs, size_t n, store_each_fn each, void *ctx);
int remote_size(store *s, const char *key, uint64_t *size);

#endif
