/* python/src/module.c — the _zcube module: errors, argument converters, the
 * Node type (one zc_array reference) and module set-up. */
#include "zcpy.h"

static PyObject *error_factory; /* zcube._errors.make(code, name, message[, projected, allowed, fits]) */

/* Raise the factory's exception; a memory-bound refusal's figures (fig) go with
 * it, and the smallest allowed_mem that fits (0: not known). */
static PyObject *raise_exc(int rc, const char *msg, int fig, size_t projected, size_t allowed, size_t fits)
{
    if (!error_factory) {
        PyErr_Format(PyExc_RuntimeError, "%s: %s", zc_errname(rc), msg);
        return NULL;
    }
    PyObject *exc = fig ? PyObject_CallFunction(error_factory, "issKKK", rc, zc_errname(rc), msg,
                                                (unsigned long long)projected, (unsigned long long)allowed,
                                                (unsigned long long)fits)
                        : PyObject_CallFunction(error_factory, "iss", rc, zc_errname(rc), msg);
    if (!exc) return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *zcpy_raise_msg(int rc, const char *msg) { return raise_exc(rc, msg, 0, 0, 0, 0); }

PyObject *zcpy_raise(int rc)
{
    char msg[2048];
    size_t projected = 0, allowed = 0, fits = 0;
    int fig = rc == ZC_EMEMBOUND && zc_errmem(&projected, &allowed);
    if (fig) zc_errmem_fit(&fits);
    zc_errmsg_r(msg, sizeof msg);
    if (!msg[0]) snprintf(msg, sizeof msg, "%s", zc_strerror(rc));
    return raise_exc(rc, msg, fig, projected, allowed, fits);
}

static PyObject *set_error_factory(PyObject *self, PyObject *f)
{
    Py_XSETREF(error_factory, Py_NewRef(f));
    Py_RETURN_NONE;
}

/* ---- converters ---- */

static int conv_seq(PyObject *o, int64_t *v, int *n, const char *what)
{
    PyObject *seq = PySequence_Fast(o, what);
    if (!seq) return 0;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len > ZC_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: %zd entries, at most %d", what, len, ZC_MAX_DIMS);
        return 0;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        long long x = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (x == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return 0;
        }
        v[i] = x;
    }
    *n = (int)len;
    Py_DECREF(seq);
    return 1;
}

int zcpy_conv_ints64(PyObject *o, void *out)
{
    zcpy_ints64 *r = out;
    return conv_seq(o, r->v, &r->n, "expected a sequence of integers");
}

int zcpy_conv_ints(PyObject *o, void *out)
{
    zcpy_ints *r = out;
    r->n = 0;
    if (o == Py_None) return 1;
    int64_t v[ZC_MAX_DIMS];
    if (!conv_seq(o, v, &r->n, "expected a sequence of integers")) return 0;
    for (int i = 0; i < r->n; i++) {
        if (v[i] < INT_MIN || v[i] > INT_MAX) {
            PyErr_Format(PyExc_ValueError, "axis %lld out of range", (long long)v[i]);
            return 0;
        }
        r->v[i] = (int)v[i];
    }
    return 1;
}

int zcpy_conv_node(PyObject *o, void *out)
{
    if (!PyObject_TypeCheck(o, &zcpy_node_type)) {
        PyErr_Format(PyExc_TypeError, "expected a _zcube.Node, got %s", Py_TYPE(o)->tp_name);
        return 0;
    }
    *(zc_array **)out = ((zcpy_node *)o)->a;
    return 1;
}

int zcpy_conv_node_opt(PyObject *o, void *out)
{
    if (o == Py_None) {
        *(zc_array **)out = NULL;
        return 1;
    }
    return zcpy_conv_node(o, out);
}

int zcpy_conv_str_opt(PyObject *o, void *out)
{
    if (o == Py_None) {
        *(const char **)out = NULL;
        return 1;
    }
    const char *s = PyUnicode_AsUTF8(o);
    if (!s) return 0;
    *(const char **)out = s;
    return 1;
}

int zcpy_nodes(PyObject *o, zc_array ***out, int *n)
{
    PyObject *seq = PySequence_Fast(o, "expected a sequence of nodes");
    if (!seq) return 0;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len > INT_MAX) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many arrays");
        return 0;
    }
    zc_array **v = PyMem_Calloc((size_t)len + 1, sizeof *v);
    if (!v) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        if (!zcpy_conv_node(PySequence_Fast_GET_ITEM(seq, i), &v[i])) {
            PyMem_Free(v);
            Py_DECREF(seq);
            return 0;
        }
    }
    Py_DECREF(seq); /* the nodes stay alive: the caller holds the sequence */
    *out = v;
    *n = (int)len;
    return 1;
}

PyObject *zcpy_tuple64(int n, const int64_t *v)
{
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* ---- Node ---- */

static void node_dealloc(zcpy_node *self)
{
    zc_array *a = self->a;
    if (a) {
        Py_BEGIN_ALLOW_THREADS
        zc_array_release(a);
        Py_END_ALLOW_THREADS
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyObject *zcpy_node_new(zc_array *a)
{
    zcpy_node *n = PyObject_New(zcpy_node, &zcpy_node_type);
    if (!n) {
        zc_array_release(a);
        return NULL;
    }
    n->a = a;
    return (PyObject *)n;
}

PyObject *zcpy_node_result(int rc, zc_array *out)
{
    if (rc < 0) return zcpy_raise(rc);
    return zcpy_node_new(out);
}

/* (shape, chunks, dtype code) */
static PyObject *node_info(zcpy_node *self, PyObject *unused)
{
    int ndim = 0, rc;
    int64_t shape[ZC_MAX_DIMS], chunks[ZC_MAX_DIMS];
    zc_dtype dt = ZC_DTYPE_INVALID;
    ZCPY_CALL(rc, zc_array_info(self->a, &ndim, shape, chunks, &dt));
    if (rc < 0) return zcpy_raise(rc);
    return Py_BuildValue("(NNi)", zcpy_tuple64(ndim, shape), zcpy_tuple64(ndim, chunks), (int)dt);
}

static PyMethodDef node_methods[] = {
    {"info", (PyCFunction)node_info, METH_NOARGS, "(shape, chunks, dtype code)"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject zcpy_node_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zcube._zcube.Node",
    .tp_basicsize = sizeof(zcpy_node),
    .tp_dealloc = (destructor)node_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A node of a zcube plan (one zc_array reference).",
    .tp_methods = node_methods,
};

/* ---- module ---- */

static PyObject *version(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(zc_version_string());
}

static PyMethodDef module_methods[] = {
    {"_set_error_factory", set_error_factory, METH_O, "factory(code, name, message) -> exception"},
    {"version", version, METH_NOARGS, "the library's version string"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_zcube", "zcube's C library (include/zcube.h) for Python.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

static int add_type(PyObject *m, PyTypeObject *t, const char *name)
{
    if (PyType_Ready(t) < 0) return -1;
    Py_INCREF(t);
    if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__zcube(void);
PyMODINIT_FUNC PyInit__zcube(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    PyMethodDef *tables[] = {zcpy_store_methods, zcpy_create_methods, zcpy_ops_methods, zcpy_linalg_methods,
                             zcpy_fft_methods, zcpy_compute_methods, zcpy_dtype_methods, zcpy_svg_methods};
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        if (PyModule_AddFunctions(m, tables[i]) < 0) goto fail;
    if (add_type(m, &zcpy_node_type, "Node") < 0 || add_type(m, &zcpy_store_type, "Store") < 0 ||
        add_type(m, &zcpy_zarr_type, "Zarr") < 0 || add_type(m, &zcpy_token_type, "Token") < 0 ||
        add_type(m, &zcpy_sampler_type, "Sampler") < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
