/* python/src/compute.c — the spec, computing (into stores or a buffer) with
 * progress callbacks and cancellation, plans as JSON. */
#include <stdatomic.h>
#include <string.h>

#include "zcpy.h"

/* ---- Token: a cancel flag shared with a running compute ---- */
typedef struct {
    PyObject_HEAD
    atomic_int cancel;
} zcpy_token;

static PyObject *token_cancel(zcpy_token *self, PyObject *unused)
{
    atomic_store(&self->cancel, 1);
    Py_RETURN_NONE;
}

static PyObject *token_cancelled(zcpy_token *self, void *unused)
{
    return PyBool_FromLong(atomic_load(&self->cancel));
}

static PyMethodDef token_methods[] = {
    {"cancel", (PyCFunction)token_cancel, METH_NOARGS, "ask the compute using this token to stop"},
    {NULL, NULL, 0, NULL},
};
static PyGetSetDef token_getset[] = {
    {"cancelled", (getter)token_cancelled, NULL, "whether cancel() was called", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject zcpy_token_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zcube._zcube.Token",
    .tp_basicsize = sizeof(zcpy_token),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Token(): cancel() stops the compute it was passed to after its running tasks.",
    .tp_methods = token_methods,
    .tp_getset = token_getset,
    .tp_new = PyType_GenericNew,
};

/* ---- spec ---- */

static int get_size(PyObject *d, const char *key, size_t *v)
{
    PyObject *o = PyDict_GetItemString(d, key);
    if (!o || o == Py_None) return 0;
    unsigned long long x = PyLong_AsUnsignedLongLong(o);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    *v = (size_t)x;
    return 0;
}

static int get_int(PyObject *d, const char *key, int *v)
{
    PyObject *o = PyDict_GetItemString(d, key);
    if (!o || o == Py_None) return 0;
    long x = PyLong_AsLong(o);
    if (x == -1 && PyErr_Occurred()) return -1;
    *v = (int)x;
    return 0;
}

static int get_str(PyObject *d, const char *key, const char **v)
{
    PyObject *o = PyDict_GetItemString(d, key);
    if (!o || o == Py_None) return 0;
    *v = PyUnicode_AsUTF8(o);
    return *v ? 0 : -1;
}

int zcpy_spec_from_dict(PyObject *d, zc_spec *spec)
{
    *spec = (zc_spec)ZC_SPEC_INIT;
    if (d == Py_None) return 0;
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "spec: expected a dict");
        return -1;
    }
    if (get_str(d, "work_dir", &spec->work_dir) || get_size(d, "allowed_mem", &spec->allowed_mem) ||
        get_size(d, "reserved_mem", &spec->reserved_mem) || get_int(d, "threads", &spec->nthreads) ||
        get_int(d, "resume", &spec->resume) || get_int(d, "max_retries", &spec->max_retries) ||
        get_int(d, "max_input_blocks", &spec->max_input_blocks) || get_str(d, "executor", &spec->executor) ||
        get_size(d, "cache_mem", &spec->cache_mem))
        return -1;
    return 0;
}

/* ---- progress ---- */

typedef struct {
    PyObject *fn;        /* fn(op, name, done, total) -> truthy to cancel; or NULL */
    zcpy_token *token;   /* or NULL */
    PyObject *exc[3];    /* first exception raised by fn */
} progress_ctx;

static int progress_cb(const zc_progress *p, void *vctx)
{
    progress_ctx *c = vctx;
    if (c->token && atomic_load(&c->token->cancel)) return 1;
    if (!c->fn) return 0;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = 0;
    if (c->exc[0]) {
        stop = 1;
    } else {
        PyObject *r = PyObject_CallFunction(c->fn, "LsLL", (long long)p->op, p->name, (long long)p->done,
                                            (long long)p->total);
        if (!r) {
            PyErr_Fetch(&c->exc[0], &c->exc[1], &c->exc[2]);
            stop = 1;
        } else {
            stop = PyObject_IsTrue(r) > 0;
            Py_DECREF(r);
        }
    }
    PyGILState_Release(g);
    return stop;
}

static int progress_setup(progress_ctx *c, PyObject *fn, PyObject *token, zc_spec *spec)
{
    memset(c, 0, sizeof *c);
    if (token != Py_None) {
        if (!PyObject_TypeCheck(token, &zcpy_token_type)) {
            PyErr_SetString(PyExc_TypeError, "token: expected a _zcube.Token");
            return -1;
        }
        c->token = (zcpy_token *)token;
    }
    if (fn != Py_None) c->fn = fn;
    if (c->fn || c->token) {
        spec->progress = progress_cb;
        spec->progress_ctx = c;
    }
    return 0;
}

/* The report's JSON, or the exception: the callback's own, else the library's. */
static PyObject *finish(int rc, progress_ctx *c, zc_report *report)
{
    if (c->exc[0]) {
        zc_report_free(report);
        PyErr_Restore(c->exc[0], c->exc[1], c->exc[2]);
        return NULL;
    }
    if (rc < 0) {
        zc_report_free(report);
        return zcpy_raise(rc);
    }
    char *json = NULL;
    rc = report ? zc_report_json(report, &json) : 0;
    zc_report_free(report);
    if (rc < 0) return zcpy_raise(rc);
    if (!json) Py_RETURN_NONE;
    PyObject *s = PyUnicode_FromString(json);
    zc_free(json);
    return s;
}

/* ---- targets ---- */

static int targets_from(PyObject *o, int n, zc_target **out)
{
    *out = NULL;
    if (o == Py_None) return 0;
    PyObject *seq = PySequence_Fast(o, "targets: expected a sequence of (store, path, codec, zarr_format)");
    if (!seq) return -1;
    if (PySequence_Fast_GET_SIZE(seq) != n) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "targets: one per array");
        return -1;
    }
    zc_target *t = PyMem_Calloc((size_t)n + 1, sizeof *t);
    if (!t) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *st, *codec;
        const char *path;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "O!sOi", &zcpy_store_type, &st, &path, &codec,
                              &t[i].zarr_format) ||
            !zcpy_conv_str_opt(codec, &t[i].codec)) {
            PyMem_Free(t);
            Py_DECREF(seq);
            return -1;
        }
        t[i].store = ((zcpy_store *)st)->s;
        t[i].path = path;
    }
    Py_DECREF(seq); /* strings stay alive: the caller's tuples hold them */
    *out = t;
    return 0;
}

/* compute(spec, nodes, targets, progress, token) -> report JSON */
static PyObject *compute(PyObject *self, PyObject *args)
{
    PyObject *sd, *nodes, *to, *fn, *token;
    if (!PyArg_ParseTuple(args, "OOOOO", &sd, &nodes, &to, &fn, &token)) return NULL;
    zc_spec spec;
    progress_ctx pc;
    zc_array **v;
    int n;
    if (zcpy_spec_from_dict(sd, &spec) || progress_setup(&pc, fn, token, &spec) || !zcpy_nodes(nodes, &v, &n))
        return NULL;
    zc_target *t;
    if (targets_from(to, n, &t) || !t) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "compute: targets required");
        PyMem_Free(v);
        return NULL;
    }
    zc_report *report = NULL;
    int rc;
    ZCPY_CALL(rc, zc_compute(&spec, n, v, t, &report));
    PyMem_Free(v);
    PyMem_Free(t);
    return finish(rc, &pc, report);
}

/* compute_buffer(spec, node, buffer, progress, token) -> report JSON */
static PyObject *compute_buffer(PyObject *self, PyObject *args)
{
    PyObject *sd, *fn, *token;
    zc_array *a;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "OO&w*OO", &sd, zcpy_conv_node, &a, &buf, &fn, &token)) return NULL;
    zc_spec spec;
    progress_ctx pc;
    if (zcpy_spec_from_dict(sd, &spec) || progress_setup(&pc, fn, token, &spec)) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    zc_report *report = NULL;
    int rc;
    ZCPY_CALL(rc, zc_compute_buffer(&spec, a, buf.buf, (size_t)buf.len, &report));
    PyBuffer_Release(&buf);
    return finish(rc, &pc, report);
}

/* plan_json(spec, nodes, targets|None) -> JSON text */
static PyObject *plan_json(PyObject *self, PyObject *args)
{
    PyObject *sd, *nodes, *to;
    if (!PyArg_ParseTuple(args, "OOO", &sd, &nodes, &to)) return NULL;
    zc_spec spec;
    zc_array **v;
    zc_target *t;
    int n, rc;
    if (zcpy_spec_from_dict(sd, &spec) || !zcpy_nodes(nodes, &v, &n)) return NULL;
    if (targets_from(to, n, &t)) {
        PyMem_Free(v);
        return NULL;
    }
    char *json = NULL;
    ZCPY_CALL(rc, zc_plan_json(&spec, n, v, t, &json));
    PyMem_Free(v);
    PyMem_Free(t);
    if (rc < 0) return zcpy_raise(rc);
    PyObject *s = PyUnicode_FromString(json);
    zc_free(json);
    return s;
}

/* mask_select(spec, node, mask) -> Node: x[mask], counted now under spec */
static PyObject *mask_select(PyObject *self, PyObject *args)
{
    PyObject *sd;
    zc_array *x, *m, *out = NULL;
    zc_spec spec;
    int rc;
    if (!PyArg_ParseTuple(args, "OO&O&", &sd, zcpy_conv_node, &x, zcpy_conv_node, &m) || zcpy_spec_from_dict(sd, &spec))
        return NULL;
    ZCPY_CALL(rc, zc_mask_select(&spec, x, m, &out));
    return zcpy_node_result(rc, out);
}

/* A tuple of n new Nodes taking the references of r[0..n) (released on failure). */
static PyObject *nodes_tuple(zc_array **r, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int k = 0; k < n; k++) {
        PyObject *o = t ? zcpy_node_new(r[k]) : NULL;
        if (!o) {
            for (int e = k + (t != NULL); e < n; e++) zc_array_release(r[e]); /* a failed Node released its own */
            Py_XDECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, k, o);
    }
    return t;
}

/* nonzero(spec, node) -> tuple of Nodes, one per dimension, counted now under spec */
static PyObject *nonzero(PyObject *self, PyObject *args)
{
    PyObject *sd;
    zc_array *x, *outs[ZC_MAX_DIMS];
    zc_spec spec;
    int rc, nd;
    if (!PyArg_ParseTuple(args, "OO&", &sd, zcpy_conv_node, &x) || zcpy_spec_from_dict(sd, &spec)) return NULL;
    if (zc_array_info(x, &nd, NULL, NULL, NULL) < 0) return zcpy_raise(ZC_EINVAL);
    ZCPY_CALL(rc, zc_nonzero(&spec, x, outs));
    if (rc < 0) return zcpy_raise(rc);
    return nodes_tuple(outs, nd);
}

/* unique(spec, node, want) -> tuple of Nodes: zc_unique's results named by
 * the letters of want in order (v values, i indices, n inverse, c counts),
 * counted now under spec */
static PyObject *unique(PyObject *self, PyObject *args)
{
    PyObject *sd;
    const char *want;
    zc_array *x, *r[4] = {NULL, NULL, NULL, NULL};
    zc_spec spec;
    int rc;
    if (!PyArg_ParseTuple(args, "OO&s", &sd, zcpy_conv_node, &x, &want) || zcpy_spec_from_dict(sd, &spec)) return NULL;
    zc_array **p[4];
    for (int k = 0; k < 4; k++) p[k] = strchr(want, "vinc"[k]) ? &r[k] : NULL;
    ZCPY_CALL(rc, zc_unique(&spec, x, p[0], p[1], p[2], p[3]));
    if (rc < 0) return zcpy_raise(rc);
    int n = 0;
    for (int k = 0; k < 4; k++)
        if (r[k]) r[n++] = r[k];
    return nodes_tuple(r, n);
}

PyMethodDef zcpy_compute_methods[] = {
    {"mask_select", mask_select, METH_VARARGS, "mask_select(spec, node, mask) -> Node (x[mask], counted now)"},
    {"nonzero", nonzero, METH_VARARGS, "nonzero(spec, node) -> (Node, ...) (counted now)"},
    {"unique", unique, METH_VARARGS, "unique(spec, node, 'vinc') -> (Node, ...) (counted now)"},
    {"compute", compute, METH_VARARGS, "compute(spec, nodes, targets, progress, token) -> report JSON"},
    {"compute_buffer", compute_buffer, METH_VARARGS,
     "compute_buffer(spec, node, buffer, progress, token) -> report JSON"},
    {"plan_json", plan_json, METH_VARARGS, "plan_json(spec, nodes, targets|None) -> JSON"},
    {NULL, NULL, 0, NULL},
};
