/* exec/fault.h — fault injection for tests of the distributed executors.
 *
 * The environment variable ZCUBE_FAULT, read by each worker, lists faults
 * separated by ';', each KIND:op=N,task=M[,times=T][,ms=X]:
 *   fail   the range holding task M of operation N fails with ZC_EIO (retryable)
 *   bad    ... fails with ZC_EINVAL (not retryable: the run fails at once)
 *   crash  the worker kills itself with SIGKILL (a crashed process or rank)
 *   sleep  the range sleeps X ms (default 2000) before running (a straggler)
 *   hang   the range never ends (a hung task: see --task-timeout)
 * times = how many times the fault fires across all workers (default 1; 0 =
 * always), counted by files WORK/zcube-fault/<fault>.<n> created exclusively.
 * Test-only: unset, it costs one getenv per range. A malformed value is
 * ZC_EINVAL naming it. */
#ifndef ZC_EXEC_FAULT_H
#define ZC_EXEC_FAULT_H

#include <stdint.h>

/* Apply the faults matching (op, [first, last)); returns 0 or the injected error. */
int exec_fault_inject(const char *work_dir, int op, int64_t first, int64_t last);

#endif
