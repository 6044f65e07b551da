/* zarr/meta_v3.c — Zarr v3 zarr.json (arrays) ↔ zarr_meta.
 *
 * must_understand: a top-level key this code does not know is an extension; it
 * is ignored only if it is an object with "must_understand": false. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "zarr/zarr.h"

static const char *const KNOWN[] = {"zarr_format", "node_type", "shape", "data_type", "chunk_grid",
                                    "chunk_key_encoding", "fill_value", "codecs", "attributes",
                                    "dimension_names", "storage_transformers", NULL};

static bool known_key(const char *k)
{
    for (int i = 0; KNOWN[i]; i++)
        if (!strcmp(KNOWN[i], k)) return true;
    return false;
}

static int parse_sharding(zarr_meta *m, const json_t *cfg)
{
    if (!json_is_object(cfg)) return zc__err(ZC_EFORMAT, "sharding_indexed needs a configuration");
    int nd = m->ndim;
    ZC_TRY(zarr_parse_dims(json_object_get(cfg, "chunk_shape"), "sharding_indexed.chunk_shape", &nd, m->inner));
    json_t *codecs = json_object_get(cfg, "codecs");
    if (!json_is_array(codecs)) return zc__err(ZC_EFORMAT, "sharding_indexed.codecs must be an array");
    size_t i;
    json_t *c;
    json_array_foreach(codecs, i, c) {
        if (!strcmp(json_string_value(json_object_get(c, "name")) ?: "", "sharding_indexed"))
            return zc__err(ZC_EUNSUPPORTED, "nested sharding is not supported");
    }
    json_t *index = json_object_get(cfg, "index_codecs");
    if (!index) index = json_pack("[{s:s, s:{s:s}}, {s:s}]", "name", "bytes", "configuration", "endian",
                                  "little", "name", "crc32c");
    else json_incref(index);
    if (!json_is_array(index)) {
        json_decref(index);
        return zc__err(ZC_EFORMAT, "sharding_indexed.index_codecs must be an array");
    }
    const char *loc = json_string_value(json_object_get(cfg, "index_location"));
    if (loc && strcmp(loc, "start") && strcmp(loc, "end")) {
        json_decref(index);
        return zc__err(ZC_EFORMAT, "sharding_indexed.index_location must be \"start\" or \"end\"");
    }
    m->sharded = true;
    m->index_at_end = !loc || !strcmp(loc, "end");
    m->inner_codecs = json_incref(codecs);
    m->index_codecs = index;
    return 0;
}

int zarr_meta_parse_v3(const char *text, size_t n, zarr_meta *m)
{
    json_error_t jerr;
    memset(m, 0, sizeof *m);
    json_t *doc = zc_json_load(text, n, 0, &jerr);
    if (!doc) return zc__err(ZC_EFORMAT, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column, jerr.text);
    int rc = 0;
    if (!json_is_object(doc)) { rc = zc__err(ZC_EFORMAT, "zarr.json is not a JSON object"); goto out; }
    json_t *fmt = json_object_get(doc, "zarr_format");
    if (!json_is_integer(fmt) || json_integer_value(fmt) != 3) { rc = zc__err(ZC_EFORMAT, "'zarr_format' must be 3"); goto out; }
    const char *nt = json_string_value(json_object_get(doc, "node_type"));
    if (!nt) { rc = zc__err(ZC_EFORMAT, "'node_type' missing"); goto out; }
    if (strcmp(nt, "array")) {
        rc = !strcmp(nt, "group") ? zc__err(ZC_ENOENT, "node is a group, not an array")
                                  : zc__err(ZC_EFORMAT, "unknown node_type '%s'", nt);
        goto out;
    }
    const char *key;
    json_t *val;
    json_object_foreach(doc, key, val) {
        if (known_key(key)) continue;
        if (json_is_object(val) && json_is_false(json_object_get(val, "must_understand"))) continue;
        rc = zc__err(ZC_EUNSUPPORTED, "extension '%s' must be understood and is not supported", key);
        goto out;
    }
    m->zarr_format = 3;
    m->order = 'C';
    m->ndim = -1;
    if ((rc = zarr_parse_dims(json_object_get(doc, "shape"), "shape", &m->ndim, m->shape)) < 0) goto out;
    if ((rc = dtype_from_v3(json_object_get(doc, "data_type"), &m->dtype)) < 0) goto out;
    json_t *grid = json_object_get(doc, "chunk_grid");
    const char *gname = json_string_value(json_object_get(grid, "name"));
    if (!gname) { rc = zc__err(ZC_EFORMAT, "'chunk_grid' needs a name"); goto out; }
    if (strcmp(gname, "regular")) { rc = zc__err(ZC_EUNSUPPORTED, "chunk grid '%s' is not supported", gname); goto out; }
    if ((rc = zarr_parse_dims(json_object_get(json_object_get(grid, "configuration"), "chunk_shape"),
                              "chunk_grid.configuration.chunk_shape", &m->ndim, m->chunks)) < 0)
        goto out;
    json_t *cke = json_object_get(doc, "chunk_key_encoding");
    const char *kname = cke ? json_string_value(json_object_get(cke, "name")) : "default";
    if (!kname) { rc = zc__err(ZC_EFORMAT, "'chunk_key_encoding' needs a name"); goto out; }
    const char *sep = json_string_value(json_object_get(json_object_get(cke, "configuration"), "separator"));
    if (!strcmp(kname, "default")) {
        m->separator = sep ? sep[0] : '/';
    } else if (!strcmp(kname, "v2")) {
        m->separator = sep ? sep[0] : '.';
        m->v2_key_encoding = true;
    } else {
        rc = zc__err(ZC_EUNSUPPORTED, "chunk key encoding '%s' is not supported", kname);
        goto out;
    }
    if (sep && ((sep[0] != '.' && sep[0] != '/') || sep[1])) {
        rc = zc__err(ZC_EFORMAT, "chunk key separator must be \".\" or \"/\"");
        goto out;
    }
    if (!(m->fill = zc__calloc(1, m->dtype.size))) { rc = ZC_ENOMEM; goto out; }
    if ((rc = dtype_fill_parse(&m->dtype, json_object_get(doc, "fill_value"), 3, m->fill, &m->fill_null)) < 0) {
        rc = zc__err_wrap(rc, "'fill_value'");
        goto out;
    }
    json_t *codecs = json_object_get(doc, "codecs");
    if (!json_is_array(codecs) || json_array_size(codecs) == 0) {
        rc = zc__err(ZC_EFORMAT, "'codecs' must be a non-empty array");
        goto out;
    }
    size_t i;
    json_t *c;
    json_array_foreach(codecs, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (!name) {
            rc = zc__err(ZC_EFORMAT, "'codecs'[%zu] has no name", i);
            goto out;
        }
        if (!strcmp(name, "sharding_indexed")) {
            if (json_array_size(codecs) != 1) {
                rc = zc__err(ZC_EUNSUPPORTED, "sharding_indexed combined with other codecs is not supported");
                goto out;
            }
            if ((rc = parse_sharding(m, json_object_get(c, "configuration"))) < 0) goto out;
        }
    }
    m->codecs = json_incref(codecs);
    json_t *st = json_object_get(doc, "storage_transformers");
    if (st && (!json_is_array(st) || json_array_size(st))) {
        rc = zc__err(ZC_EUNSUPPORTED, "storage transformers are not supported");
        goto out;
    }
    json_t *attrs = json_object_get(doc, "attributes");
    if (attrs && !json_is_object(attrs)) { rc = zc__err(ZC_EFORMAT, "'attributes' must be an object"); goto out; }
    m->attributes = attrs ? json_incref(attrs) : json_object();
    json_t *dn = json_object_get(doc, "dimension_names");
    if (dn && !json_is_null(dn)) {
        if (!json_is_array(dn) || json_array_size(dn) != (size_t)m->ndim) {
            rc = zc__err(ZC_EFORMAT, "'dimension_names' must be an array of %d names", m->ndim);
            goto out;
        }
        m->dimension_names = json_incref(dn);
    }
    rc = zarr_meta_validate(m);
out:
    json_decref(doc);
    if (rc < 0) zarr_meta_free(m);
    return rc;
}

json_t *zarr_meta_to_json_v3(const zarr_meta *m)
{
    json_t *shape = json_array(), *chunks = json_array();
    for (int d = 0; d < m->ndim; d++) {
        json_array_append_new(shape, json_integer(m->shape[d]));
        json_array_append_new(chunks, json_integer(m->chunks[d]));
    }
    char sep[2] = {m->separator ? m->separator : '/', 0};
    json_t *doc = json_pack(
        "{s:i, s:s, s:o, s:o, s:{s:s, s:{s:o}}, s:{s:s, s:{s:s}}, s:o, s:O, s:O}", "zarr_format", 3,
        "node_type", "array", "shape", shape, "data_type", dtype_to_v3(&m->dtype), "chunk_grid", "name",
        "regular", "configuration", "chunk_shape", chunks, "chunk_key_encoding", "name",
        m->v2_key_encoding ? "v2" : "default", "configuration", "separator", sep, "fill_value",
        dtype_fill_json(&m->dtype, m->fill, false, 3), "codecs", m->codecs, "attributes", m->attributes);
    if (doc && m->dimension_names) json_object_set(doc, "dimension_names", m->dimension_names);
    return doc;
}
