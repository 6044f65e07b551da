/* tests/test_plan_rechunk.c — multistage rechunk plans (plan/rechunk_plan.h).
 *
 * The task memory projection is checked against a brute-force count of the source
 * chunks each output chunk overlaps; plans for random shapes, chunks and limits must
 * start at the source, end at the target, keep every stage under the limit, use one
 * stage when the direct copy fits, and refuse only below rechunk_plan_min_mem. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "plan/rechunk_plan.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* Worst case over output chunks of the number of source chunks overlapped, by enumeration. */
static size_t brute_task_mem(int ndim, const int64_t *shape, const int64_t *from, const int64_t *to, size_t itemsize)
{
    size_t worst = 0, fb = itemsize, tb = itemsize;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 0) return 0;
        int64_t nb = (shape[d] + to[d] - 1) / to[d], w = 0;
        for (int64_t j = 0; j < nb; j++) {
            int64_t s = j * to[d], e = s + to[d] < shape[d] ? s + to[d] : shape[d];
            int64_t c = (e - 1) / from[d] - s / from[d] + 1;
            if (c > w) w = c;
        }
        worst = d ? worst * (size_t)w : (size_t)w;
        fb *= (size_t)from[d];
        tb *= (size_t)to[d];
    }
    return worst * fb + tb;
}

static void check_plan(int ndim, const int64_t *shape, const int64_t *src, const int64_t *dst, size_t itemsize,
                       size_t max_mem, const rechunk_plan *p)
{
    CHECK(p->nstages >= 1 && p->nstages <= RECHUNK_MAX_STAGES);
    CHECK(!memcmp(p->chunks[0], src, (size_t)ndim * sizeof(int64_t)));
    CHECK(!memcmp(p->chunks[p->nstages], dst, (size_t)ndim * sizeof(int64_t)));
    for (int s = 0; s < p->nstages; s++) {
        size_t m = rechunk_task_mem(ndim, shape, p->chunks[s], p->chunks[s + 1], itemsize);
        size_t g = rechunk_copy_mem(ndim, shape, p->chunks[s], p->chunks[s + 1], itemsize);
        CHECK(p->task_mem[s] == (g <= max_mem ? g : m)); /* grouped copies when they fit */
        CHECK(m <= max_mem);
        if (s > 0)
            for (int d = 0; d < ndim; d++) CHECK(p->chunks[s][d] >= 1 && p->chunks[s][d] <= (shape[d] ? shape[d] : 1));
    }
}

TEST(task_mem_matches_brute_force)
{
    for (int it = 0; it < 3000; it++) {
        int ndim = (int)rnd_in(1, 3);
        int64_t shape[3], a[3], b[3];
        for (int d = 0; d < ndim; d++) {
            shape[d] = rnd_in(0, 60);
            a[d] = rnd_in(1, 70);
            b[d] = rnd_in(1, 70);
        }
        size_t got = rechunk_task_mem(ndim, shape, a, b, 4), want = brute_task_mem(ndim, shape, a, b, 4);
        if (got != want) {
            fprintf(stderr, "ndim %d shape %lld %lld %lld a %lld %lld %lld b %lld %lld %lld: %zu != %zu\n", ndim,
                    (long long)shape[0], (long long)shape[1], (long long)shape[2], (long long)a[0], (long long)a[1],
                    (long long)a[2], (long long)b[0], (long long)b[1], (long long)b[2], got, want);
            CHECK(got == want);
            return;
        }
    }
    /* long axes with misaligned chunks: exact where every residue occurs */
    int64_t shape[1] = {1000000007}, a[1] = {7}, b[1] = {10};
    CHECK(rechunk_task_mem(1, shape, a, b, 1) == 3 * 7 + 10);
    a[0] = 10;
    b[0] = 7;
    CHECK(rechunk_task_mem(1, shape, a, b, 1) == 2 * 10 + 7);
    a[0] = 5;
    b[0] = 10;
    CHECK(rechunk_task_mem(1, shape, a, b, 1) == 2 * 5 + 10);
}

TEST(task_mem_saturates)
{
    int64_t shape[3] = {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40};
    int64_t a[3] = {1, (int64_t)1 << 40, (int64_t)1 << 40}, b[3] = {(int64_t)1 << 40, 1, 1};
    CHECK(rechunk_task_mem(3, shape, a, b, 8) == SIZE_MAX);
    int64_t empty[3] = {0, 10, 10};
    CHECK(rechunk_task_mem(3, empty, a, b, 8) == 0);
}

TEST(direct_when_it_fits)
{
    int64_t shape[2] = {100, 100}, src[2] = {10, 100}, dst[2] = {100, 10};
    rechunk_plan p;
    size_t need = rechunk_task_mem(2, shape, src, dst, 8);
    CHECK(need == 10 * 10 * 100 * 8 + 100 * 10 * 8);
    CHECK_OK(rechunk_plan_make(2, shape, src, dst, 8, need, &p));
    CHECK(p.nstages == 1);
    check_plan(2, shape, src, dst, 8, need, &p);
    /* one byte less needs an intermediate */
    CHECK_OK(rechunk_plan_make(2, shape, src, dst, 8, need - 1, &p));
    CHECK(p.nstages >= 2);
    check_plan(2, shape, src, dst, 8, need - 1, &p);
    /* same chunks: one stage, one chunk in, one out */
    CHECK_OK(rechunk_plan_make(2, shape, src, src, 8, 2 * 8000, &p));
    CHECK(p.nstages == 1 && p.task_mem[0] == 2 * 8000);
}

TEST(random_plans_hold_the_bound)
{
    int ok = 0, multi = 0, refused = 0;
    for (int it = 0; it < 1500; it++) {
        int ndim = (int)rnd_in(1, 4);
        int64_t shape[4], src[4], dst[4];
        for (int d = 0; d < ndim; d++) {
            shape[d] = rnd_in(1, it % 3 ? 400 : 100000);
            src[d] = rnd_in(1, shape[d] + 3);
            dst[d] = rnd_in(1, shape[d] + 3);
            if (rnd() % 3 == 0) src[d] = shape[d] / rnd_in(1, 8) + 1;
            if (rnd() % 3 == 0) dst[d] = shape[d] / rnd_in(1, 8) + 1;
        }
        size_t itemsize = (size_t)1 << rnd_in(0, 3);
        size_t direct = rechunk_task_mem(ndim, shape, src, dst, itemsize);
        size_t sb = itemsize, db = itemsize;
        for (int d = 0; d < ndim; d++) {
            sb *= (size_t)src[d];
            db *= (size_t)dst[d];
        }
        size_t big = sb > db ? sb : db;
        /* limits from below the chunk size to above the direct copy */
        size_t max_mem = (size_t)((double)big * (0.8 + 6.0 * (double)(rnd() % 1000) / 1000.0));
        if (rnd() % 5 == 0) max_mem = direct;
        rechunk_plan p;
        int rc = rechunk_plan_make(ndim, shape, src, dst, itemsize, max_mem, &p);
        size_t min_mem = rechunk_plan_min_mem(ndim, shape, src, dst, itemsize);
        CHECK(min_mem <= direct);
        if (rc == 0) {
            ok++;
            multi += p.nstages > 1;
            check_plan(ndim, shape, src, dst, itemsize, max_mem, &p);
            if (direct <= max_mem) CHECK(p.nstages == 1);
            CHECK(min_mem <= max_mem);
        } else {
            refused++;
            CHECK(rc == ZC_EMEMBOUND);
            CHECK(strstr(zc_errmsg(), "allowed") != NULL);
            CHECK(min_mem > max_mem);
            CHECK(direct > max_mem);
        }
    }
    printf("%d planned (%d multistage), %d refused\n", ok, multi, refused);
    CHECK(ok > 500 && multi > 100 && refused > 50);
}

/* A memo shared by many plans (more geometries than it keeps, each planned
 * again under other budgets after others evicted it or not) gives exactly the
 * plans and refusals planning without one does. */
TEST(memo_plans_as_without)
{
    rechunk_memo *memo = rechunk_memo_new();
    CHECK(memo != NULL);
    int64_t shape[20][3], src[20][3], dst[20][3];
    for (int g = 0; g < 20; g++) /* time series to maps, and back: multistage under a few MiB */
        for (int d = 0; d < 3; d++) {
            shape[g][d] = rnd_in(200, 3000);
            int64_t small = rnd_in(1, 16), large = rnd_in(shape[g][d] / 2, shape[g][d]);
            src[g][d] = d == 0 ? small : d == 1 ? large : rnd_in(1, 64);
            dst[g][d] = d == 0 ? large : d == 1 ? small : rnd_in(1, 64);
            if (g % 2) {
                int64_t t = src[g][d];
                src[g][d] = dst[g][d];
                dst[g][d] = t;
            }
        }
    int multi = 0;
    for (int it = 0; it < 400; it++) {
        int g = it < 200 ? it % 20 : (int)rnd_in(0, 19); /* in order (evicting), then at random */
        size_t max_mem = (size_t)rnd_in(1, 32) << 20;
        rechunk_plan a, b;
        int ra = rechunk_plan_make(3, shape[g], src[g], dst[g], 8, max_mem, &a);
        char ea[1024];
        snprintf(ea, sizeof ea, "%s", ra < 0 ? zc_errmsg() : "");
        int rb = rechunk_plan_make_in(memo, 3, shape[g], src[g], dst[g], 8, max_mem, &b);
        CHECK(ra == rb);
        if (ra == 0) {
            CHECK(memcmp(&a, &b, sizeof a) == 0);
            multi += a.nstages > 1;
        } else {
            CHECK(strcmp(ea, zc_errmsg()) == 0);
        }
    }
    rechunk_memo_free(memo);
    printf("400 plans alike with and without the memo, %d multistage\n", multi);
    CHECK(multi > 100);
}

TEST(min_mem_is_exact)
{
    for (int it = 0; it < 300; it++) {
        int ndim = (int)rnd_in(1, 3);
        int64_t shape[3], src[3], dst[3];
        for (int d = 0; d < ndim; d++) {
            shape[d] = rnd_in(1, 3000);
            src[d] = rnd_in(1, shape[d]);
            dst[d] = rnd_in(1, shape[d]);
        }
        size_t m = rechunk_plan_min_mem(ndim, shape, src, dst, 4);
        CHECK(m > 0 && m != SIZE_MAX);
        rechunk_plan p;
        CHECK_OK(rechunk_plan_make(ndim, shape, src, dst, 4, m, &p));
        check_plan(ndim, shape, src, dst, 4, m, &p);
        CHECK_ERR(rechunk_plan_make(ndim, shape, src, dst, 4, m - 1, &p), ZC_EMEMBOUND, "needs");
    }
}

/* When on every axis one chunk size divides the other, twice the larger chunk is
 * enough (two copies: split the shrinking axes, then gather the growing ones). The
 * planner may spend more stages to read less, but not many more. */
TEST(aligned_fits_in_two_stages)
{
    int hist[RECHUNK_MAX_STAGES + 1] = {0};
    for (int it = 0; it < 500; it++) {
        int ndim = (int)rnd_in(1, 4);
        int64_t shape[4], src[4], dst[4];
        size_t sb = 8, db = 8;
        for (int d = 0; d < ndim; d++) {
            int64_t base = rnd_in(1, 12), fs = rnd_in(1, 12), fd = rnd_in(1, 12);
            src[d] = base * fs;
            dst[d] = base * fd;
            if (rnd() & 1) dst[d] = base; /* one divides the other */
            else src[d] = base;
            int64_t big = src[d] > dst[d] ? src[d] : dst[d];
            shape[d] = big * rnd_in(1, 20) + rnd_in(0, big - 1);
            sb *= (size_t)src[d];
            db *= (size_t)dst[d];
        }
        size_t max_mem = 2 * (sb > db ? sb : db);
        rechunk_plan p;
        CHECK_OK(rechunk_plan_make(ndim, shape, src, dst, 8, max_mem, &p));
        CHECK(p.nstages <= 4);
        hist[p.nstages]++;
        check_plan(ndim, shape, src, dst, 8, max_mem, &p);
    }
    printf("stages: 1: %d, 2: %d, 3: %d, 4+: %d\n", hist[1], hist[2], hist[3], hist[4] + hist[5] + hist[6]);
}

static void print_plan(const char *what, int ndim, const rechunk_plan *p)
{
    printf("%s: %d stage(s)\n", what, p->nstages);
    for (int s = 0; s <= p->nstages; s++) {
        printf("  (");
        for (int d = 0; d < ndim; d++) printf("%s%lld", d ? "," : "", (long long)p->chunks[s][d]);
        if (s < p->nstages) printf(")  -> task %.1f MB\n", (double)p->task_mem[s] / 1e6);
        else printf(")\n");
    }
}

/* ERA5-like: time-chunked (10,1,987,1920) float64 to space-chunked (1000,1,100,100). */
TEST(era5_time_to_space)
{
    int64_t shape[4] = {1000, 1, 987, 1920}, src[4] = {10, 1, 987, 1920}, dst[4] = {1000, 1, 100, 100};
    rechunk_plan p;
    size_t limits[] = {500000000, (size_t)500 << 20, 1000000000, (size_t)4 << 30};
    for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++) {
        CHECK_OK(rechunk_plan_make(4, shape, src, dst, 8, limits[k], &p));
        check_plan(4, shape, src, dst, 8, limits[k], &p);
        CHECK(p.nstages >= 2 && p.nstages <= 3);
        char what[64];
        snprintf(what, sizeof what, "ERA5 at %.0f MB", (double)limits[k] / 1e6);
        print_plan(what, 4, &p);
    }
    /* a source chunk alone is 151.6 MB */
    CHECK_ERR(rechunk_plan_make(4, shape, src, dst, 8, 100000000, &p), ZC_EMEMBOUND, "allowed 100.0 MB");
    printf("%s\n", zc_errmsg());
    CHECK(strstr(zc_errmsg(), "(10,1,987,1920)") && strstr(zc_errmsg(), "(1000,1,100,100)"));
    CHECK(strstr(zc_errmsg(), "one is 151.6 MB") && strstr(zc_errmsg(), "smaller source chunks"));
    CHECK(p.nstages == 0);
    size_t m = rechunk_plan_min_mem(4, shape, src, dst, 8);
    CHECK(m > 151603200 && m < 200000000);
    CHECK_OK(rechunk_plan_make(4, shape, src, dst, 8, m, &p));
    print_plan("ERA5 at its minimum", 4, &p);
    /* and back: space-chunked to time-chunked */
    CHECK_OK(rechunk_plan_make(4, shape, dst, src, 8, 500000000, &p));
    check_plan(4, shape, dst, src, 8, 500000000, &p);
    print_plan("ERA5 back at 500 MB", 4, &p);
}

/* rechunker's classic: (1e6, 1) <-> (1, 1e6) rows to columns. */
TEST(transpose_like_rechunk)
{
    int64_t shape[2] = {1000000, 1000000}, src[2] = {1000000, 1}, dst[2] = {1, 1000000};
    rechunk_plan p;
    CHECK_OK(rechunk_plan_make(2, shape, src, dst, 8, 100000000, &p));
    check_plan(2, shape, src, dst, 8, 100000000, &p);
    CHECK(p.nstages >= 2 && p.nstages <= 6);
    print_plan("rows to columns at 100 MB", 2, &p);
    CHECK_OK(rechunk_plan_make(2, shape, src, dst, 8, 20000000, &p));
    check_plan(2, shape, src, dst, 8, 20000000, &p);
    print_plan("rows to columns at 20 MB", 2, &p);
}

TEST(refusals)
{
    int64_t shape[2] = {1000, 1000}, src[2] = {1000, 100}, dst[2] = {100, 1000};
    rechunk_plan p;
    /* source chunk (800 kB) larger than the limit */
    CHECK_ERR(rechunk_plan_make(2, shape, src, dst, 8, 500000, &p), ZC_EMEMBOUND, "smaller source chunks");
    CHECK(strstr(zc_errmsg(), "allowed 500.0 kB"));
    /* small source chunks, large target: the target chunk does not fit twice */
    int64_t s2[2] = {10, 10};
    CHECK_ERR(rechunk_plan_make(2, shape, s2, dst, 8, 1000000, &p), ZC_EMEMBOUND, "smaller target chunks");
    /* neither alone: beyond the stages the planner allows */
    int64_t lshape[2] = {(int64_t)1 << 40, (int64_t)1 << 40}, ls[2] = {(int64_t)1 << 20, 1}, ld[2] = {1, (int64_t)1 << 20};
    CHECK_ERR(rechunk_plan_make(2, lshape, ls, ld, 1, ((size_t)1 << 20) + 1, &p), ZC_EMEMBOUND, "at best");
    /* bad arguments */
    CHECK_ERR(rechunk_plan_make(0, shape, src, dst, 8, 1 << 30, &p), ZC_EINVAL, "ndim");
    CHECK_ERR(rechunk_plan_make(33, shape, src, dst, 8, 1 << 30, &p), ZC_EINVAL, "ndim");
    CHECK_ERR(rechunk_plan_make(2, shape, src, dst, 0, 1 << 30, &p), ZC_EINVAL, "item size");
    int64_t zero[2] = {0, 10}, neg[2] = {-1, 10};
    CHECK_ERR(rechunk_plan_make(2, shape, zero, dst, 8, 1 << 30, &p), ZC_EINVAL, "source chunks[0]");
    CHECK_ERR(rechunk_plan_make(2, shape, src, zero, 8, 1 << 30, &p), ZC_EINVAL, "target chunks[0]");
    CHECK_ERR(rechunk_plan_make(2, neg, src, dst, 8, 1 << 30, &p), ZC_EINVAL, "shape[0]");
    CHECK_ERR(rechunk_plan_make(2, shape, src, dst, 8, 1 << 30, NULL), ZC_EINVAL, NULL);
    CHECK(rechunk_plan_min_mem(0, shape, src, dst, 8) == SIZE_MAX);
    /* an empty array needs nothing */
    int64_t empty[2] = {0, 1000};
    CHECK_OK(rechunk_plan_make(2, empty, src, dst, 8, 1, &p));
    CHECK(p.nstages == 1 && p.task_mem[0] == 0);
    CHECK(rechunk_plan_min_mem(2, empty, src, dst, 8) == 0);
}
