/* tests/test_core.c — errors, allocation, dtypes, thread pool. */
#include <math.h>
#include <stdatomic.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/pool.h"
#include "harness.h"

TEST(error_tables)
{
    CHECK(!strcmp(zc_strerror(ZC_ECORRUPT), "corrupt data"));
    CHECK(!strcmp(zc_errname(ZC_ENOENT), "ZC_ENOENT"));
    CHECK(!strcmp(zc_strerror(12345), "unknown error"));
    zc__err(ZC_EIO, "reading %s", "x");
    zc__err_wrap(ZC_EIO, "array '%s'", "a");
    CHECK(!strcmp(zc_errmsg(), "array 'a': reading x"));
    char small[8];
    zc_errmsg_r(small, sizeof small);
    CHECK(!strcmp(small, "array '"));
}

/* Saturating sizes: an overflow is SIZE_MAX (projections that overflow are
 * too big), never a wrapped small figure. */
TEST(checked_sizes_saturate)
{
    CHECK(ck_sat_add(1, 2) == 3);
    CHECK(ck_sat_add(SIZE_MAX - 1, 1) == SIZE_MAX);
    CHECK(ck_sat_add(SIZE_MAX - 1, 5) == SIZE_MAX);
    CHECK(ck_sat_add((size_t)1 << 63, (size_t)1 << 63) == SIZE_MAX); /* would wrap to 0 */
    CHECK(ck_sat_mul(6, 7) == 42);
    CHECK(ck_sat_mul(0, SIZE_MAX) == 0 && ck_sat_mul(SIZE_MAX, 0) == 0);
    CHECK(ck_sat_mul((size_t)1 << 62, 4) == SIZE_MAX); /* would wrap to 0 */
    CHECK(ck_sat_mul(SIZE_MAX / 3, 3) == SIZE_MAX / 3 * 3);
    CHECK(ck_sat_mul(SIZE_MAX / 3 + 1, 3) == SIZE_MAX);
}

TEST(alloc_fault_injection)
{
    zc_test_fail_alloc(2, 0);
    void *a = zc__malloc(10);
    void *b = zc__malloc(10);
    void *c = zc__malloc(10);
    CHECK(a && !b && c);
    CHECK(strstr(zc_errmsg(), "out of memory"));
    CHECK(zc_test_fail_alloc(0, 0) == 1);
    zc_test_fail_alloc(1, 1);
    void *d = zc__malloc(1), *e = zc__malloc(1);
    CHECK(!d && !e);
    CHECK(zc_test_fail_alloc(0, 0) == 2);
    zc__free(a);
    zc__free(c);
    CHECK(zc__malloc_array((size_t)-1 / 2, 4) == NULL);
}

TEST(dtype_v2_strings)
{
    dtype_t dt;
    CHECK_OK(dtype_from_v2("<i2", &dt));
    CHECK(dt.type == ZC_INT16 && dt.size == 2 && dt.endian == '<');
    CHECK_OK(dtype_from_v2(">U13", &dt));
    CHECK(dt.type == ZC_UNICODE && dt.size == 52 && dt.endian == '>');
    CHECK_OK(dtype_from_v2("|S7", &dt));
    CHECK(dt.type == ZC_BYTES && dt.size == 7);
    CHECK_OK(dtype_from_v2("|b1", &dt));
    CHECK(dt.type == ZC_BOOL);
    CHECK_ERR(dtype_from_v2("|O", &dt), ZC_EUNSUPPORTED, "|O");
    CHECK_ERR(dtype_from_v2("<M8[ns]", &dt), ZC_EUNSUPPORTED, "datetime");
    CHECK_ERR(dtype_from_v2("<i3", &dt), ZC_EUNSUPPORTED, "<i3");
    CHECK_ERR(dtype_from_v2("<i", &dt), ZC_EFORMAT, NULL);
    char buf[16];
    CHECK_OK(dtype_from_v2(">c16", &dt));
    dtype_to_v2(&dt, buf, sizeof buf);
    CHECK(!strcmp(buf, ">c16"));
}

TEST(dtype_fill_values)
{
    dtype_t dt = {ZC_FLOAT32, 4, '<'};
    float f;
    bool is_null;
    json_t *v = json_string("NaN");
    CHECK_OK(dtype_fill_parse(&dt, v, 2, &f, &is_null));
    CHECK(isnan(f));
    json_decref(v);
    v = json_string("-Infinity");
    CHECK_OK(dtype_fill_parse(&dt, v, 3, &f, &is_null));
    CHECK(isinf(f) && f < 0);
    json_decref(v);
    v = json_string("0x3f800000");
    CHECK_OK(dtype_fill_parse(&dt, v, 3, &f, &is_null));
    CHECK(f == 1.0f);
    json_decref(v);
    dtype_t i8 = {ZC_INT8, 1, '|'};
    int8_t x;
    v = json_integer(300);
    CHECK_ERR(dtype_fill_parse(&i8, v, 2, &x, &is_null), ZC_EFORMAT, "out of range");
    json_decref(v);
    CHECK_OK(dtype_fill_parse(&i8, json_null(), 2, &x, &is_null));
    CHECK(is_null);
    CHECK_ERR(dtype_fill_parse(&i8, json_null(), 3, &x, &is_null), ZC_EFORMAT, NULL);
    dtype_t s = {ZC_BYTES, 4, '|'};
    char sv[4];
    v = json_string("YWJj"); /* "abc" */
    CHECK_OK(dtype_fill_parse(&s, v, 2, sv, &is_null));
    CHECK(!memcmp(sv, "abc\0", 4));
    json_decref(v);
    json_t *back = dtype_fill_json(&s, sv, false, 2);
    CHECK(!strcmp(json_string_value(back), "YWJjAA=="));
    json_decref(back);
}

TEST(dtype_half)
{
    float vals[] = {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        CHECK(dtype_half_to_float(dtype_float_to_half(vals[i])) == vals[i]);
    CHECK(isinf(dtype_half_to_float(dtype_float_to_half(1e6f))));
    CHECK(isnan(dtype_half_to_float(dtype_float_to_half(NAN))));
}

static atomic_int counter;
static atomic_int slot_busy[8];
static int count_task(void *ctx, size_t i, int slot)
{
    (void)ctx;
    CHECK(slot >= 0 && slot < 8);
    CHECK(atomic_fetch_add(&slot_busy[slot], 1) == 0 || ctx);
    atomic_fetch_sub(&slot_busy[slot], 1);
    atomic_fetch_add(&counter, (int)i);
    return 0;
}
static int fail_task(void *ctx, size_t i, int slot)
{
    (void)ctx;
    if (i == 57) return zc__err(ZC_ECORRUPT, "task %zu failed", i);
    return 0;
}
/* Nested calls run inline, each as its own job with slot 0: two outer tasks on
 * different threads both use slot 0 at once, so the inner calls pass a context
 * that turns off count_task's one-thread-per-slot check. */
static int nested_task(void *ctx, size_t i, int slot)
{
    return pool_for(ctx, 10, 0, count_task, ctx);
}

TEST(pool_parallel_for)
{
    pool *p;
    CHECK_OK(pool_create(4, &p));
    atomic_store(&counter, 0);
    CHECK_OK(pool_for(p, 1000, 0, count_task, NULL));
    CHECK(atomic_load(&counter) == 999 * 1000 / 2);
    zc__err_clear();
    CHECK_ERR(pool_for(p, 200, 0, fail_task, NULL), ZC_ECORRUPT, "task 57 failed");
    atomic_store(&counter, 0);
    CHECK_OK(pool_for(p, 8, 0, nested_task, p));
    CHECK(atomic_load(&counter) == 8 * 45);
    pool_free(p);
    CHECK(pool_default() != NULL);
}

#include "core/json.h"
TEST(json_big_unsigned)
{
    const char *doc = "{\"fill_value\": 18446744073709551615, \"s\": \"12345678901234567890\", \"x\": 5}";
    json_error_t err;
    json_t *j = zc_json_load(doc, strlen(doc), 0, &err);
    CHECK(j != NULL);
    dtype_t u64 = {ZC_UINT64, 8, '<'};
    uint64_t v = 0;
    bool is_null;
    CHECK_OK(dtype_fill_parse(&u64, json_object_get(j, "fill_value"), 2, &v, &is_null));
    CHECK(v == UINT64_MAX);
    CHECK(!strcmp(json_string_value(json_object_get(j, "s")), "12345678901234567890")); /* strings untouched */
    json_t *back = dtype_fill_json(&u64, &v, false, 2);
    json_object_set_new(j, "fill_value", back);
    char *text = zc_json_dump(j, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK(strstr(text, "\"fill_value\":18446744073709551615") != NULL);
    free(text);
    json_decref(j);
    dtype_t i64 = {ZC_INT64, 8, '<'};
    j = zc_json_load("18446744073709551615", 20, JSON_DECODE_ANY, &err);
    CHECK_ERR(dtype_fill_parse(&i64, j, 2, &v, &is_null), ZC_EFORMAT, NULL);
    json_decref(j);
}
