/* bench/bench_store.c — batched reads of the filesystem store.
 *
 * Writes N small files (default 20,000 x 4 KiB, in 200 folders like chunk
 * keys), a few large ones and one "shard" file, then reads them with
 * get_many through the pread engine and the io_uring engine, and with a plain
 * sequential open/read/close loop measured in the same run (the reference).
 * Warm runs read from the page cache; cold runs first drop each file's pages
 * with posix_fadvise(DONTNEED). Each figure is the best of a few repeats.
 * Prints one JSON line; ratios are engine speed / reference speed (wall
 * clock), and cpu_us_* the CPU microseconds (all threads) per file, per range
 * or per GB, which a loaded machine disturbs less than wall time. The
 * *_store_allocates run lets the store allocate each result (page faults on
 * fresh memory included); the others read into caller buffers.
 *
 *   bench_store [nsmall] [dir]      (env ZC_NUM_THREADS sets the pool size)
 *
 * The files are written once to dir (default /tmp/zc_bench_store_<nsmall>) and
 * reused by later runs; ZC_BENCH_CLEAN=1 deletes them at the end.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/pool.h"
#include "exec/rmtree.h"
#include "store/fs.h"
#include "store/store.h"

#define SMALL 4096
#define NLARGE 4
#define LARGE (32u << 20)
#define SHARD_CHUNKS 4096 /* 4 KiB inner chunks of a 16 MiB shard */
#define REPEAT 2

static char root[512];
static int nsmall = 20000;
static char (*skeys)[32];
static char lkeys[NLARGE][32];
static unsigned char *refbuf;

static double clock_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU seconds of all threads: on a loaded machine a steadier cost than wall time. */
static double cpu(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static void die(const char *what)
{
    fprintf(stderr, "bench_store: %s: %s\n", what, zc_errmsg());
    exit(1);
}

/* Drop the page cache of every file (cold runs). */
static void evict(char (*keys)[32], int n)
{
    char path[600];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", root, keys[i]);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
}

/* The reference: open, read to EOF into one buffer, close, one file after another. */
static double ref_read(char (*keys)[32], int n, size_t cap, size_t *bytes)
{
    char path[600];
    double t0 = now();
    *bytes = 0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", root, keys[i]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) { perror(path); exit(1); }
        ssize_t got;
        size_t off = 0;
        while ((got = read(fd, refbuf + off, cap - off)) > 0) off += (size_t)got;
        close(fd);
        *bytes += off;
    }
    return now() - t0;
}

/* get_many over keys in batches of `batch`, into the caller's buffers (slots of
 * `cap` bytes in refbuf, like the reference) or, with cap 0, into buffers the
 * store allocates. */
static double engine_read(store *s, int io, char (*keys)[32], int n, int batch, size_t cap, size_t *bytes)
{
    if (store_fs_set_io(s, io) < 0) return -1;
    store_req *r = calloc((size_t)batch, sizeof *r);
    double t0 = now();
    *bytes = 0;
    for (int b = 0; b < n; b += batch) {
        int m = n - b < batch ? n - b : batch;
        for (int i = 0; i < m; i++)
            r[i] = (store_req){.key = keys[b + i], .length = STORE_TO_END, .buf = cap ? refbuf + (size_t)i * cap : NULL,
                               .buf_cap = cap};
        if (store_get_many(s, r, (size_t)m) < 0) die("get_many");
        for (int i = 0; i < m; i++) {
            if (r[i].status) die("request");
            *bytes += r[i].size;
            if (!cap) zc__free(r[i].data);
        }
    }
    double t = now() - t0;
    free(r);
    return t;
}

typedef struct {
    double ref, pread, uring;       /* wall seconds, best of REPEAT */
    double cref, cpread, curing;    /* CPU seconds (all threads), best of REPEAT */
} trio;

static double best(double a, double b) { return a < 0 ? b : b < a ? b : a; }

/* cap: bytes per caller buffer (0: the store allocates). */
static trio measure(store *s, char (*keys)[32], int n, size_t cap, int batch, int cold)
{
    trio t = {-1, -1, -1, -1, -1, -1};
    size_t b0, b1, b2;
    for (int rep = 0; rep < (cold ? 1 : REPEAT); rep++) {
        if (cold) evict(keys, n);
        double c0 = cpu();
        t.ref = best(t.ref, ref_read(keys, n, cap ? cap : SMALL + 1, &b0));
        t.cref = best(t.cref, cpu() - c0);
        if (cold) evict(keys, n);
        c0 = cpu();
        t.pread = best(t.pread, engine_read(s, FS_IO_PREAD, keys, n, batch, cap, &b1));
        t.cpread = best(t.cpread, cpu() - c0);
        if (cold) evict(keys, n);
        c0 = cpu();
        double u = engine_read(s, FS_IO_URING, keys, n, batch, cap, &b2);
        t.uring = u < 0 ? -1 : best(t.uring, u);
        t.curing = u < 0 ? -1 : best(t.curing, cpu() - c0);
        if (b0 != b1 || (u >= 0 && b1 != b2)) {
            fprintf(stderr, "bench_store: byte counts differ\n");
            exit(1);
        }
    }
    return t;
}

/* Speeds, speed ratios to the reference (wall), and CPU microseconds per unit. */
static void print_trio(const char *name, trio t, double units, const char *unit, double cpu_units, int last)
{
    printf("\"%s\":{\"ref_%s\":%.4g,\"pread_%s\":%.4g,\"uring_%s\":%.4g,\"pread_ratio\":%.3f,\"uring_ratio\":%.3f,"
           "\"cpu_us_ref\":%.3g,\"cpu_us_pread\":%.3g,\"cpu_us_uring\":%.3g}%s",
           name, unit, units / t.ref, unit, units / t.pread, unit, t.uring > 0 ? units / t.uring : 0, t.ref / t.pread,
           t.uring > 0 ? t.ref / t.uring : 0, t.cref * 1e6 / cpu_units, t.cpread * 1e6 / cpu_units,
           t.curing > 0 ? t.curing * 1e6 / cpu_units : 0, last ? "" : ",");
}

/* Shard: SHARD_CHUNKS ranges of one file in one batch vs a pread loop on one fd. */
static void shard_bench(store *s, trio *t)
{
    double *ref_s = &t->ref, *pread_s = &t->pread, *uring_s = &t->uring;
    char path[600];
    snprintf(path, sizeof path, "%s/shard", root);
    store_req *r = calloc(SHARD_CHUNKS, sizeof *r);
    *t = (trio){-1, -1, -1, -1, -1, -1};
    for (int rep = 0; rep < REPEAT; rep++) {
        double c0 = cpu(), t0 = now();
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        for (int i = 0; i < SHARD_CHUNKS; i++)
            if (pread(fd, refbuf + (size_t)i * SMALL, SMALL, (off_t)i * SMALL) != SMALL) die("pread");
        close(fd);
        *ref_s = best(*ref_s, now() - t0);
        t->cref = best(t->cref, cpu() - c0);
        for (int io = FS_IO_PREAD; io <= FS_IO_URING; io++) {
            if (store_fs_set_io(s, io) < 0) continue;
            for (int i = 0; i < SHARD_CHUNKS; i++) /* odd chunks first: the store sorts them back */
                r[i] = (store_req){.key = "shard", .offset = (uint64_t)((i * 2 + (i >= SHARD_CHUNKS / 2)) % SHARD_CHUNKS) * SMALL,
                                   .length = SMALL, .buf = refbuf + (size_t)i * SMALL, .buf_cap = SMALL};
            c0 = cpu();
            t0 = now();
            if (store_get_many(s, r, SHARD_CHUNKS) < 0) die("shard get_many");
            double dt = now() - t0, dc = cpu() - c0;
            for (int i = 0; i < SHARD_CHUNKS; i++)
                if (r[i].status) die("shard request");
            if (io == FS_IO_PREAD) {
                *pread_s = best(*pread_s, dt);
                t->cpread = best(t->cpread, dc);
            } else {
                *uring_s = best(*uring_s, dt);
                t->curing = best(t->curing, dc);
            }
        }
    }
    free(r);
}

int main(int argc, char **argv)
{
    if (argc > 1) nsmall = atoi(argv[1]);
    if (nsmall < 1) nsmall = 1;
    if (argc > 2) snprintf(root, sizeof root, "%s", argv[2]);
    else snprintf(root, sizeof root, "/tmp/zc_bench_store_%d", nsmall);
    zc_store *s;
    if (zc_store_open(root, ZC_STORE_CREATE, &s) < 0) die("open");
    /* The data set is kept for the next run (deleting 20,000 files can take
     * longer than the benchmark on a busy disk); "ready" marks it complete. */
    uint64_t ready_size;
    bool reuse = store_size(s, "ready", &ready_size) == 0;
    const char *clean = getenv("ZC_BENCH_CLEAN");

    double tw = now();
    skeys = malloc((size_t)nsmall * sizeof *skeys);
    /* One arena for the reference and the caller buffers, touched once. */
    size_t arena = (size_t)nsmall * (SMALL + 1);
    if (arena < (size_t)NLARGE * (LARGE + 1)) arena = (size_t)NLARGE * (LARGE + 1);
    if (arena < (size_t)SHARD_CHUNKS * SMALL) arena = (size_t)SHARD_CHUNKS * SMALL;
    refbuf = malloc(arena);
    memset(refbuf, 1, arena);
    unsigned char *v = malloc(LARGE);
    for (size_t i = 0; i < LARGE; i++) v[i] = (unsigned char)(i * 131 + (i >> 12));
    for (int i = 0; i < nsmall; i++) {
        snprintf(skeys[i], sizeof skeys[i], "s/c/%d/%d", i / 100, i % 100);
        if (!reuse && store_put(s, skeys[i], v + (i % 1000), SMALL) < 0) die("put");
    }
    for (int i = 0; i < NLARGE; i++) {
        snprintf(lkeys[i], sizeof lkeys[i], "large/%d", i);
        if (!reuse && store_put(s, lkeys[i], v, LARGE) < 0) die("put large");
    }
    if (!reuse) {
        if (store_put(s, "shard", v, (size_t)SHARD_CHUNKS * SMALL) < 0) die("put shard");
        syncfs(((fs_store *)s)->root_fd); /* written back: clean pages can be dropped */
        if (store_put(s, "ready", "1", 1) < 0) die("put ready");
    }
    double write_s = now() - tw;

    trio warm = measure(s, skeys, nsmall, SMALL + 1, 256, 0);
    trio warm_alloc = measure(s, skeys, nsmall, 0, 256, 0);
    trio warm_one = measure(s, skeys, nsmall, SMALL + 1, nsmall, 0);
    trio large = measure(s, lkeys, NLARGE, LARGE + 1, NLARGE, 0);
    int ncold = nsmall < 4000 ? nsmall : 4000; /* cold reads are slow: a subset */
    trio cold = measure(s, skeys, ncold, SMALL + 1, ncold, 1);
    trio sh;
    shard_bench(s, &sh);

    printf("{\"bench\":\"store\",\"threads\":%d,\"uring_works\":%d,\"small_files\":%d,\"small_bytes\":%d,"
           "\"large_files\":%d,\"large_bytes\":%u,\"reused_data\":%d,\"write_s\":%.3f,",
           pool_size(pool_default()), store_fs_uring_works(), nsmall, SMALL, NLARGE, LARGE, reuse, write_s);
    print_trio("small_warm_batch256", warm, nsmall, "files_per_s", nsmall, 0);
    print_trio("small_warm_batch256_store_allocates", warm_alloc, nsmall, "files_per_s", nsmall, 0);
    print_trio("small_warm_one_batch", warm_one, nsmall, "files_per_s", nsmall, 0);
    print_trio("large_warm", large, (double)NLARGE * LARGE / 1e9, "GB_per_s", (double)NLARGE * LARGE / 1e9, 0);
    printf("\"cold_files\":%d,", ncold);
    print_trio("small_cold", cold, ncold, "files_per_s", ncold, 0);
    print_trio("shard_4096_ranges", sh, SHARD_CHUNKS, "ranges_per_s", SHARD_CHUNKS, 1);
    printf("}\n");

    zc_store_close(s);
    if (clean && *clean && strcmp(clean, "0")) exec_rm_tree(root);
    free(v);
    free(refbuf);
    free(skeys);
    return 0;
}
