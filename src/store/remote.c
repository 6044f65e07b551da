/* store/remote.c — the parts the HTTP and S3 stores share: set-up, key URLs,
 * the meaning of an HTTP answer, and the size of an object (HEAD). */
#include "store/remote.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

int remote_init(remote *r, const store_vtable *vt, const char *url, unsigned flags, const char *base_url,
                const net_conf *conf)
{
    ZC_TRY(net_pool_init(&r->net, conf));
    r->base.vt = vt; /* from here on the caller closes r on failure */
    r->base.flags = flags;
    r->base.io_depth = (unsigned)conf->concurrency;
    r->base.url = zc__strdup(url);
    r->base_url = zc__strdup(base_url);
    if (!r->base.url || !r->base_url) return ZC_ENOMEM;
    long gap = 1 << 20;
    const char *e = getenv("ZCUBE_IO_COALESCE_GAP");
    if (e && *e) {
        char *end;
        gap = strtol(e, &end, 10);
        if (*end || gap < 0) return zc__err(ZC_EINVAL, "ZCUBE_IO_COALESCE_GAP=\"%s\": expected bytes (0 or more)", e);
    }
    r->gap = (uint64_t)gap;
    r->span_max = 4 * r->gap > (16u << 20) ? 4 * r->gap : (16u << 20);
    return 0;
}

void remote_fini(remote *r)
{
    net_pool_destroy(&r->net);
    curl_slist_free_all(r->hdrs);
    curl_slist_free_all(r->put_hdrs);
    zc__free(r->base_url);
    zc__free(r->base.url);
}

char *remote_encode(char *out, size_t *len, const char *s, bool keep_slash)
{
    size_t n = strlen(s);
    char *o = zc__realloc(out, *len + 3 * n + 1);
    if (!o) {
        zc__free(out);
        return NULL;
    }
    static const char hex[] = "0123456789ABCDEF";
    size_t k = *len;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        bool plain = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
                     *c == '-' || *c == '.' || *c == '_' || *c == '~' || (keep_slash && *c == '/');
        if (plain) {
            o[k++] = (char)*c;
        } else {
            o[k++] = '%';
            o[k++] = hex[*c >> 4];
            o[k++] = hex[*c & 15];
        }
    }
    o[k] = 0;
    *len = k;
    return o;
}

char *remote_url(const remote *r, const char *key, const char *query)
{
    size_t len = strlen(r->base_url);
    char *u = zc__malloc(len + 1);
    if (!u) return NULL;
    memcpy(u, r->base_url, len + 1);
    if (!(u = remote_encode(u, &len, key, true))) return NULL;
    if (query) {
        size_t q = strlen(query);
        char *v = zc__realloc(u, len + q + 1);
        if (!v) {
            zc__free(u);
            return NULL;
        }
        memcpy(v + len, query, q + 1);
        u = v;
    }
    return u;
}

int remote_answer_error(const net_xfer *x)
{
    if (x->code == 416) return ZC_ERANGE;
    char d[400], u[512];
    net_describe(x, d, sizeof d);
    net_url_for_msg(x->url, u, sizeof u);
    if (x->code == 404 && !strstr(x->errbody, "<Code>NoSuchBucket</Code>")) return ZC_ENOENT;
    const char *mt = x->method ? x->method : "GET";
    if (x->code == 403)
        return zc__err(ZC_EIO, "%s %s: %s: access denied (check the credentials: AWS_ACCESS_KEY_ID, "
                       "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, or the AWS profile)", mt, u, d);
    return zc__err(ZC_EIO, "%s %s: %s", mt, u, d);
}

int remote_size(store *s, const char *key, uint64_t *size)
{
    remote *r = (remote *)s;
    net_xfer x = {.method = "HEAD", .hdrs = r->hdrs};
    char *u = remote_url(r, key, NULL);
    if (!u) return ZC_ENOMEM;
    x.url = u;
    int rc = net_run(&r->net, &x, 1);
    if (rc == 0 && x.status < 0) rc = zc__err(x.status, "%s", x.errmsg);
    else if (rc == 0 && (x.code < 200 || x.code >= 300)) rc = remote_answer_error(&x);
    else if (rc == 0 && x.clen == NET_ALL) rc = zc__err(ZC_EIO, "HEAD %s: no Content-Length in the answer", u);
    if (rc == 0) *size = x.clen;
    if (rc == ZC_ENOENT) rc = zc__err(ZC_ENOENT, "no key \"%s\" in store %s", key, s->url);
    net_xfer_release(&x);
    zc__free(u);
    return rc;
}
