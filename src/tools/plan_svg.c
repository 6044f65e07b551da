/* tools/plan_svg.c — the plan as layered boxes and arrows in SVG (see
 * plan_svg.h). Coordinates: layer L is the row at y = MARGIN + TITLE + L *
 * (BOX_H + GAP_Y); box i of a row at x = MARGIN + i * (BOX_W + GAP_X). Arrows
 * run from the bottom middle of the input's box to the top middle of the
 * consumer's box (a cubic curve, so edges skipping layers stay readable). */
#include "plan_svg.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "zcube.h"

#define BOX_W 300
#define BOX_H 78
#define GAP_X 40
#define GAP_Y 56
#define MARGIN 20
#define TITLE 30
#define MAX_OPS 100000 /* refuse to draw absurd plans */

/* Text with XML's special characters escaped, cut to `max` characters. */
static void put_text(FILE *f, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && n < max; s++, n++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x20) fputc(*s, f);
        }
    }
    if (*s) fputs("...", f);
}

static void list_text(char *buf, size_t size, const json_t *list)
{
    int64_t v[ZC_MAX_DIMS];
    int n = 0;
    for (size_t i = 0; json_is_array(list) && i < json_array_size(list) && n < ZC_MAX_DIMS; i++)
        v[n++] = (int64_t)json_integer_value(json_array_get(list, i));
    if (!json_is_array(list)) snprintf(buf, size, "?");
    else cli_format_shape(buf, size, n, v);
}

static long long iget(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

int plan_op_mem(const json_t *op, long long limit)
{
    long long pm = iget(op, "projected_mem");
    if (limit <= 0 || pm <= limit) return PLAN_OP_WITHIN;
    return json_is_true(json_object_get(op, "output")) ? PLAN_OP_RESERVE : PLAN_OP_OVER;
}

/* Index of the operation an "inputs" entry names (by its "op" number), or -1. */
static int resolve(const json_t *ops, const int *opno, int n, const json_t *x)
{
    if (!json_is_integer(x)) return -1;
    long long want = (long long)json_integer_value(x);
    for (int i = 0; i < n; i++)
        if (opno[i] == want) return i;
    (void)ops;
    return -1;
}

int plan_svg_write(FILE *f, const char *plan_json, const char *title)
{
    json_error_t err;
    json_t *doc = json_loads(plan_json ? plan_json : "", 0, &err);
    const json_t *ops = json_object_get(doc, "operations");
    if (!json_is_array(ops)) {
        json_decref(doc);
        return cli_seterr("the library returned an unreadable plan (%s)", doc ? "no operations" : err.text);
    }
    size_t nz = json_array_size(ops);
    if (nz > MAX_OPS) {
        json_decref(doc);
        return cli_seterr("the plan has %zu operations, too many to draw", nz);
    }
    int n = (int)nz;
    int *opno = calloc(nz + 1, sizeof *opno), *layer = calloc(nz + 1, sizeof *layer);
    int *slot = calloc(nz + 1, sizeof *slot), *per_layer = calloc(nz + 1, sizeof *per_layer);
    if (!opno || !layer || !slot || !per_layer) {
        free(opno), free(layer), free(slot), free(per_layer);
        json_decref(doc);
        return cli_seterr("out of memory drawing the plan");
    }
    for (int i = 0; i < n; i++) {
        long long k = iget(json_array_get(ops, (size_t)i), "op");
        opno[i] = k >= 0 && k < INT32_MAX ? (int)k : i;
    }
    /* layers: longest path from a source; plans are DAGs, but relax at most n
     * times so a malformed cyclic plan cannot loop forever */
    for (int pass = 0, changed = 1; changed && pass <= n; pass++) {
        changed = 0;
        for (int i = 0; i < n; i++) {
            const json_t *in = json_object_get(json_array_get(ops, (size_t)i), "inputs");
            for (size_t k = 0; json_is_array(in) && k < json_array_size(in); k++) {
                int j = resolve(ops, opno, n, json_array_get(in, k));
                if (j >= 0 && j != i && layer[j] + 1 > layer[i] && layer[j] + 1 <= n) {
                    layer[i] = layer[j] + 1;
                    changed = 1;
                }
            }
        }
    }
    int nlayers = 0, widest = 1;
    for (int i = 0; i < n; i++) {
        slot[i] = per_layer[layer[i]]++;
        if (layer[i] + 1 > nlayers) nlayers = layer[i] + 1;
        if (per_layer[layer[i]] > widest) widest = per_layer[layer[i]];
    }
    long long limit = iget(doc, "memory_limit");
    int width = 2 * MARGIN + widest * BOX_W + (widest - 1) * GAP_X;
    int height = 2 * MARGIN + TITLE + nlayers * BOX_H + (nlayers > 0 ? (nlayers - 1) * GAP_Y : 0);
    if (width < 420) width = 420;

    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"monospace\" font-size=\"11\">\n", width, height, width, height);
    fprintf(f, "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
            "markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/>"
            "</marker></defs>\n");
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    char inter[32], lim[32];
    long long ib = iget(doc, "intermediate_bytes");
    if (ib >= 0) cli_format_bytes(inter, sizeof inter, (uint64_t)ib);
    else snprintf(inter, sizeof inter, "?");
    if (limit >= 0) cli_format_bytes(lim, sizeof lim, (uint64_t)limit);
    else snprintf(lim, sizeof lim, "?");
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">", MARGIN, MARGIN + 12);
    put_text(f, title ? title : "plan", 80);
    fprintf(f, ": %d operation%s, %lld tasks, intermediates %s, bound %s per task</text>\n", n, n == 1 ? "" : "s",
            iget(doc, "tasks"), inter, lim);

    /* arrows first, so boxes cover their ends neatly */
    for (int i = 0; i < n; i++) {
        const json_t *in = json_object_get(json_array_get(ops, (size_t)i), "inputs");
        int x2 = MARGIN + slot[i] * (BOX_W + GAP_X) + BOX_W / 2;
        int y2 = MARGIN + TITLE + layer[i] * (BOX_H + GAP_Y);
        for (size_t k = 0; json_is_array(in) && k < json_array_size(in); k++) {
            int j = resolve(ops, opno, n, json_array_get(in, k));
            if (j < 0 || j == i) continue;
            int x1 = MARGIN + slot[j] * (BOX_W + GAP_X) + BOX_W / 2;
            int y1 = MARGIN + TITLE + layer[j] * (BOX_H + GAP_Y) + BOX_H;
            int my = (y1 + y2) / 2;
            fprintf(f, "<path d=\"M %d %d C %d %d, %d %d, %d %d\" fill=\"none\" stroke=\"#555\" "
                    "stroke-width=\"1.3\" marker-end=\"url(#arrow)\"/>\n", x1, y1, x1, my, x2, my, x2, y2);
        }
    }
    for (int i = 0; i < n; i++) {
        const json_t *o = json_array_get(ops, (size_t)i);
        int x = MARGIN + slot[i] * (BOX_W + GAP_X);
        int y = MARGIN + TITLE + layer[i] * (BOX_H + GAP_Y);
        long long pm = iget(o, "projected_mem");
        int exceeds = plan_op_mem(o, limit) == PLAN_OP_OVER;
        int output = json_is_true(json_object_get(o, "output"));
        const char *fill = exceeds ? "#fde0dc" : output ? "#e3f4e1" : "#e8eef9";
        const char *stroke = exceeds ? "#c62828" : output ? "#2e7d32" : "#3f5f9f";
        fprintf(f, "<g><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" fill=\"%s\" stroke=\"%s\" "
                "stroke-width=\"1.5\"/>\n", x, y, BOX_W, BOX_H, fill, stroke);
        const char *name = json_string_value(json_object_get(o, "name"));
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">", x + 8, y + 16);
        put_text(f, name ? name : "?", 40);
        fprintf(f, "</text>\n");
        char shape[96], chunks[96], proj[32];
        list_text(shape, sizeof shape, json_object_get(o, "shape"));
        list_text(chunks, sizeof chunks, json_object_get(o, "chunks"));
        const char *dt = json_string_value(json_object_get(o, "dtype"));
        fprintf(f, "<text x=\"%d\" y=\"%d\">", x + 8, y + 32);
        char line[300];
        snprintf(line, sizeof line, "%s %s chunks %s", shape, dt ? dt : "?", chunks);
        put_text(f, line, 46);
        fprintf(f, "</text>\n");
        if (pm >= 0) cli_format_bytes(proj, sizeof proj, (uint64_t)pm);
        else snprintf(proj, sizeof proj, "?");
        snprintf(line, sizeof line, "%lld tasks, %s per task%s", iget(o, "tasks"), proj, exceeds ? " (too much)" : "");
        fprintf(f, "<text x=\"%d\" y=\"%d\">", x + 8, y + 48);
        put_text(f, line, 46);
        fprintf(f, "</text>\n");
        const json_t *fu = json_object_get(o, "fused");
        char fused[512] = "";
        if (json_is_string(fu)) {
            snprintf(fused, sizeof fused, "%s", json_string_value(fu));
        } else if (json_is_array(fu)) {
            size_t k = 0;
            for (size_t q = 0; q < json_array_size(fu) && k + 1 < sizeof fused; q++) {
                const char *s = json_string_value(json_array_get(fu, q));
                int w = snprintf(fused + k, sizeof fused - k, "%s%s", q ? "+" : "", s ? s : "?");
                if (w > 0) k += (size_t)w;
            }
        }
        if (fused[0]) {
            fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">fused: ", x + 8, y + 64);
            put_text(f, fused, 38);
            fprintf(f, "</text>\n");
        }
        fprintf(f, "<title>");
        put_text(f, name ? name : "?", 200);
        fprintf(f, "</title></g>\n");
    }
    fprintf(f, "</svg>\n");
    free(opno), free(layer), free(slot), free(per_layer);
    json_decref(doc);
    return 0;
}

int plan_svg_save(const char *path, const char *plan_json, const char *title)
{
    FILE *f = fopen(path, "w");
    if (!f) return cli_seterr("cannot write '%s': %s", path, strerror(errno));
    int rc = plan_svg_write(f, plan_json, title);
    if (ferror(f)) rc = cli_seterr("writing '%s' failed", path);
    if (fclose(f) != 0 && rc == 0) rc = cli_seterr("writing '%s' failed: %s", path, strerror(errno));
    return rc;
}
