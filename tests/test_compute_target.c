/* tests/test_compute_target.c — zc_plan_create_advanced: a target created
 * with the caller's options (sharded v3, fill value, attributes, dimension
 * names) holds the computed values and that metadata; options that do not
 * describe the computed array (chunks that are not its write unit) are
 * refused naming the operation; create NULL is zc_plan_create. */
#include <string.h>

#include "harness.h"

static zc_array *ramp(void)
{
    static double v[24 * 10];
    for (int i = 0; i < 240; i++) v[i] = i * 0.5;
    zc_array *a;
    if (zc_asarray(v, ZC_FLOAT64, 2, (int64_t[]){24, 10}, (int64_t[]){5, 10}, &a) < 0) return NULL;
    return a;
}

TEST(target_created_with_options)
{
    zc_array *a = ramp(), *r;
    CHECK(a != NULL);
    CHECK_OK(zc_rechunk(a, (int64_t[]){12, 10}, &r)); /* the write unit: a shard of 12 x 10 */
    zc_store *st;
    CHECK_OK(zc_store_open("memory://target-opts", ZC_STORE_CREATE, &st));
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 2;
    o.shape[0] = 24, o.shape[1] = 10;
    o.chunks[0] = 4, o.chunks[1] = 5;
    o.shards[0] = 12, o.shards[1] = 10;
    o.dtype = ZC_FLOAT64;
    o.codec = "zstd:2,crc32c";
    o.fill_value = "7.5";
    o.attributes = "{\"units\": \"K\"}";
    o.dimension_names = "[\"y\", \"x\"]";
    const zc_zarr_create_opts *create[1] = {&o};
    zc_target t = {st, "out", NULL, 0};
    zc_spec spec = ZC_SPEC_INIT;
    zc_plan *p;
    CHECK_OK(zc_plan_create_advanced(&spec, 1, &r, &t, create, &p));
    o.fill_value = "1"; /* the plan keeps its own copy */
    CHECK_OK(zc_plan_execute(p, NULL, ZC_PLAN_ALL, 0, -1));
    zc_plan_free(p);

    zc_zarr *z;
    CHECK_OK(zc_zarr_open(st, "out", &z));
    zc_zarr_info_t info;
    CHECK_OK(zc_zarr_info(z, &info));
    CHECK(info.chunks[0] == 4 && info.chunks[1] == 5 && info.shards[0] == 12 && info.shards[1] == 10);
    char *meta = NULL;
    CHECK_OK(zc_zarr_metadata_json(z, &meta));
    CHECK(meta && strstr(meta, "\"fill_value\": 7.5") && strstr(meta, "\"units\": \"K\"") && strstr(meta, "crc32c") &&
          strstr(meta, "\"y\""));
    zc_free(meta);
    double got[240];
    CHECK_OK(zc_zarr_read(z, NULL, got, sizeof got));
    int same = 1;
    for (int i = 0; i < 240; i++) same &= got[i] == i * 0.5;
    CHECK(same);
    zc_zarr_close(z);

    /* chunks that are not the computed array's (12, 10) write unit: refused at execution */
    o.shards[0] = 6;
    CHECK_OK(zc_plan_create_advanced(&spec, 1, &r, &t, create, &p));
    CHECK_ERR(zc_plan_execute(p, NULL, ZC_PLAN_ALL, 0, -1), ZC_EINVAL, "creation options");
    zc_plan_free(p);
    /* create NULL: the plain target */
    CHECK_OK(zc_plan_create_advanced(&spec, 1, &r, &t, NULL, &p));
    CHECK_OK(zc_plan_execute(p, NULL, ZC_PLAN_ALL, 0, -1));
    zc_plan_free(p);
    CHECK_OK(zc_zarr_open(st, "out", &z));
    CHECK_OK(zc_zarr_info(z, &info));
    CHECK(info.chunks[0] == 12 && info.shards[0] == 0);
    zc_zarr_close(z);
    zc_array_release(r);
    zc_array_release(a);
    zc_store_close(st);
}
