/* fuzz/regression_driver.c — replays fuzz inputs without libFuzzer, so every
 * corpus file (seeds and the reproducers of fixed bugs) runs under ctest in
 * any build, sanitized or not (after zstd's tests/fuzz/regression_driver.c).
 *
 *   fuzz_regression TARGET PATH...
 *
 * TARGET is a fuzz target's name (one of fuzz/targets); each PATH is a file
 * or a folder whose regular files (not recursive) are replayed in name order. Before each file
 * its name goes to stderr, so a crash names its input. Exit status 0 when
 * every input ran; 1 for usage errors, unreadable files or no input at all
 * (an empty corpus folder would otherwise pass silently). The targets abort
 * on a broken invariant; the sanitizers abort on memory errors. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_targets.h"

/* The targets' entry points, renamed at compile time (see CMakeLists.txt). */
#define DECLARE(t) int zc_fuzz_##t(const uint8_t *data, size_t size);
ZC_FUZZ_TARGETS(DECLARE)

typedef int (*entry_fn)(const uint8_t *data, size_t size);

static const struct {
    const char *name;
    entry_fn fn;
} TARGETS[] = {
#define ENTRY(t) {#t, zc_fuzz_##t},
    ZC_FUZZ_TARGETS(ENTRY)
};

/* Read a whole file into an exact-size buffer (so ASan sees over-reads). */
static int run_file(entry_fn fn, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            fprintf(stderr, "%s: out of memory\n", path);
            return -1;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return -1;
    }
    unsigned char *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    fprintf(stderr, "running %s (%zu bytes)\n", path, n);
    fn(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run `path` (a file, or each regular file in a folder); count inputs run. */
static int run_path(entry_fn fn, const char *path, size_t *count)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        if (run_file(fn, path) != 0) return -1;
        (*count)++;
        return 0;
    }
    DIR *dir = opendir(path);
    if (!dir) {
        perror(path);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) abort();
            names = grown;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n]) abort();
        snprintf(names[n], len, "%s/%s", path, e->d_name);
        n++;
    }
    closedir(dir);
    if (n) qsort(names, n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (run_file(fn, names[i]) != 0) rc = -1;
            else (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TARGET PATH...\ntargets:", argv[0]);
        for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0]; i++) fprintf(stderr, " %s", TARGETS[i].name);
        fputc('\n', stderr);
        return 1;
    }
    entry_fn fn = NULL;
    for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0]; i++)
        if (!strcmp(argv[1], TARGETS[i].name)) fn = TARGETS[i].fn;
    if (!fn) {
        fprintf(stderr, "unknown fuzz target '%s'\n", argv[1]);
        return 1;
    }
    size_t count = 0;
    for (int i = 2; i < argc; i++)
        if (run_path(fn, argv[i], &count) != 0) return 1;
    if (count == 0) {
        fprintf(stderr, "no inputs for %s\n", argv[1]);
        return 1;
    }
    fprintf(stderr, "%s: %zu inputs ran\n", argv[1], count);
    return 0;
}
