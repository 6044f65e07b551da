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
    /* the median again only once the finished units grew by an eighth: sorting
     * every time an idle worker looks would cost O(n log n) per event at the end
     * of an operation of many units */
    if (q->ndur > q->median_n + q->median_n / 8) {
        qsort(q->durations, (size_t)q->ndur, sizeof *q->durations, cmp_double);
        q->median = q->durations[q->ndur / 2];
        q->median_n = q->ndur;
    }
    double limit = BACKUP_FACTOR * q->median;
    if (limit < BACKUP_MIN_SECONDS) limit = BACKUP_MIN_SECONDS;
    int best = -1;
    double longest = limit;
    for (int w = 0; w < q->nw; w++) { /* the running units are the workers' */
        int i = q->w[w].unit;
        if (i < 0) continue;
        tq_unit *u = &q->u[i];
        if (u->done || u->backed_up || u->running != 1 || now - u->started <= longest) continue;
        longest = now - u->started;
        best = i;
    }
    return best;
}
