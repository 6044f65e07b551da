/* exec/spawn.c — exec_spawn (spawn.h). */
#define _GNU_SOURCE /* pipe2 */
#include "exec/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"

extern char **environ;

int exec_spawn(const char *const *argv, char *out, size_t size)
{
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) < 0) return zc__err_sys(errno, "pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (e) {
        close(fd[0]);
        return zc__err_sys(e, "running '%s'", argv[0]);
    }
    size_t len = 0;
    for (;;) {
        char sink[512];
        char *dst = len + 1 < size ? out + len : sink;
        size_t room = len + 1 < size ? size - 1 - len : sizeof sink;
        ssize_t k = read(fd[0], dst, room);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        if (dst != sink) len += (size_t)k;
    }
    close(fd[0]);
    if (size) out[len] = 0;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return zc__err_sys(errno, "waiting for '%s'", argv[0]);
    if (WIFSIGNALED(st)) return zc__err(ZC_EIO, "'%s' killed by signal %d", argv[0], WTERMSIG(st));
    return WEXITSTATUS(st);
}
