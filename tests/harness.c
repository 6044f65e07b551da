/* tests/harness.c — registry and main for the test binaries. */
#include "harness.h"

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
