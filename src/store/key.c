/* store/key.c — key validation: what a key may look like, so none escapes the root.
 *
 * A key is 1..STORE_KEY_MAX bytes of '/'-separated segments. Refused: a
 * leading or trailing '/', empty segments ("a//b"), "." and ".." segments,
 * backslashes (a separator elsewhere), and control bytes (0x01-0x1f, 0x7f).
 * Other bytes, UTF-8 included, pass through. Messages quote the key with
 * control bytes escaped and long keys shortened. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "store/store.h"

/* Quote up to ~80 bytes of `key` into out, escaping control bytes. */
static const char *quote(const char *key, char *out, size_t cap)
{
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; key[i] && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)key[i];
        if (i >= 80) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
            o += (size_t)snprintf(out + o, cap - o, c == '"' || c == '\\' ? "\\%c" : "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o++] = '"';
    out[o] = 0;
    return out;
}

static int bad(const char *what, const char *key, const char *why)
{
    char q[128];
    return zc__err(ZC_EINVAL, "invalid store %s %s: %s", what, quote(key, q, sizeof q), why);
}

/* Check `s` (length len, no leading '/') as segments; `what` names it in messages. */
static int check_segments(const char *what, const char *s, size_t len)
{
    size_t seg = 0; /* start of the current segment */
    for (size_t i = 0; i <= len; i++) {
        unsigned char c = i < len ? (unsigned char)s[i] : '/';
        if (c == '/') {
            size_t n = i - seg;
            if (n == 0) return bad(what, s, i == len ? "trailing '/'" : "empty segment ('//')");
            if (n == 1 && s[seg] == '.') return bad(what, s, "'.' segment");
            if (n == 2 && s[seg] == '.' && s[seg + 1] == '.') return bad(what, s, "'..' segment");
            seg = i + 1;
        } else if (c == '\\') {
            return bad(what, s, "backslash");
        } else if (c < 0x20 || c == 0x7f) {
            return bad(what, s, "control character");
        }
    }
    return 0;
}

int store_key_check(const char *key)
{
    if (!key) return zc__err(ZC_EINVAL, "store key is NULL");
    size_t len = strnlen(key, STORE_KEY_MAX + 1);
    if (len == 0) return zc__err(ZC_EINVAL, "store key is empty");
    if (len > STORE_KEY_MAX) return bad("key", key, "longer than 4096 bytes");
    if (key[0] == '/') return bad("key", key, "leading '/'");
    return check_segments("key", key, len);
}

int store_prefix_check(const char *prefix)
{
    if (!prefix) return zc__err(ZC_EINVAL, "store prefix is NULL");
    size_t len = strnlen(prefix, STORE_KEY_MAX + 2);
    if (len == 0) return 0;
    if (len > STORE_KEY_MAX + 1) return bad("prefix", prefix, "longer than 4096 bytes");
    if (prefix[0] == '/') return bad("prefix", prefix, "leading '/'");
    if (prefix[len - 1] == '/') len--;
    if (len == 0) return bad("prefix", prefix, "empty segment");
    return check_segments("prefix", prefix, len);
}
