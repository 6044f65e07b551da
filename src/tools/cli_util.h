/* tools/cli_util.h — shared helpers of the zcube command: error reporting,
 * option parsing, number/list/size parsing, small output helpers.
 *
 * Errors: helpers that can fail set a one-line message with cli_seterr() and
 * return -1; the command then reports it with cli_fail(). Every failure the
 * user sees is ONE line on stderr: "zcube: <cmd>: <message>". */
#ifndef ZC_TOOLS_CLI_UTIL_H
#define ZC_TOOLS_CLI_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_RUNTIME 1 /* the command ran and failed (bad data, I/O, library error) */
#define CLI_EXIT_USAGE 2   /* the command line itself is wrong */

#define CLI_HELP 1 /* cli_parse: --help was given */

/* ---- errors */

/* Name of the running command ("get"), used as the prefix of error lines. */
void cli_set_command(const char *name);
const char *cli_command_name(void);
/* Set the pending message (printf format); returns -1. */
int cli_seterr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The pending message ("" if none). */
const char *cli_lasterr(void);
/* Print "zcube: <cmd>: <message>" (one line) to stderr; returns `exit_code`. */
int cli_fail(int exit_code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report a failed library call: "zcube: <cmd>: <context>: <zc_errmsg()>"
 * (zc_strerror(rc) if the library set no detail). Must be called before any
 * other zc_ call. `context` may be NULL. Returns CLI_EXIT_RUNTIME. */
int cli_fail_zc(int rc, const char *context_fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- option parsing */

typedef struct {
    const char *name;    /* long name without "--" ("region") */
    char short_name;     /* one-letter alias ('o'), or 0 */
    const char **value;  /* option takes a value: stored here (last one wins) */
    int *flag;           /* option is a flag: set to 1 here */
} cli_opt;

/*
 * Parse argv[1..argc-1] (argv[0] is the command name). Accepts "--name VALUE",
 * "--name=VALUE", "-o VALUE", "-oVALUE", flags, "--" (end of options) and "-"
 * (a positional meaning stdin/stdout). Positionals go to pos[0..*npos-1].
 * `opts` ends with an entry whose name is NULL.
 * @return 0, CLI_HELP (-h/--help seen), or -1 with a message (unknown option,
 *         missing value, too many positionals).
 */
int cli_parse(int argc, char **argv, const cli_opt *opts, const char **pos, int maxpos, int *npos);

/* ---- parsing values */

/* Whole string as a signed 64-bit decimal integer (optional sign, spaces around). */
int cli_parse_i64(const char *s, int64_t *out);
/* Comma-separated list of positive integers ("100,200"; "x" also separates).
 * `what` names the option in messages. "" gives 0 entries. */
int cli_parse_dims(const char *s, const char *what, int64_t *out, int max, int *n);
/* The same for a chunk shape, where -1 also stands for a whole dimension
 * (as in eval's chunks= and Dask); cli_whole_chunks replaces each -1 with
 * its dimension's length (1 for an empty one) once the shape is known. */
int cli_parse_chunks(const char *s, const char *what, int64_t *out, int max, int *n);
void cli_whole_chunks(int64_t *chunks, int n, const int64_t *shape);
/* Byte size with an optional unit: B, K/KB (1000), KiB (1024), M/MB, MiB, G/GB,
 * GiB, T/TB, TiB ("256MB", "1.5GiB"). Case-insensitive. */
int cli_parse_size(const char *s, const char *what, uint64_t *out);
/* --threads value: 0 (all cores) .. 4096. */
int cli_parse_threads(const char *s, int *out);

/* ---- text helpers */

/* "(3, 4)" / "(5,)" / "()" like NumPy, into buf. */
void cli_format_shape(char *buf, size_t size, int ndim, const int64_t *shape);
/* Human size: "1.5 MiB" (binary units; bytes below 1 KiB). */
void cli_format_bytes(char *buf, size_t size, uint64_t n);
/* Split a local path "a/b/c.zarr" → leaf name for display ("c.zarr"). */
const char *cli_basename(const char *path);

/* Multiply with saturation at UINT64_MAX. */
static inline uint64_t cli_mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif
