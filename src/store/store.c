/* store/store.c — zc_store_close (zc_store_open is in url.c) and the store_*
 * wrappers every other layer calls: they check keys and the read-only flag
 * before a backend sees a request, and name the key and store in errors. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/alloc.h"
#include "core/error.h"
#include "store/store.h"

void zc_store_close(zc_store *s)
{
    if (s) s->vt->close(s);
}

static int writable(store *s, const char *what, const char *key)
{
    if (s->flags & ZC_STORE_READONLY)
        return zc__err(ZC_EINVAL, "cannot %s \"%s\": store %s is read-only", what, key, s->url);
    return 0;
}

int store_get_many(store *s, store_req *reqs, size_t n) { return store_get_many_each(s, reqs, n, NULL, NULL); }

int store_get_many_each(store *s, store_req *reqs, size_t n, store_each_fn each, void *ctx)
{
    if (n && !reqs) return zc__err(ZC_EINVAL, "store_get_many: reqs is NULL");
    for (size_t i = 0; i < n; i++) {
        int rc = store_key_check(reqs[i].key);
        if (rc < 0) {
            for (size_t j = 0; j < n; j++) {
                reqs[j].data = NULL;
                reqs[j].size = 0;
                reqs[j].total = 0;
                reqs[j].status = j == i ? rc : ZC_ECANCELED;
            }
            return zc__err_wrap(rc, "reading from store %s", s->url);
        }
    }
    if (!n) return 0;
    if (each && s->vt->get_many_each) return s->vt->get_many_each(s, reqs, n, each, ctx);
    int rc = s->vt->get_many(s, reqs, n);
    if (rc == 0 && each)
        for (size_t i = 0; i < n; i++) each(reqs, i, ctx);
    return rc;
}

int store_get(store *s, const char *key, void **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    int rc = store_key_check(key);
    if (rc < 0) return zc__err_wrap(rc, "reading from store %s", s->url);
    store_req r = {.key = key, .length = STORE_TO_END};
    ZC_TRY(s->vt->get_many(s, &r, 1));
    if (r.status == ZC_ENOENT) return zc__err(ZC_ENOENT, "no key \"%s\" in store %s", key, s->url);
    if (r.status < 0) return zc__err_wrap(r.status, "reading \"%s\" from store %s", key, s->url);
    *data = r.data;
    *size = r.size;
    return 0;
}

int store_put(store *s, const char *key, const void *data, size_t size)
{
    int rc = store_key_check(key);
    if (rc < 0) return zc__err_wrap(rc, "writing to store %s", s->url);
    ZC_TRY(writable(s, "write", key));
    if (size && !data) return zc__err(ZC_EINVAL, "writing \"%s\": data is NULL", key);
    rc = s->vt->put(s, key, data, size);
    if (rc < 0) return zc__err_wrap(rc, "writing \"%s\" to store %s", key, s->url);
    return 0;
}

int store_erase(store *s, const char *key)
{
    int rc = store_key_check(key);
    if (rc < 0) return zc__err_wrap(rc, "erasing from store %s", s->url);
    ZC_TRY(writable(s, "erase", key));
    rc = s->vt->erase(s, key);
    if (rc < 0) return zc__err_wrap(rc, "erasing \"%s\" from store %s", key, s->url);
    return 0;
}

int store_prune(store *s, const char *prefix)
{
    if (!s->vt->prune) return 0;
    ZC_TRY(writable(s, "prune", prefix));
    int rc = s->vt->prune(s, prefix);
    return rc < 0 ? zc__err_wrap(rc, "removing empty folders from store %s", s->url) : 0;
}

/* ZC_STORE_MAP=0 in the environment: never map (read everything). */
static int map_allowed(void)
{
    static atomic_int state; /* 0 unknown, 1 yes, 2 no */
    int v = atomic_load_explicit(&state, memory_order_relaxed);
    if (!v) {
        const char *e = getenv("ZC_STORE_MAP");
        v = e && !strcmp(e, "0") ? 2 : 1;
        atomic_store_explicit(&state, v, memory_order_relaxed);
    }
    return v == 1;
}

int store_map(store *s, const char *key, store_map_t *m)
{
    *m = (store_map_t){0};
    if (!s->vt->map || !map_allowed() || store_key_check(key) < 0) return ZC_EUNSUPPORTED;
    return s->vt->map(s, key, m);
}

void store_unmap(store *s, store_map_t *m)
{
    (void)s;
    if (m->handle && m->release) m->release(m->handle);
    *m = (store_map_t){0};
}

int store_map_check(const store_map_t *m)
{
    if (!m->handle || !m->faulted || !atomic_load(m->faulted)) return 0;
    return zc__err(ZC_EIO, "file \"%s\" was cut short by another program while it was read (%llu bytes mapped)",
                   m->key ? m->key : "?", (unsigned long long)m->size);
}

void store_map_drop(store_map_t *m)
{
    if (!m->handle || !m->addr || !m->size) return;
    madvise((void *)m->addr, (size_t)m->size, MADV_DONTNEED);
}

int store_size(store *s, const char *key, uint64_t *size)
{
    *size = 0;
    int rc = store_key_check(key);
    if (rc < 0) return zc__err_wrap(rc, "reading from store %s", s->url);
    return s->vt->size(s, key, size);
}

int store_list_dir(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx)
{
    int rc = store_prefix_check(prefix);
    if (rc < 0) return zc__err_wrap(rc, "listing store %s", s->url);
    return s->vt->list_dir(s, prefix, fn, ctx);
}

/* list_prefix for backends without one: walk list_dir, descending into folders. */
typedef struct {
    store *s;
    int (*fn)(const char *key, void *ctx);
    void *ctx;
} walk_ctx;

static int walk_entry(const char *key, void *ctx)
{
    walk_ctx *w = ctx;
    size_t len = strlen(key);
    if (len && key[len - 1] == '/') return w->s->vt->list_dir(w->s, key, walk_entry, w);
    return w->fn(key, w->ctx);
}

int store_list_prefix(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx)
{
    int rc = store_prefix_check(prefix);
    if (rc < 0) return zc__err_wrap(rc, "listing store %s", s->url);
    if (s->vt->list_prefix) return s->vt->list_prefix(s, prefix, fn, ctx);
    walk_ctx w = {s, fn, ctx};
    return s->vt->list_dir(s, prefix, walk_entry, &w);
}

int store_location(store *s, const char *path, char *buf, size_t size)
{
    while (*path == '/') path++;
    if (s->vt->locate) return s->vt->locate(s, path, buf, size);
    size_t n = strlen(s->url);
    while (n && s->url[n - 1] == '/') n--;
    int w = snprintf(buf, size, "%.*s%s%s", (int)n, s->url, *path ? "/" : "", path);
    if (w < 0 || (size_t)w >= size) return ZC_EOVERFLOW;
    while (w && buf[w - 1] == '/') buf[--w] = 0;
    return 0;
}

int store_keys_add(const char *key, void *ctx)
{
    store_keys *l = ctx;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? 2 * l->cap : 64;
        char **k = zc__realloc(l->keys, ncap * sizeof *k);
        if (!k) return ZC_ENOMEM;
        l->keys = k;
        l->cap = ncap;
    }
    if (!(l->keys[l->n] = zc__strdup(key))) return ZC_ENOMEM;
    l->n++;
    return 0;
}

void store_keys_free(store_keys *l)
{
    for (size_t i = 0; i < l->n; i++) zc__free(l->keys[i]);
    zc__free(l->keys);
    *l = (store_keys){0};
}

int store_erase_prefix(store *s, const char *prefix)
{
    /* listed first, erased after: an object store's next page would skip
     * keys if the listing ran while they are erased */
    store_keys l = {0};
    int rc = store_list_prefix(s, prefix, store_keys_add, &l);
    for (size_t i = 0; rc == 0 && i < l.n; i++) rc = store_erase(s, l.keys[i]);
    store_keys_free(&l);
    return rc < 0 ? rc : store_prune(s, prefix);
}
