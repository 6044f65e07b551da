/* tests/test_compute_target.c — zc_plan_create_advanced: a target created
 * with the caller's options (sharded v3, fill value, attributes, dimension
 * names) holds the computed values and that metadata; options that do not
 * describe the computed array (chunks that are not its write unit) are
 * refused naming the operation; create NULL is zc_plan_create. The output's
 * projection follows how the target is written (codecs, store, shards). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The output operation's projection of a plan of r written to t (created with c). */
static size_t out_projection(zc_array *r, const zc_target *t, const zc_zarr_create_opts *c, zc_plan **keep)
{
    zc_spec spec = spec_mem(256);
    zc_plan *p;
    const zc_zarr_create_opts *create[1] = {c};
    CHECK_OK(zc_plan_create_advanced(&spec, 1, &r, t, c ? create : NULL, &p));
    char *j = NULL;
    CHECK_OK(zc_plan_to_json(p, &j));
    json_t *doc = json_loads(j, 0, NULL), *ops = json_object_get(doc, "operations");
    size_t mem = (size_t)json_integer_value(json_object_get(json_array_get(ops, json_array_size(ops) - 1),
                                                            "projected_mem"));
    json_decref(doc);
    zc_free(j);
    *keep = p;
    return mem;
}

/* Executed: each task within its projection (measured_mem <= projected_mem). */
static void run_checked(zc_plan *p, const char *what)
{
    CHECK_OK(zc_plan_execute(p, NULL, ZC_PLAN_ALL, 0, -1));
    char *j = NULL;
    CHECK_OK(zc_plan_report(p, &j));
    json_t *doc = json_loads(j, 0, NULL);
    check_contract(doc, what);
    json_decref(doc);
    zc_free(j);
    zc_plan_free(p);
}

TEST(projection_follows_how_the_target_is_written)
{
    /* a copy into (64, 512) float64 chunks of 256 KiB: the write holds the chunk
     * it assembles (none here: the block is the chunk) and each codec's output
     * at its bound (plan_write_model);
     * a memory store keeps each chunk written; a shard is rebuilt whole */
    int64_t shape[2] = {512, 512}, from[2] = {512, 64}, to[2] = {64, 512};
    zc_array *u, *r;
    CHECK_OK(zc_random_uniform(5, 2, shape, from, ZC_FLOAT64, 0, 1, &u));
    CHECK_OK(zc_rechunk(u, to, &r));
    char dir[] = "/tmp/zc_wmodel_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    zc_store *fs, *mem;
    CHECK_OK(zc_store_open(dir, 0, &fs));
    CHECK_OK(zc_store_open("memory://write-model", ZC_STORE_CREATE, &mem));
    const size_t chunk = 64 * 512 * 8, bound = chunk + chunk / 64 + 4096;
    zc_target none = {fs, "none", "none", 3}, zstd = {fs, "zstd", "zstd:1", 3}, two = {fs, "two", "zstd:1,crc32c", 3},
              kept = {mem, "kept", "zstd:1", 3}, shard = {fs, "shard", "zstd:1", 3};
    zc_plan *p[5];
    size_t m_none = out_projection(r, &none, NULL, &p[0]), m_zstd = out_projection(r, &zstd, NULL, &p[1]),
           m_two = out_projection(r, &two, NULL, &p[2]), m_kept = out_projection(r, &kept, NULL, &p[3]);
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    o.ndim = 2;
    o.shape[0] = o.shape[1] = 512;
    o.chunks[0] = 16, o.chunks[1] = 512;
    o.shards[0] = 64, o.shards[1] = 512;
    o.dtype = ZC_FLOAT64;
    o.codec = "zstd:1";
    size_t m_shard = out_projection(r, &shard, &o, &p[4]);
    /* one codec's output more, then one more; zstd's context comes from the reserve
     * (plan_project_targets), the same for each */
    CHECK(m_zstd >= m_none + bound && m_zstd < m_none + bound + ((size_t)16 << 20));
    CHECK(m_two - m_zstd == bound);
    CHECK(m_kept - m_zstd == chunk + chunk / 64 + 4096); /* the chunk kept, at its bound */
    /* 4 copies of the shard against zstd's 1: each task's block is its chunk,
     * so the chunk is encoded from it, not assembled (plan_write_extra) */
    CHECK(m_shard - m_zstd == 3 * bound);
    const char *names[5] = {"none", "zstd", "two", "kept", "shard"};
    for (int i = 0; i < 5; i++) run_checked(p[i], names[i]);
    double *want = malloc(512 * 512 * sizeof(double)), *got = malloc(512 * 512 * sizeof(double));
    zc_spec s = spec_mem(64);
    CHECK_OK(zc_compute_buffer(&s, u, want, 512 * 512 * sizeof(double), NULL));
    for (int i = 0; i < 5; i++) {
        zc_zarr *z;
        CHECK_OK(zc_zarr_open(i == 3 ? mem : fs, names[i], &z));
        CHECK_OK(zc_zarr_read(z, NULL, got, 512 * 512 * sizeof(double)));
        CHECK(!memcmp(want, got, 512 * 512 * sizeof(double)));
        zc_zarr_close(z);
    }
    free(want);
    free(got);
    zc_store_close(mem);
    zc_store_close(fs);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    zc_array_release(r);
    zc_array_release(u);
}
