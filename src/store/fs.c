/* store/fs.c — the local filesystem store: open, atomic put, erase, size,
 * listing, and the batch plan shared by the two read engines (fs_pread.c,
 * fs_uring.c). See fs.h for the plan layout.
 *
 * Every key is opened relative to the root's directory fd (openat), so no path
 * string is built on the read path. A put writes a temporary file in the
 * target's folder, named ".<base>.tmp.<pid>.<counter>", then renames it over the
 * target: readers see the old object or the new one, never a part. Listings
 * skip those temporary names (and names that are not valid key segments). */
#include "store/fs.h"
#include "store/map_guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/checked.h"

static atomic_ulong tmp_counter; /* makes temporary names unique within the process */
static void maps_free(struct fs_maps *t);

/* ------------------------------------------------------------------ batch plan */

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ^ (h >> 29);
}

int fs_plan_build(fs_plan *p, fs_store *fs, store_req *reqs, size_t n, void *stack)
{
    memset(p, 0, offsetof(fs_plan, msg));
    p->msg[0] = 0;
    p->fs = fs;
    p->reqs = reqs;
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        reqs[i].data = NULL;
        reqs[i].size = 0;
        reqs[i].total = 0;
        reqs[i].status = 0;
    }
    if (n == 0) return 0;
    if (n >= UINT32_MAX / 4) {
        for (size_t i = 0; i < n; i++) reqs[i].status = ZC_EINVAL;
        return zc__err(ZC_EINVAL, "batch of %zu requests is too large", n);
    }
    size_t tcap = 4;
    while (tcap < 2 * n) tcap *= 2;
    /* Layout, most aligned first: iov[n], start[n], groups[n], order[n], gid[n], table[tcap]. */
    size_t per = sizeof(struct iovec) + sizeof(uint64_t) + sizeof(fs_group) + 2 * sizeof(uint32_t);
    size_t bytes;
    if (ck_mul_sz(per, n, &bytes) || ck_add_sz(bytes, tcap * sizeof(uint32_t), &bytes)) {
        for (size_t i = 0; i < n; i++) reqs[i].status = ZC_ENOMEM;
        return zc__err(ZC_ENOMEM, "batch of %zu requests is too large", n);
    }
    unsigned char *mem = stack;
    if (bytes > FS_PLAN_STACK) {
        mem = p->heap = zc__malloc(bytes);
        if (!mem) {
            for (size_t i = 0; i < n; i++) reqs[i].status = ZC_ENOMEM;
            return zc__err(ZC_ENOMEM, "out of memory planning a batch of %zu reads", n);
        }
    }
    p->iov = (struct iovec *)mem;
    p->start = (uint64_t *)(p->iov + n);
    p->groups = (fs_group *)(p->start + n);
    p->order = (uint32_t *)(p->groups + n);
    uint32_t *gid = p->order + n;
    uint32_t *table = gid + n;
    memset(table, 0, tcap * sizeof *table);

    /* Assign group ids; p->start[g] holds group g's hash meanwhile, and
     * groups[g].first the request that named it first. */
    size_t ng = 0, mask = tcap - 1;
    for (size_t i = 0; i < n; i++) {
        const char *key = reqs[i].key;
        uint64_t h = hash_key(key);
        size_t slot = (size_t)h & mask;
        uint32_t g;
        for (;;) {
            if (!table[slot]) {
                g = (uint32_t)ng++;
                table[slot] = g + 1;
                p->start[g] = h;
                p->groups[g] = (fs_group){.first = (uint32_t)i, .count = 0, .fd = -1};
                break;
            }
            g = table[slot] - 1;
            if (p->start[g] == h && !strcmp(reqs[p->groups[g].first].key, key)) break;
            slot = (slot + 1) & mask;
        }
        gid[i] = g;
        p->groups[g].count++;
    }
    /* Counts to first positions, then scatter request indices. */
    uint32_t pos = 0;
    for (size_t g = 0; g < ng; g++) {
        uint32_t c = p->groups[g].count;
        p->groups[g].first = pos;
        p->groups[g].count = 0;
        pos += c;
    }
    for (size_t i = 0; i < n; i++) {
        fs_group *gr = &p->groups[gid[i]];
        p->order[gr->first + gr->count++] = (uint32_t)i;
    }
    p->ngroups = ng;
    return 0;
}

void fs_plan_free(fs_plan *p)
{
    zc__free(p->heap);
    p->heap = NULL;
}

void fs_plan_note_error(fs_plan *p)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&p->have_msg, &expected, 1))
        zc_errmsg_r(p->msg, sizeof p->msg);
}

void fs_plan_finish(fs_plan *p)
{
    if (atomic_load(&p->have_msg)) zc__err_set_text(p->msg);
}

static void fail_req(store_req *r, int status)
{
    if (r->data && r->data != r->buf) zc__free(r->data);
    r->data = NULL;
    r->size = 0;
    r->status = status;
}

void fs_positions_fail(fs_plan *p, size_t pos, size_t k, int status)
{
    for (size_t i = pos; i < pos + k; i++) fail_req(&p->reqs[p->order[i]], status);
}

void fs_group_fail(fs_plan *p, size_t g, int status)
{
    fs_positions_fail(p, p->groups[g].first, p->groups[g].count, status);
}

int fs_group_open(fs_plan *p, size_t g, int *fd, uint64_t *size)
{
    const char *key = p->reqs[p->order[p->groups[g].first]].key;
    int f = openat(p->fs->root_fd, key, O_RDONLY | O_CLOEXEC);
    if (f < 0) {
        int err = errno;
        int rc = zc__errno_code(err);
        if (rc != ZC_ENOENT) {
            zc__err_sys(err, "opening \"%s\" in %s", key, p->fs->root);
            fs_plan_note_error(p);
        }
        fs_group_fail(p, g, rc);
        return rc;
    }
    struct stat st;
    if (fstat(f, &st) != 0) {
        int rc = zc__err_sys(errno, "stat of \"%s\" in %s", key, p->fs->root);
        fs_plan_note_error(p);
        close(f);
        fs_group_fail(p, g, rc);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) { /* a folder (or fifo...) is not an object */
        close(f);
        fs_group_fail(p, g, ZC_ENOENT);
        return ZC_ENOENT;
    }
    *fd = f;
    *size = (uint64_t)st.st_size;
    return 0;
}

/* Sort positions [a, b) by start (order and start move together). */
static void swap_pos(fs_plan *p, size_t i, size_t j)
{
    uint64_t s = p->start[i];
    p->start[i] = p->start[j];
    p->start[j] = s;
    uint32_t o = p->order[i];
    p->order[i] = p->order[j];
    p->order[j] = o;
}

static void sort_positions(fs_plan *p, size_t a, size_t b)
{
    while (b - a > 16) {
        /* Median of three as pivot, Hoare partition; recurse on the smaller side. */
        size_t m = a + (b - a) / 2;
        if (p->start[m] < p->start[a]) swap_pos(p, m, a);
        if (p->start[b - 1] < p->start[a]) swap_pos(p, b - 1, a);
        if (p->start[b - 1] < p->start[m]) swap_pos(p, b - 1, m);
        uint64_t pivot = p->start[m];
        size_t i = a, j = b - 1;
        for (;;) {
            while (p->start[i] < pivot) i++;
            while (p->start[j] > pivot) j--;
            if (i >= j) break;
            swap_pos(p, i, j);
            i++;
            j--;
        }
        size_t mid = j + 1; /* [a, mid) <= pivot <= [mid, b) */
        if (mid - a < b - mid) {
            sort_positions(p, a, mid);
            a = mid;
        } else {
            sort_positions(p, mid, b);
            b = mid;
        }
    }
    for (size_t i = a + 1; i < b; i++)
        for (size_t j = i; j > a && p->start[j] < p->start[j - 1]; j--) swap_pos(p, j, j - 1);
}

size_t fs_group_prepare(fs_plan *p, size_t g, uint64_t size)
{
    size_t first = p->groups[g].first, end = first + p->groups[g].count, nvalid = first;
    bool sorted = true;
    for (size_t pos = first; pos < end; pos++) {
        store_req *r = &p->reqs[p->order[pos]];
        uint64_t st, len;
        r->total = size;
        if (store_resolve_range(r, size, &st, &len) < 0) {
            r->status = ZC_ERANGE;
            continue;
        }
        if (r->buf) {
            if (len > r->buf_cap) {
                zc__err(ZC_EINVAL, "buffer of %zu bytes is too small for %llu bytes of \"%s\"",
                        r->buf_cap, (unsigned long long)len, r->key);
                fs_plan_note_error(p);
                r->status = ZC_EINVAL;
                continue;
            }
            r->data = r->buf;
        } else {
            if (len > SIZE_MAX - 64 || !(r->data = zc__malloc((size_t)len))) {
                if (len > SIZE_MAX - 64)
                    zc__err(ZC_ENOMEM, "cannot allocate %llu bytes for \"%s\"", (unsigned long long)len, r->key);
                fs_plan_note_error(p);
                r->status = ZC_ENOMEM;
                continue;
            }
        }
        r->size = (size_t)len;
        if (len == 0) continue; /* nothing to read: done */
        /* Keep it: move it to the next valid position. */
        if (pos != nvalid) {
            uint32_t o = p->order[pos];
            p->order[pos] = p->order[nvalid];
            p->order[nvalid] = o;
        }
        p->start[nvalid] = st;
        if (nvalid > first && st < p->start[nvalid - 1]) sorted = false;
        nvalid++;
    }
    if (!sorted) sort_positions(p, first, nvalid);
    for (size_t pos = first; pos < nvalid; pos++) {
        store_req *r = &p->reqs[p->order[pos]];
        p->iov[pos].iov_base = r->data;
        p->iov[pos].iov_len = r->size;
    }
    return nvalid - first;
}

size_t fs_run_length(const fs_plan *p, size_t g, size_t pos, size_t nvalid, size_t max)
{
    size_t end = p->groups[g].first + nvalid, k = 1;
    while (pos + k < end && k < max && p->start[pos + k - 1] + p->iov[pos + k - 1].iov_len == p->start[pos + k])
        k++;
    return k;
}

/* ------------------------------------------------------------------ get_many */

static int fs_get_many(store *s, store_req *reqs, size_t n)
{
    fs_store *fs = (fs_store *)s;
    alignas(16) unsigned char stack[FS_PLAN_STACK];
    fs_plan p;
    ZC_TRY(fs_plan_build(&p, fs, reqs, n, stack));
#ifdef ZC_HAVE_URING
    /* A single request is read fastest inline with pread; batches go through
     * the ring (even one file's many ranges: they are then all in flight). */
    if (fs->io == FS_IO_URING || (fs->io == FS_IO_AUTO && n > 1))
        fs_read_uring(&p);
    else
#endif
        fs_read_pread(&p);
    fs_plan_finish(&p);
    fs_plan_free(&p);
    return 0;
}

/* ------------------------------------------------------------------ put, erase, size */

/* Create the folders of key's first `dirlen` bytes (which end with '/'). */
static int sync_folder(fs_store *fs, const char *key, size_t dirlen);
static int make_parents(fs_store *fs, const char *key, size_t dirlen)
{
    char path[STORE_KEY_MAX + 1];
    memcpy(path, key, dirlen);
    for (size_t i = 0, parent = 0; i < dirlen; i++) {
        if (key[i] != '/') continue;
        path[i] = 0;
        if (mkdirat(fs->root_fd, path, 0777) == 0) {
            /* --fsync: a new folder's name is durable once its parent is synced */
            if (fs->fsync) ZC_TRY(sync_folder(fs, key, parent));
        } else if (errno != EEXIST) {
            return zc__err_sys(errno, "creating folder \"%s\" in %s", path, fs->root);
        }
        path[i] = '/';
        parent = i + 1;
    }
    return 0;
}

static int write_all(int fd, const unsigned char *data, size_t size, const char *name)
{
    while (size > 0) {
        size_t chunk = size < ((size_t)1 << 30) ? size : ((size_t)1 << 30);
        int fault = fs_fault(FS_OP_WRITE, &chunk);
        ssize_t w = fault ? (errno = fault, -1) : write(fd, data, chunk);
        if (w < 0) {
            if (errno == EINTR) continue;
            return zc__err_sys(errno, "writing \"%s\"", name);
        }
        if (w == 0) return zc__err(ZC_EIO, "writing \"%s\": no progress", name);
        data += w;
        size -= (size_t)w;
    }
    return 0;
}

/* A system call retried while it is interrupted (EINTR), through the fault hook. */
static int sync_fd(int fd, int op)
{
    int rc, fault;
    do rc = (fault = fs_fault(op, NULL)) ? (errno = fault, -1) : fsync(fd);
    while (rc != 0 && errno == EINTR);
    return rc;
}

static int rename_at(int dirfd, const char *from, const char *to)
{
    int rc, fault;
    do rc = (fault = fs_fault(FS_OP_RENAME, NULL)) ? (errno = fault, -1) : renameat(dirfd, from, dirfd, to);
    while (rc != 0 && errno == EINTR);
    return rc;
}

static int create_at(int dirfd, const char *name)
{
    int fd, fault;
    do fd = (fault = fs_fault(FS_OP_OPEN, NULL)) ? (errno = fault, -1)
                                                 : openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    while (fd < 0 && errno == EINTR);
    return fd;
}

static int sync_folder(fs_store *fs, const char *key, size_t dirlen)
{
    char path[STORE_KEY_MAX + 1];
    if (dirlen) {
        memcpy(path, key, dirlen - 1);
        path[dirlen - 1] = 0;
    } else {
        strcpy(path, ".");
    }
    int d = openat(fs->root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0) return zc__err_sys(errno, "opening folder \"%s\" to sync it", path);
    int rc = sync_fd(d, FS_OP_DIRSYNC) == 0 ? 0 : zc__err_sys(errno, "syncing folder \"%s\" of %s", path, fs->root);
    close(d);
    return rc;
}

static int fs_put(store *s, const char *key, const void *data, size_t size)
{
    fs_store *fs = (fs_store *)s;
    const char *slash = strrchr(key, '/');
    size_t dirlen = slash ? (size_t)(slash - key) + 1 : 0;
    const char *base = key + dirlen;
    size_t blen = strlen(base);
    if (blen > 200) blen = 200; /* keep the temporary name under NAME_MAX */
    char tmp[STORE_KEY_MAX + 96];
    snprintf(tmp, sizeof tmp, "%.*s.%.*s.tmp.%ld.%lu", (int)dirlen, key, (int)blen, base, (long)getpid(),
             (unsigned long)atomic_fetch_add(&tmp_counter, 1));

    int fd = create_at(fs->root_fd, tmp);
    if (fd < 0 && errno == ENOENT && dirlen) {
        ZC_TRY(make_parents(fs, key, dirlen));
        fd = create_at(fs->root_fd, tmp);
    }
    if (fd < 0) return zc__err_sys(errno, "creating temporary file \"%s\" in %s", tmp, fs->root);
    int rc = write_all(fd, data, size, tmp);
    /* durable order (--fsync): the data, then the name (rename), then the folder holding the name */
    if (!rc && fs->fsync && sync_fd(fd, FS_OP_FSYNC) != 0) rc = zc__err_sys(errno, "syncing \"%s\" in %s", tmp, fs->root);
    if (close(fd) != 0 && !rc) rc = zc__err_sys(errno, "closing \"%s\"", tmp);
    if (!rc && rename_at(fs->root_fd, tmp, key) != 0)
        rc = zc__err_sys(errno, "renaming \"%s\" to \"%s\" in %s", tmp, key, fs->root);
    if (rc) {
        unlinkat(fs->root_fd, tmp, 0);
        return rc;
    }
    if (fs->fsync) ZC_TRY(sync_folder(fs, key, dirlen));
    return 0;
}

static int fs_erase(store *s, const char *key)
{
    fs_store *fs = (fs_store *)s;
    if (unlinkat(fs->root_fd, key, 0) != 0 && errno != ENOENT)
        return zc__err_sys(errno, "removing \"%s\" from %s", key, fs->root);
    return 0;
}

/* The empty folders below the folder open as dfd (closed here), deepest first;
 * *empty: dfd itself holds nothing any more. */
static int prune_below(fs_store *fs, int dfd, int depth, bool *empty)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        int err = errno;
        close(dfd);
        return zc__err_sys(err, "listing a folder of %s", fs->root);
    }
    int rc = 0;
    *empty = true;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        bool sub_empty = false;
        int sfd = -1;
        if (depth < 64 && (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN))
            sfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd >= 0 && (rc = prune_below(fs, sfd, depth + 1, &sub_empty)) == 0 && sub_empty &&
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0)
            continue;
        *empty = false;
    }
    closedir(d);
    return rc;
}

static int fs_prune(store *s, const char *prefix)
{
    fs_store *fs = (fs_store *)s;
    int dfd = openat(fs->root_fd, *prefix ? prefix : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : zc__err_sys(errno, "opening \"%s\" in %s", prefix, fs->root);
    bool empty;
    int rc = prune_below(fs, dfd, 0, &empty);
    if (rc == 0 && empty && *prefix) {
        char dir[STORE_KEY_MAX + 1];
        size_t n = strlen(prefix);
        if (prefix[n - 1] == '/') n--;
        snprintf(dir, sizeof dir, "%.*s", (int)n, prefix);
        unlinkat(fs->root_fd, dir, AT_REMOVEDIR); /* best effort, as below */
    }
    return rc;
}

static int fs_size(store *s, const char *key, uint64_t *size)
{
    fs_store *fs = (fs_store *)s;
    struct stat st;
    if (fstatat(fs->root_fd, key, &st, 0) != 0) {
        int err = errno;
        if (zc__errno_code(err) == ZC_ENOENT) return zc__err(ZC_ENOENT, "no key \"%s\" in %s", key, fs->root);
        return zc__err_sys(err, "stat of \"%s\" in %s", key, fs->root);
    }
    if (!S_ISREG(st.st_mode)) return zc__err(ZC_ENOENT, "\"%s\" in %s is a folder, not a key", key, fs->root);
    *size = (uint64_t)st.st_size;
    return 0;
}

/* ------------------------------------------------------------------ listing */

/* A temporary name of fs_put: ".<base>.tmp.<digits>.<digits>". */
static bool is_temp_name(const char *name)
{
    if (name[0] != '.') return false;
    const char *t = NULL;
    for (const char *q = strstr(name, ".tmp."); q; q = strstr(q + 1, ".tmp.")) t = q;
    if (!t || t == name) return false;
    const char *c = t + 5;
    size_t d1 = strspn(c, "0123456789");
    if (!d1 || c[d1] != '.') return false;
    c += d1 + 1;
    size_t d2 = strspn(c, "0123456789");
    return d2 && !c[d2];
}

/* A directory entry usable as a key segment. */
static bool good_segment(const char *name)
{
    if (!strcmp(name, ".") || !strcmp(name, "..")) return false;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        if (*c < 0x20 || *c == 0x7f || *c == '\\') return false;
    return !is_temp_name(name);
}

/* Kind of entry e in dfd: 1 object, 2 folder, 0 other. */
static int entry_kind(int dfd, const struct dirent *e)
{
    if (e->d_type == DT_REG) return 1;
    if (e->d_type == DT_DIR) return 2;
    if (e->d_type != DT_UNKNOWN && e->d_type != DT_LNK) return 0;
    struct stat st;
    if (fstatat(dfd, e->d_name, &st, 0) != 0) return 0;
    return S_ISREG(st.st_mode) ? 1 : S_ISDIR(st.st_mode) ? 2 : 0;
}

/* Open folder `path` ("" = root) for reading: *d, or NULL if it does not exist. */
static int open_folder(fs_store *fs, const char *path, DIR **d)
{
    *d = NULL;
    int dfd = openat(fs->root_fd, *path ? path : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        if (zc__errno_code(errno) == ZC_ENOENT) return 0;
        return zc__err_sys(errno, "opening folder \"%s\" in %s", path, fs->root);
    }
    if (!(*d = fdopendir(dfd))) {
        int err = errno;
        close(dfd);
        return zc__err_sys(err, "listing folder \"%s\" in %s", path, fs->root);
    }
    return 0;
}

/* Call fn for each entry of folder `path` (held in b, "" or ending with '/');
 * with `recurse`, descend into folders and report objects only. */
static int walk(fs_store *fs, zc_buf *b, bool recurse, int (*fn)(const char *key, void *ctx), void *ctx)
{
    DIR *d;
    ZC_TRY(open_folder(fs, (const char *)b->data, &d));
    if (!d) return 0;
    size_t len = b->size;
    int rc = 0;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno) rc = zc__err_sys(errno, "listing folder \"%s\" in %s", (const char *)b->data, fs->root);
            break;
        }
        if (!good_segment(e->d_name)) continue;
        int kind = entry_kind(dirfd(d), e);
        if (!kind) continue;
        size_t nlen = strlen(e->d_name);
        b->size = len;
        if ((rc = buf_reserve(b, len + nlen + 2)) < 0) break;
        memcpy(b->data + len, e->d_name, nlen);
        b->size = len + nlen;
        if (kind == 2) b->data[b->size++] = '/';
        b->data[b->size] = 0;
        if (kind == 2 && recurse)
            rc = walk(fs, b, true, fn, ctx);
        else
            rc = fn((const char *)b->data, ctx);
        if (rc) break;
    }
    closedir(d);
    b->size = len;
    if (b->data) b->data[len] = 0;
    return rc;
}

static int list(store *s, const char *prefix, bool recurse, int (*fn)(const char *key, void *ctx), void *ctx)
{
    fs_store *fs = (fs_store *)s;
    zc_buf b = {0};
    size_t plen = strlen(prefix);
    ZC_TRY(buf_reserve(&b, plen + 258));
    memcpy(b.data, prefix, plen);
    if (plen && prefix[plen - 1] != '/') b.data[plen++] = '/';
    b.size = plen;
    b.data[plen] = 0;
    int rc = walk(fs, &b, recurse, fn, ctx);
    buf_free(&b);
    return rc;
}

static int fs_list_dir(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx)
{
    return list(s, prefix, false, fn, ctx);
}

static int fs_list_prefix(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx)
{
    return list(s, prefix, true, fn, ctx);
}

/* ------------------------------------------------------------------ open, close */

static void fs_close(store *s)
{
    fs_store *fs = (fs_store *)s;
    maps_free(atomic_load(&fs->maps)); /* mappings still held by callers live on until released */
    if (fs->root_fd >= 0) close(fs->root_fd);
    zc__free(fs->root);
    zc__free(fs->base.url);
    zc__free(fs);
}

/* Mapped objects: whole files, read-only, shared (the page cache itself, no
 * copy). A mapping is a reference-counted fs_mapping: each store_map caller
 * holds one reference, and the store's table of recent mappings another, so
 * a file read again and again (chunks of random windows) is mapped once. The
 * table is keyed by key; an entry is handed out again only while the file at
 * that key has the same device, inode, size and mtime (one fstatat per
 * call), else it is replaced. At most FS_MAP_ENTRIES entries and map_bytes
 * of files in them (clock eviction: the pages a reader kept mapped count in
 * the process's RSS until their mapping goes), and at most FS_MAX_MAPS live
 * mappings in the process (the kernel limits a process's mappings, 65530 by
 * default): beyond that callers read instead. */
#define FS_MAP_ENTRIES 4096
#define FS_MAX_MAPS 8192
static atomic_int live_maps;
static atomic_size_t mapped_now, mapped_peak; /* bytes of files mapped (their pages count in RSS) */
static _Atomic size_t map_bytes_set; /* store_fs_set_map_bytes */

static size_t map_bytes_default;
static pthread_once_t map_bytes_once = PTHREAD_ONCE_INIT;

static void map_bytes_init(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t ram = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0, eighth = ram / 8;
    map_bytes_default = eighth > ((size_t)256 << 20) ? eighth : (size_t)256 << 20;
}

/* The table's size limit: set, or an eighth of physical memory (256 MiB at
 * least), read once (sysconf reads /proc: not on every new mapping). */
static size_t map_bytes(void)
{
    size_t set = atomic_load(&map_bytes_set);
    if (set) return set;
    pthread_once(&map_bytes_once, map_bytes_init);
    return map_bytes_default;
}

void store_fs_set_map_bytes(size_t n) { atomic_store(&map_bytes_set, n); }

size_t store_fs_mapped_peak(void) { return atomic_load(&mapped_peak); }
void store_fs_reset_mapped_peak(void) { atomic_store(&mapped_peak, atomic_load(&mapped_now)); }

typedef struct {
    atomic_int refs;
    bool used;          /* clock bit (under the table lock) */
    void *addr;
    uint64_t size;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
    uint64_t hash;
    char *key;
    int guard;          /* its slot in store/map_guard.c */
} fs_mapping;

struct fs_maps {
    pthread_mutex_t lock;
    fs_mapping *e[FS_MAP_ENTRIES]; /* entries [0, n) */
    size_t n, hand;
    uint64_t bytes; /* sizes of the entries' files */
    uint32_t slot[2 * FS_MAP_ENTRIES]; /* linear probing: entry number + 1, 0 = empty */
};

static void mapping_release(void *vm)
{
    fs_mapping *m = vm;
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1) return;
    map_guard_remove(m->guard);
    munmap(m->addr, (size_t)m->size);
    atomic_fetch_sub(&mapped_now, (size_t)m->size);
    zc__free(m->key);
    zc__free(m);
    atomic_fetch_sub(&live_maps, 1);
}

static size_t maps_find(const struct fs_maps *t, uint64_t h, const char *key)
{
    for (size_t i = h & (2 * FS_MAP_ENTRIES - 1);; i = (i + 1) & (2 * FS_MAP_ENTRIES - 1)) {
        uint32_t v = t->slot[i];
        if (!v || (t->e[v - 1]->hash == h && !strcmp(t->e[v - 1]->key, key))) return i;
    }
}

/* Remove entry k (backward-shift deletion); the last entry moves into its place. */
static void maps_remove(struct fs_maps *t, size_t k)
{
    size_t i = maps_find(t, t->e[k]->hash, t->e[k]->key);
    t->slot[i] = 0;
    for (size_t j = (i + 1) & (2 * FS_MAP_ENTRIES - 1); t->slot[j]; j = (j + 1) & (2 * FS_MAP_ENTRIES - 1)) {
        uint32_t v = t->slot[j];
        t->slot[j] = 0;
        t->slot[maps_find(t, t->e[v - 1]->hash, t->e[v - 1]->key)] = v;
    }
    t->bytes -= t->e[k]->size;
    mapping_release(t->e[k]);
    size_t last = --t->n;
    if (k != last) {
        t->slot[maps_find(t, t->e[last]->hash, t->e[last]->key)] = (uint32_t)(k + 1);
        t->e[k] = t->e[last];
    }
}

static bool same_file(const fs_mapping *m, const struct stat *st)
{
    return m->dev == st->st_dev && m->ino == st->st_ino && m->size == (uint64_t)st->st_size &&
           m->mtime.tv_sec == st->st_mtim.tv_sec && m->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static int fs_map(store *s, const char *key, store_map_t *out)
{
    fs_store *fs = (fs_store *)s;
    struct stat st;
    if (fstatat(fs->root_fd, key, &st, 0) != 0) return errno == ENOENT || errno == ENOTDIR ? ZC_ENOENT : ZC_EUNSUPPORTED;
    if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX || fs_fault_reads())
        return ZC_EUNSUPPORTED;
    uint64_t h = hash_key(key);
    struct fs_maps *t = atomic_load(&fs->maps);
    if (t) {
        pthread_mutex_lock(&t->lock);
        uint32_t v = t->slot[maps_find(t, h, key)];
        if (v && same_file(t->e[v - 1], &st) && !atomic_load(map_guard_flag(t->e[v - 1]->guard))) {
            fs_mapping *m = t->e[v - 1];
            m->used = true;
            atomic_fetch_add(&m->refs, 1);
            pthread_mutex_unlock(&t->lock);
            *out = (store_map_t){m->addr, m->size, m, mapping_release, map_guard_flag(m->guard), m->key};
            return 0;
        }
        pthread_mutex_unlock(&t->lock);
    }
    /* map the file there now (its own fstat: the file actually opened) */
    if (atomic_fetch_add(&live_maps, 1) >= FS_MAX_MAPS) {
        atomic_fetch_sub(&live_maps, 1);
        return ZC_EUNSUPPORTED;
    }
    int rc = ZC_EUNSUPPORTED;
    fs_mapping *m = zc__calloc(1, sizeof *m);
    int f = openat(fs->root_fd, key, O_RDONLY | O_CLOEXEC);
    if (!m || !(m->key = zc__strdup(key)) || f < 0) {
        if (f < 0 && errno == ENOENT) rc = ZC_ENOENT;
        goto fail;
    }
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX) goto fail;
    void *addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, f, 0);
    if (addr == MAP_FAILED) goto fail;
    if ((m->guard = map_guard_add(addr, (size_t)st.st_size)) < 0) { /* unguarded: a truncation would be SIGBUS */
        munmap(addr, (size_t)st.st_size);
        goto fail;
    }
    close(f);
    size_t now = atomic_fetch_add(&mapped_now, (size_t)st.st_size) + (size_t)st.st_size,
           peak = atomic_load(&mapped_peak);
    while (now > peak && !atomic_compare_exchange_weak(&mapped_peak, &peak, now)) {}
    atomic_init(&m->refs, 1);
    m->addr = addr;
    m->size = (uint64_t)st.st_size;
    m->dev = st.st_dev;
    m->ino = st.st_ino;
    m->mtime = st.st_mtim;
    m->hash = h;
    *out = (store_map_t){m->addr, m->size, m, mapping_release, map_guard_flag(m->guard), m->key};
    if (!t) { /* first mapping of this store: its table (a cache: without one, just do not keep) */
        struct fs_maps *nt = zc__calloc(1, sizeof *nt);
        if (!nt) return 0;
        pthread_mutex_init(&nt->lock, NULL);
        struct fs_maps *expected = NULL;
        if (!atomic_compare_exchange_strong(&fs->maps, &expected, nt)) {
            pthread_mutex_destroy(&nt->lock);
            zc__free(nt);
        }
        t = atomic_load(&fs->maps);
    }
    pthread_mutex_lock(&t->lock);
    uint32_t v = t->slot[maps_find(t, h, key)];
    if (v) maps_remove(t, v - 1); /* another file there before, or another thread's mapping of it */
    size_t cap = map_bytes();
    while (t->n >= FS_MAP_ENTRIES || (t->n && t->bytes + m->size > cap)) { /* clock sweep */
        t->hand %= t->n;
        if (t->e[t->hand]->used) t->e[t->hand++]->used = false;
        else maps_remove(t, t->hand);
    }
    atomic_fetch_add(&m->refs, 1); /* the table's */
    m->used = true;
    t->e[t->n] = m;
    t->slot[maps_find(t, h, key)] = (uint32_t)(t->n + 1);
    t->n++;
    t->bytes += m->size;
    pthread_mutex_unlock(&t->lock);
    return 0;
fail:
    if (f >= 0) close(f);
    if (m) zc__free(m->key);
    zc__free(m);
    atomic_fetch_sub(&live_maps, 1);
    return rc;
}

static void maps_free(struct fs_maps *t)
{
    if (!t) return;
    while (t->n) maps_remove(t, t->n - 1);
    pthread_mutex_destroy(&t->lock);
    zc__free(t);
}

static int fs_locate(store *s, const char *path, char *buf, size_t size)
{
    fs_store *fs = (fs_store *)s;
    char where[PATH_MAX + STORE_KEY_MAX + 64], real[PATH_MAX];
    /* the root by its descriptor: the folder opened, wherever it was reached from */
    snprintf(where, sizeof where, "/proc/self/fd/%d/%s", fs->root_fd, path);
    if (!realpath(where, real)) return errno == ENOENT || errno == ENOTDIR ? ZC_ENOENT : zc__err_sys(errno, "%s", where);
    if (strlen(real) >= size) return ZC_EOVERFLOW;
    strcpy(buf, real);
    return 0;
}

static const store_vtable fs_vtable = {
    .version = 1,
    .scheme = "file",
    .get_many = fs_get_many,
    .put = fs_put,
    .erase = fs_erase,
    .prune = fs_prune,
    .size = fs_size,
    .list_dir = fs_list_dir,
    .close = fs_close,
    .list_prefix = fs_list_prefix,
    .map = fs_map,
    .locate = fs_locate,
};

/* Sync the folder holding `path`'s last component (--fsync: a new folder's name). */
static int sync_parent(char *path)
{
    char *slash = strrchr(path, '/');
    const char *dir = slash == path ? "/" : slash ? path : ".";
    if (slash && slash != path) *slash = 0;
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
    if (d < 0 || sync_fd(d, FS_OP_DIRSYNC) != 0) rc = zc__err_sys(errno, "syncing folder \"%s\"", dir);
    if (d >= 0) close(d);
    if (slash && slash != path) *slash = '/';
    return rc;
}

/* mkdir -p path (with `durable`, each new folder's parent synced). */
static int make_folders(const char *path, bool durable)
{
    char *p = zc__strdup(path);
    if (!p) return ZC_ENOMEM;
    int rc = 0;
    for (char *c = p + 1;; c++) {
        if (*c != '/' && *c) continue;
        char saved = *c;
        *c = 0;
        if (mkdir(p, 0777) == 0) {
            if (durable && (rc = sync_parent(p)) < 0) break;
        } else if (errno != EEXIST) {
            rc = zc__err_sys(errno, "creating store folder \"%s\"", p);
            break;
        }
        if (!saved) break;
        *c = saved;
    }
    zc__free(p);
    return rc;
}

int store_fs_open(const char *path, unsigned flags, store **out)
{
    *out = NULL;
    if (!path || !*path) return zc__err(ZC_EINVAL, "empty store path");
    struct stat st;
    if (stat(path, &st) != 0) {
        int err = errno;
        if (err != ENOENT || !(flags & ZC_STORE_CREATE)) {
            if (err == ENOENT) return zc__err(ZC_ENOENT, "no store folder \"%s\"", path);
            return zc__err_sys(err, "opening store folder \"%s\"", path);
        }
        const char *sync = getenv("ZC_FSYNC");
        ZC_TRY(make_folders(path, sync && *sync && strcmp(sync, "0") != 0));
    } else if (!S_ISDIR(st.st_mode)) {
        return zc__err(ZC_EINVAL, "store path \"%s\" is not a folder", path);
    }
    fs_store *fs = zc__calloc(1, sizeof *fs);
    if (!fs) return ZC_ENOMEM;
    fs->root_fd = -1;
    fs->base.vt = &fs_vtable;
    fs->base.flags = flags;
    if (!(fs->root = zc__strdup(path)) || !(fs->base.url = zc__strdup(path))) {
        fs_close(&fs->base);
        return ZC_ENOMEM;
    }
    fs->root_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fs->root_fd < 0) {
        int rc = zc__err_sys(errno, "opening store folder \"%s\"", path);
        fs_close(&fs->base);
        return rc;
    }
    const char *env = getenv("ZC_FSYNC");
    fs->fsync = env && *env && strcmp(env, "0") != 0;
    env = getenv("ZC_STORE_IO");
    fs->io = env && !strcmp(env, "pread") ? FS_IO_PREAD : env && !strcmp(env, "uring") ? FS_IO_URING : FS_IO_AUTO;
    *out = &fs->base;
    return 0;
}

#ifndef ZC_HAVE_URING
int store_fs_uring_works(void) { return 0; }
uint64_t store_fs_uring_reads(void) { return 0; }
#endif

int store_fs_set_io(store *s, int io)
{
    if (!s || s->vt != &fs_vtable) return zc__err(ZC_EINVAL, "not a filesystem store");
    if (io != FS_IO_AUTO && io != FS_IO_PREAD && io != FS_IO_URING)
        return zc__err(ZC_EINVAL, "unknown io engine %d", io);
#ifndef ZC_HAVE_URING
    if (io == FS_IO_URING) return zc__err(ZC_EUNSUPPORTED, "built without io_uring");
#endif
    ((fs_store *)s)->io = io;
    return 0;
}
