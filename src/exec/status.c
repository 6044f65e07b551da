/* exec/status.c — zc_dist_status: a run's progress from its work directory. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "exec/dist.h"
#include "exec/markers.h"

int zc_dist_status(const char *work_dir, char **json)
{
    zc__err_clear();
    if (!work_dir || !json) return zc__err(ZC_EINVAL, "zc_dist_status: NULL argument");
    *json = NULL;
    char *summary = exec_read_summary(work_dir);
    if (!summary) return ZC_ENOENT;
    json_error_t jerr;
    json_t *doc = json_loads(summary, 0, &jerr), *ops = json_object_get(doc, "operations");
    zc__free(summary);
    if (!json_is_array(ops)) {
        json_decref(doc);
        return zc__err(ZC_EFORMAT, "'%s/" EXEC_SUMMARY_FILE "' is not a plan summary", work_dir);
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" EXEC_COMPLETE_FILE, work_dir);
    bool complete = access(path, F_OK) == 0;
    json_t *out = json_array();
    int64_t all = 0, alldone = 0;
    int rc = 0;
    for (size_t k = 0; k < json_array_size(ops) && rc == 0; k++) {
        json_t *o = json_array_get(ops, k), *g = json_object_get(o, "group");
        int64_t n = json_integer_value(json_object_get(o, "tasks"));
        if ((g && (size_t)json_integer_value(g) != k) || n < 0) n = 0; /* run by its group's first stage */
        int64_t d = n;
        if (!complete && n > 0) {
            unsigned char *done = zc__calloc((size_t)n, 1);
            d = done ? exec_marker_load(work_dir, (int)k, n, done) : ZC_ENOMEM;
            zc__free(done);
            if (d < 0) rc = (int)d;
        }
        all += n;
        alldone += d;
        json_array_append_new(out, json_pack("{s:i, s:s, s:I, s:I}", "op", (int)k, "name",
                                             json_string_value(json_object_get(o, "name")) ?: "?", "tasks",
                                             (json_int_t)n, "done", (json_int_t)d));
    }
    json_decref(doc);
    json_t *res = json_pack("{s:o, s:I, s:I, s:b}", "operations", out, "tasks", (json_int_t)all, "done",
                            (json_int_t)alldone, "complete", complete);
    char *text = rc == 0 ? json_dumps(res, JSON_INDENT(1)) : NULL;
    json_decref(res);
    if (rc < 0) return rc;
    if (!text) return ZC_ENOMEM;
    *json = zc__strdup(text);
    free(text);
    return *json ? 0 : ZC_ENOMEM;
}
