/* fuzz/fuzz_s3_xml.c — how zcube reads what an S3 server answers: listing
 * pages (s3_xml_next walked as store/s3_list.c walks them), error bodies
 * (net_describe, s3_body_error) and listed keys read back through XML
 * escaping.
 *
 * Input layout:
 *   byte 0   mode: 0-5 the rest is an answer body, 6-7 the rest is a key
 *   rest     the text (up to the first NUL)
 *
 * A body: every field s3_xml_next returns must be no longer than the raw
 * text between its tags, equal to it when that holds no '&', and the
 * position must only move forward inside the body. As an error body (what
 * fits in net_xfer.errbody) the description must be NUL-ended inside its
 * buffer and start with "HTTP <code>"; s3_body_error must fail with a
 * message exactly when the body holds "<Error>". A key: escaped as servers
 * escape (named entities, decimal and hex character references, chosen by
 * the key's own bytes), wrapped as a listing's <Key>, it must read back
 * equal. */
#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "fuzz.h"
#include "store/s3.h"

/* Walk body as a listing page is walked; check each field against its raw text. */
static void walk(const char *body, const char *tag)
{
    char open[64];
    snprintf(open, sizeof open, "<%s>", tag);
    const char *pos = body, *end = body + strlen(body);
    for (;;) {
        const char *before = pos;
        bool oom = false;
        char *t = s3_xml_next(body, tag, &pos, &oom);
        FUZZ_CHECK(!oom, "out of memory");
        if (!t) {
            FUZZ_CHECK(pos == before, "<%s>: position moved without a field", tag);
            return;
        }
        FUZZ_CHECK(pos > before && pos <= end, "<%s>: position %td outside (%td, %td]", tag, pos - body,
                   before - body, end - body);
        const char *a = strstr(before, open) + strlen(open);
        size_t raw = (size_t)(pos - a) - strlen(tag) - 3; /* "</tag>" */
        FUZZ_CHECK(strlen(t) <= raw, "<%s>: %zu bytes decoded from %zu", tag, strlen(t), raw);
        if (!memchr(a, '&', raw))
            FUZZ_CHECK(strlen(t) == raw && !memcmp(t, a, raw), "<%s>: '%s' changed without an entity", tag, t);
        zc__free(t);
    }
}

static void body_checks(const char *body)
{
    static const char *const tags[] = {"Key", "Prefix", "IsTruncated", "NextContinuationToken", "Code", "UploadId"};
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) walk(body, tags[i]);

    net_xfer x = {.code = 403};
    snprintf(x.errbody, sizeof x.errbody, "%s", body);
    char d[128];
    memset(d, 'x', sizeof d);
    net_describe(&x, d, sizeof d);
    FUZZ_CHECK(memchr(d, 0, sizeof d) && !strncmp(d, "HTTP 403", 8), "description '%.*s'", (int)sizeof d, d);

    x = (net_xfer){.code = 200, .dst = (unsigned char *)body, .got = strlen(body)};
    zc__err_clear();
    int rc = s3_body_error(&x, "fuzz");
    char start[NET_ERRBODY_MAX];
    snprintf(start, sizeof start, "%s", body);
    bool err = strstr(start, "<Error>") != NULL;
    FUZZ_CHECK(err ? rc == ZC_EIO && strstr(zc_errmsg(), "fuzz: S3 error") : rc == 0, "s3_body_error %d: '%s'",
               rc, zc_errmsg());
}

/* key escaped as an S3 server may escape it, by choices taken from its bytes */
static char *escape(const char *key)
{
    size_t n = strlen(key);
    char *o = zc__malloc(n * 8 + 128); /* at most 6 bytes a character, and the tags around */
    FUZZ_CHECK(o != NULL, "out of memory");
    size_t k = (size_t)sprintf(o, "<ListBucketResult><Contents><Key>");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)key[i];
        int how = (c + (int)i) % 4;
        if (c == '&') k += (size_t)sprintf(o + k, how & 1 ? "&amp;" : "&#38;");
        else if (c == '<') k += (size_t)sprintf(o + k, how & 1 ? "&lt;" : "&#x3c;");
        else if (c == '>') k += (size_t)sprintf(o + k, "&gt;");
        else if (c == '"' && how < 2) k += (size_t)sprintf(o + k, "&quot;");
        else if (c == '\'' && how < 2) k += (size_t)sprintf(o + k, "&apos;");
        else if (c > 0 && c < 128 && how == 3) k += (size_t)sprintf(o + k, "&#%u;", c);
        else if (c > 0 && c < 128 && how == 2 && i % 2) k += (size_t)sprintf(o + k, "&#x%X;", c);
        else o[k++] = (char)c;
    }
    strcpy(o + k, "</Key></Contents></ListBucketResult>");
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 64 * 1024) return 0;
    char *text = malloc(size);
    FUZZ_CHECK(text != NULL, "out of memory");
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    if (data[0] % 8 < 6) {
        body_checks(text);
    } else {
        char *xml = escape(text);
        const char *pos = xml;
        bool oom = false;
        char *k = s3_xml_next(xml, "Key", &pos, &oom);
        FUZZ_CHECK(k && !strcmp(k, text), "key '%s' read back as '%s' from %s", text, k ? k : "(none)", xml);
        zc__free(k);
        zc__free(xml);
    }
    free(text);
    return 0;
}
