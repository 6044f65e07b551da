/* exec/exec_mpi.h — the `mpi` transport: MPI ranks as workers.
 *
 * Rank 0 coordinates (zc_dist_run with executor "mpi") and also works: a
 * thread of rank 0 is worker 0, ranks 1..N-1 are workers 1..N-1
 * (zc_dist_mpi_worker -> exec_mpi_serve). Rank 0 broadcasts the plan's text
 * and the worker thread count; each rank writes it to a private file. A request
 * is one message of four int64 (op, first, last, time limit in microseconds,
 * deadline.h; op -1 = stop), an answer one message (status, whether the rank
 * retired after abandoning a hung range, the error message, as text). Built only when CMake
 * finds MPI (ZC_HAVE_MPI); otherwise opening it fails saying how to get it.
 *
 * A rank that dies ends the whole job: Open MPI's runtime kills the other
 * ranks and mpirun exits naming the rank and its exit status within about a
 * second (no hang); the run is finished with --resume. */
#ifndef ZC_EXEC_EXEC_MPI_H
#define ZC_EXEC_EXEC_MPI_H

#include "exec/transport.h"

/* Rank 0: send the plan, start the local worker thread. */
int exec_mpi_open(exec_transport *t, exec_taskset *ts);
/* Rank 0: wait for ranges still running, stop every rank's serving loop, free. */
void exec_mpi_close(exec_transport *t, int rc);
/* Ranks > 0: serve requests with ts until told to stop. */
int exec_mpi_serve(exec_taskset *ts);
/* Ranks > 0: receive the plan's text (NULL when rank 0 sent none) and thread count. */
int exec_mpi_recv_plan(char **text, int *nthreads);

#endif
