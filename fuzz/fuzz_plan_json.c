/* fuzz/fuzz_plan_json.c — saved plans (src/plan/serialize.c and the node kinds'
 * *_from_json) as `zcube worker PLAN.json --op N --blocks A:B` reads them.
 *
 * Input: a plan document. The first call builds a fixture in FIXDIR
 * ($ZC_FUZZ_PLAN_DIR, kept; else /tmp/zcube-fuzz-plan-<pid>, removed at exit,
 * so concurrent runs do not share it): two stored sources, a (float64 8 x 6, chunks
 * 3 x 4) and w (float64 6 x 6, chunks 4 x 4), then saves one plan per entry
 * of SEEDS (expressions evaluated as `zcube eval` does; "|" separates the
 * outputs of a grouped computation) with zc_plan_save, which creates their
 * targets and work folders there. `fuzz_plan_json_seed_dir()` names where the
 * saved plans went; the committed seeds are those files with FIXDIR written
 * as "@FIX@", which this target replaces by FIXDIR before parsing.
 *
 * Then, when the input is JSON: spec.allowed_mem is capped at 64 MiB and
 * nthreads ignored (1); every operation N < min(stages, 12) runs blocks
 * [0, 2) with zc_plan_run (later operations read what the earlier ones left:
 * partly fill values, which is fine); the document is signed (version and
 * checksum) before it is loaded, as zc_plan_save would. Input that is not JSON goes to
 * zc_plan_run as it is. Checks: every refusal carries a message. The
 * sanitizers and the driver's timeout catch the rest. */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"
#include "exec/rmtree.h"
#include "expr.h"
#include "fuzz.h"
#include "plan/plan.h"

#define MAX_INPUT (1 << 20)

static char fixdir[256];

/* name, outputs separated by '|' */
static const char *const SEEDS[][2] = {
    {"ew", "a * 2.5 + sin(a) - 1"},
    {"ew-where", "where(a > 0, a, -a) ** 2"},
    {"slice", "flip(a, axis=1)[1:7:2, 1:]"},
    {"index", "a[3]"},
    {"reduce-sum", "sum(a, axis=0)"},
    {"reduce-mean", "mean(a)"},
    {"reduce-std", "std(a, axis=1)"},
    {"reduce-argmax", "argmax(a, axis=1)"},
    {"rechunk", "rechunk(a, (8, 1))"},
    {"astype", "astype(a, 'float32')"},
    {"reshape", "reshape(a, (6, 8))"},
    {"transpose", "a.T + 1"},
    {"concat", "concat((a, a), axis=0)"},
    {"stack", "stack((w, w))"},
    {"take", "take(a, [0, 5, 2], axis=0)"},
    {"cumsum", "cumulative_sum(a, axis=1)"},
    {"matmul", "a @ w"},
    {"matmul-t", "a.T @ a"},
    {"qr", "qr(a)[0]"},
    {"qr-r", "qr(a)[1]"},
    {"svd", "svd(a)[1]"},
    {"svd-u", "svd(a)[0]"},
    {"solve", "solve(w + 10 * eye(6), w[:, 0])"},
    {"fft", "fft(a, axis=0)"},
    {"rfft", "rfft(a)"},
    {"irfft", "irfft(rfft(a, axis=0), axis=0)"},
    {"fftfreq", "fftfreq(8) + a[:, 0]"},
    {"group-reduce", "sum(a, axis=0)|mean(a, axis=0)|max(a, axis=0)"},
    {"group-copy", "a|w|rechunk(a, (2, 6))"},
    {"group-mixed", "a @ w|rfft(a)|cumulative_sum(a, axis=0)"},
};
#define NSEEDS (sizeof SEEDS / sizeof SEEDS[0])

static _Noreturn void die(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_plan_json setup: %s: %s\n", what, detail);
    abort();
}

static void make_source(zc_store *st, const char *path, int64_t rows, int64_t cols, int64_t cr, int64_t cc)
{
    zc_array *r, *a;
    if (zc_arange(0, (double)(rows * cols), 1, ZC_FLOAT64, rows * cols, &r) < 0) die("arange", zc_errmsg());
    if (zc_reshape(r, 2, (int64_t[]){rows, cols}, &a) < 0) die("reshape", zc_errmsg());
    zc_array_release(r);
    zc_array *c;
    if (zc_rechunk(a, (int64_t[]){cr, cc}, &c) < 0) die("rechunk", zc_errmsg());
    zc_array_release(a);
    zc_spec spec = ZC_SPEC_INIT;
    spec.nthreads = 1;
    spec.executor = "sequential"; /* no pool threads (their thread-local caches look leaked after a fork) */
    zc_target t = {st, path, NULL, 3};
    if (zc_compute(&spec, 1, &c, &t, NULL) < 0) die("compute source", zc_errmsg());
    zc_array_release(c);
}

static void save_seed(zc_store *src, int k, const char *seeddir)
{
    zc_array *a, *w;
    if (zc_from_zarr(src, "a", &a) < 0 || zc_from_zarr(src, "w", &w) < 0) die("from_zarr", zc_errmsg());
    ex_binding vars[2] = {{"a", a}, {"w", w}};
    char text[512], path[600], work[600];
    snprintf(text, sizeof text, "%s", SEEDS[k][1]);
    zc_array *outs[8];
    zc_target tg[8];
    zc_store *tst[8];
    int n = 0;
    for (char *save = NULL, *e = strtok_r(text, "|", &save); e && n < 8; e = strtok_r(NULL, "|", &save)) {
        ex_tree *tree;
        int status;
        if (ex_parse(e, &tree) < 0) die(e, cli_lasterr());
        if (ex_eval(tree, vars, 2, &outs[n], &status) < 0) die(e, cli_lasterr());
        ex_free(tree);
        snprintf(path, sizeof path, "%s/out-%s-%d", fixdir, SEEDS[k][0], n);
        if (zc_store_open(path, ZC_STORE_CREATE, &tst[n]) < 0) die(path, zc_errmsg());
        tg[n] = (zc_target){tst[n], "", NULL, 3};
        n++;
    }
    zc_spec spec = ZC_SPEC_INIT;
    spec.allowed_mem = (size_t)64 << 20;
    spec.reserved_mem = (size_t)8 << 20;
    spec.nthreads = 1;
    snprintf(work, sizeof work, "%s/work-%s", fixdir, SEEDS[k][0]);
    spec.work_dir = work;
    snprintf(path, sizeof path, "%s/%s.json", seeddir, SEEDS[k][0]);
    if (zc_plan_save(&spec, n, outs, tg, path) < 0) die(SEEDS[k][0], zc_errmsg());
    for (int i = 0; i < n; i++) {
        zc_array_release(outs[i]);
        zc_store_close(tst[i]);
    }
    zc_array_release(a);
    zc_array_release(w);
}

static pid_t owner;

static void remove_fixture(void)
{
    if (getpid() == owner) exec_rm_tree(fixdir);
}

static void setup(void)
{
    static int done;
    if (done) return;
    done = 1;
    const char *env = getenv("ZC_FUZZ_PLAN_DIR");
    if (env && *env) {
        snprintf(fixdir, sizeof fixdir, "%s", env);
    } else {
        snprintf(fixdir, sizeof fixdir, "/tmp/zcube-fuzz-plan-%ld", (long)getpid());
        owner = getpid();
        atexit(remove_fixture);
    }
    char seeddir[300];
    snprintf(seeddir, sizeof seeddir, "%s/plans", fixdir);
    if ((mkdir(fixdir, 0777) != 0 && errno != EEXIST) || (mkdir(seeddir, 0777) != 0 && errno != EEXIST))
        die("mkdir", fixdir);
    /* The fixture is files only: build it in a child, so that this process
     * starts no pool threads (a forking driver's children would see their
     * thread-local caches as leaks). */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) die("fork", strerror(errno));
    if (pid > 0) {
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) die("fixture", "the child building it failed");
        return;
    }
    char srcpath[300];
    snprintf(srcpath, sizeof srcpath, "%s/src", fixdir);
    zc_store *src;
    if (zc_store_open(srcpath, ZC_STORE_CREATE, &src) < 0) die(srcpath, zc_errmsg());
    make_source(src, "a", 8, 6, 3, 4);
    make_source(src, "w", 6, 6, 4, 4);
    for (size_t k = 0; k < NSEEDS; k++) save_seed(src, (int)k, seeddir);
    zc_store_close(src);
    _exit(0);
}

#ifndef LLVMFuzzerTestOneInput
/* The libFuzzer build: make the fixture before libFuzzer starts its RSS
 * thread (it calls this first). setup() forks, and a fork while that thread
 * holds the ASan allocator's lock left the child building the fixture
 * blocked for ever (twice in a merge under load; docs/internals/fuzzing.md). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setup();
    return 0;
}
#endif

const char *fuzz_plan_json_seed_dir(void);
const char *fuzz_plan_json_seed_dir(void)
{
    setup();
    static char d[300];
    snprintf(d, sizeof d, "%s/plans", fixdir);
    return d;
}

/* The input with every "@FIX@" replaced by the fixture folder (a malloc'd string). */
static char *expand(const uint8_t *data, size_t size)
{
    size_t fl = strlen(fixdir), cap = size + 1, n = 0;
    for (size_t i = 0; i + 5 <= size; i++)
        if (!memcmp(data + i, "@FIX@", 5)) cap += fl;
    char *s = malloc(cap);
    FUZZ_CHECK(s != NULL, "out of memory");
    for (size_t i = 0; i < size;) {
        if (i + 5 <= size && !memcmp(data + i, "@FIX@", 5)) {
            memcpy(s + n, fixdir, fl);
            n += fl;
            i += 5;
        } else {
            s[n++] = (char)data[i++];
        }
    }
    s[n] = 0;
    return s;
}

static void run_text(const char *text, size_t len, int nops)
{
    int fd = memfd_create("fuzz-plan", 0);
    FUZZ_CHECK(fd >= 0, "memfd_create");
    FUZZ_CHECK(write(fd, text, len) == (ssize_t)len, "write");
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    for (int op = 0; op < nops; op++) {
        int rc = zc_plan_run(path, op, 0, 2, 1);
        if (getenv("ZC_FUZZ_VERBOSE")) fprintf(stderr, "  op %d: %d %s\n", op, rc, rc < 0 ? zc_errmsg() : "");
        if (rc < 0) {
            FUZZ_CHECK(zc_errmsg()[0] != 0, "zc_plan_run op %d failed (%d) without a message", op, rc);
            if (op > 0 || rc != ZC_EMEMBOUND) break;
        }
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size == 0 || size > MAX_INPUT) return 0;
    char *text = expand(data, size);
    json_t *doc = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
    if (!doc || !json_is_object(doc)) {
        run_text(text, strlen(text), 1);
        json_decref(doc);
        free(text);
        return 0;
    }
    json_t *spec = json_object_get(doc, "spec");
    if (json_is_object(spec)) {
        json_t *am = json_object_get(spec, "allowed_mem");
        if (!json_is_integer(am) || json_integer_value(am) > (64 << 20) || json_integer_value(am) < 0)
            json_object_set_new(spec, "allowed_mem", json_integer(64 << 20));
        json_t *rm = json_object_get(spec, "reserved_mem");
        if (json_is_integer(rm) && json_integer_value(rm) > (64 << 20))
            json_object_set_new(spec, "reserved_mem", json_integer(8 << 20));
    }
    /* Sign the document as a save by this version would, so that mutations reach the
     * parsers behind the version and checksum gate (tests/test_compute_plan.c tests
     * the gate itself: tampered and foreign plans are refused). */
    char hex[17];
    json_object_set_new(doc, "zcube_version", json_string(ZC_VERSION_STRING));
    if (plan_doc_checksum(doc, hex) == 0) json_object_set_new(doc, "checksum", json_string(hex));
    json_t *st = json_object_get(doc, "stages");
    json_int_t stages = json_is_array(st) ? (json_int_t)json_array_size(st) : json_integer_value(st);
    int nops = stages < 1 ? 1 : stages > 12 ? 12 : (int)stages;
    char *out = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    free(text);
    if (out) {
        run_text(out, strlen(out), nops);
        free(out);
    }
    return 0;
}
