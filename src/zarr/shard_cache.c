/* zarr/shard_cache.c — open-addressing table of shard indexes with clock eviction. */
#include "zarr/shard_cache.h"

#include <pthread.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

typedef struct {
    uint64_t id;      /* shard number + 1; 0 = free slot */
    uint64_t size;    /* shard object size in bytes */
    bool present;     /* shard object exists */
    bool used;        /* clock bit */
} slot_hdr;

struct shard_cache {
    pthread_mutex_t lock;
    size_t words;     /* uint64 words per index */
    size_t cap;       /* slots (power of two) */
    size_t max;       /* entries allowed (≤ cap/2 keeps probes short) */
    size_t count;
    size_t hand;      /* clock hand */
    slot_hdr *hdr;
    uint64_t *data;   /* cap × words */
};

int shard_cache_create(size_t words, size_t max_bytes, shard_cache **out)
{
    size_t per = words * 8 + sizeof(slot_hdr);
    size_t max = max_bytes / per;
    if (max < 4) max = 4;
    size_t cap = 8;
    while (cap < 2 * max) cap *= 2;
    shard_cache *c = zc__calloc(1, sizeof *c);
    if (!c) return ZC_ENOMEM;
    c->hdr = zc__calloc(cap, sizeof(slot_hdr));
    c->data = zc__malloc_array(cap, words * 8);
    if (!c->hdr || !c->data) {
        shard_cache_free(c);
        return ZC_ENOMEM;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->words = words;
    c->cap = cap;
    c->max = max;
    *out = c;
    return 0;
}

void shard_cache_free(shard_cache *c)
{
    if (!c) return;
    if (c->hdr && c->data) pthread_mutex_destroy(&c->lock);
    zc__free(c->hdr);
    zc__free(c->data);
    zc__free(c);
}

static size_t home(const shard_cache *c, uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (c->cap - 1);
}

static size_t find(const shard_cache *c, uint64_t key)
{
    for (size_t i = home(c, key);; i = (i + 1) & (c->cap - 1))
        if (c->hdr[i].id == key || c->hdr[i].id == 0) return i;
}

/* Remove slot i, re-inserting the probe run after it (backward-shift deletion). */
static void remove_at(shard_cache *c, size_t i)
{
    c->hdr[i].id = 0;
    c->count--;
    for (size_t j = (i + 1) & (c->cap - 1); c->hdr[j].id; j = (j + 1) & (c->cap - 1)) {
        slot_hdr h = c->hdr[j];
        c->hdr[j].id = 0;
        size_t k = find(c, h.id);
        c->hdr[k] = h;
        if (k != j) memcpy(c->data + k * c->words, c->data + j * c->words, c->words * 8);
    }
}

bool shard_cache_get(shard_cache *c, uint64_t id, uint64_t *index, bool *present, uint64_t *size)
{
    uint64_t key = id + 1;
    pthread_mutex_lock(&c->lock);
    size_t i = find(c, key);
    bool hit = c->hdr[i].id == key;
    if (hit) {
        c->hdr[i].used = true;
        *present = c->hdr[i].present;
        *size = c->hdr[i].size;
        if (*present) memcpy(index, c->data + i * c->words, c->words * 8);
    }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

void shard_cache_put(shard_cache *c, uint64_t id, const uint64_t *index, bool present, uint64_t size)
{
    uint64_t key = id + 1;
    pthread_mutex_lock(&c->lock);
    size_t i = find(c, key);
    if (c->hdr[i].id != key) {
        while (c->count >= c->max) { /* clock sweep: evict the first entry not used since the last pass */
            c->hand = (c->hand + 1) & (c->cap - 1);
            slot_hdr *h = &c->hdr[c->hand];
            if (!h->id) continue;
            if (h->used) h->used = false;
            else remove_at(c, c->hand);
        }
        i = find(c, key);
        c->count++;
    }
    c->hdr[i] = (slot_hdr){key, size, present, true};
    if (present) memcpy(c->data + i * c->words, index, c->words * 8);
    pthread_mutex_unlock(&c->lock);
}

void shard_cache_drop(shard_cache *c, uint64_t id)
{
    uint64_t key = id + 1;
    pthread_mutex_lock(&c->lock);
    size_t i = find(c, key);
    if (c->hdr[i].id == key) remove_at(c, i);
    pthread_mutex_unlock(&c->lock);
}
