/* store/store.h — key/value stores behind one interface.
 *
 * Keys are '/'-separated relative paths ("a/b/c/0.1"). Every key passes
 * store_key_check before it reaches a backend: no leading '/', no empty, "." or
 * ".." segment, no backslash or control character, so no key escapes the root.
 *
 * Reads are batched: get_many(reqs, n) fetches many keys or byte ranges at once
 * (the local store keeps many requests in flight; HTTP/S3 will use curl multi).
 * Each request gets its own status: a missing key is ZC_ENOENT in that request,
 * not a failure of the batch. Puts are atomic: readers see the old value or the
 * new one, never a half-written object (temp file + rename for files).
 *
 * get_many overwrites every request's outputs. On success data is non-NULL
 * (even for 0 bytes); on failure data is NULL and size 0. Besides ZC_ENOENT and
 * ZC_ERANGE a request may get ZC_EINVAL (buf too small for the range),
 * ZC_ENOMEM or ZC_EIO; the thread's message then describes the first such
 * failure of the batch. A store may be used by several threads at once (the
 * zarr layer reads chunks from pool tasks); the memory store locks, the file
 * store shares nothing but its root fd. Internals: docs/internals/store.md. */
#ifndef ZC_STORE_STORE_H
#define ZC_STORE_STORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

#define STORE_TO_END UINT64_MAX /* req.length: read from offset to the end */

typedef struct {
    /* in */
    const char *key;    /* key to read */
    uint64_t offset;    /* first byte; with from_end, bytes between the range's end and the object's end */
    uint64_t length;    /* bytes to read, or STORE_TO_END */
    bool from_end;      /* range ends `offset` bytes before the end: {offset 0, length N} reads
                         * the last N bytes (shard index at end); see store_resolve_range */
    void *buf;          /* optional caller buffer to read into (must hold the range) */
    size_t buf_cap;     /* capacity of buf */
    bool lend;          /* store_get_many_each may tell it with data pointing into the store's own
                         * buffer, valid during the call only (data is NULL after it): the caller's
                         * callback uses the bytes before it returns */
    /* out */
    void *data;         /* the bytes: == buf if given, else zc__malloc'd (caller frees) */
    size_t size;        /* bytes read */
    uint64_t total;     /* size of the whole object, when the backend knows it (else 0) */
    int status;         /* 0, ZC_ENOENT (no such key), ZC_ERANGE (range past the end), or error */
} store_req;

/* Told that request i of a batch is complete (store_get_many_each): told once,
 * from the thread that called store_get_many_each. */
typedef void (*store_each_fn)(store_req *reqs, size_t i, void *ctx);

/* A mapped object (store_map). */
typedef struct store_map_t {
    const void *addr;   /* the object's bytes */
    uint64_t size;      /* its size (> 0) */
    void *handle;       /* the backend's, for store_unmap; NULL = nothing mapped */
    void (*release)(void *handle); /* called by store_unmap (the store itself may be closed by then) */
    const atomic_bool *faulted; /* set if the file was cut short under the mapping (store_map_check); or NULL */
    const char *key;    /* the object's key, for messages (valid while mapped) */
} store_map_t;

/* The public zc_store is this store header. */
typedef struct zc_store store;

typedef struct store_vtable {
    unsigned version;   /* 1 */
    const char *scheme; /* "file", "memory" */
    /* Fill each request; return 0 unless the batch itself could not run. */
    int (*get_many)(store *s, store_req *reqs, size_t n);
    int (*put)(store *s, const char *key, const void *data, size_t size);
    /* Remove a key; absent is not an error. */
    int (*erase)(store *s, const char *key);
    /* Size of an object; ZC_ENOENT if absent. */
    int (*size)(store *s, const char *key, uint64_t *size);
    /* Call fn(key, ctx) for every key directly under `prefix` ("" = root; keys are
     * returned relative to the root, folders with a trailing '/'). fn returning
     * non-zero stops the listing and is returned. */
    int (*list_dir)(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx);
    void (*close)(store *s);
    /* Optional (may be NULL): call fn(key, ctx) for every object anywhere below
     * `prefix` ("" = all), keys relative to the root, no folders. Same stop rule. */
    int (*list_prefix)(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx);
    /* Optional (may be NULL): map a whole object read-only (see store_map). */
    int (*map)(store *s, const char *key, struct store_map_t *m);
    /* Optional (may be NULL): get_many calling each(reqs, i, ctx) once per
     * request as soon as its outputs are final (see store_get_many_each). */
    int (*get_many_each)(store *s, store_req *reqs, size_t n, store_each_fn each, void *ctx);
    /* Optional (NULL: a store without folders): remove the empty folders below
     * `prefix`, left by erased keys, and prefix's own folder if that leaves it
     * empty (never the root). Only while nothing writes there: a put racing it
     * could lose its new folder. */
    int (*prune)(store *s, const char *prefix);
    /* Optional (NULL: the URL names the place): the canonical name of the
     * place `path` ("" = the root; no trailing '/') is stored at, comparable
     * with any store's (a filesystem: the real path, links resolved).
     * ZC_ENOENT (no message) if there is nothing there. */
    int (*locate)(store *s, const char *path, char *buf, size_t size);
} store_vtable;

/* Every store starts with this header; backends embed it first. */
struct zc_store {
    const store_vtable *vt;
    unsigned flags;     /* ZC_STORE_* */
    char *url;          /* as opened, for messages */
    unsigned io_depth;  /* requests the store wants in flight at once: 0 = local (few suffice, a
                         * round trip is cheap); HTTP/S3: --io-concurrency (each costs a latency) */
};

#define STORE_KEY_MAX 4096 /* longest key, in bytes */

/* 0 if `key` is a valid key, else ZC_EINVAL naming it and the rule broken. */
int store_key_check(const char *key);
/* Same for a listing prefix: "" (the root) is valid, and one trailing '/' is allowed. */
int store_prefix_check(const char *prefix);

/* Resolve a request's byte range against an object of `total` bytes:
 * plain: [offset, offset + length); from_end: [total - offset - length, total - offset);
 * length STORE_TO_END takes everything from the start (plain) or up to the end
 * (from_end). Returns ZC_ERANGE (no message) if the range does not fit. */
static inline int store_resolve_range(const store_req *r, uint64_t total, uint64_t *start, uint64_t *len)
{
    if (r->offset > total) return ZC_ERANGE;
    uint64_t avail = total - r->offset, n = r->length;
    if (n == STORE_TO_END) n = avail;
    else if (n > avail) return ZC_ERANGE;
    *start = r->from_end ? avail - n : r->offset;
    *len = n;
    return 0;
}

/* Backends (one file each). */
int store_fs_open(const char *path, unsigned flags, store **out);
int store_mem_open(const char *name, unsigned flags, store **out);

/* Convenience wrappers (check keys, flags, and name the key in errors). */
int store_get(store *s, const char *key, void **data, size_t *size);          /* whole object */
/* Checks every key first: an invalid one fails the batch with ZC_EINVAL before
 * anything is read (that request's status ZC_EINVAL, the others ZC_ECANCELED). */
int store_get_many(store *s, store_req *reqs, size_t n);
/* store_get_many, and each(reqs, i, ctx) called once for every request i,
 * on the calling thread, as soon as its outputs (data, size, total, status)
 * are final: on HTTP/S3 while the rest of the batch is still arriving, so the
 * caller decodes one object while the others come (connections do not idle
 * between batches); other stores call it for every request, in order, after
 * the batch. The callback may use reqs[i] as get_many leaves it (its data is
 * the caller's to free, after the call too) and must not start another
 * batch on the same store from inside. The return is get_many's: when it is
 * negative, some requests may not have been told (their statuses are set). */
int store_get_many_each(store *s, store_req *reqs, size_t n, store_each_fn each, void *ctx);
int store_put(store *s, const char *key, const void *data, size_t size);
int store_erase(store *s, const char *key);
int store_size(store *s, const char *key, uint64_t *size);
int store_list_dir(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx);
/* Map a whole object read-only: m->addr, m->size (> 0) stay valid until
 * store_unmap(s, m), even if the object is replaced or erased (a replacement
 * is a new file). The file store keeps recent mappings and hands the same one
 * out again while the file at that key is the same (device, inode, size,
 * mtime). ZC_EUNSUPPORTED (no message) when the store cannot map or declines
 * (empty object, not a regular file, too many maps): read it with
 * store_get_many then (also always with ZC_STORE_MAP=0 in the environment);
 * ZC_ENOENT (no message) if absent. Another process cutting the file short
 * in place while it is mapped makes the bytes past the new end read as zeros
 * (not SIGBUS: store/map_guard.c), and store_map_check then fails: check it
 * after using the bytes and before trusting what was made of them. */
int store_map(store *s, const char *key, store_map_t *m);
/* 0, or ZC_EIO naming the key if part of the mapping was lost to a file cut
 * short by another program while it was mapped (the bytes read were zeros). */
int store_map_check(const store_map_t *m);
/* Release a mapping (no-op if nothing is mapped: handle NULL); valid after
 * the store was closed (s is not used). */
void store_unmap(store *s, store_map_t *m);
/* Drop the pages of mapping m from this process (it stays valid: the data
 * stays in the page cache and a later access faults it back): a caller done
 * with a mapping the store keeps for later reads no longer holds its touched
 * pages in its RSS. Every mapping store_map gives is a read-only file mapping
 * (MADV_DONTNEED leaves such data as it is). */
void store_map_drop(store_map_t *m);
/* vt->prune where there is one, else nothing to do. */
int store_prune(store *s, const char *prefix);
/* Every object below prefix, recursively (vt->list_prefix, or list_dir walked). */
int store_list_prefix(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx);
/* Where node `path` of s lives, as a name equal for two stores' nodes at the
 * same place and a prefix ('/' after it) of the name of any node below it:
 * vt->locate, else the URL without trailing '/' then "/path". ZC_ENOENT (no
 * message) if the store knows there is nothing there; ZC_EOVERFLOW if it
 * does not fit in size. */
int store_location(store *s, const char *path, char *buf, size_t size);
/* Erase every object below prefix ("" or ending in '/'), then the folders
 * that leaves empty (store_prune): rm -r on any store. Stops at the first
 * key that cannot be erased. */
int store_erase_prefix(store *s, const char *prefix);

/* Keys collected from a listing: pass store_keys_add as the listing's fn and
 * a zeroed store_keys as its ctx; store_keys_free frees them. */
typedef struct {
    char **keys;
    size_t n, cap;
} store_keys;
int store_keys_add(const char *key, void *ctx);
void store_keys_free(store_keys *l);

#endif
