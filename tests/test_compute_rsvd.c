/* tests/test_compute_rsvd.c — what the randomized SVD's speed rests on, checked
 * so that a change that drops it fails: OpenBLAS's idle server threads stopped
 * while the plan is built (they spin for ~0.1 s of CPU otherwise). Results and
 * accuracy: tests/test_compute_decomp.c. */
#include <dirent.h>
#include <stdint.h>

#include "harness.h"

/* Threads of this process now (Linux: /proc/self/task; -1 elsewhere). */
static int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

TEST(openblas_idle_threads_stopped)
{
    /* a fresh process: the main thread and OpenBLAS's server threads (one fewer than
     * the CPUs, started when it was loaded); building a linear algebra plan stops them */
    int before = threads_now();
    int64_t shape[2] = {64, 32}, chunks[2] = {16, 32};
    zc_array *a = NULL, *s = NULL;
    CHECK_OK(zc_random_normal(1, 2, shape, chunks, ZC_FLOAT64, 0.0, 1.0, &a));
    CHECK_OK(zc_svd_compressed(a, 4, 2, 1, 0, NULL, &s, NULL));
    int after = threads_now();
    if (before > 1) CHECK(after == 1);
    CHECK(after <= before);
    zc_array_release(s);
    zc_array_release(a);
}
