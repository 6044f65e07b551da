/* python/src/sampler.c — the window sampler (zc_sampler_*) as a type. Batches
 * from next() are read-only memoryviews of the library's buffers, valid until
 * the next call to next() or seek(); read() fills caller buffers. */
#include "zcpy.h"

typedef struct {
    PyObject_HEAD
    zc_sampler *s;
    PyObject *keep; /* Zarr handles and strings the sources borrow */
    int batch;      /* windows per batch */
    int nsrc;       /* sources added */
    int ndim[64];   /* dimensions of each source */
} zcpy_sampler;

static int sampler_init(zcpy_sampler *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"seed", "batch_size", "grid", "threads", "prefetch", "reject_nan", "reject_fill",
                             "max_redraws", NULL};
    zc_sampler_opts o = ZC_SAMPLER_OPTS_INIT;
    unsigned long long seed = 0;
    int grid = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Kipiippi", kwlist, &seed, &o.batch_size, &grid, &o.nthreads,
                                     &o.prefetch, &o.reject_nan, &o.reject_fill, &o.max_redraws))
        return -1;
    if (self->s) {
        PyErr_SetString(PyExc_RuntimeError, "sampler already created");
        return -1;
    }
    o.seed = seed;
    self->batch = o.batch_size;
    o.mode = grid ? ZC_SAMPLE_GRID : ZC_SAMPLE_RANDOM;
    self->keep = PyList_New(0);
    if (!self->keep) return -1;
    int rc;
    ZCPY_CALL(rc, zc_sampler_create(&o, &self->s));
    if (rc < 0) {
        zcpy_raise(rc);
        return -1;
    }
    return 0;
}

static void sampler_dealloc(zcpy_sampler *self)
{
    zc_sampler *s = self->s;
    Py_BEGIN_ALLOW_THREADS
    zc_sampler_free(s); /* stops the prefetch thread before the arrays go */
    Py_END_ALLOW_THREADS
    Py_XDECREF(self->keep);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int ready(zcpy_sampler *self)
{
    if (self->s) return 1;
    PyErr_SetString(PyExc_RuntimeError, "sampler not created");
    return 0;
}

static int keep(zcpy_sampler *self, PyObject *o) { return PyList_Append(self->keep, o); }

static int fill64(PyObject *o, int64_t *v, int ndim, const char *what)
{
    if (o == Py_None) return 0;
    zcpy_ints64 s;
    if (!zcpy_conv_ints64(o, &s)) return -1;
    if (s.n != ndim) {
        PyErr_Format(PyExc_ValueError, "%s has %d entries for %d dimensions", what, s.n, ndim);
        return -1;
    }
    memcpy(v, s.v, (size_t)ndim * sizeof *v);
    return 0;
}

/* add_source(zarr, name, window, dims, offset, jitter, overlap) */
static PyObject *sampler_add_source(zcpy_sampler *self, PyObject *args)
{
    PyObject *z, *name, *win, *dims, *off, *jit, *ovl;
    if (!ready(self) ||
        !PyArg_ParseTuple(args, "O!OOOOOO", &zcpy_zarr_type, &z, &name, &win, &dims, &off, &jit, &ovl))
        return NULL;
    zc_sampler_source src = ZC_SAMPLER_SOURCE_INIT;
    src.array = ((zcpy_zarr *)z)->z;
    zc_zarr_info_t info;
    int rc;
    ZCPY_CALL(rc, zc_zarr_info(src.array, &info));
    if (rc < 0) return zcpy_raise(rc);
    if (keep(self, z) || !zcpy_conv_str_opt(name, &src.name) || (name != Py_None && keep(self, name)) ||
        fill64(win, src.window, info.ndim, "window") || fill64(off, src.offset, info.ndim, "offset") ||
        fill64(jit, src.jitter, info.ndim, "jitter") || fill64(ovl, src.overlap, info.ndim, "overlap"))
        return NULL;
    if (dims != Py_None) {
        PyObject *seq = PySequence_Fast(dims, "dims: expected a sequence of names");
        if (!seq) return NULL;
        if (PySequence_Fast_GET_SIZE(seq) != info.ndim) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "dims has %zd names for %d dimensions", PySequence_Fast_GET_SIZE(seq),
                         info.ndim);
            return NULL;
        }
        for (int d = 0; d < info.ndim; d++) {
            PyObject *s = PySequence_Fast_GET_ITEM(seq, d);
            if (!zcpy_conv_str_opt(s, &src.dims[d]) || keep(self, s)) {
                Py_DECREF(seq);
                return NULL;
            }
        }
        Py_DECREF(seq);
    }
    if (self->nsrc >= 64) {
        PyErr_SetString(PyExc_ValueError, "add_source: at most 64 sources");
        return NULL;
    }
    ZCPY_CALL(rc, zc_sampler_add_source(self->s, &src));
    if (rc < 0) return zcpy_raise(rc);
    self->ndim[self->nsrc++] = info.ndim;
    Py_RETURN_NONE;
}

static PyObject *sampler_epoch_size(zcpy_sampler *self, PyObject *unused)
{
    int64_t w, b;
    int rc;
    if (!ready(self)) return NULL;
    ZCPY_CALL(rc, zc_sampler_epoch_size(self->s, &w, &b));
    if (rc < 0) return zcpy_raise(rc);
    return Py_BuildValue("(LL)", (long long)w, (long long)b);
}

static PyObject *sampler_batch_bytes(zcpy_sampler *self, PyObject *arg)
{
    long k = PyLong_AsLong(arg);
    if ((k == -1 && PyErr_Occurred()) || !ready(self)) return NULL;
    size_t n;
    int rc;
    ZCPY_CALL(rc, zc_sampler_batch_bytes(self->s, (int)k, &n));
    if (rc < 0) return zcpy_raise(rc);
    return PyLong_FromSize_t(n);
}

/* read(step, [data buffers], [origin buffers] | None) */
static PyObject *sampler_read(zcpy_sampler *self, PyObject *args)
{
    long long step;
    PyObject *data, *orig;
    if (!ready(self) || !PyArg_ParseTuple(args, "LOO", &step, &data, &orig)) return NULL;
    PyObject *ds = PySequence_Fast(data, "read: data must be a sequence of buffers");
    if (!ds) return NULL;
    PyObject *os = orig == Py_None ? NULL : PySequence_Fast(orig, "read: origins must be a sequence of buffers");
    Py_ssize_t n = PySequence_Fast_GET_SIZE(ds);
    PyObject *ret = NULL;
    Py_buffer bufs[2 * 64];
    void *dp[64];
    int64_t *op[64];
    Py_ssize_t got = 0;
    int rc;
    if (orig != Py_None && !os) goto out;
    if (n > 64 || (os && PySequence_Fast_GET_SIZE(os) != n)) {
        PyErr_SetString(PyExc_ValueError, "read: one data buffer (and origins buffer) per source, at most 64");
        goto out;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        size_t need;
        ZCPY_CALL(rc, zc_sampler_batch_bytes(self->s, (int)k, &need));
        if (rc < 0) {
            zcpy_raise(rc);
            goto out;
        }
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(ds, k), &bufs[got], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS))
            goto out;
        dp[k] = bufs[got++].buf;
        if ((size_t)bufs[got - 1].len < need) {
            PyErr_Format(PyExc_ValueError, "read: buffer %zd has %zd bytes, the batch needs %zu", k,
                         bufs[got - 1].len, need);
            goto out;
        }
        if (os) {
            if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(os, k), &bufs[got], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS))
                goto out;
            op[k] = bufs[got++].buf;
            Py_ssize_t on = (Py_ssize_t)self->batch * (k < self->nsrc ? self->ndim[k] : 0) * 8;
            if (bufs[got - 1].len < on) {
                PyErr_Format(PyExc_ValueError, "read: origins buffer %zd has %zd bytes, needs %zd", k,
                             bufs[got - 1].len, on);
                goto out;
            }
        }
    }
    ZCPY_CALL(rc, zc_sampler_read(self->s, step, dp, os ? op : NULL));
    if (rc < 0)
        zcpy_raise(rc);
    else
        ret = Py_NewRef(Py_None);
out:
    for (Py_ssize_t i = 0; i < got; i++) PyBuffer_Release(&bufs[i]);
    Py_XDECREF(os);
    Py_DECREF(ds);
    return ret;
}

/* next() -> (step, epoch, [data memoryviews], [origins memoryviews], rejected): writable views
 * of the library's buffers (zc_batch hands them out so), the caller's until the next
 * batch, so DLPack (which refuses read-only arrays) gives them to torch without a copy */
static PyObject *sampler_next(zcpy_sampler *self, PyObject *unused)
{
    const zc_batch *b = NULL;
    int rc;
    if (!ready(self)) return NULL;
    ZCPY_CALL(rc, zc_sampler_next(self->s, &b));
    if (rc < 0) return zcpy_raise(rc);
    PyObject *data = PyList_New(b->nsources), *orig = PyList_New(b->nsources);
    if (!data || !orig) goto fail;
    for (int k = 0; k < b->nsources; k++) {
        PyObject *d = PyMemoryView_FromMemory(b->data[k], (Py_ssize_t)b->nbytes[k], PyBUF_WRITE);
        if (!d) goto fail;
        PyList_SET_ITEM(data, k, d);
        Py_ssize_t on = (Py_ssize_t)self->batch * (k < self->nsrc ? self->ndim[k] : 0) * 8;
        PyObject *o = PyMemoryView_FromMemory((char *)b->origins[k], on, PyBUF_WRITE);
        if (!o) goto fail;
        PyList_SET_ITEM(orig, k, o);
    }
    return Py_BuildValue("(LLNNL)", (long long)b->step, (long long)b->epoch, data, orig, (long long)b->rejected);
fail:
    Py_XDECREF(data);
    Py_XDECREF(orig);
    return NULL;
}

static PyObject *sampler_seek(zcpy_sampler *self, PyObject *arg)
{
    long long step = PyLong_AsLongLong(arg);
    if ((step == -1 && PyErr_Occurred()) || !ready(self)) return NULL;
    int rc;
    ZCPY_CALL(rc, zc_sampler_seek(self->s, step));
    if (rc < 0) return zcpy_raise(rc);
    Py_RETURN_NONE;
}

static PyObject *sampler_stats(zcpy_sampler *self, PyObject *unused)
{
    zc_sampler_stats_t st;
    int rc;
    if (!ready(self)) return NULL;
    ZCPY_CALL(rc, zc_sampler_stats(self->s, &st));
    if (rc < 0) return zcpy_raise(rc);
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L}", "windows", (long long)st.windows, "rejected",
                         (long long)st.rejected, "bytes_used", (long long)st.bytes_used, "bytes_read",
                         (long long)st.bytes_read, "chunks_read", (long long)st.chunks_read);
}

static PyMethodDef sampler_methods[] = {
    {"add_source", (PyCFunction)sampler_add_source, METH_VARARGS,
     "add_source(zarr, name, window, dims, offset, jitter, overlap)"},
    {"epoch_size", (PyCFunction)sampler_epoch_size, METH_NOARGS, "(windows, batches) per epoch"},
    {"batch_bytes", (PyCFunction)sampler_batch_bytes, METH_O, "bytes of one batch of source k"},
    {"read", (PyCFunction)sampler_read, METH_VARARGS, "read(step, data, origins|None) into caller buffers"},
    {"next", (PyCFunction)sampler_next, METH_NOARGS, "(step, epoch, data, origins, rejected): library buffers"},
    {"seek", (PyCFunction)sampler_seek, METH_O, "make next() return batch step"},
    {"stats", (PyCFunction)sampler_stats, METH_NOARGS, "running totals"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject zcpy_sampler_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zcube._zcube.Sampler",
    .tp_basicsize = sizeof(zcpy_sampler),
    .tp_dealloc = (destructor)sampler_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Sampler(seed, batch_size, grid, threads, prefetch, reject_nan, reject_fill, max_redraws)",
    .tp_methods = sampler_methods,
    .tp_init = (initproc)sampler_init,
    .tp_new = PyType_GenericNew,
};
