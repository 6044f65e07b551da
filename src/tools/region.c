/* tools/region.c — parse NumPy basic-slice selections. See region.h.
 *
 * Parsing runs in two passes: split the text into items (integer, slice,
 * ellipsis), then map items to dimensions (an ellipsis expands to fill the
 * dimensions not named by other items) and normalize each against its size. */
#include "region.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

enum { ITEM_INDEX, ITEM_SLICE, ITEM_ELLIPSIS };

typedef struct {
    int kind;
    int has[3];     /* slice: start, stop, step given */
    int64_t v[3];   /* index in v[0]; slice start, stop, step */
    char text[48];  /* the item as written, for messages */
} item_t;

#define MAX_ITEMS (ZC_MAX_DIMS + 1)

static void finish(region_t *r)
{
    r->out_ndim = 0;
    for (int d = 0; d < r->ndim; d++)
        if (!r->dropped[d]) r->out_shape[r->out_ndim++] = r->count[d];
}

void region_all(region_t *r, int ndim, const int64_t *shape)
{
    memset(r, 0, sizeof *r);
    r->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        r->range[d] = (zc_range){0, shape[d], 1};
        r->count[d] = shape[d];
    }
    finish(r);
}

int64_t region_nelems(const region_t *r)
{
    int64_t n = 1;
    for (int d = 0; d < r->ndim; d++)
        if (__builtin_mul_overflow(n, r->count[d], &n)) return INT64_MAX;
    return n;
}

static int is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)s[i])) return 0;
    return 1;
}

/* Parse an optional integer in s[0..len): blank → *has = 0. */
static int parse_part(const char *all, const char *s, size_t len, int *has, int64_t *v)
{
    while (len > 0 && isspace((unsigned char)*s)) s++, len--;
    while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
    if (len == 0) {
        *has = 0;
        return 0;
    }
    char buf[32];
    if (len >= sizeof buf) return cli_seterr("bad region '%.200s': number '%.*s' too long", all, 40, s);
    memcpy(buf, s, len);
    buf[len] = 0;
    const char *p = buf;
    if (*p == '+' || *p == '-') p++;
    if (!*p) return cli_seterr("bad region '%.200s': '%s' is not an integer", all, buf);
    for (; *p; p++)
        if (!isdigit((unsigned char)*p))
            return cli_seterr("bad region '%.200s': '%s' is not an integer", all, buf);
    errno = 0;
    long long x = strtoll(buf, NULL, 10);
    if (errno == ERANGE) return cli_seterr("bad region '%.200s': '%s' is out of range", all, buf);
    *has = 1;
    *v = (int64_t)x;
    return 0;
}

static int parse_item(const char *all, const char *s, size_t len, item_t *it)
{
    memset(it, 0, sizeof *it);
    while (len > 0 && isspace((unsigned char)*s)) s++, len--;
    while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
    snprintf(it->text, sizeof it->text, "%.*s", (int)(len < 47 ? len : 47), s);
    if (len == 3 && !memcmp(s, "...", 3)) {
        it->kind = ITEM_ELLIPSIS;
        return 0;
    }
    const char *c1 = memchr(s, ':', len);
    if (!c1) {
        it->kind = ITEM_INDEX;
        int has;
        if (parse_part(all, s, len, &has, &it->v[0]) < 0) return -1;
        if (!has) return cli_seterr("bad region '%.200s': empty entry", all);
        return 0;
    }
    it->kind = ITEM_SLICE;
    const char *end = s + len;
    const char *c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
    if (c2 && memchr(c2 + 1, ':', (size_t)(end - c2 - 1)))
        return cli_seterr("bad region '%.200s': '%s' has more than two ':'", all, it->text);
    if (parse_part(all, s, (size_t)(c1 - s), &it->has[0], &it->v[0]) < 0) return -1;
    const char *stop_end = c2 ? c2 : end;
    if (parse_part(all, c1 + 1, (size_t)(stop_end - c1 - 1), &it->has[1], &it->v[1]) < 0) return -1;
    if (c2 && parse_part(all, c2 + 1, (size_t)(end - c2 - 1), &it->has[2], &it->v[2]) < 0) return -1;
    return 0;
}

/* Normalize a slice bound like NumPy (positive step): negative counts from the
 * end, then clamp into [0, n]. */
static int64_t clamp_bound(int64_t v, int64_t n)
{
    if (v < 0) {
        v = v < -n ? 0 : v + n;
    }
    return v > n ? n : v;
}

static int apply_item(const char *all, const item_t *it, int d, int64_t n, region_t *r)
{
    if (it->kind == ITEM_INDEX) {
        int64_t i = it->v[0];
        if (i < -n || i >= n)
            return cli_seterr("region '%.200s': index %lld is out of bounds for dimension %d with size %lld",
                              all, (long long)i, d, (long long)n);
        if (i < 0) i += n;
        r->range[d] = (zc_range){i, i + 1, 1};
        r->count[d] = 1;
        r->dropped[d] = 1;
        return 0;
    }
    int64_t step = it->has[2] ? it->v[2] : 1;
    if (step == 0) return cli_seterr("region '%.200s': slice step cannot be zero (dimension %d: '%s')", all, d, it->text);
    if (step < 0)
        return cli_seterr("region '%.200s': negative slice steps are not supported (dimension %d: '%s'); "
                          "read forward and reverse afterwards", all, d, it->text);
    int64_t start = it->has[0] ? clamp_bound(it->v[0], n) : 0;
    int64_t stop = it->has[1] ? clamp_bound(it->v[1], n) : n;
    if (stop < start) stop = start;
    int64_t count = (stop - start) / step + ((stop - start) % step != 0);
    /* Tighten stop to one past the last selected element. */
    if (count > 0) stop = start + (count - 1) * step + 1;
    r->range[d] = (zc_range){start, stop, step};
    r->count[d] = count;
    r->dropped[d] = 0;
    return 0;
}

int region_parse(const char *text, int ndim, const int64_t *shape, region_t *r)
{
    region_all(r, ndim, shape);
    if (!text) return 0;
    size_t len = strlen(text);
    const char *s = text;
    while (len > 0 && isspace((unsigned char)*s)) s++, len--;
    while (len > 0 && isspace((unsigned char)s[len - 1])) len--;
    if (len >= 2 && ((s[0] == '[' && s[len - 1] == ']') || (s[0] == '(' && s[len - 1] == ')'))) {
        s++;
        len -= 2;
    }
    if (is_blank(s, len)) return 0;

    item_t items[MAX_ITEMS];
    int nitems = 0;
    const char *p = s, *end = s + len;
    for (;;) {
        const char *q = memchr(p, ',', (size_t)(end - p));
        const char *item_end = q ? q : end;
        if (is_blank(p, (size_t)(item_end - p))) {
            /* A trailing comma ("5,") is a 1-tuple; any other empty entry is an error. */
            if (q || nitems == 0) return cli_seterr("bad region '%.200s': empty entry", text);
            break;
        }
        if (nitems >= MAX_ITEMS)
            return cli_seterr("region '%.200s': too many entries for a %d-dimensional array", text, ndim);
        if (parse_item(text, p, (size_t)(item_end - p), &items[nitems]) < 0) return -1;
        nitems++;
        if (!q) break;
        p = q + 1;
        if (p == end) break; /* trailing comma */
    }

    int nell = 0, nnamed = 0;
    for (int i = 0; i < nitems; i++) {
        if (items[i].kind == ITEM_ELLIPSIS) nell++;
        else nnamed++;
    }
    if (nell > 1) return cli_seterr("region '%.200s': only one '...' is allowed", text);
    if (nnamed > ndim)
        return cli_seterr("region '%.200s': %d entries for a %d-dimensional array", text, nnamed, ndim);

    int d = 0;
    for (int i = 0; i < nitems; i++) {
        if (items[i].kind == ITEM_ELLIPSIS) {
            d += ndim - nnamed; /* these dimensions keep the whole range */
            continue;
        }
        if (apply_item(text, &items[i], d, shape[d], r) < 0) return -1;
        d++;
    }
    finish(r);
    return 0;
}
