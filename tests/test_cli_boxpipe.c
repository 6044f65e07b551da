/* tests/test_cli_boxpipe.c — the zcube command's box pipeline (tools/boxpipe.c)
 * and its large buffers (tools/bigbuf.c): every box produced once and consumed
 * once, in order, into the right places, on either thread; failures on either
 * side stop the walk; the policy of box sizes; 2 MiB-page advice on large
 * buffers only. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bigbuf.h"
#include "boxpipe.h"
#include "harness.h"

/* A walk over a (9, 10, 11) int32 selection ::1 of a (20, 10, 11) array from
 * row 3: produce writes each element's C-order index in the selection,
 * consume copies it to its place in `out` (as `zcube get` writes a file). */
typedef struct {
    const zc_range *sel;
    uint32_t *out;
    const unsigned char *buf;
    uint64_t nout;
    int produced, consumed;     /* boxes so far */
    int fail_produce_at, fail_consume_at; /* box number, or -1 */
    pthread_t produce_thread, consume_thread;
    int threads_ok;             /* each side ran on one thread throughout */
    int order_ok;               /* consumed box k is produced box k */
    int64_t first[64][ZC_MAX_DIMS]; /* each produced box's origin */
} walk_ctx;

static int fill_run(uint64_t sel_off, uint64_t box_off, uint64_t n, void *vctx)
{
    walk_ctx *w = vctx;
    uint32_t *b = (uint32_t *)w->buf;
    for (uint64_t i = 0; i < n; i++) b[box_off + i] = (uint32_t)(sel_off + i);
    return 0;
}

static int copy_run(uint64_t sel_off, uint64_t box_off, uint64_t n, void *vctx)
{
    walk_ctx *w = vctx;
    if (sel_off + n > w->nout) return 1;
    memcpy(w->out + sel_off, w->buf + box_off * 4, n * 4);
    return 0;
}

static int produce(const boxes_t *b, unsigned char *buf, void *vctx)
{
    walk_ctx *w = vctx;
    if (w->produced == 0) w->produce_thread = pthread_self();
    else if (!pthread_equal(w->produce_thread, pthread_self())) w->threads_ok = 0;
    if (w->produced == w->fail_produce_at) return 1;
    if (w->produced < 64) memcpy(w->first[w->produced], b->pos, sizeof w->first[0]);
    w->produced++;
    w->buf = buf;
    return boxes_runs(b, fill_run, w);
}

static int consume(const boxes_t *b, unsigned char *buf, void *vctx)
{
    walk_ctx *w = vctx;
    if (w->consumed == 0) w->consume_thread = pthread_self();
    else if (!pthread_equal(w->consume_thread, pthread_self())) w->threads_ok = 0;
    if (w->consumed == w->fail_consume_at) return 1;
    if (w->consumed < 64 && memcmp(w->first[w->consumed], b->pos, sizeof w->first[0])) w->order_ok = 0;
    w->consumed++;
    w->buf = buf;
    return boxes_runs(b, copy_run, w);
}

static const zc_range SEL[3] = {{3, 12, 1}, {0, 10, 1}, {0, 11, 1}};
static const int64_t COUNT[3] = {9, 10, 11};
static const int64_t UNIT[3] = {2, 4, 11};
#define NSEL (9 * 10 * 11)

static boxpipe_status walk(walk_ctx *w, uint64_t budget, bool thread_produces, bool *overlap, int *nboxes)
{
    static uint32_t out[NSEL];
    memset(out, 0xff, sizeof out);
    memset(w, 0, sizeof *w);
    w->sel = SEL;
    w->out = out;
    w->nout = NSEL;
    w->fail_produce_at = w->fail_consume_at = -1;
    w->threads_ok = w->order_ok = 1;
    boxes_t bx;
    *overlap = boxpipe_boxes(&bx, 3, SEL, COUNT, UNIT, 4, budget);
    boxes_t probe = bx;
    *nboxes = 0;
    while (boxes_next(&probe)) (*nboxes)++;
    return boxpipe_run(&bx, *overlap, thread_produces, produce, consume, w);
}

static int all_in_place(const walk_ctx *w)
{
    for (uint32_t i = 0; i < NSEL; i++)
        if (w->out[i] != i) return 0;
    return 1;
}

TEST(boxpipe_every_box_in_order)
{
    /* budgets: units of 2x4x11 int32 = 352 B; 1 KiB: two buffers of 512 B
     * (overlap); 600 B: a unit does not fit half, one buffer; 1 MiB: one box */
    const uint64_t budgets[] = {1024, 704, 600, 4000, (uint64_t)1 << 20};
    const bool want_overlap[] = {true, true, false, true, false};
    for (size_t k = 0; k < sizeof budgets / sizeof budgets[0]; k++) {
        for (int tp = 0; tp < 2; tp++) {
            walk_ctx w;
            bool overlap;
            int nboxes;
            boxpipe_status st = walk(&w, budgets[k], tp, &overlap, &nboxes);
            CHECK(st == BOXPIPE_OK);
            CHECK(overlap == want_overlap[k]);
            CHECK(w.produced == nboxes && w.consumed == nboxes);
            CHECK(all_in_place(&w));
            CHECK(w.order_ok);
            CHECK(w.threads_ok);
            if (overlap) { /* the sides ran on two threads, the named one not the caller's */
                CHECK(!pthread_equal(w.produce_thread, w.consume_thread));
                CHECK(pthread_equal(tp ? w.consume_thread : w.produce_thread, pthread_self()));
                CHECK(nboxes > 1);
            } else {
                CHECK(pthread_equal(w.produce_thread, pthread_self()));
            }
            if (budgets[k] == 1024) CHECK(nboxes >= 8); /* boxes of one unit (352 B) */
        }
    }
}

TEST(boxpipe_failures_stop_the_walk)
{
    for (int tp = 0; tp < 2; tp++) {
        for (int at = 0; at < 4; at++) {
            walk_ctx w;
            bool overlap;
            int nboxes;
            boxes_t bx;
            CHECK(boxpipe_boxes(&bx, 3, SEL, COUNT, UNIT, 4, 1024));
            memset(&w, 0, sizeof w);
            static uint32_t out[NSEL];
            w.sel = SEL;
            w.out = out;
            w.nout = NSEL;
            w.threads_ok = w.order_ok = 1;
            w.fail_produce_at = at;
            w.fail_consume_at = -1;
            CHECK(boxpipe_run(&bx, true, tp, produce, consume, &w) == BOXPIPE_PRODUCE_FAILED);
            CHECK(w.produced == at && w.consumed <= at);
            CHECK(w.order_ok);

            CHECK(boxpipe_boxes(&bx, 3, SEL, COUNT, UNIT, 4, 1024));
            memset(&w, 0, sizeof w);
            w.sel = SEL;
            w.out = out;
            w.nout = NSEL;
            w.threads_ok = w.order_ok = 1;
            w.fail_produce_at = -1;
            w.fail_consume_at = at;
            CHECK(boxpipe_run(&bx, true, tp, produce, consume, &w) == BOXPIPE_CONSUME_FAILED);
            /* the producer is at most the two buffers ahead, then stops */
            CHECK(w.consumed == at && w.produced <= at + 2);
            (void)overlap;
            (void)nboxes;
        }
    }
}

TEST(boxpipe_box_sizes)
{
    /* (1024, 1024, 256) float32 in (16, 256, 256) chunks (4 MiB): 256 MiB
     * budget: boxes of 32 MiB, two buffers */
    zc_range sel[3] = {{0, 1024, 1}, {0, 1024, 1}, {0, 256, 1}};
    int64_t count[3] = {1024, 1024, 256}, unit[3] = {16, 256, 256};
    boxes_t bx;
    CHECK(boxpipe_boxes(&bx, 3, sel, count, unit, 4, (uint64_t)256 << 20));
    CHECK(bx.max_bytes == BOXPIPE_BOX);
    CHECK(bx.unit_bytes == (uint64_t)4 << 20);
    /* 40 MiB budget: half of it (20 MiB) holds 4 chunks: boxes of 16 MiB */
    CHECK(boxpipe_boxes(&bx, 3, sel, count, unit, 4, (uint64_t)40 << 20));
    CHECK(bx.max_bytes == (uint64_t)16 << 20);
    /* 6 MiB: a chunk does not fit half: one buffer, boxes of one chunk */
    CHECK(!boxpipe_boxes(&bx, 3, sel, count, unit, 4, (uint64_t)6 << 20));
    CHECK(bx.max_bytes == (uint64_t)4 << 20);
    /* 64 MiB chunks, 1 GiB budget: boxes of one chunk (above BOXPIPE_BOX) */
    int64_t big[3] = {256, 256, 256};
    CHECK(boxpipe_boxes(&bx, 3, sel, count, big, 4, (uint64_t)1 << 30));
    CHECK(bx.max_bytes == (uint64_t)64 << 20);
    /* the selection smaller than a box: one box, one buffer */
    zc_range small[3] = {{0, 16, 1}, {0, 256, 1}, {0, 256, 1}};
    int64_t scount[3] = {16, 256, 256};
    CHECK(!boxpipe_boxes(&bx, 3, small, scount, unit, 4, (uint64_t)256 << 20));
    CHECK(bx.max_bytes == (uint64_t)4 << 20);
}

/* The VmFlags line of /proc/self/smaps for the mapping holding p ("" if none). */
static void vmflags_of(const void *p, char *flags, size_t size)
{
    flags[0] = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return;
    char line[512];
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && !strncmp(line, "VmFlags:", 8)) {
            snprintf(flags, size, "%s", line + 8);
            break;
        }
    }
    fclose(f);
}

static int has_flag(const char *flags, const char *f)
{
    char pad[600];
    snprintf(pad, sizeof pad, " %s", flags);
    char want[8];
    snprintf(want, sizeof want, " %s ", f);
    char *nl = strchr(pad, '\n');
    if (nl) strcpy(nl, " ");
    return strstr(pad, want) != NULL;
}

TEST(bigbuf_huge_pages_only_for_large_buffers)
{
#ifndef MADV_HUGEPAGE
    SKIP("this system has no MADV_HUGEPAGE");
#else
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK))
        SKIP("this kernel has no transparent huge pages (/sys/kernel/mm/transparent_hugepage)");
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) SKIP("no /proc/self/smaps to read the advice back");
    fclose(f);
    char flags[512];
    unsigned char *big = bigbuf_alloc((size_t)5 << 20); /* 5 MiB: rounded up to 6, aligned to 2 */
    CHECK(big != NULL);
    if (!big) return;
    CHECK(((uintptr_t)big & (BIGBUF_HUGE_MIN - 1)) == 0);
    memset(big, 1, (size_t)5 << 20); /* usable to its end */
    vmflags_of(big, flags, sizeof flags);
    CHECK(flags[0] != 0);
    CHECK(has_flag(flags, "hg"));
    unsigned char *small = bigbuf_alloc(BIGBUF_HUGE_MIN - 1);
    CHECK(small != NULL);
    if (small) {
        memset(small, 2, BIGBUF_HUGE_MIN - 1);
        vmflags_of(small, flags, sizeof flags);
        CHECK(flags[0] != 0);
        CHECK(!has_flag(flags, "hg"));
    }
    unsigned char *tiny = bigbuf_alloc(0); /* at least one byte */
    CHECK(tiny != NULL);
    bigbuf_free(tiny);
    bigbuf_free(small);
    bigbuf_free(big);
    bigbuf_free(NULL);
    CHECK(bigbuf_alloc(SIZE_MAX - 4096) == NULL);
#endif
}
