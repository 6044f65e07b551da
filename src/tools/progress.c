/* tools/progress.c — progress bar, computation summary and plan summary of
 * `zcube eval` / `zcube rechunk` (see progress.h). */
#include "progress.h"

#include <jansson.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "plan_svg.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ the bar */

void progress_init(progress_t *p, FILE *out, int draw, int nops, volatile sig_atomic_t *interrupt)
{
    memset(p, 0, sizeof *p);
    p->out = out;
    p->draw = draw;
    p->nops = nops;
    p->width = 80;
    p->t0 = now();
    p->last_op = -1;
    p->interrupt = interrupt;
    struct winsize ws;
    if (draw && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) p->width = ws.ws_col;
}

void progress_format(char *buf, size_t size, int width, const zc_progress *pr, int nops, double elapsed)
{
    char head[48], tail[64];
    if (nops > 0) snprintf(head, sizeof head, "[%lld/%d] ", (long long)pr->op + 1, nops);
    else snprintf(head, sizeof head, "[%lld] ", (long long)pr->op + 1);
    snprintf(tail, sizeof tail, " %lld/%lld tasks %.1fs", (long long)pr->done, (long long)pr->total, elapsed);
    const char *name = pr->name ? pr->name : "";
    if (width > (int)size - 1) width = (int)size - 1;
    /* name gets up to 28 columns, the bar what is left (at least 10) */
    int room = width - (int)strlen(head) - (int)strlen(tail) - 3;
    int name_len = (int)strlen(name);
    if (name_len > 28) name_len = 28;
    int bar = room - name_len - 1;
    if (bar < 10) {
        bar = 10;
        name_len = room - bar - 1;
        if (name_len < 0) name_len = 0;
    }
    if (bar > 50) bar = 50;
    int filled = pr->total > 0 ? (int)((double)bar * (double)pr->done / (double)pr->total) : 0;
    if (filled > bar) filled = bar;
    char bars[64];
    for (int i = 0; i < bar; i++) bars[i] = i < filled ? '#' : '.';
    bars[bar] = 0;
    snprintf(buf, size, "%s%.*s [%s]%s", head, name_len, name, bars, tail);
    if ((int)strlen(buf) > width) buf[width] = 0;
}

int progress_update(const zc_progress *pr, void *ctx)
{
    progress_t *p = ctx;
    if (p->interrupt && *p->interrupt) return 1;
    if (!p->draw) return 0;
    double t = now();
    if (pr->op == p->last_op && pr->done != pr->total && t - p->last < 0.1) return 0;
    p->last = t;
    p->last_op = pr->op;
    char line[512];
    progress_format(line, sizeof line, p->width - 1, pr, p->nops, t - p->t0);
    fprintf(p->out, "\r%s\033[K", line);
    fflush(p->out);
    p->shown = 1;
    return 0;
}

void progress_finish(progress_t *p)
{
    if (p->shown) {
        fputs("\r\033[K", p->out);
        fflush(p->out);
    }
    p->shown = 0;
}

/* ------------------------------------------------------------ JSON helpers */

static json_t *load(const char *text, const char *what)
{
    json_error_t err;
    json_t *doc = json_loads(text ? text : "", 0, &err);
    if (!json_is_object(doc) || !json_is_array(json_object_get(doc, "operations"))) {
        json_decref(doc);
        cli_seterr("the library returned an unreadable %s (%s)", what, doc ? "no operations" : err.text);
        return NULL;
    }
    return doc;
}

int progress_count_ops(const char *json)
{
    json_t *doc = json_loads(json ? json : "", 0, NULL);
    json_t *ops = json_object_get(doc, "operations");
    int n = json_is_array(ops) ? (int)json_array_size(ops) : -1;
    json_decref(doc);
    return n;
}

/* Integer field (or -1 if absent). */
static long long iget(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v)) return (long long)json_integer_value(v);
    if (json_is_real(v)) return (long long)json_real_value(v);
    return -1;
}

static double rget(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : -1;
}

static void bytes_or_dash(char *buf, size_t size, long long n)
{
    if (n < 0) snprintf(buf, size, "-");
    else cli_format_bytes(buf, size, (uint64_t)n);
}

/* "(10, 20)" from a JSON list of integers, or "-". */
static void list_text(char *buf, size_t size, const json_t *list)
{
    if (!json_is_array(list)) {
        snprintf(buf, size, "-");
        return;
    }
    int64_t v[ZC_MAX_DIMS];
    int n = 0;
    for (size_t i = 0; i < json_array_size(list) && n < ZC_MAX_DIMS; i++)
        v[n++] = (int64_t)json_integer_value(json_array_get(list, i));
    cli_format_shape(buf, size, n, v);
}

/* The fused operations: a string ("zarr+multiply") or a list of names. */
static void fused_text(char *buf, size_t size, const json_t *f)
{
    buf[0] = 0;
    if (json_is_string(f)) {
        snprintf(buf, size, "%s", json_string_value(f));
    } else if (json_is_array(f)) {
        size_t k = 0;
        for (size_t i = 0; i < json_array_size(f) && k + 1 < size; i++) {
            const char *s = json_string_value(json_array_get(f, i));
            int w = snprintf(buf + k, size - k, "%s%s", i ? "+" : "", s ? s : "?");
            if (w > 0) k += (size_t)w;
        }
    }
    if (!buf[0]) snprintf(buf, size, "-");
}

static void inputs_text(char *buf, size_t size, const json_t *in)
{
    buf[0] = 0;
    size_t k = 0;
    for (size_t i = 0; json_is_array(in) && i < json_array_size(in) && k + 1 < size; i++) {
        const json_t *x = json_array_get(in, i);
        int w = json_is_integer(x) ? snprintf(buf + k, size - k, "%s%lld", k ? "," : "", (long long)json_integer_value(x))
                                   : snprintf(buf + k, size - k, "%s%s", k ? "," : "", json_string_value(x) ? json_string_value(x) : "?");
        if (w > 0) k += (size_t)w;
    }
    if (!buf[0]) snprintf(buf, size, "-");
}

/* "12 tasks", "1 task", "? tasks" (absent) */
static void tasks_text(char *buf, size_t size, long long n)
{
    if (n < 0) snprintf(buf, size, "? tasks");
    else snprintf(buf, size, "%lld task%s", n, n == 1 ? "" : "s");
}

static const char *op_name(const json_t *o)
{
    const char *s = json_string_value(json_object_get(o, "name"));
    return s ? s : "?";
}

/* ------------------------------------------------------------ plan */

int progress_print_plan(FILE *f, const char *plan_json, const char *out_name)
{
    json_t *doc = load(plan_json, "plan");
    if (!doc) return -1;
    const json_t *ops = json_object_get(doc, "operations");
    long long limit = iget(doc, "memory_limit");
    char inter[32], lim[32];
    bytes_or_dash(inter, sizeof inter, iget(doc, "intermediate_bytes"));
    bytes_or_dash(lim, sizeof lim, limit);
    size_t nops = json_array_size(ops);
    char tk[40];
    tasks_text(tk, sizeof tk, iget(doc, "tasks"));
    fprintf(f, "plan%s%s: %zu operation%s, %s, intermediates %s, memory bound per task %s\n",
            out_name ? " for " : "", out_name ? out_name : "", nops, nops == 1 ? "" : "s", tk, inter, lim);
    fprintf(f, "  %-28s %-18s %-14s %-12s %10s %11s  %-7s %s\n", "operation", "shape", "chunks", "dtype", "tasks",
            "projected", "inputs", "fused");
    int over = 0, from_reserve = 0;
    long long peak = -1;
    for (size_t i = 0; i < nops; i++) {
        const json_t *o = json_array_get(ops, i);
        char shape[96], chunks[96], proj[32], fused[512], inputs[128];
        list_text(shape, sizeof shape, json_object_get(o, "shape"));
        list_text(chunks, sizeof chunks, json_object_get(o, "chunks"));
        long long pm = iget(o, "projected_mem");
        if (pm > peak) peak = pm;
        bytes_or_dash(proj, sizeof proj, pm);
        fused_text(fused, sizeof fused, json_object_get(o, "fused"));
        inputs_text(inputs, sizeof inputs, json_object_get(o, "inputs"));
        const char *dt = json_string_value(json_object_get(o, "dtype"));
        int mem = plan_op_mem(o, limit), exceeds = mem == PLAN_OP_OVER, reserve = mem == PLAN_OP_RESERVE;
        bool output = json_is_true(json_object_get(o, "output"));
        over += exceeds;
        from_reserve += reserve;
        const char *stream = json_string_value(json_object_get(o, "stream"));
        fprintf(f, "  %-28s %-18s %-14s %-12s %10lld %11s  %-7s %s%s%s%s%s%s\n", op_name(o), shape, chunks,
                dt ? dt : "-", iget(o, "tasks"), proj, inputs, fused, stream ? " (" : "", stream ? stream : "",
                stream ? ")" : "", output ? " -> output" : "",
                exceeds ? "  ** exceeds the memory bound **" : reserve ? "  (its compressor from the reserve)" : "");
    }
    if (peak >= 0) {
        char pk[32];
        cli_format_bytes(pk, sizeof pk, (uint64_t)peak);
        fprintf(f, "largest projected task memory: %s of %s allowed%s\n", pk, lim,
                over           ? ": compute would refuse (use smaller chunks or raise --allowed-mem)"
                : from_reserve ? ", an output's compressor state within the reserve"
                               : "");
    }
    json_decref(doc);
    return 0;
}

/* ------------------------------------------------------------ report */

/* The measured process memory against its bound (the report's "memory"). */
static void print_rss(FILE *f, const json_t *mem)
{
    if (!json_is_object(mem) || iget(mem, "peak_rss") < 0) return;
    const json_t *res = json_object_get(mem, "reserve");
    char peak[32], base[32], bound[32], reserve[32];
    bytes_or_dash(peak, sizeof peak, iget(mem, "peak_rss"));
    bytes_or_dash(base, sizeof base, iget(mem, "rss_base"));
    bytes_or_dash(bound, sizeof bound, iget(mem, "bound"));
    bytes_or_dash(reserve, sizeof reserve, iget(res, "total"));
    if (!json_is_true(json_object_get(mem, "measured"))) {
        fprintf(f, "peak RSS: %s (not measured per stage: /proc/self/clear_refs refused)\n", peak);
        return;
    }
    fprintf(f, "peak RSS: %s (%s at the start); bound %s above the start (%lld threads x allowed + reserve %s): %s; "
               "agrees with the counted memory: %s\n",
            peak, base, bound, iget(mem, "threads"), reserve,
            json_is_true(json_object_get(mem, "within_bound")) ? "held" : "EXCEEDED",
            json_is_true(json_object_get(mem, "agrees")) ? "yes" : "NO");
}

int progress_print_summary(FILE *f, const char *report_json, const char *out_name)
{
    json_t *doc = load(report_json, "report");
    if (!doc) return -1;
    const json_t *ops = json_object_get(doc, "operations");
    size_t nops = json_array_size(ops);
    long long proj_peak = -1, meas_peak = iget(doc, "peak_task_mem"), skipped = 0;
    for (size_t i = 0; i < nops; i++) {
        const json_t *o = json_array_get(ops, i);
        if (iget(o, "projected_mem") > proj_peak) proj_peak = iget(o, "projected_mem");
        if (iget(o, "measured_mem") > meas_peak) meas_peak = iget(o, "measured_mem");
        if (iget(o, "skipped") > 0) skipped += iget(o, "skipped");
    }
    char inter[32], pp[32], mp[32], lim[32];
    bytes_or_dash(inter, sizeof inter, iget(doc, "intermediate_bytes"));
    bytes_or_dash(pp, sizeof pp, proj_peak);
    bytes_or_dash(mp, sizeof mp, meas_peak);
    bytes_or_dash(lim, sizeof lim, iget(doc, "memory_limit"));
    double secs = rget(doc, "seconds");
    if (out_name) fprintf(f, "wrote %s\n", out_name);
    char tk[40];
    tasks_text(tk, sizeof tk, iget(doc, "tasks"));
    fprintf(f, "%zu operation%s, %s", nops, nops == 1 ? "" : "s", tk);
    if (skipped) fprintf(f, " (%lld skipped: already written)", skipped);
    if (secs >= 0) fprintf(f, " in %.2f s", secs);
    fprintf(f, "\npeak memory per task: %s measured, %s projected, %s allowed\n", mp, pp, lim);
    fprintf(f, "intermediates written: %s\n", inter);
    print_rss(f, json_object_get(doc, "memory"));
    fprintf(f, "  %-28s %10s %9s %11s %11s %6s %10s  %s\n", "operation", "tasks", "seconds", "projected", "measured",
            "ratio", "peak RSS", "fused");
    for (size_t i = 0; i < nops; i++) {
        const json_t *o = json_array_get(ops, i);
        char proj[32], meas[32], fused[512], ratio[16], sec[16], rss[32];
        long long pm = iget(o, "projected_mem"), mm = iget(o, "measured_mem");
        bytes_or_dash(proj, sizeof proj, pm);
        bytes_or_dash(meas, sizeof meas, mm);
        bytes_or_dash(rss, sizeof rss, iget(json_object_get(o, "memory"), "peak_rss"));
        fused_text(fused, sizeof fused, json_object_get(o, "fused"));
        if (pm > 0 && mm >= 0) snprintf(ratio, sizeof ratio, "%.2f", (double)mm / (double)pm);
        else snprintf(ratio, sizeof ratio, "-");
        double s = rget(o, "seconds");
        if (s >= 0) snprintf(sec, sizeof sec, "%.2f", s);
        else snprintf(sec, sizeof sec, "-");
        fprintf(f, "  %-28s %10lld %9s %11s %11s %6s %10s  %s\n", op_name(o), iget(o, "tasks"), sec, proj, meas, ratio,
                rss, fused);
    }
    json_decref(doc);
    return 0;
}
