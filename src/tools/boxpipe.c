/* tools/boxpipe.c — boxes produced and consumed on two threads. See boxpipe.h.
 *
 * Two slots used in turn: the producer fills slot k % 2 once fewer than two
 * slots are full (so slot k % 2 no longer holds box k - 2), the consumer takes
 * them in the same order. One mutex and one condition variable: each side
 * waits at most once per box (a box is megabytes of work). */
#include "boxpipe.h"

#include <pthread.h>

#include "bigbuf.h"
#include "cli_util.h"

#define SLOTS 2

typedef struct {
    boxes_t *bx; /* the walk, advanced by the producer only */
    boxpipe_fn produce, consume;
    void *ctx;
    unsigned char *buf[SLOTS];
    boxes_t box[SLOTS]; /* the box each slot holds */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int full;           /* slots produced and not yet consumed */
    bool produced_all;  /* the producer has stopped: no box will follow */
    boxpipe_status failed;
} pipe_t;

static void set_failed(pipe_t *p, boxpipe_status why)
{
    pthread_mutex_lock(&p->mu);
    if (!p->failed) p->failed = why;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void produce_loop(pipe_t *p)
{
    for (size_t k = 0;; k++) {
        int s = (int)(k % SLOTS);
        pthread_mutex_lock(&p->mu);
        while (p->full == SLOTS && !p->failed) pthread_cond_wait(&p->cv, &p->mu);
        bool stop = p->failed;
        pthread_mutex_unlock(&p->mu);
        if (stop || !boxes_next(p->bx)) break;
        p->box[s] = *p->bx;
        if (p->produce(&p->box[s], p->buf[s], p->ctx)) {
            set_failed(p, BOXPIPE_PRODUCE_FAILED);
            break;
        }
        pthread_mutex_lock(&p->mu);
        p->full++;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    pthread_mutex_lock(&p->mu);
    p->produced_all = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void consume_loop(pipe_t *p)
{
    for (size_t k = 0;; k++) {
        int s = (int)(k % SLOTS);
        pthread_mutex_lock(&p->mu);
        while (!p->full && !p->produced_all && !p->failed) pthread_cond_wait(&p->cv, &p->mu);
        bool go = p->full && !p->failed;
        pthread_mutex_unlock(&p->mu);
        if (!go) break;
        if (p->consume(&p->box[s], p->buf[s], p->ctx)) {
            set_failed(p, BOXPIPE_CONSUME_FAILED);
            break;
        }
        pthread_mutex_lock(&p->mu);
        p->full--;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

static void *thread_produce(void *vp)
{
    produce_loop(vp);
    return NULL;
}

static void *thread_consume(void *vp)
{
    consume_loop(vp);
    return NULL;
}

static boxpipe_status run_alone(pipe_t *p)
{
    while (boxes_next(p->bx)) {
        if (p->produce(p->bx, p->buf[0], p->ctx)) return BOXPIPE_PRODUCE_FAILED;
        if (p->consume(p->bx, p->buf[0], p->ctx)) return BOXPIPE_CONSUME_FAILED;
    }
    return BOXPIPE_OK;
}

boxpipe_status boxpipe_run(boxes_t *bx, bool overlap, bool thread_produces, boxpipe_fn produce, boxpipe_fn consume,
                           void *ctx)
{
    pipe_t p = {.bx = bx, .produce = produce, .consume = consume, .ctx = ctx};
    size_t bytes = bx->max_bytes ? (size_t)bx->max_bytes : 1;
    int nbuf = overlap ? SLOTS : 1;
    for (int s = 0; s < nbuf; s++)
        if (!(p.buf[s] = bigbuf_alloc(bytes))) {
            for (int k = 0; k < s; k++) bigbuf_free(p.buf[k]);
            return BOXPIPE_NO_MEMORY;
        }
    boxpipe_status st;
    pthread_t t;
    if (nbuf == 1) {
        st = run_alone(&p);
    } else if (pthread_mutex_init(&p.mu, NULL)) {
        st = BOXPIPE_NO_MEMORY;
    } else {
        if (pthread_cond_init(&p.cv, NULL)) {
            st = BOXPIPE_NO_MEMORY;
        } else if (pthread_create(&t, NULL, thread_produces ? thread_produce : thread_consume, &p)) {
            st = run_alone(&p); /* no second thread: one after the other */
            pthread_cond_destroy(&p.cv);
        } else {
            if (thread_produces) consume_loop(&p);
            else produce_loop(&p);
            pthread_join(t, NULL);
            st = p.failed;
            pthread_cond_destroy(&p.cv);
        }
        pthread_mutex_destroy(&p.mu);
    }
    for (int s = 0; s < nbuf; s++) bigbuf_free(p.buf[s]);
    return st;
}

bool boxpipe_boxes(boxes_t *bx, int ndim, const zc_range *sel, const int64_t *count, const int64_t *unit,
                   size_t itemsize, uint64_t budget)
{
    boxes_init(bx, ndim, sel, count, unit, itemsize, budget);
    uint64_t half = budget / SLOTS;
    if (bx->unit_bytes > half) return false; /* one buffer of the whole budget, as initialised */
    uint64_t box = half < BOXPIPE_BOX ? half : BOXPIPE_BOX;
    if (box < bx->unit_bytes) box = bx->unit_bytes;
    uint64_t total = itemsize;
    for (int d = 0; d < ndim; d++) total = cli_mul_sat(total, (uint64_t)count[d]);
    if (total <= box) return false; /* one box */
    boxes_init(bx, ndim, sel, count, unit, itemsize, box);
    return true;
}
