/* plan/plan_object.c — the public plan handle: made once by the planner, then
 * described, saved (exec/plan_exec.c, plan/serialize.c) and executed any
 * number of times (see plan.h, struct zc_plan). */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "plan/plan.h"

int plan_spec(const zc_spec *spec, zc_spec *out)
{
    if (spec->struct_size < offsetof(zc_spec, executor) || spec->struct_size > sizeof *spec)
        return zc__err(ZC_EINVAL, "zc_spec: struct_size %u is not a known version", spec->struct_size);
    zc_spec d = ZC_SPEC_INIT;
    memcpy(&d, spec, spec->struct_size);
    d.struct_size = sizeof d;
    if (!d.reserved_mem) /* automatic: an eighth of allowed_mem, at most 64 MiB */
        d.reserved_mem = d.allowed_mem / 8 < ((size_t)64 << 20) ? d.allowed_mem / 8 : (size_t)64 << 20;
    *out = d;
    return 0;
}

static char *dup_or_null(const char *s, int *rc)
{
    if (!s) return NULL;
    char *c = zc__strdup(s);
    if (!c) *rc = ZC_ENOMEM;
    return c;
}

/* A target's creation options, owned by the plan (its strings copied). */
static void free_create(zc_zarr_create_opts *c)
{
    if (!c) return;
    zc__free((char *)c->codec);
    zc__free((char *)c->fill_value);
    zc__free((char *)c->attributes);
    zc__free((char *)c->dimension_names);
    zc__free(c);
}

static int copy_create(const zc_zarr_create_opts *from, zc_zarr_create_opts **out)
{
    int rc = 0;
    zc_zarr_create_opts *c = zc__malloc(sizeof *c);
    if (!c) return ZC_ENOMEM;
    *c = *from;
    c->codec = dup_or_null(from->codec, &rc);
    c->fill_value = dup_or_null(from->fill_value, &rc);
    c->attributes = dup_or_null(from->attributes, &rc);
    c->dimension_names = dup_or_null(from->dimension_names, &rc);
    if (rc < 0) {
        free_create(c);
        return rc;
    }
    *out = c;
    return 0;
}

int plan_object(plan *p, const zc_spec *spec, const zc_target *targets, zc_plan **out)
{
    *out = NULL;
    zc_plan *z = zc__calloc(1, sizeof *z);
    if (!z) {
        plan_free(p);
        return ZC_ENOMEM;
    }
    z->p = *p;
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&z->lock, NULL);
    int rc = plan_spec(spec, &z->spec);
    z->work_dir = dup_or_null(z->spec.work_dir, &rc);
    z->executor = dup_or_null(z->spec.executor, &rc);
    z->spec.work_dir = z->work_dir;
    z->spec.executor = z->executor;
    if (rc == 0 && targets) {
        z->targets = zc__calloc((size_t)z->p.noutputs, sizeof *z->targets);
        if (!z->targets) rc = ZC_ENOMEM;
        else z->ntargets = z->p.noutputs;
        for (int i = 0; i < z->ntargets && rc == 0; i++) {
            z->targets[i] = targets[i];
            z->targets[i].path = dup_or_null(targets[i].path, &rc);
            z->targets[i].codec = dup_or_null(targets[i].codec, &rc);
        }
    }
    if (rc < 0) {
        zc_plan_free(z);
        return rc;
    }
    *out = z;
    return 0;
}

/* What a plan is made for: the arrays, their targets (or NULL) and how each
 * target is written (plan_write_model; NULL without targets). */
typedef struct {
    int n;
    zc_array *const *arrays;
    const zc_target *targets;
    const plan_write *writes;
    unsigned flags; /* plan_build's */
    rechunk_memo *memo; /* kept for every plan made for the request */
} request;

/* The plan under spec (plan_spec's), its targets' compressor state counted. */
static int plan_make(const zc_spec *sp, const request *r, plan *p)
{
    ZC_TRY(plan_build(sp, r->n, r->arrays, r->writes, r->flags, r->memo, p));
    int rc = plan_project_targets(p, r->targets, sp->allowed_mem);
    if (rc < 0) plan_free(p);
    return rc;
}

/* Whether a plan is made with sp's (plan_spec's) allowed_mem set to `allowed`,
 * an automatic reserve following it; *other: it failed for another reason
 * than the bound. */
static bool fits(const zc_spec *sp0, bool auto_reserve, size_t allowed, const request *r, bool *other)
{
    zc_spec s = *sp0, sp;
    s.allowed_mem = allowed;
    if (auto_reserve) s.reserved_mem = 0;
    plan p;
    int rc = plan_spec(&s, &sp);
    if (rc == 0) rc = plan_make(&sp, r, &p);
    if (rc == 0) plan_free(&p);
    *other = rc < 0 && rc != ZC_EMEMBOUND;
    return rc == 0;
}

#define FIT_STEP ((size_t)100000)     /* the smallest fitting bound is found to 0.1 MB, */
#define FIT_MAX ((size_t)1 << 44)     /* up to 16 TiB */

/* A plan refused for spec's bound: the refusal again, saying the smallest
 * allowed_mem that would make the plan. What a bound admits (an FFT's
 * algorithm, a rechunk's stages, TSQR's bands) changes with it, so it is found
 * by planning again: doubling, then bisecting to 1% on multiples of 0.1 MB,
 * each candidate planned in full (planning costs O(operations)), quickly
 * (PLAN_QUICK: whether a chain fits, not which is cheapest); the figure said
 * is one that was planned as the caller's plan is, found from there in 1%
 * steps if the quick one does not. */
static int refuse_with_fit(const zc_spec *sp, bool auto_reserve, const request *r0)
{
    request quick = *r0, *r = &quick;
    quick.flags |= PLAN_QUICK;
    char msg[ZC_ERRMSG_MAX];
    size_t projected = 0, allowed = 0;
    int fig = zc_errmem(&projected, &allowed);
    zc_errmsg_r(msg, sizeof msg);
    size_t lo = sp->allowed_mem / FIT_STEP, hi = lo < 1 ? 1 : 2 * lo, fit = 0; /* in FIT_STEPs */
    bool other = false;
    while (hi <= FIT_MAX / FIT_STEP && !other && !fits(sp, auto_reserve, hi * FIT_STEP, r, &other)) {
        lo = hi;
        hi *= 2;
    }
    if (hi <= FIT_MAX / FIT_STEP && !other) {
        while (hi - lo > (hi / 100 > 1 ? hi / 100 : 1) && !other) {
            size_t mid = lo + (hi - lo) / 2;
            if (fits(sp, auto_reserve, mid * FIT_STEP, r, &other)) hi = mid;
            else lo = mid;
        }
        fit = other ? 0 : hi * FIT_STEP;
        bool real = false; /* as the caller's plan is made */
        for (int k = 0; fit && k < 8 && !(real = fits(sp, auto_reserve, fit, r0, &other)); k++)
            fit = other ? 0 : fit + (fit / 100 > FIT_STEP ? fit / 100 : FIT_STEP);
        if (!real) fit = 0;
    }
    zc__err_clear();
    if (!fit) return fig ? zc__err_mem(projected, allowed, "%s", msg) : zc__err(ZC_EMEMBOUND, "%s", msg);
    char text[ZC_ERRMSG_MAX + 96];
    snprintf(text, sizeof text, "%s; the smallest allowed_mem this plan fits is %.1f MB", msg, (double)fit / 1e6);
    int rc = fig ? zc__err_mem(projected, allowed, "%s", text) : zc__err(ZC_EMEMBOUND, "%s", text);
    zc__err_mem_fit(fit);
    return rc;
}

/* A plan for the arrays written to targets (NULL: none yet) created with
 * `create` (NULL, or per target NULL: from the target). */
static int create_plan(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets,
                       const zc_zarr_create_opts *const *create, zc_plan **out)
{
    for (int i = 0; i < n; i++)
        if (!arrays[i]) return zc__err(ZC_EINVAL, "array %d to compute is NULL", i);
    for (int i = 0; targets && i < n; i++)
        if (!targets[i].store || !targets[i].path) return zc__err(ZC_EINVAL, "target %d has no store or path", i);
    if (targets) ZC_TRY(plan_check_targets(n, arrays, targets));
    zc_spec sp;
    ZC_TRY(plan_spec(spec, &sp));
    plan_write *w = NULL;
    if (targets && !(w = zc__calloc((size_t)n, sizeof *w))) return ZC_ENOMEM;
    int rc = 0;
    for (int i = 0; targets && i < n && rc == 0; i++)
        rc = plan_write_model(&targets[i], create ? create[i] : NULL, arrays[i]->itemsize, &w[i]);
    request r = {n, arrays, targets, w, 0, rechunk_memo_new()};
    if (!r.memo) rc = ZC_ENOMEM;
    plan p;
    if (rc == 0) rc = plan_make(&sp, &r, &p);
    /* (a caller's older, shorter zc_spec has reserved_mem: plan_spec checked) */
    if (rc == ZC_EMEMBOUND) rc = refuse_with_fit(&sp, spec->reserved_mem == 0, &r);
    else if (rc == 0) rc = plan_object(&p, &sp, targets, out);
    rechunk_memo_free(r.memo);
    zc__free(w);
    return rc;
}

int zc_plan_create(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets, zc_plan **out)
{
    zc__err_clear();
    if (out) *out = NULL;
    if (!spec || !arrays || !out || n < 1) return zc__err(ZC_EINVAL, "zc_plan_create: NULL argument");
    return create_plan(spec, n, arrays, targets, NULL, out);
}

int zc_plan_create_advanced(const zc_spec *spec, int n, zc_array *const *arrays, const zc_target *targets,
                            const zc_zarr_create_opts *const *create, zc_plan **out)
{
    if (!create) return zc_plan_create(spec, n, arrays, targets, out);
    zc__err_clear();
    if (out) *out = NULL;
    if (!spec || !arrays || !out) return zc__err(ZC_EINVAL, "zc_plan_create_advanced: NULL argument");
    if (!targets || n < 1 || n > 64) return zc__err(ZC_EINVAL, "zc_plan_create_advanced: creation options need 1..64 targets");
    zc_target t[64]; /* the compressor the projection counts is the one created */
    for (int i = 0; i < n; i++) {
        t[i] = targets[i];
        if (create[i] && create[i]->codec) t[i].codec = create[i]->codec;
    }
    ZC_TRY(create_plan(spec, n, arrays, t, create, out));
    zc_plan *z = *out;
    int rc = 0;
    if (!(z->creates = zc__calloc((size_t)z->ntargets, sizeof *z->creates))) rc = ZC_ENOMEM;
    for (int i = 0; i < z->ntargets && rc == 0; i++)
        if (create[i]) rc = copy_create(create[i], &z->creates[i]);
    if (rc < 0) {
        zc_plan_free(z);
        *out = NULL;
    }
    return rc;
}

void zc_plan_free(zc_plan *z)
{
    if (!z) return;
    plan_free(&z->p);
    for (int i = 0; i < z->ntargets; i++) {
        zc__free((char *)z->targets[i].path);
        zc__free((char *)z->targets[i].codec);
        if (z->creates) free_create(z->creates[i]);
    }
    zc__free(z->creates);
    zc__free(z->targets);
    for (int i = 0; i < z->nstores; i++) zc_store_close(z->stores[i]);
    zc__free(z->stores);
    zc__free(z->work_dir);
    zc__free(z->executor);
    zc__free(z->report);
    pthread_mutex_destroy(&z->lock);
    zc__free(z);
}

/* A malloc'd JSON text as a zc__ string for the caller (zc_free). */
static int hand_over(char *j, char **json)
{
    if (!j) return zc__err(ZC_ENOMEM, "cannot serialize the plan");
    *json = zc__strdup(j);
    free(j);
    return *json ? 0 : ZC_ENOMEM;
}

int zc_plan_to_json(const zc_plan *z, char **json)
{
    zc__err_clear();
    if (!z || !json) return zc__err(ZC_EINVAL, "zc_plan_to_json: NULL argument");
    return hand_over(plan_to_json(&z->p, false, 0), json);
}

int zc_plan_report(zc_plan *z, char **json)
{
    zc__err_clear();
    if (!z || !json) return zc__err(ZC_EINVAL, "zc_plan_report: NULL argument");
    pthread_mutex_lock(&z->lock);
    int rc = z->report ? ((*json = zc__strdup(z->report)) ? 0 : ZC_ENOMEM)
                       : zc__err(ZC_EINVAL, "zc_plan_report: the plan has not been executed whole yet");
    pthread_mutex_unlock(&z->lock);
    return rc;
}

int zc_plan_ops(const zc_plan *z, int *nops)
{
    if (!z || !nops) return zc__err(ZC_EINVAL, "zc_plan_ops: NULL argument");
    *nops = z->p.nstages;
    return 0;
}

int zc_plan_op_tasks(const zc_plan *z, int op, int64_t *tasks)
{
    if (!z || !tasks) return zc__err(ZC_EINVAL, "zc_plan_op_tasks: NULL argument");
    if (op < 0 || op >= z->p.nstages)
        return zc__err(ZC_EINVAL, "the plan has operations 0..%d, not %d", z->p.nstages - 1, op);
    const plan_stage *s = &z->p.stages[op];
    *tasks = s->group >= 0 && s->group != op ? 0 : s->tasks; /* run by its group's first operation */
    return 0;
}
