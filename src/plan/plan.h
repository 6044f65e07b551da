/* plan/plan.h — a computation: the optimized DAG and its stages.
 *
 * plan_build copies the caller's graph (node_clone: the plan's own nodes carry
 * its decisions, the caller's arrays are never changed), then walks the
 * arrays to compute, expands multistage rechunks, decides
 * which nodes are materialized (the stages) and which are fused into their
 * consumers, and projects the memory of one task of every stage:
 *
 *   materialized: outputs (into their targets), reductions (every round),
 *                 rechunks, the input of a rechunk unless it is a stored/generated
 *                 source, and elementwise/slice nodes used by several consumers;
 *   fused:        everything else (a task pulls their regions on the fly).
 *
 * A stage runs one task per block of its node; tasks are (stage, block) pairs,
 * never stored. First rounds of reductions reading the same input blocks (the
 * means of u*u, v*v and u*v) are grouped: one task per block computes them all,
 * so each input block is read and decoded once (see plan_stage.group). */
#ifndef ZC_PLAN_PLAN_H
#define ZC_PLAN_PLAN_H

#include <pthread.h>

#include "core/json.h"
#include "plan/array.h"
#include "plan/rechunk_plan.h"

typedef struct {
    zc_array *node;          /* what this stage materializes (retained) */
    int64_t tasks;           /* blocks of node */
    size_t projected;        /* bytes one task needs */
    int target;              /* index into the targets, or -1 for an intermediate */
    char name[64];           /* "op3 mean (reduce round 2)" */
    char fused[256];         /* names of the fused operations it computes */
    /* first rounds of reductions over the same input blocks run as one stage whose
     * tasks read each input block once and feed every reduction of the group: the
     * group's first stage (its leader) has group == its own index and the group's
     * projection; the others have group == the leader's index and run no tasks of
     * their own; -1 = not grouped */
    int group;
    /* a copy (rechunk) run as grouped tasks: the extents of the block of output
     * chunks one task writes (rechunk_copy_block), so each source chunk is decoded
     * once; copy[0] == 0: one output block per task */
    int64_t copy[ZC_MAX_DIMS];
    /* set by zc_compute (never by workers, never with resume) on a grouped copy that
     * is the only reader of an intermediate whose chunks nest in its blocks: each task
     * erases the input chunks it read once its block is written */
    bool erase_input;
    /* a first round reading stored sources (group leader): "streamed" when its
     * tasks decode input chunks a piece at a time into the tile loop (the
     * chunks are never whole in memory decoded), else "whole chunks: <why>";
     * "" otherwise (plan_stream_leaf) */
    char stream[96];
    /* filled by the run */
    double seconds;
    size_t measured;         /* max over tasks of the task's allocation peak */
    int64_t skipped;         /* tasks skipped by resume */
} plan_stage;

typedef struct {
    plan_stage *stages;
    int nstages;
    zc_array **outputs;      /* per target: the node written there (retained) */
    int noutputs;
    size_t limit;            /* allowed_mem - reserved_mem */
    int64_t threads;         /* threads the sliced copies' blocks were fitted for (rechunk_slice_choose) */
    int64_t tasks;           /* all stages */
    int64_t intermediate_bytes; /* logical bytes of intermediate arrays */
    /* intermediates may be kept in a memory store (exec/run.c): every
     * intermediate stage's projection counts the chunks its tasks leave there */
    bool work_in_memory;
} plan;

/* The share of reserved_mem that may hold a plan's intermediates in memory
 * (the rest is for what reserved_mem is for: code, codec state, buffers). */
static inline size_t plan_work_reserve(const zc_spec *spec) { return spec->reserved_mem / 2; }

/* The public plan handle (zcube.h): a plan, and what executing it needs. Its
 * stages never change once made; executions run one at a time (lock) and leave
 * their figures in the stages (seconds, measured) and in `report`. */
struct zc_plan {
    plan p;
    zc_spec spec;            /* as given to zc_plan_create (or read from a saved plan); the
                                pointers below replace its work_dir and executor */
    char *work_dir;          /* owned copy, or NULL (a fresh folder per execution) */
    char *executor;          /* owned copy, or NULL */
    int ntargets;            /* == p.noutputs when targets were given, else 0 */
    zc_target *targets;      /* owned copies of the targets (path and codec strings owned) */
    zc_zarr_create_opts **creates; /* ntargets owned creation options (NULL entries, or NULL:
                                      from the target's codec and zarr_format) */
    zc_store **stores;       /* stores a loaded plan opened itself (sources, targets), closed by zc_plan_free */
    int nstores;
    pthread_mutex_t lock;    /* one execution at a time */
    char *report;            /* JSON of the last whole execution, or NULL */
};

/* Add to the projection of each stage writing a target the state its
 * compressor allocates per thread (zstd, libdeflate, bzip2: counted by the
 * tasks; targets NULL: zstd:1, the default, never refused), taken from
 * reserved_mem; ZC_EMEMBOUND if a stage then needs more than allowed_mem. */
int plan_project_targets(plan *p, const zc_target *targets, size_t allowed_mem);
/* writes: per array, what plan_write_model says of its target (NULL: no targets) */
typedef struct {
    int copies;    /* buffers of a chunk's size beyond the block while one is written */
    bool kept;     /* the store keeps each chunk written in the process's memory */
    bool in_block; /* a chunk laid out in the block is encoded from there (unsharded, C order) */
} plan_write;
/* How a task writing target t (NULL: zstd:1 into files), created with `create`
 * (NULL: from t), holds memory per chunk (the node fields write_copies,
 * write_kept and write_in_block of plan_build's outputs). */
int plan_write_model(const zc_target *t, const zc_zarr_create_opts *create, size_t itemsize, plan_write *w);
/* Bytes beyond the block a task of a holds while it writes one chunk of shape
 * `chunk` from its block of shape `block` (NULL: not known, or not the region
 * the chunk's grid tiles) (intermediate: as an intermediate is written,
 * whatever a's model). */
size_t plan_write_extra(const zc_array *a, const int64_t *chunk, const int64_t *block, bool intermediate);
/* Bytes a memory store keeps of the chunks one task of a writes: `bytes` in
 * all, in `nchunks` chunks (0 when a's store does not keep them). */
size_t plan_write_kept(const zc_array *a, size_t bytes, size_t nchunks);
/* Whether a's chunks are stored uncompressed when a is an intermediate: a's
 * kind, or the kind a rechunk copies, is KIND_UNCOMPRESSED (exec/run.c adds
 * copies of incompressible stored arrays, which it probes). */
bool plan_stores_uncompressed(const zc_array *a);
/* What a memory store keeps of `nchunks` chunks of `bytes` in all. */
size_t plan_kept(size_t bytes, size_t nchunks);
/* PLAN_QUICK: a rechunk's chain is the first that fits, not the cheapest of
 * a few (whether a bound fits, found faster: refusal searches) */
#define PLAN_QUICK 1u
/* memo: the planning session's rechunk searches (rechunk_plan.h), kept
 * between the plans made for one request; NULL: none kept */
int plan_build(const zc_spec *spec, int n, zc_array *const *arrays, const plan_write *writes, unsigned flags,
               rechunk_memo *memo, plan *p);
/* ZC_EINVAL naming both if a target is, or holds, a stored array the arrays
 * read: creating the target would erase it before it is read. */
int plan_check_targets(int n, zc_array *const *arrays, const zc_target *targets);
/* A zc_plan around a built plan (takes it over; freed on failure): copies of
 * spec and targets (targets may be NULL). */
int plan_object(plan *p, const zc_spec *spec, const zc_target *targets, zc_plan **out);
/* spec checked (struct_size) and completed into *out: ZC_SPEC_INIT's defaults for
 * the fields its version lacks, reserved_mem 0 made automatic (allowed_mem / 8,
 * at most 64 MiB). Every spec enters the library through here. */
int plan_spec(const zc_spec *spec, zc_spec *out);
/* Write z as a JSON document to path (plan/serialize.c); its arrays live in
 * work_dir (targets: their stores). */
int plan_write_doc(const zc_plan *z, const char *work_dir, const char *path);
/* Checksum of a plan document without its "checksum" member (16 hex digits
 * and a NUL into hex): the hash of its compact text with sorted keys, the same
 * text whoever wrote the file. */
int plan_doc_checksum(json_t *doc, char *hex);
/* Whether a group task (a first reduction round over input `in`) streams
 * leaf l: a stored source read in chunks that are in's blocks, not
 * broadcast, with codecs that stream (zarr_streams). If not, *why says why
 * for a stored source whose codecs or layout do not allow it (NULL for
 * leaves that are not stored sources: nothing to say). exec/run.c and the
 * projection ask the same question. */
bool plan_stream_leaf(const zc_array *in, const zc_array *l, const char **why);
/* Elements of a streamed tile: what a group task evaluates at once (at most a block). */
size_t plan_stream_tile(const zc_array *in);
/* Whether two first reduction rounds read the same input blocks (group members). */
bool plan_same_grid(const zc_array *a, const zc_array *b);
void plan_free(plan *p);
/* JSON summary of the plan (and of the run if it happened). */
char *plan_to_json(const plan *p, bool ran, double seconds);

#endif
