/* fuzz/fuzz_store_key.c — store keys, listing prefixes and store URLs
 * (store/key.c, zc_store_open's dispatch), and a memory store fed those keys.
 *
 * Input layout:
 *   byte 0   mode: 0-3 the rest is a key, 4-5 a listing prefix, 6-7 a URL
 *   rest     the text (up to the first NUL)
 *
 * A key store_key_check accepts must follow the rules of store.h: 1 to
 * STORE_KEY_MAX bytes, no leading or trailing '/', no empty, "." or ".."
 * segment, no backslash or control byte; it is then put into a memory store,
 * must read back equal, be listed under its parent folder and be erased. A
 * refusal must carry a message. A URL is opened read-only only when it names
 * a memory store or a path under a folder that does not exist (no network,
 * no real files): any result is fine, a failure must carry a message. */
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "fuzz.h"
#include "store/store.h"

static bool rules_hold(const char *k, bool prefix)
{
    size_t n = strlen(k);
    if (prefix && n == 0) return true;
    if (prefix && k[n - 1] == '/') n--;
    if (n == 0 || n > STORE_KEY_MAX || k[0] == '/' || k[n - 1] == '/') return false;
    const char *seg = k;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || k[i] == '/') {
            size_t len = (size_t)(k + i - seg);
            if (len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.')) return false;
            seg = k + i + 1;
            continue;
        }
        unsigned char c = (unsigned char)k[i];
        if (c == '\\' || c < 0x20 || c == 0x7f) return false;
    }
    return true;
}

typedef struct {
    const char *want;
    bool seen;
} find_ctx;

static int find_key(const char *key, void *vctx)
{
    find_ctx *f = vctx;
    if (!strcmp(key, f->want)) f->seen = true;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 3 * STORE_KEY_MAX) return 0;
    int mode = data[0] % 8;
    char *text = malloc(size);
    FUZZ_CHECK(text != NULL, "out of memory");
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    if (mode < 6) {
        bool prefix = mode >= 4;
        int rc = prefix ? store_prefix_check(text) : store_key_check(text);
        FUZZ_CHECK((rc == 0) == rules_hold(text, prefix), "'%s' (%s) %s", text, prefix ? "prefix" : "key",
                   rc == 0 ? "accepted against the rules" : "refused though valid");
        FUZZ_CHECK(rc == 0 || zc_errmsg()[0], "'%s' refused without a message", text);
        if (rc == 0 && !prefix) {
            zc_store *st;
            FUZZ_CHECK(zc_store_open("memory://fuzz-key", 0, &st) == 0, "memory store: %s", zc_errmsg());
            FUZZ_CHECK(store_put(st, text, data, size) == 0, "put '%s': %s", text, zc_errmsg());
            void *back;
            size_t n;
            FUZZ_CHECK(store_get(st, text, &back, &n) == 0 && n == size && !memcmp(back, data, size),
                       "'%s' does not read back", text);
            zc_free(back);
            char parent[STORE_KEY_MAX + 2];
            const char *slash = strrchr(text, '/');
            size_t plen = slash ? (size_t)(slash - text) + 1 : 0;
            memcpy(parent, text, plen);
            parent[plen] = 0;
            find_ctx f = {text, false};
            FUZZ_CHECK(store_list_dir(st, parent, find_key, &f) == 0 && f.seen, "'%s' not listed under '%s'", text,
                       parent);
            FUZZ_CHECK(store_erase(st, text) == 0, "erase '%s': %s", text, zc_errmsg());
            FUZZ_CHECK(store_get(st, text, &back, &n) == ZC_ENOENT, "'%s' still there after erase", text);
            zc_store_close(st);
        }
    } else {
        const char *sep = strstr(text, "://");
        bool memory = !strncasecmp(text, "memory://", 9);
        bool nowhere = !sep && !strncmp(text, "/nonexistent-zc-fuzz/", 21);
        bool file_nowhere = !strncasecmp(text, "file:///nonexistent-zc-fuzz/", 28);
        if (memory || nowhere || file_nowhere) {
            zc_store *st = NULL;
            int rc = zc_store_open(text, ZC_STORE_READONLY, &st);
            FUZZ_CHECK(rc == 0 ? st != NULL : (st == NULL && zc_errmsg()[0]), "'%s': %d without a message", text, rc);
            zc_store_close(st);
        }
    }
    free(text);
    return 0;
}
