/* python/src/ops.c — elementwise functions, reductions, indexing and
 * manipulation over Nodes. */
#include "zcpy.h"

/* An axis: int, or None = ZC_AXIS_NONE. */
static int conv_axis(PyObject *o, void *out)
{
    if (o == Py_None) {
        *(int *)out = ZC_AXIS_NONE;
        return 1;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return 0;
    if (v < INT_MIN + 1 || v > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "axis %ld out of range", v);
        return 0;
    }
    *(int *)out = (int)v;
    return 1;
}

static PyObject *elementwise(PyObject *self, PyObject *args)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n < 2 || n > 4) {
        PyErr_SetString(PyExc_TypeError, "elementwise(name, x1[, x2[, x3]])");
        return NULL;
    }
    const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 0));
    if (!name) return NULL;
    zc_array *in[3];
    for (Py_ssize_t i = 1; i < n; i++)
        if (!zcpy_conv_node(PyTuple_GET_ITEM(args, i), &in[i - 1])) return NULL;
    zc_array *out = NULL;
    int rc;
    ZCPY_CALL(rc, zc_elementwise(name, (int)n - 1, in, &out));
    return zcpy_node_result(rc, out);
}

/* elementwise_info() -> [(name, nargs), ...]: the functions elementwise takes (zc_elementwise_info) */
static PyObject *elementwise_info(PyObject *self, PyObject *unused)
{
    PyObject *list = PyList_New(0);
    const char *name;
    int nargs;
    for (int i = 0; list && zc_elementwise_info(i, &name, &nargs) == 0; i++) {
        PyObject *t = Py_BuildValue("(si)", name, nargs);
        if (!t || PyList_Append(list, t) < 0) Py_CLEAR(list);
        Py_XDECREF(t);
    }
    return list;
}

static PyObject *astype(PyObject *self, PyObject *args)
{
    zc_array *x, *out = NULL;
    int dt, rc;
    if (!PyArg_ParseTuple(args, "O&i", zcpy_conv_node, &x, &dt)) return NULL;
    ZCPY_CALL(rc, zc_astype(x, (zc_dtype)dt, &out));
    return zcpy_node_result(rc, out);
}

static PyObject *reduce(PyObject *self, PyObject *args)
{
    const char *name;
    zc_array *x, *out = NULL;
    zcpy_ints axes;
    int keepdims, rc;
    double ddof;
    if (!PyArg_ParseTuple(args, "sO&O&pd", &name, zcpy_conv_node, &x, zcpy_conv_ints, &axes, &keepdims, &ddof))
        return NULL;
    ZCPY_CALL(rc, zc_reduce(name, x, axes.v, axes.n, keepdims, ddof, &out));
    return zcpy_node_result(rc, out);
}

/* getitem(node, [entry]): entry ("slice", start|None, stop|None, step), ("int", i),
 * ("newaxis",), ("ellipsis",). */
static PyObject *getitem(PyObject *self, PyObject *args)
{
    zc_array *x, *out = NULL;
    PyObject *key;
    if (!PyArg_ParseTuple(args, "O&O", zcpy_conv_node, &x, &key)) return NULL;
    PyObject *seq = PySequence_Fast(key, "getitem: expected a list of index entries");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > 2 * ZC_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_IndexError, "too many indices");
        return NULL;
    }
    zc_index idx[2 * ZC_MAX_DIMS];
    memset(idx, 0, sizeof idx);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PySequence_Fast_GET_ITEM(seq, i), *a = Py_None, *b = Py_None;
        const char *kind;
        long long step = 1, ix = 0;
        if (!PyArg_ParseTuple(e, "s|OOL", &kind, &a, &b, &step)) goto fail;
        if (!strcmp(kind, "slice")) {
            idx[i].kind = ZC_IDX_SLICE;
            idx[i].step = step;
            if ((idx[i].has_start = a != Py_None)) {
                idx[i].start = PyLong_AsLongLong(a);
                if (PyErr_Occurred()) goto fail;
            }
            if ((idx[i].has_stop = b != Py_None)) {
                idx[i].stop = PyLong_AsLongLong(b);
                if (PyErr_Occurred()) goto fail;
            }
        } else if (!strcmp(kind, "int")) {
            idx[i].kind = ZC_IDX_INT;
            ix = PyLong_AsLongLong(a);
            if (PyErr_Occurred()) goto fail;
            idx[i].index = ix;
        } else if (!strcmp(kind, "newaxis")) {
            idx[i].kind = ZC_IDX_NEWAXIS;
        } else if (!strcmp(kind, "ellipsis")) {
            idx[i].kind = ZC_IDX_ELLIPSIS;
        } else {
            PyErr_Format(PyExc_ValueError, "getitem: unknown entry kind '%s'", kind);
            goto fail;
        }
    }
    Py_DECREF(seq);
    int rc;
    ZCPY_CALL(rc, zc_getitem(x, idx, (int)n, &out));
    return zcpy_node_result(rc, out);
fail:
    Py_DECREF(seq);
    return NULL;
}

static PyObject *rechunk(PyObject *self, PyObject *args)
{
    zc_array *x, *out = NULL;
    zcpy_ints64 c;
    int rc;
    if (!PyArg_ParseTuple(args, "O&O&", zcpy_conv_node, &x, zcpy_conv_ints64, &c)) return NULL;
    int ndim = 0;
    ZCPY_CALL(rc, zc_array_info(x, &ndim, NULL, NULL, NULL));
    if (rc == 0 && ndim != c.n) {
        PyErr_Format(PyExc_ValueError, "rechunk: %d chunk sizes for %d dimensions", c.n, ndim);
        return NULL;
    }
    ZCPY_CALL(rc, zc_rechunk(x, c.v, &out));
    return zcpy_node_result(rc, out);
}

/* shape_op(kind, node, ints): reshape (shape), broadcast_to (shape), tile (reps). */
static PyObject *shape_op(PyObject *self, PyObject *args)
{
    const char *kind;
    zc_array *x, *out = NULL;
    zcpy_ints64 s;
    int rc;
    if (!PyArg_ParseTuple(args, "sO&O&", &kind, zcpy_conv_node, &x, zcpy_conv_ints64, &s)) return NULL;
    if (!strcmp(kind, "reshape"))
        ZCPY_CALL(rc, zc_reshape(x, s.n, s.v, &out));
    else if (!strcmp(kind, "broadcast_to"))
        ZCPY_CALL(rc, zc_broadcast_to(x, s.n, s.v, &out));
    else if (!strcmp(kind, "tile"))
        ZCPY_CALL(rc, zc_tile(x, s.v, s.n, &out));
    else {
        PyErr_Format(PyExc_ValueError, "shape_op: unknown '%s'", kind);
        return NULL;
    }
    return zcpy_node_result(rc, out);
}

/* axes_op(kind, node, axes): permute_dims, squeeze, flip. */
static PyObject *axes_op(PyObject *self, PyObject *args)
{
    const char *kind;
    zc_array *x, *out = NULL;
    zcpy_ints ax;
    int rc;
    if (!PyArg_ParseTuple(args, "sO&O&", &kind, zcpy_conv_node, &x, zcpy_conv_ints, &ax)) return NULL;
    if (!strcmp(kind, "permute_dims"))
        ZCPY_CALL(rc, zc_permute_dims(x, ax.v, ax.n, &out));
    else if (!strcmp(kind, "squeeze"))
        ZCPY_CALL(rc, zc_squeeze(x, ax.v, ax.n, &out));
    else if (!strcmp(kind, "flip"))
        ZCPY_CALL(rc, zc_flip(x, ax.v, ax.n, &out));
    else {
        PyErr_Format(PyExc_ValueError, "axes_op: unknown '%s'", kind);
        return NULL;
    }
    return zcpy_node_result(rc, out);
}

static PyObject *moveaxis(PyObject *self, PyObject *args)
{
    zc_array *x, *out = NULL;
    zcpy_ints s, d;
    int rc;
    if (!PyArg_ParseTuple(args, "O&O&O&", zcpy_conv_node, &x, zcpy_conv_ints, &s, zcpy_conv_ints, &d)) return NULL;
    if (s.n != d.n) {
        PyErr_SetString(PyExc_ValueError, "moveaxis: source and destination must have the same number of axes");
        return NULL;
    }
    ZCPY_CALL(rc, zc_moveaxis(x, s.v, d.v, s.n, &out));
    return zcpy_node_result(rc, out);
}

/* isin(node, node, invert) -> Node */
static PyObject *isin(PyObject *self, PyObject *args)
{
    zc_array *x, *t, *out = NULL;
    int invert, rc;
    if (!PyArg_ParseTuple(args, "O&O&p", zcpy_conv_node, &x, zcpy_conv_node, &t, &invert)) return NULL;
    ZCPY_CALL(rc, zc_isin(x, t, invert, &out));
    return zcpy_node_result(rc, out);
}

/* kind(node, int): matrix_transpose (ignored), expand_dims (axis), tril/triu (k), repeat (axis, repeats). */
static PyObject *int_op(PyObject *self, PyObject *args)
{
    const char *kind;
    zc_array *x, *out = NULL;
    long long k = 0, r = 0;
    int rc;
    if (!PyArg_ParseTuple(args, "sO&|LL", &kind, zcpy_conv_node, &x, &k, &r)) return NULL;
    if (!strcmp(kind, "matrix_transpose"))
        ZCPY_CALL(rc, zc_matrix_transpose(x, &out));
    else if (!strcmp(kind, "expand_dims"))
        ZCPY_CALL(rc, zc_expand_dims(x, (int)k, &out));
    else if (!strcmp(kind, "tril"))
        ZCPY_CALL(rc, zc_tril(x, k, &out));
    else if (!strcmp(kind, "triu"))
        ZCPY_CALL(rc, zc_triu(x, k, &out));
    else {
        PyErr_Format(PyExc_ValueError, "int_op: unknown '%s'", kind);
        return NULL;
    }
    return zcpy_node_result(rc, out);
}

static PyObject *repeat(PyObject *self, PyObject *args)
{
    zc_array *x, *out = NULL;
    long long r;
    int axis, rc;
    if (!PyArg_ParseTuple(args, "O&LO&", zcpy_conv_node, &x, &r, conv_axis, &axis)) return NULL;
    ZCPY_CALL(rc, zc_repeat(x, r, axis, &out));
    return zcpy_node_result(rc, out);
}

static PyObject *join(PyObject *self, PyObject *args)
{
    const char *kind;
    PyObject *seq;
    int axis, n, rc;
    zc_array **v, *out = NULL;
    if (!PyArg_ParseTuple(args, "sOO&", &kind, &seq, conv_axis, &axis)) return NULL;
    if (!zcpy_nodes(seq, &v, &n)) return NULL;
    if (!strcmp(kind, "concat"))
        ZCPY_CALL(rc, zc_concat(n, v, axis, &out));
    else if (!strcmp(kind, "stack"))
        ZCPY_CALL(rc, zc_stack(n, v, axis, &out));
    else {
        PyMem_Free(v);
        PyErr_Format(PyExc_ValueError, "join: unknown '%s'", kind);
        return NULL;
    }
    PyMem_Free(v);
    return zcpy_node_result(rc, out);
}

static PyObject *roll(PyObject *self, PyObject *args)
{
    zc_array *x, *out = NULL;
    zcpy_ints64 s;
    zcpy_ints ax;
    int rc;
    if (!PyArg_ParseTuple(args, "O&O&O&", zcpy_conv_node, &x, zcpy_conv_ints64, &s, zcpy_conv_ints, &ax)) return NULL;
    ZCPY_CALL(rc, zc_roll(x, s.v, s.n, ax.v, ax.n, &out));
    return zcpy_node_result(rc, out);
}

/* take(node, int64 buffer, axis) */
static PyObject *take(PyObject *self, PyObject *args)
{
    zc_array *x, *out = NULL;
    Py_buffer b;
    int axis, rc;
    if (!PyArg_ParseTuple(args, "O&y*O&", zcpy_conv_node, &x, &b, conv_axis, &axis)) return NULL;
    if (b.len % 8) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "take: indices must be an int64 buffer");
        return NULL;
    }
    ZCPY_CALL(rc, zc_take(x, b.buf, b.len / 8, axis, &out));
    PyBuffer_Release(&b);
    return zcpy_node_result(rc, out);
}

static PyObject *diff(PyObject *self, PyObject *args)
{
    zc_array *x, *pre, *app, *out = NULL;
    int axis, n, rc;
    if (!PyArg_ParseTuple(args, "O&iiO&O&", zcpy_conv_node, &x, &axis, &n, zcpy_conv_node_opt, &pre,
                          zcpy_conv_node_opt, &app))
        return NULL;
    ZCPY_CALL(rc, zc_diff(x, axis, n, pre, app, &out));
    return zcpy_node_result(rc, out);
}

/* cumulative(kind, node, axis|None, dtype, include_initial); kind sum or prod */
static PyObject *cumulative(PyObject *self, PyObject *args)
{
    const char *kind;
    zc_array *x, *out = NULL;
    int axis, dt, init, rc;
    if (!PyArg_ParseTuple(args, "sO&O&ip", &kind, zcpy_conv_node, &x, conv_axis, &axis, &dt, &init)) return NULL;
    if (!strcmp(kind, "sum"))
        ZCPY_CALL(rc, zc_cumulative_sum(x, axis, (zc_dtype)dt, init, &out));
    else if (!strcmp(kind, "prod"))
        ZCPY_CALL(rc, zc_cumulative_prod(x, axis, (zc_dtype)dt, init, &out));
    else {
        PyErr_Format(PyExc_ValueError, "cumulative: unknown '%s'", kind);
        return NULL;
    }
    return zcpy_node_result(rc, out);
}

/* sort(node, axis, descending, indices): zc_sort, or zc_argsort when indices */
static PyObject *sort(PyObject *self, PyObject *args)
{
    zc_array *x, *out = NULL;
    int axis, desc, indices, rc;
    if (!PyArg_ParseTuple(args, "O&ipp", zcpy_conv_node, &x, &axis, &desc, &indices)) return NULL;
    if (indices)
        ZCPY_CALL(rc, zc_argsort(x, axis, desc, &out));
    else
        ZCPY_CALL(rc, zc_sort(x, axis, desc, &out));
    return zcpy_node_result(rc, out);
}

/* searchsorted(x1, x2, right, sorter|None) */
static PyObject *searchsorted(PyObject *self, PyObject *args)
{
    zc_array *x1, *x2, *sorter, *out = NULL;
    int right, rc;
    if (!PyArg_ParseTuple(args, "O&O&pO&", zcpy_conv_node, &x1, zcpy_conv_node, &x2, &right, zcpy_conv_node_opt,
                          &sorter))
        return NULL;
    ZCPY_CALL(rc, zc_searchsorted(x1, x2, right, sorter, &out));
    return zcpy_node_result(rc, out);
}

/* take_along_axis(x, indices, axis) */
static PyObject *take_along_axis(PyObject *self, PyObject *args)
{
    zc_array *x, *idx, *out = NULL;
    int axis, rc;
    if (!PyArg_ParseTuple(args, "O&O&i", zcpy_conv_node, &x, zcpy_conv_node, &idx, &axis)) return NULL;
    ZCPY_CALL(rc, zc_take_along_axis(x, idx, axis, &out));
    return zcpy_node_result(rc, out);
}

PyMethodDef zcpy_ops_methods[] = {
    {"elementwise", elementwise, METH_VARARGS, "elementwise(name, x1[, x2[, x3]]) -> Node"},
    {"elementwise_info", elementwise_info, METH_NOARGS, "elementwise_info() -> [(name, nargs), ...]"},
    {"astype", astype, METH_VARARGS, "astype(node, dtype) -> Node"},
    {"reduce", reduce, METH_VARARGS, "reduce(name, node, axes|None, keepdims, ddof) -> Node"},
    {"getitem", getitem, METH_VARARGS, "getitem(node, entries) -> Node"},
    {"rechunk", rechunk, METH_VARARGS, "rechunk(node, chunks) -> Node"},
    {"shape_op", shape_op, METH_VARARGS, "shape_op(kind, node, ints): reshape, broadcast_to, tile -> Node"},
    {"axes_op", axes_op, METH_VARARGS, "axes_op(kind, node, axes|None) -> Node"},
    {"moveaxis", moveaxis, METH_VARARGS, "moveaxis(node, source, destination) -> Node"},
    {"int_op", int_op, METH_VARARGS, "int_op(kind, node[, k]) -> Node"},
    {"isin", isin, METH_VARARGS, "isin(node, test_node, invert) -> Node"},
    {"repeat", repeat, METH_VARARGS, "repeat(node, repeats, axis|None) -> Node"},
    {"join", join, METH_VARARGS, "join(kind, nodes, axis|None) -> Node"},
    {"roll", roll, METH_VARARGS, "roll(node, shifts, axes|None) -> Node"},
    {"take", take, METH_VARARGS, "take(node, int64 buffer, axis|None) -> Node"},
    {"diff", diff, METH_VARARGS, "diff(node, axis, n, prepend|None, append|None) -> Node"},
    {"cumulative", cumulative, METH_VARARGS, "cumulative(kind, node, axis|None, dtype, include_initial) -> Node"},
    {"sort", sort, METH_VARARGS, "sort(node, axis, descending, indices) -> Node (argsort when indices)"},
    {"searchsorted", searchsorted, METH_VARARGS, "searchsorted(x1, x2, right, sorter|None) -> Node"},
    {"take_along_axis", take_along_axis, METH_VARARGS, "take_along_axis(x, indices, axis) -> Node"},
    {NULL, NULL, 0, NULL},
};
