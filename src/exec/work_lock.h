/* exec/work_lock.h — one computation per work directory. */
#ifndef ZC_EXEC_WORK_LOCK_H
#define ZC_EXEC_WORK_LOCK_H

/* Take an exclusive lock on the folder `dir` (flock on the folder itself: no
 * lock file to clean up; released when the process ends, however it ends).
 * Two computations sharing a work directory would read and erase each
 * other's intermediates: the second is refused with ZC_EEXIST naming the
 * folder. Workers of one saved plan (zc_plan_run) share it on purpose and do
 * not lock. *fd is the lock to pass to work_unlock, or -1 when the
 * filesystem cannot lock a folder (then nothing is enforced). */
int work_lock(const char *dir, int *fd);
void work_unlock(int fd);

#endif
