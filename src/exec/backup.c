/* exec/backup.c — backup copies of stragglers (backup.h). */
#include "exec/backup.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int backup_pick(taskqueue *q, double now)
{
    if (!q->backups || q->ndur < BACKUP_MIN_DONE || q->ndone * 2 < q->nu) return -1;
    qsort(q->durations, (size_t)q->ndur, sizeof *q->durations, cmp_double);
    double median = q->durations[q->ndur / 2], limit = BACKUP_FACTOR * median;
    if (limit < BACKUP_MIN_SECONDS) limit = BACKUP_MIN_SECONDS;
    int best = -1;
    double longest = limit;
    for (int i = 0; i < q->nu; i++) {
        tq_unit *u = &q->u[i];
        if (u->done || u->backed_up || u->running != 1 || now - u->started <= longest) continue;
        longest = now - u->started;
        best = i;
    }
    return best;
}
