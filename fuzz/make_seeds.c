/* fuzz/make_seeds.c — writes starting inputs for every fuzz target:
 *
 *   fuzz_make_seeds OUTDIR      (OUTDIR/<target>/ must exist or is created)
 *
 *   meta_v2       every zarrita v2 .zarray (+ NUL + its .zattrs, if any)
 *   meta_v3       every zarrita v3 zarr.json (arrays and groups)
 *   codec_decode  each single-codec config with a pattern encoded by that
 *                 codec; the numcodecs fixtures' encoded files with the v2
 *                 configs that decode them; each chain with a pattern
 *                 encoded for a few shapes
 *   chunk_read    every fixture object as it was written
 *   region        a list of regions over a few shapes
 *   roundtrip     a pattern for each lossless chain and a few shapes
 *
 * The committed corpus (fuzz/corpus/) is these seeds and what fuzzing found,
 * merged (-merge=1) and picked by select_corpus.py; see
 * docs/internals/fuzzing.md. This is
 * scaffolding, not library code: it prints and exits on failure. */
#define _GNU_SOURCE /* nftw */
#include <errno.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>

#include "core/dtype.h"
#include "fuzz.h"

static const char *outdir;
static int nseeds;

static void write_seed(const char *target, const char *name, const void *a, size_t an, const void *b, size_t bn)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", outdir, target);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/%s", outdir, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || (an && fwrite(a, 1, an, f) != an) || (bn && fwrite(b, 1, bn, f) != bn) || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    nseeds++;
}

static unsigned char *load(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(len > 0 ? (size_t)len + 1 : 1);
    if (!p || fread(p, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "%s: cannot read\n", path);
        exit(1);
    }
    fclose(f);
    *n = (size_t)len;
    return p;
}

static void pattern(unsigned char *p, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 7;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (i % 5 < 2) ? (unsigned char)(i / 9) : (i % 5 == 2) ? (unsigned char)(x >> 24) : 0;
    }
}

/* ---- metadata: walk the zarrita fixtures */

static int meta_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    const char *base = path + ftw->base;
    bool v2 = !strcmp(base, ".zarray"), v3 = !strcmp(base, "zarr.json");
    if (type != FTW_F || (!v2 && !v3)) return 0;
    size_t n, an = 0;
    unsigned char *doc = load(path, &n), *attrs = NULL;
    if (v2) {
        char apath[1024];
        snprintf(apath, sizeof apath, "%.*s.zattrs", (int)ftw->base, path);
        attrs = load(apath, &an);
    }
    /* name: the path below data.zarr, '/' → '_' */
    const char *rel = strstr(path, "data.zarr/");
    rel = rel ? rel + 10 : path;
    char name[512];
    snprintf(name, sizeof name, "%s", rel);
    for (char *p = name; *p; p++)
        if (*p == '/' || *p == ' ') *p = '_';
    if (attrs) {
        doc = realloc(doc, n + 1 + an);
        doc[n] = 0;
        memcpy(doc + n + 1, attrs, an);
        n += 1 + an;
    }
    write_seed(v2 ? "meta_v2" : "meta_v3", name, doc, n, NULL, 0);
    free(doc);
    free(attrs);
    return 0;
}

/* ---- codec_decode */

static void codec_seeds(void)
{
    /* each config with a pattern it encoded itself */
    for (size_t i = 0; i < fuzz_ncodec_configs; i++) {
        const fuzz_codec_config *cf = &fuzz_codec_configs[i];
        json_t *j = json_loads(cf->json, 0, NULL);
        codec_ctx ctx;
        fuzz_ctx(cf->dtype, cf->itemsize, cf->ndim, cf->shape, json_object_get(j, "id") ? 2 : 3, &ctx);
        codec c;
        if (codec_create(j, &ctx, &c) != 0) {
            fprintf(stderr, "config %zu: %s\n", i, zc_errmsg());
            exit(1);
        }
        json_decref(j);
        unsigned char *src = malloc(ctx.nbytes);
        pattern(src, ctx.nbytes, (uint32_t)i);
        if (dtype_is_float(cf->dtype)) {
            /* keep floats finite and moderate (fixedscaleoffset/quantize) */
            for (size_t k = 0; k < ctx.nbytes; k++) src[k] &= 0x3f;
        }
        zc_buf e = {NULL, 0, 0};
        if (c.type->encode(c.state, src, ctx.nbytes, &e) == 0) {
            unsigned char head[2] = {(unsigned char)i, 0};
            char name[64];
            snprintf(name, sizeof name, "config%02zu", i);
            write_seed("codec_decode", name, head, 2, e.data, e.size);
        } else {
            fprintf(stderr, "note: config %zu does not encode the pattern: %s\n", i, zc_errmsg());
        }
        buf_free(&e);
        free(src);
        codec_destroy(&c);
    }
    /* numcodecs fixtures: the first config whose v2 id matches decodes them */
    static const char *const dirs[] = {"zstd", "gzip", "zlib", "bz2", "lz4", "blosc", "crc32c", "crc32",
                                       "adler32", "shuffle"};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        size_t idx = fuzz_ncodec_configs;
        char want[64];
        snprintf(want, sizeof want, "{\"id\":\"%s\"", dirs[d]);
        for (size_t i = 0; i < fuzz_ncodec_configs && idx == fuzz_ncodec_configs; i++)
            if (!strncmp(fuzz_codec_configs[i].json, want, strlen(want))) idx = i;
        if (idx == fuzz_ncodec_configs) {
            fprintf(stderr, "no v2 config for %s\n", dirs[d]);
            exit(1);
        }
        for (int m = 0; m < 13; m++)
            for (int k = 0; k < 13; k += 4) {
                char path[1024];
                snprintf(path, sizeof path, "%s/numcodecs/%s/codec.%02d/encoded.%02d.dat", ZC_TEST_DATA, dirs[d],
                         m, k);
                size_t n;
                unsigned char *p = load(path, &n);
                if (!p) continue;
                unsigned char head[2] = {(unsigned char)idx, 0};
                char name[64];
                snprintf(name, sizeof name, "numcodecs_%s_%02d_%02d", dirs[d], m, k);
                write_seed("codec_decode", name, head, 2, p, n);
                free(p);
            }
    }
    /* codec spec strings (byte 0 0xFF; byte 1: format and element size) */
    static const char *const specs[] = {"zstd:3", "blosc:lz4:5:shuffle", "blosc:zstd:9:bitshuffle", "gzip,crc32c",
                                        "none", "none,crc32c", "lz4:7", "bz2:1", "zlib:0", "blosc:blosclz:1:auto",
                                        "[{\"name\":\"zstd\"}]", "{\"id\":\"zlib\",\"level\":1}"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        unsigned char head[2] = {0xFF, (unsigned char)(specs[i][0] == '{' ? 2 * (i % 4) : 1 + 2 * (i % 4))};
        char name[64];
        snprintf(name, sizeof name, "spec%02zu", i);
        write_seed("codec_decode", name, head, 2, specs[i], strlen(specs[i]));
    }
    /* chains, on a few shapes */
    for (size_t i = 0; i < fuzz_nchains; i++)
        for (uint8_t s = 2; s < 10; s += 3) {
            int64_t shape[3];
            int ndim = fuzz_decode_shape(s, shape);
            codec_ctx ctx;
            fuzz_ctx(fuzz_chains[i].dtype, fuzz_chains[i].itemsize, ndim, shape, 3, &ctx);
            json_t *j = fuzz_chain_json(&fuzz_chains[i]);
            codec_chain *ch;
            int rc = codec_chain_create(j, &ctx, &ch);
            json_decref(j);
            if (rc != 0) continue;
            unsigned char *src = malloc(ctx.nbytes ? ctx.nbytes : 1);
            pattern(src, ctx.nbytes, (uint32_t)(i * 16 + s));
            if (dtype_is_float(fuzz_chains[i].dtype))
                for (size_t k = 0; k < ctx.nbytes; k++) src[k] &= 0x3f;
            zc_buf e = {NULL, 0, 0};
            if (codec_chain_encode(ch, src, ctx.nbytes, &e) == 0) {
                unsigned char head[2] = {(unsigned char)(0xC0 + i), s};
                char name[64];
                snprintf(name, sizeof name, "chain%02zu_shape%u", i, (unsigned)s);
                write_seed("codec_decode", name, head, 2, e.data, e.size);
            }
            buf_free(&e);
            free(src);
            codec_chain_free(ch);
        }
}

/* ---- chunk_read */

static void chunk_seeds(void)
{
    for (size_t f = 0; f < fuzz_nfixtures; f++) {
        const fuzz_fixture *fx = fuzz_fixture_get(f);
        for (size_t k = 0; k < fx->nobj; k++) {
            unsigned char head[2] = {(unsigned char)f, (unsigned char)k};
            char name[128];
            snprintf(name, sizeof name, "fixture%zu_%s", f, fx->obj[k].key);
            for (char *p = name; *p; p++)
                if (*p == '/') *p = '_';
            write_seed("chunk_read", name, head, 2, fx->obj[k].data, fx->obj[k].size);
        }
    }
}

/* ---- region */

static void region_seeds(void)
{
    static const struct {
        uint8_t shape[5]; /* ndim, then sizes */
        const char *text;
    } R[] = {
        {{3, 10, 20, 30}, "0:10,:,5"},   {{2, 10, 20}, "::2,3:-1"},   {{3, 4, 5, 6}, "...,0"},
        {{2, 7, 8}, "[1:2]"},            {{1, 9}, "(1,)"},            {{2, 5, 5}, " 5 , "},
        {{1, 0}, ":"},                   {{1, 3}, "-1"},              {{1, 3}, "-4"},
        {{2, 3, 3}, "1:2:0"},            {{2, 3, 3}, "::-1"},         {{1, 3}, "1,2"},
        {{3, 2, 2, 2}, "...,...,1"},     {{1, 100}, "-200:200:7"},    {{1, 0xFB}, "9223372036854775807:"},
        {{1, 0xFB}, "-9223372036854775808::3"}, {{2, 0xF4, 0xF9}, "1::1000000007, -5:"},
        {{0}, ""},                       {{0}, "..."},                {{1, 5}, "1:2:3:4"},
        {{1, 5}, "a"},                   {{2, 5, 5}, "1,,2"},         {{1, 5}, "+3"},
    };
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++) {
        unsigned char head[1 + ZC_MAX_DIMS];
        int ndim = R[i].shape[0];
        head[0] = (unsigned char)ndim;
        for (int d = 0; d < ndim; d++) head[1 + d] = R[i].shape[1 + d];
        char name[32];
        snprintf(name, sizeof name, "region%02zu", i);
        write_seed("region", name, head, 1 + (size_t)ndim, R[i].text, strlen(R[i].text));
    }
}

/* ---- roundtrip */

static void roundtrip_seeds(void)
{
    size_t lossless = 0;
    for (size_t i = 0; i < fuzz_nchains; i++) lossless += fuzz_chains[i].lossless != 0;
    static const size_t sizes[] = {0, 24, 120, 1000};
    for (size_t i = 0; i < lossless; i++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            unsigned char head[2] = {(unsigned char)i, (unsigned char)(s * 37 + i)};
            unsigned char data[1000];
            pattern(data, sizes[s], (uint32_t)(i * 8 + s));
            char name[32];
            snprintf(name, sizeof name, "chain%02zu_%zu", i, sizes[s]);
            write_seed("roundtrip", name, head, 2, data, sizes[s]);
        }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 1;
    }
    outdir = argv[1];
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        perror(outdir);
        return 1;
    }
    char root[1024];
    snprintf(root, sizeof root, "%s/zarrita", ZC_TEST_DATA);
    if (nftw(root, meta_file, 16, FTW_PHYS) != 0) {
        perror(root);
        return 1;
    }
    codec_seeds();
    chunk_seeds();
    region_seeds();
    roundtrip_seeds();
    fprintf(stderr, "%d seeds written to %s\n", nseeds, outdir);
    return 0;
}
