/* bench/bench_read.c — read benchmark: zcube against zarr-python and against
 * the hardware ceiling.
 *
 *   bench_read DATA_DIR REF_JSONL [--cache cold|warm] [--reps N]
 *              [--codec none|lz4|zstd] [--phase whole|regions]
 *              [--buffer prealloc|fresh] [--no-ceiling]
 *
 * DATA_DIR holds {none,lz4,zstd}.zarr and regions.txt written by
 * bench/read_ref.py gen; REF_JSONL holds the zarr-python timings that
 * read_ref.py time printed for the same cache mode. For each codec this
 * prints one JSON object for the whole-array read and one for the 1,000
 * crops, with zcube's time, zarr-python's, their ratio (ref_s / zcube_s, so
 * > 1 means zcube is faster), and for whole reads the ceiling:
 *
 *   ceiling = min(memcpy bandwidth on NT threads,
 *                 max(decode-only rate of the codec library on NT threads,
 *                     decode-only rate of zcube's own codec chain on NT threads))
 *
 * where decode-only means all the array's chunk objects already in memory,
 * decoded by blosc_decompress_ctx / ZSTD_decompressDCtx / memcpy (library) or
 * by zcube's codec chain (internal API, zarr/zarr.h) straight into a
 * per-thread buffer, no IO and no copy into place, and memcpy copies 512 MiB
 * split over the threads; all are best of N passes, measured in turn with the
 * N timed reads so that they see the same load. The faster decoder sets the
 * ceiling, so zcube's own faster decoder cannot make the goal easier.
 *
 * zcube is used through the public API only (zc_store_open, zc_zarr_open,
 * zc_zarr_read) with the process-wide pool: ZC_NUM_THREADS (set to 2 here
 * when unset). Whole reads, --buffer: prealloc (default) reads into one
 * buffer allocated and touched once before timing (zarr-python's side reads
 * into a preallocated out= array), fresh allocates a new buffer inside each
 * timed rep and frees it after (zarr-python's side allocates a new array per
 * read, as z[...] does): both peers get the same treatment. Cache modes: cold drops the page cache (sync; echo 3 >
 * /proc/sys/vm/drop_caches, needs root) before each timed read; warm reads
 * the whole array once, untimed, before each phase. Whole reads: best of N reps.
 * GB/s are 1e9 bytes of decoded data per second. CPU seconds (all threads
 * of the process) are reported beside wall-clock seconds: on a shared,
 * loaded machine cpu_ratio = ref_cpu_s / zcube_cpu_s says how much work
 * each side does, which the load disturbs less than the wall clock.
 *
 * Two checksums are compared with zarr-python's (read_ref.py computes the
 * same): the sum of the uint32 bit patterns mod 2^64, and an order-sensitive
 * one, the sum of (i + 1) * word[i] mod 2^64 over the buffer (regions: per
 * crop, folded in crop order as h = h * 1000003 + crop's). A mismatch, or a
 * missing reference entry (unless REF_JSONL is /dev/null), is fatal: exit 1.
 *
 * --codec/--phase run one case only and --no-ceiling skips the ceiling (for
 * profiling under perf; REF_JSONL may then be /dev/null). */
#include <blosc.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "zarr/zarr.h"
#include "bench_util.h"
#include "zcube.h"

#define NCODECS 3
static const char *const codec_names[NCODECS] = {"none", "lz4", "zstd"};

static void die(const char *what)
{
    fprintf(stderr, "bench_read: %s\n", what);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

/* cold mode: flush dirty pages and drop the page cache; false if not allowed */
static bool drop_caches(void)
{
    sync();
    FILE *f = fopen("/proc/sys/vm/drop_caches", "w");
    if (!f) return false;
    bool ok = fputs("3\n", f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok;
}

typedef struct {
    uint64_t sum, ordered;
} checksums;

static checksums checksum(const void *p, size_t n)
{
    const uint32_t *w = p;
    checksums c = {0, 0};
    for (size_t i = 0; i < n / 4; i++) {
        c.sum += w[i];
        c.ordered += (uint64_t)(i + 1) * w[i];
    }
    return c;
}

/* ---- regions.txt ---- */

typedef struct {
    int64_t shape[3], crop[3];
    size_t n;
    int64_t (*corner)[3];
} regions;

static void regions_load(const char *path, regions *r)
{
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open regions.txt");
    long long s0, s1, s2, c0, c1, c2;
    if (fscanf(f, "# shape %lld %lld %lld crop %lld %lld %lld%*[^\n]", &s0, &s1, &s2, &c0, &c1, &c2) != 6)
        die("regions.txt: bad header");
    r->shape[0] = s0, r->shape[1] = s1, r->shape[2] = s2;
    r->crop[0] = c0, r->crop[1] = c1, r->crop[2] = c2;
    size_t cap = 1024;
    r->corner = xmalloc(cap * sizeof *r->corner);
    r->n = 0;
    long long t, y, x;
    while (fscanf(f, "%lld %lld %lld", &t, &y, &x) == 3) {
        if (r->n == cap) {
            cap *= 2;
            r->corner = realloc(r->corner, cap * sizeof *r->corner);
            if (!r->corner) die("out of memory");
        }
        r->corner[r->n][0] = t, r->corner[r->n][1] = y, r->corner[r->n][2] = x;
        r->n++;
    }
    fclose(f);
    if (r->n == 0) die("regions.txt: no regions");
}

/* ---- reference timings ---- */

typedef struct {
    double seconds;
    double cpu_seconds;
    checksums cs;
    bool found;
} ref_entry;

static ref_entry refs[NCODECS][2]; /* [codec][0 whole, 1 regions] */

static void refs_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open the reference timings file");
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        json_error_t err;
        json_t *o = json_loads(line, 0, &err);
        if (!o) continue;
        const char *cname = json_string_value(json_object_get(o, "codec"));
        const char *phase = json_string_value(json_object_get(o, "phase"));
        const char *hex = json_string_value(json_object_get(o, "checksum"));
        const char *ohex = json_string_value(json_object_get(o, "checksum_ordered"));
        for (int c = 0; cname && phase && c < NCODECS; c++) {
            if (strcmp(cname, codec_names[c]) != 0) continue;
            int p = strcmp(phase, "whole") == 0 ? 0 : strcmp(phase, "regions") == 0 ? 1 : -1;
            if (p < 0) continue;
            refs[c][p].seconds = json_number_value(json_object_get(o, "seconds"));
            refs[c][p].cpu_seconds = json_number_value(json_object_get(o, "cpu_seconds"));
            /* 16 hex digits: a uint64 may not fit jansson's integers */
            if (!hex || !ohex) die("reference timings: a line without checksum and checksum_ordered");
            refs[c][p].cs = (checksums){strtoull(hex, NULL, 16), strtoull(ohex, NULL, 16)};
            refs[c][p].found = true;
        }
        json_decref(o);
    }
    fclose(f);
}

/* ---- ceiling: memcpy and decode-only on NT threads ---- */

typedef struct {
    unsigned char **data;
    size_t *size;
    size_t n;
} chunk_set;

static void chunks_load(const char *dir, chunk_set *cs)
{
    DIR *d = opendir(dir);
    if (!d) die("cannot open the array folder");
    size_t cap = 256;
    cs->data = xmalloc(cap * sizeof *cs->data);
    cs->size = xmalloc(cap * sizeof *cs->size);
    cs->n = 0;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue; /* ., .., .zarray, .zattrs */
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) die("cannot open a chunk file");
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        if (len < 0) die("ftell");
        if (cs->n == cap) {
            cap *= 2;
            cs->data = realloc(cs->data, cap * sizeof *cs->data);
            cs->size = realloc(cs->size, cap * sizeof *cs->size);
            if (!cs->data || !cs->size) die("out of memory");
        }
        cs->data[cs->n] = xmalloc((size_t)len);
        if (fread(cs->data[cs->n], 1, (size_t)len, f) != (size_t)len) die("short read of a chunk file");
        cs->size[cs->n++] = (size_t)len;
        fclose(f);
    }
    closedir(d);
}

static void chunks_free(chunk_set *cs)
{
    for (size_t i = 0; i < cs->n; i++) free(cs->data[i]);
    free(cs->data);
    free(cs->size);
}

typedef enum { JOB_MEMCPY, JOB_LIB_DECODE, JOB_CHAIN_DECODE } job_kind;

typedef struct {
    job_kind kind;
    int codec;               /* index in codec_names */
    const chunk_set *cs;
    size_t chunk_nbytes;     /* decoded size of one chunk */
    const codec_chain *chain;
    atomic_size_t next;      /* next chunk to take */
    atomic_int failed;
    /* memcpy */
    const unsigned char *src;
    unsigned char *dst;
    size_t len;
    int nthreads;
} job;

typedef struct {
    job *j;
    int id;
} worker_arg;

static void *worker(void *va)
{
    worker_arg *w = va;
    job *j = w->j;
    if (j->kind == JOB_MEMCPY) {
        size_t per = j->len / (size_t)j->nthreads;
        size_t off = per * (size_t)w->id;
        size_t n = w->id == j->nthreads - 1 ? j->len - off : per;
        memcpy(j->dst + off, j->src + off, n);
        return NULL;
    }
    unsigned char *out = xmalloc(j->chunk_nbytes);
    memset(out, 0, j->chunk_nbytes);
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    size_t i;
    while ((i = atomic_fetch_add(&j->next, 1)) < j->cs->n) {
        const void *src = j->cs->data[i];
        size_t n = j->cs->size[i];
        if (j->kind == JOB_CHAIN_DECODE) {
            if (codec_chain_decode(j->chain, src, n, out, j->chunk_nbytes) < 0) atomic_store(&j->failed, 1);
        } else if (j->codec == 0) {
            if (n != j->chunk_nbytes) atomic_store(&j->failed, 1);
            else memcpy(out, src, n);
        } else if (j->codec == 1) {
            if (blosc_decompress_ctx(src, out, j->chunk_nbytes, 1) != (int)j->chunk_nbytes)
                atomic_store(&j->failed, 1);
        } else {
            size_t r = ZSTD_decompressDCtx(dctx, out, j->chunk_nbytes, src, n);
            if (ZSTD_isError(r) || r != j->chunk_nbytes) atomic_store(&j->failed, 1);
        }
    }
    ZSTD_freeDCtx(dctx);
    free(out);
    return NULL;
}

static double run_job(job *j, int nthreads)
{
    pthread_t th[64];
    worker_arg args[64];
    if (nthreads > 64) nthreads = 64;
    j->nthreads = nthreads;
    atomic_store(&j->next, 0);
    atomic_store(&j->failed, 0);
    double t = bench_now();
    for (int i = 0; i < nthreads; i++) {
        args[i] = (worker_arg){j, i};
        if (pthread_create(&th[i], NULL, worker, &args[i]) != 0) die("pthread_create");
    }
    for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
    double dt = bench_now() - t;
    if (atomic_load(&j->failed)) die("decode failed while measuring the ceiling");
    return dt;
}

/* one memcpy of `len` bytes from a to b split over nthreads: GB/s */
static double memcpy_once(unsigned char *a, unsigned char *b, size_t len, int nthreads)
{
    job j = {.kind = JOB_MEMCPY, .src = a, .dst = b, .len = len};
    return (double)len / run_job(&j, nthreads) / 1e9;
}

/* one decode pass over every chunk: GB/s of decoded bytes */
static double decode_once(job *j, int nthreads)
{
    return (double)j->cs->n * (double)j->chunk_nbytes / run_job(j, nthreads) / 1e9;
}

/* ---- output ---- */

/* 1-minute load average: the machine is shared, so say how busy it was */
static double loadavg1(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

static void print_case(const char *cname, const char *phase, const char *buffer, const char *cache, bool dropped,
                       int nthreads, size_t bytes, double zs, double zcpu, const ref_entry *ref, checksums zcs,
                       double ceiling, double mem, double dec, double chain_dec, double goal_ratio, size_t nregions)
{
    json_t *o = json_object();
    char name[64];
    if (buffer) snprintf(name, sizeof name, "%s/%s-%s", cname, phase, buffer);
    else snprintf(name, sizeof name, "%s/%s", cname, phase);
    json_object_set_new(o, "case", json_string(name));
    json_object_set_new(o, "codec", json_string(cname));
    json_object_set_new(o, "phase", json_string(phase));
    if (buffer) json_object_set_new(o, "buffer", json_string(buffer));
    json_object_set_new(o, "cache", json_string(cache));
    json_object_set_new(o, "cache_dropped", json_boolean(dropped));
    json_object_set_new(o, "threads", json_integer(nthreads));
    json_object_set_new(o, "loadavg1", json_real(loadavg1()));
    json_object_set_new(o, "bytes", json_integer((json_int_t)bytes));
    if (nregions) json_object_set_new(o, "regions", json_integer((json_int_t)nregions));
    json_object_set_new(o, "zcube_s", json_real(zs));
    json_object_set_new(o, "zcube_cpu_s", json_real(zcpu));
    json_object_set_new(o, "zcube_gbps", json_real((double)bytes / zs / 1e9));
    double ratio = 0;
    if (ref->found && ref->seconds > 0) {
        ratio = ref->seconds / zs;
        json_object_set_new(o, "ref_s", json_real(ref->seconds));
        json_object_set_new(o, "ref_gbps", json_real((double)bytes / ref->seconds / 1e9));
        json_object_set_new(o, "ratio", json_real(ratio));
        if (ref->cpu_seconds > 0) {
            json_object_set_new(o, "ref_cpu_s", json_real(ref->cpu_seconds));
            json_object_set_new(o, "cpu_ratio", json_real(ref->cpu_seconds / zcpu));
        }
        json_object_set_new(o, "checksum_ok", json_boolean(ref->cs.sum == zcs.sum && ref->cs.ordered == zcs.ordered));
    } else {
        json_object_set_new(o, "ref_s", json_null());
        json_object_set_new(o, "ratio", json_null());
        json_object_set_new(o, "checksum_ok", json_null());
    }
    bool meets = true, has_goal = false;
    if (goal_ratio > 0) {
        has_goal = true;
        json_object_set_new(o, "goal_ratio", json_real(goal_ratio));
        meets = meets && ratio >= goal_ratio;
    }
    if (ceiling > 0) {
        has_goal = true;
        double frac = (double)bytes / zs / 1e9 / ceiling;
        json_object_set_new(o, "ceiling_gbps", json_real(ceiling));
        json_object_set_new(o, "memcpy_gbps", json_real(mem));
        json_object_set_new(o, "decode_gbps", json_real(dec));
        json_object_set_new(o, "zcube_chain_decode_gbps", json_real(chain_dec));
        json_object_set_new(o, "ceiling_decoder", json_string(chain_dec > dec ? "zcube" : "library"));
        json_object_set_new(o, "fraction_of_ceiling", json_real(frac));
        json_object_set_new(o, "goal_fraction", json_real(0.8));
        meets = meets && frac >= 0.8;
    }
    json_object_set_new(o, "meets_goal", has_goal ? json_boolean(meets) : json_null());
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(5));
    if (!s) die("json_dumps");
    printf("%s\n", s);
    fflush(stdout);
    free(s);
    json_decref(o);
    if (ref->found && (ref->cs.sum != zcs.sum || ref->cs.ordered != zcs.ordered)) {
        fprintf(stderr, "bench_read: %s: zcube read other values than zarr-python (checksums differ)\n", name);
        exit(1);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_read DATA_DIR REF_JSONL [--cache cold|warm] [--reps N]\n"
                    "                  [--codec none|lz4|zstd] [--phase whole|regions]\n"
                    "                  [--buffer prealloc|fresh] [--no-ceiling]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 3) usage();
    const char *dir = argv[1], *ref_path = argv[2];
    const char *cache = "cold";
    const char *only_codec = NULL, *only_phase = NULL, *buffer = "prealloc";
    bool ceiling_on = true;
    int reps = 3;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) cache = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--codec") == 0 && i + 1 < argc) only_codec = argv[++i];
        else if (strcmp(argv[i], "--phase") == 0 && i + 1 < argc) only_phase = argv[++i];
        else if (strcmp(argv[i], "--buffer") == 0 && i + 1 < argc) buffer = argv[++i];
        else if (strcmp(argv[i], "--no-ceiling") == 0) ceiling_on = false;
        else usage();
    }
    bool do_whole = !only_phase || strcmp(only_phase, "whole") == 0;
    bool do_regions = !only_phase || strcmp(only_phase, "regions") == 0;
    bool cold = strcmp(cache, "cold") == 0;
    if (!cold && strcmp(cache, "warm") != 0) usage();
    bool fresh = strcmp(buffer, "fresh") == 0;
    if (!fresh && strcmp(buffer, "prealloc") != 0) usage();
    bool need_ref = strcmp(ref_path, "/dev/null") != 0;
    if (reps < 1) reps = 1;
    setenv("ZC_NUM_THREADS", "2", 0); /* keep the caller's if set */
    int nthreads = atoi(getenv("ZC_NUM_THREADS"));
    if (nthreads < 1) nthreads = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int allthreads = ncpu > 0 ? (int)ncpu : 1;

    char path[4096];
    snprintf(path, sizeof path, "%s/regions.txt", dir);
    regions rg;
    regions_load(path, &rg);
    refs_load(ref_path);

    /* memcpy bandwidth: 512 MiB on the zcube thread count */
    size_t mlen = (size_t)512 << 20;
    unsigned char *ma = NULL, *mb = NULL;
    if (ceiling_on && do_whole) {
        ma = xmalloc(mlen);
        mb = xmalloc(mlen);
        memset(ma, 1, mlen);
        memset(mb, 2, mlen);
    }

    for (int c = 0; c < NCODECS; c++) {
        const char *name = codec_names[c];
        if (only_codec && strcmp(only_codec, name) != 0) continue;
        snprintf(path, sizeof path, "%s/%s.zarr", dir, name);
        zc_store *st;
        zc_zarr *arr;
        int rc = zc_store_open(path, ZC_STORE_READONLY, &st);
        if (rc < 0) bench_die_zc("bench_read", "zc_store_open", rc);
        if ((rc = zc_zarr_open(st, "", &arr)) < 0) bench_die_zc("bench_read", "zc_zarr_open", rc);
        zc_zarr_info_t info;
        if ((rc = zc_zarr_info(arr, &info)) < 0) bench_die_zc("bench_read", "zc_zarr_info", rc);
        if (info.ndim != 3 || info.itemsize != 4) die("expected a 3-d 4-byte array");
        size_t nbytes = 4;
        for (int d = 0; d < 3; d++) nbytes *= (size_t)info.shape[d];
        size_t chunk_nbytes = 4;
        for (int d = 0; d < 3; d++) chunk_nbytes *= (size_t)info.chunks[d];

        /* ceiling: every chunk object in memory, decoded on all threads (library
         * calls, and zcube's chain as a diagnostic), and memcpy; measured in
         * turn with each timed read, best of reps each, so that all see about
         * the same load on a shared machine */
        double mem = 0, dec = 0, chain_dec = 0, ceiling = 0;
        chunk_set cs = {0};
        job j = {.kind = JOB_LIB_DECODE, .codec = c, .cs = &cs, .chunk_nbytes = chunk_nbytes};
        job jc = {.kind = JOB_CHAIN_DECODE, .codec = c, .cs = &cs, .chunk_nbytes = chunk_nbytes,
                  .chain = arr->chain};
        if (ceiling_on && do_whole) chunks_load(path, &cs);

        /* whole array */
        unsigned char *dst = xmalloc(nbytes);
        memset(dst, 0, nbytes);
        double best = 1e30, best_cpu = 0;
        bool dropped = true;
        if (do_whole && !cold && (rc = zc_zarr_read(arr, NULL, dst, nbytes)) < 0)
            bench_die_zc("bench_read", "zc_zarr_read (warm-up)", rc);
        if (do_whole && need_ref && !refs[c][0].found) die("no zarr-python reference for a whole read");
        if (do_regions && need_ref && !refs[c][1].found) die("no zarr-python reference for the regions");
        for (int r = 0; r < reps && do_whole; r++) {
            if (ceiling_on) {
                double v = decode_once(&j, allthreads);
                if (v > dec) dec = v;
                v = decode_once(&jc, allthreads);
                if (v > chain_dec) chain_dec = v;
                v = memcpy_once(ma, mb, mlen, nthreads);
                if (v > mem) mem = v;
            }
            if (cold) dropped = drop_caches() && dropped;
            if (fresh) free(dst);
            double cpu = bench_cpu_now(), t = bench_now();
            if (fresh) dst = xmalloc(nbytes); /* new pages, faulted in by the read, as z[...] does */
            if ((rc = zc_zarr_read(arr, NULL, dst, nbytes)) < 0) bench_die_zc("bench_read", "zc_zarr_read (whole)", rc);
            double dt = bench_now() - t;
            cpu = bench_cpu_now() - cpu;
            if (dt < best) best = dt, best_cpu = cpu;
        }
        if (ceiling_on && do_whole) {
            chunks_free(&cs);
            double fastest = chain_dec > dec ? chain_dec : dec;
            ceiling = fastest < mem ? fastest : mem;
        }
        if (do_whole) {
            checksums wcs = checksum(dst, nbytes);
            print_case(name, "whole", buffer, cache, cold && dropped, nthreads, nbytes, best, best_cpu, &refs[c][0], wcs,
                       ceiling, mem, dec, chain_dec, c == 0 ? 0 : 3.0, 0);
        }
        if (!do_regions) {
            free(dst);
            zc_zarr_close(arr);
            zc_store_close(st);
            continue;
        }

        /* random crops, in the file's order, one read each */
        if (cold) dropped = drop_caches();
        else if ((rc = zc_zarr_read(arr, NULL, dst, nbytes)) < 0) bench_die_zc("bench_read", "zc_zarr_read (warm-up)", rc);
        free(dst);
        size_t cbytes = 4 * (size_t)(rg.crop[0] * rg.crop[1] * rg.crop[2]);
        unsigned char *cb = xmalloc(cbytes);
        memset(cb, 0, cbytes);
        double total = 0, total_cpu = 0;
        checksums rcs = {0, 0};
        for (size_t i = 0; i < rg.n; i++) {
            zc_range sel[3];
            for (int d = 0; d < 3; d++)
                sel[d] = (zc_range){rg.corner[i][d], rg.corner[i][d] + rg.crop[d], 1};
            double cpu = bench_cpu_now(), t = bench_now();
            if ((rc = zc_zarr_read(arr, sel, cb, cbytes)) < 0) bench_die_zc("bench_read", "zc_zarr_read (region)", rc);
            total += bench_now() - t;
            total_cpu += bench_cpu_now() - cpu;
            checksums k = checksum(cb, cbytes);
            rcs.sum += k.sum;
            rcs.ordered = rcs.ordered * 1000003u + k.ordered;
        }
        free(cb);
        print_case(name, "regions", NULL, cache, cold && dropped, nthreads, cbytes * rg.n, total, total_cpu, &refs[c][1],
                   rcs, 0, 0, 0, 0, 10.0, rg.n);
        zc_zarr_close(arr);
        zc_store_close(st);
    }
    free(rg.corner);
    free(ma);
    free(mb);
    return 0;
}
