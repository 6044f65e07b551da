/* tests/test_compute_worker.c — a saved plan run in slices (as workers would)
 * gives the same result as zc_compute. */
#include <unistd.h>

#include "harness.h"

static void remove_dir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

TEST(saved_plan_runs_in_slices)
{
    char dir[] = "/tmp/zc_worker_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[600];
    /* a source array on disk */
    zc_store *st;
    CHECK_OK(zc_store_open(dir, 0, &st));
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 2;
    o.shape[0] = 300; o.shape[1] = 70;
    o.chunks[0] = 16; o.chunks[1] = 70;
    o.dtype = ZC_FLOAT64;
    zc_zarr *z;
    CHECK_OK(zc_zarr_create(st, "u", &o, &z));
    static double u[300 * 70];
    for (int i = 0; i < 300 * 70; i++) u[i] = (double)(i % 97) - 40.0;
    CHECK_OK(zc_zarr_write(z, NULL, u, sizeof u));
    zc_zarr_close(z);
    /* mean(u*u, axis=0), then rechunked: several operations */
    zc_array *a, *sq, *m;
    CHECK_OK(zc_from_zarr(st, "u", &a));
    zc_array *args[2] = {a, a};
    CHECK_OK(zc_elementwise("multiply", 2, args, &sq));
    int axis = 0;
    CHECK_OK(zc_reduce("mean", sq, &axis, 1, 0, 0, &m));
    zc_spec spec = ZC_SPEC_INIT;
    snprintf(path, sizeof path, "%s/work", dir);
    spec.work_dir = path;
    spec.allowed_mem = 64 << 20;
    spec.reserved_mem = 4 << 20;
    zc_target t = {st, "mean", NULL, 3};
    char plan[600];
    snprintf(plan, sizeof plan, "%s/plan.json", dir);
    CHECK_OK(zc_plan_save(&spec, 1, &m, &t, plan));
    /* run every operation in two slices, in order */
    char *json = NULL;
    CHECK_OK(zc_plan_json(&spec, 1, &m, NULL, &json));
    int nops = 0;
    for (char *p = json; p && (p = strstr(p, "\"op\":")); p++) nops++;
    zc_free(json);
    CHECK(nops >= 1);
    for (int op = 0; op < nops; op++) {
        CHECK_OK(zc_plan_run(plan, op, 0, 1, 1));
        CHECK_OK(zc_plan_run(plan, op, 1, -1, 0));
    }
    CHECK_ERR(zc_plan_run(plan, nops, 0, -1, 0), ZC_EINVAL, "operations");
    CHECK(zc_plan_run("/nonexistent/plan.json", 0, 0, -1, 0) == ZC_EFORMAT);
    CHECK_OK(zc_zarr_open(st, "mean", &z));
    double got[70];
    CHECK_OK(zc_zarr_read(z, NULL, got, sizeof got));
    for (int j = 0; j < 70; j++) {
        double s = 0;
        for (int i = 0; i < 300; i++) s += u[i * 70 + j] * u[i * 70 + j];
        CHECK(got[j] > s / 300 - 1e-9 && got[j] < s / 300 + 1e-9);
    }
    zc_zarr_close(z);
    /* memory:// stores cannot be reached by workers */
    zc_store *mem;
    CHECK_OK(zc_store_open("memory://worker", 0, &mem));
    zc_target tm = {mem, "x", NULL, 3};
    CHECK_ERR(zc_plan_save(&spec, 1, &m, &tm, plan), ZC_EUNSUPPORTED, "memory");
    zc_store_close(mem);
    zc_array_release(m); zc_array_release(sq); zc_array_release(a);
    zc_store_close(st);
    remove_dir(dir);
}
