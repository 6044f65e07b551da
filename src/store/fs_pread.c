/* store/fs_pread.c — the portable read engine of the filesystem store.
 *
 * Groups (one per distinct key) run in parallel on the core thread pool; each
 * opens its file once, fstats it, and reads every run of adjacent ranges with
 * one preadv straight into the requests' buffers, resuming after short reads. */
#include <errno.h>
#include <unistd.h>

#include "core/pool.h"
#include "store/fs.h"

/* Read positions [pos, pos + k) of the plan, at file offset p->start[pos]. */
static int read_run(fs_plan *p, int fd, size_t pos, size_t k)
{
    struct iovec *iov = p->iov + pos;
    uint64_t off = p->start[pos];
    while (k > 0) {
        size_t want = iov->iov_len;
        int fault = fs_fault(FS_OP_READ, &want);
        ssize_t got = fault ? (errno = fault, -1)
                      : k == 1 || want < iov->iov_len ? pread(fd, iov->iov_base, want, (off_t)off)
                                                      : preadv(fd, iov, (int)k, (off_t)off);
        if (got < 0) {
            if (errno == EINTR) continue;
            return zc__err_sys(errno, "reading \"%s\" at offset %llu", p->reqs[p->order[pos]].key,
                               (unsigned long long)off);
        }
        if (got == 0)
            return zc__err(ZC_EIO, "reading \"%s\": file ended at offset %llu (shrank while read?)",
                           p->reqs[p->order[pos]].key, (unsigned long long)off);
        off += (uint64_t)got;
        /* Skip what was filled; the iovecs are the plan's own, so adjust in place. */
        size_t left = (size_t)got;
        while (k > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            k--;
        }
        if (k > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

void fs_pread_group(fs_plan *p, size_t g)
{
    int fd;
    uint64_t size;
    if (fs_group_open(p, g, &fd, &size) < 0) return;
    size_t nvalid = fs_group_prepare(p, g, size), first = p->groups[g].first;
    for (size_t pos = first; pos < first + nvalid;) {
        size_t k = fs_run_length(p, g, pos, nvalid, FS_IOV_MAX);
        int rc = read_run(p, fd, pos, k);
        if (rc < 0) {
            fs_plan_note_error(p);
            fs_positions_fail(p, pos, k, rc);
        }
        pos += k;
    }
    close(fd);
}

typedef struct {
    fs_plan *p;
    size_t per; /* groups per pool index */
} pread_job;

/* Threads take blocks of neighbouring groups, so they do not write to the same
 * cache lines of the request and plan arrays (false sharing cost ~10% CPU). */
static int block_task(void *ctx, size_t b, int slot)
{
    pread_job *job = ctx;
    size_t g0 = b * job->per, g1 = g0 + job->per;
    if (g1 > job->p->ngroups) g1 = job->p->ngroups;
    for (size_t g = g0; g < g1; g++) fs_pread_group(job->p, g);
    return 0;
}

int fs_read_pread(fs_plan *p)
{
    pool *pl = pool_default();
    if (p->ngroups < 2 || !pl || pool_in_task()) {
        for (size_t g = 0; g < p->ngroups; g++) fs_pread_group(p, g);
        return 0;
    }
    size_t per = p->ngroups / (8 * (size_t)pool_size(pl));
    per = per < 1 ? 1 : per > 64 ? 64 : per;
    pread_job job = {p, per};
    return pool_for(pl, (p->ngroups + per - 1) / per, 0, block_task, &job);
}
