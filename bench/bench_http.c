/* bench/bench_http.c — zcube's side of bench/http_bench.sh: read an array
 * from a URL (http://, s3://) through the public API, whole or as a list of
 * crops, and print {"seconds", "cpu_s", "bytes", "checksum"} as JSON.
 *
 *   bench_http URL [--prealloc]            the whole array, once, into a fresh
 *       buffer allocated as NumPy allocates an array (bench_numpy_alloc); with
 *       --prealloc into a buffer allocated and touched before the timing, the
 *       checksum after it (the transfer-only comparison with curl, which
 *       writes to /dev/null: no fresh 1 GiB of pages, no checksum pass)
 *   bench_http URL --regions FILE [--workers N]
 *       FILE: one crop a line, "start stop" per dimension; N threads (default
 *       1) take crops in turn, each with its own buffer (the store is shared).
 *
 * checksum: the sum of the uint32 bit patterns mod 2^64 of everything read,
 * the same as http_ref.py computes for zarr-python's reads. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "zcube.h"

static zc_zarr *arr;
static zc_zarr_info_t info;
static int64_t (*boxes)[2 * ZC_MAX_DIMS];
static size_t nboxes;
static atomic_size_t next_box;
static atomic_uint_fast64_t total_sum, total_bytes;
static void *prealloc; /* --prealloc: the whole array's buffer, touched */

static uint64_t checksum(const void *p, size_t n)
{
    const uint32_t *w = p;
    uint64_t s = 0;
    for (size_t i = 0; i < n / 4; i++) s += w[i];
    return s;
}

static void *worker(void *unused)
{
    (void)unused;
    size_t cap = 0;
    void *buf = NULL;
    for (;;) {
        size_t i = atomic_fetch_add(&next_box, 1);
        if (i >= nboxes) break;
        zc_range sel[ZC_MAX_DIMS];
        size_t n = info.itemsize;
        for (int d = 0; d < info.ndim; d++) {
            sel[d] = (zc_range){boxes[i][2 * d], boxes[i][2 * d + 1], 1};
            n *= (size_t)(sel[d].stop - sel[d].start);
        }
        if (prealloc) {
            BENCH_ZC("bench_http", zc_zarr_read(arr, sel, prealloc, n), "reading the array");
            atomic_fetch_add(&total_bytes, n); /* the checksum after the timing */
            continue;
        }
        if (n > cap) { /* a fresh array, as zarr-python's reads get from NumPy */
            free(buf);
            if (!(buf = bench_numpy_alloc(cap = n))) {
                fprintf(stderr, "bench_http: out of memory\n");
                exit(1);
            }
        }
        BENCH_ZC("bench_http", zc_zarr_read(arr, sel, buf, n), "reading a crop");
        atomic_fetch_add(&total_sum, checksum(buf, n));
        atomic_fetch_add(&total_bytes, n);
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_http URL [--regions FILE [--workers N]]\n");
        return 2;
    }
    const char *regions = NULL;
    int workers = 1;
    bool pre = false;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--prealloc")) pre = true;
        else if (i + 1 < argc && !strcmp(argv[i], "--regions")) regions = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--workers")) workers = atoi(argv[++i]);
        else {
            fprintf(stderr, "bench_http: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (pre && regions) {
        fprintf(stderr, "bench_http: --prealloc reads the whole array (no --regions)\n");
        return 2;
    }
    zc_store *st;
    BENCH_ZC("bench_http", zc_store_open(argv[1], ZC_STORE_READONLY, &st), argv[1]);
    BENCH_ZC("bench_http", zc_zarr_open(st, "", &arr), "opening the array");
    BENCH_ZC("bench_http", zc_zarr_info(arr, &info), "array info");
    if (regions) {
        FILE *f = fopen(regions, "r");
        if (!f) {
            perror(regions);
            return 1;
        }
        size_t cap = 0;
        int64_t v[2 * ZC_MAX_DIMS];
        for (;;) {
            int k = 0;
            for (; k < 2 * info.ndim; k++)
                if (fscanf(f, "%lld", (long long *)&v[k]) != 1) break;
            if (k < 2 * info.ndim) break;
            if (nboxes == cap && !(boxes = realloc(boxes, (cap = cap ? 2 * cap : 1024) * sizeof *boxes))) return 1;
            memcpy(boxes[nboxes++], v, sizeof v);
        }
        fclose(f);
    } else {
        boxes = calloc(1, sizeof *boxes);
        size_t n = info.itemsize;
        for (int d = 0; d < info.ndim; d++) {
            boxes[0][2 * d + 1] = info.shape[d];
            n *= (size_t)info.shape[d];
        }
        nboxes = 1;
        if (pre) {
            if (!(prealloc = malloc(n ? n : 1))) {
                fprintf(stderr, "bench_http: out of memory\n");
                return 1;
            }
            memset(prealloc, 0xff, n);
        }
    }
    pthread_t th[256];
    if (workers < 1 || workers > 256) workers = 1;
    double t0 = bench_now(), c0 = bench_cpu_now();
    for (int i = 0; i < workers; i++) pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < workers; i++) pthread_join(th[i], NULL);
    double t1 = bench_now(), c1 = bench_cpu_now();
    if (prealloc) atomic_store(&total_sum, checksum(prealloc, atomic_load(&total_bytes)));
    printf("{\"seconds\": %.4f, \"cpu_s\": %.4f, \"bytes\": %llu, \"checksum\": %llu, \"crops\": %zu}\n", t1 - t0,
           c1 - c0, (unsigned long long)atomic_load(&total_bytes), (unsigned long long)atomic_load(&total_sum),
           regions ? nboxes : 0);
    zc_zarr_close(arr);
    zc_store_close(st);
    free(boxes);
    free(prealloc);
    return 0;
}
