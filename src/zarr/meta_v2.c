/* zarr/meta_v2.c — Zarr v2 .zarray/.zattrs ↔ zarr_meta.
 *
 * On reading, order/dtype/filters/compressor become a v3-shaped codec list (see
 * zarr.h). On writing, that list is taken apart again: it must then have the
 * v2 shape (optional transpose, bytes, numcodecs entries). */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "zarr/zarr.h"

static json_t *transpose_f(int ndim)
{
    json_t *order = json_array();
    for (int i = ndim - 1; i >= 0; i--) json_array_append_new(order, json_integer(i));
    return json_pack("{s:s, s:{s:o}}", "name", "transpose", "configuration", "order", order);
}

static json_t *bytes_codec(const dtype_t *dt)
{
    if (dtype_swap_unit(dt) == 1) return json_pack("{s:s}", "name", "bytes");
    return json_pack("{s:s, s:{s:s}}", "name", "bytes", "configuration", "endian",
                     dt->endian == '>' ? "big" : "little");
}

int zarr_meta_parse_v2(const char *text, size_t n, const char *attrs, size_t an, zarr_meta *m)
{
    json_error_t jerr;
    memset(m, 0, sizeof *m);
    json_t *doc = zc_json_load(text, n, 0, &jerr);
    if (!doc) return zc__err(ZC_EFORMAT, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column, jerr.text);
    int rc = 0;
    if (!json_is_object(doc)) { rc = zc__err(ZC_EFORMAT, ".zarray is not a JSON object"); goto out; }
    json_t *fmt = json_object_get(doc, "zarr_format");
    if (!json_is_integer(fmt) || json_integer_value(fmt) != 2) {
        rc = zc__err(ZC_EFORMAT, "'zarr_format' must be 2");
        goto out;
    }
    m->zarr_format = 2;
    m->ndim = -1;
    if ((rc = zarr_parse_dims(json_object_get(doc, "shape"), "shape", &m->ndim, m->shape)) < 0) goto out;
    if ((rc = zarr_parse_dims(json_object_get(doc, "chunks"), "chunks", &m->ndim, m->chunks)) < 0) goto out;
    json_t *dt = json_object_get(doc, "dtype");
    if (json_is_array(dt)) { rc = zc__err(ZC_EUNSUPPORTED, "structured dtypes are not supported"); goto out; }
    if (!json_is_string(dt)) { rc = zc__err(ZC_EFORMAT, "'dtype' must be a string"); goto out; }
    if ((rc = dtype_from_v2(json_string_value(dt), &m->dtype)) < 0) goto out;
    json_t *order = json_object_get(doc, "order");
    const char *os = json_is_string(order) ? json_string_value(order) : "C";
    if (strcmp(os, "C") && strcmp(os, "F")) { rc = zc__err(ZC_EFORMAT, "'order' must be \"C\" or \"F\""); goto out; }
    m->order = os[0];
    json_t *sep = json_object_get(doc, "dimension_separator");
    m->separator = '.';
    if (sep && !json_is_null(sep)) {
        const char *s = json_is_string(sep) ? json_string_value(sep) : "";
        if (strcmp(s, ".") && strcmp(s, "/")) {
            rc = zc__err(ZC_EFORMAT, "'dimension_separator' must be \".\" or \"/\"");
            goto out;
        }
        m->separator = s[0];
    }
    m->v2_key_encoding = true;
    if (!(m->fill = zc__calloc(1, m->dtype.size))) { rc = ZC_ENOMEM; goto out; }
    if ((rc = dtype_fill_parse(&m->dtype, json_object_get(doc, "fill_value"), 2, m->fill, &m->fill_null)) < 0) {
        rc = zc__err_wrap(rc, "'fill_value'");
        goto out;
    }
    /* codec list */
    m->codecs = json_array();
    if (m->order == 'F' && m->ndim > 1) json_array_append_new(m->codecs, transpose_f(m->ndim));
    json_array_append_new(m->codecs, bytes_codec(&m->dtype));
    json_t *filters = json_object_get(doc, "filters");
    if (filters && !json_is_null(filters)) {
        if (!json_is_array(filters)) { rc = zc__err(ZC_EFORMAT, "'filters' must be null or an array"); goto out; }
        size_t i;
        json_t *f;
        json_array_foreach(filters, i, f) {
            if (!json_is_object(f) || !json_is_string(json_object_get(f, "id"))) {
                rc = zc__err(ZC_EFORMAT, "'filters'[%zu] has no \"id\"", i);
                goto out;
            }
            json_array_append(m->codecs, f);
        }
    }
    json_t *comp = json_object_get(doc, "compressor");
    if (comp && !json_is_null(comp)) {
        if (!json_is_object(comp) || !json_is_string(json_object_get(comp, "id"))) {
            rc = zc__err(ZC_EFORMAT, "'compressor' must be null or an object with \"id\"");
            goto out;
        }
        json_array_append(m->codecs, comp);
    }
    if (attrs) {
        m->attributes = zc_json_load(attrs, an, 0, &jerr);
        if (!m->attributes || !json_is_object(m->attributes)) {
            rc = zc__err(ZC_EFORMAT, ".zattrs: invalid JSON object (line %d: %s)", jerr.line, jerr.text);
            goto out;
        }
    } else {
        m->attributes = json_object();
    }
    rc = zarr_meta_validate(m);
out:
    json_decref(doc);
    if (rc < 0) zarr_meta_free(m);
    return rc;
}

json_t *zarr_meta_to_json_v2(const zarr_meta *m)
{
    char typestr[32];
    dtype_t dt = m->dtype;
    json_t *filters = json_array(), *compressor = json_null();
    size_t i;
    json_t *c;
    json_array_foreach(m->codecs, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (name && !strcmp(name, "bytes")) {
            const char *e = json_string_value(json_object_get(json_object_get(c, "configuration"), "endian"));
            if (e) dt.endian = !strcmp(e, "big") ? '>' : '<';
        } else if (json_object_get(c, "id")) {
            json_array_append(filters, c);
        }
    }
    /* the last numcodecs entry is the compressor */
    size_t nf = json_array_size(filters);
    if (nf) {
        json_decref(compressor);
        compressor = json_incref(json_array_get(filters, nf - 1));
        json_array_remove(filters, nf - 1);
    }
    if (json_array_size(filters) == 0) {
        json_decref(filters);
        filters = json_null();
    }
    dtype_to_v2(&dt, typestr, sizeof typestr);
    json_t *shape = json_array(), *chunks = json_array();
    for (int d = 0; d < m->ndim; d++) {
        json_array_append_new(shape, json_integer(m->shape[d]));
        json_array_append_new(chunks, json_integer(m->chunks[d]));
    }
    char sep[2] = {m->separator ? m->separator : '.', 0};
    char order[2] = {m->order ? m->order : 'C', 0};
    return json_pack("{s:i, s:o, s:o, s:s, s:o, s:s, s:o, s:o, s:s}", "zarr_format", 2, "shape", shape,
                     "chunks", chunks, "dtype", typestr, "fill_value",
                     dtype_fill_json(&m->dtype, m->fill, m->fill_null, 2), "order", order,
                     "compressor", compressor, "filters", filters, "dimension_separator", sep);
}
