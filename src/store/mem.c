/* store/mem.c — in-memory stores, "memory://NAME".
 *
 * Stores live in a process-wide registry by name: opening a NAME that is
 * already open returns a new handle on the same data (its own flags), and the
 * data is freed when the last handle closes. The data is a chained hash table
 * of entries under a rwlock; an entry holds its key and value in one
 * allocation and is never changed in place: put builds the new entry outside
 * the lock and swaps it in, so a reader sees the old value or the new one.
 *
 *   entry: [ next | hash | size | keylen | key bytes NUL | value bytes ]
 *
 * A memory store may hold both "a" and "a/b" (a filesystem cannot); listings
 * then show "a" and "a/". Listings are in byte order. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "store/store.h"

typedef struct mem_entry {
    struct mem_entry *next; /* hash chain */
    uint64_t hash;          /* of the key */
    size_t size;            /* value bytes */
    size_t keylen;          /* key bytes, without the NUL */
    char key[];             /* key, NUL, then the value */
} mem_entry;

typedef struct mem_data {
    struct mem_data *next;  /* registry list (under reg_lock) */
    char *name;             /* registry name */
    int refs;               /* open handles (under reg_lock) */
    pthread_rwlock_t lock;  /* guards everything below */
    mem_entry **buckets;    /* nbuckets chains, or NULL before the first put */
    size_t nbuckets;        /* power of two */
    size_t count;           /* entries */
} mem_data;

typedef struct {
    store base; /* must be first */
    mem_data *d;
} mem_store;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_data *registry;

static uint64_t hash_key(const char *s, size_t *len)
{
    uint64_t h = 1469598103934665603ull;
    const char *p = s;
    for (; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    *len = (size_t)(p - s);
    return h ^ (h >> 29);
}

static unsigned char *value_of(mem_entry *e) { return (unsigned char *)e->key + e->keylen + 1; }

/* The chain link pointing at key's entry (or at the NULL ending its chain). */
static mem_entry **find(mem_data *d, const char *key, uint64_t h, size_t len)
{
    mem_entry **link = &d->buckets[h & (d->nbuckets - 1)];
    for (; *link; link = &(*link)->next)
        if ((*link)->hash == h && (*link)->keylen == len && !memcmp((*link)->key, key, len)) break;
    return link;
}

static mem_entry *lookup(mem_data *d, const char *key)
{
    if (!d->buckets) return NULL;
    size_t len;
    uint64_t h = hash_key(key, &len);
    return *find(d, key, h, len);
}

/* ------------------------------------------------------------------ reads */

static int mem_get_many(store *s, store_req *reqs, size_t n)
{
    mem_data *d = ((mem_store *)s)->d;
    int err = 0;
    char msg[ZC_ERRMSG_MAX] = "";
    pthread_rwlock_rdlock(&d->lock);
    for (size_t i = 0; i < n; i++) {
        store_req *r = &reqs[i];
        r->data = NULL;
        r->size = 0;
        r->total = 0;
        r->status = 0;
        mem_entry *e = lookup(d, r->key);
        if (!e) {
            r->status = ZC_ENOENT;
            continue;
        }
        uint64_t start, len;
        r->total = e->size;
        if (store_resolve_range(r, e->size, &start, &len) < 0) {
            r->status = ZC_ERANGE;
            continue;
        }
        if (r->buf) {
            if (len > r->buf_cap) {
                r->status = zc__err(ZC_EINVAL, "buffer of %zu bytes is too small for %llu bytes of \"%s\"",
                                    r->buf_cap, (unsigned long long)len, r->key);
            } else {
                r->data = r->buf;
            }
        } else if (!(r->data = zc__malloc((size_t)len))) {
            r->status = ZC_ENOMEM;
        }
        if (r->status) {
            if (!err) zc_errmsg_r(msg, sizeof msg);
            err = 1;
            continue;
        }
        memcpy(r->data, value_of(e) + start, (size_t)len);
        r->size = (size_t)len;
    }
    pthread_rwlock_unlock(&d->lock);
    if (err) zc__err_set_text(msg);
    return 0;
}

static int mem_size(store *s, const char *key, uint64_t *size)
{
    mem_data *d = ((mem_store *)s)->d;
    pthread_rwlock_rdlock(&d->lock);
    mem_entry *e = lookup(d, key);
    if (e) *size = e->size;
    pthread_rwlock_unlock(&d->lock);
    return e ? 0 : zc__err(ZC_ENOENT, "no key \"%s\" in %s", key, s->url);
}

/* ------------------------------------------------------------------ writes */

/* Double the table (called under the write lock); failure keeps the old one. */
static void grow(mem_data *d)
{
    size_t nb = d->nbuckets * 2;
    mem_entry **b = zc__calloc(nb, sizeof *b);
    if (!b) return; /* longer chains, still correct */
    for (size_t i = 0; i < d->nbuckets; i++) {
        for (mem_entry *e = d->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    zc__free(d->buckets);
    d->buckets = b;
    d->nbuckets = nb;
}

static int mem_put(store *s, const char *key, const void *data, size_t size)
{
    mem_data *d = ((mem_store *)s)->d;
    size_t len, bytes;
    uint64_t h = hash_key(key, &len);
    if (ck_add_sz(sizeof(mem_entry) + len + 1, size, &bytes))
        return zc__err(ZC_ENOMEM, "value of %zu bytes is too large", size);
    mem_entry *e = zc__malloc(bytes);
    if (!e) return ZC_ENOMEM;
    e->next = NULL;
    e->hash = h;
    e->size = size;
    e->keylen = len;
    memcpy(e->key, key, len + 1);
    if (size) memcpy(value_of(e), data, size);

    mem_entry *old = NULL;
    pthread_rwlock_wrlock(&d->lock);
    if (!d->buckets) {
        if (!(d->buckets = zc__calloc(64, sizeof *d->buckets))) {
            pthread_rwlock_unlock(&d->lock);
            zc__free(e);
            return ZC_ENOMEM;
        }
        d->nbuckets = 64;
    }
    mem_entry **link = find(d, key, h, len);
    old = *link;
    if (old) {
        e->next = old->next;
        *link = e;
    } else {
        *link = e;
        if (++d->count > d->nbuckets) grow(d);
    }
    pthread_rwlock_unlock(&d->lock);
    zc__free(old);
    return 0;
}

static int mem_erase(store *s, const char *key)
{
    mem_data *d = ((mem_store *)s)->d;
    mem_entry *old = NULL;
    pthread_rwlock_wrlock(&d->lock);
    if (d->buckets) {
        size_t len;
        uint64_t h = hash_key(key, &len);
        mem_entry **link = find(d, key, h, len);
        if ((old = *link)) {
            *link = old->next;
            d->count--;
        }
    }
    pthread_rwlock_unlock(&d->lock);
    zc__free(old);
    return 0;
}

/* ------------------------------------------------------------------ listing */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Copy, under the read lock, the names to report for `prefix`: with `recurse`
 * every key below it, else each key's first segment below it (with '/' when
 * more follows). Then sort and call fn on each distinct name without the lock,
 * so fn may use the store. */
static int list(store *s, const char *prefix, bool recurse, int (*fn)(const char *key, void *ctx), void *ctx)
{
    mem_data *d = ((mem_store *)s)->d;
    size_t plen = strlen(prefix);
    if (plen && prefix[plen - 1] == '/') plen--;
    size_t skip = plen ? plen + 1 : 0; /* bytes of "prefix/" */

    pthread_rwlock_rdlock(&d->lock);
    size_t n = 0, bytes = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        char **names = NULL, *text = NULL;
        if (pass == 1) {
            size_t arr;
            if (ck_mul_sz(n, sizeof(char *), &arr) || ck_add_sz(arr, bytes, &arr) ||
                !(names = zc__malloc(arr ? arr : 1))) {
                pthread_rwlock_unlock(&d->lock);
                return ZC_ENOMEM;
            }
            text = (char *)(names + n);
            n = 0;
        }
        for (size_t b = 0; d->buckets && b < d->nbuckets; b++) {
            for (mem_entry *e = d->buckets[b]; e; e = e->next) {
                if (e->keylen <= skip || (plen && (memcmp(e->key, prefix, plen) || e->key[plen] != '/')))
                    continue;
                size_t take = e->keylen;
                if (!recurse) {
                    const char *slash = memchr(e->key + skip, '/', e->keylen - skip);
                    if (slash) take = (size_t)(slash - e->key) + 1;
                }
                if (pass == 1) {
                    names[n] = text;
                    memcpy(text, e->key, take);
                    text[take] = 0;
                    text += take + 1;
                }
                n++;
                bytes += take + 1;
            }
        }
        if (pass == 1) {
            pthread_rwlock_unlock(&d->lock);
            qsort(names, n, sizeof *names, cmp_str);
            int rc = 0;
            for (size_t i = 0; i < n && !rc; i++)
                if (i == 0 || strcmp(names[i], names[i - 1])) rc = fn(names[i], ctx);
            zc__free(names);
            return rc;
        }
    }
    return 0; /* not reached */
}

static int mem_list_dir(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx)
{
    return list(s, prefix, false, fn, ctx);
}

static int mem_list_prefix(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx)
{
    return list(s, prefix, true, fn, ctx);
}

/* ------------------------------------------------------------------ open, close */

static void data_free(mem_data *d)
{
    for (size_t b = 0; d->buckets && b < d->nbuckets; b++) {
        for (mem_entry *e = d->buckets[b], *next; e; e = next) {
            next = e->next;
            zc__free(e);
        }
    }
    zc__free(d->buckets);
    pthread_rwlock_destroy(&d->lock);
    zc__free(d->name);
    zc__free(d);
}

static void mem_close(store *s)
{
    mem_store *m = (mem_store *)s;
    mem_data *d = m->d;
    pthread_mutex_lock(&reg_lock);
    bool last = --d->refs == 0;
    if (last) {
        for (mem_data **q = &registry; *q; q = &(*q)->next)
            if (*q == d) {
                *q = d->next;
                break;
            }
    }
    pthread_mutex_unlock(&reg_lock);
    if (last) data_free(d);
    zc__free(m->base.url);
    zc__free(m);
}

static const store_vtable mem_vtable = {
    .version = 1,
    .scheme = "memory",
    .get_many = mem_get_many,
    .put = mem_put,
    .erase = mem_erase,
    .size = mem_size,
    .list_dir = mem_list_dir,
    .close = mem_close,
    .list_prefix = mem_list_prefix,
};

int store_mem_open(const char *name, unsigned flags, store **out)
{
    *out = NULL;
    if (!name) return zc__err(ZC_EINVAL, "memory store name is NULL");
    size_t nlen = strlen(name);
    mem_store *m = zc__calloc(1, sizeof *m);
    if (!m) return ZC_ENOMEM;
    m->base.vt = &mem_vtable;
    m->base.flags = flags;
    if (!(m->base.url = zc__malloc(nlen + sizeof "memory://"))) {
        zc__free(m);
        return ZC_ENOMEM;
    }
    memcpy(m->base.url, "memory://", 9);
    memcpy(m->base.url + 9, name, nlen + 1);

    pthread_mutex_lock(&reg_lock);
    mem_data *d = registry;
    while (d && strcmp(d->name, name)) d = d->next;
    if (!d) {
        if (!(d = zc__calloc(1, sizeof *d)) || !(d->name = zc__strdup(name))) {
            pthread_mutex_unlock(&reg_lock);
            zc__free(d);
            zc__free(m->base.url);
            zc__free(m);
            return ZC_ENOMEM;
        }
        pthread_rwlock_init(&d->lock, NULL);
        d->next = registry;
        registry = d;
    }
    d->refs++;
    pthread_mutex_unlock(&reg_lock);
    m->d = d;
    *out = &m->base;
    return 0;
}
