/* python/src/create.c — creation functions: arrays from buffers, constants,
 * ranges, random numbers, *_like. */
#include "zcpy.h"

/* Optional chunks: None -> NULL. */
static int conv_chunks(PyObject *o, void *out)
{
    zcpy_ints64 *c = out;
    c->n = -1;
    if (o == Py_None) return 1;
    return zcpy_conv_ints64(o, c);
}

static const int64_t *chunks_ptr(const zcpy_ints64 *c) { return c->n < 0 ? NULL : c->v; }

static int check_chunks(const zcpy_ints64 *c, int ndim)
{
    if (c->n >= 0 && c->n != ndim) {
        PyErr_Format(PyExc_ValueError, "chunks has %d entries for %d dimensions", c->n, ndim);
        return 0;
    }
    return 1;
}

/* asarray(buffer, dtype, shape, chunks): the buffer is C-contiguous, native order. */
static PyObject *asarray(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    int dt;
    zcpy_ints64 shape, chunks;
    if (!PyArg_ParseTuple(args, "y*iO&O&", &buf, &dt, zcpy_conv_ints64, &shape, conv_chunks, &chunks)) return NULL;
    if (!PyBuffer_IsContiguous(&buf, 'C') || !check_chunks(&chunks, shape.n)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "asarray: buffer not C-contiguous");
        PyBuffer_Release(&buf);
        return NULL;
    }
    zc_array *out = NULL;
    int rc;
    ZCPY_CALL(rc, zc_asarray(buf.buf, (zc_dtype)dt, shape.n, shape.v, chunks_ptr(&chunks), &out));
    PyBuffer_Release(&buf);
    return zcpy_node_result(rc, out);
}

static PyObject *full(PyObject *self, PyObject *args)
{
    zcpy_ints64 shape, chunks;
    int dt;
    double v;
    if (!PyArg_ParseTuple(args, "O&O&id", zcpy_conv_ints64, &shape, conv_chunks, &chunks, &dt, &v)) return NULL;
    if (!check_chunks(&chunks, shape.n)) return NULL;
    zc_array *out = NULL;
    int rc;
    ZCPY_CALL(rc, zc_full(shape.n, shape.v, chunks_ptr(&chunks), (zc_dtype)dt, v, &out));
    return zcpy_node_result(rc, out);
}

static PyObject *arange(PyObject *self, PyObject *args)
{
    double start, stop, step;
    int dt;
    long long chunk;
    if (!PyArg_ParseTuple(args, "dddiL", &start, &stop, &step, &dt, &chunk)) return NULL;
    zc_array *out = NULL;
    int rc;
    ZCPY_CALL(rc, zc_arange(start, stop, step, (zc_dtype)dt, chunk, &out));
    return zcpy_node_result(rc, out);
}

static PyObject *linspace(PyObject *self, PyObject *args)
{
    double start, stop;
    long long num, chunk;
    int endpoint, dt;
    if (!PyArg_ParseTuple(args, "ddLpiL", &start, &stop, &num, &endpoint, &dt, &chunk)) return NULL;
    zc_array *out = NULL;
    int rc;
    ZCPY_CALL(rc, zc_linspace(start, stop, num, endpoint, (zc_dtype)dt, chunk, &out));
    return zcpy_node_result(rc, out);
}

static PyObject *eye(PyObject *self, PyObject *args)
{
    long long n, m, k;
    int dt;
    zcpy_ints64 chunks;
    if (!PyArg_ParseTuple(args, "LLLiO&", &n, &m, &k, &dt, conv_chunks, &chunks)) return NULL;
    if (!check_chunks(&chunks, 2)) return NULL;
    zc_array *out = NULL;
    int rc;
    ZCPY_CALL(rc, zc_eye(n, m, k, (zc_dtype)dt, chunks_ptr(&chunks), &out));
    return zcpy_node_result(rc, out);
}

/* random(kind, seed, shape, chunks, dtype, a, b): kind "uniform" (low, high) or "normal" (mean, std). */
static PyObject *random_(PyObject *self, PyObject *args)
{
    const char *kind;
    unsigned long long seed;
    zcpy_ints64 shape, chunks;
    int dt;
    double a, b;
    if (!PyArg_ParseTuple(args, "sKO&O&idd", &kind, &seed, zcpy_conv_ints64, &shape, conv_chunks, &chunks, &dt, &a,
                          &b))
        return NULL;
    if (!check_chunks(&chunks, shape.n)) return NULL;
    int normal = strcmp(kind, "normal") == 0;
    if (!normal && strcmp(kind, "uniform") != 0) {
        PyErr_Format(PyExc_ValueError, "random: unknown kind '%s'", kind);
        return NULL;
    }
    zc_array *out = NULL;
    int rc;
    if (normal)
        ZCPY_CALL(rc, zc_random_normal(seed, shape.n, shape.v, chunks_ptr(&chunks), (zc_dtype)dt, a, b, &out));
    else
        ZCPY_CALL(rc, zc_random_uniform(seed, shape.n, shape.v, chunks_ptr(&chunks), (zc_dtype)dt, a, b, &out));
    return zcpy_node_result(rc, out);
}

static PyObject *scalar(PyObject *self, PyObject *args)
{
    double v;
    int is_int;
    if (!PyArg_ParseTuple(args, "dp", &v, &is_int)) return NULL;
    zc_array *out = NULL;
    int rc;
    ZCPY_CALL(rc, zc_scalar(v, is_int, &out));
    return zcpy_node_result(rc, out);
}

/* like(kind, node, dtype, value): kind zeros, ones, empty, full. */
static PyObject *like(PyObject *self, PyObject *args)
{
    const char *kind;
    zc_array *x;
    int dt;
    double v = 0;
    if (!PyArg_ParseTuple(args, "sO&i|d", &kind, zcpy_conv_node, &x, &dt, &v)) return NULL;
    zc_array *out = NULL;
    int rc;
    if (!strcmp(kind, "zeros"))
        ZCPY_CALL(rc, zc_zeros_like(x, (zc_dtype)dt, &out));
    else if (!strcmp(kind, "ones"))
        ZCPY_CALL(rc, zc_ones_like(x, (zc_dtype)dt, &out));
    else if (!strcmp(kind, "empty"))
        ZCPY_CALL(rc, zc_empty_like(x, (zc_dtype)dt, &out));
    else if (!strcmp(kind, "full"))
        ZCPY_CALL(rc, zc_full_like(x, v, (zc_dtype)dt, &out));
    else {
        PyErr_Format(PyExc_ValueError, "like: unknown kind '%s'", kind);
        return NULL;
    }
    return zcpy_node_result(rc, out);
}

PyMethodDef zcpy_create_methods[] = {
    {"asarray", asarray, METH_VARARGS, "asarray(buffer, dtype, shape, chunks|None) -> Node (a copy)"},
    {"full", full, METH_VARARGS, "full(shape, chunks|None, dtype, value) -> Node"},
    {"arange", arange, METH_VARARGS, "arange(start, stop, step, dtype, chunk) -> Node"},
    {"linspace", linspace, METH_VARARGS, "linspace(start, stop, num, endpoint, dtype, chunk) -> Node"},
    {"eye", eye, METH_VARARGS, "eye(n, m, k, dtype, chunks|None) -> Node"},
    {"random", random_, METH_VARARGS, "random(kind, seed, shape, chunks|None, dtype, a, b) -> Node"},
    {"scalar", scalar, METH_VARARGS, "scalar(value, is_integer) -> Node (weak dtype)"},
    {"like", like, METH_VARARGS, "like(kind, node, dtype[, value]) -> Node"},
    {NULL, NULL, 0, NULL},
};
