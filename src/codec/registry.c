/* codec/registry.c — codec types by name (v3) and numcodecs id (v2).
 *
 * The table is filled once with the built-ins (codec/builtin.c) through the
 * same codec_register call users will have. Lookups after that are lock-free
 * reads; registration takes a lock. */
#include <pthread.h>
#include <string.h>

#include "codec/codec.h"
#include "core/alloc.h"
#include "core/error.h"

#define MAX_CODECS 128

static codec_type table[MAX_CODECS];
static int ncodecs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

void codec_register_builtins(void); /* codec/builtin.c */

static void load_builtins(void) { codec_register_builtins(); }

static int register_locked(const codec_type *t)
{
    for (int i = 0; i < ncodecs; i++) {
        if (strcmp(table[i].name, t->name)) continue;
        if (table[i].decode == t->decode && table[i].encode == t->encode) return 0;
        return zc__err(ZC_EEXIST, "codec '%s' is already registered with other functions", t->name);
    }
    if (ncodecs == MAX_CODECS) return zc__err(ZC_ENOMEM, "codec registry is full (%d)", MAX_CODECS);
    table[ncodecs++] = *t;
    return 0;
}

int codec_register(const codec_type *t)
{
    if (!t || !t->name || !t->create || !t->decode || !t->encode)
        return zc__err(ZC_EINVAL, "codec_register: incomplete codec type");
    pthread_mutex_lock(&lock);
    int rc = register_locked(t);
    pthread_mutex_unlock(&lock);
    return rc;
}

int codec_find(const char *name, int zarr_format, const codec_type **out)
{
    pthread_once(&builtins_once, load_builtins);
    for (int i = 0; i < ncodecs; i++) {
        const codec_type *t = &table[i];
        if (zarr_format == 2 ? (t->v2_id && !strcmp(t->v2_id, name)) : !strcmp(t->name, name)) {
            *out = t;
            return 0;
        }
    }
    return zc__err(ZC_EUNSUPPORTED, "unknown codec '%s'", name);
}

int codec_create(const json_t *spec, const codec_ctx *ctx, codec *out)
{
    memset(out, 0, sizeof *out);
    const char *key = ctx->zarr_format == 2 ? "id" : "name";
    const json_t *name = json_object_get(spec, key);
    if (!json_is_string(name))
        return zc__err(ZC_EFORMAT, "codec entry has no string '%s'", key);
    const codec_type *t;
    ZC_TRY(codec_find(json_string_value(name), ctx->zarr_format, &t));
    const json_t *cfg = ctx->zarr_format == 2 ? spec : json_object_get(spec, "configuration");
    if (cfg && !json_is_object(cfg))
        return zc__err(ZC_EFORMAT, "codec '%s': configuration must be an object", t->name);
    int rc = t->create(cfg, ctx, &out->state);
    if (rc < 0) return zc__err_wrap(rc, "codec '%s'", json_string_value(name));
    out->type = t;
    out->ctx = *ctx;
    return 0;
}

void codec_destroy(codec *c)
{
    if (c && c->type && c->type->destroy) c->type->destroy(c->state);
    if (c) {
        c->type = NULL;
        c->state = NULL;
    }
}
