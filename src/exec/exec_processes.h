/* exec/exec_processes.h — the `processes` transport: local worker processes.
 *
 * Each worker is a child process started from a command (argv) that serves
 * ranges on its stdin/stdout (zc_dist_serve: `zcube worker PLAN --serve`),
 * connected by a socket pair: the coordinator writes "R op first last\n", the
 * worker answers "D\n" or "E status message\n". A worker that exits or is
 * killed is seen as end of file; its range is retried and a new worker started. */
#ifndef ZC_EXEC_EXEC_PROCESSES_H
#define ZC_EXEC_EXEC_PROCESSES_H

#include "exec/transport.h"

/* Start n workers running argv (NULL-terminated, argv[0] a path). */
int exec_processes_open(exec_transport *t, int n, const char *const *argv);
/* Stop the workers (end of input, then SIGKILL for any still running a range) and free. */
void exec_processes_close(exec_transport *t);

#endif
