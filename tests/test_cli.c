/* tests/test_cli.c — unit tests of the zcube command's helpers: region
 * parsing, .npy headers and data, the budgeted box walk, option and value
 * parsing. End-to-end command tests are the scripts in tests/cli/. */
#define _GNU_SOURCE /* memmem */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "boxes.h"
#include "cli_util.h"
#include "harness.h"
#include "npy.h"
#include "region.h"

#define ERR_HAS(needle) (strstr(cli_lasterr(), (needle)) != NULL)

/* ------------------------------------------------------------ regions */

TEST(region_basic)
{
    int64_t shape[3] = {20, 30, 40};
    region_t r;
    CHECK(region_parse("0:10,:,5", 3, shape, &r) == 0);
    CHECK(r.range[0].start == 0 && r.range[0].stop == 10 && r.range[0].step == 1);
    CHECK(r.range[1].start == 0 && r.range[1].stop == 30 && r.count[1] == 30);
    CHECK(r.range[2].start == 5 && r.range[2].stop == 6 && r.dropped[2]);
    CHECK(r.out_ndim == 2 && r.out_shape[0] == 10 && r.out_shape[1] == 30);
    CHECK(region_nelems(&r) == 300);

    CHECK(region_parse(NULL, 3, shape, &r) == 0);
    CHECK(r.out_ndim == 3 && region_nelems(&r) == 20 * 30 * 40);
    CHECK(region_parse("  ", 3, shape, &r) == 0 && r.out_ndim == 3);
    CHECK(region_parse("[1:3, 2]", 3, shape, &r) == 0);
    CHECK(r.out_ndim == 2 && r.out_shape[0] == 2 && r.out_shape[1] == 40 && r.range[1].start == 2);
}

TEST(region_steps_negative_clamp)
{
    int64_t shape[2] = {11, 10};
    region_t r;
    CHECK(region_parse("::2,3:-1", 2, shape, &r) == 0);
    CHECK(r.count[0] == 6 && r.range[0].start == 0 && r.range[0].stop == 11 && r.range[0].step == 2);
    CHECK(r.count[1] == 6 && r.range[1].start == 3 && r.range[1].stop == 9);
    CHECK(region_parse("1:10:3", 2, shape, &r) == 0);
    CHECK(r.count[0] == 3 && r.range[0].stop == 8); /* 1, 4, 7 */
    CHECK(region_parse("-1,-10", 2, shape, &r) == 0);
    CHECK(r.range[0].start == 10 && r.range[1].start == 0 && r.out_ndim == 0);
    CHECK(region_parse("5:100", 2, shape, &r) == 0 && r.count[0] == 6 && r.range[0].stop == 11);
    CHECK(region_parse("-100:3", 2, shape, &r) == 0 && r.range[0].start == 0 && r.count[0] == 3);
    CHECK(region_parse("8:2", 2, shape, &r) == 0 && r.count[0] == 0 && r.out_shape[0] == 0);
    CHECK(r.range[0].start == r.range[0].stop);
    CHECK(region_parse("-3:", 2, shape, &r) == 0 && r.range[0].start == 8 && r.count[0] == 3);
    CHECK(region_parse(":: 4", 2, shape, &r) == 0 && r.count[0] == 3);
}

TEST(region_ellipsis_and_fewer)
{
    int64_t shape[4] = {2, 3, 4, 5};
    region_t r;
    CHECK(region_parse("...,1", 4, shape, &r) == 0);
    CHECK(r.dropped[3] && !r.dropped[0] && r.out_ndim == 3 && r.out_shape[2] == 4);
    CHECK(region_parse("1,...", 4, shape, &r) == 0);
    CHECK(r.dropped[0] && r.out_ndim == 3 && r.out_shape[0] == 3);
    CHECK(region_parse("0,...,1:3", 4, shape, &r) == 0);
    CHECK(r.out_ndim == 3 && r.out_shape[0] == 3 && r.out_shape[1] == 4 && r.out_shape[2] == 2);
    CHECK(region_parse("...", 4, shape, &r) == 0 && r.out_ndim == 4);
    CHECK(region_parse("1", 4, shape, &r) == 0 && r.out_ndim == 3 && r.out_shape[2] == 5);
    CHECK(region_parse("1,", 4, shape, &r) == 0 && r.out_ndim == 3);
    CHECK(region_parse("0,1,2,3,...", 4, shape, &r) == 0 && r.out_ndim == 0);
    int64_t none[1] = {0};
    CHECK(region_parse("...", 0, none, &r) == 0 && r.out_ndim == 0 && region_nelems(&r) == 1);
    CHECK(region_parse("()", 0, none, &r) == 0);
}

TEST(region_errors)
{
    int64_t shape[3] = {20, 30, 40};
    region_t r;
    CHECK(region_parse("0:10:0", 3, shape, &r) < 0 && ERR_HAS("step cannot be zero"));
    CHECK(region_parse(":,::-1", 3, shape, &r) < 0 && ERR_HAS("negative slice steps"));
    CHECK(ERR_HAS("dimension 1"));
    CHECK(region_parse("20", 3, shape, &r) < 0 && ERR_HAS("index 20 is out of bounds for dimension 0 with size 20"));
    CHECK(region_parse(":,:,-41", 3, shape, &r) < 0 && ERR_HAS("dimension 2"));
    CHECK(region_parse("1,2,3,4", 3, shape, &r) < 0 && ERR_HAS("4 entries for a 3-dimensional array"));
    CHECK(region_parse("...,1,...", 3, shape, &r) < 0 && ERR_HAS("only one '...'"));
    CHECK(region_parse("a:b", 3, shape, &r) < 0 && ERR_HAS("'a' is not an integer"));
    CHECK(region_parse("1:2:3:4", 3, shape, &r) < 0 && ERR_HAS("more than two ':'"));
    CHECK(region_parse(",5", 3, shape, &r) < 0 && ERR_HAS("empty entry"));
    CHECK(region_parse("1,,2", 3, shape, &r) < 0 && ERR_HAS("empty entry"));
    CHECK(region_parse("99999999999999999999", 3, shape, &r) < 0 && ERR_HAS("out of range"));
    CHECK(region_parse("1.5", 3, shape, &r) < 0 && ERR_HAS("not an integer"));
    CHECK(region_parse("-", 3, shape, &r) < 0 && ERR_HAS("not an integer"));
    int64_t none[1] = {0};
    CHECK(region_parse("0", 0, none, &r) < 0 && ERR_HAS("0-dimensional"));
}

/* ------------------------------------------------------------ npy */

TEST(npy_descr)
{
    zc_dtype t;
    size_t sz;
    char bo;
    CHECK(npy_descr_parse("<U5", &t, &sz, &bo) == 0 && t == ZC_UNICODE && sz == 20 && bo == '<');
    CHECK(npy_descr_parse("|S7", &t, &sz, &bo) == 0 && t == ZC_BYTES && sz == 7 && bo == '|');
    CHECK(npy_descr_parse("|b1", &t, &sz, &bo) == 0 && t == ZC_BOOL && sz == 1);
    CHECK(npy_descr_parse("<c16", &t, &sz, &bo) == 0 && t == ZC_COMPLEX128 && sz == 16);
    CHECK(npy_descr_parse("<f2", &t, &sz, &bo) == 0 && t == ZC_FLOAT16 && sz == 2);
    CHECK(npy_descr_parse(">i4", &t, &sz, &bo) == 0 && t == ZC_INT32 && bo == '>');
    CHECK(npy_descr_parse("|u1", &t, &sz, &bo) == 0 && t == ZC_UINT8 && bo == '|');
    CHECK(npy_descr_parse("<u8", &t, &sz, &bo) == 0 && t == ZC_UINT64);
    CHECK(npy_descr_parse("|V8", &t, &sz, &bo) == 0 && t == ZC_RAW && sz == 8);
    CHECK(npy_descr_parse("<c8", &t, &sz, &bo) == 0 && t == ZC_COMPLEX64);
    CHECK(npy_descr_parse("|O", &t, &sz, &bo) < 0 && ERR_HAS("Python objects"));
    CHECK(npy_descr_parse("<M8[ns]", &t, &sz, &bo) < 0 && ERR_HAS("datetime"));
    CHECK(npy_descr_parse("<f16", &t, &sz, &bo) < 0 && ERR_HAS("long double"));
    CHECK(npy_descr_parse("<i3", &t, &sz, &bo) < 0 && ERR_HAS("'<i3'"));
    CHECK(npy_descr_parse("<S0", &t, &sz, &bo) < 0);

    char buf[40];
    CHECK(npy_descr_format(ZC_UNICODE, 20, buf, sizeof buf) == 0 && !strcmp(buf + 1, "U5"));
    CHECK(npy_descr_format(ZC_BYTES, 7, buf, sizeof buf) == 0 && !strcmp(buf, "|S7"));
    CHECK(npy_descr_format(ZC_BOOL, 1, buf, sizeof buf) == 0 && !strcmp(buf, "|b1"));
    CHECK(npy_descr_format(ZC_COMPLEX128, 16, buf, sizeof buf) == 0 && !strcmp(buf + 1, "c16"));
    CHECK(npy_descr_format(ZC_FLOAT16, 2, buf, sizeof buf) == 0 && !strcmp(buf + 1, "f2"));
    CHECK(npy_descr_format(ZC_INT8, 1, buf, sizeof buf) == 0 && !strcmp(buf, "|i1"));
    npy_dtype_label(ZC_UNICODE, 20, buf, sizeof buf);
    CHECK(!strcmp(buf, "U5"));
    npy_dtype_label(ZC_FLOAT32, 4, buf, sizeof buf);
    CHECK(!strcmp(buf, "float32"));
}

/* A raw header: prefix for `version`, then `dict` padded to 64 bytes. */
static size_t make_header(unsigned char *out, int version, const char *dict)
{
    size_t prefix = version == 1 ? 10 : 12;
    size_t dl = strlen(dict);
    size_t total = (prefix + dl + 1 + 63) / 64 * 64;
    size_t hlen = total - prefix;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)version;
    out[7] = 0;
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    if (prefix == 12) out[10] = out[11] = 0;
    memcpy(out + prefix, dict, dl);
    memset(out + prefix + dl, ' ', hlen - dl - 1);
    out[total - 1] = '\n';
    return total;
}

TEST(npy_header_roundtrip)
{
    int64_t shape[3] = {3, 4, 5};
    char *hdr;
    size_t len;
    CHECK(npy_build_header(ZC_FLOAT32, 4, 3, shape, &hdr, &len) == 0);
    CHECK(len % 64 == 0 && hdr[6] == 1 && hdr[len - 1] == '\n');
    npy_header h;
    CHECK(npy_parse_header((unsigned char *)hdr, len, "x.npy", &h) == 0);
    CHECK(h.dtype == ZC_FLOAT32 && h.ndim == 3 && h.shape[2] == 5 && !h.fortran);
    CHECK(h.nelems == 60 && h.nbytes == 240 && h.data_offset == len);
    free(hdr);

    int64_t one[1] = {7};
    CHECK(npy_build_header(ZC_UNICODE, 12, 1, one, &hdr, &len) == 0);
    CHECK(memmem(hdr, len, "'shape': (7,)", 13) && memmem(hdr, len, "U3'", 3));
    CHECK(npy_parse_header((unsigned char *)hdr, len, "x.npy", &h) == 0 && h.itemsize == 12);
    free(hdr);
    CHECK(npy_build_header(ZC_INT64, 8, 0, one, &hdr, &len) == 0);
    CHECK(memmem(hdr, len, "'shape': ()", 11));
    CHECK(npy_parse_header((unsigned char *)hdr, len, "x.npy", &h) == 0 && h.ndim == 0 && h.nelems == 1);
    free(hdr);
}

TEST(npy_header_versions_and_forms)
{
    unsigned char buf[512];
    npy_header h;
    size_t n = make_header(buf, 2, "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }");
    CHECK(npy_parse_header(buf, n, "v2.npy", &h) == 0);
    CHECK(h.version == 2 && h.fortran && h.byteorder == '>' && h.nbytes == 12 && h.data_offset == n);
    n = make_header(buf, 3, "{\"descr\": \"<U2\", \"shape\": (4L,), \"fortran_order\": False}");
    CHECK(npy_parse_header(buf, n, "v3.npy", &h) == 0);
    CHECK(h.version == 3 && h.dtype == ZC_UNICODE && h.shape[0] == 4 && h.nbytes == 32);
    n = make_header(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (0, 5), }");
    CHECK(npy_parse_header(buf, n, "e.npy", &h) == 0 && h.nelems == 0 && h.nbytes == 0);
}

TEST(npy_header_errors)
{
    unsigned char buf[512];
    npy_header h;
    size_t n = make_header(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }");
    CHECK(npy_parse_header(buf, 5, "t.npy", &h) < 0 && ERR_HAS("not a .npy file"));
    CHECK(npy_parse_header(buf, n - 10, "t.npy", &h) < 0 && ERR_HAS("truncated .npy header"));
    buf[0] = 'X';
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("'t.npy': not a .npy file"));
    n = make_header(buf, 4, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }");
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("version 4.0"));
    n = make_header(buf, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }");
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("structured"));
    n = make_header(buf, 1, "{'descr': '<f4', 'shape': (2,), }");
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("missing"));
    n = make_header(buf, 1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }");
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("fortran_order"));
    n = make_header(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }");
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("non-negative"));
    n = make_header(buf, 1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }");
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("'t.npy': dtype '|O' (Python objects)"));
    n = make_header(buf, 1, "{'descr': '<f8', 'fortran_order': False, "
                            "'shape': (4294967296, 4294967296, 4294967296), }");
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("overflow"));
    n = make_header(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}");
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("unexpected key 'x'"));
    n = make_header(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) } junk");
    CHECK(npy_parse_header(buf, n, "t.npy", &h) < 0 && ERR_HAS("trailing"));
}

static char *tmp_path(const char *leaf)
{
    static char path[512];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/zcube_test_cli_%ld_%s", dir && *dir ? dir : "/tmp", (long)getpid(), leaf);
    return path;
}

static void write_file(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fwrite(a, 1, na, f);
    if (nb) fwrite(b, 1, nb, f);
    fclose(f);
}

TEST(npy_load_fortran_bigendian)
{
    /* 2x3 int16, Fortran order, big endian: C-order values 0 1 2 / 10 11 12. */
    unsigned char hdr[256];
    size_t n = make_header(hdr, 1, "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }");
    const int16_t c_order[6] = {0, 1, 2, 10, 11, 12};
    unsigned char data[12];
    const int f_index[6] = {0, 3, 1, 4, 2, 5}; /* F position k holds C element f_index[k] */
    for (int k = 0; k < 6; k++) {
        uint16_t v = (uint16_t)c_order[f_index[k]];
        data[2 * k] = (unsigned char)(v >> 8);
        data[2 * k + 1] = (unsigned char)(v & 0xff);
    }
    char *path = tmp_path("f.npy");
    write_file(path, hdr, n, data, sizeof data);
    npy_header h;
    void *out = NULL;
    CHECK(npy_load_file(path, &h, &out) == 0);
    if (out) CHECK(!memcmp(out, c_order, sizeof c_order));
    CHECK(h.ndim == 2 && h.dtype == ZC_INT16 && !h.fortran);
    free(out);

    /* Truncated data: one byte short. */
    write_file(path, hdr, n, data, sizeof data - 1);
    CHECK(npy_load_file(path, &h, &out) < 0 && ERR_HAS("truncated .npy"));
    CHECK(ERR_HAS("12 data bytes") && ERR_HAS("has 11"));
    int fd = open(path, O_RDONLY);
    CHECK(npy_read_header(fd, path, &h) < 0 && ERR_HAS("truncated"));
    close(fd);
    unlink(path);
    CHECK(npy_load_file(path, &h, &out) < 0 && ERR_HAS("cannot open"));
}

TEST(npy_save_load_roundtrip)
{
    int64_t shape[2] = {3, 2};
    const double v[6] = {1.5, -2, 3e10, 0, -0.25, 7};
    char *path = tmp_path("rt.npy");
    CHECK(npy_save_file(path, ZC_FLOAT64, 8, 2, shape, v, sizeof v) == 0);
    npy_header h;
    void *out = NULL;
    CHECK(npy_load_file(path, &h, &out) == 0);
    CHECK(out && h.ndim == 2 && h.shape[0] == 3 && h.dtype == ZC_FLOAT64 && !memcmp(out, v, sizeof v));
    free(out);
    unlink(path);
    CHECK(npy_save_file("/nonexistent-dir/x.npy", ZC_FLOAT64, 8, 2, shape, v, sizeof v) < 0 &&
          ERR_HAS("cannot create '/nonexistent-dir/x.npy'"));
}

TEST(npy_f_to_c_3d)
{
    int64_t shape[3] = {2, 3, 4};
    int32_t f[24], c[24];
    /* Element (i,j,k) has value 100i+10j+k; F offset i + 2j + 6k. */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) f[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
    npy_f_to_c(f, c, 3, shape, 4);
    int ok = 1;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) ok &= c[12 * i + 4 * j + k] == 100 * i + 10 * j + k;
    CHECK(ok);
}

TEST(npy_byteswap_units)
{
    uint32_t u[2] = {0x11223344u, 0xaabbccddu};
    npy_byteswap(ZC_UNICODE, 8, u, 1);
    CHECK(u[0] == 0x44332211u && u[1] == 0xddccbbaau);
    uint32_t c[2] = {0x01020304u, 0x05060708u};
    npy_byteswap(ZC_COMPLEX64, 8, c, 1);
    CHECK(c[0] == 0x04030201u && c[1] == 0x08070605u);
    unsigned char s[3] = {1, 2, 3};
    npy_byteswap(ZC_BYTES, 3, s, 1);
    CHECK(s[0] == 1 && s[2] == 3);
}

/* ------------------------------------------------------------ boxes */

typedef struct {
    unsigned char *seen;
    uint64_t total;
    uint64_t box_elems;
    uint64_t next_box_off;
    int bad;
} run_ctx;

static int mark_run(uint64_t sel_off, uint64_t box_off, uint64_t n, void *vctx)
{
    run_ctx *c = vctx;
    if (box_off != c->next_box_off || sel_off + n > c->total) c->bad = 1;
    c->next_box_off = box_off + n;
    for (uint64_t i = 0; i < n && sel_off + i < c->total; i++) c->seen[sel_off + i]++;
    return 0;
}

/* Walk a selection and check: every element exactly once, boxes within the
 * budget bound, boxes aligned to the unit grid when a unit fits. */
static void check_walk(int ndim, const int64_t *shape, const zc_range *sel_in, const int64_t *unit,
                       size_t itemsize, uint64_t budget, int expect_aligned)
{
    zc_range sel[ZC_MAX_DIMS] = {{0}};
    int64_t count[ZC_MAX_DIMS] = {0};
    uint64_t total = 1;
    for (int d = 0; d < ndim; d++) {
        sel[d] = sel_in ? sel_in[d] : (zc_range){0, shape[d], 1};
        count[d] = (sel[d].stop - sel[d].start + sel[d].step - 1) / sel[d].step;
        total *= (uint64_t)count[d];
    }
    boxes_t b;
    boxes_init(&b, ndim, sel, count, unit, itemsize, budget);
    run_ctx c = {calloc(total ? total : 1, 1), total, 0, 0, 0};
    uint64_t covered = 0;
    while (boxes_next(&b)) {
        uint64_t ne = boxes_nelems(&b);
        if (ne * itemsize > b.max_bytes) c.bad = 1;
        if (ne * itemsize > (budget < itemsize ? itemsize : budget)) c.bad = 1;
        zc_range r[ZC_MAX_DIMS];
        boxes_ranges(&b, sel, r);
        for (int d = 0; d < ndim && expect_aligned && unit; d++) {
            /* A box's first element starts a unit (or the selection); the
             * element after its last is in a later unit than the last one. */
            int64_t first = r[d].start, last = r[d].stop - 1;
            if (b.pos[d] > 0 && (first - 1 * sel[d].step) / unit[d] == first / unit[d]) c.bad = 1;
            if (b.end[d] < count[d] && (last + sel[d].step) / unit[d] == last / unit[d]) c.bad = 1;
        }
        c.next_box_off = 0;
        boxes_runs(&b, mark_run, &c);
        if (c.next_box_off != ne) c.bad = 1;
        covered += ne;
    }
    if (c.bad) fprintf(stderr, "walk ndim %d itemsize %zu budget %llu: bad\n", ndim, itemsize, (unsigned long long)budget);
    CHECK(!c.bad);
    CHECK(covered == total);
    int once = 1;
    for (uint64_t i = 0; i < total; i++) once &= c.seen[i] == 1;
    CHECK(once);
    free(c.seen);
}

TEST(boxes_cover_exactly_once)
{
    int64_t s3[3] = {7, 9, 11}, u3[3] = {3, 4, 5};
    check_walk(3, s3, NULL, u3, 4, 1u << 20, 1);           /* whole thing in one box */
    check_walk(3, s3, NULL, u3, 4, 4 * 3 * 4 * 5, 1);      /* one unit per box */
    check_walk(3, s3, NULL, u3, 4, 4 * 3 * 9 * 11 + 7, 1); /* rows of units */
    check_walk(3, s3, NULL, u3, 4, 1000, 1);
    check_walk(3, s3, NULL, u3, 4, 17, 0);                 /* unit larger than budget: cut */
    check_walk(3, s3, NULL, u3, 4, 1, 0);                  /* below one element */
    check_walk(3, s3, NULL, NULL, 4, 64, 0);               /* contiguous mode */
    zc_range sel[3] = {{1, 7, 2}, {0, 9, 1}, {2, 11, 3}};
    check_walk(3, s3, sel, u3, 4, 4 * 3 * 9 * 11, 1);
    check_walk(3, s3, sel, u3, 8, 40, 0);
    check_walk(3, s3, sel, u3, 2, 2 * 2 * 4 * 2, 1); /* exactly one unit */
    check_walk(3, s3, sel, u3, 2, 2 * 2 * 4, 0);
    int64_t s1[1] = {1000}, u1[1] = {64};
    check_walk(1, s1, NULL, u1, 8, 8 * 200, 1);
    zc_range sel1[1] = {{5, 1000, 7}};
    check_walk(1, s1, sel1, u1, 8, 8 * 20, 1);
    int64_t s0[1] = {0};
    check_walk(0, s0, NULL, NULL, 8, 8, 0);
}

TEST(boxes_contiguous_sequential)
{
    int64_t shape[3] = {5, 6, 7};
    zc_range sel[3] = {{0, 5, 1}, {0, 6, 1}, {0, 7, 1}};
    int64_t count[3] = {5, 6, 7};
    boxes_t b;
    boxes_init(&b, 3, sel, count, NULL, 4, 4 * 7 * 2);
    uint64_t expect = 0;
    int ok = 1, n = 0;
    while (boxes_next(&b)) {
        /* contiguous: the box's C-order offset continues where the last one ended */
        uint64_t off = ((uint64_t)b.pos[0] * 6 + (uint64_t)b.pos[1]) * 7 + (uint64_t)b.pos[2];
        ok &= off == expect;
        expect += boxes_nelems(&b);
        n++;
    }
    CHECK(ok && expect == 210 && n == 15);
    (void)shape;
    /* Empty selection: no boxes. */
    int64_t zero[3] = {5, 0, 7};
    boxes_init(&b, 3, sel, zero, NULL, 4, 1000);
    CHECK(!boxes_next(&b));
}

/* ------------------------------------------------------------ options, values */

TEST(cli_parse_options)
{
    const char *region = NULL, *out = NULL;
    int json = 0;
    cli_opt opts[] = {{"region", 'r', &region, NULL}, {"output", 'o', &out, NULL}, {"json", 0, NULL, &json},
                      {NULL, 0, NULL, NULL}};
    const char *pos[4];
    int npos;
    char *a1[] = {"get", "p", "--region", "-1:,5", "-o", "x.npy", "--json", "-", NULL};
    CHECK(cli_parse(8, a1, opts, pos, 4, &npos) == 0);
    CHECK(npos == 2 && !strcmp(pos[0], "p") && !strcmp(pos[1], "-"));
    CHECK(!strcmp(region, "-1:,5") && !strcmp(out, "x.npy") && json);
    char *a2[] = {"get", "--region=::2", "-oy.npy", "--", "--odd", NULL};
    CHECK(cli_parse(5, a2, opts, pos, 4, &npos) == 0);
    CHECK(!strcmp(region, "::2") && !strcmp(out, "y.npy") && npos == 1 && !strcmp(pos[0], "--odd"));
    char *a3[] = {"get", "--bogus", NULL};
    CHECK(cli_parse(2, a3, opts, pos, 4, &npos) < 0 && ERR_HAS("unknown option '--bogus'"));
    char *a4[] = {"get", "--region", NULL};
    CHECK(cli_parse(2, a4, opts, pos, 4, &npos) < 0 && ERR_HAS("'--region' needs a value"));
    char *a5[] = {"get", "--json=1", NULL};
    CHECK(cli_parse(2, a5, opts, pos, 4, &npos) < 0 && ERR_HAS("takes no value"));
    char *a6[] = {"get", "a", "b", NULL};
    CHECK(cli_parse(3, a6, opts, pos, 1, &npos) < 0 && ERR_HAS("unexpected argument 'b'"));
    char *a7[] = {"get", "a", "--help", NULL};
    CHECK(cli_parse(3, a7, opts, pos, 4, &npos) == CLI_HELP);
}

TEST(cli_parse_values)
{
    uint64_t sz;
    CHECK(cli_parse_size("256MB", "--max-mem", &sz) == 0 && sz == 256000000u);
    CHECK(cli_parse_size("1GiB", "--max-mem", &sz) == 0 && sz == 1073741824u);
    CHECK(cli_parse_size("12", "--max-mem", &sz) == 0 && sz == 12);
    CHECK(cli_parse_size("1.5k", "--max-mem", &sz) == 0 && sz == 1500);
    CHECK(cli_parse_size("abc", "--max-mem", &sz) < 0 && ERR_HAS("bad --max-mem 'abc'"));
    CHECK(cli_parse_size("12XB", "--max-mem", &sz) < 0 && ERR_HAS("unknown unit"));
    int64_t d[ZC_MAX_DIMS];
    int n;
    CHECK(cli_parse_dims("100,200", "--shape", d, ZC_MAX_DIMS, &n) == 0 && n == 2 && d[1] == 200);
    CHECK(cli_parse_dims("10x20x3", "--shape", d, ZC_MAX_DIMS, &n) == 0 && n == 3 && d[2] == 3);
    CHECK(cli_parse_dims("", "--shape", d, ZC_MAX_DIMS, &n) == 0 && n == 0);
    CHECK(cli_parse_dims("10,0", "--chunks", d, ZC_MAX_DIMS, &n) < 0 && ERR_HAS("must be positive"));
    CHECK(cli_parse_dims("10,a", "--chunks", d, ZC_MAX_DIMS, &n) < 0 && ERR_HAS("'a' is not an integer"));
    CHECK(cli_parse_dims("10,,3", "--chunks", d, ZC_MAX_DIMS, &n) < 0 && ERR_HAS("empty entry"));
    CHECK(cli_parse_dims("1,2,3", "--chunks", d, 2, &n) < 0 && ERR_HAS("more than 2"));
    int64_t v;
    CHECK(cli_parse_i64(" -42 ", &v) == 0 && v == -42);
    CHECK(cli_parse_i64("4x", &v) < 0 && cli_parse_i64("", &v) < 0);
    int t;
    CHECK(cli_parse_threads("4", &t) == 0 && t == 4);
    CHECK(cli_parse_threads("-1", &t) < 0);
    char buf[64];
    int64_t shp[2] = {3, 4};
    cli_format_shape(buf, sizeof buf, 2, shp);
    CHECK(!strcmp(buf, "(3, 4)"));
    cli_format_shape(buf, sizeof buf, 1, shp);
    CHECK(!strcmp(buf, "(3,)"));
    cli_format_bytes(buf, sizeof buf, 1536);
    CHECK(!strcmp(buf, "1.5 KiB"));
}
