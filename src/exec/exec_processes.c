/* exec/exec_processes.c — local worker processes (exec_processes.h). */
#include "exec/exec_processes.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"

extern char **environ;

typedef struct {
    pid_t pid;
    int fd;           /* our end of the socket pair, -1 when dead */
    char buf[1200];   /* a partial answer line */
    size_t len;
} proc;

typedef struct {
    proc *p;
    int n;
    char **argv;
    struct pollfd *pfd;
} procs;

static int spawn(procs *ps, int w)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) return zc__err_sys(errno, "socketpair");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0); /* dup2 clears close-on-exec on 0 and 1 */
    posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
    pid_t pid;
    int e = posix_spawn(&pid, ps->argv[0], &fa, NULL, ps->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(sv[1]);
    if (e) {
        close(sv[0]);
        return zc__err_sys(e, "starting worker '%s'", ps->argv[0]);
    }
    ps->p[w] = (proc){.pid = pid, .fd = sv[0]};
    return 0;
}

/* The worker's end: reap it and describe how it ended. */
static void reap(proc *p, char *msg, size_t size)
{
    close(p->fd);
    p->fd = -1;
    int st;
    pid_t r;
    while ((r = waitpid(p->pid, &st, 0)) < 0 && errno == EINTR) {}
    if (r < 0) snprintf(msg, size, "worker process %d vanished", (int)p->pid);
    else if (WIFSIGNALED(st)) snprintf(msg, size, "worker process %d killed by signal %d", (int)p->pid, WTERMSIG(st));
    else snprintf(msg, size, "worker process %d exited with status %d", (int)p->pid, WEXITSTATUS(st));
}

static int p_start(exec_transport *t, int w, int op, int64_t first, int64_t last, double limit)
{
    procs *ps = t->ctx;
    char line[128];
    int n = snprintf(line, sizeof line, "R %d %lld %lld %.3f\n", op, (long long)first, (long long)last, limit);
    if (ps->p[w].fd < 0 || send(ps->p[w].fd, line, (size_t)n, MSG_NOSIGNAL) != n)
        return zc__err(ZC_EIO, "worker %d is gone", w);
    return 0;
}

/* Parse one answer line of worker w into ev. */
static int answer(const char *line, int w, exec_event *ev)
{
    ev->worker = w;
    if (!strcmp(line, "D")) {
        ev->kind = EXEC_EV_DONE;
        return 0;
    }
    int status, used = 0;
    ev->retire = line[0] == 'X'; /* failed after abandoning a hung range: the worker ends */
    if ((line[0] == 'E' || ev->retire) && sscanf(line + 1, " %d %n", &status, &used) == 1 && used > 0 && status < 0) {
        ev->kind = EXEC_EV_FAILED;
        ev->status = status;
        snprintf(ev->msg, sizeof ev->msg, "%s", line + 1 + used);
        return 0;
    }
    return zc__err(ZC_EINTERNAL, "worker %d: unexpected answer '%.80s'", w, line);
}

static int p_wait(exec_transport *t, int timeout_ms, exec_event *ev)
{
    procs *ps = t->ctx;
    memset(ev, 0, sizeof *ev);
    int nf = 0;
    for (int w = 0; w < ps->n; w++) {
        if (ps->p[w].fd < 0) continue;
        ps->pfd[nf] = (struct pollfd){.fd = ps->p[w].fd, .events = POLLIN};
        nf++;
    }
    int r = poll(ps->pfd, (nfds_t)nf, timeout_ms);
    if (r < 0) return errno == EINTR ? 0 : zc__err_sys(errno, "poll");
    for (int i = 0, w = 0; i < nf && r > 0; i++, w++) {
        while (ps->p[w].fd != ps->pfd[i].fd) w++;
        if (!ps->pfd[i].revents) continue;
        proc *p = &ps->p[w];
        ssize_t k = read(p->fd, p->buf + p->len, sizeof p->buf - 1 - p->len);
        if (k <= 0) {
            ev->kind = EXEC_EV_DIED;
            ev->worker = w;
            reap(p, ev->msg, sizeof ev->msg);
            return 0;
        }
        p->len += (size_t)k;
        p->buf[p->len] = 0;
        char *nl = strchr(p->buf, '\n');
        if (!nl) {
            if (p->len == sizeof p->buf - 1) return zc__err(ZC_EINTERNAL, "worker %d: answer too long", w);
            return 0;
        }
        *nl = 0;
        int rc = answer(p->buf, w, ev);
        p->len -= (size_t)(nl + 1 - p->buf); /* one range at a time: nothing should follow */
        memmove(p->buf, nl + 1, p->len);
        return rc;
    }
    return 0;
}

static int p_revive(exec_transport *t, int w)
{
    return spawn(t->ctx, w);
}

int exec_processes_open(exec_transport *t, int n, const char *const *argv)
{
    procs *ps = zc__calloc(1, sizeof *ps);
    if (!ps) return ZC_ENOMEM;
    int na = 0;
    while (argv[na]) na++;
    ps->p = zc__calloc((size_t)n, sizeof *ps->p);
    ps->pfd = zc__calloc((size_t)n, sizeof *ps->pfd);
    ps->argv = zc__calloc((size_t)na + 1, sizeof *ps->argv);
    *t = (exec_transport){n, p_start, p_wait, p_revive, ps};
    if (!ps->p || !ps->pfd || !ps->argv) {
        exec_processes_close(t);
        return ZC_ENOMEM;
    }
    for (int i = 0; i < n; i++) ps->p[i].fd = -1;
    ps->n = n;
    for (int i = 0; i < na; i++)
        if (!(ps->argv[i] = zc__strdup(argv[i]))) {
            exec_processes_close(t);
            return ZC_ENOMEM;
        }
    for (int w = 0; w < n; w++) {
        int rc = spawn(ps, w);
        if (rc < 0) {
            exec_processes_close(t);
            return rc;
        }
    }
    return 0;
}

void exec_processes_close(exec_transport *t)
{
    procs *ps = t->ctx;
    if (!ps) return;
    /* end of input ends an idle worker; one still running a (losing or abandoned) range is killed */
    for (int w = 0; w < ps->n; w++)
        if (ps->p[w].fd >= 0) shutdown(ps->p[w].fd, SHUT_WR);
    for (int w = 0; w < ps->n; w++) {
        if (ps->p[w].fd < 0) continue;
        struct pollfd pf = {ps->p[w].fd, POLLIN, 0};
        char c;
        if (poll(&pf, 1, 200) <= 0 || read(ps->p[w].fd, &c, 1) != 0) kill(ps->p[w].pid, SIGKILL);
        char msg[128];
        reap(&ps->p[w], msg, sizeof msg);
    }
    for (int i = 0; ps->argv && ps->argv[i]; i++) zc__free(ps->argv[i]);
    zc__free(ps->argv);
    zc__free(ps->p);
    zc__free(ps->pfd);
    zc__free(ps);
    t->ctx = NULL;
}
