/* python/src/dtype.c — dtype names, promotion and limits. */
#include "zcpy.h"

static PyObject *dtype_name(PyObject *self, PyObject *arg)
{
    long dt = PyLong_AsLong(arg);
    if (dt == -1 && PyErr_Occurred()) return NULL;
    return PyUnicode_FromString(zc_dtype_name((zc_dtype)dt));
}

static PyObject *dtype_parse(PyObject *self, PyObject *arg)
{
    const char *s = PyUnicode_AsUTF8(arg);
    if (!s) return NULL;
    zc_dtype dt;
    size_t size;
    int rc;
    ZCPY_CALL(rc, zc_dtype_parse(s, &dt, &size));
    if (rc < 0) return zcpy_raise(rc);
    return Py_BuildValue("(in)", (int)dt, (Py_ssize_t)size);
}

static PyObject *result_type(PyObject *self, PyObject *arg)
{
    zcpy_ints d;
    if (!zcpy_conv_ints(arg, &d)) return NULL;
    zc_dtype v[ZC_MAX_DIMS], out;
    for (int i = 0; i < d.n; i++) v[i] = (zc_dtype)d.v[i];
    int rc;
    ZCPY_CALL(rc, zc_result_type(d.n, v, &out));
    if (rc < 0) return zcpy_raise(rc);
    return PyLong_FromLong((long)out);
}

static PyObject *can_cast(PyObject *self, PyObject *args)
{
    int a, b, r, rc;
    if (!PyArg_ParseTuple(args, "ii", &a, &b)) return NULL;
    ZCPY_CALL(rc, zc_can_cast((zc_dtype)a, (zc_dtype)b, &r));
    if (rc < 0) return zcpy_raise(rc);
    return PyBool_FromLong(r);
}

static PyObject *finfo(PyObject *self, PyObject *arg)
{
    long dt = PyLong_AsLong(arg);
    if (dt == -1 && PyErr_Occurred()) return NULL;
    zc_finfo_t f;
    int rc;
    ZCPY_CALL(rc, zc_finfo((zc_dtype)dt, &f));
    if (rc < 0) return zcpy_raise(rc);
    return Py_BuildValue("{s:i,s:d,s:d,s:d,s:d,s:i}", "bits", f.bits, "eps", f.eps, "max", f.max, "min", f.min,
                         "smallest_normal", f.smallest_normal, "dtype", (int)f.dtype);
}

static PyObject *iinfo(PyObject *self, PyObject *arg)
{
    long dt = PyLong_AsLong(arg);
    if (dt == -1 && PyErr_Occurred()) return NULL;
    zc_iinfo_t f;
    int rc;
    ZCPY_CALL(rc, zc_iinfo((zc_dtype)dt, &f));
    if (rc < 0) return zcpy_raise(rc);
    return Py_BuildValue("{s:i,s:L,s:K,s:i}", "bits", f.bits, "min", (long long)f.min, "max",
                         (unsigned long long)f.max, "dtype", (int)f.dtype);
}

PyMethodDef zcpy_dtype_methods[] = {
    {"dtype_name", dtype_name, METH_O, "dtype code -> v3 name"},
    {"dtype_parse", dtype_parse, METH_O, "name -> (code, itemsize)"},
    {"result_type", result_type, METH_O, "[codes] -> code"},
    {"can_cast", can_cast, METH_VARARGS, "can_cast(from, to) -> bool"},
    {"finfo", finfo, METH_O, "code -> dict"},
    {"iinfo", iinfo, METH_O, "code -> dict"},
    {NULL, NULL, 0, NULL},
};
