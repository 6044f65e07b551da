/* tools/boxpipe.h — walk boxes (boxes.h) with file IO on one thread and the
 * array's decoding or encoding on the other, in two reused buffers.
 *
 * `zcube get` decodes box k+1 while box k is written to the .npy file, and
 * `zcube put` reads box k+1 from the .npy file while box k is encoded: on two
 * cores the kernel's copy of the file data (half the CPU of a whole get of an
 * lz4 array) then runs beside the decoding instead of after it. The buffers
 * are allocated once (bigbuf.h: 2 MiB pages where the system offers them), so
 * a box costs no page faults after the first two.
 *
 *   producer (caller or thread)          consumer (the other one)
 *   box 0 -> buf A   box 1 -> buf B      buf A -> out   buf B -> out ...
 *
 * Boxes are consumed in the order they are produced (standard output stays
 * in order). */
#ifndef ZC_TOOLS_BOXPIPE_H
#define ZC_TOOLS_BOXPIPE_H

#include <stdbool.h>
#include <stddef.h>

#include "boxes.h"

/* One side's work on a box: fill or use buf (boxes_nelems(b) × itemsize
 * bytes). Returns 0, or non-zero to stop the walk (the side keeps its own
 * account of what failed: the thread's zc_errmsg is not the caller's). */
typedef int (*boxpipe_fn)(const boxes_t *b, unsigned char *buf, void *ctx);

/* Outcome of boxpipe_run. */
typedef enum {
    BOXPIPE_OK = 0,
    BOXPIPE_PRODUCE_FAILED, /* produce returned non-zero */
    BOXPIPE_CONSUME_FAILED, /* consume returned non-zero */
    BOXPIPE_NO_MEMORY,      /* the buffers or the thread could not be had (nothing ran) */
} boxpipe_status;

#define BOXPIPE_BOX ((uint64_t)32 << 20) /* box size aimed at (or one unit, if bigger) */

/*
 * boxes_init for boxpipe_run under `budget` bytes for all its buffers.
 * Returns whether to overlap: when one unit fits half the budget and the
 * selection is more than one box; the boxes are then of up to BOXPIPE_BOX
 * (half the budget if less, one unit if more). Else boxes of up to the whole
 * budget, one buffer.
 */
bool boxpipe_boxes(boxes_t *bx, int ndim, const zc_range *sel, const int64_t *count, const int64_t *unit,
                   size_t itemsize, uint64_t budget);

/*
 * Walk every box of `bx` (from its start): produce(box, buf) then, in order,
 * consume(box, buf). With `overlap`, two buffers of bx->max_bytes and a
 * second thread: the thread produces when `thread_produces`, else it
 * consumes; the caller does the other side. Without it, one buffer on the
 * caller's thread. The first failure stops both sides (the other finishes
 * the box it is on).
 */
boxpipe_status boxpipe_run(boxes_t *bx, bool overlap, bool thread_produces, boxpipe_fn produce, boxpipe_fn consume,
                           void *ctx);

#endif
