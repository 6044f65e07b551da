/* tests/test_compute_plan.c — the plan as an object (zc_plan_*): made once and
 * executed many times; saved with its operations, so workers in other
 * processes with other thread counts run exactly the planned tasks; graphs left
 * unchanged by planning and shared by threads; tampered or foreign plans refused. */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "harness.h"

/* The values of a float64 array (malloc'd). */
static double *values(zc_array *a, size_t n)
{
    double *v = malloc(n * sizeof(double) + 8);
    zc_spec s = spec_mem(256);
    CHECK_OK(zc_compute_buffer(&s, a, v, n * sizeof(double), NULL));
    return v;
}

static double *read_all(zc_store *st, const char *path, size_t n)
{
    zc_zarr *z;
    double *v = calloc(n + 1, sizeof(double));
    CHECK_OK(zc_zarr_open(st, path, &z));
    CHECK_OK(zc_zarr_read(z, NULL, v, n * sizeof(double)));
    zc_zarr_close(z);
    return v;
}

static int nops_of(const zc_plan *p)
{
    int n = -1;
    CHECK_OK(zc_plan_ops(p, &n));
    return n;
}

static char *plan_text(const zc_plan *p)
{
    char *j = NULL;
    CHECK_OK(zc_plan_to_json(p, &j));
    return j;
}

static void remove_dir(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

TEST(plan_made_once_executes_twice_the_same)
{
    int64_t shape[2] = {600, 90}, chunks[2] = {50, 90}, rch[2] = {600, 10};
    zc_array *u, *sq, *m, *r;
    CHECK_OK(zc_random_uniform(7, 2, shape, chunks, ZC_FLOAT64, -1, 1, &u));
    sq = binop("multiply", u, u);
    int axis = 0;
    CHECK_OK(zc_reduce("mean", sq, &axis, 1, 0, 0, &m));
    CHECK_OK(zc_rechunk(sq, rch, &r));
    zc_store *st;
    CHECK_OK(zc_store_open("memory://plan-twice", ZC_STORE_CREATE, &st));
    zc_target t[2] = {{st, "m", NULL, 3}, {st, "r", NULL, 3}};
    zc_array *outs[2] = {m, r};
    zc_spec sp = spec_mem(16);
    zc_plan *p;
    CHECK_OK(zc_plan_create(&sp, 2, outs, t, &p));
    char *rj = NULL;
    CHECK_ERR(zc_plan_report(p, &rj), ZC_EINVAL, "not been executed");
    CHECK(nops_of(p) >= 2);
    double *first[2], *again[2];
    size_t len[2] = {90, 600 * 90};
    CHECK_OK(zc_plan_execute(p, NULL, ZC_PLAN_ALL, 0, -1));
    for (int i = 0; i < 2; i++) first[i] = read_all(st, t[i].path, len[i]);
    /* a second execution, on other threads and sequentially */
    zc_spec run = sp;
    run.executor = "sequential";
    CHECK_OK(zc_plan_execute(p, &run, ZC_PLAN_ALL, 0, -1));
    for (int i = 0; i < 2; i++) {
        again[i] = read_all(st, t[i].path, len[i]);
        CHECK(!memcmp(first[i], again[i], len[i] * sizeof(double)));
    }
    /* and the values are right */
    double *sv = values(sq, 600 * 90);
    CHECK(!memcmp(sv, first[1], sizeof(double) * 600 * 90));
    for (int j = 0; j < 90; j++) {
        double s = 0;
        for (int i = 0; i < 600; i++) s += sv[i * 90 + j];
        CHECK(first[0][j] > s / 600 - 1e-12 && first[0][j] < s / 600 + 1e-12);
    }
    CHECK_OK(zc_plan_report(p, &rj));
    CHECK(rj && strstr(rj, "measured_mem"));
    zc_free(rj);
    /* one operation alone needs a written plan (its arrays and work directory) */
    CHECK_ERR(zc_plan_execute(p, NULL, 0, 0, -1), ZC_EINVAL, "zc_plan_write");
    CHECK_ERR(zc_plan_execute(p, NULL, nops_of(p), 0, -1), ZC_EINVAL, "operations");
    /* a plan without targets is described, not executed: the same operations,
     * its projections those of files (the memory store of p's targets keeps each
     * chunk written in the task's memory: plan_write_model) */
    zc_plan *q;
    CHECK_OK(zc_plan_create(&sp, 2, outs, NULL, &q));
    char *a = plan_text(p), *b = plan_text(q);
    json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL);
    json_t *oa = json_object_get(ja, "operations"), *ob = json_object_get(jb, "operations");
    CHECK(json_array_size(oa) >= 2 && json_array_size(oa) == json_array_size(ob));
    for (size_t k = 0; k < json_array_size(oa); k++) {
        json_t *x = json_array_get(oa, k), *y = json_array_get(ob, k);
        CHECK(json_equal(json_object_get(x, "name"), json_object_get(y, "name")));
        CHECK(json_equal(json_object_get(x, "chunks"), json_object_get(y, "chunks")));
        CHECK(json_equal(json_object_get(x, "tasks"), json_object_get(y, "tasks")));
        json_int_t px = json_integer_value(json_object_get(x, "projected_mem")),
                   py = json_integer_value(json_object_get(y, "projected_mem"));
        /* an output kept in memory costs its chunk more; the rest is the same */
        CHECK(json_is_true(json_object_get(x, "output")) ? px > py : px == py);
    }
    json_decref(ja);
    json_decref(jb);
    zc_free(a);
    zc_free(b);
    CHECK_ERR(zc_plan_execute(q, NULL, ZC_PLAN_ALL, 0, -1), ZC_EINVAL, "without targets");
    zc_plan_free(q);
    zc_plan_free(p);
    zc_plan_free(NULL);
    for (int i = 0; i < 2; i++) {
        free(first[i]);
        free(again[i]);
    }
    free(sv);
    zc_array *all[] = {u, sq, m, r};
    for (int i = 0; i < 4; i++) zc_array_release(all[i]);
    zc_store_close(st);
}

TEST(one_graph_planned_under_two_bounds_gives_two_valid_plans)
{
    /* rows -> columns of a 2000 x 2000 float64 array: under 10 MB per task the
     * copy goes through intermediates; under 512 MB it is one copy. Planning
     * never changes the graph, so the order of the two plans does not matter
     * (before plans owned their graph, the first plan's chain stayed in it). */
    int64_t shape[2] = {2000, 2000}, rows[2] = {10, 2000}, cols[2] = {2000, 10};
    zc_array *a, *r;
    CHECK_OK(zc_random_uniform(3, 2, shape, rows, ZC_FLOAT64, 0, 1, &a));
    CHECK_OK(zc_rechunk(a, cols, &r));
    zc_spec small = spec_mem(10), big = spec_mem(512);
    zc_plan *ps, *pb, *ps2;
    CHECK_OK(zc_plan_create(&small, 1, &r, NULL, &ps));
    CHECK_OK(zc_plan_create(&big, 1, &r, NULL, &pb));
    CHECK_OK(zc_plan_create(&small, 1, &r, NULL, &ps2));
    CHECK(nops_of(ps) >= 2);
    CHECK(nops_of(pb) == 1);
    char *s1 = plan_text(ps), *s2 = plan_text(ps2);
    CHECK(s1 && s2 && !strcmp(s1, s2)); /* the same graph and bound: the same plan */
    zc_free(s1);
    zc_free(s2);
    int64_t ch[2];
    CHECK_OK(zc_array_info(r, NULL, NULL, ch, NULL));
    CHECK(ch[0] == 2000 && ch[1] == 10);
    /* both plans compute the array (zc_compute plans under its own bound each time) */
    size_t n = 2000 * 2000;
    double *want = values(a, n);
    zc_store *st;
    CHECK_OK(zc_store_open("memory://two-bounds", ZC_STORE_CREATE, &st));
    zc_target t = {st, "r", "lz4", 3};
    zc_spec bounds[2] = {small, big};
    for (int i = 0; i < 2; i++) {
        zc_report *rep = NULL;
        CHECK_OK(zc_compute(&bounds[i], 1, &r, &t, &rep));
        json_t *j = report_checked(rep);
        size_t nop = json_array_size(json_object_get(j, "operations"));
        CHECK(i == 0 ? nop >= 2 : nop == 1);
        json_decref(j);
        double *got = read_all(st, "r", n);
        CHECK(!memcmp(want, got, n * sizeof(double)));
        free(got);
    }
    free(want);
    zc_plan_free(ps);
    zc_plan_free(pb);
    zc_plan_free(ps2);
    zc_array_release(r);
    zc_array_release(a);
    zc_store_close(st);
}

/* A worker in another process: load the plan, write the plan it sees to a file,
 * run tasks [first, last) of an operation on `threads` threads.
 * args: plan, op, first, last, threads, json out. */
CHILD(plan_slice)
{
    if (argc != 6) return 2;
    zc_plan *p;
    if (zc_plan_load(argv[0], &p) < 0) {
        fprintf(stderr, "child: %s\n", zc_errmsg());
        return 1;
    }
    char *j = NULL;
    FILE *f = fopen(argv[5], "w");
    int ok = f && zc_plan_to_json(p, &j) == 0 && fputs(j, f) >= 0;
    if (f) fclose(f);
    zc_free(j);
    zc_spec run = ZC_SPEC_INIT;
    run.nthreads = atoi(argv[4]);
    if (ok && zc_plan_execute(p, &run, atoi(argv[1]), atoll(argv[2]), atoll(argv[3])) < 0) {
        fprintf(stderr, "child: %s\n", zc_errmsg());
        ok = 0;
    }
    zc_plan_free(p);
    return ok ? 0 : 1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strdup(buf);
}

/* copy_block and tasks of operation 0 of a plan's JSON */
static int64_t op0_tasks(const char *pj, int64_t *cb)
{
    json_t *p = json_loads(pj, 0, NULL);
    json_t *op = json_array_get(json_object_get(p, "operations"), 0), *c = json_object_get(op, "copy_block");
    cb[0] = 0;
    for (size_t d = 0; d < json_array_size(c); d++) cb[d] = json_integer_value(json_array_get(c, d));
    int64_t t = json_integer_value(json_object_get(op, "tasks"));
    json_decref(p);
    return t;
}

TEST(saved_plan_runs_the_planned_tasks_whatever_the_threads)
{
    /* a copy from time chunks (blosc, read by parts) to space chunks runs as a
     * single-pass sliced copy whose blocks the planner fits to the thread count */
    char dir[] = "/tmp/zc_plan_slices_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    int64_t shape[3] = {32, 1024, 256}, src[3] = {4, 1024, 256}, dst[3] = {32, 64, 64};
    zc_array *u, *sb, *rb;
    CHECK_OK(zc_random_uniform(21, 3, shape, src, ZC_FLOAT64, 0, 1, &u));
    zc_store *st;
    CHECK_OK(zc_store_open(dir, ZC_STORE_CREATE, &st));
    zc_target tb = {st, "srcb", "blosc:lz4:5:shuffle", 2}, td = {st, "dst", "lz4", 3};
    zc_spec sp = spec_mem(96);
    CHECK_OK(zc_compute(&sp, 1, &u, &tb, NULL));
    CHECK_OK(zc_from_zarr(st, "srcb", &sb));
    CHECK_OK(zc_rechunk(sb, dst, &rb));
    /* what one process plans depends on its thread count: a worker that planned
     * again with its own would run other tasks under the same numbers */
    sp = spec_mem(64);
    char work[600];
    snprintf(work, sizeof work, "%s/work", dir); /* a saved plan's work dir is the caller's to remove */
    sp.work_dir = work;
    zc_plan *p1, *p4;
    sp.nthreads = 1;
    CHECK_OK(zc_plan_create(&sp, 1, &rb, &td, &p1));
    sp.nthreads = 8;
    CHECK_OK(zc_plan_create(&sp, 1, &rb, &td, &p4));
    char *j1 = plan_text(p1), *j4 = plan_text(p4);
    int64_t cb1[3], cb4[3], n1 = op0_tasks(j1, cb1), n4 = op0_tasks(j4, cb4);
    CHECK(nops_of(p1) == 1 && cb1[0] > 0 && cb4[0] > 0);
    CHECK(n1 != n4 && memcmp(cb1, cb4, sizeof cb1)); /* fitted to 1 and to 8 threads */
    zc_free(j4);
    zc_plan_free(p4);
    /* the plan fitted to one thread, saved, run by two processes on 1 and 3 threads */
    char path[600], out0[600], out1[600];
    snprintf(path, sizeof path, "%s/plan.json", dir);
    snprintf(out0, sizeof out0, "%s/seen0.json", dir);
    snprintf(out1, sizeof out1, "%s/seen1.json", dir);
    CHECK_OK(zc_plan_write(p1, path));
    char half[32], end[32];
    snprintf(half, sizeof half, "%lld", (long long)(n1 / 2));
    snprintf(end, sizeof end, "%lld", (long long)n1);
    const char *a0[] = {path, "0", "0", half, "1", out0, NULL}, *a1[] = {path, "0", half, end, "3", out1, NULL};
    CHECK(harness_run_child("plan_slice", a0) == 0);
    CHECK(harness_run_child("plan_slice", a1) == 0);
    char *s0 = slurp(out0), *s1 = slurp(out1);
    CHECK(s0 && s1 && !strcmp(s0, j1) && !strcmp(s1, j1)); /* the same operations and task grids */
    free(s0);
    free(s1);
    zc_free(j1);
    size_t n = 32 * 1024 * 256;
    double *want = values(u, n), *got = read_all(st, "dst", n);
    CHECK(!memcmp(want, got, n * sizeof(double)));
    free(want);
    free(got);
    /* zc_plan_run (zcube worker) runs the same slices */
    CHECK_OK(zc_plan_run(path, 0, 0, 1, 2));
    CHECK_ERR(zc_plan_run(path, 1, 0, -1, 2), ZC_EINVAL, "operations");
    zc_plan_free(p1);
    zc_array_release(rb);
    zc_array_release(sb);
    zc_array_release(u);
    zc_store_close(st);
    remove_dir(dir);
}

/* ---- two threads planning and computing graphs that share nodes ---- */

typedef struct {
    zc_array *shared;   /* the nodes both graphs use */
    int which;
    const double *want; /* expected values of the result */
    size_t n;
    int failures;
} share_job;

static void *share_thread(void *arg)
{
    share_job *j = arg;
    for (int it = 0; it < 4; it++) {
        zc_array *res = NULL;
        int axis = 1;
        if (j->which == 0) {
            zc_array *args[1] = {j->shared};
            zc_array *e = NULL;
            if (zc_elementwise("exp", 1, args, &e) < 0 || zc_reduce("sum", e, &axis, 1, 0, 0, &res) < 0) j->failures++;
            zc_array_release(e);
        } else {
            int64_t ch[2] = {400, 5};
            if (zc_rechunk(j->shared, ch, &res) < 0) j->failures++;
        }
        zc_spec sp = spec_mem(it % 2 ? 4 : 64); /* two bounds: one plan each */
        sp.nthreads = 2;
        double *got = malloc(j->n * sizeof(double));
        zc_plan *p = NULL;
        if (!res || zc_plan_create(&sp, 1, &res, NULL, &p) < 0 ||
            zc_compute_buffer(&sp, res, got, j->n * sizeof(double), NULL) < 0) {
            fprintf(stderr, "thread %d: %s\n", j->which, zc_errmsg());
            j->failures++;
        } else {
            for (size_t i = 0; i < j->n; i++) /* sums of 40 exps: the order of additions may differ */
                if (got[i] != j->want[i] && !(got[i] - j->want[i] < 1e-9 && j->want[i] - got[i] < 1e-9)) {
                    j->failures++;
                    break;
                }
        }
        zc_plan_free(p);
        free(got);
        zc_array_release(res);
    }
    return NULL;
}

TEST(threads_plan_and_compute_graphs_sharing_nodes)
{
    int64_t shape[2] = {400, 40}, chunks[2] = {25, 40};
    zc_array *x, *y, *sq;
    CHECK_OK(zc_random_uniform(5, 2, shape, chunks, ZC_FLOAT64, 0, 1, &x));
    CHECK_OK(zc_random_uniform(6, 2, shape, chunks, ZC_FLOAT64, 0, 1, &y));
    sq = binop("multiply", x, y); /* shared by both threads' graphs */
    double *w1 = values(sq, 400 * 40), w0[400];
    for (int i = 0; i < 400; i++) {
        double acc = 0;
        for (int k = 0; k < 40; k++) acc += exp(w1[i * 40 + k]);
        w0[i] = acc;
    }
    share_job jobs[2] = {{sq, 0, w0, 400, 0}, {sq, 1, w1, 400 * 40, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) CHECK(pthread_create(&th[i], NULL, share_thread, &jobs[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(jobs[0].failures == 0 && jobs[1].failures == 0);
    int64_t ch[2];
    CHECK_OK(zc_array_info(sq, NULL, NULL, ch, NULL));
    CHECK(ch[0] == 25 && ch[1] == 40);
    free(w1);
    zc_array_release(sq);
    zc_array_release(y);
    zc_array_release(x);
}

/* ---- saved plans from elsewhere ---- */

/* Replace the first `from` in the file at src by `to`, into dst; whether found. */
static bool edit(const char *src, const char *dst, const char *from, const char *to)
{
    char *t = slurp(src), *k = t ? strstr(t, from) : NULL;
    FILE *f = k ? fopen(dst, "wb") : NULL;
    if (f) {
        fwrite(t, 1, (size_t)(k - t), f);
        fputs(to, f);
        fputs(k + strlen(from), f);
        fclose(f);
    }
    free(t);
    return f != NULL;
}

TEST(tampered_and_foreign_plans_are_refused)
{
    char dir[] = "/tmp/zc_plan_bad_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    int64_t shape[2] = {300, 70}, chunks[2] = {16, 70}, rch[2] = {300, 7};
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    zc_array *u, *sq, *m, *r;
    CHECK_OK(zc_random_uniform(9, 2, shape, chunks, ZC_FLOAT64, 0, 1, &u));
    sq = binop("multiply", u, u);
    int axis = 0;
    CHECK_OK(zc_reduce("sum", sq, &axis, 1, 0, 0, &m));
    CHECK_OK(zc_rechunk(sq, rch, &r));
    zc_array *outs[2] = {m, r};
    zc_target t[2] = {{st, "m", NULL, 3}, {st, "r", NULL, 3}};
    zc_spec sp = spec_mem(4);
    char work[600], path[600], bad[600];
    snprintf(work, sizeof work, "%s/work", dir);
    snprintf(path, sizeof path, "%s/plan.json", dir);
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    sp.work_dir = work;
    zc_plan *p, *q = NULL;
    CHECK_OK(zc_plan_create(&sp, 2, outs, t, &p));
    CHECK_OK(zc_plan_write(p, path));
    CHECK_OK(zc_plan_load(path, &q));
    char *a = plan_text(p), *b = plan_text(q);
    CHECK(a && b && !strcmp(a, b)); /* loaded as saved */
    zc_free(a);
    zc_free(b);
    zc_plan_free(q);
    /* an edit without a new checksum */
    CHECK(edit(path, bad, "\"allowed_mem\": ", "\"allowed_mem\": 1"));
    CHECK_ERR(zc_plan_load(bad, &q), ZC_EFORMAT, "changed after it was saved");
    CHECK(q == NULL);
    /* another version or plan format; no checksum */
    CHECK(edit(path, bad, "\"zcube_version\": \"", "\"zcube_version\": \"9"));
    CHECK_ERR(zc_plan_load(bad, &q), ZC_EFORMAT, "saved by zcube 9");
    CHECK(edit(path, bad, "\"zcube_plan\": 2", "\"zcube_plan\": 1"));
    CHECK_ERR(zc_plan_load(bad, &q), ZC_EFORMAT, "plan format 1");
    CHECK(edit(path, bad, "\"checksum\"", "\"check\""));
    CHECK_ERR(zc_plan_load(bad, &q), ZC_EFORMAT, "checksum missing");
    /* not a plan at all */
    write_text(bad, "{\"operations\": []}");
    CHECK_ERR(zc_plan_load(bad, &q), ZC_EFORMAT, "not a zcube plan");
    write_text(bad, "[1, 2]");
    CHECK_ERR(zc_plan_load(bad, &q), ZC_EFORMAT, "not a zcube plan");
    write_text(bad, "{\"zcube_plan\": ");
    CHECK_ERR(zc_plan_load(bad, &q), ZC_EFORMAT, "line");
    CHECK_ERR(zc_plan_load("/nonexistent/plan.json", &q), ZC_EFORMAT, "plan");
    /* edits with a checksum made to match: the operations are still checked
     * against their nodes */
    struct {
        const char *from, *to, *msg;
    } cases[] = {
        {"\"tasks\": ", "\"tasks\": 1", "tasks"},                  /* an operation's task count */
        {"\"node\": ", "\"node\": 99999, \"was\": ", "malformed"},  /* no such node */
        {"\"group\": -1", "\"group\": 7", "malformed"},             /* a group after it */
        {"\"target\": -1", "\"target\": 5", "malformed"},           /* no such target */
        {"\"memory_limit\": ", "\"memory_limit\": 1", "disagree"},  /* limit vs spec */
        {"\"projected_mem\": ", "\"projected_mem\": 9", "over allowed_mem"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK(edit(path, bad, cases[i].from, cases[i].to));
        CHECK(plan_resign(bad) == 0);
        CHECK_ERR(zc_plan_load(bad, &q), ZC_EFORMAT, cases[i].msg);
        CHECK(q == NULL);
    }
    /* the saved plan itself still runs, op by op, and gives zc_compute's values */
    CHECK_OK(zc_plan_load(path, &q));
    int nops = nops_of(q);
    for (int op = 0; op < nops; op++) {
        int64_t tasks = -1;
        CHECK_OK(zc_plan_op_tasks(q, op, &tasks));
        CHECK(tasks >= 0);
        CHECK_OK(zc_plan_execute(q, NULL, op, 0, tasks / 2));
        CHECK_OK(zc_plan_execute(q, NULL, op, tasks / 2, -1));
    }
    zc_plan_free(q);
    double *got = read_all(st, "r", 300 * 70), *want = values(sq, 300 * 70);
    CHECK(!memcmp(got, want, sizeof(double) * 300 * 70));
    free(got);
    free(want);
    zc_plan_free(p);
    zc_array *all[] = {u, sq, m, r};
    for (int i = 0; i < 4; i++) zc_array_release(all[i]);
    zc_store_close(st);
    remove_dir(dir);
}

TEST(reserved_mem_zero_is_automatic_in_the_library)
{
    /* the same default as the command line: an eighth of allowed_mem, at most 64 MiB */
    zc_array *a;
    CHECK_OK(zc_arange(0, 1000, 1, ZC_FLOAT64, 100, &a));
    size_t allowed[3] = {(size_t)16 << 20, (size_t)512 << 20, (size_t)2 << 30};
    size_t limit[3] = {((size_t)16 << 20) - ((size_t)2 << 20), ((size_t)512 << 20) - ((size_t)64 << 20),
                       ((size_t)2 << 30) - ((size_t)64 << 20)};
    for (int i = 0; i < 3; i++) {
        zc_spec s = ZC_SPEC_INIT;
        CHECK(s.reserved_mem == 0);
        s.allowed_mem = allowed[i];
        zc_plan *p;
        CHECK_OK(zc_plan_create(&s, 1, &a, NULL, &p));
        char *j = plan_text(p);
        json_t *doc = json_loads(j, 0, NULL);
        CHECK((size_t)json_integer_value(json_object_get(doc, "memory_limit")) == limit[i]);
        json_decref(doc);
        zc_free(j);
        zc_plan_free(p);
    }
    zc_array_release(a);
}
