/* tests/test_compute_stream.c — streamed fusion: stored chunks decoded in
 * order a piece at a time (codec_stream: blosc a block, zstd a window, a plain
 * copy by ranges, numcodecs lz4 with 64 KiB of history) give the bytes of a whole decode for any read sizes, and
 * corrupt chunks fail cleanly; first reduction rounds over stored sources
 * stream them tile by tile (edge chunks skip what their blocks leave out),
 * match direct C loops, are marked "streamed" in the plan, or "whole chunks:
 * gzip" where the codec cannot stream; and their projection stays within the
 * stored input chunks + the output + 16 MiB while the measurement stays
 * within the projection (check_contract). */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "core/alloc.h"
#include "exec/rmtree.h"
#include "harness.h"

#define ZC_SHOW_FIGURES() (getenv("ZC_SHOW") != NULL)

/* A chain [bytes, codec] for n float64s, from a v3 codec object's text. */
static codec_chain *chain_for(const char *codec_json, size_t n)
{
    char text[512];
    snprintf(text, sizeof text, "[{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}}%s%s]",
             codec_json ? ", " : "", codec_json ? codec_json : "");
    json_t *list = json_loads(text, 0, NULL);
    codec_ctx ctx = {.ndim = 1, .shape = {(int64_t)n}, .nbytes = n * 8, .zarr_format = 3};
    CHECK_OK(dtype_from_v2("<f8", &ctx.dtype));
    codec_chain *ch = NULL;
    CHECK_OK(codec_chain_create(list, &ctx, &ch));
    json_decref(list);
    return ch;
}

static const char *const streaming[] = {
    "{\"name\": \"blosc\", \"configuration\": {\"cname\": \"lz4\", \"clevel\": 5, \"shuffle\": \"shuffle\", "
    "\"typesize\": 8, \"blocksize\": 65536}}",
    "{\"name\": \"blosc\", \"configuration\": {\"cname\": \"zstd\", \"clevel\": 3, \"shuffle\": \"bitshuffle\", "
    "\"typesize\": 8, \"blocksize\": 0}}",
    "{\"name\": \"blosc\", \"configuration\": {\"cname\": \"lz4\", \"clevel\": 0, \"shuffle\": \"noshuffle\", "
    "\"typesize\": 8, \"blocksize\": 0}}", /* stored as is (memcpyed) */
    "{\"name\": \"zstd\", \"configuration\": {\"level\": 1, \"checksum\": false}}",
    "{\"name\": \"zstd\", \"configuration\": {\"level\": 7, \"checksum\": true}}",
    "{\"name\": \"numcodecs.lz4\", \"configuration\": {\"acceleration\": 1}}",
    NULL, /* bytes alone: a plain copy */
};

TEST(codec_streams_give_the_bytes_of_a_whole_decode)
{
    size_t n = 300007; /* 2.4 MB: many blosc blocks, a short last one, several zstd blocks */
    double *x = malloc(n * 8), *got = malloc(n * 8);
    for (size_t i = 0; i < n; i++) x[i] = (double)(i / 7) + (double)((uint32_t)(i * 2654435761u) >> 28) / 16; /* a ramp, noisy low bits */
    for (size_t c = 0; c < sizeof streaming / sizeof *streaming; c++) {
        codec_chain *ch = chain_for(streaming[c], n);
        if (!ch) continue;
        const char *why = "?";
        CHECK(codec_chain_streams(ch, &why) && why == NULL);
        zc_buf enc = {0};
        CHECK_OK(codec_chain_encode(ch, x, n * 8, &enc));
        CHECK(enc.size <= (codec_chain_is_identity(ch) ? n * 8 : codec_chain_stored_max(ch)));
        codec_stream *s = NULL;
        CHECK_OK(codec_stream_open(ch, enc.data, enc.size, &s));
        /* reads of awkward sizes: 1 byte, 7, a block and a bit, 100 KB, the rest */
        size_t sizes[] = {1, 7, 65537, 100000, 8 * 4096 + 3}, at = 0;
        for (size_t k = 0; s && at < n * 8; k++) {
            size_t len = k < 5 ? sizes[k] : n * 8 - at;
            CHECK_OK(codec_stream_read(s, (unsigned char *)got + at, len));
            at += len;
        }
        CHECK(s && memcmp(got, x, n * 8) == 0);
        if (s) CHECK_ERR(codec_stream_read(s, got, 1), ZC_ECORRUPT, "past the chunk");
        codec_stream_close(s);
        /* a chunk cut short fails, at open or at a read, never reads outside it */
        if (!codec_chain_is_identity(ch)) {
            size_t cut = enc.size * 2 / 3;
            unsigned char *part = malloc(cut);
            memcpy(part, enc.data, cut);
            int rc = codec_stream_open(ch, part, cut, &s);
            for (size_t at2 = 0; rc == 0 && at2 < n * 8; at2 += 65536)
                rc = codec_stream_read(s, got, n * 8 - at2 < 65536 ? n * 8 - at2 : 65536);
            CHECK(rc == ZC_ECORRUPT);
            codec_stream_close(s);
            free(part);
        }
        zc__free(enc.data);
        codec_chain_free(ch);
    }
    /* gzip decodes whole chunks only: no stream, and it says so */
    codec_chain *gz = chain_for("{\"name\": \"gzip\", \"configuration\": {\"level\": 1}}", n);
    const char *why = NULL;
    CHECK(gz && !codec_chain_streams(gz, &why) && why && strstr(why, "gzip"));
    codec_stream *s = NULL;
    if (gz) CHECK(codec_stream_open(gz, "x", 1, &s) == ZC_EUNSUPPORTED && !s);
    codec_chain_free(gz);
    free(x);
    free(got);
}

/* u, v stored with `codec` in st (chunks as given), from seeded random arrays. */
static void store_uv(zc_store *st, const char *spec, int nd, const int64_t *shape, const int64_t *chunks,
                     zc_array **u, zc_array **v)
{
    zc_array *ru, *rv;
    CHECK_OK(zc_random_uniform(11, nd, shape, chunks, ZC_FLOAT64, -1, 1, &ru));
    CHECK_OK(zc_random_normal(12, nd, shape, chunks, ZC_FLOAT64, 0, 2, &rv));
    zc_array *both[2] = {ru, rv};
    zc_target t[2] = {{st, "u", spec, 3}, {st, "v", spec, 3}};
    zc_spec s = spec_mem(256);
    zc_report *rep = NULL;
    CHECK_OK(zc_compute(&s, 2, both, t, &rep));
    zc_report_free(rep);
    zc_array_release(ru);
    zc_array_release(rv);
    CHECK_OK(zc_from_zarr(st, "u", u));
    CHECK_OK(zc_from_zarr(st, "v", v));
}

static double *values(zc_array *a, size_t n)
{
    double *p = malloc(n * sizeof(double) + 8);
    zc_spec s = spec_mem(256);
    CHECK_OK(zc_compute_buffer(&s, a, p, n * sizeof(double), NULL));
    return p;
}

/* The stream note of the first operation that has one, or "". */
static const char *stream_note(json_t *plan)
{
    size_t k;
    json_t *o;
    json_array_foreach(json_object_get(plan, "operations"), k, o) {
        const char *s = json_string_value(json_object_get(o, "stream"));
        if (s) return s;
    }
    return "";
}

/* mean(u*v + 1, axis 0), max(u*u, axis 2) and sum(v, axis (0, 1)) of u, v
 * (13, 21, 2000) stored in chunks (4, 8, 2000) — edge chunks in both
 * leading dims — with `spec`, in store url: results against C loops, the
 * plan's stream note of the first nnoted, the contract. */
static void reductions_over(const char *url, const char *spec, const char *note, int nnoted)
{
    int64_t shape[3] = {13, 21, 2000}, chunks[3] = {4, 8, 2000}; /* chunks of 512 KB */
    zc_store *st;
    CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &st));
    zc_array *u, *v;
    store_uv(st, spec, 3, shape, chunks, &u, &v);
    zc_array *one, *uv = binop("multiply", u, v), *uu = binop("multiply", u, u), *r[3];
    CHECK_OK(zc_scalar(1.0, 0, &one));
    zc_array *uv1 = binop("add", uv, one);
    int ax0 = 0, ax2 = 2, ax01[2] = {0, 1};
    CHECK_OK(zc_reduce("mean", uv1, &ax0, 1, 0, 0, &r[0]));
    CHECK_OK(zc_reduce("max", uu, &ax2, 1, 0, 0, &r[1]));
    CHECK_OK(zc_reduce("sum", v, ax01, 2, 0, 0, &r[2]));
    zc_spec s = spec_mem(64);
    char *pj = NULL;
    for (int i = 0; i < nnoted; i++) {
        CHECK_OK(zc_plan_json(&s, 1, &r[i], NULL, &pj));
        json_t *plan = json_loads(pj, 0, NULL);
        const char *got = stream_note(plan);
        if (strncmp(got, note, strlen(note)))
            fprintf(stderr, "%s, %s, reduction %d: stream note '%s', expected '%s'\n", url, spec, i, got, note);
        CHECK(!strncmp(got, note, strlen(note)));
        json_decref(plan);
        zc_free(pj);
    }
    size_t n = 13 * 21 * 2000;
    double *U = values(u, n), *V = values(v, n), *m0 = malloc(21 * 2000 * 8), *m1 = malloc(13 * 21 * 8),
           *m2 = malloc(2000 * 8);
    zc_store *ost;
    CHECK_OK(zc_store_open("memory://stream-out", ZC_STORE_CREATE, &ost));
    zc_target t[3] = {{ost, "m0", "none", 3}, {ost, "m1", "none", 3}, {ost, "m2", "none", 3}};
    zc_report *rep = NULL;
    CHECK_OK(zc_compute(&s, 3, r, t, &rep));
    json_decref(report_checked(rep));
    zc_array *o;
    double *outs[3] = {m0, m1, m2};
    size_t lens[3] = {21 * 2000, 13 * 21, 2000};
    for (int i = 0; i < 3; i++) {
        CHECK_OK(zc_from_zarr(ost, t[i].path, &o));
        CHECK_OK(zc_compute_buffer(&s, o, outs[i], lens[i] * 8, NULL));
        zc_array_release(o);
    }
    double err = 0;
    for (size_t j = 0; j < 21 * 2000; j++) {
        double a = 0;
        for (size_t k = 0; k < 13; k++) a += U[k * 42000 + j] * V[k * 42000 + j] + 1;
        err = fmax(err, fabs(a / 13 - m0[j]));
    }
    for (size_t j = 0; j < 13 * 21; j++) {
        double mx = -INFINITY;
        for (size_t k = 0; k < 2000; k++) mx = fmax(mx, U[j * 2000 + k] * U[j * 2000 + k]);
        CHECK(mx == m1[j]);
    }
    for (size_t k = 0; k < 2000; k++) {
        double a = 0;
        for (size_t j = 0; j < 13 * 21; j++) a += V[j * 2000 + k];
        err = fmax(err, fabs(a - m2[k]));
    }
    CHECK(err < 1e-9);
    free(U);
    free(V);
    free(m0);
    free(m1);
    free(m2);
    for (int i = 0; i < 3; i++) zc_array_release(r[i]);
    zc_array_release(uv1);
    zc_array_release(uv);
    zc_array_release(uu);
    zc_array_release(one);
    zc_array_release(u);
    zc_array_release(v);
    zc_store_close(ost);
    zc_store_close(st);
}

TEST(streamed_reductions_match_loops_for_every_codec)
{
    const char *codecs[] = {"blosc:lz4:5:shuffle", "zstd:1", "none", "blosc:zstd:3:bitshuffle", "lz4"};
    char dir[] = "/tmp/zcube-stream-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    for (size_t i = 0; i < sizeof codecs / sizeof *codecs; i++) {
        char url[128];
        snprintf(url, sizeof url, "memory://stream-%zu", i); /* chunks read into memory */
        reductions_over(url, codecs[i], "streamed", 3);
        snprintf(url, sizeof url, "%s/s%zu", dir, i); /* chunk files mapped */
        reductions_over(url, codecs[i], "streamed", 3);
    }
    /* gzip cannot stream: whole chunks, as before, and the plan says why */
    reductions_over("memory://stream-gzip", "gzip:1", "whole chunks: gzip", 2); /* the fused ones */
    exec_rm_tree(dir);
}

/* The projection of a streamed task, from the plan: operation k's. */
static double projected_mb(json_t *plan, int k)
{
    json_t *o = json_array_get(json_object_get(plan, "operations"), (size_t)k);
    return (double)json_integer_value(json_object_get(o, "projected_mem")) / (1 << 20);
}

TEST(streamed_projection_is_stored_inputs_plus_output)
{
    /* the Quadratic Means with 16 MB chunks: u, v (20, 1, 500, 400) float64
     * chunked (10, 1, 500, 400); one group task reads a chunk of each and
     * writes three accumulator blocks of (1, 1, 500, 400) x 16 bytes. Its
     * projection: at most the two stored chunks (at their codecs' bound, the
     * decoded size plus headers) + the three outputs + 16 MiB, for every codec
     * that streams; the run measures no more (check_contract) */
    const char *codecs[] = {"blosc:lz4:5:shuffle", "zstd:1", "lz4", "none"};
    int64_t shape[4] = {20, 1, 500, 400}, chunks[4] = {10, 1, 500, 400};
    double chunk_mb = 10 * 500 * 400 * 8 / 1048576.0, out_mb = 3 * 500 * 400 * 16 / 1048576.0;
    char dir[] = "/tmp/zcube-stream-proj-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        char url[128];
        snprintf(url, sizeof url, "%s/c%zu", dir, c);
        zc_store *st;
        CHECK_OK(zc_store_open(url, ZC_STORE_CREATE, &st));
        zc_array *u, *v;
        store_uv(st, codecs[c], 4, shape, chunks, &u, &v);
        zc_array *sq[3] = {binop("multiply", u, u), binop("multiply", v, v), binop("multiply", u, v)}, *r[3];
        int axis = 0;
        for (int i = 0; i < 3; i++) CHECK_OK(zc_reduce("mean", sq[i], &axis, 1, 0, 0, &r[i]));
        zc_spec s = spec_mem(200);
        s.nthreads = 1; /* round 1 then has one task per input block pair */
        char *pj = NULL;
        CHECK_OK(zc_plan_json(&s, 3, r, NULL, &pj));
        json_t *plan = json_loads(pj, 0, NULL);
        zc_free(pj);
        double p = projected_mb(plan, 0), bound = 2 * chunk_mb + out_mb + 16;
        if (ZC_SHOW_FIGURES())
            fprintf(stderr, "%s: projected %.1f MiB, stored inputs %.1f + outputs %.1f + 16 = %.1f MiB\n", codecs[c], p,
                    2 * chunk_mb, out_mb, bound);
        CHECK(!strcmp(stream_note(plan), "streamed"));
        CHECK(p <= bound);
        CHECK(p >= 2 * chunk_mb * (strcmp(codecs[c], "none") ? 0 : 1)); /* an uncompressed chunk is read whole */
        json_decref(plan);
        zc_store *ost;
        CHECK_OK(zc_store_open("memory://stream-proj-out", ZC_STORE_CREATE, &ost));
        zc_target t[3] = {{ost, "a", "none", 3}, {ost, "b", "none", 3}, {ost, "c", "none", 3}};
        zc_report *rep = NULL;
        CHECK_OK(zc_compute(&s, 3, r, t, &rep));
        json_decref(report_checked(rep)); /* measured <= projected */
        zc_array *o;
        double *U = values(u, 20 * 200000), *V = values(v, 20 * 200000), *m = malloc(200000 * 8), err = 0;
        CHECK_OK(zc_from_zarr(ost, "c", &o));
        CHECK_OK(zc_compute_buffer(&s, o, m, 200000 * 8, NULL));
        zc_array_release(o);
        for (size_t j = 0; j < 200000; j += 7) {
            double a = 0;
            for (size_t k = 0; k < 20; k++) a += U[k * 200000 + j] * V[k * 200000 + j];
            err = fmax(err, fabs(a / 20 - m[j]));
        }
        CHECK(err < 1e-12);
        free(U);
        free(V);
        free(m);
        zc_store_close(ost);
        for (int i = 0; i < 3; i++) {
            zc_array_release(r[i]);
            zc_array_release(sq[i]);
        }
        zc_array_release(u);
        zc_array_release(v);
        zc_store_close(st);
    }
    exec_rm_tree(dir);
}
