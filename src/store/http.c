/* store/http.c — read-only stores over HTTP(S): "http://host/path",
 * "https://...". Keys are fetched as URLs below the path (GET, ranged GETs,
 * HEAD for sizes); a 404 is an absent key. HTTP has no listing, so list_dir
 * is unsupported: arrays and groups open by their metadata keys. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "store/remote.h"
#include "store/url.h"

static int http_put(store *s, const char *key, const void *data, size_t size)
{
    return zc__err(ZC_EUNSUPPORTED, "HTTP stores are read-only");
}

static int http_erase(store *s, const char *key) { return http_put(s, key, NULL, 0); }

static int http_list(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx)
{
    return zc__err(ZC_EUNSUPPORTED, "cannot list store %s: HTTP has no listing (open arrays and groups by path)",
                   s->url);
}

static void http_close(store *s)
{
    remote_fini((remote *)s);
    zc__free(s);
}

static const store_vtable http_vt = {
    .version = 1,
    .scheme = "http",
    .get_many = remote_get_many,
    .get_many_each = remote_get_many_each,
    .put = http_put,
    .erase = http_erase,
    .size = remote_size,
    .list_dir = http_list,
    .close = http_close,
};

int store_http_open(const char *url, unsigned flags, store **out)
{
    if (flags & ZC_STORE_CREATE) return zc__err(ZC_EUNSUPPORTED, "cannot create %s: HTTP stores are read-only", url);
    net_conf conf;
    ZC_TRY(net_conf_from_env(&conf));
    size_t len = strlen(url);
    char *base = zc__malloc(len + 2);
    remote *r = zc__calloc(1, sizeof *r);
    if (!base || !r) {
        zc__free(base);
        zc__free(r);
        return ZC_ENOMEM;
    }
    memcpy(base, url, len + 1);
    if (len && base[len - 1] != '/') memcpy(base + len, "/", 2);
    int rc = remote_init(r, &http_vt, url, flags | ZC_STORE_READONLY, base, &conf);
    zc__free(base);
    if (rc < 0) {
        if (r->base.vt) http_close(&r->base);
        else zc__free(r);
        return rc;
    }
    *out = &r->base;
    return 0;
}
