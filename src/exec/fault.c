/* exec/fault.c — ZCUBE_FAULT (fault.h). */
#include "exec/fault.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"

typedef struct {
    char kind[8];
    long long op, task, times, ms;
} fault;

/* Parse one "KIND:op=N,task=M,..." of length len. */
static int parse(const char *s, size_t len, fault *f)
{
    char buf[256];
    if (len >= sizeof buf) return zc__err(ZC_EINVAL, "ZCUBE_FAULT: entry too long");
    memcpy(buf, s, len);
    buf[len] = 0;
    *f = (fault){"", -1, -1, 1, 2000};
    char *colon = strchr(buf, ':');
    if (!colon || colon - buf >= (long)sizeof f->kind) return zc__err(ZC_EINVAL, "ZCUBE_FAULT: bad entry '%s'", buf);
    *colon = 0;
    strcpy(f->kind, buf);
    if (strcmp(f->kind, "fail") && strcmp(f->kind, "bad") && strcmp(f->kind, "crash") && strcmp(f->kind, "sleep") &&
        strcmp(f->kind, "hang"))
        return zc__err(ZC_EINVAL, "ZCUBE_FAULT: unknown kind '%s' (fail, bad, crash, sleep, hang)", f->kind);
    for (char *kv = strtok(colon + 1, ","); kv; kv = strtok(NULL, ",")) {
        char *eq = strchr(kv, '='), *end;
        if (!eq) return zc__err(ZC_EINVAL, "ZCUBE_FAULT: bad field '%s' (expected key=value)", kv);
        *eq = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (*end || end == eq + 1 || v < 0) return zc__err(ZC_EINVAL, "ZCUBE_FAULT: bad value of '%s'", kv);
        if (!strcmp(kv, "op")) f->op = v;
        else if (!strcmp(kv, "task")) f->task = v;
        else if (!strcmp(kv, "times")) f->times = v;
        else if (!strcmp(kv, "ms")) f->ms = v;
        else return zc__err(ZC_EINVAL, "ZCUBE_FAULT: unknown field '%s' (op, task, times, ms)", kv);
    }
    if (f->op < 0 || f->task < 0) return zc__err(ZC_EINVAL, "ZCUBE_FAULT: '%s' needs op= and task=", f->kind);
    return 0;
}

/* Whether fault number i fires once more (fewer than `times` firings so far). */
static bool fires(const char *work_dir, int i, long long times)
{
    if (times == 0) return true;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/zcube-fault", work_dir);
    mkdir(path, 0755);
    size_t n = strlen(path);
    for (long long k = 0; k < times; k++) {
        snprintf(path + n, sizeof path - n, "/%d.%lld", i, k);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            close(fd);
            return true;
        }
    }
    return false;
}

int exec_fault_inject(const char *work_dir, int op, int64_t first, int64_t last)
{
    const char *env = getenv("ZCUBE_FAULT");
    if (!env || !*env) return 0;
    int i = 0;
    for (const char *s = env; *s; i++) {
        size_t len = strcspn(s, ";");
        fault f;
        ZC_TRY(parse(s, len, &f));
        s += len + (s[len] == ';');
        if (f.op != op || (int64_t)f.task < first || (int64_t)f.task >= last || !fires(work_dir, i, f.times)) continue;
        if (!strcmp(f.kind, "crash")) raise(SIGKILL);
        if (!strcmp(f.kind, "fail"))
            return zc__err(ZC_EIO, "injected fault: operation %d task %lld failed (ZCUBE_FAULT)", op, f.task);
        if (!strcmp(f.kind, "bad"))
            return zc__err(ZC_EINVAL, "injected fault: operation %d task %lld is bad input (ZCUBE_FAULT)", op, f.task);
        while (!strcmp(f.kind, "hang")) pause(); /* until the process ends */
        struct timespec ts = {f.ms / 1000, (f.ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
    }
    return 0;
}
