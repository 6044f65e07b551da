/* store/fs_fault.c — fault injection into the filesystem store's system calls
 * (a test-only switch, off unless the environment asks for it).
 *
 *   ZC_FAULT_STORE="op=OP,nth=N,err=ERR[,mode=once|persistent]"
 *     OP    read | write | open | rename | fsync | dirsync
 *     N     the Nth call of that kind in the process fails (1 = the first)
 *     ERR   EIO | ENOSPC | EINTR | EDQUOT | EROFS | short (a read or write
 *           moves half the bytes asked: a short count, not an error)
 *     mode  once (default): only the Nth call; persistent: the Nth and every
 *           later one (not for EINTR or short: those are transient by nature)
 *   ZC_FAULT_LOG=FILE  append "OP N ERR" to FILE for every injected fault, so
 *           a test can tell whether its fault point was reached.
 *
 * Calls are counted per kind, process-wide (atomics: pool threads read and
 * write concurrently). Both read engines are instrumented: pread before the
 * call, io_uring at each completion (the read happened, its result is
 * replaced). With a read fault configured the store maps nothing. The same
 * idea as SQLite's test VFS (transient and persistent faults per method); the
 * code that must survive them (fs.c, fs_pread.c) retries EINTR and resumes
 * short counts, and a put that fails leaves no temporary file and the old
 * value in place. */
#include "store/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAULT_SHORT (-1) /* err value: a short count */

static const char *const op_names[FS_OP_COUNT] = {"read", "write", "open", "rename", "fsync", "dirsync"};

static struct {
    int op;              /* FS_OP_*, or -1: no fault configured */
    unsigned long nth;   /* the call that fails */
    int err;             /* errno, or FAULT_SHORT */
    int persistent;
    const char *log;     /* ZC_FAULT_LOG or NULL */
    char err_name[8];    /* ERR as given, for the log */
} plan = {-1, 0, 0, 0, NULL, ""};
static atomic_ulong calls[FS_OP_COUNT];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int parse_err(const char *v)
{
    static const struct {
        const char *name;
        int err;
    } errs[] = {{"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EINTR", EINTR}, {"EDQUOT", EDQUOT}, {"EROFS", EROFS},
                {"short", FAULT_SHORT}};
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
        if (!strcmp(v, errs[i].name)) return errs[i].err;
    return 0;
}

/* An unparsable spec configures nothing (a test that mistyped it then sees
 * no fault in its log and fails). */
static void configure_spec(const char *spec)
{
    if (!spec || !*spec || strlen(spec) > 200) return;
    char buf[201];
    strcpy(buf, spec);
    int op = -1, err = 0, persistent = 0;
    unsigned long nth = 0;
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) return;
        *eq = 0;
        const char *v = eq + 1;
        if (!strcmp(kv, "op")) {
            for (int i = 0; i < FS_OP_COUNT; i++)
                if (!strcmp(v, op_names[i])) op = i;
        } else if (!strcmp(kv, "nth")) {
            nth = strtoul(v, NULL, 10);
        } else if (!strcmp(kv, "err")) {
            err = parse_err(v);
        } else if (!strcmp(kv, "mode")) {
            persistent = !strcmp(v, "persistent");
        } else {
            return;
        }
    }
    if (op < 0 || !nth || !err) return;
    const char *ev = strstr(spec, "err=") + 4;
    size_t elen = strcspn(ev, ",");
    snprintf(plan.err_name, sizeof plan.err_name, "%.*s", (int)elen, ev);
    if (err == EINTR || err == FAULT_SHORT) persistent = 0;
    plan.nth = nth;
    plan.err = err;
    plan.persistent = persistent;
    plan.log = getenv("ZC_FAULT_LOG");
    plan.op = op;
}

static void configure(void) { configure_spec(getenv("ZC_FAULT_STORE")); }

void fs_fault_set(const char *spec)
{
    pthread_once(&once, configure);
    plan.op = -1;
    for (int i = 0; i < FS_OP_COUNT; i++) atomic_store(&calls[i], 0);
    configure_spec(spec);
}

bool fs_fault_reads(void)
{
    pthread_once(&once, configure);
    return plan.op == FS_OP_READ;
}

static void note(int op, unsigned long n)
{
    if (!plan.log) return;
    int fd = open(plan.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[96];
    int len = snprintf(line, sizeof line, "%s %lu %s\n", op_names[op], n, plan.err_name);
    if (len > 0 && write(fd, line, (size_t)len) < 0) { /* a log is best effort */
    }
    close(fd);
}

int fs_fault(int op, size_t *len)
{
    pthread_once(&once, configure);
    if (plan.op != op) return 0;
    unsigned long n = atomic_fetch_add(&calls[op], 1) + 1;
    if (n != plan.nth && !(plan.persistent && n > plan.nth)) return 0;
    note(op, n);
    if (plan.err != FAULT_SHORT) return plan.err;
    if (len && *len > 1) *len /= 2;
    return 0;
}
