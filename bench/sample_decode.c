/* bench/sample_decode.c — decode-only rate of blosc chunks, for the ceiling of
 * the sampler benchmark (bench/sample_bench.sh).
 *
 *   sample_decode ARRAY_DIR [MAX_CHUNKS]
 *
 * ARRAY_DIR is a Zarr v2 array whose chunk files are blosc frames (written by
 * zarr-python, one file per chunk). Up to MAX_CHUNKS (default 4000) of them,
 * spread evenly over the sorted listing, are read into memory; then each is
 * decoded with one thread into one reused buffer (no IO, no copy into place,
 * no Python call in between), once by c-blosc's blosc_decompress_ctx and once
 * by zcube's own codec chain for the array (internal API, zarr/zarr.h), best
 * of 5 passes each. The faster of the two is the rate one core can decode
 * this data at (so zcube's own faster decoder cannot make the ceiling easier
 * to reach). Prints one JSON line: chunks, seconds, stored_bytes_per_s,
 * decoded_bytes_per_s, chunks_per_s (the faster decoder's), decoder,
 * library_/zcube_stored_bytes_per_s, compression_ratio (all per thread). */
#include <blosc.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zarr/zarr.h"
#include "zcube.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: sample_decode ARRAY_DIR [MAX_CHUNKS]\n");
        return 2;
    }
    long max = argc == 3 ? strtol(argv[2], NULL, 10) : 4000;
    if (max < 1) max = 1;
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    size_t n = 0, cap = 1024;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    while (names && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap *= 2;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn) break;
            names = nn;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (!names || n == 0) {
        fprintf(stderr, "sample_decode: no chunk files in %s\n", argv[1]);
        return 1;
    }
    qsort(names, n, sizeof *names, cmp_str);
    size_t take = n < (size_t)max ? n : (size_t)max;
    void **blob = calloc(take, sizeof *blob);
    size_t *len = calloc(take, sizeof *len);
    size_t stored = 0, decoded = 0, out_cap = 0;
    for (size_t i = 0; i < take; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i * n / take]);
        FILE *f = fopen(path, "rb");
        if (!f) {
            perror(path);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        long sz = ftell(f);
        fseek(f, 0, SEEK_SET);
        blob[i] = malloc(sz > 0 ? (size_t)sz : 1);
        if (!blob[i] || fread(blob[i], 1, (size_t)sz, f) != (size_t)sz) {
            fprintf(stderr, "sample_decode: reading %s failed\n", path);
            return 1;
        }
        fclose(f);
        len[i] = (size_t)sz;
        size_t nbytes, cbytes, bsize;
        blosc_cbuffer_sizes(blob[i], &nbytes, &cbytes, &bsize);
        if (cbytes != len[i]) {
            fprintf(stderr, "sample_decode: %s is not a blosc frame\n", path);
            return 1;
        }
        stored += len[i];
        decoded += nbytes;
        if (nbytes > out_cap) out_cap = nbytes;
    }
    void *out = malloc(out_cap);
    if (!out) return 1;
    zc_store *st;
    zc_zarr *arr;
    if (zc_store_open(argv[1], ZC_STORE_READONLY, &st) < 0 || zc_zarr_open(st, "", &arr) < 0) {
        fprintf(stderr, "sample_decode: %s: %s\n", argv[1], zc_errmsg());
        return 1;
    }
    double best_lib = 1e30, best_zc = 1e30;
    for (int pass = 0; pass < 5; pass++) {
        double t = now();
        for (size_t i = 0; i < take; i++)
            if (blosc_decompress_ctx(blob[i], out, out_cap, 1) <= 0) {
                fprintf(stderr, "sample_decode: chunk %zu does not decode\n", i);
                return 1;
            }
        double dt = now() - t;
        if (dt < best_lib) best_lib = dt;
        t = now();
        for (size_t i = 0; i < take; i++)
            if (codec_chain_decode(arr->chain, blob[i], len[i], out, out_cap) < 0) {
                fprintf(stderr, "sample_decode: chunk %zu does not decode with zcube's chain: %s\n", i, zc_errmsg());
                return 1;
            }
        dt = now() - t;
        if (dt < best_zc) best_zc = dt;
    }
    zc_zarr_close(arr);
    zc_store_close(st);
    double best = best_lib < best_zc ? best_lib : best_zc;
    printf("{\"decode_only\":true,\"decoder\":\"%s, 1 thread\",\"blosc_version\":\"%s\",\"chunks\":%zu,"
           "\"seconds\":%.6f,\"stored_bytes_per_s\":%.0f,\"decoded_bytes_per_s\":%.0f,\"chunks_per_s\":%.0f,"
           "\"library_stored_bytes_per_s\":%.0f,\"zcube_stored_bytes_per_s\":%.0f,\"compression_ratio\":%.4f}\n",
           best_zc < best_lib ? "zcube codec chain" : "blosc_decompress_ctx", blosc_get_version_string(), take, best,
           (double)stored / best, (double)decoded / best, (double)take / best, (double)stored / best_lib,
           (double)stored / best_zc, (double)decoded / (double)stored);
    for (size_t i = 0; i < take; i++) free(blob[i]);
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    free(blob);
    free(len);
    free(out);
    return 0;
}
