/* plan/array.h — lazy arrays: the nodes of a plan.
 *
 * A zc_array is one operation with its parameters and inputs (held by
 * reference), and its shape, dtype and regular chunk grid. Nothing is computed
 * when it is made. Every node can produce any hyperslab of its values
 * (node_region), either by reading its materialized Zarr array or by computing
 * from its inputs; so fusion is simply "not materializing" a node, and a task
 * pulls exactly the regions it needs through a chain of fused nodes.
 *
 * Kinds (each one row of the kind table, plan/kind.h, in the file named):
 *   ZARR, BUFFER, CREATE, SCALAR  sources: stored, a caller's buffer, generated, a scalar (plan/source.c)
 *   EW       one elementwise function of 1–3 inputs, with broadcasting (plan/elementwise.c)
 *   SLICE    basic indexing: per output dim an input dim with start/step (< 0: read
 *            ascending, reversed in place), or a new axis (plan/slice.c)
 *   REDUCE   one round of a tree reduction (plan/reduce.c; ops/reduce.c makes the rounds)
 *   RECHUNK  the same values with other chunks (one copy stage; multistage
 *            rechunks are chains of these, planned at compute time) (plan/rechunk.c)
 *   RESHAPE, VIEW, CONCAT, GATHER, TOTALS, SCAN: manipulation and cumulative
 *            functions (plan/manip.c, see plan/manip.h)
 *   MATMUL   (batched) matrix product of two inputs (plan/matmul.c)
 *   DECOMP   QR, SVD, solve... (LAPACK) and TSQR's pieces (plan/decomp.c)
 *   FFT      1-D transforms along an axis held whole by every input block (plan/fft.c)
 *   COMPRESS the rows where a bool vector is true: x[mask], nonzero (plan/compress.c)
 *   SORT     sort/argsort along an axis: whole lines, or sorted runs and their merge (plan/sort.c)
 *   SEARCH   searchsorted of values in a sorted 1-D array of any length (plan/search.c)
 *   TAKE_ALONG take_along_axis: values picked along an axis by an index array (plan/take_along.c) */
#ifndef ZC_PLAN_ARRAY_H
#define ZC_PLAN_ARRAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "zcube.h"

#define NODE_MAX_INPUTS 3

typedef struct node_cache node_cache;

typedef enum { NODE_ZARR, NODE_BUFFER, NODE_CREATE, NODE_SCALAR, NODE_EW, NODE_SLICE, NODE_REDUCE, NODE_RECHUNK,
              /* plan/manip.h */ NODE_RESHAPE, NODE_VIEW, NODE_CONCAT, NODE_GATHER, NODE_TOTALS, NODE_SCAN,
              /* plan/matmul.h */ NODE_MATMUL,
              /* plan/decomp.h */ NODE_DECOMP,
              /* plan/fft.h */ NODE_FFT,
              /* plan/compress.c */ NODE_COMPRESS,
              /* plan/sort.h */ NODE_SORT,
              /* plan/search.c */ NODE_SEARCH,
              /* plan/take_along.c */ NODE_TAKE_ALONG,
              NODE_KIND_END_ /* the number of kinds (plan/kind.c has a row for each) */ } node_kind;

typedef enum { CREATE_FULL, CREATE_ARANGE, CREATE_LINSPACE, CREATE_EYE, CREATE_UNIFORM, CREATE_NORMAL } create_kind;

typedef enum { ROUND_FIRST = 1, ROUND_LAST = 2 } round_flags; /* a single round is FIRST|LAST */

struct zc_array {
    atomic_int refs;
    node_kind kind;
    int ndim;
    int64_t shape[ZC_MAX_DIMS];
    int64_t chunks[ZC_MAX_DIMS];
    zc_dtype dtype;
    size_t itemsize;
    int ninputs;
    zc_array *inputs[NODE_MAX_INPUTS];
    union {
        struct { zc_store *store; char *path; zc_zarr *z; } zarr;
        struct { void *data; } buffer;
        struct { create_kind what; double a, b, c; int64_t k; uint64_t seed; } create;
        struct { double value; bool is_int; } scalar;
        struct {
            int op;                       /* ew_op, or -1 = astype */
            ew_program *prog;             /* fused program over `leaves` (built by the optimizer) */
            zc_array **leaves;            /* non-EW or materialized inputs of the fused subtree (not retained) */
            int nleaves;
        } ew;
        struct {
            int in_dim[ZC_MAX_DIMS];      /* input dim of each output dim, -1 = new axis */
            int64_t start[ZC_MAX_DIMS];   /* per output dim */
            int64_t step[ZC_MAX_DIMS];
            int64_t fixed[ZC_MAX_DIMS];   /* per input dim: index if dropped (integer index), else -1 */
        } slice;
        struct {
            red_op op;
            zc_dtype in_dtype;            /* dtype of the values reduced (first round's input) */
            uint64_t axes;                /* reduced axes (bit mask, in this node's input dims) */
            int flags;                    /* round_flags */
            int64_t split[ZC_MAX_DIMS];   /* input blocks per output block along each dim */
            double ddof;
            int out_dim[ZC_MAX_DIMS];     /* LAST round without keepdims: input dim of each output dim */
        } reduce;
        /* plan/manip.h (RESHAPE has no parameters) */
        struct {
            int in_dim[ZC_MAX_DIMS];      /* input dim of each output dim, -1 = new axis (broadcast if > 1) */
            int64_t start[ZC_MAX_DIMS];   /* per output dim: input index of output index 0 */
            int64_t step[ZC_MAX_DIMS];    /* per output dim: input index step (< 0 flips, 0 broadcasts) */
            int64_t fixed[ZC_MAX_DIMS];   /* per input dim: index if dropped (size 1), else -1 */
            int what;                     /* view_what: the function that made it */
        } view;
        struct { int axis; } concat;
        struct {
            int axis, mode;               /* gather_mode */
            int64_t k;                    /* repeats, or roll shift in [0, n) */
            int64_t *idx, nidx;           /* take: input indices (owned) */
        } gather;
        struct { int axis, op, initial; int64_t seg; } scan; /* TOTALS and SCAN: scan_op, carry segment */
        struct {                          /* plan/compress.c */
            int64_t seg, nseg;            /* rows per counted segment of the inputs, segments (>= 1) */
            int64_t *prefix;              /* nseg + 1 prefix sums of the selected rows per segment (owned) */
        } compress;
        struct {                          /* plan/matmul.h */
            int64_t kstep;                /* contracted elements pulled per step (fitted to the bound) */
            int64_t kstep0;               /* the step chosen when made (each plan fits from it) */
            int64_t kgroup;               /* contracted elements per group (split: output dim 0 is the group) */
            int split;
        } matmul;
        struct {                          /* plan/fft.h */
            int axis, kind;               /* transformed dim, fftk_kind */
            int64_t n;                    /* transform length */
            double scale;
            int conj_in, conj_out;
            int tw_dim, tw_sign;          /* four-step twiddle: dim of j (-1 = none), sign of the exponent */
            int64_t tw_n;                 /* its denominator */
            /* A transform as asked (ops/fft.c), not yet an algorithm: at plan time the
             * kind's expansion calls this builder, which replaces the node by the
             * algorithm fitted to the bound (lines in one task, four-step, Bluestein)
             * with the node's chunks; NULL for a node of an algorithm. */
            int (*expand)(zc_array *a, size_t limit);
            int64_t line_cap;             /* a request's longest line in one task (tests; 0: the bound's) */
        } fft;
        struct {                          /* plan/decomp.h */
            int op;                       /* la_op */
            int64_t band, group;          /* rows per band, bands per group (REQ_R: what of Q is asked) */
            /* A TSQR request (REQ_R, REQ_Q: ops/decomp.c) not yet fitted to a bound:
             * at plan time the kind's expansion calls this builder; NULL otherwise. */
            int (*expand)(zc_array *a, size_t limit, size_t (*task_proj)(const zc_array *a, const int64_t *block));
            /* REQ_R once expanded (per plan, retained): the matrix cut into bands
             * of fact_band rows and the Q of its stacked R factors, for REQ_Q */
            zc_array *fact_a, *fact_qs;
            int64_t fact_band;
        } decomp;
        struct {                          /* plan/sort.h */
            int axis;                     /* sorted dim of the values' array */
            int step;                     /* sort_step */
            int descending;               /* 1: by decreasing value (ties keep their order; NaNs last) */
            int indices;                  /* 1: the result is argsort's indices (int64) */
            zc_dtype vdtype;              /* dtype of the values sorted */
            int64_t run;                  /* RUNS, MERGE: elements per run (the last may be shorter) */
            int64_t samples;              /* RUNS, MERGE: samples kept per run */
            int64_t nruns;                /* RUNS, MERGE: runs per line */
            int64_t block;                /* MERGE: elements along the axis one task writes */
        } sort;
        struct { int right; int64_t step; } search; /* plan/search.c: side, elements per fence */
        struct { int axis; } take_along;  /* plan/take_along.c: the axis indexed */
    } p;
    /* A plan's own node: plan_build copies the caller's graph (node_clone), so
     * graphs stay immutable values any number of plans and threads may share;
     * the fields below are only ever set on a plan's own nodes. */
    zc_array *origin;                      /* the caller's node this copies (retained): its owned data
                                              (zarr handle and path, buffer, gather indices) are borrowed;
                                              NULL for a caller's node or one the planner made */
    zc_zarr *mat;                          /* materialized values, when not NULL (exec/run.c) */
    int stage;                             /* stage that materializes it, or -1 (plan/plan.c) */
    /* how its stage's tasks write its chunks (plan/target_mem.c, plan_write_model):
     * buffers of a chunk beyond the block held while one is written (0: an
     * intermediate's), whether each written chunk stays in the task's memory
     * (a memory store keeps its copy), whether a chunk laid out in the block is
     * encoded from there */
    int write_copies;
    bool write_kept;
    bool write_in_block;
    bool stored_plain; /* an intermediate stored uncompressed (plan_stores_uncompressed) */
    node_cache *cache;                     /* NODE_ZARR: decoded chunks kept by the executor, or NULL */
};

/* A node's values kept elsewhere for one computation: the executor keeps the
 * decoded chunks of sources that several stages read (exec/srccache.c) and
 * sets zc_array.cache on the plan's own source nodes; plan/ reads through
 * these callbacks and knows nothing of how the values are kept. */
struct node_cache {
    /* Values of region sel of a into out (as zc_zarr_read). */
    int (*read)(node_cache *c, zc_array *a, const zc_range *sel, void *out);
    /* When sel is exactly one chunk that is (or can now be) kept: *data points at
     * its values (read-only, valid until the computation ends); true. */
    bool (*view)(node_cache *c, zc_array *a, const zc_range *sel, const void **data);
};

/* a->cache's view of region sel, false when a has no cache or sel is not one kept chunk. */
static inline bool node_cache_view(zc_array *a, const zc_range *sel, const void **data)
{
    return a->cache && a->cache->view(a->cache, a, sel, data);
}

/* A new node with one reference; inputs are retained. */
int node_new(node_kind kind, int ndim, const int64_t *shape, const int64_t *chunks, zc_dtype dtype, int ninputs,
             zc_array *const *inputs, zc_array **out);
/* A RECHUNK node: a's values with `chunks` (each clipped to 1..shape; plan/rechunk.c). */
int node_rechunk(zc_array *a, const int64_t *chunks, zc_array **out);
/* Chunk shape of about `target` bytes for a shape (trailing dims whole first). */
void node_auto_chunks(int ndim, const int64_t *shape, size_t itemsize, size_t target, int64_t *chunks);
/* A plan's own copy of node a, with inputs `inputs` (retained): the same
 * parameters, a->origin (or a) retained as origin, no fused program. */
int node_clone(zc_array *a, zc_array *const *inputs, zc_array **out);
/* Number of blocks in the grid (product), and block index ↔ coordinates. */
int64_t node_nblocks(const zc_array *a);
void node_block_coords(const zc_array *a, int64_t b, int64_t *coords);
/* Region of a block: start and stop per dim (clipped to the shape). */
void node_block_region(const zc_array *a, const int64_t *coords, zc_range *sel);
size_t node_region_bytes(const zc_array *a, const zc_range *sel);
/* Bytes of one full chunk. */
size_t node_chunk_bytes(const zc_array *a);

/* A node reading the stored array at path of st (opens it; plan/source.c). */
int node_from_zarr(zc_store *st, const char *path, zc_array **out);
/* A scalar node: an int64 (is_int: value must be a whole number in int64's
 * range, else ZC_EINVAL) or a float64 (plan/source.c). */
int node_scalar(double value, bool is_int, zc_array **out);
/* The value of an integer scalar node. */
int64_t node_scalar_int(const zc_array *a);
/* Region of input l of a broadcasting node root (its trailing dims aligned with
 * root's; size-1 dims broadcast) that region sel of root reads; with lstride
 * (may be NULL), the element strides of that region's C-order buffer along each
 * of root's dims (0 where l is broadcast or has no such dim). */
void node_leaf_sel(const zc_array *root, const zc_array *l, const zc_range *sel, zc_range *lsel, int64_t *lstride);

/* Compute the values of a region into out (C order, native). Uses the
 * materialized array when there is one. Thread-safe. */
int node_region(zc_array *a, const zc_range *sel, void *out);
/* The same, ignoring a's own materialization (used by the stage that fills it). */
int node_compute_region(zc_array *a, const zc_range *sel, void *out);

#endif
