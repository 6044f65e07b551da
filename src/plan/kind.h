/* plan/kind.h — the node kinds: one table, one row (node_kind_def) per kind.
 *
 * Everything the planner, the saved-plan format and the executor need to know
 * about a kind of node is in its row: its names, what the planner does with it
 * (flags), how any region of its values is computed, what that costs in memory,
 * and how its parameters are saved and checked on load. Each kind lives in one
 * file that defines its row (plan/source.c, elementwise.c, slice.c, reduce.c,
 * rechunk.c, manip.c, matmul.c, decomp.c, fft.c, compress.c, sort.c, search.c,
 * take_along.c); plan/kind.c holds the
 * registry, indexed by node_kind (plan/array.h). Nothing outside those files
 * switches over kinds: code asks kind_of(a) instead.
 *
 * Adding a kind: a value at the end of node_kind, its file with its row, and
 * one line in the registry (plan/kind.c). ops/ keeps the builder (argument
 * checks, node_new and the parameters). */
#ifndef ZC_PLAN_KIND_H
#define ZC_PLAN_KIND_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "plan/array.h"
#include "store/store.h"

/* Bytes a task allocates to compute region sel of a (its output buffer aside). */
typedef size_t (*node_proj_fn)(const zc_array *a, const zc_range *sel);

enum {
    /* values that come from outside the graph (a stored array, a caller's buffer,
     * generated values, a scalar): a copy reads them in place, and they are never
     * materialized for being read by several */
    KIND_SOURCE = 1 << 0,
    /* its values are there already: never a stage (an output of this kind is
     * written through a copy) */
    KIND_NO_STAGE = 1 << 1,
    /* always materialized: a stage of its own */
    KIND_STORED = 1 << 2,
    /* computed inside its consumers' tasks, materialized only when read by several */
    KIND_FUSED = 1 << 3,
    /* its values are made only by its stage (node_kind_def.block, or a region that
     * needs its whole stage): a saved plan must give it an operation */
    KIND_STAGE_ONLY = 1 << 4,
    /* its inputs are materialized unless they are sources (a copy reads stored chunks) */
    KIND_STORED_INPUT = 1 << 5,
    /* calls BLAS/LAPACK: the memory check reserves their per-thread workspace */
    KIND_BLAS = 1 << 6,
    /* stored uncompressed as an intermediate (and so are rechunked copies of it):
     * its consumers read byte ranges of its chunks (a sort's runs), or its values
     * do not compress (an FFT's spectra: LZ4 would only cost CPU on both ends) */
    KIND_UNCOMPRESSED = 1 << 7,
    /* its values live in the planning process's memory: never in a saved plan,
     * and a saved plan naming it is refused */
    KIND_IN_MEMORY = 1 << 8,
    /* its projection of a region is that of the regions its region function
     * pulls from its inputs, no representative block: the reads below it may
     * be counted at their true alignment (plan.c proj_exact) */
    KIND_PROJ_EXACT = 1 << 9,
};

typedef struct {
    const char *json;             /* its name in saved plans ("ew", "reshape", "fft") */
    unsigned flags;               /* KIND_* */
    int min_inputs, max_inputs;   /* inputs a saved node of this kind may list */
    /* Name of a node in plans and reports ("mean", "rfft", "reshape"). */
    const char *(*name)(const zc_array *a);
    /* Text after the name of a stage of this kind (" (round 1)"), or NULL. */
    const char *(*stage_note)(const zc_array *a);
    /* Values of region sel of a (C order) into out, from its inputs. NULL for a
     * kind computed only block by block (then `block` is set). Thread-safe. */
    int (*region)(zc_array *a, const zc_range *sel, void *out);
    /* Values of block b of a's grid into out, or NULL (region serves). */
    int (*block)(zc_array *a, int64_t b, void *out);
    /* Bytes a task allocates to compute region sel of a, out aside; proj projects
     * an input's region (reading it when it is materialized, else computing it).
     * For a kind with `block`, the projection of one block's task. */
    size_t (*proj)(const zc_array *a, const zc_range *sel, node_proj_fn proj);
    /* Bytes the kind's library keeps for a node outside zcube's allocator, resident
     * for the whole computation (FFTW's planner state and plans: the reserve "fft"
     * of exec/memcheck.c); NULL: none. */
    size_t (*library_mem)(const zc_array *a);
    /* At plan time, before its stage is projected: fit the node's parameters (a
     * product's contracted step) so that a task, as stage_proj projects it,
     * needs at most `limit` bytes where it can. NULL: nothing to fit. */
    void (*fit)(zc_array *a, size_t limit, size_t (*stage_proj)(const zc_array *a));
    /* The parameters into a saved node object; < 0 (with the error set) when a
     * node of this kind cannot be saved. NULL: no parameters. */
    int (*to_json)(const zc_array *a, json_t *o);
    /* The parameters from saved node object o (node i of the document) into a,
     * made by node_new from the saved shape, chunks, dtype and inputs; every
     * parameter checked (a saved plan may be forged). NULL: no parameters. */
    int (*from_json)(const json_t *o, zc_array *a, int i);
    /* Make the node of saved object o itself (a stored array opens its store and
     * hands it back in *st, kept open for the plan's life), instead of node_new
     * + from_json; NULL for other kinds. */
    int (*load)(const json_t *o, int i, zc_store **st, zc_array **out);
    /* On a plan's fresh copy (node_clone): clear the per-plan state copied from
     * its origin. NULL: none. */
    void (*clone)(zc_array *c);
    /* Free per-plan state, and, when a->origin is NULL, the owned parameters. */
    void (*release)(zc_array *a);
    /* At plan time, before stages are chosen, on the plan's own node: replace it
     * by (or give it inputs that are) stages fitted to `limit`, as task_proj
     * projects a task writing `block` (NULL: one chunk) — a sort too long for
     * one task becomes sorted runs and their merge. NULL: nothing to expand. */
    int (*expand)(zc_array *a, size_t limit, size_t (*task_proj)(const zc_array *a, const int64_t *block));
    /* The block of chunks one task of its stage writes into block, true; false
     * (block[0] = 0) for one chunk per task. NULL: one chunk. */
    bool (*task_block)(const zc_array *a, int64_t *block);
} node_kind_def;

/* The row of kind k, and of a node's kind. */
const node_kind_def *kind_def(node_kind k);
static inline const node_kind_def *kind_of(const zc_array *a) { return kind_def(a->kind); }
/* The kind whose saved name is `json`; -1 when there is none. */
int kind_by_json(const char *json, node_kind *k);
static inline bool kind_has(const zc_array *a, unsigned flag) { return (kind_of(a)->flags & flag) != 0; }

/* ---- helpers the kinds share ---- */

/* Projection of reading region sel of a stored array of a's shape with chunks
 * `chunks`: one decoded chunk of scratch (none for an uncompressed zarr array)
 * and the compressed bytes of a batch of chunks (at most 64), counted at
 * decoded size, at the worst alignment. */
size_t node_proj_read(const zc_array *a, const int64_t *chunks, const zc_range *sel);
/* The same read where sel is one of a grid of regions of its extent from the
 * origin (a copy task's block: every task's region is aligned as sel is), so
 * the chunks it touches are counted exactly. */
size_t node_proj_read_tiled(const zc_array *a, const int64_t *chunks, const zc_range *sel);
/* The same read of exactly the region sel (its alignment as it is): what a
 * task reading sel needs, for projections made task by task. */
size_t node_proj_read_exact(const zc_array *a, const int64_t *chunks, const zc_range *sel);
/* Elements of a range. */
static inline int64_t range_count(const zc_range *s)
{
    return s->stop > s->start ? (s->stop - s->start - 1) / s->step + 1 : 0;
}
/* A JSON list of n integers. */
json_t *kind_int_array(const int64_t *v, int n);
/* The integers of JSON list a (at most max) into out: their count, or ZC_EFORMAT. */
int kind_ints(const json_t *a, int64_t *out, int max);
/* A strided view's parameters (slices and views) into a saved node object:
 * per output dim its input dim, start and step; per input dim its fixed index. */
void kind_view_to_json(json_t *o, const int *in_dim, const int64_t *start, const int64_t *step, const int64_t *fixed,
                       int ndim, int in_ndim);
/* An integer list of exactly n items at key of o (node i of a saved plan). */
int kind_get_ints(const json_t *o, const char *key, int64_t *out, int n, int i);
/* The dtype named by a saved string (ZC_RAW for "raw"), ZC_DTYPE_INVALID if none. */
zc_dtype kind_dtype_of(const json_t *v);
/* A store's URL as another process on this machine or another reaches it
 * (absolute path, or the URL of a remote store); ZC_EUNSUPPORTED for a memory store. */
int kind_store_url(zc_store *st, char *buf, size_t size);

#endif
