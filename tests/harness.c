/* tests/harness.c — registry and main for the test binaries. */
#include "harness.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/rmtree.h"
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

/* Under AddressSanitizer RSS holds the shadow memory and the quarantine of
 * freed blocks, under ThreadSanitizer its shadow and history: the RSS checks
 * cannot hold there (the counted ones still do). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_CHECKS 0
#else
#define RSS_CHECKS 1
#endif

void check_contract(json_t *doc, const char *what)
{
    size_t k;
    json_t *o;
    int n = 0;
    CHECK(doc != NULL);
    bool into_buffer = json_object_get(json_object_get(doc, "memory"), "buffer") != NULL &&
                       json_integer_value(json_object_get(json_object_get(doc, "memory"), "buffer")) > 0;
    json_array_foreach(json_object_get(doc, "operations"), k, o) {
        json_t *m = json_object_get(o, "measured_mem"), *g = json_object_get(o, "group");
        json_int_t proj = json_integer_value(json_object_get(o, "projected_mem")), meas = json_integer_value(m);
        /* a grouped reduction's tasks are its leader's; resumed tasks allocate
         * nothing, nor do those computing straight into zc_compute_buffer's buffer */
        bool runs = (!g || json_integer_value(g) == (json_int_t)k) &&
                    json_integer_value(json_object_get(o, "tasks")) > json_integer_value(json_object_get(o, "skipped")) &&
                    !(json_is_true(json_object_get(o, "output")) && into_buffer);
        bool ok = json_is_integer(m) && (!runs || meas > 0) && meas <= proj;
        if (!ok || getenv("ZC_SHOW"))
            fprintf(stderr, "%s: %s [%s] projected %lld, measured %lld\n", what,
                    json_string_value(json_object_get(o, "name")), json_string_value(json_object_get(o, "fused")),
                    (long long)proj, (long long)meas);
        CHECK(ok);
        n++;
    }
    CHECK(n > 0);
    check_memory(doc, what);
}

void check_memory(json_t *doc, const char *what)
{
    json_t *mem = json_object_get(doc, "memory");
    CHECK(json_is_object(mem));
    if (!RSS_CHECKS || !mem) return;
    bool ok = json_is_true(json_object_get(mem, "measured")) && json_is_true(json_object_get(mem, "agrees")) &&
              json_is_true(json_object_get(mem, "within_bound"));
    if (!ok || getenv("ZC_SHOW")) {
        char *t = json_dumps(mem, JSON_COMPACT);
        fprintf(stderr, "%s: memory %s\n", what, t ? t : "?");
        free(t);
        size_t k;
        json_t *o;
        json_array_foreach(json_object_get(doc, "operations"), k, o) {
            t = json_dumps(json_object_get(o, "memory"), JSON_COMPACT);
            fprintf(stderr, "  %s: %s\n", json_string_value(json_object_get(o, "name")), t ? t : "-");
            free(t);
        }
    }
    CHECK(ok);
}

void check_rss_matters(json_t *doc, const char *what)
{
    if (!RSS_CHECKS) return;
    json_int_t uncounted = json_integer_value(
                   json_object_get(json_object_get(json_object_get(doc, "memory"), "reserve"), "uncounted")),
               growth = 0;
    size_t k;
    json_t *o;
    json_array_foreach(json_object_get(doc, "operations"), k, o) {
        json_t *m = json_object_get(o, "memory");
        json_int_t g = json_integer_value(json_object_get(m, "peak_rss")) - json_integer_value(json_object_get(m, "rss_start"));
        if (g > growth) growth = g;
    }
    if (growth <= uncounted)
        fprintf(stderr, "%s: largest RSS growth of a stage %lld <= uncounted reserve %lld\n", what, (long long)growth,
                (long long)uncounted);
    CHECK(growth > uncounted);
}

void big_run_init(big_run *b, const char *name, size_t allowed)
{
    snprintf(b->dir, sizeof b->dir, "/tmp/zcube-%s-XXXXXX", name);
    CHECK(mkdtemp(b->dir) != NULL);
    snprintf(b->work, sizeof b->work, "%s/work", b->dir);
    b->st = NULL;
    CHECK_OK(zc_store_open(b->dir, 0, &b->st));
    b->spec = (zc_spec)ZC_SPEC_INIT;
    b->spec.allowed_mem = allowed;
    b->spec.nthreads = 2;
    b->spec.work_dir = b->work;
}

void big_run_end(big_run *b)
{
    zc_store_close(b->st);
    exec_rm_tree(b->dir);
}

void check_big_peak(size_t peak, size_t allowed, const char *what)
{
    size_t bound = 2 * allowed + ((size_t)64 << 20);
    if (getenv("ZC_SHOW")) fprintf(stderr, "%s: peak RSS %.1f MB (bound %.1f MB)\n", what, peak / 1e6, bound / 1e6);
#if RSS_CHECKS
    CHECK(peak > 0 && peak <= bound);
#endif
}

json_t *report_json_doc(zc_report *rep)
{
    char *rj = NULL;
    CHECK_OK(zc_report_json(rep, &rj));
    json_t *doc = rj ? json_loads(rj, 0, NULL) : NULL;
    CHECK(doc != NULL);
    zc_free(rj);
    zc_report_free(rep);
    return doc;
}

json_t *report_checked(zc_report *rep)
{
    json_t *doc = report_json_doc(rep);
    check_contract(doc, "report");
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

void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
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

zc_spec spec_mem(size_t mb)
{
    zc_spec s = ZC_SPEC_INIT;
    s.allowed_mem = mb << 20;
    s.reserved_mem = 1 << 20;
    return s;
}

zc_array *binop(const char *name, zc_array *a, zc_array *b)
{
    zc_array *args[2] = {a, b}, *out = NULL;
    CHECK_OK(zc_elementwise(name, 2, args, &out));
    return out;
}
