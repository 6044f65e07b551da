/* tests/test_compute_rsvd.c — what the randomized SVD's speed rests on, checked
 * so that a change that drops it fails: OpenBLAS's idle server threads stopped
 * while the plan is built (they spin for ~0.1 s of CPU otherwise); the source
 * cache filled from mapped chunk files (zarr/read.c) whose pages are dropped
 * once decoded (no fresh read buffer per chunk, RSS not holding them).
 * Results and accuracy: tests/test_compute_decomp.c. */
#define _GNU_SOURCE /* mkdtemp */
#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Threads of this process now (Linux: /proc/self/task; -1 elsewhere). */
static int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

TEST(openblas_idle_threads_stopped)
{
    /* a fresh process: the main thread and OpenBLAS's server threads (one fewer than
     * the CPUs, started when it was loaded); building a linear algebra plan stops them */
    int before = threads_now();
    int64_t shape[2] = {64, 32}, chunks[2] = {16, 32};
    zc_array *a = NULL, *s = NULL;
    CHECK_OK(zc_random_normal(1, 2, shape, chunks, ZC_FLOAT64, 0.0, 1.0, &a));
    CHECK_OK(zc_svd_compressed(a, 4, 2, 1, 0, NULL, &s, NULL));
    int after = threads_now();
    if (before > 1) CHECK(after == 1);
    CHECK(after <= before);
    zc_array_release(s);
    zc_array_release(a);
}

/* Mappings of files below dir in this process: how many, and their resident kB. */
static void mapped_below(const char *dir, int *maps, long *rss_kb)
{
    *maps = 0;
    *rss_kb = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return;
    char line[4096];
    bool in = false;
    long kb;
    while (fgets(line, sizeof line, f)) {
        if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' ') && strchr(line, ' ')) {
            in = strstr(line, dir) != NULL; /* a mapping's first line: range perms offset dev inode path */
            *maps += in;
        } else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
            *rss_kb += kb;
    }
    fclose(f);
}

/* S of a rank-4 randomized SVD of xs (2 power iterations), with the source cache's hits and misses. */
static double *rsvd_s(zc_array *xs, size_t cache_mem, int64_t *hits, int64_t *misses)
{
    zc_array *s = NULL;
    CHECK_OK(zc_svd_compressed(xs, 4, 4, 2, 5, NULL, &s, NULL));
    zc_spec sp = ZC_SPEC_INIT;
    sp.allowed_mem = (size_t)64 << 20;
    sp.reserved_mem = (size_t)1 << 20;
    sp.nthreads = 2;
    sp.cache_mem = cache_mem;
    double *v = calloc(4, sizeof(double));
    zc_report *rep = NULL;
    CHECK_OK(zc_compute_buffer(&sp, s, v, 4 * sizeof(double), &rep));
    json_t *doc = report_checked(rep), *sc = json_object_get(doc, "source_cache");
    *hits = json_integer_value(json_object_get(sc, "hits"));
    *misses = json_integer_value(json_object_get(sc, "misses"));
    json_decref(doc);
    zc_array_release(s);
    return v;
}

TEST(cached_source_decoded_from_mappings_dropped)
{
    /* blosc chunk files of a stored A (4 chunks of 4 MiB) filling the source cache are
     * decoded from mappings (no read buffer), and none of their pages stays resident
     * after (the store keeps the mappings: without the drop 16 MiB would) */
    char dir[] = "/tmp/zc_rsvd_map_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *st = NULL;
    CHECK_OK(zc_store_open(dir, 0, &st));
    int64_t shape[2] = {8192, 256}, chunks[2] = {2048, 256};
    zc_array *a = NULL, *xs = NULL;
    CHECK_OK(zc_random_normal(3, 2, shape, chunks, ZC_FLOAT64, 0.0, 1.0, &a));
    zc_target t = {st, "a", "blosc:lz4:5:shuffle", 2};
    zc_spec w = ZC_SPEC_INIT;
    CHECK_OK(zc_compute(&w, 1, &a, &t, NULL));
    CHECK_OK(zc_from_zarr(st, "a", &xs));
    int maps;
    long rss;
    int64_t h0, m0, h1, m1;
    double *s0 = rsvd_s(xs, 0, &h0, &m0);
    double *s1 = rsvd_s(xs, (size_t)32 << 20, &h1, &m1);
    CHECK(h0 == 0 && m0 == 0 && m1 == 4 && h1 >= 12);
    CHECK(memcmp(s0, s1, 4 * sizeof(double)) == 0);
    mapped_below(dir, &maps, &rss);
    if (!getenv("ZC_STORE_MAP")) CHECK(maps == 4); /* (the file store keeps them) */
    CHECK(rss == 0);
    free(s0);
    free(s1);
    zc_array_release(xs);
    zc_array_release(a);
    zc_store_close(st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}
