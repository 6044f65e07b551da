/* store/fs.h — internals of the local filesystem store, shared by fs.c (open,
 * put, list, the batch plan), fs_pread.c and fs_uring.c (the two read engines).
 *
 * A get_many batch is planned once (fs_plan_build): requests are grouped by
 * key with a hash table, so each file is opened once however many ranges of it
 * the batch reads (shards). For each group the engine opens the file, fstats
 * it, and fs_group_prepare resolves the ranges, gives every request its buffer
 * (the caller's, or one zc__malloc), sorts them by offset and lays out one
 * iovec per request, so that runs of adjacent ranges are read by one
 * preadv/READV ("coalescing"). All plan arrays live in one allocation (or on
 * the caller's stack for small batches): nothing else is allocated per request.
 *
 *   plan.order[pos]   request index, grouped: group g owns positions
 *                     [groups[g].first, groups[g].first + groups[g].count)
 *   plan.start[pos]   resolved file offset of that request (after prepare)
 *   plan.iov[pos]     its destination (after prepare)
 */
#ifndef ZC_STORE_FS_H
#define ZC_STORE_FS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/error.h"
#include "store/store.h"

enum { FS_IO_AUTO = 0, FS_IO_PREAD = 1, FS_IO_URING = 2 };

typedef struct {
    store base;      /* must be first */
    char *root;      /* folder path as given (zc__malloc'd), for messages */
    int root_fd;     /* O_DIRECTORY fd of the root; every key is opened relative to it */
    bool fsync;      /* fsync data and folder on put (env ZC_FSYNC=1) */
    int io;          /* FS_IO_*: engine used by get_many (env ZC_STORE_IO=pread|uring) */
    struct fs_maps *_Atomic maps; /* recent mappings by key (store_map), made on first use */
} fs_store;

typedef struct {
    uint32_t first;  /* first position in plan.order */
    uint32_t count;  /* requests reading this key (>= 1) */
    int fd;          /* open file while an engine reads the group, else -1 */
    uint32_t pending;/* io_uring: reads in flight, +1 while reads are still being queued */
} fs_group;

typedef struct {
    fs_store *fs;
    store_req *reqs;
    size_t n;          /* requests */
    size_t ngroups;    /* distinct keys */
    uint32_t *order;   /* [n] request indices grouped by key */
    uint64_t *start;   /* [n] resolved offsets, by position */
    struct iovec *iov; /* [n] destinations, by position */
    fs_group *groups;  /* [ngroups] */
    void *heap;        /* the allocation holding the arrays, or NULL if on the stack */
    /* Detail of the first failure that is not ENOENT/ERANGE, for the caller's thread. */
    atomic_int have_msg;
    char msg[ZC_ERRMSG_MAX];
} fs_plan;

#define FS_IOV_MAX 1024 /* iovecs per preadv/READV (POSIX IOV_MAX on Linux) */

/* Bytes of plan storage small batches may keep on the caller's stack. */
#define FS_PLAN_STACK 3072

/* Group reqs by key. `stack` (FS_PLAN_STACK bytes, 16-aligned) is used if the
 * arrays fit. Also resets every request's outputs (data NULL, status 0). */
int fs_plan_build(fs_plan *p, fs_store *fs, store_req *reqs, size_t n, void *stack);
void fs_plan_free(fs_plan *p);

/* Open a group's file and fstat it: 0 with *fd and *size, or a status for every
 * request of the group (ZC_ENOENT if absent or not a regular file). */
int fs_group_open(fs_plan *p, size_t g, int *fd, uint64_t *size);
/* Resolve ranges against the file size, set buffers, sort by offset and fill
 * iov. Requests that fail (ERANGE, small buffer, ENOMEM) get their status and
 * are moved to the end of the group; returns how many are left to read (they
 * occupy the group's first positions, in offset order). */
size_t fs_group_prepare(fs_plan *p, size_t g, uint64_t size);
/* Length (in positions) of the run of adjacent ranges starting at position
 * `pos`, at most `max` long, limited to the group's first `nvalid` positions. */
size_t fs_run_length(const fs_plan *p, size_t g, size_t pos, size_t nvalid, size_t max);
/* Mark every request of the group (or the positions [pos, pos + k)) failed. */
void fs_group_fail(fs_plan *p, size_t g, int status);
void fs_positions_fail(fs_plan *p, size_t pos, size_t k, int status);
/* Record the thread's message as the batch's detail, if it is the first. */
void fs_plan_note_error(fs_plan *p);
/* Finish: hand the first failure's detail to the caller's thread. */
void fs_plan_finish(fs_plan *p);

/* The read engines. Each fills every request and returns 0 (the plan is built). */
int fs_read_pread(fs_plan *p);
/* Read one group with open/fstat/preadv/close (the pread engine's unit of work). */
void fs_pread_group(fs_plan *p, size_t g);
#ifdef ZC_HAVE_URING
int fs_read_uring(fs_plan *p);
#endif

/* Fault injection (fs_fault.c; test-only, configured by ZC_FAULT_STORE). */
enum { FS_OP_READ, FS_OP_WRITE, FS_OP_OPEN, FS_OP_RENAME, FS_OP_FSYNC, FS_OP_DIRSYNC, FS_OP_COUNT };
/* Before a system call of kind `op`: 0 to make it (*len, the bytes of a read
 * or write, may have been cut: a short count), or an errno to fail it with. */
int fs_fault(int op, size_t *len);
/* True if reads are to fail: map nothing (a mapping cannot fail on cue). */
bool fs_fault_reads(void);
/* Tests: replace the configuration by `spec` (ZC_FAULT_STORE's syntax; NULL:
 * none) and restart the counts. Not thread-safe against running I/O. */
void fs_fault_set(const char *spec);

/* For tests and benchmarks. */
/* Choose the engine of an fs store: FS_IO_AUTO (uring if it works), FS_IO_PREAD, FS_IO_URING. */
int store_fs_set_io(store *s, int io);
/* 1 if io_uring is compiled in and a ring can be created on this machine, else 0. */
int store_fs_uring_works(void);
/* Reads submitted through io_uring so far (process-wide), to prove the path ran. */
uint64_t store_fs_uring_reads(void);
/* Size limit of the files each fs store keeps mapped (store_map), from its
 * next new mapping on; 0 restores the default (an eighth of physical memory). */
void store_fs_set_map_bytes(size_t n);
/* Peak bytes of files mapped by fs stores (all of them) since the last reset:
 * the most their mappings can add to the process's RSS (page cache pages). */
size_t store_fs_mapped_peak(void);
void store_fs_reset_mapped_peak(void);

#endif
