/* python/src/linalg.c — linear algebra over Nodes. */
#include "zcpy.h"

/* A tuple of n result Nodes (rc < 0 raises; releases them on failure). */
static PyObject *results(int rc, int n, zc_array **out)
{
    if (rc < 0) return zcpy_raise(rc);
    PyObject *t = PyTuple_New(n);
    if (!t) {
        for (int i = 0; i < n; i++) zc_array_release(out[i]);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        PyObject *x = zcpy_node_new(out[i]);
        if (!x) {
            for (int j = i + 1; j < n; j++) zc_array_release(out[j]);
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* binary(kind, x1, x2): matmul, outer, solve */
static PyObject *binary(PyObject *self, PyObject *args)
{
    const char *kind;
    zc_array *a, *b, *out = NULL;
    int rc;
    if (!PyArg_ParseTuple(args, "sO&O&", &kind, zcpy_conv_node, &a, zcpy_conv_node, &b)) return NULL;
    if (!strcmp(kind, "matmul"))
        ZCPY_CALL(rc, zc_matmul(a, b, &out));
    else if (!strcmp(kind, "outer"))
        ZCPY_CALL(rc, zc_outer(a, b, &out));
    else if (!strcmp(kind, "solve"))
        ZCPY_CALL(rc, zc_solve(a, b, &out));
    else {
        PyErr_Format(PyExc_ValueError, "binary: unknown '%s'", kind);
        return NULL;
    }
    return zcpy_node_result(rc, out);
}

static PyObject *tensordot(PyObject *self, PyObject *args)
{
    zc_array *a, *b, *out = NULL;
    int naxes, rc;
    zcpy_ints a1, a2;
    if (!PyArg_ParseTuple(args, "O&O&iO&O&", zcpy_conv_node, &a, zcpy_conv_node, &b, &naxes, zcpy_conv_ints, &a1,
                          zcpy_conv_ints, &a2))
        return NULL;
    const int *p1 = a1.n ? a1.v : NULL, *p2 = a2.n ? a2.v : NULL;
    if ((p1 || p2) && (a1.n != naxes || a2.n != naxes)) {
        PyErr_SetString(PyExc_ValueError, "tensordot: both axes lists must have naxes entries");
        return NULL;
    }
    ZCPY_CALL(rc, zc_tensordot(a, b, naxes, p1, p2, &out));
    return zcpy_node_result(rc, out);
}

static PyObject *vecdot(PyObject *self, PyObject *args)
{
    zc_array *a, *b, *out = NULL;
    int axis, rc;
    if (!PyArg_ParseTuple(args, "O&O&i", zcpy_conv_node, &a, zcpy_conv_node, &b, &axis)) return NULL;
    ZCPY_CALL(rc, zc_vecdot(a, b, axis, &out));
    return zcpy_node_result(rc, out);
}

/* decomp(kind, a): qr -> (q, r), svd -> (u, s, vt), svdvals -> (s,), cholesky -> (l,), inv -> (x,),
 * det -> (d,), slogdet -> (sign, logabsdet), eigh -> (w, v), eigvalsh -> (w,) */
static PyObject *decomp(PyObject *self, PyObject *args)
{
    const char *kind;
    zc_array *a, *o[3] = {NULL, NULL, NULL};
    int rc, n;
    if (!PyArg_ParseTuple(args, "sO&", &kind, zcpy_conv_node, &a)) return NULL;
    if (!strcmp(kind, "qr")) {
        n = 2;
        ZCPY_CALL(rc, zc_qr(a, &o[0], &o[1]));
    } else if (!strcmp(kind, "svd")) {
        n = 3;
        ZCPY_CALL(rc, zc_svd(a, &o[0], &o[1], &o[2]));
    } else if (!strcmp(kind, "svdvals")) {
        n = 1;
        ZCPY_CALL(rc, zc_svdvals(a, &o[0]));
    } else if (!strcmp(kind, "cholesky")) {
        n = 1;
        ZCPY_CALL(rc, zc_cholesky(a, &o[0]));
    } else if (!strcmp(kind, "inv")) {
        n = 1;
        ZCPY_CALL(rc, zc_inv(a, &o[0]));
    } else if (!strcmp(kind, "det")) {
        n = 1;
        ZCPY_CALL(rc, zc_det(a, &o[0]));
    } else if (!strcmp(kind, "slogdet")) {
        n = 2;
        ZCPY_CALL(rc, zc_slogdet(a, &o[0], &o[1]));
    } else if (!strcmp(kind, "eigh")) {
        n = 2;
        ZCPY_CALL(rc, zc_eigh(a, &o[0], &o[1]));
    } else if (!strcmp(kind, "eigvalsh")) {
        n = 1;
        ZCPY_CALL(rc, zc_eigh(a, &o[0], NULL));
    } else {
        PyErr_Format(PyExc_ValueError, "decomp: unknown '%s'", kind);
        return NULL;
    }
    return results(rc, n, o);
}

static PyObject *svd_compressed(PyObject *self, PyObject *args)
{
    zc_array *a, *o[3] = {NULL, NULL, NULL};
    long long k, over;
    int iters, rc;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "O&LLiK", zcpy_conv_node, &a, &k, &over, &iters, &seed)) return NULL;
    ZCPY_CALL(rc, zc_svd_compressed(a, k, over, iters, seed, &o[0], &o[1], &o[2]));
    return results(rc, 3, o);
}

static PyObject *lstsq(PyObject *self, PyObject *args)
{
    zc_array *a, *b, *o[4] = {NULL, NULL, NULL, NULL};
    int rc;
    if (!PyArg_ParseTuple(args, "O&O&", zcpy_conv_node, &a, zcpy_conv_node, &b)) return NULL;
    ZCPY_CALL(rc, zc_lstsq(a, b, &o[0], &o[1], &o[2], &o[3]));
    return results(rc, 4, o);
}

/* linalg_ext(kind, x, x2|None, n, d, s, keepdims, axes|None): the library's
 * compositions the namespace uses: diagonal (n = offset), vector_norm (axes,
 * keepdims, d = ord), matrix_norm (s = ord, keepdims), cross (x2, n = axis),
 * matrix_power (n). (matrix_rank and pinv stay in Python: they take stacks,
 * an array rtol and complex matrices the library's 2-D versions do not.) */
static PyObject *linalg_ext(PyObject *self, PyObject *args)
{
    const char *kind, *s;
    PyObject *x2o;
    zc_array *x, *x2 = NULL, *out = NULL;
    long long n;
    double d;
    int keepdims, rc;
    zcpy_ints axes;
    if (!PyArg_ParseTuple(args, "sO&OLdspO&", &kind, zcpy_conv_node, &x, &x2o, &n, &d, &s, &keepdims, zcpy_conv_ints,
                          &axes))
        return NULL;
    if (x2o != Py_None && !zcpy_conv_node(x2o, &x2)) return NULL;
    if (!strcmp(kind, "diagonal")) {
        ZCPY_CALL(rc, zc_diagonal(x, n, &out));
    } else if (!strcmp(kind, "vector_norm")) {
        ZCPY_CALL(rc, zc_vector_norm(x, axes.v, axes.n, keepdims, d, &out));
    } else if (!strcmp(kind, "matrix_norm")) {
        ZCPY_CALL(rc, zc_matrix_norm(x, s, keepdims, &out));
    } else if (!strcmp(kind, "cross") && x2) {
        ZCPY_CALL(rc, zc_cross(x, x2, (int)n, &out));
    } else if (!strcmp(kind, "matrix_power")) {
        ZCPY_CALL(rc, zc_matrix_power(x, n, &out));
    } else {
        PyErr_Format(PyExc_ValueError, "linalg_ext: unknown '%s'", kind);
        return NULL;
    }
    return zcpy_node_result(rc, out);
}

PyMethodDef zcpy_linalg_methods[] = {
    {"linalg_ext", linalg_ext, METH_VARARGS, "linalg_ext(kind, x, x2|None, n, d, s, keepdims, axes|None) -> Node"},
    {"binary", binary, METH_VARARGS, "binary(kind, x1, x2): matmul, outer, solve"},
    {"tensordot", tensordot, METH_VARARGS, "tensordot(x1, x2, naxes, axes1|None, axes2|None)"},
    {"vecdot", vecdot, METH_VARARGS, "vecdot(x1, x2, axis)"},
    {"decomp", decomp, METH_VARARGS, "decomp(kind, a) -> tuple of Nodes"},
    {"svd_compressed", svd_compressed, METH_VARARGS, "svd_compressed(a, k, oversamples, power_iters, seed)"},
    {"lstsq", lstsq, METH_VARARGS, "lstsq(a, b) -> (x, residuals, rank, s)"},
    {NULL, NULL, 0, NULL},
};
