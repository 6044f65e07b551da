/* loader/sampler.h — internals of the window sampler (public API in zcube.h §8).
 *
 * The shared index space has one axis per distinct dimension name over all
 * sources. Each axis has a range [lo, hi] of valid origins (the intersection
 * over the sources that have it, with offsets and jitter margins) and a stride
 * (1 in RANDOM mode, window - overlap in GRID mode). Window number w in
 * [0, N) is the mixed-radix number of its position on every axis. */
#ifndef ZC_LOADER_SAMPLER_H
#define ZC_LOADER_SAMPLER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "loader/perm.h"
#include "zarr/zarr.h"
#include "zcube.h"

#define SAMPLER_MAX_SOURCES 16
#define SAMPLER_MAX_AXES (SAMPLER_MAX_SOURCES * 4)

typedef struct {
    zc_zarr *arr;                  /* borrowed */
    char name[64];                 /* for messages */
    int ndim;
    int64_t window[ZC_MAX_DIMS];
    int axis[ZC_MAX_DIMS];         /* shared axis of each dimension */
    int64_t offset[ZC_MAX_DIMS];
    int64_t jitter[ZC_MAX_DIMS];
    int64_t overlap[ZC_MAX_DIMS];
    size_t win_bytes;              /* one window, decoded */
    zc_zarr_io_stats_t base;       /* the array's counters when added */
} sampler_source;

/* One batch's buffers (library-owned, for zc_sampler_next). */
typedef struct {
    void *data[SAMPLER_MAX_SOURCES];
    size_t nbytes[SAMPLER_MAX_SOURCES];
    int64_t *origins[SAMPLER_MAX_SOURCES];
    zc_batch batch;                /* what zc_sampler_next hands out */
    int64_t step;
    int state;                     /* SLOT_EMPTY, SLOT_FILLING, SLOT_READY, SLOT_HELD */
    int rc;                        /* status of the read */
    char errmsg[1024];
} sampler_slot;

struct zc_sampler {
    zc_sampler_opts o;
    sampler_source src[SAMPLER_MAX_SOURCES];
    int nsrc;
    /* shared space */
    int naxes;
    char axis_name[SAMPLER_MAX_AXES][64];
    int64_t lo[SAMPLER_MAX_AXES], hi[SAMPLER_MAX_AXES], stride[SAMPLER_MAX_AXES], count[SAMPLER_MAX_AXES];
    bool ready;                    /* space computed (after the first batch request) */
    int64_t nwindows, nbatches;
    pthread_mutex_t setup_lock;
    /* totals */
    atomic_llong windows, rejected;
    /* prefetch (prefetch.c) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_on, stop;
    sampler_slot *slots;
    int nslots;
    int64_t produce, consume;      /* next step to read / to hand out */
    int held;                      /* slot handed out, or -1 */
};

/* Compute the shared space (idempotent). */
int sampler_prepare(zc_sampler *s);
/* Read batch `step` into the given buffers; *rejected gets the redraws. */
int sampler_read_batch(zc_sampler *s, int64_t step, void *const *data, int64_t *const *origins, int64_t *rejected);
/* Prefetch machinery. */
int sampler_prefetch_init(zc_sampler *s);
void sampler_prefetch_stop(zc_sampler *s);
void sampler_prefetch_free(zc_sampler *s);

#endif
