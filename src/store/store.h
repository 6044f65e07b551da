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
 * new one, never a half-written object (temp file + rename for files). */
#ifndef ZC_STORE_STORE_H
#define ZC_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zcube.h"

#define STORE_TO_END UINT64_MAX /* req.length: read from offset to the end */

typedef struct {
    /* in */
    const char *key;    /* key to read */
    uint64_t offset;    /* first byte; with from_end, counted back from the end */
    uint64_t length;    /* bytes to read, or STORE_TO_END */
    bool from_end;      /* read the last `length` bytes (shard index at end) */
    void *buf;          /* optional caller buffer to read into (must hold the range) */
    size_t buf_cap;     /* capacity of buf */
    /* out */
    void *data;         /* the bytes: == buf if given, else zc__malloc'd (caller frees) */
    size_t size;        /* bytes read */
    uint64_t total;     /* size of the whole object, when the backend knows it (else 0) */
    int status;         /* 0, ZC_ENOENT (no such key), ZC_ERANGE (range past the end), or error */
} store_req;

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
} store_vtable;

/* Every store starts with this header; backends embed it first. */
struct zc_store {
    const store_vtable *vt;
    unsigned flags;     /* ZC_STORE_* */
    char *url;          /* as opened, for messages */
};

int store_key_check(const char *key);

/* Backends (one file each). */
int store_fs_open(const char *path, unsigned flags, store **out);
int store_mem_open(const char *name, unsigned flags, store **out);

/* Convenience wrappers (check keys, flags, and name the key in errors). */
int store_get(store *s, const char *key, void **data, size_t *size);          /* whole object */
int store_get_many(store *s, store_req *reqs, size_t n);
int store_put(store *s, const char *key, const void *data, size_t size);
int store_erase(store *s, const char *key);
int store_size(store *s, const char *key, uint64_t *size);
int store_list_dir(store *s, const char *prefix, int (*fn)(const char *key, void *ctx), void *ctx);

#endif
