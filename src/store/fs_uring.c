/* store/fs_uring.c — the io_uring read engine of the filesystem store
 * (compiled when CMake finds liburing: ZC_HAVE_URING).
 *
 * The batch's groups (one per file) are cut into slices that run on the core
 * thread pool. Each thread owns one ring (thread-local, created on first use,
 * destroyed at thread exit), so callers never share a ring or lock. A slice is
 * a pipeline: open + fstat the next file synchronously (cheap when metadata is
 * cached; measured against ring OPENAT in docs/internals/store.md), queue one
 * READ/READV per run of adjacent ranges, keep up to URING_QD reads in flight,
 * reap completions, resubmit short reads for the rest, close each file when its
 * last read completes. If a ring cannot be created (EPERM in containers,
 * ENOSYS on old kernels) the slice falls back to the pread engine; after EPERM,
 * ENOSYS or EACCES no thread tries again. The whole file is empty without
 * ZC_HAVE_URING (fs.c then provides the two query functions). */
#ifdef ZC_HAVE_URING
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/pool.h"
#include "store/fs.h"

#define URING_QD 128 /* reads in flight per ring */

typedef struct {
    struct io_uring ring;
    int state; /* 0 none, 1 ready, -1 unusable on this thread */
    pid_t pid; /* process that created it (a forked child must not share it) */
} tl_ring;

static _Thread_local tl_ring tl;
static atomic_int uring_broken;   /* ring creation is refused on this machine */
static atomic_uint_fast64_t uring_reads;
static pthread_key_t ring_key;    /* only for its destructor: free the ring at thread exit */
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;
static int ring_key_ok;

static void ring_exit(void *v)
{
    tl_ring *t = v;
    if (t->state == 1) io_uring_queue_exit(&t->ring);
    t->state = 0;
}

static void make_key(void) { ring_key_ok = pthread_key_create(&ring_key, ring_exit) == 0; }

static struct io_uring *get_ring(void)
{
    pid_t pid = getpid();
    if (tl.state == 1 && tl.pid == pid) return &tl.ring;
    if (tl.state == 1) { /* inherited across fork: drop the parent's ring */
        io_uring_queue_exit(&tl.ring);
        tl.state = 0;
    }
    if (tl.state == -1 || atomic_load_explicit(&uring_broken, memory_order_relaxed)) return NULL;
    pthread_once(&ring_key_once, make_key);
    /* Only this thread submits and reaps: let the kernel skip the locking and
     * run completion work when we wait (Linux 6.1+); older kernels say EINVAL. */
    struct io_uring_params prm;
    memset(&prm, 0, sizeof prm);
    prm.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    int rc = io_uring_queue_init_params(URING_QD, &tl.ring, &prm);
    if (rc == -EINVAL) rc = io_uring_queue_init(URING_QD, &tl.ring, 0);
    if (rc < 0) {
        tl.state = -1;
        if (rc == -EPERM || rc == -ENOSYS || rc == -EACCES) atomic_store(&uring_broken, 1);
        return NULL;
    }
    tl.state = 1;
    tl.pid = pid;
    if (ring_key_ok) pthread_setspecific(ring_key, &tl);
    return &tl.ring;
}

int store_fs_uring_works(void) { return get_ring() != NULL; }
uint64_t store_fs_uring_reads(void) { return atomic_load(&uring_reads); }

/* One read in flight: a run of adjacent positions of one group. */
typedef struct {
    uint32_t g;   /* group */
    uint32_t pos; /* first position not yet complete */
    uint32_t k;   /* positions left */
    uint32_t next_free;
    uint64_t off; /* file offset of the next byte */
} uring_op;

typedef struct {
    fs_plan *p;
    size_t nslices;
} uring_job;

static void queue_op(struct io_uring *ring, fs_plan *p, uring_op *ops, uint32_t i)
{
    uring_op *o = &ops[i];
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    if (!sqe) { /* cannot happen: at most URING_QD ops exist; flush and retry anyway */
        io_uring_submit(ring);
        sqe = io_uring_get_sqe(ring);
    }
    int fd = p->groups[o->g].fd;
    if (o->k == 1) { /* nbytes is 32-bit: ask for at most 1 GiB, the rest comes as a short read */
        size_t len = p->iov[o->pos].iov_len;
        io_uring_prep_read(sqe, fd, p->iov[o->pos].iov_base, len > (1u << 30) ? (1u << 30) : (unsigned)len, o->off);
    }
    else
        io_uring_prep_readv(sqe, fd, p->iov + o->pos, o->k, o->off);
    io_uring_sqe_set_data64(sqe, i);
}

static void group_release(fs_plan *p, uint32_t g)
{
    if (--p->groups[g].pending == 0) {
        close(p->groups[g].fd);
        p->groups[g].fd = -1;
    }
}

/* Handle one completion; returns 1 if the op is finished, 0 if it was requeued. */
static int complete(struct io_uring *ring, fs_plan *p, uring_op *ops, uint32_t i, int res)
{
    uring_op *o = &ops[i];
    if (res > 0) { /* an injected fault replaces what the kernel did (fs_fault.c) */
        size_t len = (size_t)res;
        int fault = fs_fault(FS_OP_READ, &len);
        res = fault ? -fault : (int)len;
    }
    if (res == -EINTR || res == -EAGAIN) {
        queue_op(ring, p, ops, i);
        return 0;
    }
    if (res <= 0) {
        const char *key = p->reqs[p->order[o->pos]].key;
        int rc = res < 0 ? zc__err_sys(-res, "reading \"%s\" at offset %llu", key, (unsigned long long)o->off)
                         : zc__err(ZC_EIO, "reading \"%s\": file ended at offset %llu (shrank while read?)", key,
                                   (unsigned long long)o->off);
        fs_plan_note_error(p);
        fs_positions_fail(p, o->pos, o->k, rc);
        return 1;
    }
    o->off += (uint64_t)res;
    size_t left = (size_t)res;
    while (o->k > 0 && left >= p->iov[o->pos].iov_len) {
        left -= p->iov[o->pos].iov_len;
        o->pos++;
        o->k--;
    }
    if (o->k == 0) return 1;
    /* Short read: the rest of the run goes around again. */
    p->iov[o->pos].iov_base = (char *)p->iov[o->pos].iov_base + left;
    p->iov[o->pos].iov_len -= left;
    queue_op(ring, p, ops, i);
    return 0;
}

static int run_slice(void *ctx, size_t si, int slot)
{
    uring_job *job = ctx;
    fs_plan *p = job->p;
    size_t g0 = si * p->ngroups / job->nslices, g1 = (si + 1) * p->ngroups / job->nslices;
    struct io_uring *ring = get_ring();
    if (!ring) {
        for (size_t g = g0; g < g1; g++) fs_pread_group(p, g);
        return 0;
    }
    uring_op ops[URING_QD];
    uint32_t free_head = 0;
    for (uint32_t i = 0; i < URING_QD; i++) ops[i].next_free = i + 1;
    unsigned inflight = 0;
    uint64_t queued = 0;
    size_t next = g0;                      /* next group to open */
    size_t cur = SIZE_MAX, cur_pos = 0, cur_end = 0, cur_nvalid = 0; /* group being queued */
    for (;;) {
        while (free_head < URING_QD) {
            if (cur != SIZE_MAX && cur_pos < cur_end) {
                uint32_t i = free_head;
                free_head = ops[i].next_free;
                size_t k = fs_run_length(p, cur, cur_pos, cur_nvalid, FS_IOV_MAX);
                ops[i] = (uring_op){.g = (uint32_t)cur, .pos = (uint32_t)cur_pos, .k = (uint32_t)k,
                                    .off = p->start[cur_pos]};
                p->groups[cur].pending++;
                queue_op(ring, p, ops, i);
                inflight++;
                queued++;
                cur_pos += k;
                continue;
            }
            if (cur != SIZE_MAX) { /* all of cur is queued: drop the queuing reference */
                group_release(p, (uint32_t)cur);
                cur = SIZE_MAX;
            }
            if (next >= g1) break;
            size_t g = next++;
            int fd;
            uint64_t size;
            if (fs_group_open(p, g, &fd, &size) < 0) continue;
            size_t nv = fs_group_prepare(p, g, size);
            if (nv == 0) {
                close(fd);
                continue;
            }
            p->groups[g].fd = fd;
            p->groups[g].pending = 1;
            cur = g;
            cur_pos = p->groups[g].first;
            cur_end = cur_pos + nv;
            cur_nvalid = nv;
        }
        if (inflight == 0) break;
        int rc = io_uring_submit_and_wait(ring, 1);
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY && rc != -ENOMEM) {
            /* The ring itself failed (never seen in practice). Reads in flight may
             * still land in their buffers, so those are left allocated (leaked)
             * rather than freed under the kernel; everything is reported failed. */
            zc__err_sys(-rc, "io_uring_submit_and_wait");
            fs_plan_note_error(p);
            io_uring_queue_exit(ring);
            tl.state = 0;
            for (uint32_t i = 0; i < URING_QD; i++) {
                bool busy = true;
                for (uint32_t f = free_head; f < URING_QD; f = ops[f].next_free)
                    if (f == i) busy = false;
                if (!busy) continue;
                for (size_t pos = ops[i].pos; pos < ops[i].pos + ops[i].k; pos++) {
                    store_req *r = &p->reqs[p->order[pos]];
                    r->data = NULL;
                    r->size = 0;
                    r->status = ZC_EIO;
                }
                group_release(p, ops[i].g);
            }
            if (cur != SIZE_MAX) {
                fs_positions_fail(p, cur_pos, cur_end - cur_pos, ZC_EIO);
                group_release(p, (uint32_t)cur);
            }
            for (size_t g = next; g < g1; g++) fs_pread_group(p, g);
            break;
        }
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(ring, head, cqe)
        {
            uint32_t i = (uint32_t)io_uring_cqe_get_data64(cqe);
            seen++;
            if (complete(ring, p, ops, i, cqe->res)) {
                group_release(p, ops[i].g);
                ops[i].next_free = free_head;
                free_head = i;
                inflight--;
            } else {
                queued++;
            }
        }
        io_uring_cq_advance(ring, seen);
    }
    atomic_fetch_add_explicit(&uring_reads, queued, memory_order_relaxed);
    return 0;
}

int fs_read_uring(fs_plan *p)
{
    if (atomic_load_explicit(&uring_broken, memory_order_relaxed)) return fs_read_pread(p);
    pool *pl = pool_default();
    size_t w = (size_t)pool_size(pl);
    /* A few slices per thread so a slow slice does not hold the batch back;
     * inside a pool task everything runs on this thread: one slice, one pipeline. */
    size_t nslices = pool_in_task() ? 1 : p->ngroups < 4 * w ? p->ngroups : 4 * w;
    if (nslices == 0) return 0;
    uring_job job = {p, nslices};
    return pool_for(pl, nslices, 0, run_slice, &job);
}
#endif /* ZC_HAVE_URING */
