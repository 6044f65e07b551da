/* exec/markers.c — completion markers (markers.h). */
#include "exec/markers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "exec/rmtree.h"

static int op_dir(const char *work_dir, int op, char *buf, size_t size, bool make)
{
    snprintf(buf, size, "%s/" EXEC_MARKER_DIR, work_dir);
    if (make && mkdir(buf, 0755) < 0 && errno != EEXIST) return zc__err_sys(errno, "creating '%s'", buf);
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "/op%d", op);
    if (make && mkdir(buf, 0755) < 0 && errno != EEXIST) return zc__err_sys(errno, "creating '%s'", buf);
    return 0;
}

int exec_marker_put(const char *work_dir, int op, int64_t first, int64_t last)
{
    char path[PATH_MAX + 64];
    ZC_TRY(op_dir(work_dir, op, path, sizeof path, true));
    size_t n = strlen(path);
    snprintf(path + n, sizeof path - n, "/%" PRId64 "-%" PRId64, first, last);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return zc__err_sys(errno, "completion marker '%s'", path);
    close(fd);
    return 0;
}

int64_t exec_marker_load(const char *work_dir, int op, int64_t ntasks, unsigned char *done)
{
    char path[PATH_MAX + 64];
    op_dir(work_dir, op, path, sizeof path, false);
    DIR *d = opendir(path);
    if (!d) return errno == ENOENT ? 0 : zc__err_sys(errno, "reading '%s'", path);
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        int64_t a, b;
        char tail;
        if (sscanf(e->d_name, "%" SCNd64 "-%" SCNd64 "%c", &a, &b, &tail) != 2 || a < 0 || b < a || b > ntasks) {
            rc = zc__err(ZC_EFORMAT, "completion marker '%s/%s' is not a task range of operation %d (0..%" PRId64
                         "): is this the work directory of another plan?", path, e->d_name, op, ntasks);
            break;
        }
        for (int64_t i = a; i < b; i++) done[i] = 1;
    }
    closedir(d);
    if (rc < 0) return rc;
    int64_t n = 0;
    for (int64_t i = 0; i < ntasks; i++) n += done[i];
    return n;
}

void exec_marker_clear(const char *work_dir)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/" EXEC_MARKER_DIR, work_dir);
    exec_rm_tree(path);
}
