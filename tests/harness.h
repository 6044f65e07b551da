/* tests/harness.h — a tiny test runner.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_OK(zc_call(...)); }
 *
 * Each test binary's main runs one named test (`test_codec name`), or all of
 * them with no argument. ctest registers one entry per TEST found in the
 * source, so each test runs in its own process with its own timeout.
 *
 * A test that cannot run because something it needs is missing on this
 * machine calls SKIP("what is missing"): the binary then exits 77, which ctest
 * (SKIP_RETURN_CODE) reports as "Skipped", not "Passed". With ZC_REQUIRE_ALL=1
 * (scripts/test.sh, hence CI) a skip is a failure instead. The scripts' side of
 * this convention is tests/skip.bash. */
#ifndef ZC_TEST_HARNESS_H
#define ZC_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zcube.h"

typedef void (*test_fn)(void);
void harness_register(const char *name, test_fn fn);
extern int harness_failures;
extern int harness_skips; /* SKIPs so far (a helper can tell whether its body skipped) */
void harness_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define TEST(name)                                                              \
    static void test_##name(void);                                              \
    __attribute__((constructor)) static void register_##name(void)              \
    {                                                                           \
        harness_register(#name, test_##name);                                   \
    }                                                                           \
    static void test_##name(void)

/* A function a test runs in another process of the same binary
 * (`test_x --child name args...`, see harness_run_child): not a ctest entry. */
typedef int (*child_fn)(int argc, char **argv);
void harness_register_child(const char *name, child_fn fn);
#define CHILD(name)                                                             \
    static int child_##name(int argc, char **argv);                             \
    __attribute__((constructor)) static void register_child_##name(void)        \
    {                                                                           \
        harness_register_child(#name, child_##name);                            \
    }                                                                           \
    static int child_##name(int argc, char **argv)
/* Run child `name` with args (NULL-terminated) in a fresh process of this
 * binary (fork + exec: no thread of this one is copied); its exit status, or -1. */
int harness_run_child(const char *name, const char *const *args);

#define CHECK(cond)                                                             \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            harness_failures++;                                                 \
        }                                                                       \
    } while (0)

/* Skip the running test (printf-style reason: what is missing, how to get
 * it), or fail it under ZC_REQUIRE_ALL=1; returns from the calling function. */
#define SKIP(...)                                                               \
    do {                                                                        \
        harness_skip(__VA_ARGS__);                                              \
        return;                                                                 \
    } while (0)

/* Expect status 0; on failure print the library's message. */
#define CHECK_OK(expr)                                                          \
    do {                                                                        \
        int rc_ = (expr);                                                       \
        if (rc_ != 0) {                                                         \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr, \
                    zc_errname(rc_), zc_errmsg());                              \
            harness_failures++;                                                 \
        }                                                                       \
    } while (0)

/* Expect a specific error code, and a message containing `needle` (or NULL). */
#define CHECK_ERR(expr, code, needle)                                           \
    do {                                                                        \
        int rc_ = (expr);                                                       \
        const char *nd_ = (needle);                                             \
        if (rc_ != (code)) {                                                    \
            fprintf(stderr, "%s:%d: %s returned %s (%s), expected %s\n", __FILE__, __LINE__, \
                    #expr, zc_errname(rc_), zc_errmsg(), zc_errname(code));     \
            harness_failures++;                                                 \
        } else if (nd_ && !strstr(zc_errmsg(), nd_)) {                          \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, \
                    zc_errmsg(), nd_);                                          \
            harness_failures++;                                                 \
        }                                                                       \
    } while (0)

/* The memory contract of a computation's report (what names it in messages;
 * ZC_SHOW=1 prints the figures):
 *  - every operation has a measurement, > 0 for one that ran tasks, and
 *    measured_mem <= projected_mem (no slack);
 *  - check_memory: the report's "memory" section exists and, except under
 *    AddressSanitizer (shadow memory and quarantine are RSS the library cannot
 *    count), says every stage's peak RSS was measured, agrees with the counted
 *    memory within the uncounted reserve, and stays within threads x
 *    allowed_mem + the reserve (exec/memcheck.h). */
typedef struct json_t json_t;
void check_contract(json_t *doc, const char *what);
void check_memory(json_t *doc, const char *what);
/* That some stage's RSS grew by more than the uncounted reserve, so its
 * agreement with the counted memory is a real test (it would fail if the
 * allocator counted nothing). Not under AddressSanitizer. */
void check_rss_matters(json_t *doc, const char *what);
/* A computation over an array much larger than its bound: `allowed` bytes per
 * task, 2 threads, results in an fs store in a new temporary directory
 * (/tmp/zcube-<name>-XXXXXX) holding the work dir too. big_run_end closes and
 * removes it. */
typedef struct {
    char dir[64], work[80];
    zc_store *st;
    zc_spec spec;
} big_run;
void big_run_init(big_run *b, const char *name, size_t allowed);
void big_run_end(big_run *b);
/* A peak RSS (bytes, > 0) within 2 x allowed_mem + 64 MiB (issue 18's bound;
 * not checked under AddressSanitizer); ZC_SHOW=1 prints it. */
void check_big_peak(size_t peak, size_t allowed, const char *what);

/* The report as parsed JSON; frees rep. The caller json_decref's the result. */
json_t *report_json_doc(zc_report *rep);
/* report_json_doc, then check_contract. */
json_t *report_checked(zc_report *rep);

/* A spec allowing mb MiB per task with a 1 MiB reserve. */
zc_spec spec_mem(size_t mb);
/* name(a, b) as a new array; CHECK-fails the test on error. */
zc_array *binop(const char *name, zc_array *a, zc_array *b);

/* Recompute the checksum of the saved plan at path after a test edited it on
 * purpose (so the edit reaches the checks behind the checksum); 0 or -1. */
int plan_resign(const char *path);

/* Write text to a new file at path; CHECK-fails the test when it cannot. */
void write_text(const char *path, const char *text);

/* Directory of test data (tests/data), set by CMake. */
#ifndef ZC_TEST_DATA
#define ZC_TEST_DATA "tests/data"
#endif

#endif
