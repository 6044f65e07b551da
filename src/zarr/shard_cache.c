/* zarr/shard_cache.c — shard indexes by shard number, with clock eviction.
 *
 * Memory grows with use: each cached index is its own allocation (a
 * shard_ref, shared by reference with the readers using it), made when it is
 * added; the table of entries grows by doubling. At most `max` entries
 * (max_bytes / index size, at least 4) are kept; beyond that a clock sweep
 * evicts an entry not used since the hand last passed it (its shard_ref lives
 * on until its last reader releases it). Lookups are a linear-probing hash
 * from shard number to entry. */
#include "zarr/shard_cache.h"

#include <pthread.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "store/store.h"

typedef struct {
    uint64_t id;        /* shard number + 1; 0 = free entry */
    bool used;          /* clock bit */
    shard_ref *ref;     /* the cache's reference */
} entry;

struct shard_cache {
    pthread_mutex_t lock;
    size_t words;       /* uint64 words per index */
    size_t max;         /* entries allowed */
    entry *e;           /* entries in use: [0, n) */
    size_t n, ecap;
    uint32_t *slot;     /* hash table: entry number + 1, 0 = empty */
    size_t cap;         /* slots (power of two, >= 2 n) */
    size_t hand;        /* clock hand over entries */
};

shard_ref *shard_ref_new(size_t words)
{
    if (words > (SIZE_MAX - sizeof(shard_ref)) / 8) return NULL;
    shard_ref *r = zc__malloc(sizeof(shard_ref) + words * 8);
    if (!r) return NULL;
    atomic_init(&r->refs, 1);
    r->present = false;
    r->size = 0;
    r->map = NULL;
    r->mm = (store_map_t){0};
    return r;
}

void shard_ref_release(shard_ref *r)
{
    if (!r || atomic_fetch_sub(&r->refs, 1) != 1) return;
    store_unmap(NULL, &r->mm);
    zc__free(r);
}

int shard_cache_create(size_t words, size_t max_bytes, shard_cache **out)
{
    shard_cache *c = zc__calloc(1, sizeof *c);
    if (!c) return ZC_ENOMEM;
    pthread_mutex_init(&c->lock, NULL);
    c->words = words;
    size_t per = words * 8 + sizeof(entry) + sizeof(shard_ref) + 8;
    c->max = max_bytes / per;
    if (c->max < 4) c->max = 4;
    if (c->max > (1u << 16)) c->max = 1u << 16;
    *out = c;
    return 0;
}

void shard_cache_free(shard_cache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) shard_ref_release(c->e[i].ref);
    pthread_mutex_destroy(&c->lock);
    zc__free(c->e);
    zc__free(c->slot);
    zc__free(c);
}

static size_t home(const shard_cache *c, uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (c->cap - 1);
}

/* Slot holding `key`, or the empty slot where it would go. */
static size_t find(const shard_cache *c, uint64_t key)
{
    for (size_t i = home(c, key);; i = (i + 1) & (c->cap - 1))
        if (!c->slot[i] || c->e[c->slot[i] - 1].id == key) return i;
}

static int rehash(shard_cache *c, size_t cap)
{
    uint32_t *s = zc__calloc(cap, sizeof *s);
    if (!s) return ZC_ENOMEM;
    zc__free(c->slot);
    c->slot = s;
    c->cap = cap;
    for (size_t i = 0; i < c->n; i++) c->slot[find(c, c->e[i].id)] = (uint32_t)(i + 1);
    return 0;
}

shard_ref *shard_cache_acquire(shard_cache *c, uint64_t id)
{
    uint64_t key = id + 1;
    shard_ref *r = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->cap) {
        size_t i = find(c, key);
        if (c->slot[i]) {
            entry *e = &c->e[c->slot[i] - 1];
            e->used = true;
            r = e->ref;
            atomic_fetch_add(&r->refs, 1);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return r;
}

bool shard_cache_get(shard_cache *c, uint64_t id, uint64_t *index, bool *present, uint64_t *size)
{
    shard_ref *r = shard_cache_acquire(c, id);
    if (!r) return false;
    *present = r->present;
    *size = r->size;
    if (r->present) memcpy(index, r->index, c->words * 8);
    shard_ref_release(r);
    return true;
}

/* Remove entry k (backward-shift deletion in the table); the last entry moves into its place. */
static void remove_entry(shard_cache *c, size_t k)
{
    size_t i = find(c, c->e[k].id);
    c->slot[i] = 0;
    for (size_t j = (i + 1) & (c->cap - 1); c->slot[j]; j = (j + 1) & (c->cap - 1)) {
        uint32_t v = c->slot[j];
        c->slot[j] = 0;
        c->slot[find(c, c->e[v - 1].id)] = v;
    }
    shard_ref_release(c->e[k].ref);
    size_t last = c->n - 1;
    if (k != last) {
        c->slot[find(c, c->e[last].id)] = (uint32_t)(k + 1);
        c->e[k] = c->e[last];
    }
    c->n--;
}

void shard_cache_insert(shard_cache *c, uint64_t id, shard_ref *r)
{
    uint64_t key = id + 1;
    atomic_fetch_add(&r->refs, 1); /* the cache's reference */
    pthread_mutex_lock(&c->lock);
    /* a cache is an optimization: on allocation failure, just do not cache */
    if (c->cap && c->slot[find(c, key)]) {
        entry *e = &c->e[c->slot[find(c, key)] - 1];
        shard_ref_release(e->ref); /* readers holding the old one keep it */
        e->ref = r;
        e->used = true;
        r = NULL;
        goto out;
    }
    while (c->n >= c->max && c->n) { /* clock sweep */
        c->hand %= c->n;
        entry *e = &c->e[c->hand];
        if (e->used) {
            e->used = false;
            c->hand++;
        } else {
            remove_entry(c, c->hand);
        }
    }
    if (c->n == c->ecap) {
        size_t ncap = c->ecap ? 2 * c->ecap : 16;
        entry *ne = zc__realloc(c->e, ncap * sizeof *ne);
        if (!ne) goto out;
        c->e = ne;
        c->ecap = ncap;
    }
    if (2 * (c->n + 1) > c->cap && rehash(c, c->cap ? 2 * c->cap : 32) < 0) goto out;
    c->e[c->n] = (entry){key, true, r};
    r = NULL;
    c->slot[find(c, key)] = (uint32_t)(c->n + 1);
    c->n++;
out:
    pthread_mutex_unlock(&c->lock);
    if (r) shard_ref_release(r); /* not cached after all */
}

void shard_cache_put(shard_cache *c, uint64_t id, const uint64_t *index, bool present, uint64_t size)
{
    shard_ref *r = shard_ref_new(present ? c->words : 0);
    if (!r) return;
    r->present = present;
    r->size = size;
    if (present) memcpy(r->index, index, c->words * 8);
    shard_cache_insert(c, id, r);
    shard_ref_release(r);
}

void shard_cache_drop(shard_cache *c, uint64_t id)
{
    uint64_t key = id + 1;
    pthread_mutex_lock(&c->lock);
    if (c->cap) {
        size_t i = find(c, key);
        if (c->slot[i]) remove_entry(c, c->slot[i] - 1);
    }
    pthread_mutex_unlock(&c->lock);
}
