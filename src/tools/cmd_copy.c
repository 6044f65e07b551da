/* tools/cmd_copy.c — `zcube copy SRC DST`: convert an array between Zarr
 * formats, codecs, chunkings and shardings, on the compute engine.
 *
 * DST is created with SRC's dtype, shape, fill value, attributes and
 * dimension names; chunks, shards, codec and format default to SRC's. The
 * copy is a rechunk of SRC to DST's write units (shards if sharded, else
 * chunks) computed like `zcube rechunk` (eval_run.c): planned under the
 * per-task memory bound (multistage through --work-dir when needed), each
 * task writing whole units, so every destination chunk or shard is written
 * exactly once, on any executor (threads, processes, mpi, slurm). */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "eval_run.h"

static const char USAGE[] =
    "usage: zcube copy SRC DST [options]   (or SRC -o DST)\n"
    "\n"
    "Copy the array at SRC into a new array at DST, converting format, codec,\n"
    "chunks and sharding on the way. Values, dtype, shape, fill value, attributes\n"
    "and dimension names are kept. The copy runs on the compute engine, as\n"
    "'zcube rechunk' does: in tasks that each write whole chunks (or shards) of\n"
    "DST under a memory bound, on threads or on distributed workers.\n"
    "\n"
    "Options:\n"
    "  --zarr-format 2|3   format of DST (default: SRC's)\n"
    "  --codec SPEC        codec of DST (see 'zcube create --help'); default: SRC's\n"
    "                      compressor and level when DST's format has it (filters\n"
    "                      such as delta are not carried over), else zstd\n"
    "  --chunks N,...      chunk shape of DST, -1 a whole dimension (default: SRC's\n"
    "                      chunks, the inner chunks when SRC is sharded)\n"
    "  --shards N,...|none shard shape of DST (v3 only); default: SRC's shards when\n"
    "                      DST is v3 and --chunks is not given, else none\n"
    "  --separator /|.     chunk key separator of DST (default: SRC's when the\n"
    "                      format is the same, else the format's default)\n"
    "  --max-mem SIZE      memory one task may use, all included (default 256MB; the\n"
    "                      same as --allowed-mem); one write unit (shard or chunk)\n"
    "                      of DST must fit\n"
    "  --overwrite         replace DST (its chunks are removed) if it exists\n"
    "  -h, --help          this text\n"
    "\n"
    "The options of 'zcube rechunk' apply too (--codec and --zarr-format as above):\n" RUN_CLI_HELP;

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

/* DST's creation options from SRC's metadata and the options. Returns -1 to
 * go on, else the exit status. Strings it makes go to keep: [0] the library's
 * codec spec (zc_free), the others jansson's dumps (free). */
static int dst_options(run_opts *ro, const char *src, const char *chunks_s, const char *shards_s, const char *sep_s,
                       zc_zarr *sarr, const zc_zarr_info_t *si, zc_zarr_create_opts *o, char *keep[4])
{
    char *meta_text = NULL;
    int rc = zc_zarr_metadata_json(sarr, &meta_text);
    if (rc < 0) return cli_fail_zc(rc, "'%s': metadata", src);
    json_error_t jerr;
    json_t *meta = json_loads(meta_text, 0, &jerr);
    zc_free(meta_text);
    if (!json_is_object(meta)) {
        json_decref(meta);
        return cli_fail(CLI_EXIT_RUNTIME, "'%s': the library returned unreadable metadata JSON: %s", src, jerr.text);
    }
    int ec = -1, n, src_sharded = 0;
    o->zarr_format = ro->format ? ro->format : si->zarr_format;
    o->ndim = si->ndim;
    o->dtype = si->dtype;
    o->itemsize = si->itemsize;
    memcpy(o->shape, si->shape, sizeof o->shape);
    for (int d = 0; d < si->ndim; d++) src_sharded |= si->shards[d] != 0;
    if (chunks_s) {
        if (cli_parse_chunks(chunks_s, "--chunks", o->chunks, ZC_MAX_DIMS, &n) < 0)
            ec = cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
        else if (n != si->ndim)
            ec = cli_fail(CLI_EXIT_USAGE, "--chunks has %d entries but '%s' has %d dimensions", n, src, si->ndim);
        else
            cli_whole_chunks(o->chunks, n, si->shape);
    } else {
        memcpy(o->chunks, si->chunks, sizeof o->chunks);
    }
    if (ec < 0 && shards_s && strcmp(shards_s, "none")) {
        if (cli_parse_dims(shards_s, "--shards", o->shards, ZC_MAX_DIMS, &n) < 0)
            ec = cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
        else if (n != si->ndim)
            ec = cli_fail(CLI_EXIT_USAGE, "--shards has %d entries but '%s' has %d dimensions", n, src, si->ndim);
    } else if (ec < 0 && !shards_s && o->zarr_format == 3 && src_sharded && !chunks_s) {
        memcpy(o->shards, si->shards, sizeof o->shards);
    }
    if (ec < 0 && ro->codec) {
        o->codec = ro->codec;
    } else if (ec < 0 && (rc = zc_zarr_codec_spec(sarr, o->zarr_format, &keep[0])) < 0) {
        ec = cli_fail_zc(rc, "'%s': codec", src);
    } else {
        o->codec = keep[0]; /* NULL: a compressor zcube cannot write, the default instead */
    }
    const json_t *fv = json_object_get(meta, "fill_value");
    if (fv && !(json_is_null(fv) && o->zarr_format == 3)) o->fill_value = keep[1] = dump(fv);
    const json_t *at = json_object_get(meta, "attributes");
    if (json_is_object(at) && json_object_size(at)) o->attributes = keep[2] = dump(at);
    const json_t *dn = json_object_get(meta, "dimension_names");
    if (o->zarr_format == 3 && json_is_array(dn)) o->dimension_names = keep[3] = dump(dn);
    o->order = o->zarr_format == 2 ? si->order : 'C';
    if (sep_s) {
        o->separator = sep_s[0];
    } else if (o->zarr_format == si->zarr_format) {
        const char *s = json_string_value(json_object_get(meta, "separator"));
        if (s && (*s == '/' || *s == '.')) o->separator = *s;
    }
    json_decref(meta);
    return ec;
}

/* One write unit of DST must fit a task: said before any planning, in copy's words. */
static int check_unit(const run_opts *ro, const char *dst, const zc_zarr_create_opts *o, int64_t *unit)
{
    int sharded = 0;
    for (int d = 0; d < o->ndim; d++) sharded |= o->shards[d] != 0;
    uint64_t bytes = o->itemsize;
    for (int d = 0; d < o->ndim; d++) {
        unit[d] = sharded ? o->shards[d] : o->chunks[d];
        bytes = cli_mul_sat(bytes, (uint64_t)(unit[d] < o->shape[d] ? unit[d] : o->shape[d]));
    }
    if (bytes <= ro->spec.allowed_mem) return -1;
    char a[32], b[32];
    cli_format_bytes(a, sizeof a, bytes);
    cli_format_bytes(b, sizeof b, ro->spec.allowed_mem);
    return cli_fail(CLI_EXIT_RUNTIME, "one %s of '%s' would hold %s, more than --max-mem %s; raise --max-mem "
                    "or choose smaller --%s", sharded ? "shard" : "chunk", dst, a, b, sharded ? "shards" : "chunks");
}

/* DST must not hold an array or group already (unless --overwrite/--resume). */
static int check_absent(const run_opts *ro, const char *dst)
{
    zc_store *st;
    if (ro->overwrite || ro->resume || zc_store_open(dst, ZC_STORE_READONLY, &st) < 0) return -1;
    zc_node_kind kind = ZC_NODE_NONE;
    int fmt = 0, rc = zc_node_kind_at(st, "", &kind, &fmt);
    zc_store_close(st);
    if (rc == 0 && kind != ZC_NODE_NONE)
        return cli_fail(CLI_EXIT_RUNTIME, "'%s' already exists (a Zarr v%d %s); give --overwrite to replace it", dst,
                        fmt, kind == ZC_NODE_GROUP ? "group" : "array");
    return -1;
}

static int run(int argc, char **argv)
{
    run_opts ro;
    memset(&ro, 0, sizeof ro);
    const char *chunks_s = NULL, *shards_s = NULL, *sep_s = NULL, *max_mem = NULL;
    cli_opt opts[] = {{"chunks", 0, &chunks_s, NULL},   {"shards", 0, &shards_s, NULL},
                      {"separator", 0, &sep_s, NULL},   {"max-mem", 0, &max_mem, NULL},
                      {"out", 'o', &ro.out, NULL},      RUN_CLI_OPTS(ro),
                      {NULL, 0, NULL, NULL}};
    const char *pos[2];
    int npos;
    int ec = cz_args(&cmd_copy, argc, argv, opts, pos, 1, 2, &npos);
    if (ec >= 0) return ec;
    if (npos > 1 && ro.out) return cli_fail(CLI_EXIT_USAGE, "give DST or -o DST, not both");
    if (npos < 2 && !ro.out) return cli_fail(CLI_EXIT_USAGE, "missing DST (zcube copy SRC DST)");
    const char *src = pos[0], *dst = npos > 1 ? pos[1] : ro.out;
    if (max_mem && ro.allowed_mem) return cli_fail(CLI_EXIT_USAGE, "give --max-mem or --allowed-mem, not both");
    ro.allowed_mem = max_mem ? max_mem : ro.allowed_mem ? ro.allowed_mem : "256MB";
    ro.out = dst;
    if (sep_s && strcmp(sep_s, "/") && strcmp(sep_s, "."))
        return cli_fail(CLI_EXIT_USAGE, "bad --separator '%.20s': expected / or .", sep_s);
    if (!strcmp(src, dst) || same_path(src, dst))
        return cli_fail(CLI_EXIT_USAGE, "SRC and DST are the same array ('%s')", src);
    if ((ec = run_prepare(&ro, 1)) >= 0) return ec;

    zc_store *sst;
    zc_zarr *sarr;
    zc_zarr_info_t si;
    if ((ec = cz_open_array(src, 0, &sst, &sarr, &si))) return ec;
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    char *keep[4] = {NULL, NULL, NULL, NULL};
    int64_t unit[ZC_MAX_DIMS];
    zc_array *a = NULL, *r = NULL;
    ec = dst_options(&ro, src, chunks_s, shards_s, sep_s, sarr, &si, &o, keep);
    zc_zarr_close(sarr);
    if (ec < 0) ec = check_unit(&ro, dst, &o, unit);
    if (ec < 0) ec = check_absent(&ro, dst);
    if (ec < 0) ec = run_check_output(&ro, &src, 1);
    int rc;
    if (ec < 0 && (rc = zc_from_zarr(sst, "", &a)) < 0) ec = cli_fail_zc(rc, "'%s'", src);
    if (ec < 0) {
        /* the write unit cut at the shape: the copy's chunks */
        for (int d = 0; d < o.ndim; d++) unit[d] = unit[d] < o.shape[d] || !o.shape[d] ? unit[d] : o.shape[d];
        if ((rc = zc_rechunk(a, unit, &r)) < 0) ec = cli_fail_zc(rc, "rechunking '%s'", src);
    }
    if (ec < 0) {
        ro.create = &o;
        ec = run_compute(&ro, r);
    }
    zc_array_release(r);
    zc_array_release(a);
    zc_store_close(sst);
    zc_free(keep[0]); /* the library's */
    for (int k = 1; k < 4; k++) free(keep[k]);
    return ec;
}

const cli_command cmd_copy = {"copy", "convert an array between formats, codecs, chunks and shards", USAGE, run};
