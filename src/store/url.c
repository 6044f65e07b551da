/* store/url.c — zc_store_open: one table of URL schemes. A plain path (no
 * "scheme://" in front) is a folder; every other URL goes to its scheme's row. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "store/url.h"

typedef struct {
    const char *scheme;
    bool whole_url; /* the backend takes the whole URL, not the part after "://" */
    int (*open)(const char *url, unsigned flags, store **out);
} scheme_row;

static int open_file(const char *rest, unsigned flags, store **out)
{
    if (!*rest) return zc__err(ZC_EINVAL, "store url \"file://\" has no path");
    return store_fs_open(rest, flags, out);
}

static const scheme_row schemes[] = {
    {"file", false, open_file},
    {"memory", false, store_mem_open},
    {"s3", true, store_s3_open},
    {"http", true, store_http_open},
    {"https", true, store_http_open},
};

/* The length of url's scheme when it is "scheme://rest" (the part before
 * "://" a URL scheme), else 0: a path. */
static size_t scheme_len(const char *url)
{
    const char *sep = strstr(url, "://");
    if (!sep || sep == url || !isalpha((unsigned char)url[0])) return 0;
    for (const char *c = url; c < sep; c++)
        if (!isalnum((unsigned char)*c) && *c != '+' && *c != '-' && *c != '.') return 0;
    return (size_t)(sep - url);
}

const char *store_local_path(const char *url)
{
    size_t n = scheme_len(url);
    if (!n) return url;
    return n == 4 && !strncasecmp(url, "file", 4) && url[7] ? url + 7 : NULL;
}

int store_parent_url(const char *url, char *parent, size_t psize, char *name, size_t nsize)
{
    const char *path = store_local_path(url), *top; /* top: what must stay of the URL */
    if (path)
        top = path[0] == '/' ? path + 1 : path;
    else if (scheme_len(url) == 2 && !strncasecmp(url, "s3", 2) && !strchr(url, '?')) {
        top = strchr(url + 5, '/'); /* past the bucket */
        if (!top) return 0;
        top++;
    } else
        return 0;
    size_t end = strlen(url);
    while (end > (size_t)(top - url) && url[end - 1] == '/') end--;
    size_t cut = end;
    while (cut > (size_t)(top - url) && url[cut - 1] != '/') cut--;
    size_t nlen = end - cut;
    if (!nlen || nlen >= nsize || (nlen == 1 && url[cut] == '.') || (nlen == 2 && !strncmp(url + cut, "..", 2))) return 0;
    memcpy(name, url + cut, nlen);
    name[nlen] = 0;
    /* a parent keeps its trailing '/' only where it is all there is ("/",
     * "s3://bucket/"); a relative path's first part is in "." */
    size_t plen = cut;
    while (plen > (size_t)(top - url) && url[plen - 1] == '/') plen--;
    int n = plen == 0 ? snprintf(parent, psize, ".")
            : path && plen == (size_t)(path - url) ? snprintf(parent, psize, "%.*s.", (int)plen, url)
                                                    : snprintf(parent, psize, "%.*s", (int)plen, url);
    return n > 0 && (size_t)n < psize;
}

int zc_store_open(const char *url, unsigned flags, zc_store **out)
{
    zc__err_clear();
    if (!out) return zc__err(ZC_EINVAL, "zc_store_open: out is NULL");
    *out = NULL;
    if (!url) return zc__err(ZC_EINVAL, "zc_store_open: url is NULL");
    if (flags & ~(ZC_STORE_READONLY | ZC_STORE_CREATE))
        return zc__err(ZC_EINVAL, "zc_store_open: unknown flags 0x%x", flags & ~(ZC_STORE_READONLY | ZC_STORE_CREATE));
    size_t slen = scheme_len(url);
    if (!slen) return store_fs_open(url, flags, out);
    for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
        if (strlen(schemes[i].scheme) == slen && !strncasecmp(url, schemes[i].scheme, slen))
            return schemes[i].open(schemes[i].whole_url ? url : url + slen + 3, flags, out);
    return zc__err(ZC_EUNSUPPORTED,
                   "unsupported store scheme \"%.*s\" in \"%s\" (supported: a path, file://, memory://, s3://, "
                   "http://, https://)",
                   (int)slen, url, url);
}
