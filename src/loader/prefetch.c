/* loader/prefetch.c — zc_sampler_next: a ring of batch buffers filled ahead.
 *
 * Slot of step k = k mod nslots (nslots = prefetch + 1). One background thread
 * reads steps in order into EMPTY slots; the caller takes READY slots in order
 * and gives its previous slot back on the next call. Reading a batch is itself
 * parallel (pool tasks per window), so the producer thread mostly waits on the
 * pool while the caller trains. With prefetch 0 the caller reads synchronously. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "loader/sampler.h"

enum { SLOT_EMPTY, SLOT_FILLING, SLOT_READY, SLOT_HELD };

static int alloc_slots(zc_sampler *s)
{
    s->nslots = s->o.prefetch + 1;
    s->slots = zc__calloc((size_t)s->nslots, sizeof(sampler_slot));
    if (!s->slots) return ZC_ENOMEM;
    for (int i = 0; i < s->nslots; i++) {
        sampler_slot *sl = &s->slots[i];
        for (int k = 0; k < s->nsrc; k++) {
            sl->nbytes[k] = s->src[k].win_bytes * (size_t)s->o.batch_size;
            sl->data[k] = zc__malloc(sl->nbytes[k] ? sl->nbytes[k] : 1);
            sl->origins[k] = zc__malloc_array((size_t)s->o.batch_size * (size_t)s->src[k].ndim + 1, sizeof(int64_t));
            if (!sl->data[k] || !sl->origins[k]) return ZC_ENOMEM;
        }
        sl->batch.nsources = s->nsrc;
        sl->batch.data = sl->data;
        sl->batch.nbytes = sl->nbytes;
        sl->batch.origins = sl->origins;
    }
    return 0;
}

void sampler_prefetch_free(zc_sampler *s)
{
    if (!s->slots) return;
    for (int i = 0; i < s->nslots; i++)
        for (int k = 0; k < s->nsrc; k++) {
            zc__free(s->slots[i].data[k]);
            zc__free(s->slots[i].origins[k]);
        }
    zc__free(s->slots);
    s->slots = NULL;
}

static void fill(zc_sampler *s, sampler_slot *sl, int64_t step)
{
    int64_t rej = 0;
    sl->rc = sampler_read_batch(s, step, sl->data, sl->origins, &rej);
    if (sl->rc < 0) zc_errmsg_r(sl->errmsg, sizeof sl->errmsg);
    sl->step = step;
    sl->batch.step = step;
    sl->batch.epoch = step / s->nbatches;
    sl->batch.rejected = rej;
}

static void *producer(void *arg)
{
    zc_sampler *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        sampler_slot *sl = NULL;
        while (!s->stop && (sl = &s->slots[s->produce % s->nslots])->state != SLOT_EMPTY)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop) break;
        int64_t step = s->produce++;
        sl->state = SLOT_FILLING;
        pthread_mutex_unlock(&s->mu);
        fill(s, sl, step);
        pthread_mutex_lock(&s->mu);
        sl->state = SLOT_READY;
        pthread_cond_broadcast(&s->cv);
        if (sl->rc < 0) break; /* stop reading ahead after a failure; the caller sees it */
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int sampler_prefetch_init(zc_sampler *s)
{
    if (s->slots) return 0;
    int rc = alloc_slots(s);
    if (rc < 0) {
        sampler_prefetch_free(s);
        return rc;
    }
    return 0;
}

void sampler_prefetch_stop(zc_sampler *s)
{
    pthread_mutex_lock(&s->mu);
    bool on = s->thread_on;
    s->stop = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (on) pthread_join(s->thread, NULL);
    s->thread_on = false;
    s->stop = false;
    if (s->slots)
        for (int i = 0; i < s->nslots; i++) s->slots[i].state = SLOT_EMPTY;
    s->held = -1;
    s->produce = s->consume;
}

int zc_sampler_seek(zc_sampler *s, int64_t step)
{
    zc__err_clear();
    if (!s || step < 0) return zc__err(ZC_EINVAL, "zc_sampler_seek: bad argument");
    sampler_prefetch_stop(s);
    s->consume = s->produce = step;
    return 0;
}

int zc_sampler_next(zc_sampler *s, const zc_batch **out)
{
    zc__err_clear();
    if (!s || !out) return zc__err(ZC_EINVAL, "zc_sampler_next: NULL argument");
    ZC_TRY(sampler_prepare(s));
    ZC_TRY(sampler_prefetch_init(s));
    if (s->o.prefetch == 0) {
        sampler_slot *sl = &s->slots[0];
        fill(s, sl, s->consume);
        if (sl->rc < 0) return sl->rc;
        s->consume++;
        *out = &sl->batch;
        return 0;
    }
    pthread_mutex_lock(&s->mu);
    if (s->held >= 0) {
        s->slots[s->held].state = SLOT_EMPTY;
        s->held = -1;
        pthread_cond_broadcast(&s->cv);
    }
    if (!s->thread_on) {
        if (pthread_create(&s->thread, NULL, producer, s)) {
            pthread_mutex_unlock(&s->mu);
            return zc__err(ZC_ENOMEM, "cannot start the prefetch thread");
        }
        s->thread_on = true;
    }
    int i = (int)(s->consume % s->nslots);
    sampler_slot *sl = &s->slots[i];
    while (sl->state != SLOT_READY) pthread_cond_wait(&s->cv, &s->mu);
    int rc = sl->rc;
    if (rc < 0) {
        zc__err_set_text(sl->errmsg);
        pthread_mutex_unlock(&s->mu);
        sampler_prefetch_stop(s); /* the failed step stays next: a retry reads it again */
        return rc;
    }
    sl->state = SLOT_HELD;
    s->held = i;
    s->consume++;
    pthread_mutex_unlock(&s->mu);
    *out = &sl->batch;
    return 0;
}
