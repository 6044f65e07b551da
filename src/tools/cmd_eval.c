/* tools/cmd_eval.c — `zcube eval EXPR --in NAME=PATH ... -o OUT`: build a
 * lazy array from a Python-syntax expression over Zarr arrays (expr_parse.c,
 * expr_*.c) and compute it into OUT under a memory bound (eval_run.c).
 *
 * --in may be given many times, which cli_parse (last value wins) cannot
 * express, so the --in options are taken out of argv first. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "eval_run.h"
#include "expr.h"

static const char USAGE[] =
    "usage: zcube eval EXPR [--in NAME=PATH]... -o OUT [options]\n"
    "\n"
    "Compute an expression over Zarr arrays into a new Zarr array OUT, in tasks\n"
    "over chunks, never using more than --allowed-mem per task. EXPR is Python\n"
    "syntax with the array API's names, e.g.\n"
    "  zcube eval 'mean(u**2, axis=0)' --in u=u.zarr -o m.zarr --allowed-mem 500MB\n"
    "  zcube eval 'sum(u*v, axis=(1,2))' --in u=u.zarr --in v=v.zarr -o s.zarr\n"
    "  zcube eval 'u[::2, 10:20] - mean(u, axis=0)' --in u=u.zarr -o d.zarr\n"
    "  zcube eval 'sum(ones((1000000, 8), chunks=(1000, 8)))' -o n.zarr\n"
    "\n"
    "Operators: + - * / // % ** (pow), unary - + ~, & | ^ << >>, < <= > >= == !=,\n"
    "and/or/not (logical_and/or/not); u[...] takes slices (positive steps),\n"
    "integers, None and .... Functions: the array API's elementwise functions\n"
    "(abs, sin, exp, maximum, where, clip, ...); sum prod mean min max var std\n"
    "argmin argmax any all count_nonzero (axis=, keepdims=, correction=);\n"
    "zeros ones empty full *_like arange linspace eye uniform normal (dtype=,\n"
    "chunks=, seed=); astype(x, float32); rechunk(x, chunks); reshape\n"
    "permute_dims concat stack flip roll tile take diff cumulative_sum ...;\n"
    "matmul (@) tensordot vecdot outer; qr svd svdvals svd_compressed solve inv\n"
    "cholesky det slogdet eigh eigvalsh lstsq (svd(a)[1] picks a result);\n"
    "diagonal trace vector_norm matrix_norm cross matrix_power matrix_rank pinv;\n"
    "fft ifft rfft irfft fftn ...\n"
    "fftfreq fftshift (n=, axis=, norm='ortho'). See docs/cli.md.\n"
    "\n"
    "Options:\n"
    "  --in NAME=PATH      bind NAME to the Zarr array at PATH (repeatable)\n"
    "  -o, --out OUT       the array to write (a folder; refused if it exists)\n"
    "  --chunks N,...      chunks of OUT, -1 a whole dimension (default: the result's\n"
    "                      own chunks)\n" RUN_CLI_HELP
    "  -h, --help          this text\n"
    "\n"
    "Put '--' before an EXPR that starts with '-'. Exit status: 0 success; 1 the\n"
    "library failed (shapes that do not broadcast, memory bound, I/O); 2 bad\n"
    "command line or expression (syntax, unknown names, wrong arguments).\n";

#define MAX_INPUTS 64

typedef struct {
    char name[64];
    const char *path;
    zc_store *store;
    zc_array *array;
} input_t;

static const char *const KEYWORDS[] = {"and", "or", "not", "None", "True", "False", "in", "is", "if", "else",
                                       "lambda", "for", "while", "def", "class", "return", "import", "from",
                                       "yield", "await", "async", "with", "del", "pass", "global", "nonlocal",
                                       "assert", "raise", "try", "except", "finally", "break", "continue", "as",
                                       "elif"};

static int check_name(const char *name, const input_t *in, int n)
{
    if (!*name) return cli_seterr("--in: empty NAME (expected NAME=PATH)");
    if (!isalpha((unsigned char)name[0]) && name[0] != '_')
        return cli_seterr("--in: '%s' is not a name (letters, digits and _, not starting with a digit)", name);
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return cli_seterr("--in: '%s' is not a name (letters, digits and _, not starting with a digit)", name);
    for (size_t i = 0; i < sizeof KEYWORDS / sizeof KEYWORDS[0]; i++)
        if (!strcmp(KEYWORDS[i], name)) return cli_seterr("--in: '%s' is a Python keyword; choose another name", name);
    if (ex_is_function(name)) return cli_seterr("--in: '%s' is the name of a function; choose another name", name);
    if (!strcmp(name, "random") || !strcmp(name, "np"))
        return cli_seterr("--in: '%s' is reserved; choose another name", name);
    for (int i = 0; i < n; i++)
        if (!strcmp(in[i].name, name)) return cli_seterr("--in: name '%s' given twice", name);
    return 0;
}

/* Take every "--in X", "--in=X" out of argv (before "--"), into `ins`. */
static int extract_inputs(int *argc, char **argv, input_t *ins, int *nin)
{
    int w = 1;
    *nin = 0;
    int only_pos = 0;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (!only_pos && !strcmp(a, "--")) only_pos = 1;
        if (!only_pos && !strcmp(a, "--in")) {
            if (i + 1 >= *argc) return cli_seterr("option '--in' needs a value");
            val = argv[++i];
        } else if (!only_pos && !strncmp(a, "--in=", 5)) {
            val = a + 5;
        } else {
            argv[w++] = argv[i];
            continue;
        }
        if (*nin >= MAX_INPUTS) return cli_seterr("too many --in (at most %d)", MAX_INPUTS);
        const char *eq = strchr(val, '=');
        if (!eq) return cli_seterr("bad --in '%.100s': expected NAME=PATH", val);
        size_t len = (size_t)(eq - val);
        input_t *in = &ins[*nin];
        memset(in, 0, sizeof *in);
        if (len >= sizeof in->name) return cli_seterr("--in: name '%.*s...' is too long", 20, val);
        memcpy(in->name, val, len);
        in->name[len] = 0;
        in->path = eq + 1;
        if (!*in->path) return cli_seterr("bad --in '%.100s': empty PATH", val);
        if (check_name(in->name, ins, *nin) < 0) return -1;
        (*nin)++;
    }
    *argc = w;
    argv[w] = NULL;
    return 0;
}

static int run(int argc, char **argv)
{
    input_t ins[MAX_INPUTS];
    int nin = 0;
    /* copy argv: extract_inputs compacts it */
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args) return cli_fail(CLI_EXIT_RUNTIME, "out of memory");
    memcpy(args, argv, (size_t)argc * sizeof *args);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            if (i > 1 && !strcmp(argv[i - 1], "--in")) continue;
            free(args);
            fputs(USAGE, stdout);
            return CLI_EXIT_OK;
        }
    if (extract_inputs(&argc, args, ins, &nin) < 0) {
        free(args);
        return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    }

    run_opts o;
    memset(&o, 0, sizeof o);
    const char *chunks_s = NULL;
    cli_opt opts[] = {{"out", 'o', &o.out, NULL}, {"chunks", 0, &chunks_s, NULL}, RUN_CLI_OPTS(o),
                      {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    int ec = cz_args(&cmd_eval, argc, args, opts, pos, 1, 1, &npos);
    free(args);
    if (ec >= 0) return ec;
    if ((ec = run_prepare(&o, 1)) >= 0) return ec;

    ex_tree *tree = NULL;
    if (ex_parse(pos[0], &tree) < 0) return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());

    const char *paths[MAX_INPUTS];
    for (int i = 0; i < nin; i++) paths[i] = ins[i].path;
    if ((ec = run_check_output(&o, paths, nin)) >= 0) {
        ex_free(tree);
        return ec;
    }

    ec = -1;
    ex_binding vars[MAX_INPUTS];
    for (int i = 0; i < nin && ec < 0; i++) {
        zc_zarr *z;
        zc_zarr_info_t info;
        int e = cz_open_array(ins[i].path, 0, &ins[i].store, &z, &info);
        if (e) {
            ec = e;
            break;
        }
        zc_zarr_close(z);
        int rc = zc_from_zarr(ins[i].store, "", &ins[i].array);
        if (rc < 0) {
            ec = cli_fail_zc(rc, "--in %s='%s'", ins[i].name, ins[i].path);
            break;
        }
        vars[i].name = ins[i].name;
        vars[i].array = ins[i].array;
    }

    zc_array *result = NULL;
    if (ec < 0) {
        int status;
        ex_set_spec(&o.spec); /* x[mask], nonzero and index arrays are counted under the bound */
        if (ex_eval(tree, vars, nin, &result, &status) < 0)
            ec = cli_fail(status ? CLI_EXIT_RUNTIME : CLI_EXIT_USAGE, "%s", cli_lasterr());
    }
    if (ec < 0 && chunks_s) {
        int ndim, n;
        int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
        int rc = zc_array_info(result, &ndim, shape, NULL, NULL);
        if (rc < 0) {
            ec = cli_fail_zc(rc, "result");
        } else if (cli_parse_chunks(chunks_s, "--chunks", chunks, ZC_MAX_DIMS, &n) < 0) {
            ec = cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
        } else if (n != ndim) {
            char sh[256];
            cli_format_shape(sh, sizeof sh, ndim, shape);
            ec = cli_fail(CLI_EXIT_USAGE, "--chunks has %d entr%s but the result has %d dimension%s (shape %s)", n,
                          n == 1 ? "y" : "ies", ndim, ndim == 1 ? "" : "s", sh);
        } else {
            zc_array *r;
            cli_whole_chunks(chunks, n, shape);
            if ((rc = zc_rechunk(result, chunks, &r)) < 0) {
                ec = cli_fail_zc(rc, "--chunks");
            } else {
                zc_array_release(result);
                result = r;
            }
        }
    }
    if (ec < 0) ec = run_compute(&o, result);

    zc_array_release(result);
    for (int i = 0; i < nin; i++) zc_array_release(ins[i].array);
    /* arrays are released before the stores they read from */
    for (int i = 0; i < nin; i++) zc_store_close(ins[i].store);
    ex_free(tree);
    return ec;
}

const cli_command cmd_eval = {"eval", "compute an array expression over Zarr arrays under a memory bound", USAGE,
                              run};
