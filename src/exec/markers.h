/* exec/markers.h — per-range completion markers in the work directory.
 *
 * A worker that finished tasks [first, last) of operation k (every chunk
 * written) creates the empty file WORK/zcube-done/op<k>/<first>-<last>. Resume
 * skips the tasks they cover and `zcube status` counts them; a task whose
 * chunk was written but whose marker was not is simply run again (tasks are
 * idempotent). */
#ifndef ZC_EXEC_MARKERS_H
#define ZC_EXEC_MARKERS_H

#include <stdint.h>

#define EXEC_MARKER_DIR "zcube-done"

int exec_marker_put(const char *work_dir, int op, int64_t first, int64_t last);
/* Set done[i] = 1 for every task of op covered by a marker (done has ntasks
 * entries); returns how many tasks are covered, or < 0. Markers outside
 * [0, ntasks) are ZC_EFORMAT (a work directory of another plan). */
int64_t exec_marker_load(const char *work_dir, int op, int64_t ntasks, unsigned char *done);
/* Remove every marker (the end of a successful run). */
void exec_marker_clear(const char *work_dir);

#endif
