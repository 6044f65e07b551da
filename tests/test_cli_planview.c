/* tests/test_cli_planview.c — unit tests of what `zcube eval`/`rechunk` show:
 * the progress bar line, the --plan-only summary, the computation summary
 * (src/tools/progress.c) and the --visualize SVG (src/tools/plan_svg.c), fed
 * with plan/report JSON written here. */
#define _GNU_SOURCE /* open_memstream */
#include <stdint.h>
#include <stdio.h>

#include "cli_util.h"
#include "harness.h"
#include "plan_svg.h"
#include "progress.h"

static const char PLAN[] =
    "{\"operations\": ["
    " {\"op\": 0, \"name\": \"op0 multiply\", \"kind\": \"multiply\", \"shape\": [100, 200], \"chunks\": [10, 200],"
    "  \"dtype\": \"float64\", \"tasks\": 10, \"projected_mem\": 1048576, \"fused\": \"zarr+multiply\","
    "  \"output\": false, \"inputs\": []},"
    " {\"op\": 1, \"name\": \"op1 mean (round 1)\", \"kind\": \"reduce\", \"shape\": [2, 200], \"chunks\": [1, 200],"
    "  \"dtype\": \"accumulator\", \"tasks\": 2, \"projected_mem\": 900000000, \"fused\": \"reduce\","
    "  \"output\": false, \"inputs\": [0]},"
    " {\"op\": 2, \"name\": \"op2 <mean> & co\", \"kind\": \"reduce\", \"shape\": [200], \"chunks\": [200],"
    "  \"dtype\": \"float64\", \"tasks\": 1, \"projected_mem\": 470000000, \"fused\": [\"reduce\", \"add\"],"
    "  \"output\": true, \"inputs\": [1, 0]}],"
    " \"tasks\": 13, \"intermediate_bytes\": 163840, \"memory_limit\": 469762048}";

static const char REPORT[] =
    "{\"operations\": ["
    " {\"op\": 0, \"name\": \"op0 multiply\", \"tasks\": 10, \"projected_mem\": 1048576, \"fused\": \"zarr+multiply\","
    "  \"seconds\": 0.25, \"measured_mem\": 524288, \"skipped\": 0, \"inputs\": []},"
    " {\"op\": 1, \"name\": \"op1 mean\", \"tasks\": 3, \"projected_mem\": 2097152, \"fused\": \"reduce\","
    "  \"seconds\": 0.5, \"measured_mem\": 2097152, \"skipped\": 2, \"inputs\": [0]}],"
    " \"tasks\": 13, \"intermediate_bytes\": 163840, \"memory_limit\": 469762048, \"seconds\": 1.25,"
    " \"peak_task_mem\": 2097152}";

/* Output into memory: *buf and *len are valid after fclose(*f). */
static void capture(FILE **f, char **buf, size_t *len)
{
    *buf = NULL;
    *f = open_memstream(buf, len);
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

TEST(progress_bar_line)
{
    char buf[512];
    zc_progress pr = {1, "op1 mean (round 1)", 50, 200};
    progress_format(buf, sizeof buf, 79, &pr, 3, 12.34);
    CHECK(strlen(buf) <= 79);
    CHECK(!strncmp(buf, "[2/3] op1 mean (round 1) [", 26));
    CHECK(strstr(buf, " 50/200 tasks 12.3s") != NULL);
    /* a quarter of the bar filled */
    const char *open = strchr(buf, '['), *bar = strchr(open + 1, '[') + 1, *close = strchr(bar, ']');
    size_t w = (size_t)(close - bar), hashes = 0;
    for (const char *p = bar; p < close; p++) hashes += *p == '#';
    CHECK(w >= 10 && hashes == w / 4);

    pr.done = 200;
    progress_format(buf, sizeof buf, 79, &pr, 0, 1);
    CHECK(!strncmp(buf, "[2] ", 4));
    CHECK(strchr(buf, '.') == strstr(buf, " 1.0s") + 2); /* the only '.' left is in the time: bar full */

    /* narrow terminals and long names: never wider than asked */
    zc_progress lp = {7, "op7 a-very-long-operation-name-that-goes-on-and-on", 3, 1000000};
    for (int width = 20; width <= 200; width += 7) {
        progress_format(buf, sizeof buf, width, &lp, 12, 3600);
        CHECK((int)strlen(buf) <= width);
    }
    zc_progress zero = {0, NULL, 0, 0};
    progress_format(buf, sizeof buf, 60, &zero, 1, 0);
    CHECK(strstr(buf, "0/0 tasks") != NULL);
}

TEST(progress_cancel_flag)
{
    volatile sig_atomic_t flag = 0;
    progress_t p;
    FILE *f;
    size_t len;
    char *buf;
    capture(&f, &buf, &len);
    progress_init(&p, f, 0, 2, &flag);
    zc_progress pr = {0, "op0", 1, 4};
    CHECK(progress_update(&pr, &p) == 0);
    flag = 1;
    CHECK(progress_update(&pr, &p) == 1);
    progress_finish(&p);
    fclose(f);
    CHECK(len == 0); /* draw = 0: nothing written */
    free(buf);

    /* drawing: "\r<line>\033[K", erased at the end */
    flag = 0;
    capture(&f, &buf, &len);
    progress_init(&p, f, 1, 2, &flag);
    zc_progress last = {1, "op1 sum", 4, 4};
    CHECK(progress_update(&last, &p) == 0);
    progress_finish(&p);
    fclose(f);
    CHECK(strstr(buf, "\r[2/2] op1 sum [") == buf);
    CHECK(strstr(buf, "4/4 tasks") != NULL);
    CHECK(len >= 4 && !strcmp(buf + len - 4, "\r\033[K"));
    free(buf);
}

TEST(progress_plan_summary)
{
    CHECK(progress_count_ops(PLAN) == 3);
    CHECK(progress_count_ops("{}") == -1);
    CHECK(progress_count_ops("not json") == -1);
    FILE *f;
    size_t len;
    char *buf;
    capture(&f, &buf, &len);
    CHECK(progress_print_plan(f, PLAN, "out.zarr") == 0);
    fclose(f);
    /* header, column titles, one line per operation, the peak line */
    CHECK(count(buf, "\n") == 6);
    CHECK(strstr(buf, "plan for out.zarr: 3 operations, 13 tasks, intermediates 160.0 KiB, memory bound per task "
                      "448.0 MiB") == buf);
    CHECK(strstr(buf, "op0 multiply") && strstr(buf, "(100, 200)") && strstr(buf, "(10, 200)"));
    CHECK(strstr(buf, "zarr+multiply") && strstr(buf, "reduce+add"));
    CHECK(strstr(buf, "1.0 MiB") && strstr(buf, "448.2 MiB"));
    CHECK(strstr(buf, "1,0") != NULL); /* inputs of op2 */
    CHECK(count(buf, "exceeds the memory bound") == 1);
    /* an output stage over the bound per task uses the reserve for its compressor */
    CHECK(count(buf, "-> output  (its compressor from the reserve)") == 1);
    CHECK(strstr(buf, "compute would refuse") != NULL);
    CHECK(strstr(buf, "compressor state within the reserve") == NULL); /* the refusal is what counts */
    free(buf);

    capture(&f, &buf, &len);
    CHECK(progress_print_plan(f, "[1, 2]", NULL) == -1);
    CHECK(strstr(cli_lasterr(), "unreadable plan") != NULL);
    CHECK(progress_print_plan(f, "{\"operations\": [{}]}", NULL) == 0); /* missing fields: dashes */
    fclose(f);
    CHECK(strstr(buf, "plan: 1 operation, ? tasks, intermediates -, memory bound per task -\n") != NULL);
    free(buf);
}

TEST(progress_report_summary)
{
    FILE *f;
    size_t len;
    char *buf;
    capture(&f, &buf, &len);
    CHECK(progress_print_summary(f, REPORT, "m.zarr") == 0);
    fclose(f);
    CHECK(strstr(buf, "wrote m.zarr\n2 operations, 13 tasks (2 skipped: already written) in 1.25 s\n") == buf);
    CHECK(strstr(buf, "peak memory per task: 2.0 MiB measured, 2.0 MiB projected, 448.0 MiB allowed") != NULL);
    CHECK(strstr(buf, "intermediates written: 160.0 KiB") != NULL);
    CHECK(strstr(buf, "0.50") != NULL); /* ratio of op0: 512 KiB / 1 MiB */
    CHECK(strstr(buf, "1.00") != NULL);
    CHECK(count(buf, "\n") == 7); /* wrote, totals, peak, intermediates, titles, 2 operations */
    free(buf);
    capture(&f, &buf, &len);
    CHECK(progress_print_summary(f, "", NULL) == -1);
    fclose(f);
    free(buf);
}

TEST(plan_svg_drawing)
{
    FILE *f;
    size_t len;
    char *buf;
    capture(&f, &buf, &len);
    CHECK(plan_svg_write(f, PLAN, "m<1>.zarr") == 0);
    fclose(f);
    CHECK(strstr(buf, "<?xml") == buf);
    CHECK(len > 7 && !strcmp(buf + len - 7, "</svg>\n"));
    CHECK(count(buf, "<rect") == 4);                       /* background + 3 boxes */
    CHECK(count(buf, "marker-end=\"url(#arrow)\"") == 3); /* 0->1, 1->2, 0->2 */
    CHECK(strstr(buf, "op2 &lt;mean&gt; &amp; co") != NULL);
    CHECK(strstr(buf, "m&lt;1&gt;.zarr") != NULL);
    CHECK(strstr(buf, "<mean>") == NULL);
    CHECK(count(buf, "#c62828") == 1); /* the box over the bound */
    CHECK(count(buf, "#2e7d32") == 1); /* the output */
    /* layers: op0 at the top, op1 below, op2 below op1 (longest path) */
    const char *b0 = strstr(buf, "<rect x=\"20\" y=\"50\""), *b1 = strstr(buf, "<rect x=\"20\" y=\"184\"");
    const char *b2 = strstr(buf, "<rect x=\"20\" y=\"318\"");
    CHECK(b0 && b1 && b2);
    free(buf);

    /* a cycle (malformed) still ends; unreadable JSON is refused */
    capture(&f, &buf, &len);
    CHECK(plan_svg_write(f, "{\"operations\": [{\"op\": 0, \"inputs\": [1]}, {\"op\": 1, \"inputs\": [0]}]}", NULL) == 0);
    CHECK(plan_svg_write(f, "{\"operations\": 3}", NULL) == -1);
    fclose(f);
    free(buf);
    CHECK(plan_svg_save("/nonexistent-dir/x.svg", PLAN, NULL) == -1);
    CHECK(strstr(cli_lasterr(), "/nonexistent-dir/x.svg") != NULL);
}
