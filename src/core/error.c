/* core/error.c — thread-local error detail and the static code tables. */
#include "core/error.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char errmsg[ZC_ERRMSG_MAX];
/* the figures of the thread's last failure when it is a memory-bound refusal */
static _Thread_local struct {
    size_t projected, allowed;
    bool set;
} memfig;
/* the smallest allowed_mem the refused plan fits (0: not known) */
static _Thread_local size_t memfit;

const char *zc_strerror(int status)
{
    switch (status) {
#define X(name, value, text) case value: return text;
        ZC_ERRNO_MAP(X)
#undef X
    }
    return "unknown error";
}

const char *zc_errname(int status)
{
    switch (status) {
#define X(name, value, text) case value: return "ZC_" #name;
        ZC_ERRNO_MAP(X)
#undef X
    }
    return "ZC_UNKNOWN";
}

const char *zc_errmsg(void) { return errmsg; }

void zc_errmsg_r(char *buf, size_t size)
{
    if (!buf || size == 0) return;
    snprintf(buf, size, "%s", errmsg);
}

int zc_errmem(size_t *projected, size_t *allowed)
{
    if (!memfig.set) return 0;
    if (projected) *projected = memfig.projected;
    if (allowed) *allowed = memfig.allowed;
    return 1;
}

int zc_errmem_fit(size_t *allowed_mem)
{
    if (!memfit) return 0;
    if (allowed_mem) *allowed_mem = memfit;
    return 1;
}

void zc__err_mem_fit(size_t allowed_mem) { memfit = allowed_mem; }

void zc__err_clear(void)
{
    errmsg[0] = 0;
    memfig.set = false;
    memfit = 0;
}

void zc__err_set_text(const char *msg)
{
    if (msg != errmsg) {
        snprintf(errmsg, sizeof errmsg, "%s", msg ? msg : "");
        memfig.set = false;
        memfit = 0;
    }
}

void zc__err_keep(zc__err_kept *k) { snprintf(k->text, sizeof k->text, "%s", errmsg); }

void zc__err_restore(const zc__err_kept *k)
{
    if (strcmp(k->text, errmsg)) zc__err_set_text(k->text);
}

void zc__err_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
    memfig.set = false;
    memfit = 0;
}

int zc__err_mem(size_t projected, size_t allowed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
    memfig.projected = projected;
    memfig.allowed = allowed;
    memfig.set = true;
    memfit = 0;
    return ZC_EMEMBOUND;
}

int zc__err_wrap(int code, const char *fmt, ...)
{
    char prefix[ZC_ERRMSG_MAX], old[ZC_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, errmsg, sizeof old);
    if (old[0])
        snprintf(errmsg, sizeof errmsg, "%s: %s", prefix, old);
    else
        snprintf(errmsg, sizeof errmsg, "%s: %s", prefix, zc_strerror(code));
    return code;
}

int zc__errno_code(int err)
{
    switch (err) {
    case ENOENT: case ENOTDIR: return ZC_ENOENT;
    case ENOMEM: return ZC_ENOMEM;
    case EEXIST: return ZC_EEXIST;
    case EINVAL: return ZC_EINVAL;
    case ECANCELED: return ZC_ECANCELED;
    case EOVERFLOW: case EFBIG: return ZC_EOVERFLOW;
    default: return ZC_EIO;
    }
}

int zc__err_sys(int err, const char *fmt, ...)
{
    char what[ZC_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(errmsg, sizeof errmsg, "%s: %s (errno %d)", what, strerror(err), err);
    memfig.set = false;
    return zc__errno_code(err);
}

int zc_version_number(void) { return ZC_VERSION_NUMBER; }
const char *zc_version_string(void) { return ZC_VERSION_STRING; }
