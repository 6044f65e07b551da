/* tools/cmd_copy.c — `zcube copy SRC DST`: convert an array between Zarr
 * formats, codecs, chunkings and shardings.
 *
 * DST is created with SRC's dtype, shape, fill value, attributes and
 * dimension names; chunks, shards, codec and format default to SRC's. Data
 * streams through one buffer of at most --max-mem: the destination's write
 * units (shards if sharded, else chunks) are grouped into boxes that fit, and
 * each box is read from SRC and written to DST, so every destination chunk or
 * shard is written exactly once. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boxes.h"
#include "cli_util.h"
#include "commands.h"

static const char USAGE[] =
    "usage: zcube copy SRC DST [options]\n"
    "\n"
    "Copy the array at SRC into a new array at DST, converting format, codec,\n"
    "chunks and sharding on the way. Values, dtype, shape, fill value, attributes\n"
    "and dimension names are kept.\n"
    "\n"
    "Options:\n"
    "  --zarr-format 2|3   format of DST (default: SRC's)\n"
    "  --codec SPEC        codec of DST (see 'zcube create --help'); default: SRC's\n"
    "                      compressor and level when DST's format has it (filters\n"
    "                      such as delta are not carried over), else zstd\n"
    "  --chunks N,...      chunk shape of DST (default: SRC's chunks, the inner\n"
    "                      chunks when SRC is sharded)\n"
    "  --shards N,...|none shard shape of DST (v3 only); default: SRC's shards when\n"
    "                      DST is v3 and --chunks is not given, else none\n"
    "  --separator /|.     chunk key separator of DST (default: SRC's when the\n"
    "                      format is the same, else the format's default)\n"
    "  --max-mem SIZE      bound of the data buffer (default 256MB); one write unit\n"
    "                      (shard or chunk) of DST must fit\n"
    "  --threads N         threads for decoding and encoding (default: all cores)\n"
    "  --overwrite         replace DST (its chunks are removed) if it exists\n"
    "  -h, --help          this text\n";

/* ------------------------------------------------------------ copy */

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
}

static int same_path(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a, ra) || !realpath(b, rb)) return 0;
    return !strcmp(ra, rb);
}

static int run(int argc, char **argv)
{
    const char *format_s = NULL, *codec = NULL, *chunks_s = NULL, *shards_s = NULL, *sep_s = NULL;
    const char *max_mem = "256MB", *threads = NULL;
    int overwrite = 0;
    cli_opt opts[] = {{"zarr-format", 0, &format_s, NULL}, {"codec", 0, &codec, NULL},
                      {"chunks", 0, &chunks_s, NULL},      {"shards", 0, &shards_s, NULL},
                      {"separator", 0, &sep_s, NULL},      {"max-mem", 0, &max_mem, NULL},
                      {"threads", 0, &threads, NULL},      {"overwrite", 0, NULL, &overwrite},
                      {NULL, 0, NULL, NULL}};
    const char *pos[2];
    int npos;
    int ec = cz_args(&cmd_copy, argc, argv, opts, pos, 2, 2, &npos);
    if (ec >= 0) return ec;
    const char *src = pos[0], *dst = pos[1];
    uint64_t budget;
    if (cli_parse_size(max_mem, "--max-mem", &budget) < 0) return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    if (threads) {
        int t;
        if (cli_parse_threads(threads, &t) < 0) return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    }
    if (format_s && strcmp(format_s, "2") && strcmp(format_s, "3"))
        return cli_fail(CLI_EXIT_USAGE, "bad --zarr-format '%.20s': expected 2 or 3", format_s);
    if (sep_s && strcmp(sep_s, "/") && strcmp(sep_s, "."))
        return cli_fail(CLI_EXIT_USAGE, "bad --separator '%.20s': expected / or .", sep_s);
    if (!strcmp(src, dst) || same_path(src, dst))
        return cli_fail(CLI_EXIT_USAGE, "SRC and DST are the same array ('%s')", src);

    zc_store *sst, *dst_st = NULL;
    zc_zarr *sarr, *darr = NULL;
    zc_zarr_info_t si;
    if ((ec = cz_open_array(src, 0, &sst, &sarr, &si))) return ec;
    char *meta_text = NULL, *fill = NULL, *attrs = NULL, *names = NULL, *spec = NULL;
    json_t *meta = NULL;
    unsigned char *buf = NULL;
    if ((ec = cz_set_threads(sarr, threads))) goto done;
    int rc = zc_zarr_metadata_json(sarr, &meta_text);
    if (rc < 0) {
        ec = cli_fail_zc(rc, "'%s': metadata", src);
        goto done;
    }
    json_error_t jerr;
    meta = json_loads(meta_text, 0, &jerr);
    if (!json_is_object(meta)) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "'%s': the library returned unreadable metadata JSON: %s", src, jerr.text);
        goto done;
    }

    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.zarr_format = format_s ? format_s[0] - '0' : si.zarr_format;
    o.ndim = si.ndim;
    o.dtype = si.dtype;
    o.itemsize = si.itemsize;
    memcpy(o.shape, si.shape, sizeof o.shape);
    int src_sharded = 0, n;
    for (int d = 0; d < si.ndim; d++) src_sharded |= si.shards[d] != 0;
    if (chunks_s) {
        if (cli_parse_dims(chunks_s, "--chunks", o.chunks, ZC_MAX_DIMS, &n) < 0) {
            ec = cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
            goto done;
        }
        if (n != si.ndim) {
            ec = cli_fail(CLI_EXIT_USAGE, "--chunks has %d entries but '%s' has %d dimensions", n, src, si.ndim);
            goto done;
        }
    } else {
        memcpy(o.chunks, si.chunks, sizeof o.chunks);
    }
    if (shards_s) {
        if (strcmp(shards_s, "none")) {
            if (cli_parse_dims(shards_s, "--shards", o.shards, ZC_MAX_DIMS, &n) < 0) {
                ec = cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
                goto done;
            }
            if (n != si.ndim) {
                ec = cli_fail(CLI_EXIT_USAGE, "--shards has %d entries but '%s' has %d dimensions", n, src, si.ndim);
                goto done;
            }
        }
    } else if (o.zarr_format == 3 && src_sharded && !chunks_s) {
        memcpy(o.shards, si.shards, sizeof o.shards);
    }
    if (codec) {
        o.codec = codec;
    } else {
        if ((rc = zc_zarr_codec_spec(sarr, o.zarr_format, &spec)) < 0) {
            ec = cli_fail_zc(rc, "'%s': codec", src);
            goto done;
        }
        o.codec = spec; /* NULL: a compressor zcube cannot write, the default instead */
    }
    const json_t *fv = json_object_get(meta, "fill_value");
    if (fv && !(json_is_null(fv) && o.zarr_format == 3)) {
        fill = dump(fv);
        o.fill_value = fill;
    }
    const json_t *at = json_object_get(meta, "attributes");
    if (json_is_object(at) && json_object_size(at)) {
        attrs = dump(at);
        o.attributes = attrs;
    }
    const json_t *dn = json_object_get(meta, "dimension_names");
    if (o.zarr_format == 3 && json_is_array(dn)) {
        names = dump(dn);
        o.dimension_names = names;
    }
    o.order = o.zarr_format == 2 ? si.order : 'C';
    if (sep_s) {
        o.separator = sep_s[0];
    } else if (o.zarr_format == si.zarr_format) {
        const char *s = json_string_value(json_object_get(meta, "separator"));
        if (s && (*s == '/' || *s == '.')) o.separator = *s;
    }
    o.overwrite = overwrite;

    /* One write unit of DST must fit the buffer: check before creating DST. */
    int dst_sharded = 0;
    for (int d = 0; d < o.ndim; d++) dst_sharded |= o.shards[d] != 0;
    int64_t unit[ZC_MAX_DIMS];
    uint64_t unit_bytes = o.itemsize;
    for (int d = 0; d < o.ndim; d++) {
        unit[d] = dst_sharded ? o.shards[d] : o.chunks[d];
        unit_bytes = cli_mul_sat(unit_bytes, (uint64_t)(unit[d] < o.shape[d] ? unit[d] : o.shape[d]));
    }
    if (unit_bytes > budget) {
        char a[32], b[32];
        cli_format_bytes(a, sizeof a, unit_bytes);
        cli_format_bytes(b, sizeof b, budget);
        ec = cli_fail(CLI_EXIT_RUNTIME, "one %s of '%s' would hold %s, more than --max-mem %s; raise --max-mem "
                      "or choose smaller --%s", dst_sharded ? "shard" : "chunk", dst, a, b,
                      dst_sharded ? "shards" : "chunks");
        goto done;
    }

    if ((ec = cz_open_store(dst, ZC_STORE_CREATE, &dst_st))) goto done;
    if ((rc = zc_zarr_create(dst_st, "", &o, &darr)) < 0) {
        ec = cli_fail_zc(rc, "creating '%s'", dst);
        goto done;
    }
    if ((ec = cz_set_threads(darr, threads))) goto done;

    zc_range all[ZC_MAX_DIMS];
    for (int d = 0; d < si.ndim; d++) all[d] = (zc_range){0, si.shape[d], 1};
    boxes_t bx;
    boxes_init(&bx, si.ndim, all, si.shape, unit, si.itemsize, budget);
    buf = malloc(bx.max_bytes ? (size_t)bx.max_bytes : 1);
    if (!buf) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "out of memory allocating %llu bytes (lower --max-mem)",
                      (unsigned long long)bx.max_bytes);
        goto done;
    }
    while (boxes_next(&bx)) {
        zc_range r[ZC_MAX_DIMS];
        boxes_ranges(&bx, all, r);
        size_t nbytes = (size_t)(boxes_nelems(&bx) * si.itemsize);
        if ((rc = zc_zarr_read(sarr, r, buf, nbytes)) < 0) {
            ec = cli_fail_zc(rc, "reading '%s'", src);
            goto done;
        }
        if ((rc = zc_zarr_write(darr, r, buf, nbytes)) < 0) {
            ec = cli_fail_zc(rc, "writing '%s'", dst);
            goto done;
        }
    }
done:
    free(buf);
    zc_free(spec);
    free(fill);
    free(attrs);
    free(names);
    json_decref(meta);
    zc_free(meta_text);
    cz_close(dst_st, darr);
    cz_close(sst, sarr);
    return ec;
}

const cli_command cmd_copy = {"copy", "convert an array between formats, codecs, chunks and shards", USAGE, run};
