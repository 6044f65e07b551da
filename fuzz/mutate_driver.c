/* fuzz/mutate_driver.c — a small deterministic mutation fuzzer for builds
 * where libFuzzer is not available (gcc, or clang that cannot build the
 * library): meant for the -DZC_SANITIZE=ON build.
 *
 *   fuzz_mutate TARGET ITERATIONS SEED_DIR OUT_DIR [RNG_SEED [TIMEOUT_S]]
 *
 * Loads every regular file of SEED_DIR, then for each iteration picks a seed,
 * applies 1-4 mutations from a xorshift generator seeded with RNG_SEED (so a
 * run is reproducible): byte flips and random bytes, deletions and
 * duplications of a span, splices with another seed, number tweaks (a run of
 * digits replaced by an interesting value: 0, -1, 2^31, 2^63-1, 1e308, ...),
 * and token swaps (an identifier or punctuation token replaced by one taken
 * from another seed). Inputs that are JSON objects also get structural
 * mutations half of the time: one value somewhere in the tree is set to an
 * interesting number, nudged by +-1, replaced by a value of any seed, removed
 * from its object or array, or its array item duplicated. Each input runs in a forked child (the parent ran the
 * target once on an empty input first, so fixtures are built once), with an
 * alarm of TIMEOUT_S seconds (default 10); in sanitized builds the child also
 * runs LeakSanitizer before exiting. An input whose child dies, times out or
 * exits non-zero is written to OUT_DIR/crash-<target>-<iteration>, and the
 * run goes on. Prints counts at the end; exit status 0 even with findings. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz_targets.h"

/* The targets' entry points, renamed at compile time (see CMakeLists.txt). */
#define DECLARE(t) int zc_fuzz_##t(const uint8_t *data, size_t size);
ZC_FUZZ_TARGETS(DECLARE)

/* LeakSanitizer's on-demand check, when linked in. */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));
/* The codecs' per-thread contexts (codec/compress_common.c) of the parent's
 * pool threads, made while building fixtures, are unreachable in a forked
 * child, which has no such threads: not leaks of the input's run. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:compress_common.c\n"; }

typedef int (*entry_fn)(const uint8_t *data, size_t size);
static const struct {
    const char *name;
    entry_fn fn;
} TARGETS[] = {
#define ENTRY(t) {#t, zc_fuzz_##t},
    ZC_FUZZ_TARGETS(ENTRY)
};

typedef struct {
    unsigned char *p;
    size_t n;
} blob;

static uint64_t rng;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static size_t below(size_t n) { return n ? (size_t)(next() % n) : 0; }

static blob *seeds;
static size_t nseeds;

static int load(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    /* name order, so the run does not depend on readdir's order */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        free(names[i]);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        blob b = {malloc((size_t)sb.st_size + 1), 0};
        b.n = fread(b.p, 1, (size_t)sb.st_size, f);
        fclose(f);
        seeds = realloc(seeds, (nseeds + 1) * sizeof *seeds);
        seeds[nseeds++] = b;
    }
    free(names);
    return nseeds ? 0 : -1;
}

static const char *const NUMBERS[] = {
    "0", "-1", "1", "2", "-2", "3", "7", "8", "255", "256", "65535", "2147483647", "2147483648", "-2147483649",
    "4294967296", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551615",
    "1e308", "-1e308", "1e-320", "nan", "0.5", "-0.0", "1000000", "1099511627776", "4611686018427387904", "33",
    "64", "31", "32", "63", "100000000000",
};

/* The token (identifier/number run or one punctuation byte) at i: its end. */
static size_t token_end(const blob *b, size_t i)
{
    if (i >= b->n) return i;
    if (isalnum(b->p[i]) || b->p[i] == '_') {
        while (i < b->n && (isalnum(b->p[i]) || b->p[i] == '_')) i++;
        return i;
    }
    return i + 1;
}

/* Replace [at, at+len) of *b by rep[0..rn). */
static void replace(blob *b, size_t at, size_t len, const unsigned char *rep, size_t rn)
{
    unsigned char *p = malloc(b->n - len + rn + 1);
    memcpy(p, b->p, at);
    if (rn) memcpy(p + at, rep, rn);
    memcpy(p + at + rn, b->p + at + len, b->n - at - len);
    free(b->p);
    b->p = p;
    b->n = b->n - len + rn;
}

/* Every value of a JSON tree, with where it sits (parent and key or index). */
typedef struct {
    json_t *parent, *value;
    const char *key;
    size_t index;
} jslot;

static void collect(json_t *v, jslot **slots, size_t *n)
{
    const char *key;
    json_t *c;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach(v, key, c) {
            *slots = realloc(*slots, (*n + 1) * sizeof **slots);
            (*slots)[(*n)++] = (jslot){v, c, key, 0};
            collect(c, slots, n);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, c) {
            *slots = realloc(*slots, (*n + 1) * sizeof **slots);
            (*slots)[(*n)++] = (jslot){v, c, NULL, i};
            collect(c, slots, n);
        }
    }
}

static void set_slot(const jslot *s, json_t *nv)
{
    if (s->key) json_object_set_new(s->parent, s->key, nv);
    else json_array_set_new(s->parent, s->index, nv);
}

/* A structural mutation of a JSON object; 0 if b is not one. */
static int json_mutate(blob *b)
{
    json_t *doc = json_loadb((const char *)b->p, b->n, 0, NULL);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return 0;
    }
    jslot *slots = NULL;
    size_t n = 0;
    collect(doc, &slots, &n);
    if (n) {
        jslot *s = &slots[below(n)];
        switch (next() % 6) {
        case 0: case 1: { /* an interesting number */
            const char *t = NUMBERS[below(sizeof NUMBERS / sizeof NUMBERS[0])];
            json_t *nv = json_loads(t, JSON_DECODE_ANY, NULL);
            set_slot(s, nv ? nv : json_integer(-1));
            break;
        }
        case 2: /* nudge an integer */
            if (json_is_integer(s->value)) {
                static const json_int_t d[] = {1, -1, 2, -2};
                set_slot(s, json_integer((json_int_t)((unsigned long long)json_integer_value(s->value) +
                                                      (unsigned long long)d[next() % 4])));
            }
            break;
        case 3: { /* a value from some seed */
            const blob *o = &seeds[below(nseeds)];
            json_t *od = json_loadb((const char *)o->p, o->n, 0, NULL);
            jslot *os = NULL;
            size_t on = 0;
            if (od) collect(od, &os, &on);
            if (on) set_slot(s, json_deep_copy(os[below(on)].value));
            free(os);
            json_decref(od);
            break;
        }
        case 4: /* remove */
            if (s->key) json_object_del(s->parent, s->key);
            else json_array_remove(s->parent, s->index);
            break;
        default: /* duplicate an array item */
            if (!s->key) json_array_insert_new(s->parent, s->index, json_deep_copy(s->value));
            break;
        }
    }
    free(slots);
    char *out = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!out) return 0;
    free(b->p);
    b->n = strlen(out);
    b->p = malloc(b->n + 1);
    memcpy(b->p, out, b->n);
    free(out);
    return 1;
}

static void mutate(blob *b)
{
    if (b->n && b->p[0] == '{' && next() % 2 && json_mutate(b)) return;
    size_t at = below(b->n + 1);
    switch (next() % 9) {
    case 0: /* flip a bit */
        if (b->n) b->p[below(b->n)] ^= (unsigned char)(1u << (next() % 8));
        break;
    case 1: /* a random byte */
        if (b->n) b->p[below(b->n)] = (unsigned char)next();
        break;
    case 2: { /* delete a span */
        size_t len = below(b->n - at < 16 ? b->n - at + 1 : 17);
        replace(b, at, len, NULL, 0);
        break;
    }
    case 3: { /* duplicate a span */
        size_t len = below(b->n - at < 32 ? b->n - at + 1 : 33);
        unsigned char tmp[32];
        memcpy(tmp, b->p + at, len);
        replace(b, at, 0, tmp, len);
        break;
    }
    case 4: { /* splice: a piece of another seed */
        const blob *o = &seeds[below(nseeds)];
        size_t from = below(o->n + 1), len = below(o->n - from + 1);
        if (len > 256) len = 256;
        size_t cut = below(b->n - at < 64 ? b->n - at + 1 : 65);
        replace(b, at, cut, o->p + from, len);
        break;
    }
    case 5:
    case 6: { /* number tweak: the next run of digits (and a leading minus) */
        size_t i = at;
        while (i < b->n && !isdigit(b->p[i])) i++;
        if (i >= b->n) {
            i = 0;
            while (i < b->n && !isdigit(b->p[i])) i++;
            if (i >= b->n) break;
        }
        size_t s = i > 0 && b->p[i - 1] == '-' ? i - 1 : i, e = i;
        while (e < b->n && (isdigit(b->p[e]) || b->p[e] == '.' || b->p[e] == 'e')) e++;
        char num[64];
        if (next() % 3 == 0) {
            long long v = strtoll((const char *)b->p + i, NULL, 10);
            static const long long d[] = {1, -1, 2, -2, 8, 1024};
            snprintf(num, sizeof num, "%lld", (long long)((unsigned long long)v + (unsigned long long)d[next() % 6]));
        } else {
            snprintf(num, sizeof num, "%s", NUMBERS[below(sizeof NUMBERS / sizeof NUMBERS[0])]);
        }
        replace(b, s, e - s, (const unsigned char *)num, strlen(num));
        break;
    }
    case 7:
    case 8: { /* token swap with a token of some seed */
        if (!b->n) break;
        size_t i = below(b->n), e = token_end(b, i);
        while (i > 0 && (isalnum(b->p[i - 1]) || b->p[i - 1] == '_') && (isalnum(b->p[i]) || b->p[i] == '_')) i--;
        const blob *o = &seeds[below(nseeds)];
        if (!o->n) break;
        size_t j = below(o->n), oe = token_end(o, j);
        while (j > 0 && (isalnum(o->p[j - 1]) || o->p[j - 1] == '_') && (isalnum(o->p[j]) || o->p[j] == '_')) j--;
        replace(b, i, e - i, o->p + j, oe - j);
        break;
    }
    }
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s TARGET ITERATIONS SEED_DIR OUT_DIR [RNG_SEED [TIMEOUT_S]]\n", argv[0]);
        return 1;
    }
    entry_fn fn = NULL;
    for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0]; i++)
        if (!strcmp(argv[1], TARGETS[i].name)) fn = TARGETS[i].fn;
    long iters = atol(argv[2]);
    if (!fn || iters < 1 || load(argv[3]) < 0) {
        fprintf(stderr, "bad target, iteration count or seed folder\n");
        return 1;
    }
    rng = argc > 5 ? strtoull(argv[5], NULL, 0) : 0x9E3779B97F4A7C15ull;
    if (!rng) rng = 1;
    int timeout = argc > 6 ? atoi(argv[6]) : 10;
    fn((const uint8_t *)"", 0); /* build the target's fixtures once, before forking */
    long crashes = 0, timeouts = 0;
    for (long it = 0; it < iters; it++) {
        blob b;
        const blob *s = &seeds[below(nseeds)];
        b.n = s->n;
        b.p = malloc(b.n + 1);
        memcpy(b.p, s->p, b.n);
        int nm = 1 + (int)(next() % 4);
        for (int k = 0; k < nm; k++) mutate(&b);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            alarm((unsigned)timeout);
            /* an exact-size copy, so ASan sees over-reads */
            unsigned char *x = malloc(b.n ? b.n : 1);
            memcpy(x, b.p, b.n);
            fn(x, b.n);
            free(x);
            free(b.p);
            int leaks = __lsan_do_recoverable_leak_check ? __lsan_do_recoverable_leak_check() : 0;
            _exit(leaks ? 3 : 0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            int to = WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM;
            timeouts += to;
            crashes += !to;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s-%s-%ld", argv[4], to ? "timeout" : "crash", argv[1], it);
            FILE *f = fopen(path, "wb");
            if (f) {
                fwrite(b.p, 1, b.n, f);
                fclose(f);
            }
            fprintf(stderr, "== iteration %ld: %s, input saved as %s\n", it,
                    to ? "timeout" : WIFSIGNALED(st) ? "killed by a signal" : "non-zero exit", path);
        }
        free(b.p);
        if ((it + 1) % 1000 == 0) fprintf(stderr, "%ld iterations, %ld crashes, %ld timeouts\n", it + 1, crashes, timeouts);
    }
    fprintf(stderr, "done: %s, %ld iterations, %ld crashes, %ld timeouts\n", argv[1], iters, crashes, timeouts);
    return 0;
}
