/* core/rss.h — the process's resident memory as the kernel counts it.
 *
 * A stage's peak RSS is measured, not assumed: rss_reset_peak before it
 * (writing "5" to /proc/self/clear_refs sets VmHWM to the current RSS, Linux
 * 4.0+), rss_read after it (VmRSS and VmHWM from /proc/self/status). */
#ifndef ZC_CORE_RSS_H
#define ZC_CORE_RSS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t rss; /* VmRSS: resident now, bytes */
    size_t hwm; /* VmHWM: the peak since the process started or the last reset */
} rss_now;

/* Reset the peak to the current RSS; false if the kernel refuses (then hwm is
 * the peak since the process started: still an upper bound). */
bool rss_reset_peak(void);
/* Read both; false (zeros) where /proc is not available. */
bool rss_read(rss_now *out);

#endif
