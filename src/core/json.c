/* core/json.c — big unsigned integers through jansson (see json.h). */
#include "core/json.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True if text[i..j) is a plain non-negative integer that does not fit int64. */
static int too_big(const char *t, size_t n)
{
    if (n < 19) return 0;
    if (n > 20) return 1; /* still handed to strtoull below via the caller's copy */
    char buf[24];
    memcpy(buf, t, n);
    buf[n] = 0;
    errno = 0;
    unsigned long long v = strtoull(buf, NULL, 10);
    return errno == ERANGE || v > (unsigned long long)INT64_MAX;
}

json_t *zc_json_load(const char *text, size_t n, size_t flags, json_error_t *err)
{
    /* fast path: most documents have no such integer */
    size_t i = 0, extra = 0;
    int in_str = 0;
    for (i = 0; i < n; i++) {
        char c = text[i];
        if (in_str) {
            /* the marker is reserved: a document's own string must not forge it */
            if (c == '\\' && n - i >= 6 && (!strncmp(text + i, "\\u0001", 6) || !strncmp(text + i, "\\U0001", 6))) {
                memset(err, 0, sizeof *err);
                snprintf(err->text, sizeof err->text, "control character U+0001 in a string is not allowed");
                err->position = (int)i;
                return NULL;
            }
            if (c == '\\') i++;
            else if (c == '"') in_str = 0;
            continue;
        }
        if (c == '"') { in_str = 1; continue; }
        if (c >= '0' && c <= '9' && (i == 0 || !strchr("-.eE+0123456789", text[i - 1]))) {
            size_t j = i;
            while (j < n && text[j] >= '0' && text[j] <= '9') j++;
            if ((j == n || !strchr(".eE", text[j])) && too_big(text + i, j - i)) extra++;
            i = j - 1;
        }
    }
    if (!extra) return json_loadb(text, n, flags, err);
    size_t cap = n + extra * 12 + 1; /* each big integer gains "\\u0001u64:" and two quotes */
    char *out = malloc(cap);
    if (!out) return NULL;
    size_t k = 0;
    in_str = 0;
    for (i = 0; i < n; i++) {
        char c = text[i];
        if (in_str) {
            out[k++] = c;
            if (c == '\\' && i + 1 < n) out[k++] = text[++i];
            else if (c == '"') in_str = 0;
            continue;
        }
        if (c == '"') { in_str = 1; out[k++] = c; continue; }
        if (c >= '0' && c <= '9' && (i == 0 || !strchr("-.eE+0123456789", text[i - 1]))) {
            size_t j = i;
            while (j < n && text[j] >= '0' && text[j] <= '9') j++;
            if ((j == n || !strchr(".eE", text[j])) && too_big(text + i, j - i)) {
                out[k++] = '"';
                memcpy(out + k, "\\u0001u64:", 10);
                k += 10;
                memcpy(out + k, text + i, j - i);
                k += j - i;
                out[k++] = '"';
            } else {
                memcpy(out + k, text + i, j - i);
                k += j - i;
            }
            i = j - 1;
            continue;
        }
        out[k++] = c;
    }
    json_t *j = json_loadb(out, k, flags, err);
    free(out);
    return j;
}

char *zc_json_dump(const json_t *j, size_t flags)
{
    char *s = json_dumps(j, flags);
    if (!s) return NULL;
    static const char pat[] = "\"\\u0001u64:";
    char *p = s, *w = s;
    while (*p) {
        if (!strncmp(p, pat, sizeof pat - 1)) {
            p += sizeof pat - 1;
            while (*p >= '0' && *p <= '9') *w++ = *p++;
            if (*p == '"') p++;
            continue;
        }
        *w++ = *p++;
    }
    *w = 0;
    return s;
}
