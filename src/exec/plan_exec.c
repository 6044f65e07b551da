/* exec/plan_exec.c — executing a plan handle (whole, or one operation's task
 * range: what every executor calls), saving one with its arrays, and the
 * one-call functions (zc_compute, zc_plan_json, zc_plan_save, zc_plan_run)
 * as thin wrappers over create / execute / free. */
#include <limits.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "exec/memcheck.h"
#include "store/url.h"
#include "exec/run.h"
#include "plan/plan.h"

struct zc_report {
    char *json;
};

/* The settings of one execution: `run` (NULL = the plan's spec), with the
 * memory figures the plan was made for (the stages were sized by them). */
static int exec_spec(const zc_plan *z, const zc_spec *run, zc_spec *sp)
{
    if (run) ZC_TRY(plan_spec(run, sp));
    else *sp = z->spec;
    sp->allowed_mem = z->spec.allowed_mem;
    sp->reserved_mem = z->spec.reserved_mem;
    sp->max_input_blocks = z->spec.max_input_blocks;
    if (!sp->work_dir) sp->work_dir = z->work_dir;
    return 0;
}

/* Tasks [first, last) of operation op, the arrays made before (zc_plan_write). */
static int exec_slice(zc_plan *z, const zc_spec *sp, int op, int64_t first, int64_t last)
{
    plan *p = &z->p;
    if (op < 0 || op >= p->nstages)
        return zc__err(ZC_EINVAL, "the plan has operations 0..%d, not %d", p->nstages - 1, op);
    if (!sp->work_dir || z->ntargets < p->noutputs)
        return zc__err(ZC_EINVAL, "running one operation needs a saved plan (zc_plan_write): its arrays and work "
                       "directory");
    zc_store *work;
    ZC_TRY(zc_store_open(sp->work_dir, 0, &work));
    int rc = exec_open(p, z->targets, work);
    if (rc == 0) rc = exec_run_stage(p, op, first, last, sp);
    exec_close(p);
    zc_store_close(work);
    return rc;
}

int zc_plan_execute(zc_plan *z, const zc_spec *run, int op, int64_t first, int64_t last)
{
    zc__err_clear();
    if (!z) return zc__err(ZC_EINVAL, "zc_plan_execute: NULL plan");
    zc_spec sp;
    ZC_TRY(exec_spec(z, run, &sp));
    pthread_mutex_lock(&z->lock);
    int rc = op == ZC_PLAN_ALL ? exec_whole(z, &sp, NULL) : exec_slice(z, &sp, op, first, last);
    pthread_mutex_unlock(&z->lock);
    return rc;
}

int zc_plan_write(zc_plan *z, const char *path)
{
    zc__err_clear();
    if (!z || !path) return zc__err(ZC_EINVAL, "zc_plan_write: NULL argument");
    if (z->ntargets < z->p.noutputs) return zc__err(ZC_EINVAL, "zc_plan_write: the plan was made without targets");
    char work_dir[PATH_MAX];
    exec_work_dir(&z->spec, work_dir, sizeof work_dir);
    pthread_mutex_lock(&z->lock);
    zc_store *work = NULL;
    struct stat sb;
    bool made = store_local_path(work_dir) && stat(work_dir, &sb) != 0;
    int rc = zc_store_open(work_dir, ZC_STORE_CREATE, &work);
    if (rc == 0) rc = plan_write_doc(z, work_dir, path); /* before any array: it refuses what workers cannot reach */
    if (rc == 0 && (rc = exec_prepare(z, work, 0)) < 0) remove(path);
    exec_close(&z->p);
    zc_store_close(work);
    if (rc < 0 && made) rmdir(work_dir); /* if still empty */
    pthread_mutex_unlock(&z->lock);
    return rc;
}

static int make_report(const zc_plan *z, zc_report **report)
{
    if (!report) return 0;
    *report = zc__calloc(1, sizeof **report);
    if (!*report) return ZC_ENOMEM;
    if (z->report && !((*report)->json = zc__strdup(z->report))) {
        zc__free(*report);
        *report = NULL;
        return ZC_ENOMEM;
    }
    return 0;
}

int zc_compute(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets, zc_report **report)
{
    zc__err_clear();
    if (report) *report = NULL;
    if (!spec || !arrays || !targets || n < 1) return zc__err(ZC_EINVAL, "zc_compute: NULL argument");
    zc_plan *z;
    ZC_TRY(zc_plan_create(spec, n, arrays, targets, &z));
    int rc = zc_plan_execute(z, spec, ZC_PLAN_ALL, 0, -1);
    if (rc == 0) rc = make_report(z, report);
    zc_plan_free(z);
    return rc;
}

int zc_compute_buffer(const zc_spec *spec, zc_array *a, void *dst, size_t dst_size, zc_report **report)
{
    zc__err_clear();
    if (!spec || !a || (!dst && dst_size)) return zc__err(ZC_EINVAL, "zc_compute_buffer: NULL argument");
    size_t need = a->itemsize;
    for (int d = 0; d < a->ndim; d++) need *= (size_t)a->shape[d];
    if (dst_size < need) return zc__err(ZC_EINVAL, "buffer of %zu bytes is too small (%zu needed)", dst_size, need);
    if (report) *report = NULL;
    if (!need) { /* nothing to compute into; still planned, for the errors and the report */
        static unsigned char none[1];
        dst = none;
    }
    zc_plan *z;
    ZC_TRY(zc_plan_create(spec, 1, &a, NULL, &z));
    zc_spec sp;
    int rc = exec_spec(z, spec, &sp);
    if (rc == 0) rc = exec_whole(z, &sp, dst);
    if (rc == 0) rc = make_report(z, report);
    zc_plan_free(z);
    return rc;
}

int exec_report_new(const char *json, zc_report **out)
{
    *out = zc__calloc(1, sizeof **out);
    if (!*out || !((*out)->json = zc__strdup(json))) {
        zc__free(*out);
        *out = NULL;
        return ZC_ENOMEM;
    }
    return 0;
}

void zc_report_free(zc_report *r)
{
    if (!r) return;
    zc__free(r->json);
    zc__free(r);
}

int zc_report_json(const zc_report *r, char **json)
{
    if (!r || !json || !r->json) return zc__err(ZC_EINVAL, "zc_report_json: no report");
    *json = zc__strdup(r->json);
    return *json ? 0 : ZC_ENOMEM;
}

int zc_plan_json(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets, char **json)
{
    zc__err_clear();
    if (!spec || !arrays || !json) return zc__err(ZC_EINVAL, "zc_plan_json: NULL argument");
    zc_plan *z;
    ZC_TRY(zc_plan_create(spec, n, arrays, targets, &z));
    int rc = zc_plan_to_json(z, json);
    memcheck mc = {0};
    char *j = NULL; /* with the reserve and the process bound */
    if (rc == 0 && memcheck_init(&mc, &z->p, &z->spec, 0) == 0 && (j = strdup(*json))) {
        memcheck_annotate(&mc, &j);
        char *c = zc__strdup(j);
        if (c) {
            zc__free(*json);
            *json = c;
        }
        free(j);
    }
    memcheck_free(&mc);
    zc_plan_free(z);
    return rc;
}

int zc_plan_save(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets, const char *path)
{
    zc__err_clear();
    if (!spec || !arrays || !targets || !path || n < 1) return zc__err(ZC_EINVAL, "zc_plan_save: NULL argument");
    zc_plan *z;
    ZC_TRY(zc_plan_create(spec, n, arrays, targets, &z));
    int rc = zc_plan_write(z, path);
    zc_plan_free(z);
    return rc;
}

int zc_plan_run(const char *path, int op, int64_t first, int64_t last, int nthreads)
{
    zc__err_clear();
    if (!path) return zc__err(ZC_EINVAL, "zc_plan_run: NULL path");
    zc_plan *z;
    ZC_TRY(zc_plan_load(path, &z));
    zc_spec run = z->spec;
    run.nthreads = nthreads;
    int rc = op < 0 ? zc__err(ZC_EINVAL, "the plan has operations 0..%d, not %d", z->p.nstages - 1, op)
                    : zc_plan_execute(z, &run, op, first, last);
    zc_plan_free(z);
    return rc;
}
