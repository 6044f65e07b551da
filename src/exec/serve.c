/* exec/serve.c — the worker side of the `processes` executor (zc_dist_serve):
 * read "R op first last limit" lines, run each range (abandoned after limit
 * seconds unless 0, deadline.h), answer "D" or "E status message", or "X status
 * message" for a range abandoned, after which the worker ends. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "exec/deadline.h"

static int put_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return zc__err_sys(errno, "answering the coordinator");
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

int zc_dist_serve(const char *plan_path, int nthreads, int in_fd, int out_fd)
{
    zc__err_clear();
    if (!plan_path) return zc__err(ZC_EINVAL, "zc_dist_serve: NULL plan");
    exec_taskset ts;
    ZC_TRY(exec_taskset_open(&ts, plan_path, NULL, nthreads));
    char buf[256];
    size_t len = 0;
    int rc = 0;
    for (;;) {
        char *nl = memchr(buf, '\n', len);
        if (!nl) {
            if (len == sizeof buf) { rc = zc__err(ZC_EINVAL, "zc_dist_serve: request too long"); break; }
            ssize_t k = read(in_fd, buf + len, sizeof buf - len);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) { rc = zc__err_sys(errno, "reading requests"); break; }
            if (k == 0) break; /* the coordinator is done */
            len += (size_t)k;
            continue;
        }
        *nl = 0;
        int op;
        long long a, b;
        double limit;
        char tail;
        if (sscanf(buf, "R %d %lld %lld %lf %c", &op, &a, &b, &limit, &tail) != 4 || op < 0 || a < 0 || b < a ||
            !(limit >= 0)) {
            rc = zc__err(ZC_EINVAL, "zc_dist_serve: bad request '%.80s'", buf);
            break;
        }
        len -= (size_t)(nl + 1 - buf);
        memmove(buf, nl + 1, len);
        int st = exec_run_range(&ts, op, a, b, limit);
        char ans[1200];
        int n;
        if (st < 0) {
            char msg[1024];
            zc_errmsg_r(msg, sizeof msg);
            for (char *p = msg; *p; p++)
                if (*p == '\n') *p = ' ';
            n = snprintf(ans, sizeof ans, "%c %d %s\n", ts.hung ? 'X' : 'E', st, msg);
        } else {
            n = snprintf(ans, sizeof ans, "D\n");
        }
        if ((rc = put_all(out_fd, ans, (size_t)n)) < 0) break;
        if (ts.hung) break; /* the abandoned range's thread still runs: end this worker (reported already) */
    }
    exec_taskset_close(&ts);
    return rc;
}
