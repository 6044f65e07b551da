/* python/src/store.c — Store and Zarr handles (zc_store, zc_zarr) and groups. */
#include "zcpy.h"

/* ---- Store ---- */

static int store_init(zcpy_store *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"url", "flags", NULL};
    const char *url;
    unsigned flags = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|I", kwlist, &url, &flags)) return -1;
    if (self->s) {
        PyErr_SetString(PyExc_RuntimeError, "store already open");
        return -1;
    }
    int rc;
    ZCPY_CALL(rc, zc_store_open(url, flags, &self->s));
    if (rc < 0) {
        zcpy_raise(rc);
        return -1;
    }
    return 0;
}

static void store_dealloc(zcpy_store *self)
{
    zc_store_close(self->s);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyTypeObject zcpy_store_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zcube._zcube.Store",
    .tp_basicsize = sizeof(zcpy_store),
    .tp_dealloc = (destructor)store_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Store(url, flags=0): a zc_store (local path, file://, memory://).",
    .tp_init = (initproc)store_init,
    .tp_new = PyType_GenericNew,
};

static int conv_store(PyObject *o, void *out)
{
    if (!PyObject_TypeCheck(o, &zcpy_store_type) || !((zcpy_store *)o)->s) {
        PyErr_SetString(PyExc_TypeError, "expected an open _zcube.Store");
        return 0;
    }
    *(zcpy_store **)out = (zcpy_store *)o;
    return 1;
}

/* ---- Zarr ---- */

static void zarr_dealloc(zcpy_zarr *self)
{
    zc_zarr_close(self->z);
    Py_XDECREF(self->store);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *zarr_wrap(zcpy_store *st, zc_zarr *z)
{
    zcpy_zarr *self = PyObject_New(zcpy_zarr, &zcpy_zarr_type);
    if (!self) {
        zc_zarr_close(z);
        return NULL;
    }
    self->z = z;
    self->store = Py_NewRef((PyObject *)st);
    return (PyObject *)self;
}

static PyObject *zarr_open(PyObject *self, PyObject *args)
{
    zcpy_store *st;
    const char *path;
    if (!PyArg_ParseTuple(args, "O&s", conv_store, &st, &path)) return NULL;
    zc_zarr *z = NULL;
    int rc;
    ZCPY_CALL(rc, zc_zarr_open(st->s, path, &z));
    if (rc < 0) return zcpy_raise(rc);
    return zarr_wrap(st, z);
}

static int opt_int(PyObject *d, const char *key, int *v)
{
    PyObject *o = PyDict_GetItemString(d, key);
    if (!o || o == Py_None) return 0;
    long x = PyLong_AsLong(o);
    if (x == -1 && PyErr_Occurred()) return -1;
    *v = (int)x;
    return 0;
}

static int opt_str(PyObject *d, const char *key, const char **v)
{
    PyObject *o = PyDict_GetItemString(d, key);
    if (!o || o == Py_None) return 0;
    *v = PyUnicode_AsUTF8(o);
    return *v ? 0 : -1;
}

static int opt_shape(PyObject *d, const char *key, int64_t *v, int ndim)
{
    PyObject *o = PyDict_GetItemString(d, key);
    if (!o || o == Py_None) return 0;
    zcpy_ints64 s;
    if (!zcpy_conv_ints64(o, &s)) return -1;
    if (s.n != ndim) {
        PyErr_Format(PyExc_ValueError, "%s has %d entries for %d dimensions", key, s.n, ndim);
        return -1;
    }
    memcpy(v, s.v, (size_t)ndim * sizeof *v);
    return 0;
}

/* create(store, path, opts): opts has shape, chunks, shards, dtype (code), itemsize,
 * zarr_format, codec, fill_value, order, separator, overwrite, write_empty_chunks,
 * attributes, dimension_names (JSON texts). */
static PyObject *zarr_create(PyObject *self, PyObject *args)
{
    zcpy_store *st;
    const char *path;
    PyObject *d;
    if (!PyArg_ParseTuple(args, "O&sO!", conv_store, &st, &path, &PyDict_Type, &d)) return NULL;
    zc_zarr_create_opts o = ZC_ZARR_CREATE_INIT;
    zcpy_ints64 shape;
    PyObject *so = PyDict_GetItemString(d, "shape");
    if (!so || !zcpy_conv_ints64(so, &shape)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "create: shape missing");
        return NULL;
    }
    o.ndim = shape.n;
    memcpy(o.shape, shape.v, sizeof o.shape);
    int dt = 0, order = 'C', sep = 0, itemsize = 0;
    const char *order_s = NULL, *sep_s = NULL;
    if (opt_shape(d, "chunks", o.chunks, o.ndim) || opt_shape(d, "shards", o.shards, o.ndim) ||
        opt_int(d, "dtype", &dt) || opt_int(d, "itemsize", &itemsize) || opt_int(d, "zarr_format", &o.zarr_format) ||
        opt_str(d, "codec", &o.codec) || opt_str(d, "fill_value", &o.fill_value) || opt_str(d, "order", &order_s) ||
        opt_str(d, "separator", &sep_s) || opt_int(d, "overwrite", &o.overwrite) ||
        opt_int(d, "write_empty_chunks", &o.write_empty_chunks) || opt_str(d, "attributes", &o.attributes) ||
        opt_str(d, "dimension_names", &o.dimension_names))
        return NULL;
    if (order_s) order = order_s[0];
    if (sep_s) sep = sep_s[0];
    o.dtype = (zc_dtype)dt;
    o.itemsize = (size_t)itemsize;
    o.order = (char)order;
    o.separator = (char)sep;
    zc_zarr *z = NULL;
    int rc;
    ZCPY_CALL(rc, zc_zarr_create(st->s, path, &o, &z));
    if (rc < 0) return zcpy_raise(rc);
    return zarr_wrap(st, z);
}

static PyObject *zarr_info(zcpy_zarr *self, PyObject *unused)
{
    zc_zarr_info_t in;
    int rc;
    ZCPY_CALL(rc, zc_zarr_info(self->z, &in));
    if (rc < 0) return zcpy_raise(rc);
    int sharded = 0;
    for (int d = 0; d < in.ndim; d++) sharded |= in.shards[d] != 0;
    return Py_BuildValue("{s:i,s:N,s:N,s:N,s:i,s:n,s:C}", "zarr_format", in.zarr_format, "shape",
                         zcpy_tuple64(in.ndim, in.shape), "chunks", zcpy_tuple64(in.ndim, in.chunks), "shards",
                         sharded ? zcpy_tuple64(in.ndim, in.shards) : Py_NewRef(Py_None), "dtype", (int)in.dtype,
                         "itemsize", (Py_ssize_t)in.itemsize, "order", in.order);
}

static PyObject *json_result(int rc, char *json)
{
    if (rc < 0) return zcpy_raise(rc);
    PyObject *s = PyUnicode_FromString(json);
    zc_free(json);
    return s;
}

static PyObject *zarr_metadata_json(zcpy_zarr *self, PyObject *unused)
{
    char *json = NULL;
    int rc;
    ZCPY_CALL(rc, zc_zarr_metadata_json(self->z, &json));
    return json_result(rc, json);
}

/* Selection: None or a sequence of (start, stop, step). */
static int conv_sel(PyObject *o, zc_range *sel, const zc_range **out)
{
    if (o == Py_None) {
        *out = NULL;
        return 1;
    }
    PyObject *seq = PySequence_Fast(o, "selection: expected a sequence of (start, stop, step)");
    if (!seq) return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > ZC_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "selection: too many dimensions");
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long a, b, c;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "LLL", &a, &b, &c)) {
            Py_DECREF(seq);
            return 0;
        }
        sel[i] = (zc_range){a, b, c};
    }
    Py_DECREF(seq);
    *out = sel;
    return 1;
}

/* read(sel, writable buffer) or write(sel, buffer): one hyperslab. */
static PyObject *zarr_io(zcpy_zarr *self, PyObject *args, int write)
{
    PyObject *so;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, write ? "Oy*" : "Ow*", &so, &buf)) return NULL;
    zc_range sel[ZC_MAX_DIMS];
    const zc_range *s;
    if (!conv_sel(so, sel, &s)) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    int rc;
    if (write)
        ZCPY_CALL(rc, zc_zarr_write(self->z, s, buf.buf, (size_t)buf.len));
    else
        ZCPY_CALL(rc, zc_zarr_read(self->z, s, buf.buf, (size_t)buf.len));
    PyBuffer_Release(&buf);
    if (rc < 0) return zcpy_raise(rc);
    Py_RETURN_NONE;
}

static PyObject *zarr_read(zcpy_zarr *self, PyObject *args) { return zarr_io(self, args, 0); }
static PyObject *zarr_write(zcpy_zarr *self, PyObject *args) { return zarr_io(self, args, 1); }

static PyObject *zarr_set_threads(zcpy_zarr *self, PyObject *arg)
{
    int n = PyLong_AsLong(arg), rc;
    if (n == -1 && PyErr_Occurred()) return NULL;
    ZCPY_CALL(rc, zc_zarr_set_threads(self->z, n));
    if (rc < 0) return zcpy_raise(rc);
    Py_RETURN_NONE;
}

static PyObject *zarr_io_stats(zcpy_zarr *self, PyObject *unused)
{
    zc_zarr_io_stats_t s;
    int rc;
    ZCPY_CALL(rc, zc_zarr_io_stats(self->z, &s));
    if (rc < 0) return zcpy_raise(rc);
    return Py_BuildValue("{s:L,s:L,s:L,s:L}", "chunks_read", (long long)s.chunks_read, "bytes_read",
                         (long long)s.bytes_read, "index_hits", (long long)s.index_hits, "index_misses",
                         (long long)s.index_misses);
}

static PyMethodDef zarr_methods[] = {
    {"info", (PyCFunction)zarr_info, METH_NOARGS, "metadata summary as a dict"},
    {"metadata_json", (PyCFunction)zarr_metadata_json, METH_NOARGS, "normalized metadata (JSON text)"},
    {"read", (PyCFunction)zarr_read, METH_VARARGS, "read(sel, buffer): hyperslab into a writable buffer"},
    {"write", (PyCFunction)zarr_write, METH_VARARGS, "write(sel, buffer): hyperslab from a buffer"},
    {"set_threads", (PyCFunction)zarr_set_threads, METH_O, "threads for reads and writes (0 = all)"},
    {"io_stats", (PyCFunction)zarr_io_stats, METH_NOARGS, "IO counters"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject zcpy_zarr_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zcube._zcube.Zarr",
    .tp_basicsize = sizeof(zcpy_zarr),
    .tp_dealloc = (destructor)zarr_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An open stored array (zc_zarr); see zarr_open / zarr_create.",
    .tp_methods = zarr_methods,
};

/* ---- groups ---- */

static PyObject *node_kind_at(PyObject *self, PyObject *args)
{
    zcpy_store *st;
    const char *path;
    if (!PyArg_ParseTuple(args, "O&s", conv_store, &st, &path)) return NULL;
    zc_node_kind kind = ZC_NODE_NONE;
    int fmt = 0, rc;
    ZCPY_CALL(rc, zc_node_kind_at(st->s, path, &kind, &fmt));
    if (rc < 0) return zcpy_raise(rc);
    return Py_BuildValue("(ii)", (int)kind, fmt);
}

static int walk_fn(const char *path, zc_node_kind kind, int fmt, void *ctx)
{
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *t = Py_BuildValue("(sii)", path, (int)kind, fmt);
    int rc = t && PyList_Append(ctx, t) == 0 ? 0 : 1;
    Py_XDECREF(t);
    PyGILState_Release(g);
    return rc;
}

static PyObject *group_walk(PyObject *self, PyObject *args)
{
    zcpy_store *st;
    const char *path;
    if (!PyArg_ParseTuple(args, "O&s", conv_store, &st, &path)) return NULL;
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    int rc;
    ZCPY_CALL(rc, zc_group_walk(st->s, path, walk_fn, list));
    if (PyErr_Occurred()) {
        Py_DECREF(list);
        return NULL;
    }
    if (rc < 0) {
        Py_DECREF(list);
        return zcpy_raise(rc);
    }
    return list;
}

static PyObject *group_create(PyObject *self, PyObject *args)
{
    zcpy_store *st;
    const char *path;
    int fmt = 3, rc;
    if (!PyArg_ParseTuple(args, "O&s|i", conv_store, &st, &path, &fmt)) return NULL;
    ZCPY_CALL(rc, zc_group_create(st->s, path, fmt));
    if (rc < 0) return zcpy_raise(rc);
    Py_RETURN_NONE;
}

static PyObject *from_zarr(PyObject *self, PyObject *args)
{
    zcpy_store *st;
    const char *path;
    if (!PyArg_ParseTuple(args, "O&s", conv_store, &st, &path)) return NULL;
    zc_array *out = NULL;
    int rc;
    ZCPY_CALL(rc, zc_from_zarr(st->s, path, &out));
    return zcpy_node_result(rc, out);
}

PyMethodDef zcpy_store_methods[] = {
    {"zarr_open", zarr_open, METH_VARARGS, "zarr_open(store, path) -> Zarr"},
    {"zarr_create", zarr_create, METH_VARARGS, "zarr_create(store, path, opts) -> Zarr"},
    {"node_kind_at", node_kind_at, METH_VARARGS, "(kind, zarr_format) at path: 0 none, 1 group, 2 array"},
    {"group_walk", group_walk, METH_VARARGS, "[(path, kind, zarr_format)] below path"},
    {"group_create", group_create, METH_VARARGS, "group_create(store, path, zarr_format=3)"},
    {"from_zarr", from_zarr, METH_VARARGS, "from_zarr(store, path) -> Node"},
    {NULL, NULL, 0, NULL},
};
