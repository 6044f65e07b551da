/* store/s3_list.c — listings with ListObjectsV2, page after page
 * (continuation tokens), and the little XML reading they need. The query is
 * sorted and percent-encoded here: libcurl's SigV4 signs it as it is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "store/s3.h"

/* Decode XML entities of s[0..n) into a new string. */
static char *xml_text(const char *s, size_t n)
{
    char *o = zc__malloc(n + 1);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '&') {
            o[k++] = s[i];
            continue;
        }
        static const struct { const char *name; char c; } ents[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        bool done = false;
        for (size_t e = 0; e < 5 && !done; e++) {
            size_t l = strlen(ents[e].name);
            if (i + l <= n && !strncmp(s + i, ents[e].name, l)) {
                o[k++] = ents[e].c;
                i += l - 1;
                done = true;
            }
        }
        if (!done && i + 2 < n && s[i + 1] == '#') {
            char *end;
            unsigned long v = s[i + 2] == 'x' ? strtoul(s + i + 3, &end, 16) : strtoul(s + i + 2, &end, 10);
            if (*end == ';' && v > 0 && v < 128) { /* keys are checked later; ASCII is all a reference can give here */
                o[k++] = (char)v;
                i = (size_t)(end - s);
                done = true;
            }
        }
        if (!done) o[k++] = '&';
    }
    o[k] = 0;
    return o;
}

char *s3_xml_next(const char *xml, const char *tag, const char **pos, bool *oom)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = strstr(*pos, open);
    if (!a) return NULL;
    a += strlen(open);
    const char *b = strstr(a, close);
    if (!b) return NULL;
    *pos = b + strlen(close);
    char *t = xml_text(a, (size_t)(b - a));
    if (!t) *oom = true;
    return t;
}

typedef struct {
    s3_store *t;
    int (*fn)(const char *key, void *ctx);
    void *ctx;
} lister;

/* Hand fn one listed name (full key below the bucket), relative to the store's root. */
static int emit(lister *l, const char *full, const char *list_prefix)
{
    size_t pl = strlen(l->t->prefix);
    if (strncmp(full, l->t->prefix, pl) || !strcmp(full, list_prefix)) return 0; /* the folder itself (a marker) */
    const char *rel = full + pl;
    if (!*rel) return 0;
    return l->fn(rel, l->ctx);
}

/* "<bucket url>?continuation-token=T&delimiter=%2F&list-type=2&max-keys=N&prefix=P":
 * parameters in sorted order, values percent-encoded ('/' too). */
static char *list_url(const s3_store *t, const char *token, bool dirs, const char *pfx)
{
    const char *page = getenv("ZCUBE_S3_LIST_PAGE"); /* keys per page (default: the server's, 1000 on S3) */
    const struct {
        const char *name, *val;
    } q[] = {{"continuation-token", token}, {"delimiter", dirs ? "/" : NULL}, {"list-type", "2"},
             {"max-keys", page && *page ? page : NULL}, {"prefix", pfx}};
    size_t len = strlen(t->bucket_url);
    char *u = zc__strdup(t->bucket_url);
    char sep = '?';
    for (size_t i = 0; u && i < sizeof q / sizeof *q; i++) {
        if (!q[i].val) continue;
        size_t n = strlen(q[i].name);
        char *v = zc__realloc(u, len + n + 3);
        if (!v) {
            zc__free(u);
            return NULL;
        }
        u = v;
        u[len++] = sep;
        memcpy(u + len, q[i].name, n);
        len += n;
        u[len++] = '=';
        u[len] = 0;
        u = remote_encode(u, &len, q[i].val, false);
        sep = '&';
    }
    return u;
}

/* One page; *token in: continuation token or NULL; out: the next one or NULL. */
static int page(lister *l, const char *pfx, bool dirs, char **token)
{
    remote *r = &l->t->r;
    char *given = *token; /* freed here, once the next one is compared with it */
    *token = NULL;
    char *u = list_url(l->t, given, dirs, pfx);
    if (!u) {
        zc__free(given);
        return ZC_ENOMEM;
    }
    net_xfer x = {.url = u, .hdrs = r->hdrs, .want_len = NET_ALL};
    int rc = net_run(&r->net, &x, 1);
    if (rc == 0 && x.status < 0) rc = zc__err(x.status, "%s", x.errmsg);
    else if (rc == 0 && (x.code < 200 || x.code >= 300)) {
        rc = remote_answer_error(&x);
        if (rc == ZC_ENOENT || rc == ZC_ERANGE) rc = zc__err(ZC_EIO, "listing %s: HTTP %ld", l->t->r.base.url, x.code);
    }
    char *body = NULL;
    if (rc == 0 && !(body = zc__malloc(x.got + 1))) rc = ZC_ENOMEM;
    if (rc == 0) {
        if (x.got) memcpy(body, x.dst, x.got);
        body[x.got] = 0;
    }
    net_xfer_release(&x);
    zc__free(u);
    if (rc < 0) {
        zc__free(given);
        zc__free(body);
        return rc;
    }
    bool oom = false;
    const char *pos = body;
    char *k;
    while (rc == 0 && (k = s3_xml_next(body, "Key", &pos, &oom))) {
        rc = emit(l, k, pfx);
        zc__free(k);
    }
    pos = body;
    while (rc == 0 && (pos = strstr(pos, "<CommonPrefixes>")) && (k = s3_xml_next(body, "Prefix", &pos, &oom))) {
        rc = emit(l, k, pfx);
        zc__free(k);
    }
    pos = body;
    char *trunc = rc == 0 ? s3_xml_next(body, "IsTruncated", &pos, &oom) : NULL;
    if (trunc && !strcmp(trunc, "true")) {
        pos = body;
        *token = s3_xml_next(body, "NextContinuationToken", &pos, &oom);
        if (!*token && !oom) rc = zc__err(ZC_EIO, "listing %s: truncated page without a continuation token",
                                          l->t->r.base.url);
        /* a server that hands back the token it was given would list the same
         * page forever: an error, not a hang */
        else if (*token && given && !strcmp(*token, given))
            rc = zc__err(ZC_EIO, "listing %s: the server gave the same continuation token twice ('%.64s')",
                         l->t->r.base.url, given);
    }
    zc__free(given);
    zc__free(trunc);
    zc__free(body);
    if (rc == 0 && oom) rc = ZC_ENOMEM;
    return rc;
}

static int list(store *s, const char *prefix, bool dirs, int (*fn)(const char *key, void *ctx), void *ctx)
{
    s3_store *t = (s3_store *)s;
    lister l = {t, fn, ctx};
    size_t n = strlen(t->prefix) + strlen(prefix) + 2;
    char *pfx = zc__malloc(n);
    if (!pfx) return ZC_ENOMEM;
    size_t pl = strlen(prefix);
    snprintf(pfx, n, "%s%s%s", t->prefix, prefix, pl && prefix[pl - 1] != '/' ? "/" : "");
    char *token = NULL;
    int rc;
    do rc = page(&l, pfx, dirs, &token);
    while (rc == 0 && token);
    zc__free(token);
    zc__free(pfx);
    return rc;
}

int s3_list_dir(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx)
{
    return list(s, prefix, true, fn, ctx);
}

int s3_list_prefix(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx)
{
    return list(s, prefix, false, fn, ctx);
}
