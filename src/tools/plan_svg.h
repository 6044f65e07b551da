/* tools/plan_svg.h — `--visualize plan.svg`: the plan's operations as an SVG
 * drawing, without graphviz.
 *
 * Each operation of zc_plan_json's "operations" is a box (name, shape and
 * dtype, tasks and projected memory per task, fused operations); an arrow goes
 * from every input operation to its consumer. Boxes are laid out in layers by
 * the longest path from an operation without inputs (sources at the top,
 * outputs at the bottom), in plan order within a layer. Outputs are drawn in
 * green, operations whose projection exceeds the memory limit in red
 * (plan_op_mem, which the --plan-only table of progress.c uses too). */
#ifndef ZC_TOOLS_PLAN_SVG_H
#define ZC_TOOLS_PLAN_SVG_H

#include <stdio.h>

/* How an operation of a plan's JSON stands against its memory_limit (bytes
 * per task): PLAN_OP_WITHIN, PLAN_OP_RESERVE (an output stage above it by its
 * compressor's state, which comes from the reserve: plan/target_mem.c), or
 * PLAN_OP_OVER. A library's plan is never over; the summaries still say so. */
enum { PLAN_OP_WITHIN, PLAN_OP_RESERVE, PLAN_OP_OVER };
struct json_t;
int plan_op_mem(const struct json_t *op, long long limit);

/* Write the SVG of `plan_json` to f. @return 0, or -1 with cli_lasterr(). */
int plan_svg_write(FILE *f, const char *plan_json, const char *title);

/* The same into the file at `path` (replaced). */
int plan_svg_save(const char *path, const char *plan_json, const char *title);

#endif
