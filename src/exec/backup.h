/* exec/backup.h — when to start a backup copy of a straggling unit.
 *
 * Cubed's rule, adapted to small clusters: once at least half of an
 * operation's units have finished (and at least BACKUP_MIN_DONE of them, for a
 * meaningful median), a unit that has run longer than BACKUP_FACTOR times the
 * median unit time (and at least BACKUP_MIN_SECONDS) gets one backup copy on
 * an idle worker. Cubed also requires 10 tasks running; here backups only ever
 * use idle workers (no pending unit waits for them), so that condition, which
 * would rule them out on fewer than 10 workers, is dropped. */
#ifndef ZC_EXEC_BACKUP_H
#define ZC_EXEC_BACKUP_H

#include "exec/taskqueue.h"

#define BACKUP_FACTOR 3.0
#define BACKUP_MIN_DONE 3
#define BACKUP_MIN_SECONDS 0.05

/* The unit to back up now, or -1. */
int backup_pick(taskqueue *q, double now);

#endif
