/* tests/harness.c — registry and main for the test binaries. */
#include "harness.h"

#include <jansson.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan/plan.h"

#define MAX_TESTS 1024

static struct {
    const char *name;
    test_fn fn;
} tests[MAX_TESTS];
static int ntests;
int harness_failures;
int harness_skips;

void harness_register(const char *name, test_fn fn)
{
    if (ntests < MAX_TESTS) {
        tests[ntests].name = name;
        tests[ntests].fn = fn;
        ntests++;
    }
}

void harness_skip(const char *fmt, ...)
{
    const char *req = getenv("ZC_REQUIRE_ALL");
    int required = req && *req && strcmp(req, "0");
    va_list ap;
    va_start(ap, fmt);
    fputs(required ? "FAIL: required but missing: " : "SKIP: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (required) harness_failures++;
    else harness_skips++;
}

json_t *report_checked(zc_report *rep)
{
    char *rj = NULL;
    CHECK_OK(zc_report_json(rep, &rj));
    json_t *doc = rj ? json_loads(rj, 0, NULL) : NULL, *o;
    CHECK(doc != NULL);
    size_t k;
    json_array_foreach(json_object_get(doc, "operations"), k, o)
        CHECK(json_integer_value(json_object_get(o, "measured_mem")) <= json_integer_value(json_object_get(o, "projected_mem")));
    zc_free(rj);
    zc_report_free(rep);
    return doc;
}

static struct {
    const char *name;
    child_fn fn;
} children[64];
static int nchildren;

void harness_register_child(const char *name, child_fn fn)
{
    if (nchildren < 64) {
        children[nchildren].name = name;
        children[nchildren].fn = fn;
        nchildren++;
    }
}

int harness_run_child(const char *name, const char *const *args)
{
    const char *argv[32] = {"test", "--child", name};
    int n = 3;
    for (int i = 0; args && args[i] && n < 31; i++) argv[n++] = args[i];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execv("/proc/self/exe", (char *const *)argv);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--child")) {
        for (int i = 0; i < nchildren; i++)
            if (!strcmp(argv[2], children[i].name)) return children[i].fn(argc - 3, argv + 3);
        fprintf(stderr, "no child named %s\n", argv[2]);
        return 2;
    }
    int ran = 0, failed = 0, skipped = 0;
    for (int i = 0; i < ntests; i++) {
        if (argc > 1 && strcmp(argv[1], tests[i].name)) continue;
        int before = harness_failures, skips = harness_skips;
        tests[i].fn();
        ran++;
        if (harness_failures != before) {
            failed++;
            fprintf(stderr, "FAIL %s\n", tests[i].name);
        } else if (harness_skips != skips) {
            skipped++;
            fprintf(stderr, "SKIP %s\n", tests[i].name);
        }
    }
    if (argc > 1 && ran == 0) {
        fprintf(stderr, "no test named %s\n", argv[1]);
        return 2;
    }
    printf("%d passed, %d failed, %d skipped\n", ran - failed - skipped, failed, skipped);
    return failed ? 1 : skipped ? 77 : 0; /* 77: ctest's SKIP_RETURN_CODE */
}

int plan_resign(const char *path)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    char hex[17];
    int rc = doc && plan_doc_checksum(doc, hex) == 0 ? 0 : -1;
    if (rc == 0) {
        json_object_set_new(doc, "checksum", json_string(hex));
        rc = json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    }
    json_decref(doc);
    return rc;
}
