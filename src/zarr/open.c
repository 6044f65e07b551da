/* zarr/open.c — opening and creating arrays, and what they tell about themselves. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/checked.h"
#include "core/error.h"
#include "core/json.h"
#include "zarr/shard_cache.h"
#include "zarr/zarr.h"

#define KEY_MAX 4096
#define SHARD_CACHE_BYTES (64u << 20) /* decoded shard indexes kept per array */
#define MAX_INNER_PER_SHARD (1 << 24)  /* a 256 MB index */

/* Copy `path` without leading/trailing slashes; "." means the root. */
static int normalize_path(const char *path, char **out)
{
    if (!path) path = "";
    while (*path == '/') path++;
    size_t n = strlen(path);
    while (n && path[n - 1] == '/') n--;
    if (n == 1 && path[0] == '.') n = 0;
    char *p = zc__malloc(n + 1);
    if (!p) return ZC_ENOMEM;
    memcpy(p, path, n);
    p[n] = 0;
    if (n && store_key_check(p) < 0) {
        zc__free(p);
        return ZC_EINVAL;
    }
    *out = p;
    return 0;
}

static codec_ctx chunk_ctx(const zarr_meta *m, const int64_t *shape, size_t nbytes)
{
    codec_ctx c;
    memset(&c, 0, sizeof c);
    c.dtype = m->dtype;
    c.ndim = m->ndim;
    memcpy(c.shape, shape, sizeof(int64_t) * (size_t)m->ndim);
    c.nbytes = nbytes;
    c.zarr_format = m->zarr_format;
    return c;
}

/* Derive grid sizes and build the codec chains from a parsed zarr_meta. */
static int array_init(zc_zarr *a)
{
    zarr_meta *m = &a->m;
    int64_t elems = 1;
    a->inner_per_shard = 1;
    for (int d = 0; d < m->ndim; d++) {
        a->grid[d] = ck_ceildiv(m->shape[d], m->chunks[d]);
        a->rchunk[d] = m->sharded ? m->inner[d] : m->chunks[d];
        a->rgrid[d] = ck_ceildiv(m->shape[d], a->rchunk[d]);
        elems *= a->rchunk[d]; /* validated: no overflow */
        if (m->sharded) a->inner_per_shard *= m->chunks[d] / m->inner[d];
    }
    a->rchunk_nbytes = (size_t)elems * m->dtype.size;
    codec_ctx ctx = chunk_ctx(m, a->rchunk, a->rchunk_nbytes);
    int rc = codec_chain_create(m->sharded ? m->inner_codecs : m->codecs, &ctx, &a->chain);
    if (rc < 0) return rc;
    if (m->sharded) {
        codec_ctx ic;
        memset(&ic, 0, sizeof ic);
        ic.dtype = (dtype_t){ZC_UINT64, 8, '<'};
        ic.ndim = m->ndim + 1;
        for (int d = 0; d < m->ndim; d++) ic.shape[d] = m->chunks[d] / m->inner[d];
        ic.shape[m->ndim] = 2;
        ic.nbytes = (size_t)a->inner_per_shard * 16;
        ic.zarr_format = 3;
        if (a->inner_per_shard > MAX_INNER_PER_SHARD)
            return zc__err(ZC_EUNSUPPORTED, "%lld inner chunks per shard (an index of %.0f MB) is more than supported "
                           "(%d)", (long long)a->inner_per_shard, (double)a->inner_per_shard * 16 / 1e6,
                           MAX_INNER_PER_SHARD);
        /* The index has a fixed encoded size: the index codecs may only be bytes and
         * checksums (the spec requires fixed-size codecs there). */
        size_t extra = 0;
        size_t i;
        json_t *c;
        json_array_foreach(m->index_codecs, i, c) {
            const char *name = json_string_value(json_object_get(c, "name"));
            if (name && !strcmp(name, "crc32c")) extra += 4;
            else if (!name || strcmp(name, "bytes"))
                return zc__err(ZC_EUNSUPPORTED, "shard index codec '%s' is not supported (bytes, crc32c)",
                               name ? name : "?");
        }
        ZC_TRY(codec_chain_create(m->index_codecs, &ic, &a->index_chain));
        a->index_nbytes = ic.nbytes + extra;
        ZC_TRY(shard_cache_create((size_t)a->inner_per_shard * 2, SHARD_CACHE_BYTES, &a->index_cache));
    }
    return 0;
}

static void array_free(zc_zarr *a)
{
    if (!a) return;
    codec_chain_free(a->chain);
    codec_chain_free(a->index_chain);
    shard_cache_free(a->index_cache);
    zarr_meta_free(&a->m);
    zc__free(a->path);
    zc__free(a);
}

void zc_zarr_close(zc_zarr *a)
{
    array_free(a);
}

/* Read an optional document; *data = NULL if absent. */
static int get_doc(store *st, const char *path, const char *name, void **data, size_t *n)
{
    char key[KEY_MAX];
    ZC_TRY(zarr_meta_key(path, name, key, sizeof key));
    *data = NULL;
    int rc = store_get(st, key, data, n);
    if (rc == ZC_ENOENT) {
        *data = NULL;
        return 0;
    }
    return rc;
}

int zc_zarr_open(zc_store *st, const char *path, zc_zarr **out)
{
    zc__err_clear();
    if (!st || !out) return zc__err(ZC_EINVAL, "zc_zarr_open: NULL argument");
    *out = NULL;
    zc_zarr *a = zc__calloc(1, sizeof *a);
    if (!a) return ZC_ENOMEM;
    int rc = normalize_path(path, &a->path);
    if (rc < 0) { zc__free(a); return rc; }
    void *doc = NULL, *attrs = NULL;
    size_t n = 0, an = 0;
    const char *what = "zarr.json";
    if ((rc = get_doc(st, a->path, "zarr.json", &doc, &n)) < 0) goto fail;
    if (doc) {
        rc = zarr_meta_parse_v3(doc, n, &a->m);
    } else {
        what = ".zarray";
        if ((rc = get_doc(st, a->path, ".zarray", &doc, &n)) < 0) goto fail;
        if (!doc) {
            rc = zc__err(ZC_ENOENT, "no Zarr array at '%s' in %s (no zarr.json or .zarray)", a->path, st->url);
            goto fail;
        }
        if ((rc = get_doc(st, a->path, ".zattrs", &attrs, &an)) < 0) goto fail;
        rc = zarr_meta_parse_v2(doc, n, attrs, an, &a->m);
    }
    if (rc < 0) {
        zc__err_wrap(rc, "%s%s%s in %s", a->path, a->path[0] ? "/" : "", what, st->url);
        goto fail;
    }
    a->st = st;
    if ((rc = array_init(a)) < 0) {
        zc__err_wrap(rc, "array '%s' in %s", a->path, st->url);
        goto fail;
    }
    zc__free(doc);
    zc__free(attrs);
    *out = a;
    return 0;
fail:
    zc__free(doc);
    zc__free(attrs);
    array_free(a);
    return rc;
}

static json_t *bytes_codec(const dtype_t *dt)
{
    if (dtype_swap_unit(dt) == 1) return json_pack("{s:s}", "name", "bytes");
    return json_pack("{s:s, s:{s:s}}", "name", "bytes", "configuration", "endian", "little");
}

/* Fill zarr_meta from creation options. */
static int meta_from_opts(const zc_zarr_create_opts *o, zarr_meta *m)
{
    memset(m, 0, sizeof *m);
    if (o->zarr_format != 2 && o->zarr_format != 3)
        return zc__err(ZC_EINVAL, "zarr_format must be 2 or 3 (got %d)", o->zarr_format);
    if (o->ndim < 0 || o->ndim > ZC_MAX_DIMS)
        return zc__err(ZC_EINVAL, "ndim must be 0..%d (got %d)", ZC_MAX_DIMS, o->ndim);
    m->zarr_format = o->zarr_format;
    m->ndim = o->ndim;
    m->order = o->order ? o->order : 'C';
    if (m->order != 'C' && m->order != 'F') return zc__err(ZC_EINVAL, "order must be 'C' or 'F'");
    if (m->order == 'F' && m->zarr_format == 3)
        return zc__err(ZC_EINVAL, "order 'F' is a Zarr v2 option (v3 uses a transpose codec)");
    bool sharded = false;
    for (int d = 0; d < o->ndim; d++) {
        if (o->shape[d] < 0) return zc__err(ZC_EINVAL, "shape[%d] is negative (%lld)", d, (long long)o->shape[d]);
        if (o->chunks[d] <= 0) return zc__err(ZC_EINVAL, "chunks[%d] must be positive (got %lld)", d, (long long)o->chunks[d]);
        if (o->shards[d]) sharded = true;
    }
    if (sharded) {
        if (o->zarr_format != 3) return zc__err(ZC_EINVAL, "sharding needs zarr_format 3");
        for (int d = 0; d < o->ndim; d++)
            if (o->shards[d] <= 0 || o->shards[d] % o->chunks[d])
                return zc__err(ZC_EINVAL, "shards[%d]=%lld must be a positive multiple of chunks[%d]=%lld", d,
                               (long long)o->shards[d], d, (long long)o->chunks[d]);
    }
    for (int d = 0; d < o->ndim; d++) {
        m->shape[d] = o->shape[d];
        m->chunks[d] = sharded ? o->shards[d] : o->chunks[d];
        m->inner[d] = o->chunks[d];
    }
    m->dtype.type = o->dtype;
    switch (o->dtype) {
    case ZC_BYTES: case ZC_RAW: case ZC_UNICODE:
        if (!o->itemsize || (o->dtype == ZC_UNICODE && o->itemsize % 4))
            return zc__err(ZC_EINVAL, "dtype %s needs an itemsize%s", zc_dtype_name(o->dtype),
                           o->dtype == ZC_UNICODE ? " (a multiple of 4)" : "");
        m->dtype.size = o->itemsize;
        break;
    default: {
        size_t size;
        if (zc_dtype_parse(zc_dtype_name(o->dtype), &m->dtype.type, &size) < 0)
            return zc__err(ZC_EINVAL, "invalid dtype %d", (int)o->dtype);
        m->dtype.size = size;
    }
    }
    m->dtype.endian = dtype_swap_unit(&m->dtype) == 1 ? '|' : '<';
    m->separator = o->separator ? o->separator : (o->zarr_format == 2 ? '.' : '/');
    if (m->separator != '.' && m->separator != '/') return zc__err(ZC_EINVAL, "separator must be '.' or '/'");
    m->v2_key_encoding = o->zarr_format == 2;

    /* fill value */
    if (!(m->fill = zc__calloc(1, m->dtype.size))) return ZC_ENOMEM;
    json_error_t jerr;
    json_t *fv = zc_json_load(o->fill_value ? o->fill_value : "0", strlen(o->fill_value ? o->fill_value : "0"), JSON_DECODE_ANY, &jerr);
    if (!fv) return zc__err(ZC_EINVAL, "fill value '%s' is not JSON", o->fill_value);
    int rc = dtype_fill_parse(&m->dtype, fv, m->zarr_format, m->fill, &m->fill_null);
    json_decref(fv);
    if (rc < 0) return zc__err_wrap(ZC_EINVAL, "fill value '%s'", o->fill_value);

    /* codecs */
    json_t *spec;
    ZC_TRY(codec_spec_parse(o->codec ? o->codec : "zstd", m->zarr_format, m->dtype.size, &spec));
    m->codecs = json_array();
    if (m->zarr_format == 2) {
        if (m->order == 'F' && m->ndim > 1) {
            json_t *perm = json_array();
            for (int d = m->ndim - 1; d >= 0; d--) json_array_append_new(perm, json_integer(d));
            json_array_append_new(m->codecs, json_pack("{s:s, s:{s:o}}", "name", "transpose", "configuration", "order", perm));
        }
        json_array_append_new(m->codecs, bytes_codec(&m->dtype));
        json_t *filters = json_object_get(spec, "filters"), *comp = json_object_get(spec, "compressor");
        if (json_is_array(filters)) json_array_extend(m->codecs, filters);
        if (comp && !json_is_null(comp)) json_array_append(m->codecs, comp);
    } else {
        json_t *list = json_array();
        json_array_append_new(list, bytes_codec(&m->dtype));
        json_array_extend(list, spec);
        if (sharded) {
            json_t *inner = json_array();
            for (int d = 0; d < m->ndim; d++) json_array_append_new(inner, json_integer(m->inner[d]));
            m->sharded = true;
            m->index_at_end = true;
            m->inner_codecs = json_incref(list);
            m->index_codecs = json_pack("[{s:s, s:{s:s}}, {s:s}]", "name", "bytes", "configuration", "endian",
                                        "little", "name", "crc32c");
            json_array_append_new(m->codecs,
                                  json_pack("{s:s, s:{s:o, s:O, s:O, s:s}}", "name", "sharding_indexed",
                                            "configuration", "chunk_shape", inner, "codecs", list,
                                            "index_codecs", m->index_codecs, "index_location", "end"));
        } else {
            json_array_extend(m->codecs, list);
        }
        json_decref(list);
    }
    json_decref(spec);

    if (o->attributes) {
        m->attributes = zc_json_load(o->attributes, strlen(o->attributes), 0, &jerr);
        if (!json_is_object(m->attributes)) return zc__err(ZC_EINVAL, "attributes must be a JSON object: %s", jerr.text);
    } else {
        m->attributes = json_object();
    }
    if (o->dimension_names) {
        m->dimension_names = json_loads(o->dimension_names, 0, &jerr);
        if (!json_is_array(m->dimension_names) || json_array_size(m->dimension_names) != (size_t)m->ndim)
            return zc__err(ZC_EINVAL, "dimension_names must be a JSON array of %d names", m->ndim);
    }
    return zarr_meta_validate(m);
}

static int put_json(store *st, const char *path, const char *name, json_t *doc)
{
    char key[KEY_MAX];
    ZC_TRY(zarr_meta_key(path, name, key, sizeof key));
    /* zarr-python 2 reads .zarray/.zattrs as ASCII: escape everything else */
    size_t ascii = name[0] == '.' ? JSON_ENSURE_ASCII : 0;
    char *text = zc_json_dump(doc, JSON_INDENT(4) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | ascii);
    if (!text) return zc__err(ZC_ENOMEM, "cannot serialize %s", key);
    int rc = store_put(st, key, text, strlen(text));
    free(text);
    return rc;
}

static int exists(store *st, const char *path, const char *name, bool *yes)
{
    char key[KEY_MAX];
    uint64_t size;
    ZC_TRY(zarr_meta_key(path, name, key, sizeof key));
    int rc = store_size(st, key, &size);
    *yes = rc == 0;
    return rc == ZC_ENOENT ? 0 : rc;
}

int zarr_write_meta(store *st, const char *path, const zarr_meta *m);
int zarr_write_meta(store *st, const char *path, const zarr_meta *m)
{
    json_t *doc = m->zarr_format == 2 ? zarr_meta_to_json_v2(m) : zarr_meta_to_json_v3(m);
    if (!doc) return zc__err(ZC_ENOMEM, "cannot build metadata");
    int rc = put_json(st, path, m->zarr_format == 2 ? ".zarray" : "zarr.json", doc);
    json_decref(doc);
    if (rc == 0 && m->zarr_format == 2 && json_object_size(m->attributes))
        rc = put_json(st, path, ".zattrs", m->attributes);
    return rc;
}

/* Remove every object of the node at `path` (as zarr-python's overwrite does), so
 * stale chunks of an older array can never be read as part of the new one. */
static int erase_node(store *st, const char *path)
{
    char prefix[KEY_MAX];
    int n = snprintf(prefix, sizeof prefix, "%s%s", path, path[0] ? "/" : "");
    if (n < 0 || (size_t)n >= sizeof prefix) return zc__err(ZC_EOVERFLOW, "path '%s' is too long", path);
    /* with a filesystem's emptied folders: the new array's chunk keys may be
     * files where the old one's were folders ("c/0" after "c/0/0") */
    return store_erase_prefix(st, prefix);
}

/* Every ancestor of `path` becomes a group if it is no node yet (as zarr-python does),
 * so the hierarchy opens as a group from its root. */
static int make_parents(store *st, const char *path, int zarr_format)
{
    char parent[KEY_MAX];
    size_t n = strlen(path);
    if (n >= sizeof parent) return zc__err(ZC_EOVERFLOW, "path '%s' is too long", path);
    zc_node_kind kind;
    int fmt;
    if (n) { /* the root first: nothing is made inside an array */
        ZC_TRY(zc_node_kind_at(st, "", &kind, &fmt));
        if (kind == ZC_NODE_ARRAY) return zc__err(ZC_EEXIST, "the store's root is an array: it cannot hold '%s'", path);
        if (kind == ZC_NODE_NONE) ZC_TRY(zarr_group_put(st, "", zarr_format));
    }
    for (size_t i = 0; i < n; i++) {
        if (path[i] != '/') continue;
        memcpy(parent, path, i);
        parent[i] = 0;
        ZC_TRY(zc_node_kind_at(st, parent, &kind, &fmt));
        if (kind == ZC_NODE_ARRAY) return zc__err(ZC_EEXIST, "'%s' is an array: it cannot hold '%s'", parent, path);
        if (kind == ZC_NODE_NONE) ZC_TRY(zarr_group_put(st, parent, zarr_format));
    }
    return 0;
}

int zc_zarr_create(zc_store *st, const char *path, const zc_zarr_create_opts *o, zc_zarr **out)
{
    zc__err_clear();
    if (!st || !o || !out) return zc__err(ZC_EINVAL, "zc_zarr_create: NULL argument");
    if (o->struct_size < sizeof(unsigned) || o->struct_size > sizeof *o)
        return zc__err(ZC_EINVAL, "zc_zarr_create: struct_size %u is not a known version", o->struct_size);
    *out = NULL;
    zc_zarr *a = zc__calloc(1, sizeof *a);
    if (!a) return ZC_ENOMEM;
    int rc = normalize_path(path, &a->path);
    if (rc < 0) { zc__free(a); return rc; }
    if ((rc = meta_from_opts(o, &a->m)) < 0) {
        zc__err_wrap(rc, "creating array '%s'", a->path);
        goto fail;
    }
    bool v2 = false, v3 = false;
    if ((rc = exists(st, a->path, ".zarray", &v2)) < 0 || (rc = exists(st, a->path, "zarr.json", &v3)) < 0) goto fail;
    if ((v2 || v3) && !o->overwrite) {
        rc = zc__err(ZC_EEXIST, "an array or group already exists at '%s' in %s", a->path, st->url);
        goto fail;
    }
    a->st = st;
    a->write_empty_chunks = o->write_empty_chunks;
    if ((rc = array_init(a)) < 0) goto fail;
    if ((v2 || v3) && (rc = erase_node(st, a->path)) < 0) goto fail;
    if ((rc = make_parents(st, a->path, o->zarr_format)) < 0) goto fail;
    if ((rc = zarr_write_meta(st, a->path, &a->m)) < 0) goto fail;
    if ((rc = zarr_consolidated_update(st, a->path)) < 0) goto fail;
    *out = a;
    return 0;
fail:
    array_free(a);
    return rc;
}

int zc_zarr_info(const zc_zarr *a, zc_zarr_info_t *info)
{
    zc__err_clear();
    if (!a || !info) return zc__err(ZC_EINVAL, "zc_zarr_info: NULL argument");
    memset(info, 0, sizeof *info);
    info->zarr_format = a->m.zarr_format;
    info->ndim = a->m.ndim;
    for (int d = 0; d < a->m.ndim; d++) {
        info->shape[d] = a->m.shape[d];
        info->chunks[d] = a->rchunk[d];
        info->shards[d] = a->m.sharded ? a->m.chunks[d] : 0;
    }
    info->dtype = a->m.dtype.type;
    info->itemsize = a->m.dtype.size;
    info->order = a->m.order;
    return 0;
}

int zc_zarr_codec_spec(const zc_zarr *a, int zarr_format, char **spec)
{
    zc__err_clear();
    if (!a || !spec) return zc__err(ZC_EINVAL, "zc_zarr_codec_spec: NULL argument");
    *spec = NULL;
    if (zarr_format != 2 && zarr_format != 3)
        return zc__err(ZC_EINVAL, "zc_zarr_codec_spec: zarr_format must be 2 or 3, not %d", zarr_format);
    return codec_spec_of(a->m.sharded ? a->m.inner_codecs : a->m.codecs, zarr_format, spec);
}

int zc_zarr_metadata_json(const zc_zarr *a, char **out)
{
    zc__err_clear();
    if (!a || !out) return zc__err(ZC_EINVAL, "zc_zarr_metadata_json: NULL argument");
    const zarr_meta *m = &a->m;
    json_t *shape = json_array(), *chunks = json_array(), *shards = json_array();
    for (int d = 0; d < m->ndim; d++) {
        json_array_append_new(shape, json_integer(m->shape[d]));
        json_array_append_new(chunks, json_integer(a->rchunk[d]));
        if (m->sharded) json_array_append_new(shards, json_integer(m->chunks[d]));
    }
    char typestr[32];
    dtype_to_v2(&m->dtype, typestr, sizeof typestr);
    json_t *dt = dtype_to_v3(&m->dtype);
    json_t *doc = json_pack("{s:i, s:o, s:o, s:o, s:o, s:s, s:o, s:O, s:o, s:s, s:O, s:s}", "zarr_format",
                            m->zarr_format, "shape", shape, "dtype", dt, "chunks", chunks, "shards",
                            m->sharded ? shards : json_null(), "numpy_dtype", typestr, "fill_value",
                            dtype_fill_json(&m->dtype, m->fill, m->fill_null, m->zarr_format), "codecs",
                            m->codecs, "dimension_names",
                            m->dimension_names ? json_incref(m->dimension_names) : json_null(), "order",
                            m->order == 'F' ? "F" : "C", "attributes", m->attributes, "separator",
                            m->separator == '.' ? "." : "/");
    if (!m->sharded) json_decref(shards);
    if (!doc) return zc__err(ZC_ENOMEM, "cannot build metadata JSON");
    char *text = zc_json_dump(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(doc);
    if (!text) return zc__err(ZC_ENOMEM, "cannot serialize metadata");
    *out = zc__strdup(text);
    free(text);
    return *out ? 0 : ZC_ENOMEM;
}

int zc_zarr_attributes(const zc_zarr *a, char **out)
{
    zc__err_clear();
    if (!a || !out) return zc__err(ZC_EINVAL, "zc_zarr_attributes: NULL argument");
    char *text = json_dumps(a->m.attributes, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    if (!text) return zc__err(ZC_ENOMEM, "cannot serialize attributes");
    *out = zc__strdup(text);
    free(text);
    return *out ? 0 : ZC_ENOMEM;
}

int zc_zarr_set_threads(zc_zarr *a, int nthreads)
{
    if (!a || nthreads < 0) return zc__err(ZC_EINVAL, "zc_zarr_set_threads: bad argument");
    a->nthreads = nthreads;
    return 0;
}

pool *zarr_pool(const zc_zarr *a)
{
    (void)a;
    return pool_default();
}

bool zarr_is_fill(const zc_zarr *a, const void *chunk, size_t nbytes)
{
    const unsigned char *p = chunk, *f = a->m.fill;
    size_t isz = a->m.dtype.size;
    if (a->m.fill_null) {
        for (size_t i = 0; i < nbytes; i++)
            if (p[i]) return false;
        return true;
    }
    /* compare the first element, then the rest against the first (memcmp is fast) */
    if (nbytes < isz || memcmp(p, f, isz)) return false;
    size_t done = isz;
    while (done < nbytes) {
        size_t n = done < nbytes - done ? done : nbytes - done;
        if (memcmp(p, p + done, n)) return false;
        done += n;
    }
    return true;
}

void zarr_fill(const zc_zarr *a, void *dst, size_t n)
{
    size_t isz = a->m.dtype.size;
    unsigned char *p = dst;
    if (n == 0) return;
    if (a->m.fill_null) {
        memset(p, 0, n * isz);
        return;
    }
    bool zero = true;
    for (size_t i = 0; i < isz; i++) zero &= a->m.fill[i] == 0;
    if (zero) {
        memset(p, 0, n * isz);
        return;
    }
    memcpy(p, a->m.fill, isz);
    size_t done = isz, total = n * isz;
    while (done < total) {
        size_t k = done < total - done ? done : total - done;
        memcpy(p + done, p, k);
        done += k;
    }
}

uint64_t zarr_grid_id(const zc_zarr *a, const int64_t *coord)
{
    uint64_t id = 0;
    for (int d = 0; d < a->m.ndim; d++) id = id * (uint64_t)a->grid[d] + (uint64_t)coord[d];
    return id;
}

int zc_zarr_io_stats(const zc_zarr *a, zc_zarr_io_stats_t *st)
{
    if (!a || !st) return zc__err(ZC_EINVAL, "zc_zarr_io_stats: NULL argument");
    st->chunks_read = atomic_load(&a->chunks_read);
    st->bytes_read = atomic_load(&a->bytes_read);
    st->index_hits = atomic_load(&a->index_hits);
    st->index_misses = atomic_load(&a->index_misses);
    return 0;
}
