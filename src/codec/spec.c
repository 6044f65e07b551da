/* codec/spec.c — codec spec strings, the short form users type ("zstd:3",
 * "blosc:lz4:5:shuffle", "gzip,crc32c", "none") turned into codec JSON.
 *
 * Grammar:
 *   spec       = json | compressor [ "," "crc32c" ]
 *   compressor = "none" | "zstd" [":" LEVEL] | "gzip" [":" LEVEL] | "zlib" [":" LEVEL]
 *              | "bz2" [":" LEVEL] | "lz4" [":" ACCEL]
 *              | "blosc" [":" CNAME [":" CLEVEL [":" SHUFFLE]]]
 *   SHUFFLE    = noshuffle | shuffle | bitshuffle | auto | -1 | 0 | 1 | 2
 *   json       = text starting with '[' or '{', parsed and returned as is
 *
 * Defaults: zstd 3, gzip 5, zlib 5, bz2 9, lz4 1, blosc lz4:5:shuffle.
 * Zarr v3 result: the bytes→bytes codec list in v3 spelling, e.g.
 *   [{"name":"zstd","configuration":{"level":3,"checksum":false}}]
 * Zarr v2 result: {"compressor": <numcodecs object or null>, "filters": null};
 * ",crc32c" is v3 only (numcodecs 0.11, zarr-python 2.13's, has no crc32c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "codec/codec.h"
#include "codec/compress_common.h"
#include "core/alloc.h"
#include "core/error.h"

#define MAX_PARTS 4

static const char *const blosc_cnames[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
static const char *const shuffle_names[] = {"noshuffle", "shuffle", "bitshuffle"};

static int parse_int(const char *spec, const char *what, const char *s, long long lo, long long hi,
                     long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno)
        return zc__err(ZC_EINVAL, "codec spec '%s': %s '%s' is not an integer", spec, what, s);
    if (v < lo || v > hi)
        return zc__err(ZC_EINVAL, "codec spec '%s': %s %lld is outside [%lld, %lld]", spec, what, v, lo, hi);
    *out = v;
    return 0;
}

/* -1 for "auto"/-1, else 0, 1, 2. */
static int parse_shuffle(const char *spec, const char *s, int *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, shuffle_names[i])) return *out = i, 0;
    if (!strcmp(s, "auto")) return *out = -1, 0;
    long long v;
    if (parse_int(spec, "blosc shuffle", s, -1, 2, &v) < 0)
        return zc__err(ZC_EINVAL,
                       "codec spec '%s': blosc shuffle '%s' is not noshuffle, shuffle, bitshuffle or auto",
                       spec, s);
    *out = (int)v;
    return 0;
}

/* The compressor as a codec object in the spelling of zarr_format (NULL for
 * "none"); parts[0] is the name. */
static int compressor_json(const char *spec, char **parts, int nparts, int zarr_format,
                           size_t typesize, json_t **out)
{
    const char *name = parts[0];
    long long v;
    json_t *conf = NULL;
    const char *v3 = name, *v2 = name;
    int max_parts = 2;
    *out = NULL;
    if (!strcmp(name, "none")) {
        max_parts = 1;
    } else if (!strcmp(name, "zstd")) {
        v = 3;
        if (nparts > 1) ZC_TRY(parse_int(spec, "zstd level", parts[1], ZSTD_minCLevel(), ZSTD_maxCLevel(), &v));
        conf = zarr_format == 3 ? json_pack("{s:I, s:b}", "level", (json_int_t)v, "checksum", 0)
                                : json_pack("{s:I}", "level", (json_int_t)v);
    } else if (!strcmp(name, "gzip") || !strcmp(name, "zlib")) {
        v = 5;
        if (nparts > 1) ZC_TRY(parse_int(spec, "level", parts[1], 0, 9, &v));
        if (!strcmp(name, "zlib")) v3 = "numcodecs.zlib";
        conf = json_pack("{s:I}", "level", (json_int_t)v);
    } else if (!strcmp(name, "bz2")) {
        v = 9;
        if (nparts > 1) ZC_TRY(parse_int(spec, "bz2 level", parts[1], 1, 9, &v));
        v3 = "numcodecs.bz2";
        conf = json_pack("{s:I}", "level", (json_int_t)v);
    } else if (!strcmp(name, "lz4")) {
        v = 1;
        if (nparts > 1) ZC_TRY(parse_int(spec, "lz4 acceleration", parts[1], 1, 65537, &v));
        v3 = "numcodecs.lz4";
        conf = json_pack("{s:I}", "acceleration", (json_int_t)v);
    } else if (!strcmp(name, "blosc")) {
        max_parts = 4;
        const char *cname = nparts > 1 ? parts[1] : "lz4";
        size_t i = 0;
        while (i < sizeof blosc_cnames / sizeof blosc_cnames[0] && strcmp(cname, blosc_cnames[i])) i++;
        if (i == sizeof blosc_cnames / sizeof blosc_cnames[0])
            return zc__err(ZC_EINVAL, "codec spec '%s': unknown blosc cname '%s'", spec, cname);
        long long clevel = 5;
        int shuffle = 1;
        if (nparts > 2) ZC_TRY(parse_int(spec, "blosc clevel", parts[2], 0, 9, &clevel));
        if (nparts > 3) ZC_TRY(parse_shuffle(spec, parts[3], &shuffle));
        if (typesize == 0) typesize = 1;
        if (zarr_format == 3) {
            if (shuffle < 0) shuffle = typesize == 1 ? 2 : 1;
            conf = json_pack("{s:I, s:s, s:I, s:s, s:i}", "typesize", (json_int_t)typesize, "cname",
                             blosc_cnames[i], "clevel", (json_int_t)clevel, "shuffle",
                             shuffle_names[shuffle], "blocksize", 0);
        } else {
            conf = json_pack("{s:s, s:I, s:i, s:i}", "cname", blosc_cnames[i], "clevel",
                             (json_int_t)clevel, "shuffle", shuffle, "blocksize", 0);
        }
    } else {
        return zc__err(ZC_EINVAL, "codec spec '%s': unknown codec '%s' (expected none, zstd, gzip, "
                       "zlib, bz2, lz4 or blosc)", spec, name);
    }
    if (nparts > max_parts) {
        json_decref(conf);
        return zc__err(ZC_EINVAL, "codec spec '%s': too many ':' fields for %s", spec, name);
    }
    if (!strcmp(name, "none")) return 0;
    if (!conf) return zc__err(ZC_ENOMEM, "codec spec '%s': out of memory", spec);
    *out = codec_b2b_json(v3, v2, zarr_format, conf);
    return *out ? 0 : zc__err(ZC_ENOMEM, "codec spec '%s': out of memory", spec);
}

/* JSON specs: v3 wants a list of codec objects; v2 a compressor object {"id": ...}
 * (wrapped as {compressor, filters: null}) or {"compressor": ..., "filters": ...}. */
static int parse_json(const char *spec, int zarr_format, json_t **out)
{
    json_error_t e;
    json_t *j = json_loads(spec, 0, &e);
    if (!j)
        return zc__err(ZC_EINVAL, "codec spec: invalid JSON at line %d column %d: %s", e.line, e.column,
                       e.text);
    if (zarr_format == 3) {
        if (!json_is_array(j)) {
            json_decref(j);
            return zc__err(ZC_EINVAL, "codec spec '%s': Zarr v3 needs a JSON array of codec objects", spec);
        }
        *out = j;
        return 0;
    }
    if (json_is_object(j) && json_is_string(json_object_get(j, "id"))) {
        *out = json_pack("{s:o, s:n}", "compressor", j, "filters");
        return *out ? 0 : ZC_ENOMEM;
    }
    const char *key;
    json_t *v;
    if (json_is_object(j)) {
        json_object_foreach(j, key, v) {
            if (strcmp(key, "compressor") && strcmp(key, "filters")) {
                /* the message first: key lives in j */
                int rc = zc__err(ZC_EINVAL, "codec spec '%s': unknown key '%s' (a v2 spec is a compressor object "
                                 "{\"id\": ...} or {\"compressor\": ..., \"filters\": [...]})", spec, key);
                json_decref(j);
                return rc;
            }
        }
        json_t *c = json_object_get(j, "compressor"), *f = json_object_get(j, "filters");
        if ((!c || json_is_null(c) || json_is_string(json_object_get(c, "id"))) && (!f || json_is_null(f) || json_is_array(f))) {
            *out = j;
            return 0;
        }
    }
    json_decref(j);
    return zc__err(ZC_EINVAL, "codec spec '%s': a v2 spec is a compressor object {\"id\": ...} or "
                   "{\"compressor\": ..., \"filters\": [...]}", spec);
}

static int parse_text(const char *spec, char *text, int zarr_format, size_t typesize, json_t **out)
{
    /* split "compressor[,checksum]" then the compressor at ':' */
    char *checksum = strchr(text, ',');
    if (checksum) *checksum++ = 0;
    char *parts[MAX_PARTS + 1];
    int nparts = 0;
    for (char *p = text; p && nparts <= MAX_PARTS;) {
        parts[nparts++] = p;
        p = strchr(p, ':');
        if (p) *p++ = 0;
    }
    if (!parts[0][0]) return zc__err(ZC_EINVAL, "codec spec '%s': no codec name", spec);
    if (checksum) {
        if (strcmp(checksum, "crc32c"))
            return zc__err(ZC_EINVAL, "codec spec '%s': unknown checksum '%s' (only crc32c)", spec,
                           checksum);
        if (zarr_format != 3)
            return zc__err(ZC_EINVAL, "codec spec '%s': crc32c is for Zarr v3 only", spec);
    }
    json_t *comp;
    ZC_TRY(compressor_json(spec, parts, nparts, zarr_format, typesize, &comp));
    json_t *res;
    bool bad;
    if (zarr_format == 3) {
        res = json_array();
        bad = !res || (comp && json_array_append_new(res, comp)) ||
              (checksum && json_array_append_new(res, json_pack("{s:s}", "name", "crc32c")));
    } else {
        res = json_object();
        bad = !res || json_object_set_new(res, "compressor", comp ? comp : json_null()) ||
              json_object_set_new(res, "filters", json_null());
    }
    if (bad) { /* the *_new calls took comp whether or not they succeeded */
        if (!res) json_decref(comp);
        json_decref(res);
        return zc__err(ZC_ENOMEM, "codec spec '%s': out of memory", spec);
    }
    *out = res;
    return 0;
}

int codec_spec_parse(const char *spec, int zarr_format, size_t typesize, json_t **out)
{
    *out = NULL;
    if (!spec) return zc__err(ZC_EINVAL, "codec spec is NULL");
    if (zarr_format != 2 && zarr_format != 3)
        return zc__err(ZC_EINVAL, "codec spec '%s': zarr_format must be 2 or 3, not %d", spec, zarr_format);
    if (spec[0] == '[' || spec[0] == '{') return parse_json(spec, zarr_format, out);
    char *text = zc__strdup(spec);
    if (!text) return ZC_ENOMEM;
    int rc = parse_text(spec, text, zarr_format, typesize, out);
    zc__free(text);
    return rc;
}
