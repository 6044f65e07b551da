/* tools/cli_util.c — error lines, option parsing and value parsing for the
 * zcube command. See cli_util.h. */
#include "cli_util.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERRMAX 1024

static const char *command_name = "zcube";
static char pending[ERRMAX];

void cli_set_command(const char *name) { command_name = name; }
const char *cli_command_name(void) { return command_name; }

int cli_seterr(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pending, sizeof pending, fmt, ap);
    va_end(ap);
    return -1;
}

const char *cli_lasterr(void) { return pending; }

/* Write one line: control characters (newlines from a library message or a
 * file name) become spaces so the error stays one line. */
static void put_line(const char *msg)
{
    char line[2 * ERRMAX + 64];
    size_t n = 0;
    int w = snprintf(line, sizeof line, "zcube: %s: ", command_name);
    if (w > 0) n = (size_t)w < sizeof line ? (size_t)w : sizeof line - 1;
    for (const char *p = msg; *p && n + 2 < sizeof line; p++)
        line[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
    while (n > 0 && line[n - 1] == ' ') n--;
    line[n++] = '\n';
    fwrite(line, 1, n, stderr);
    fflush(stderr);
}

int cli_fail(int exit_code, const char *fmt, ...)
{
    char msg[ERRMAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    put_line(msg);
    return exit_code;
}

int cli_fail_zc(int rc, const char *context_fmt, ...)
{
    char detail[ERRMAX];
    zc_errmsg_r(detail, sizeof detail);
    if (!detail[0]) snprintf(detail, sizeof detail, "%s", zc_strerror(rc));
    char msg[2 * ERRMAX];
    if (context_fmt) {
        char ctx[ERRMAX];
        va_list ap;
        va_start(ap, context_fmt);
        vsnprintf(ctx, sizeof ctx, context_fmt, ap);
        va_end(ap);
        snprintf(msg, sizeof msg, "%s: %s", ctx, detail);
    } else {
        snprintf(msg, sizeof msg, "%s", detail);
    }
    put_line(msg);
    return CLI_EXIT_RUNTIME;
}

/* ------------------------------------------------------------ options */

static const cli_opt *find_long(const cli_opt *opts, const char *name, size_t len)
{
    for (const cli_opt *o = opts; o->name; o++)
        if (strlen(o->name) == len && !strncmp(o->name, name, len)) return o;
    return NULL;
}

static const cli_opt *find_short(const cli_opt *opts, char c)
{
    for (const cli_opt *o = opts; o->name; o++)
        if (o->short_name && o->short_name == c) return o;
    return NULL;
}

int cli_parse(int argc, char **argv, const cli_opt *opts, const char **pos, int maxpos, int *npos)
{
    *npos = 0;
    int only_positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const cli_opt *o = NULL;
        const char *inline_val = NULL;
        char shown[64];
        if (!only_positional && !strcmp(a, "--")) {
            only_positional = 1;
            continue;
        }
        if (!only_positional && (!strcmp(a, "--help") || !strcmp(a, "-h"))) return CLI_HELP;
        if (!only_positional && a[0] == '-' && a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_long(opts, name, len);
            snprintf(shown, sizeof shown, "--%.*s", (int)(len < 40 ? len : 40), name);
            if (!o) return cli_seterr("unknown option '%s' (see 'zcube %s --help')", shown, command_name);
            if (eq) inline_val = eq + 1;
        } else if (!only_positional && a[0] == '-' && a[1] != 0) {
            o = find_short(opts, a[1]);
            snprintf(shown, sizeof shown, "-%c", a[1]);
            if (!o) return cli_seterr("unknown option '%s' (see 'zcube %s --help')", shown, command_name);
            if (a[2]) {
                if (!o->value) return cli_seterr("option '%s' takes no value", shown);
                inline_val = a + 2;
            }
        } else {
            if (*npos >= maxpos)
                return cli_seterr("unexpected argument '%.200s' (see 'zcube %s --help')", a, command_name);
            pos[(*npos)++] = a;
            continue;
        }
        if (o->value) {
            if (inline_val) {
                *o->value = inline_val;
            } else {
                if (i + 1 >= argc) return cli_seterr("option '%s' needs a value", shown);
                *o->value = argv[++i];
            }
        } else {
            if (inline_val) return cli_seterr("option '%s' takes no value", shown);
            if (o->flag) *o->flag = 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ values */

int cli_parse_i64(const char *s, int64_t *out)
{
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return -1;
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (!isdigit((unsigned char)*p)) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE) return -1;
    while (isspace((unsigned char)*end)) end++;
    if (*end) return -1;
    *out = (int64_t)v;
    return 0;
}

static int is_blank_item(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s)) return 0;
    return 1;
}

static int parse_dims(const char *s, const char *what, int64_t *out, int max, int *n, bool whole)
{
    *n = 0;
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    if (!*p) return 0;
    if (!strcmp(p, "()") || !strcmp(p, "[]")) return 0; /* explicit 0-d */
    char item[64];
    for (;;) {
        const char *q = p;
        while (*q && *q != ',' && *q != 'x' && *q != 'X') q++;
        size_t len = (size_t)(q - p);
        if (len >= sizeof item) return cli_seterr("bad %s '%.100s': number too long", what, s);
        memcpy(item, p, len);
        item[len] = 0;
        if (is_blank_item(item)) return cli_seterr("bad %s '%.100s': empty entry", what, s);
        int64_t v;
        if (cli_parse_i64(item, &v) < 0)
            return cli_seterr("bad %s '%.100s': '%s' is not an integer", what, s, item);
        if (v <= 0 && !(whole && v == -1))
            return cli_seterr("bad %s '%.100s': %lld must be positive%s", what, s, (long long)v,
                              whole ? " (or -1 for a whole dimension)" : "");
        if (*n >= max) return cli_seterr("bad %s '%.100s': more than %d dimensions", what, s, max);
        out[(*n)++] = v;
        if (!*q) break;
        p = q + 1;
    }
    return 0;
}

int cli_parse_dims(const char *s, const char *what, int64_t *out, int max, int *n)
{
    return parse_dims(s, what, out, max, n, false);
}

int cli_parse_chunks(const char *s, const char *what, int64_t *out, int max, int *n)
{
    return parse_dims(s, what, out, max, n, true);
}

void cli_whole_chunks(int64_t *chunks, int n, const int64_t *shape)
{
    for (int d = 0; d < n; d++)
        if (chunks[d] == -1) chunks[d] = shape[d] > 0 ? shape[d] : 1;
}

int cli_parse_size(const char *s, const char *what, uint64_t *out)
{
    static const struct {
        const char *unit;
        double mult;
    } UNITS[] = {
        {"", 1},         {"b", 1},         {"k", 1e3},   {"kb", 1e3},  {"kib", 1024.0},
        {"m", 1e6},      {"mb", 1e6},      {"mib", 1048576.0},         {"g", 1e9},
        {"gb", 1e9},     {"gib", 1073741824.0},          {"t", 1e12},  {"tb", 1e12},
        {"tib", 1099511627776.0},
    };
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    if (!isdigit((unsigned char)*p) && *p != '.')
        return cli_seterr("bad %s '%.100s': expected a size such as 256MB", what, s);
    errno = 0;
    char *end;
    double v = strtod(p, &end);
    if (errno || !isfinite(v) || v < 0)
        return cli_seterr("bad %s '%.100s': expected a size such as 256MB", what, s);
    while (isspace((unsigned char)*end)) end++;
    char unit[8];
    size_t len = strlen(end);
    while (len > 0 && isspace((unsigned char)end[len - 1])) len--;
    if (len >= sizeof unit) return cli_seterr("bad %s '%.100s': unknown unit", what, s);
    for (size_t i = 0; i < len; i++) unit[i] = (char)tolower((unsigned char)end[i]);
    unit[len] = 0;
    for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++) {
        if (strcmp(unit, UNITS[i].unit)) continue;
        double bytes = v * UNITS[i].mult;
        if (bytes >= 1.8e19) return cli_seterr("bad %s '%.100s': too large", what, s);
        *out = (uint64_t)bytes;
        return 0;
    }
    return cli_seterr("bad %s '%.100s': unknown unit '%s' (use B, KB, MB, GB, KiB, MiB, GiB)", what, s,
                      unit);
}

int cli_parse_threads(const char *s, int *out)
{
    int64_t v;
    if (cli_parse_i64(s, &v) < 0 || v < 0 || v > 4096)
        return cli_seterr("bad --threads '%.100s': expected 0 (all cores) to 4096", s);
    *out = (int)v;
    return 0;
}

/* ------------------------------------------------------------ text */

void cli_format_shape(char *buf, size_t size, int ndim, const int64_t *shape)
{
    size_t n = 0;
    int w = snprintf(buf, size, "(");
    if (w < 0) return;
    n = (size_t)w;
    for (int i = 0; i < ndim && n < size; i++) {
        w = snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
        if (w < 0) return;
        n += (size_t)w;
    }
    if (n < size) snprintf(buf + n, size - n, ndim == 1 ? ",)" : ")");
}

void cli_format_bytes(char *buf, size_t size, uint64_t n)
{
    static const char *UNIT[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n < 1024) {
        snprintf(buf, size, "%llu B", (unsigned long long)n);
        return;
    }
    double v = (double)n;
    int u = -1;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, "%.1f %s", v, UNIT[u]);
}

const char *cli_basename(const char *path)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    const char *p = path + len;
    while (p > path && p[-1] != '/') p--;
    return p;
}
