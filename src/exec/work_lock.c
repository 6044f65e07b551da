/* exec/work_lock.c — one computation per work directory (work_lock.h). */
#include "exec/work_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/error.h"

int work_lock(const char *dir, int *fd)
{
    *fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd < 0) return 0; /* not a local folder (the store reported on it already) */
    int rc;
    do rc = flock(*fd, LOCK_EX | LOCK_NB);
    while (rc != 0 && errno == EINTR);
    if (rc == 0) return 0;
    int err = errno;
    close(*fd);
    *fd = -1;
    if (err == EWOULDBLOCK)
        return zc__err(ZC_EEXIST, "\"%s\" is in use by another computation (sharing it would mix their "
                       "intermediates): wait for it to end, or give another work directory", dir);
    return 0; /* a filesystem that cannot lock folders: nothing enforced */
}

void work_unlock(int fd)
{
    if (fd >= 0) close(fd);
}
