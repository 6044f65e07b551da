/* exec/exec_mpi.c — the `mpi` transport (exec_mpi.h). */
#include "exec/exec_mpi.h"

#include "core/error.h"

#ifdef ZC_HAVE_MPI
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "exec/deadline.h"

enum { TAG_REQ = 7101, TAG_ANS = 7102 };

static int plan_sent; /* rank 0: the plan (or its absence) was broadcast */

typedef struct {
    exec_taskset *ts;
    int size;
    unsigned char *busy;          /* per worker: a range is out */
    /* worker 0, a thread of rank 0 */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int64_t req[3];
    double limit;
    int has_req, stop, status, retire;
    atomic_int has_ans;   /* set under the lock, polled without it */
    char msg[1024];
} mpi_ctx;

static void *local_worker(void *arg)
{
    mpi_ctx *m = arg;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        while (!m->has_req && !m->stop) pthread_cond_wait(&m->cv, &m->lock);
        if (m->stop && !m->has_req) break;
        int64_t op = m->req[0], a = m->req[1], b = m->req[2];
        double limit = m->limit;
        m->has_req = 0;
        pthread_mutex_unlock(&m->lock);
        int st = exec_run_range(m->ts, (int)op, a, b, limit);
        char msg[1024] = "";
        if (st < 0) zc_errmsg_r(msg, sizeof msg);
        pthread_mutex_lock(&m->lock);
        m->status = st;
        m->retire = m->ts->hung;
        snprintf(m->msg, sizeof m->msg, "%s", msg);
        atomic_store(&m->has_ans, 1);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

static int m_start(exec_transport *t, int w, int op, int64_t first, int64_t last, double limit)
{
    mpi_ctx *m = t->ctx;
    m->busy[w] = 1;
    if (w == 0) {
        pthread_mutex_lock(&m->lock);
        m->req[0] = op;
        m->req[1] = first;
        m->req[2] = last;
        m->limit = limit;
        m->has_req = 1;
        pthread_cond_signal(&m->cv);
        pthread_mutex_unlock(&m->lock);
        return 0;
    }
    int64_t req[4] = {op, first, last, (int64_t)(limit * 1e6)}; /* the limit in microseconds */
    if (MPI_Send(req, 4, MPI_INT64_T, w, TAG_REQ, MPI_COMM_WORLD) != MPI_SUCCESS)
        return zc__err(ZC_EIO, "MPI: cannot reach rank %d", w);
    return 0;
}

static void parse_answer(const char *buf, int w, exec_event *ev)
{
    int st = 0, retire = 0, used = 0;
    sscanf(buf, "%d %d %n", &st, &retire, &used);
    ev->worker = w;
    ev->kind = st < 0 ? EXEC_EV_FAILED : EXEC_EV_DONE;
    ev->status = st;
    ev->retire = retire != 0;
    snprintf(ev->msg, sizeof ev->msg, "%s", buf + used);
}

/* One answer from a rank, if any; blocking: wait for it. */
static int recv_answer(mpi_ctx *m, int blocking, int from, exec_event *ev)
{
    MPI_Status s;
    int flag = 1;
    if (blocking) MPI_Probe(from, TAG_ANS, MPI_COMM_WORLD, &s);
    else MPI_Iprobe(from, TAG_ANS, MPI_COMM_WORLD, &flag, &s);
    if (!flag) return 0;
    int n;
    MPI_Get_count(&s, MPI_CHAR, &n);
    char buf[1100];
    if (n < 1 || n > (int)sizeof buf) return zc__err(ZC_EINTERNAL, "MPI: answer of %d bytes from rank %d", n, s.MPI_SOURCE);
    MPI_Recv(buf, n, MPI_CHAR, s.MPI_SOURCE, TAG_ANS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    buf[n - 1] = 0;
    parse_answer(buf, s.MPI_SOURCE, ev);
    m->busy[s.MPI_SOURCE] = 0;
    return 1;
}

static int local_answer(mpi_ctx *m, exec_event *ev)
{
    if (!atomic_load(&m->has_ans)) return 0; /* the common case, without contending for the lock */
    pthread_mutex_lock(&m->lock);
    int got = atomic_load(&m->has_ans);
    if (got) {
        atomic_store(&m->has_ans, 0);
        ev->worker = 0;
        ev->kind = m->status < 0 ? EXEC_EV_FAILED : EXEC_EV_DONE;
        ev->status = m->status;
        ev->retire = m->retire != 0;
        snprintf(ev->msg, sizeof ev->msg, "%s", m->msg);
        m->busy[0] = 0;
    }
    pthread_mutex_unlock(&m->lock);
    return got;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Polling for a message: a short spin, then sleeps doubling from 20 us to 1 ms
 * while nothing comes (a fast answer is seen at once; a rank waiting through
 * seconds of work wakes 1,000 times a second, not 5,000 as with a 200 us cap,
 * whose wake-ups and context switches took 5-10% of a core from the ranks
 * computing on oversubscribed cores). *spins counts empty polls since the
 * last message. */
static void poll_pause(int *spins)
{
    if (++*spins <= 200) return;
    long ns = 20000L << (*spins - 200 < 6 ? *spins - 200 : 6);
    struct timespec ts = {0, ns < 1000000L ? ns : 1000000L};
    nanosleep(&ts, NULL);
}

static int m_wait(exec_transport *t, int timeout_ms, exec_event *ev)
{
    mpi_ctx *m = t->ctx;
    memset(ev, 0, sizeof *ev);
    double end = now() + timeout_ms * 1e-3;
    for (int spins = 0;;) {
        int r = recv_answer(m, 0, MPI_ANY_SOURCE, ev);
        if (r) return r < 0 ? r : 0;
        if (m->busy[0] && local_answer(m, ev)) return 0;
        if (spins > 200 && now() > end) return 0;
        poll_pause(&spins);
    }
}

int exec_mpi_open(exec_transport *t, exec_taskset *ts)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    FILE *f = fopen(ts->plan_path, "rb");
    if (!f) return zc__err_sys(errno, "reading the plan '%s'", ts->plan_path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = zc__malloc((size_t)len + 1);
    int ok = text && fread(text, 1, (size_t)len, f) == (size_t)len;
    fclose(f);
    if (!ok) {
        zc__free(text);
        return zc__err(ZC_EIO, "reading the plan '%s'", ts->plan_path);
    }
    int64_t hdr[2] = {len, ts->nthreads};
    MPI_Bcast(hdr, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(text, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    plan_sent = 1;
    zc__free(text);
    mpi_ctx *m = zc__calloc(1, sizeof *m);
    if (!m || !(m->busy = zc__calloc((size_t)size, 1))) {
        zc__free(m);
        return ZC_ENOMEM;
    }
    m->ts = ts;
    m->size = size;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cv, NULL);
    if (pthread_create(&m->thread, NULL, local_worker, m) != 0) {
        zc__free(m->busy);
        zc__free(m);
        return zc__err(ZC_ENOMEM, "cannot start rank 0's worker thread");
    }
    *t = (exec_transport){size, m_start, m_wait, NULL, m};
    return 0;
}

void exec_mpi_close(exec_transport *t, int rc)
{
    (void)rc;
    mpi_ctx *m = t->ctx;
    if (!m) return;
    for (int w = 1; w < m->size; w++) {
        exec_event ev;
        while (m->busy[w]) recv_answer(m, 1, w, &ev); /* a losing copy or one abandoned after a failure */
        int64_t stop[4] = {-1, 0, 0, 0};
        MPI_Send(stop, 4, MPI_INT64_T, w, TAG_REQ, MPI_COMM_WORLD);
    }
    pthread_mutex_lock(&m->lock);
    m->stop = 1;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->lock);
    pthread_join(m->thread, NULL);
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->cv);
    zc__free(m->busy);
    zc__free(m);
    t->ctx = NULL;
}

int exec_mpi_recv_plan(char **text, int *nthreads)
{
    int64_t hdr[2];
    *text = NULL;
    MPI_Bcast(hdr, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    *nthreads = (int)hdr[1];
    if (hdr[0] <= 0) return 0;
    if (hdr[0] > INT32_MAX) return zc__err(ZC_EFORMAT, "MPI: plan of %lld bytes", (long long)hdr[0]);
    *text = zc__malloc((size_t)hdr[0] + 1);
    char dummy;
    MPI_Bcast(*text ? *text : &dummy, *text ? (int)hdr[0] : 0, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!*text) return ZC_ENOMEM;
    (*text)[hdr[0]] = 0;
    return 0;
}

int exec_mpi_serve(exec_taskset *ts)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (;;) {
        int64_t req[4];
        int flag = 0;
        for (int spins = 0; !flag; poll_pause(&spins)) /* not MPI_Recv, which spins on the CPU */
            MPI_Iprobe(0, TAG_REQ, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Recv(req, 4, MPI_INT64_T, 0, TAG_REQ, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (req[0] < 0) return 0;
        /* after a hung range this rank only waits for the end (rank 0 sends it nothing more) */
        int st = ts->hung ? zc__err(ZC_EIO, "rank %d abandoned a hung range earlier", rank)
                          : exec_run_range(ts, (int)req[0], req[1], req[2], (double)req[3] * 1e-6);
        char ans[1100], msg[1024] = "";
        if (st < 0) zc_errmsg_r(msg, sizeof msg);
        int n = snprintf(ans, sizeof ans, "%d %d %s", st, ts->hung ? 1 : 0, msg);
        if (n >= (int)sizeof ans) n = (int)sizeof ans - 1;
        MPI_Send(ans, n + 1, MPI_CHAR, 0, TAG_ANS, MPI_COMM_WORLD);
    }
}

int zc_dist_mpi_init(int *rank, int *size)
{
    zc__err_clear();
    int inited;
    MPI_Initialized(&inited);
    if (!inited) {
        /* With PMIx's shared-memory job store (gds ds21), a rank killed inside
         * MPI_Init can leave mpirun deadlocked in its own finalization after it
         * reported the death, every rank gone (Open MPI 4.1.4, PMIx 4.2.2: "PMIX
         * ERROR: UNREACHABLE ... ptl_base_connection_hdlr.c", then a futex wait in
         * PMIx_server_finalize; 5 hangs in 600 kills, none in 885 with this). The
         * hash store receives the same job data by message, and the few integers a
         * range takes make its cost invisible. The user's own PMIX_MCA_gds wins. */
        setenv("PMIX_MCA_gds", "hash", 0);
        int provided;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return zc__err(ZC_EIO, "MPI_Init_thread failed");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

int zc_dist_mpi_worker(int nthreads)
{
    zc__err_clear();
    char *text;
    int nt;
    (void)nthreads; /* rank 0's count: the plan was made for it */
    ZC_TRY(exec_mpi_recv_plan(&text, &nt));
    if (!text) return 0; /* rank 0 failed before sending a plan; it says why */
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/zcube-plan-rank%d-XXXXXX", tmp && *tmp ? tmp : "/tmp", rank);
    int fd = mkstemp(path), rc = 0;
    size_t len = strlen(text);
    if (fd < 0) rc = zc__err_sys(errno, "rank %d: writing the plan", rank);
    else if (write(fd, text, len) != (ssize_t)len) rc = zc__err_sys(errno, "rank %d: writing the plan", rank);
    if (fd >= 0) close(fd);
    zc__free(text);
    exec_taskset ts;
    if (rc == 0 && (rc = exec_taskset_open(&ts, path, NULL, nt)) == 0) {
        rc = exec_mpi_serve(&ts);
        exec_taskset_close(&ts);
    }
    if (fd >= 0) unlink(path);
    return rc;
}

int zc_dist_mpi_finalize(void)
{
    int inited, fin;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    if (!inited || fin) return 0;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && !plan_sent) { /* release the workers waiting for a plan */
        int64_t hdr[2] = {0, 0};
        MPI_Bcast(hdr, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
        plan_sent = 1;
    }
    MPI_Finalize();
    return 0;
}

#else
#define NO_MPI "this zcube was built without MPI: install Open MPI (Debian: apt-get install openmpi-bin libopenmpi-dev) and rebuild"

int exec_mpi_open(exec_transport *t, exec_taskset *ts)
{
    (void)t;
    (void)ts;
    return zc__err(ZC_EUNSUPPORTED, NO_MPI);
}

void exec_mpi_close(exec_transport *t, int rc)
{
    (void)t;
    (void)rc;
}

int exec_mpi_serve(exec_taskset *ts)
{
    (void)ts;
    return zc__err(ZC_EUNSUPPORTED, NO_MPI);
}

int exec_mpi_recv_plan(char **text, int *nthreads)
{
    *text = NULL;
    *nthreads = 0;
    return zc__err(ZC_EUNSUPPORTED, NO_MPI);
}

int zc_dist_mpi_init(int *rank, int *size)
{
    (void)rank;
    (void)size;
    zc__err_clear();
    return zc__err(ZC_EUNSUPPORTED, NO_MPI);
}

int zc_dist_mpi_worker(int nthreads)
{
    (void)nthreads;
    zc__err_clear();
    return zc__err(ZC_EUNSUPPORTED, NO_MPI);
}

int zc_dist_mpi_finalize(void)
{
    return 0;
}
#endif
