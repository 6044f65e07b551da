/* exec/transport.h — how the coordinator reaches its workers.
 *
 * A transport starts task ranges on numbered workers and reports what comes
 * back, one event at a time: worker processes over socket pairs
 * (exec_processes.c), MPI ranks (exec_mpi.c). Workers run one range at a time. */
#ifndef ZC_EXEC_TRANSPORT_H
#define ZC_EXEC_TRANSPORT_H

#include <stdint.h>

#include "exec/taskset.h"

enum { EXEC_EV_NONE, EXEC_EV_DONE, EXEC_EV_FAILED, EXEC_EV_DIED };

typedef struct {
    int kind;         /* EXEC_EV_* */
    int worker;
    int status;       /* FAILED: the range's status */
    bool retire;      /* FAILED: the worker abandoned a hung range (deadline.h) and takes no more */
    char msg[1024];   /* FAILED: its message; DIED: how the worker ended */
} exec_event;

typedef struct exec_transport {
    int nworkers;
    /* Start tasks [first, last) of op on idle worker w, to be abandoned after
     * limit seconds (0: none; the worker then retires). < 0: the worker is gone
     * (an EXEC_EV_DIED for it follows). */
    int (*start)(struct exec_transport *t, int w, int op, int64_t first, int64_t last, double limit);
    /* Wait up to timeout_ms for one event (EXEC_EV_NONE on timeout); < 0 on a transport error. */
    int (*wait)(struct exec_transport *t, int timeout_ms, exec_event *ev);
    /* Replace dead worker w by a new one; < 0 if it cannot be (the worker stays dead). */
    int (*revive)(struct exec_transport *t, int w);
    void *ctx;
} exec_transport;

#endif
