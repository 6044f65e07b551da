/* tools/npy.c — read and write NumPy .npy files. See npy.h for the layout.
 *
 * The header dict is parsed by a small tokenizer for the Python literals that
 * NumPy writes: strings ('..' or ".."), True/False, tuples of integers
 * (old files may write 3L). A list as 'descr' is a structured dtype: refused. */
#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define MAX_HEADER (1u << 20) /* refuse absurd header lengths before allocating */

static int native_little(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* ------------------------------------------------------------ dtype strings */

static const struct {
    zc_dtype dtype;
    char kind;
    size_t size;
    const char *label;
} NUMERIC[] = {
    {ZC_BOOL, 'b', 1, "bool"},          {ZC_INT8, 'i', 1, "int8"},
    {ZC_INT16, 'i', 2, "int16"},        {ZC_INT32, 'i', 4, "int32"},
    {ZC_INT64, 'i', 8, "int64"},        {ZC_UINT8, 'u', 1, "uint8"},
    {ZC_UINT16, 'u', 2, "uint16"},      {ZC_UINT32, 'u', 4, "uint32"},
    {ZC_UINT64, 'u', 8, "uint64"},      {ZC_FLOAT16, 'f', 2, "float16"},
    {ZC_FLOAT32, 'f', 4, "float32"},    {ZC_FLOAT64, 'f', 8, "float64"},
    {ZC_COMPLEX64, 'c', 8, "complex64"}, {ZC_COMPLEX128, 'c', 16, "complex128"},
};
#define NNUMERIC (sizeof NUMERIC / sizeof NUMERIC[0])

int npy_descr_parse(const char *descr, zc_dtype *dtype, size_t *itemsize, char *byteorder)
{
    const char *s = descr;
    char order = '=';
    if (*s == '<' || *s == '>' || *s == '|' || *s == '=') order = *s++;
    char kind = *s;
    if (!kind) return cli_seterr("empty dtype string");
    s++;
    if (kind == '?' && !*s) {
        *dtype = ZC_BOOL;
        *itemsize = 1;
        *byteorder = '|';
        return 0;
    }
    if (kind == 'O') return cli_seterr("dtype '%s' (Python objects) is not supported", descr);
    if (kind == 'M' || kind == 'm')
        return cli_seterr("dtype '%s' (datetime/timedelta) is not supported", descr);
    if (!isdigit((unsigned char)*s)) return cli_seterr("dtype '%s' is not supported", descr);
    errno = 0;
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (*end || errno || n == 0 || n > (1ull << 30))
        return cli_seterr("dtype '%s' is not supported (bad item size)", descr);
    if (order == '=') order = native_little() ? '<' : '>';
    if (kind == 'S' || kind == 'a' || kind == 'V') {
        *dtype = kind == 'V' ? ZC_RAW : ZC_BYTES;
        *itemsize = (size_t)n;
        *byteorder = '|';
        return 0;
    }
    if (kind == 'U') {
        *dtype = ZC_UNICODE;
        *itemsize = (size_t)n * 4;
        *byteorder = order == '|' ? (native_little() ? '<' : '>') : order;
        return 0;
    }
    for (size_t i = 0; i < NNUMERIC; i++) {
        if (NUMERIC[i].kind != kind || NUMERIC[i].size != n) continue;
        *dtype = NUMERIC[i].dtype;
        *itemsize = (size_t)n;
        if (n == 1) order = '|';
        else if (order == '|') order = native_little() ? '<' : '>';
        *byteorder = order;
        return 0;
    }
    if ((kind == 'f' && n == 16) || (kind == 'c' && n == 32))
        return cli_seterr("dtype '%s' (long double) is not supported", descr);
    return cli_seterr("dtype '%s' is not supported", descr);
}

int npy_descr_format(zc_dtype dtype, size_t itemsize, char *buf, size_t size)
{
    char e = native_little() ? '<' : '>';
    switch (dtype) {
    case ZC_BYTES: snprintf(buf, size, "|S%zu", itemsize); return 0;
    case ZC_RAW: snprintf(buf, size, "|V%zu", itemsize); return 0;
    case ZC_UNICODE:
        if (itemsize == 0 || itemsize % 4) return cli_seterr("unicode item size %zu is not a multiple of 4", itemsize);
        snprintf(buf, size, "%cU%zu", e, itemsize / 4);
        return 0;
    default: break;
    }
    for (size_t i = 0; i < NNUMERIC; i++) {
        if (NUMERIC[i].dtype != dtype) continue;
        snprintf(buf, size, "%c%c%zu", NUMERIC[i].size == 1 ? '|' : e, NUMERIC[i].kind, NUMERIC[i].size);
        return 0;
    }
    return cli_seterr("dtype %d has no NumPy equivalent", (int)dtype);
}

void npy_dtype_label(zc_dtype dtype, size_t itemsize, char *buf, size_t size)
{
    switch (dtype) {
    case ZC_BYTES: snprintf(buf, size, "S%zu", itemsize); return;
    case ZC_RAW: snprintf(buf, size, "V%zu", itemsize); return;
    case ZC_UNICODE: snprintf(buf, size, "U%zu", itemsize / 4); return;
    default: break;
    }
    for (size_t i = 0; i < NNUMERIC; i++)
        if (NUMERIC[i].dtype == dtype) {
            snprintf(buf, size, "%s", NUMERIC[i].label);
            return;
        }
    snprintf(buf, size, "invalid");
}

/* ------------------------------------------------------------ header dict */

typedef struct {
    const char *p, *end;
    const char *name; /* file name for messages */
} lexer;

static void skip_ws(lexer *lx)
{
    while (lx->p < lx->end && isspace((unsigned char)*lx->p)) lx->p++;
}

static int bad(const lexer *lx, const char *what)
{
    return cli_seterr("'%s': malformed .npy header: %s", lx->name, what);
}

static int expect(lexer *lx, char c, const char *what)
{
    skip_ws(lx);
    if (lx->p >= lx->end || *lx->p != c) return bad(lx, what);
    lx->p++;
    return 0;
}

/* A quoted string into buf. */
static int lex_string(lexer *lx, char *buf, size_t size)
{
    skip_ws(lx);
    if (lx->p >= lx->end || (*lx->p != '\'' && *lx->p != '"')) return bad(lx, "expected a string");
    char q = *lx->p++;
    size_t n = 0;
    while (lx->p < lx->end && *lx->p != q) {
        if (*lx->p == '\\') return bad(lx, "escapes in strings are not supported");
        if (n + 1 >= size) return bad(lx, "string too long");
        buf[n++] = *lx->p++;
    }
    if (lx->p >= lx->end) return bad(lx, "unterminated string");
    lx->p++;
    buf[n] = 0;
    return 0;
}

static int lex_word(lexer *lx, char *buf, size_t size)
{
    skip_ws(lx);
    size_t n = 0;
    while (lx->p < lx->end && (isalnum((unsigned char)*lx->p) || *lx->p == '_' || *lx->p == '-')) {
        if (n + 1 >= size) return bad(lx, "word too long");
        buf[n++] = *lx->p++;
    }
    buf[n] = 0;
    return n ? 0 : bad(lx, "expected a value");
}

static int lex_shape(lexer *lx, npy_header *h)
{
    if (expect(lx, '(', "shape must be a tuple") < 0) return -1;
    h->ndim = 0;
    for (;;) {
        skip_ws(lx);
        if (lx->p < lx->end && *lx->p == ')') {
            lx->p++;
            return 0;
        }
        char word[32];
        if (lex_word(lx, word, sizeof word) < 0) return -1;
        size_t wl = strlen(word);
        if (wl > 1 && (word[wl - 1] == 'L' || word[wl - 1] == 'l')) word[wl - 1] = 0; /* Python 2 long */
        int64_t v;
        if (cli_parse_i64(word, &v) < 0 || v < 0) return bad(lx, "shape entries must be non-negative integers");
        if (h->ndim >= ZC_MAX_DIMS)
            return cli_seterr("'%s': .npy has more than %d dimensions", lx->name, ZC_MAX_DIMS);
        h->shape[h->ndim++] = v;
        skip_ws(lx);
        if (lx->p < lx->end && *lx->p == ',') {
            lx->p++;
            continue;
        }
        if (expect(lx, ')', "expected ',' or ')' in shape") < 0) return -1;
        return 0;
    }
}

static int parse_dict(lexer *lx, npy_header *h)
{
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    if (expect(lx, '{', "expected '{'") < 0) return -1;
    for (;;) {
        skip_ws(lx);
        if (lx->p < lx->end && *lx->p == '}') {
            lx->p++;
            break;
        }
        char key[32];
        if (lex_string(lx, key, sizeof key) < 0) return -1;
        if (expect(lx, ':', "expected ':' after a key") < 0) return -1;
        skip_ws(lx);
        if (!strcmp(key, "descr")) {
            if (lx->p < lx->end && *lx->p == '[')
                return cli_seterr("'%s': structured dtypes (record arrays) are not supported", lx->name);
            if (lex_string(lx, h->descr, sizeof h->descr) < 0) return -1;
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            char word[16];
            if (lex_word(lx, word, sizeof word) < 0) return -1;
            if (!strcmp(word, "True")) h->fortran = 1;
            else if (!strcmp(word, "False")) h->fortran = 0;
            else return bad(lx, "fortran_order must be True or False");
            have_fortran = 1;
        } else if (!strcmp(key, "shape")) {
            if (lex_shape(lx, h) < 0) return -1;
            have_shape = 1;
        } else {
            return cli_seterr("'%s': malformed .npy header: unexpected key '%s'", lx->name, key);
        }
        skip_ws(lx);
        if (lx->p < lx->end && *lx->p == ',') {
            lx->p++;
            continue;
        }
        if (expect(lx, '}', "expected ',' or '}'") < 0) return -1;
        break;
    }
    if (!have_descr || !have_fortran || !have_shape)
        return bad(lx, "missing 'descr', 'fortran_order' or 'shape'");
    return 0;
}

static uint32_t le16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Prefix: magic, version, header length. Needs 12 bytes (10 for v1). */
static int parse_prefix(const unsigned char *buf, size_t len, const char *name, int *version,
                        size_t *prefix, size_t *hlen)
{
    if (len < 10 || memcmp(buf, MAGIC, MAGIC_LEN))
        return cli_seterr("'%s': not a .npy file (no \\x93NUMPY magic)", name);
    int major = buf[6];
    if (major == 1) {
        *prefix = 10;
        *hlen = le16(buf + 8);
    } else if (major == 2 || major == 3) {
        if (len < 12) return cli_seterr("'%s': truncated .npy header", name);
        *prefix = 12;
        *hlen = le32(buf + 8);
    } else {
        return cli_seterr("'%s': .npy format version %d.%d is not supported", name, major, buf[7]);
    }
    if (*hlen > MAX_HEADER) return cli_seterr("'%s': .npy header length %zu is too large", name, *hlen);
    *version = major;
    return 0;
}

static int finish_header(npy_header *h, const char *name)
{
    if (npy_descr_parse(h->descr, &h->dtype, &h->itemsize, &h->byteorder) < 0) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", cli_lasterr());
        return cli_seterr("'%s': %s", name, msg);
    }
    uint64_t n = 1;
    for (int d = 0; d < h->ndim; d++)
        if (__builtin_mul_overflow(n, (uint64_t)h->shape[d], &n))
            return cli_seterr("'%s': .npy shape is too large (overflow)", name);
    uint64_t bytes;
    if (__builtin_mul_overflow(n, (uint64_t)h->itemsize, &bytes) || bytes > (uint64_t)INT64_MAX)
        return cli_seterr("'%s': .npy data size is too large (overflow)", name);
    h->nelems = n;
    h->nbytes = bytes;
    return 0;
}

int npy_parse_header(const unsigned char *buf, size_t len, const char *name, npy_header *h)
{
    memset(h, 0, sizeof *h);
    size_t prefix = 0, hlen = 0;
    if (parse_prefix(buf, len, name, &h->version, &prefix, &hlen) < 0) return -1;
    if (len < prefix + hlen) return cli_seterr("'%s': truncated .npy header", name);
    lexer lx = {(const char *)buf + prefix, (const char *)buf + prefix + hlen, name};
    if (parse_dict(&lx, h) < 0) return -1;
    skip_ws(&lx);
    if (lx.p != lx.end) return bad(&lx, "trailing characters after the dict");
    h->data_offset = prefix + hlen;
    return finish_header(h, name);
}

static int read_full(int fd, void *buf, size_t n, uint64_t off, size_t *got)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) break;
        done += (size_t)r;
    }
    *got = done;
    return 0;
}

int npy_read_header(int fd, const char *name, npy_header *h)
{
    unsigned char pre[12];
    size_t got;
    if (read_full(fd, pre, sizeof pre, 0, &got) < 0)
        return cli_seterr("'%s': read failed: %s", name, strerror(errno));
    size_t prefix = 0, hlen = 0;
    int version;
    if (parse_prefix(pre, got, name, &version, &prefix, &hlen) < 0) return -1;
    size_t total = prefix + hlen;
    unsigned char *buf = malloc(total);
    if (!buf) return cli_seterr("'%s': out of memory reading the header", name);
    if (read_full(fd, buf, total, 0, &got) < 0) {
        free(buf);
        return cli_seterr("'%s': read failed: %s", name, strerror(errno));
    }
    int rc = npy_parse_header(buf, got, name, h);
    free(buf);
    if (rc < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        uint64_t have = (uint64_t)st.st_size > h->data_offset ? (uint64_t)st.st_size - h->data_offset : 0;
        if (have < h->nbytes)
            return cli_seterr("'%s': truncated .npy: the header announces %llu data bytes, the file has %llu",
                              name, (unsigned long long)h->nbytes, (unsigned long long)have);
    }
    return 0;
}

int npy_build_header(zc_dtype dtype, size_t itemsize, int ndim, const int64_t *shape, char **out,
                     size_t *len)
{
    char descr[40], shp[ZC_MAX_DIMS * 24 + 8];
    if (npy_descr_format(dtype, itemsize, descr, sizeof descr) < 0) return -1;
    cli_format_shape(shp, sizeof shp, ndim, shape);
    char dict[sizeof shp + 128];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shp);
    if (dl < 0 || (size_t)dl >= sizeof dict) return cli_seterr("npy header too long");
    size_t prefix = 10;
    size_t total = prefix + (size_t)dl + 1;
    total = (total + 63) / 64 * 64;
    if (total - prefix > 65535) {
        prefix = 12;
        total = (prefix + (size_t)dl + 1 + 63) / 64 * 64;
    }
    char *buf = malloc(total);
    if (!buf) return cli_seterr("out of memory");
    size_t hlen = total - prefix;
    memcpy(buf, MAGIC, MAGIC_LEN);
    buf[6] = prefix == 10 ? 1 : 2;
    buf[7] = 0;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)((hlen >> 8) & 0xff);
    if (prefix == 12) {
        buf[10] = (char)((hlen >> 16) & 0xff);
        buf[11] = (char)((hlen >> 24) & 0xff);
    }
    memcpy(buf + prefix, dict, (size_t)dl);
    memset(buf + prefix + dl, ' ', total - prefix - (size_t)dl - 1);
    buf[total - 1] = '\n';
    *out = buf;
    *len = total;
    return 0;
}

/* ------------------------------------------------------------ data */

int npy_needs_swap(const npy_header *h)
{
    if (h->byteorder == '|') return 0;
    return (h->byteorder == '<') != native_little();
}

void npy_byteswap(zc_dtype dtype, size_t itemsize, void *data, size_t n)
{
    size_t unit;
    switch (dtype) {
    case ZC_BYTES: case ZC_RAW: case ZC_BOOL: return;
    case ZC_UNICODE: unit = 4; break;
    case ZC_COMPLEX64: case ZC_COMPLEX128: unit = itemsize / 2; break;
    default: unit = itemsize; break;
    }
    if (unit <= 1) return;
    size_t count = n * (itemsize / unit);
    unsigned char *p = data;
    for (size_t i = 0; i < count; i++, p += unit)
        for (size_t a = 0, b = unit - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

void npy_f_to_c(const void *src, void *dst, int ndim, const int64_t *shape, size_t itemsize)
{
    uint64_t n = 1, fstride[ZC_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        fstride[d] = n;
        n *= (uint64_t)shape[d];
    }
    if (n == 0) return;
    int64_t idx[ZC_MAX_DIMS] = {0};
    uint64_t off = 0; /* element offset in src */
    const unsigned char *s = src;
    unsigned char *o = dst;
    for (uint64_t i = 0; i < n; i++) {
        memcpy(o + i * itemsize, s + off * itemsize, itemsize);
        for (int d = ndim - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) {
                off += fstride[d];
                break;
            }
            off -= fstride[d] * (uint64_t)(shape[d] - 1);
            idx[d] = 0;
        }
    }
}

int npy_load_file(const char *path, npy_header *h, void **data)
{
    *data = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cli_seterr("cannot open '%s': %s", path, strerror(errno));
    if (npy_read_header(fd, path, h) < 0) {
        close(fd);
        return -1;
    }
    if (h->nbytes > SIZE_MAX) {
        close(fd);
        return cli_seterr("'%s': too large to load", path);
    }
    size_t nb = (size_t)h->nbytes;
    void *buf = malloc(nb ? nb : 1);
    if (!buf) {
        close(fd);
        return cli_seterr("'%s': out of memory loading %llu bytes", path, (unsigned long long)h->nbytes);
    }
    size_t got;
    int rc = read_full(fd, buf, nb, h->data_offset, &got);
    int err = errno;
    close(fd);
    if (rc < 0 || got < nb) {
        free(buf);
        if (rc < 0) return cli_seterr("'%s': read failed: %s", path, strerror(err));
        return cli_seterr("'%s': truncated .npy: expected %zu data bytes, read %zu", path, nb, got);
    }
    if (npy_needs_swap(h)) npy_byteswap(h->dtype, h->itemsize, buf, (size_t)h->nelems);
    if (h->fortran && h->ndim > 1) {
        void *c = malloc(nb ? nb : 1);
        if (!c) {
            free(buf);
            return cli_seterr("'%s': out of memory converting Fortran order", path);
        }
        npy_f_to_c(buf, c, h->ndim, h->shape, h->itemsize);
        free(buf);
        buf = c;
    }
    h->fortran = 0;
    h->byteorder = h->itemsize == 1 || h->dtype == ZC_BYTES || h->dtype == ZC_RAW ? '|'
                   : native_little()                                             ? '<'
                                                                                 : '>';
    *data = buf;
    return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int npy_save_file(const char *path, zc_dtype dtype, size_t itemsize, int ndim, const int64_t *shape,
             const void *data, size_t nbytes)
{
    char *hdr;
    size_t hlen;
    if (npy_build_header(dtype, itemsize, ndim, shape, &hdr, &hlen) < 0) return -1;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32);
    if (!tmp) {
        free(hdr);
        return cli_seterr("out of memory");
    }
    snprintf(tmp, plen + 32, "%s.tmp%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int err = errno;
        free(hdr);
        free(tmp);
        return cli_seterr("cannot create '%s': %s", path, strerror(err));
    }
    int rc = write_full(fd, hdr, hlen);
    if (rc == 0) rc = write_full(fd, data, nbytes);
    int err = errno;
    if (close(fd) < 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc == 0 && rename(tmp, path) < 0) {
        rc = -1;
        err = errno;
    }
    if (rc < 0) unlink(tmp);
    free(hdr);
    free(tmp);
    if (rc < 0) return cli_seterr("writing '%s': %s", path, strerror(err));
    return 0;
}
