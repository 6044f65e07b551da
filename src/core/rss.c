/* core/rss.c — VmRSS / VmHWM from /proc (see rss.h). */
#include "core/rss.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool rss_reset_peak(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = write(fd, "5", 1) == 1;
    close(fd);
    return ok;
}

/* the value in kB of field `name` (with its colon) in text, in bytes */
static bool field(const char *text, const char *name, size_t *out)
{
    const char *p = strstr(text, name);
    if (!p) return false;
    *out = (size_t)strtoull(p + strlen(name), NULL, 10) << 10;
    return true;
}

bool rss_read(rss_now *out)
{
    memset(out, 0, sizeof *out);
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = 0;
    bool rss = field(buf, "\nVmRSS:", &out->rss), hwm = field(buf, "\nVmHWM:", &out->hwm);
    return rss && hwm;
}
