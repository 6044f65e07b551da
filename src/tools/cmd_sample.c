/* tools/cmd_sample.c — `zcube sample`: random (or grid) windows from one or
 * more arrays, batched for ML training, through the sampler (zc_sampler_*).
 *
 *   zcube sample PATH --window 4,128,128,10 --batch 32 --batches N --seed S -o DIR
 *   zcube sample --source a=PATH:WINDOW --source b=PATH:WINDOW ... -o DIR
 *
 * Batch `step` of source NAME goes to DIR/[NAME_]batch_<step>.npy (shape
 * (batch, window...), the array's dtype) and its window origins to
 * DIR/[NAME_]origins_<step>.npy (int64, (batch, ndim)); the NAME_ prefix is
 * used with --source. With --bench nothing is written: the batches are read
 * and one JSON line of figures is printed.
 *
 * Options given once per source (--source, --jitter, --dims, --overlap,
 * --offset) may repeat, which cli_parse does not support (the last value
 * wins there), so a first pass takes them out of argv and the rest goes to
 * cli_parse as usual. The main loop uses zc_sampler_next, so reading the next
 * batches (prefetch) overlaps writing this one. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli_util.h"
#include "commands.h"
#include "npy.h"

static const char USAGE[] =
    "usage: zcube sample PATH --window N,... --batch B --batches N --seed S (-o DIR | --bench)\n"
    "       zcube sample --source NAME=PATH:N,... [--source ...] --batch B --batches N --seed S\n"
    "                    (-o DIR | --bench)\n"
    "\n"
    "Draw windows (crops) of the array at PATH, or of several arrays (--source)\n"
    "whose windows are aligned on the dimensions they share, and write them in\n"
    "batches: batch k to DIR/batch_k.npy, shape (B, window...), the array's dtype,\n"
    "and the windows' origins to DIR/origins_k.npy (int64, shape (B, ndim)). With\n"
    "--source the files are DIR/NAME_batch_k.npy and DIR/NAME_origins_k.npy.\n"
    "Batch k for seed S is always the same data: an epoch visits every window of\n"
    "the sample space once, in an order shuffled by the seed.\n"
    "\n"
    "Options:\n"
    "  --window N,...        window shape, one entry per array dimension (with PATH)\n"
    "  --source NAME=PATH:N,...  a source named NAME (letters, digits, '_', '-', '.')\n"
    "                        and its window shape; repeat for several sources\n"
    "  --batch B             windows per batch (default 32)\n"
    "  --batches N           batches to read (required)\n"
    "  --seed S              seed of the shuffle and jitter, 0..2^64-1 (required)\n"
    "  --start STEP          first batch (global step across epochs; default 0):\n"
    "                        reproduces batches STEP.. of a longer run\n"
    "  --mode random|grid    random: every valid window origin; grid: origins on a\n"
    "                        grid of stride window - overlap (default random)\n"
    "  --overlap [NAME=]N,...  grid overlap per dimension (default 0); without\n"
    "                        NAME= it applies to every source\n"
    "  --offset NAME=N,...   index of the source = shared index + offset\n"
    "  --jitter NAME=N,...   random extra shift per window, in [-N, N]\n"
    "  --dims NAME=D,...     shared-space names of the source's dimensions, e.g.\n"
    "                        time,y,x,c (default: the array's dimension_names, else\n"
    "                        dim0, dim1, ... by position)\n"
    "                        (with PATH, or a single --source, NAME= may be left out)\n"
    "  --reject-nan          draw again windows that contain NaN\n"
    "  --reject-fill         draw again windows that contain the fill value\n"
    "  --threads T           reading threads (default: all cores)\n"
    "  --prefetch D          batches read ahead, 0..256 (default 2; 0 = none)\n"
    "  -o, --output DIR      folder for the .npy files (created if absent)\n"
    "  --bench               read only; print one JSON line: crops/s, decoded GB/s,\n"
    "                        bytes read, read amplification (bytes read / bytes\n"
    "                        used), chunks/s, seconds, rejected windows\n"
    "  -h, --help            this text\n";

#define MAX_SOURCES 64
#define MAX_BATCH (1 << 20)
#define MAX_PREFETCH 256

typedef struct {
    char name[64];      /* "" for the PATH form */
    const char *path;
    int wndim;
    int64_t window[ZC_MAX_DIMS];
    int njitter, noffset, noverlap, ndimnames; /* -1: not given */
    int64_t jitter[ZC_MAX_DIMS], offset[ZC_MAX_DIMS], overlap[ZC_MAX_DIMS];
    char *dimtext;                /* strdup of the --dims list, cut at commas */
    const char *dims[ZC_MAX_DIMS];
    zc_store *st;
    zc_zarr *arr;
    zc_zarr_info_t info;
} source_t;

typedef struct {
    int n;
    source_t s[MAX_SOURCES];
} sources_t;

/* ------------------------------------------------------------ parsing */

/* Comma-separated integers, zero and (if allow_neg) negative allowed. */
static int parse_list(const char *s, const char *what, int allow_neg, int64_t *out, int *n)
{
    *n = 0;
    const char *p = s;
    for (;;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        char item[32];
        if (len == 0 || len >= sizeof item) return cli_seterr("bad %s '%.100s': expected integers N,...", what, s);
        memcpy(item, p, len);
        item[len] = 0;
        int64_t v;
        if (cli_parse_i64(item, &v) < 0) return cli_seterr("bad %s '%.100s': '%s' is not an integer", what, s, item);
        if (v < 0 && !allow_neg) return cli_seterr("bad %s '%.100s': %lld is negative", what, s, (long long)v);
        if (*n >= ZC_MAX_DIMS) return cli_seterr("bad %s '%.100s': more than %d entries", what, s, ZC_MAX_DIMS);
        out[(*n)++] = v;
        if (!q) return 0;
        p = q + 1;
    }
}

/* A window: positive integers, or "" / "()" for a 0-d array. */
static int parse_window(const char *s, const char *what, int64_t *out, int *n)
{
    return cli_parse_dims(s, what, out, ZC_MAX_DIMS, n);
}

static int parse_u64(const char *s, uint64_t *out)
{
    const char *p = s;
    if (*p < '0' || *p > '9') return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno || *end) return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_int_in(const char *s, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
    int64_t v;
    if (cli_parse_i64(s, &v) < 0 || v < lo || v > hi)
        return cli_seterr("bad %s '%.100s': expected an integer from %lld to %lld", what, s, (long long)lo,
                          (long long)hi);
    *out = v;
    return 0;
}

static int valid_name(const char *s, size_t len)
{
    if (len == 0 || len >= sizeof((source_t *)0)->name || s[0] == '.') return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                 c == '.';
        if (!ok) return 0;
    }
    return 1;
}

/* --source NAME=PATH:WINDOW (PATH may hold ':'; the window is after the last). */
static int add_source(sources_t *ss, const char *v)
{
    const char *eq = strchr(v, '=');
    if (!eq) return cli_seterr("bad --source '%.100s': expected NAME=PATH:WINDOW", v);
    if (!valid_name(v, (size_t)(eq - v)))
        return cli_seterr("bad --source '%.100s': NAME must be 1-63 letters, digits, '_', '-', '.' (not starting "
                          "with '.')",
                          v);
    const char *colon = strrchr(eq + 1, ':');
    if (!colon || colon == eq + 1) return cli_seterr("bad --source '%.100s': expected NAME=PATH:WINDOW", v);
    if (ss->n >= MAX_SOURCES) return cli_seterr("more than %d --source options", MAX_SOURCES);
    source_t *s = &ss->s[ss->n];
    memcpy(s->name, v, (size_t)(eq - v));
    s->name[eq - v] = 0;
    for (int i = 0; i < ss->n; i++)
        if (!strcmp(ss->s[i].name, s->name)) return cli_seterr("--source '%s' given twice", s->name);
    size_t plen = (size_t)(colon - (eq + 1));
    char *path = malloc(plen + 1);
    if (!path) return cli_seterr("out of memory");
    memcpy(path, eq + 1, plen);
    path[plen] = 0;
    s->path = path;
    char what[96];
    snprintf(what, sizeof what, "window of --source '%s'", s->name);
    if (parse_window(colon + 1, what, s->window, &s->wndim) < 0) {
        free(path);
        s->path = NULL;
        return -1;
    }
    ss->n++;
    return 0;
}

/* Which source a per-source option "NAME=VALUE" / "VALUE" is about: *idx, or
 * -1 for every source (only when all_ok); *value points after "NAME=". */
static int pick_source(sources_t *ss, const char *opt, const char *v, int all_ok, int *idx, const char **value)
{
    const char *eq = strchr(v, '=');
    if (!eq) {
        *value = v;
        if (ss->n == 1) {
            *idx = 0;
            return 0;
        }
        if (all_ok) {
            *idx = -1;
            return 0;
        }
        return cli_seterr("--%s '%.100s': say which source, NAME=..., with several sources", opt, v);
    }
    *value = eq + 1;
    for (int i = 0; i < ss->n; i++) {
        if (ss->s[i].name[0] && strlen(ss->s[i].name) == (size_t)(eq - v) && !strncmp(ss->s[i].name, v, (size_t)(eq - v))) {
            *idx = i;
            return 0;
        }
    }
    if (ss->n == 1 && !ss->s[0].name[0])
        return cli_seterr("--%s '%.100s': no source names with PATH (write --%s %s)", opt, v, opt, eq + 1);
    return cli_seterr("--%s '%.100s': no --source named '%.*s'", opt, v, (int)(eq - v), v);
}

static int set_list(source_t *s, const char *opt, const char *value, int allow_neg, int64_t *dst, int *n)
{
    char what[96];
    if (s->name[0])
        snprintf(what, sizeof what, "--%s of '%s'", opt, s->name);
    else
        snprintf(what, sizeof what, "--%s", opt);
    if (*n >= 0) return cli_seterr("%s given twice", what);
    return parse_list(value, what, allow_neg, dst, n);
}

static int set_dims(source_t *s, const char *value)
{
    if (s->ndimnames >= 0) return cli_seterr("--dims of '%s' given twice", s->name[0] ? s->name : "PATH");
    s->dimtext = strdup(value);
    if (!s->dimtext) return cli_seterr("out of memory");
    s->ndimnames = 0;
    char *p = s->dimtext;
    for (;;) {
        char *q = strchr(p, ',');
        if (q) *q = 0;
        if (!*p) return cli_seterr("bad --dims '%.100s': empty name", value);
        if (s->ndimnames >= ZC_MAX_DIMS) return cli_seterr("bad --dims '%.100s': more than %d names", value, ZC_MAX_DIMS);
        s->dims[s->ndimnames++] = p;
        if (!q) return 0;
        p = q + 1;
    }
}

/* One per-source option value (after the sources are known). */
static int apply_opt(sources_t *ss, const char *opt, const char *v)
{
    int all_ok = !strcmp(opt, "overlap");
    int idx = 0;
    const char *value;
    if (pick_source(ss, opt, v, all_ok, &idx, &value) < 0) return -1;
    for (int i = 0; i < ss->n; i++) {
        if (idx >= 0 && i != idx) continue;
        source_t *s = &ss->s[i];
        int rc;
        if (!strcmp(opt, "jitter"))
            rc = set_list(s, opt, value, 0, s->jitter, &s->njitter);
        else if (!strcmp(opt, "offset"))
            rc = set_list(s, opt, value, 1, s->offset, &s->noffset);
        else if (!strcmp(opt, "overlap"))
            rc = set_list(s, opt, value, 0, s->overlap, &s->noverlap);
        else
            rc = set_dims(s, value);
        if (rc < 0) return -1;
    }
    return 0;
}

/* Options that may repeat, taken out of argv before cli_parse. */
static const char *const REPEATED[] = {"source", "jitter", "offset", "overlap", "dims", NULL};

typedef struct {
    const char *opt; /* entry of REPEATED */
    const char *value;
} rep_t;

/* Split argv into the repeatable options (in order) and the rest (argv2,
 * argv2[0] = argv[0]). `opts` tells which other options take a value, so
 * that their values are passed through untouched. */
static int take_repeated(int argc, char **argv, const cli_opt *opts, char **argv2, int *argc2, rep_t *reps, int *nreps)
{
    *argc2 = 0;
    *nreps = 0;
    argv2[(*argc2)++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            while (i < argc) argv2[(*argc2)++] = argv[i++];
            break;
        }
        if (a[0] == '-' && a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            const char *const *r;
            for (r = REPEATED; *r; r++)
                if (strlen(*r) == len && !strncmp(*r, name, len)) break;
            if (*r) {
                const char *v = eq ? eq + 1 : NULL;
                if (!v) {
                    if (i + 1 >= argc) return cli_seterr("option '--%s' needs a value", *r);
                    v = argv[++i];
                }
                reps[*nreps].opt = *r;
                reps[(*nreps)++].value = v;
                continue;
            }
            argv2[(*argc2)++] = argv[i];
            if (!eq) {
                for (const cli_opt *o = opts; o->name; o++)
                    if (o->value && strlen(o->name) == len && !strncmp(o->name, name, len) && i + 1 < argc) {
                        argv2[(*argc2)++] = argv[++i];
                        break;
                    }
            }
            continue;
        }
        argv2[(*argc2)++] = argv[i];
        if (a[0] == '-' && a[1] && !a[2]) { /* "-o DIR": keep the value with it */
            for (const cli_opt *o = opts; o->name; o++)
                if (o->short_name == a[1] && o->value && i + 1 < argc) {
                    argv2[(*argc2)++] = argv[++i];
                    break;
                }
        }
    }
    argv2[*argc2] = NULL;
    return 0;
}

/* ------------------------------------------------------------ output */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0) return 0;
    int err = errno;
    struct stat st;
    if (err == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    if (err == EEXIST) return cli_fail(CLI_EXIT_RUNTIME, "'%s' exists and is not a folder", dir);
    return cli_fail(CLI_EXIT_RUNTIME, "cannot create folder '%s': %s", dir, strerror(err));
}

static int write_batch(const char *dir, const sources_t *ss, int batch, const zc_batch *b)
{
    for (int k = 0; k < ss->n; k++) {
        const source_t *s = &ss->s[k];
        int nd = s->info.ndim;
        int64_t shape[ZC_MAX_DIMS + 1];
        shape[0] = batch;
        for (int d = 0; d < nd; d++) shape[d + 1] = s->window[d];
        size_t dlen = strlen(dir) + strlen(s->name) + 64;
        char *path = malloc(dlen);
        if (!path) return cli_fail(CLI_EXIT_RUNTIME, "out of memory");
        const char *sep = s->name[0] ? "_" : "";
        snprintf(path, dlen, "%s/%s%sbatch_%" PRId64 ".npy", dir, s->name, sep, b->step);
        int rc = npy_save_file(path, s->info.dtype, s->info.itemsize, nd + 1, shape, b->data[k], b->nbytes[k]);
        if (rc == 0) {
            int64_t oshape[2] = {batch, nd};
            snprintf(path, dlen, "%s/%s%sorigins_%" PRId64 ".npy", dir, s->name, sep, b->step);
            rc = npy_save_file(path, ZC_INT64, 8, 2, oshape, b->origins[k], (size_t)batch * (size_t)nd * 8);
        }
        free(path);
        if (rc < 0) return cli_fail(CLI_EXIT_RUNTIME, "%s", cli_lasterr());
    }
    return 0;
}

/* ------------------------------------------------------------ main */

static int check_source(source_t *s, int grid)
{
    const char *who = s->name[0] ? s->name : s->path;
    int nd = s->info.ndim;
    char shp[ZC_MAX_DIMS * 24 + 8];
    cli_format_shape(shp, sizeof shp, nd, s->info.shape);
    if (s->wndim != nd)
        return cli_fail(CLI_EXIT_USAGE, "window of '%s' has %d entries, the array has %d dimensions %s", who, s->wndim,
                        nd, shp);
    struct {
        const char *opt;
        int n;
    } lists[] = {{"jitter", s->njitter}, {"offset", s->noffset}, {"overlap", s->noverlap}, {"dims", s->ndimnames}};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        if (lists[i].n >= 0 && lists[i].n != nd)
            return cli_fail(CLI_EXIT_USAGE, "--%s of '%s' has %d entries, the array has %d dimensions %s",
                            lists[i].opt, who, lists[i].n, nd, shp);
    if (s->noverlap >= 0 && !grid) return cli_fail(CLI_EXIT_USAGE, "--overlap needs --mode grid");
    for (int d = 0; d < nd && s->noverlap >= 0; d++)
        if (s->overlap[d] >= s->window[d])
            return cli_fail(CLI_EXIT_USAGE, "--overlap of '%s': %lld in dimension %d is not below the window (%lld)",
                            who, (long long)s->overlap[d], d, (long long)s->window[d]);
    return 0;
}

static void free_sources(sources_t *ss)
{
    for (int i = 0; i < ss->n; i++) {
        cz_close(ss->s[i].st, ss->s[i].arr);
        free(ss->s[i].dimtext);
        if (ss->s[i].name[0]) free((char *)ss->s[i].path);
    }
}

static int run(int argc, char **argv)
{
    const char *window = NULL, *batch_s = "32", *batches_s = NULL, *seed_s = NULL, *start_s = "0", *mode_s = "random",
               *threads_s = NULL, *prefetch_s = NULL, *out = NULL;
    int bench = 0, reject_nan = 0, reject_fill = 0;
    cli_opt opts[] = {{"window", 0, &window, NULL},
                      {"batch", 0, &batch_s, NULL},
                      {"batches", 0, &batches_s, NULL},
                      {"seed", 0, &seed_s, NULL},
                      {"start", 0, &start_s, NULL},
                      {"mode", 0, &mode_s, NULL},
                      {"threads", 0, &threads_s, NULL},
                      {"prefetch", 0, &prefetch_s, NULL},
                      {"output", 'o', &out, NULL},
                      {"bench", 0, NULL, &bench},
                      {"reject-nan", 0, NULL, &reject_nan},
                      {"reject-fill", 0, NULL, &reject_fill},
                      {NULL, 0, NULL, NULL}};

    char **argv2 = malloc(((size_t)argc + 1) * sizeof *argv2);
    rep_t *reps = malloc(((size_t)argc + 1) * sizeof *reps);
    sources_t *ss = calloc(1, sizeof *ss);
    if (!argv2 || !reps || !ss) {
        free(argv2);
        free(reps);
        free(ss);
        return cli_fail(CLI_EXIT_RUNTIME, "out of memory");
    }
    int ec = -1, argc2, nreps;
    zc_sampler *smp = NULL;
    if (take_repeated(argc, argv, opts, argv2, &argc2, reps, &nreps) < 0) {
        /* --help wins over a malformed repeated option, as in cli_parse */
        for (int i = 1; i < argc && ec < 0; i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                fputs(cmd_sample.usage, stdout);
                ec = CLI_EXIT_OK;
            }
        if (ec < 0) ec = cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
        goto done;
    }
    const char *pos[1];
    int npos;
    ec = cz_args(&cmd_sample, argc2, argv2, opts, pos, 0, 1, &npos);
    if (ec >= 0) goto done;
    ec = CLI_EXIT_USAGE;

    /* sources */
    int nsrc_opts = 0;
    for (int i = 0; i < nreps; i++) nsrc_opts += !strcmp(reps[i].opt, "source");
    if (npos == 1 && nsrc_opts) {
        cli_fail(ec, "give either PATH with --window or --source options, not both");
        goto done;
    }
    if (npos == 0 && !nsrc_opts) {
        cli_fail(ec, "missing PATH --window N,... or --source NAME=PATH:N,...");
        goto done;
    }
    if (npos == 1) {
        if (!window) {
            cli_fail(ec, "missing --window N,... (the window shape)");
            goto done;
        }
        ss->s[0].path = pos[0];
        if (parse_window(window, "--window", ss->s[0].window, &ss->s[0].wndim) < 0) {
            cli_fail(ec, "%s", cli_lasterr());
            goto done;
        }
        ss->n = 1;
    } else {
        if (window) {
            cli_fail(ec, "--window goes with PATH; with --source write NAME=PATH:WINDOW");
            goto done;
        }
        for (int i = 0; i < nreps; i++)
            if (!strcmp(reps[i].opt, "source") && add_source(ss, reps[i].value) < 0) {
                cli_fail(ec, "%s", cli_lasterr());
                goto done;
            }
    }
    for (int i = 0; i < ss->n; i++) ss->s[i].njitter = ss->s[i].noffset = ss->s[i].noverlap = ss->s[i].ndimnames = -1;
    for (int i = 0; i < nreps; i++)
        if (strcmp(reps[i].opt, "source") && apply_opt(ss, reps[i].opt, reps[i].value) < 0) {
            cli_fail(ec, "%s", cli_lasterr());
            goto done;
        }

    /* scalar options */
    zc_sampler_opts so = ZC_SAMPLER_OPTS_INIT;
    int64_t v = 0, nbatches = 0, start = 0;
    if (!batches_s) {
        cli_fail(ec, "missing --batches N (how many batches to read)");
        goto done;
    }
    if (!seed_s) {
        cli_fail(ec, "missing --seed S (batches are a function of the seed)");
        goto done;
    }
    if (parse_int_in(batch_s, "--batch", 1, MAX_BATCH, &v) < 0 ||
        parse_int_in(batches_s, "--batches", 1, INT64_MAX / 2, &nbatches) < 0 ||
        parse_int_in(start_s, "--start", 0, INT64_MAX / 2, &start) < 0) {
        cli_fail(ec, "%s", cli_lasterr());
        goto done;
    }
    so.batch_size = (int)v;
    if (parse_u64(seed_s, &so.seed) < 0) {
        cli_fail(ec, "bad --seed '%.100s': expected an integer from 0 to 18446744073709551615", seed_s);
        goto done;
    }
    if (!strcmp(mode_s, "random")) {
        so.mode = ZC_SAMPLE_RANDOM;
    } else if (!strcmp(mode_s, "grid")) {
        so.mode = ZC_SAMPLE_GRID;
    } else {
        cli_fail(ec, "bad --mode '%.100s': expected random or grid", mode_s);
        goto done;
    }
    if (threads_s && cli_parse_threads(threads_s, &so.nthreads) < 0) {
        cli_fail(ec, "%s", cli_lasterr());
        goto done;
    }
    if (prefetch_s) {
        if (parse_int_in(prefetch_s, "--prefetch", 0, MAX_PREFETCH, &v) < 0) {
            cli_fail(ec, "%s", cli_lasterr());
            goto done;
        }
        so.prefetch = (int)v;
    }
    so.reject_nan = reject_nan;
    so.reject_fill = reject_fill;
    if (bench && out) {
        cli_fail(ec, "--bench only reads: drop -o DIR");
        goto done;
    }
    if (!bench && !out) {
        cli_fail(ec, "missing -o DIR (where the batches go) or --bench");
        goto done;
    }

    /* open the arrays and check the per-source lists against them */
    for (int i = 0; i < ss->n; i++) {
        source_t *s = &ss->s[i];
        if ((ec = cz_open_array(s->path, 0, &s->st, &s->arr, &s->info))) goto done;
        if ((ec = check_source(s, so.mode == ZC_SAMPLE_GRID))) goto done;
    }

    ec = CLI_EXIT_RUNTIME;
    int rc = zc_sampler_create(&so, &smp);
    if (rc < 0) {
        cli_fail_zc(rc, "creating the sampler");
        goto done;
    }
    for (int i = 0; i < ss->n; i++) {
        source_t *s = &ss->s[i];
        zc_sampler_source src = ZC_SAMPLER_SOURCE_INIT;
        src.name = s->name[0] ? s->name : s->path;
        src.array = s->arr;
        for (int d = 0; d < s->info.ndim; d++) {
            src.window[d] = s->window[d];
            if (s->njitter >= 0) src.jitter[d] = s->jitter[d];
            if (s->noffset >= 0) src.offset[d] = s->offset[d];
            if (s->noverlap >= 0) src.overlap[d] = s->overlap[d];
            if (s->ndimnames >= 0) src.dims[d] = s->dims[d];
        }
        if ((rc = zc_sampler_add_source(smp, &src)) < 0) {
            cli_fail_zc(rc, "source '%s'", src.name);
            goto done;
        }
    }
    int64_t epoch_windows, epoch_batches;
    if ((rc = zc_sampler_epoch_size(smp, &epoch_windows, &epoch_batches)) < 0) {
        cli_fail_zc(rc, "epoch size");
        goto done;
    }
    if (epoch_batches < 1) {
        cli_fail(ec, "an epoch has %lld windows, fewer than one batch of %d: lower --batch", (long long)epoch_windows,
                 so.batch_size);
        goto done;
    }
    if (start > 0 && (rc = zc_sampler_seek(smp, start)) < 0) {
        cli_fail_zc(rc, "--start %lld", (long long)start);
        goto done;
    }
    if (out && (ec = make_dir(out))) goto done;
    ec = CLI_EXIT_RUNTIME;
    zc_sampler_stats_t st0, st1;
    if ((rc = zc_sampler_stats(smp, &st0)) < 0) {
        cli_fail_zc(rc, "sampler statistics");
        goto done;
    }

    double t0 = now_s();
    int64_t rejected = 0;
    uint64_t delivered = 0;
    for (int64_t i = 0; i < nbatches; i++) {
        const zc_batch *b;
        if ((rc = zc_sampler_next(smp, &b)) < 0) {
            cli_fail_zc(rc, "batch %lld", (long long)(start + i));
            goto done;
        }
        if (b->step != start + i || b->nsources != ss->n) {
            cli_fail(ec, "internal error: got batch %lld of %d sources, expected batch %lld of %d", (long long)b->step,
                     b->nsources, (long long)(start + i), ss->n);
            goto done;
        }
        rejected += b->rejected;
        for (int k = 0; k < ss->n; k++) delivered += b->nbytes[k];
        if (!bench && (ec = write_batch(out, ss, so.batch_size, b))) goto done;
        ec = CLI_EXIT_RUNTIME;
    }
    double secs = now_s() - t0;
    if ((rc = zc_sampler_stats(smp, &st1)) < 0) {
        cli_fail_zc(rc, "sampler statistics");
        goto done;
    }

    int64_t windows = nbatches * so.batch_size;
    if (bench) {
        /* The stats also count batches the prefetcher read ahead; bytes
         * used there, read amplification is bytes_read / bytes_used of the
         * same totals, and the per-second figures scale by the delivered share. */
        double used = (double)(st1.bytes_used - st0.bytes_used);
        double bread = (double)(st1.bytes_read - st0.bytes_read);
        double chunks = (double)(st1.chunks_read - st0.chunks_read);
        double share = used > (double)delivered && used > 0 ? (double)delivered / used : 1.0;
        double amp = used > 0 ? bread / used : 0.0;
        double s = secs > 0 ? secs : 1e-9;
        printf("{\"command\":\"sample\",\"sources\":%d,\"mode\":\"%s\",\"batch\":%d,\"batches\":%lld,\"start\":%lld,"
               "\"seed\":%llu,\"threads\":%d,\"prefetch\":%d,\"windows\":%lld,\"seconds\":%.6f,"
               "\"crops_per_s\":%.1f,\"decoded_gb_per_s\":%.4f,\"bytes_used\":%llu,\"bytes_read\":%.0f,"
               "\"read_amplification\":%.4f,\"chunks_read\":%.0f,\"chunks_per_s\":%.1f,\"rejected\":%lld,"
               "\"epoch_windows\":%lld,\"epoch_batches\":%lld}\n",
               ss->n, mode_s, so.batch_size, (long long)nbatches, (long long)start, (unsigned long long)so.seed,
               so.nthreads, so.prefetch, (long long)windows, secs, (double)windows / s, (double)delivered / s / 1e9,
               (unsigned long long)delivered, bread * share, amp, chunks * share, chunks * share / s,
               (long long)rejected, (long long)epoch_windows, (long long)epoch_batches);
    } else {
        printf("wrote batches %lld..%lld (%lld windows%s) to %s; rejected %lld windows\n", (long long)start,
               (long long)(start + nbatches - 1), (long long)windows, ss->n > 1 ? " per source" : "", out,
               (long long)rejected);
    }
    ec = CLI_EXIT_OK;
done:
    zc_sampler_free(smp);
    free_sources(ss);
    free(ss);
    free(reps);
    free(argv2);
    return ec;
}

const cli_command cmd_sample = {"sample", "random windows of arrays in batches, for ML training", USAGE, run};
