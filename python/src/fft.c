/* python/src/fft.c — the fft extension over Nodes. */
#include "zcpy.h"

typedef int (*fft1_fn)(zc_array *, int64_t, int, const char *, zc_array **);
typedef int (*fftn_fn)(zc_array *, const int64_t *, int, const int *, int, const char *, zc_array **);

static const struct {
    const char *name;
    fft1_fn f;
} FFT1[] = {{"fft", zc_fft_fft},     {"ifft", zc_fft_ifft}, {"rfft", zc_fft_rfft},
            {"irfft", zc_fft_irfft}, {"hfft", zc_fft_hfft}, {"ihfft", zc_fft_ihfft}};
static const struct {
    const char *name;
    fftn_fn f;
} FFTN[] = {{"fftn", zc_fft_fftn}, {"ifftn", zc_fft_ifftn}, {"rfftn", zc_fft_rfftn}, {"irfftn", zc_fft_irfftn}};

/* fft1(name, x, n, axis, norm|None) */
static PyObject *fft1(PyObject *self, PyObject *args)
{
    const char *name, *norm;
    zc_array *x, *out = NULL;
    long long n;
    int axis, rc;
    if (!PyArg_ParseTuple(args, "sO&LiO&", &name, zcpy_conv_node, &x, &n, &axis, zcpy_conv_str_opt, &norm))
        return NULL;
    for (size_t i = 0; i < sizeof FFT1 / sizeof *FFT1; i++) {
        if (strcmp(FFT1[i].name, name)) continue;
        ZCPY_CALL(rc, FFT1[i].f(x, n, axis, norm, &out));
        return zcpy_node_result(rc, out);
    }
    PyErr_Format(PyExc_ValueError, "fft1: unknown '%s'", name);
    return NULL;
}

/* fftn(name, x, s|None, axes|None, norm|None) */
static PyObject *fftn(PyObject *self, PyObject *args)
{
    const char *name, *norm;
    zc_array *x, *out = NULL;
    PyObject *so;
    zcpy_ints64 s = {0, {0}};
    zcpy_ints ax;
    int rc;
    if (!PyArg_ParseTuple(args, "sO&OO&O&", &name, zcpy_conv_node, &x, &so, zcpy_conv_ints, &ax, zcpy_conv_str_opt,
                          &norm))
        return NULL;
    if (so != Py_None && !zcpy_conv_ints64(so, &s)) return NULL;
    for (size_t i = 0; i < sizeof FFTN / sizeof *FFTN; i++) {
        if (strcmp(FFTN[i].name, name)) continue;
        ZCPY_CALL(rc, FFTN[i].f(x, s.n ? s.v : NULL, s.n, ax.n ? ax.v : NULL, ax.n, norm, &out));
        return zcpy_node_result(rc, out);
    }
    PyErr_Format(PyExc_ValueError, "fftn: unknown '%s'", name);
    return NULL;
}

/* freq(real, n, d, dtype) */
static PyObject *freq(PyObject *self, PyObject *args)
{
    int real, dt, rc;
    long long n;
    double d;
    zc_array *out = NULL;
    if (!PyArg_ParseTuple(args, "pLdi", &real, &n, &d, &dt)) return NULL;
    if (real)
        ZCPY_CALL(rc, zc_fft_rfftfreq(n, d, (zc_dtype)dt, &out));
    else
        ZCPY_CALL(rc, zc_fft_fftfreq(n, d, (zc_dtype)dt, &out));
    return zcpy_node_result(rc, out);
}

/* shift(inverse, x, axes|None) */
static PyObject *shift(PyObject *self, PyObject *args)
{
    int inverse, rc;
    zc_array *x, *out = NULL;
    zcpy_ints ax;
    if (!PyArg_ParseTuple(args, "pO&O&", &inverse, zcpy_conv_node, &x, zcpy_conv_ints, &ax)) return NULL;
    if (inverse)
        ZCPY_CALL(rc, zc_fft_ifftshift(x, ax.v, ax.n, &out));
    else
        ZCPY_CALL(rc, zc_fft_fftshift(x, ax.v, ax.n, &out));
    return zcpy_node_result(rc, out);
}

PyMethodDef zcpy_fft_methods[] = {
    {"fft1", fft1, METH_VARARGS, "fft1(name, x, n, axis, norm) -> Node"},
    {"fftn", fftn, METH_VARARGS, "fftn(name, x, s, axes, norm) -> Node"},
    {"fftfreq", freq, METH_VARARGS, "fftfreq(real, n, d, dtype) -> Node"},
    {"fftshift", shift, METH_VARARGS, "fftshift(inverse, x, axes) -> Node"},
    {NULL, NULL, 0, NULL},
};
