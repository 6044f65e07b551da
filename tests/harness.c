/* tests/harness.c — registry and main for the test binaries. */
#include "harness.h"

#include <jansson.h>

#define MAX_TESTS 1024

static struct {
    const char *name;
    test_fn fn;
} tests[MAX_TESTS];
static int ntests;
int harness_failures;

void harness_register(const char *name, test_fn fn)
{
    if (ntests < MAX_TESTS) {
        tests[ntests].name = name;
        tests[ntests].fn = fn;
        ntests++;
    }
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

int main(int argc, char **argv)
{
    int ran = 0, failed = 0;
    for (int i = 0; i < ntests; i++) {
        if (argc > 1 && strcmp(argv[1], tests[i].name)) continue;
        int before = harness_failures;
        tests[i].fn();
        ran++;
        if (harness_failures != before) {
            failed++;
            fprintf(stderr, "FAIL %s\n", tests[i].name);
        }
    }
    if (argc > 1 && ran == 0) {
        fprintf(stderr, "no test named %s\n", argv[1]);
        return 2;
    }
    printf("%d passed, %d failed\n", ran - failed, failed);
    return failed ? 1 : 0;
}
