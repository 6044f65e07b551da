/* tests/test_zarr_fixtures.c — every zarrita fixture array (v2 and v3, written
 * by zarr-python) reads exactly as expected.json says, or is refused with a
 * clear error when its dtype is not supported. */
#include <jansson.h>
#include <math.h>

#include "core/dtype.h"
#include "harness.h"

static double num(const json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strcmp(s, "NaN")) return NAN;
        if (!strcmp(s, "Infinity")) return INFINITY;
        if (!strcmp(s, "-Infinity")) return -INFINITY;
        return strtod(s, NULL);
    }
    if (json_is_boolean(v)) return json_is_true(v);
    return json_number_value(v);
}

static bool same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* Element i of the buffer as a double (integers here fit), or compare strings. */
static bool check_elem(const zc_zarr_info_t *info, const unsigned char *p, const json_t *want)
{
    switch (info->dtype) {
    case ZC_BOOL: return p[0] == (json_is_true(want) ? 1 : 0);
    case ZC_INT8: { int8_t x; memcpy(&x, p, 1); return x == num(want); }
    case ZC_INT16: { int16_t x; memcpy(&x, p, 2); return x == num(want); }
    case ZC_INT32: { int32_t x; memcpy(&x, p, 4); return x == num(want); }
    case ZC_INT64: { int64_t x; memcpy(&x, p, 8); return x == strtoll(json_string_value(want) ? json_string_value(want) : "0", NULL, 10) || (double)x == num(want); }
    case ZC_UINT8: return p[0] == num(want);
    case ZC_UINT16: { uint16_t x; memcpy(&x, p, 2); return x == num(want); }
    case ZC_UINT32: { uint32_t x; memcpy(&x, p, 4); return x == num(want); }
    case ZC_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return same(dtype_half_to_float(h), num(want)); }
    case ZC_FLOAT32: { float f; memcpy(&f, p, 4); return same(f, num(want)); }
    case ZC_FLOAT64: { double f; memcpy(&f, p, 8); return same(f, num(want)); }
    case ZC_BYTES: {
        const char *s = json_string_value(want);
        size_t n = strlen(s);
        return n <= info->itemsize && !memcmp(p, s, n) && (n == info->itemsize || p[n] == 0);
    }
    case ZC_UNICODE: {
        const char *s = json_string_value(want); /* fixtures are ASCII */
        size_t n = strlen(s);
        for (size_t k = 0; k < info->itemsize / 4; k++) {
            uint32_t c;
            memcpy(&c, p + 4 * k, 4);
            if (c != (k < n ? (uint32_t)(unsigned char)s[k] : 0)) return false;
        }
        return true;
    }
    default: return false;
    }
}

static void check_fixture_set(const char *version)
{
    char path[512];
    snprintf(path, sizeof path, "%s/zarrita/%s/expected.json", ZC_TEST_DATA, version);
    json_error_t jerr;
    json_t *expected = json_load_file(path, 0, &jerr);
    CHECK(expected != NULL);
    if (!expected) return;
    snprintf(path, sizeof path, "%s/zarrita/%s/data.zarr", ZC_TEST_DATA, version);
    zc_store *st;
    CHECK_OK(zc_store_open(path, ZC_STORE_READONLY, &st));
    const char *name;
    json_t *e;
    int ok = 0, refused = 0;
    json_object_foreach(expected, name, e) {
        const char *dt = json_string_value(json_object_get(e, "dtype"));
        zc_zarr *a = NULL;
        int rc = zc_zarr_open(st, name, &a);
        if (!strcmp(dt, "v2:object") || !strcmp(dt, "string")) {
            if (rc != ZC_EUNSUPPORTED || !strstr(zc_errmsg(), "not supported"))
                fprintf(stderr, "%s: expected a clear refusal, got %s: %s\n", name, zc_errname(rc), zc_errmsg());
            CHECK(rc == ZC_EUNSUPPORTED);
            CHECK(strstr(zc_errmsg(), name) != NULL); /* names the array */
            zc_zarr_close(a);
            refused++;
            continue;
        }
        if (rc) {
            fprintf(stderr, "%s: open failed: %s\n", name, zc_errmsg());
            CHECK(rc == 0);
            continue;
        }
        zc_zarr_info_t info;
        CHECK_OK(zc_zarr_info(a, &info));
        json_t *shape = json_object_get(e, "shape");
        CHECK((size_t)info.ndim == json_array_size(shape));
        size_t nel = 1;
        for (int d = 0; d < info.ndim; d++) {
            CHECK(info.shape[d] == json_integer_value(json_array_get(shape, (size_t)d)));
            nel *= (size_t)info.shape[d];
        }
        size_t nbytes = nel * info.itemsize;
        unsigned char *buf = malloc(nbytes + 1);
        rc = zc_zarr_read(a, NULL, buf, nbytes);
        if (rc) fprintf(stderr, "%s: read failed: %s\n", name, zc_errmsg());
        CHECK(rc == 0);
        json_t *data = json_object_get(e, "data_c_order");
        CHECK(json_array_size(data) == nel);
        int bad = 0;
        for (size_t i = 0; rc == 0 && i < nel; i++)
            if (!check_elem(&info, buf + i * info.itemsize, json_array_get(data, i))) bad++;
        if (bad) fprintf(stderr, "%s: %d of %zu elements differ\n", name, bad, nel);
        CHECK(bad == 0);
        if (!bad && !rc) ok++;
        free(buf);
        zc_zarr_close(a);
    }
    printf("%s: %d arrays read exactly, %d refused as unsupported\n", version, ok, refused);
    zc_store_close(st);
    json_decref(expected);
}

TEST(zarrita_v2_fixtures) { check_fixture_set("v2"); }
TEST(zarrita_v3_fixtures) { check_fixture_set("v3"); }

static int count_node(const char *path, zc_node_kind kind, int fmt, void *ctx)
{
    int *n = ctx;
    n[kind]++;
    (void)path;
    (void)fmt;
    return 0;
}

TEST(zarrita_group_walk)
{
    char path[512];
    zc_store *st;
    int n[3] = {0};
    snprintf(path, sizeof path, "%s/zarrita/v2/data.zarr", ZC_TEST_DATA);
    CHECK_OK(zc_store_open(path, ZC_STORE_READONLY, &st));
    CHECK_OK(zc_group_walk(st, "", count_node, n)); /* consolidated .zmetadata */
    CHECK(n[ZC_NODE_ARRAY] == 32);
    CHECK(n[ZC_NODE_GROUP] >= 2);
    zc_store_close(st);
    snprintf(path, sizeof path, "%s/zarrita/v3/data.zarr", ZC_TEST_DATA);
    CHECK_OK(zc_store_open(path, ZC_STORE_READONLY, &st));
    memset(n, 0, sizeof n);
    CHECK_OK(zc_group_walk(st, "", count_node, n)); /* listing */
    CHECK(n[ZC_NODE_ARRAY] == 45);
    CHECK(n[ZC_NODE_GROUP] >= 1);
    zc_store_close(st);
}
