/* exec/executor.c — the built-in executors (see executor.h). */
#include "exec/executor.h"

#include <string.h>

#include "core/error.h"

static int run_sequential(size_t n, int width, pool_fn fn, void *ctx)
{
    (void)width;
    for (size_t i = 0; i < n; i++) ZC_TRY(fn(ctx, i, 0));
    return 0;
}

static int run_threads(size_t n, int width, pool_fn fn, void *ctx)
{
    return pool_for(pool_default(), n, width, fn, ctx);
}

static const exec_backend backends[] = {
    {"threads", run_threads},
    {"sequential", run_sequential},
};

int exec_find(const char *name, const exec_backend **out)
{
    if (!name) name = "threads";
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (!strcmp(backends[i].name, name)) {
            *out = &backends[i];
            return 0;
        }
    return zc__err(ZC_EINVAL, "unknown executor '%s' (threads, sequential)", name);
}
