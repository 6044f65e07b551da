/* bench/bench_dist.c — the mpi executor's coordinator with no-op tasks, and the
 * bare MPI message rate it rests on, measured in the same run.
 *
 *   mpirun -np 4 build/bench/bench_dist [TASKS] [UNIT]
 *   mpirun -np 4 build/bench/bench_dist hello
 *
 * Rank 0 hands out TASKS no-op tasks (default 200000) in units of UNIT tasks
 * (default 1: one request and one answer per task) through the real coordinator
 * (taskqueue, backup policy, transport; rank 0's own worker thread included),
 * ranks 1..N-1 serve them with the real serving loop. The reference is the same
 * number of request/answer round trips as bare MPI_Send/MPI_Recv with no queue
 * (rank 0 keeping every worker rank busy with one message in flight each). Prints
 * tasks/s handed out, rank 0's coordinator-thread CPU per unit, and the ratio of
 * the coordinator's rate to the bare rate; every task is checked to have been
 * reported once and run
 * (fatal otherwise). `hello` is a bare MPI program (MPI_Init_thread, a barrier,
 * MPI_Finalize) that bench/dist_bench.sh times as Open MPI's own start-up. */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "exec/coordinate.h"
#include "exec/exec_mpi.h"

#ifdef ZC_HAVE_MPI
#include <mpi.h>

static atomic_llong ran;

static int noop(int op, int64_t first, int64_t last)
{
    (void)op;
    atomic_fetch_add(&ran, last - first);
    return 0;
}

/* bare: rank 0 sends N requests round robin, one in flight per worker rank */
static double bare(int size, long long n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    long long sent = 0, got = 0;
    int64_t req[3] = {0, 0, 1};
    char ans[16];
    for (int w = 1; w < size && sent < n; w++, sent++) MPI_Send(req, 3, MPI_INT64_T, w, 1, MPI_COMM_WORLD);
    while (got < sent) {
        MPI_Status st;
        MPI_Recv(ans, sizeof ans, MPI_CHAR, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &st);
        got++;
        if (sent < n) {
            MPI_Send(req, 3, MPI_INT64_T, st.MPI_SOURCE, 1, MPI_COMM_WORLD);
            sent++;
        }
    }
    int64_t stop[3] = {-1, 0, 0};
    for (int w = 1; w < size; w++) MPI_Send(stop, 3, MPI_INT64_T, w, 1, MPI_COMM_WORLD);
    return bench_now() - t0;
}

static void bare_worker(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (;;) {
        int64_t req[3];
        MPI_Recv(req, 3, MPI_INT64_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (req[0] < 0) return;
        char ans[2] = "0";
        MPI_Send(ans, 2, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "hello")) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    long long n = argc > 1 ? atoll(argv[1]) : 200000, unit = argc > 2 ? atoll(argv[2]) : 1;
    int rank, size;
    BENCH_ZC("bench_dist", zc_dist_mpi_init(&rank, &size), "MPI");
    char plan[256];
    snprintf(plan, sizeof plan, "/tmp/bench_dist_plan_%d.json", (int)getpid());
    exec_taskset ts;
    memset(&ts, 0, sizeof ts);
    ts.bench_run = noop;
    if (rank == 0) {
        FILE *f = fopen(plan, "w");
        fprintf(f, "{\"work_dir\": \"/tmp\"}\n");
        fclose(f);
        double tb = bare(size, n / unit);
        int64_t tasks[1] = {n};
        char names[1][64] = {"noop"};
        bool out[1] = {true};
        ts.nops = 1;
        ts.tasks = tasks;
        ts.names = names;
        ts.output = out;
        snprintf(ts.plan_path, sizeof ts.plan_path, "%s", plan);
        exec_transport t;
        BENCH_ZC("bench_dist", exec_mpi_open(&t, &ts), "mpi transport");
        taskqueue q;
        BENCH_ZC("bench_dist", tq_init(&q, t.nworkers, 2, true), "queue");
        double secs[1];
        int64_t skipped[1];
        exec_coord_opts o = {.retries = 2, .backups = true, .unit_tasks = unit, .op_seconds = secs, .op_skipped = skipped};
        double c0 = bench_clock(CLOCK_THREAD_CPUTIME_ID), t0 = bench_now();
        BENCH_ZC("bench_dist", exec_coordinate(&t, &ts, &o, &q), "coordinate");
        double wall = bench_now() - t0, cpu = bench_clock(CLOCK_THREAD_CPUTIME_ID) - c0;
        long long local = atomic_load(&ran);
        long long units = 0, total = 0;
        for (int w = 0; w < q.nw; w++) {
            units += q.w[w].units;
            total += q.w[w].tasks;
        }
        exec_mpi_close(&t, 0);
        remove(plan);
        long long all = 0;
        MPI_Reduce(&local, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (total != n || all < n) { /* all > n: backup copies ran some twice */
            fprintf(stderr, "bench_dist: %lld of %lld tasks reported done, %lld run\n", total, n, all);
            return 1;
        }
        printf("{\"ranks\": %d, \"tasks\": %lld, \"unit\": %lld, \"units\": %lld, \"seconds\": %.4f, "
               "\"tasks_per_s\": %.0f, \"units_per_s\": %.0f, \"coordinator_cpu_us_per_unit\": %.3f, "
               "\"bare_round_trips_per_s\": %.0f, \"ratio_to_bare\": %.3f, \"rank0_local_tasks\": %lld}\n",
               size, n, unit, units, wall, (double)n / wall, (double)units / wall, cpu / (double)units * 1e6,
               (double)(n / unit) / tb, ((double)units / wall) / ((double)(n / unit) / tb), local);
        tq_free(&q);
    } else {
        bare_worker();
        char *text;
        int nt;
        BENCH_ZC("bench_dist", exec_mpi_recv_plan(&text, &nt), "plan");
        zc_free(text);
        BENCH_ZC("bench_dist", exec_mpi_serve(&ts), "serve");
        long long mine = atomic_load(&ran); /* summed at rank 0: every task ran */
        MPI_Reduce(&mine, NULL, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    zc_dist_mpi_finalize();
    return 0;
}
#else
int main(void)
{
    fprintf(stderr, "bench_dist: built without MPI (install libopenmpi-dev and rebuild)\n");
    return 77;
}
#endif
