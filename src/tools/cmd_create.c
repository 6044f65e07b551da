/* tools/cmd_create.c — `zcube create PATH --shape ... --dtype ...`: write the
 * metadata of a new, empty array (every chunk reads as the fill value).
 * The options map one to one onto zc_zarr_create_opts; the codec spec string
 * is passed through to the library. */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli_util.h"
#include "commands.h"

static const char USAGE[] =
    "usage: zcube create PATH --shape N,... --dtype TYPE [options]\n"
    "\n"
    "Create an empty Zarr array in the folder PATH (created if absent).\n"
    "\n"
    "Options:\n"
    "  --shape N,...          array shape, e.g. 100,200 (required; '' or () for 0-d)\n"
    "  --dtype TYPE           element type (required): bool, int8..int64, uint8..uint64,\n"
    "                         float16, float32, float64, complex64, complex128, or a\n"
    "                         NumPy string such as '<i2', '|S7', '<U5'\n"
    "  --chunks N,...         chunk shape (the inner chunk when sharded; -1: a whole\n"
    "                         dimension); default: the shape halved along its\n"
    "                         longest dimension until a chunk holds at most 1 MiB\n"
    "  --shards N,...         shard shape, a multiple of the chunks (Zarr v3 only)\n"
    "  --zarr-format 2|3      default 3\n"
    "  --codec SPEC           none | zstd[:LEVEL] | gzip[:LEVEL] | zlib[:LEVEL] |\n"
    "                         bz2[:LEVEL] | lz4[:ACCEL] |\n"
    "                         blosc[:CNAME[:CLEVEL[:SHUFFLE]]] (CNAME lz4, lz4hc,\n"
    "                         blosclz, zstd, zlib; SHUFFLE noshuffle, shuffle,\n"
    "                         bitshuffle), optionally followed by ',crc32c' (v3);\n"
    "                         or JSON: a v3 codec list / a v2 {compressor, filters}\n"
    "                         object. Default zstd.\n"
    "  --fill-value V         JSON value (0, 1.5, true, \"text\") or NaN, inf, -inf;\n"
    "                         default 0\n"
    "  --order C|F            memory order of chunks (F: Zarr v2 only); default C\n"
    "  --separator /|.        chunk key separator; default: '/' for v3, '.' for v2\n"
    "  --attrs JSON           attributes, a JSON object\n"
    "  --dimension-names L    names of the dimensions (v3): a JSON array or a\n"
    "                         comma-separated list\n"
    "  --write-empty-chunks   store chunks even when they equal the fill value\n"
    "  --overwrite            replace the array or group at PATH (its chunks and\n"
    "                         children are removed)\n"
    "  -h, --help             this text\n";

#define AUTO_CHUNK_BYTES (1u << 20)

/* Halve the longest dimension until a chunk holds at most AUTO_CHUNK_BYTES. */
static void auto_chunks(int ndim, const int64_t *shape, size_t itemsize, int64_t *chunks)
{
    for (int d = 0; d < ndim; d++) chunks[d] = shape[d] > 0 ? shape[d] : 1;
    for (;;) {
        uint64_t bytes = itemsize;
        int longest = -1;
        for (int d = 0; d < ndim; d++) {
            bytes = cli_mul_sat(bytes, (uint64_t)chunks[d]);
            if (chunks[d] > 1 && (longest < 0 || chunks[d] > chunks[longest])) longest = d;
        }
        if (bytes <= AUTO_CHUNK_BYTES || longest < 0) return;
        chunks[longest] = (chunks[longest] + 1) / 2;
    }
}

static int word_is(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (!strcasecmp(s, *words)) return 1;
    return 0;
}

/* --fill-value text → JSON text (malloc'd), or NULL with a message. */
static char *fill_json(const char *v, zc_dtype dtype)
{
    static const char *const NAN_W[] = {"nan", NULL};
    static const char *const INF_W[] = {"inf", "+inf", "infinity", "+infinity", NULL};
    static const char *const NINF_W[] = {"-inf", "-infinity", NULL};
    while (isspace((unsigned char)*v)) v++;
    if (word_is(v, NAN_W)) return strdup("\"NaN\"");
    if (word_is(v, INF_W)) return strdup("\"Infinity\"");
    if (word_is(v, NINF_W)) return strdup("\"-Infinity\"");
    json_error_t e;
    json_t *j = json_loads(v, JSON_DECODE_ANY, &e);
    if (!j && v[0] >= '0' && v[0] <= '9' && strspn(v, "0123456789") == strlen(v))
        return strdup(v); /* an unsigned integer beyond int64 (uint64 fill): the library reads it exactly */
    if (!j && (dtype == ZC_BYTES || dtype == ZC_UNICODE)) j = json_string(v); /* bare text for strings */
    if (!j) {
        cli_seterr("bad --fill-value '%.100s': expected a number, true/false, null, NaN, inf, -inf or JSON", v);
        return NULL;
    }
    char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(j);
    if (!s) cli_seterr("out of memory");
    return s;
}

/* --dimension-names: JSON array as is, else a comma-separated list. */
static char *dim_names_json(const char *v, int ndim)
{
    json_error_t e;
    json_t *j = NULL;
    const char *p = v;
    while (isspace((unsigned char)*p)) p++;
    if (*p == '[') {
        j = json_loads(p, 0, &e);
        if (!json_is_array(j)) {
            json_decref(j);
            cli_seterr("bad --dimension-names '%.100s': invalid JSON array (%s)", v, e.text);
            return NULL;
        }
    } else {
        j = json_array();
        const char *s = v;
        for (;;) {
            const char *c = strchr(s, ',');
            size_t len = c ? (size_t)(c - s) : strlen(s);
            json_array_append_new(j, json_stringn(s, len));
            if (!c) break;
            s = c + 1;
        }
    }
    if ((int)json_array_size(j) != ndim) {
        cli_seterr("bad --dimension-names '%.100s': %zu names for %d dimensions", v, json_array_size(j), ndim);
        json_decref(j);
        return NULL;
    }
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!s) cli_seterr("out of memory");
    return s;
}

static int run(int argc, char **argv)
{
    const char *shape_s = NULL, *dtype_s = NULL, *chunks_s = NULL, *shards_s = NULL, *format_s = NULL;
    const char *codec = NULL, *fill_s = NULL, *order_s = NULL, *sep_s = NULL, *attrs_s = NULL, *names_s = NULL;
    int overwrite = 0, write_empty = 0;
    cli_opt opts[] = {{"shape", 0, &shape_s, NULL},           {"dtype", 0, &dtype_s, NULL},
                      {"chunks", 0, &chunks_s, NULL},         {"shards", 0, &shards_s, NULL},
                      {"zarr-format", 0, &format_s, NULL},    {"codec", 0, &codec, NULL},
                      {"fill-value", 0, &fill_s, NULL},       {"order", 0, &order_s, NULL},
                      {"separator", 0, &sep_s, NULL},         {"attrs", 0, &attrs_s, NULL},
                      {"dimension-names", 0, &names_s, NULL}, {"overwrite", 0, NULL, &overwrite},
                      {"write-empty-chunks", 0, NULL, &write_empty}, {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    int ec = cz_args(&cmd_create, argc, argv, opts, pos, 1, 1, &npos);
    if (ec >= 0) return ec;
    const char *path = pos[0];
    if (!shape_s) return cli_fail(CLI_EXIT_USAGE, "missing --shape (e.g. --shape 100,200)");
    if (!dtype_s) return cli_fail(CLI_EXIT_USAGE, "missing --dtype (e.g. --dtype float32)");

    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    if (cli_parse_dims(shape_s, "--shape", o.shape, ZC_MAX_DIMS, &o.ndim) < 0)
        return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    int rc = zc_dtype_parse(dtype_s, &o.dtype, &o.itemsize);
    if (rc < 0) {
        const char *m = zc_errmsg();
        return cli_fail(CLI_EXIT_USAGE, "bad --dtype '%.100s': %s", dtype_s, *m ? m : zc_strerror(rc));
    }
    int n;
    if (chunks_s) {
        if (cli_parse_chunks(chunks_s, "--chunks", o.chunks, ZC_MAX_DIMS, &n) < 0)
            return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
        if (n != o.ndim)
            return cli_fail(CLI_EXIT_USAGE, "--chunks has %d entries but --shape has %d", n, o.ndim);
        cli_whole_chunks(o.chunks, n, o.shape);
    } else {
        auto_chunks(o.ndim, o.shape, o.itemsize, o.chunks);
    }
    if (shards_s && strcmp(shards_s, "none")) {
        if (cli_parse_dims(shards_s, "--shards", o.shards, ZC_MAX_DIMS, &n) < 0)
            return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
        if (n != o.ndim)
            return cli_fail(CLI_EXIT_USAGE, "--shards has %d entries but --shape has %d", n, o.ndim);
    }
    if (format_s) {
        if (strcmp(format_s, "2") && strcmp(format_s, "3"))
            return cli_fail(CLI_EXIT_USAGE, "bad --zarr-format '%.20s': expected 2 or 3", format_s);
        o.zarr_format = format_s[0] - '0';
    }
    if (order_s) {
        if (strcasecmp(order_s, "C") && strcasecmp(order_s, "F"))
            return cli_fail(CLI_EXIT_USAGE, "bad --order '%.20s': expected C or F", order_s);
        o.order = (char)toupper((unsigned char)order_s[0]);
    }
    if (sep_s) {
        if (strcmp(sep_s, "/") && strcmp(sep_s, "."))
            return cli_fail(CLI_EXIT_USAGE, "bad --separator '%.20s': expected / or .", sep_s);
        o.separator = sep_s[0];
    }
    o.codec = codec;
    o.overwrite = overwrite;
    o.write_empty_chunks = write_empty;

    char *fill = NULL, *names = NULL;
    if (fill_s && !(fill = fill_json(fill_s, o.dtype))) return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    o.fill_value = fill;
    if (attrs_s) {
        json_error_t e;
        json_t *j = json_loads(attrs_s, 0, &e);
        int ok = json_is_object(j);
        json_decref(j);
        if (!ok) {
            free(fill);
            return cli_fail(CLI_EXIT_USAGE, "bad --attrs: expected a JSON object (%s)", j ? "not an object" : e.text);
        }
        o.attributes = attrs_s;
    }
    if (names_s && !(names = dim_names_json(names_s, o.ndim))) {
        free(fill);
        return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    }
    o.dimension_names = names;

    cz_parents made;
    cz_parents_missing(path, &made);
    zc_store *st;
    zc_zarr *arr = NULL;
    if (!(ec = cz_open_store(path, ZC_STORE_CREATE, &st))) {
        rc = zc_zarr_create(st, "", &o, &arr);
        if (rc < 0) ec = cli_fail_zc(rc, "creating '%s'", path);
        cz_close(st, arr);
    }
    if (!ec) ec = cz_parents_make_groups(&made, o.zarr_format);
    free(fill);
    free(names);
    return ec;
}

const cli_command cmd_create = {"create", "create an empty array (metadata only)", USAGE, run};
