/* python/src/zcpy.h — shared pieces of the _zcube extension: the Node and
 * Store types, argument converters, and the one way library failures become
 * Python exceptions. Every library call runs with the GIL released (ZCPY_CALL). */
#ifndef ZCPY_H
#define ZCPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "zcube.h"

/* Run `expr` (a library call returning int) with the GIL released, into rc. */
#define ZCPY_CALL(rc, expr)           \
    do {                              \
        Py_BEGIN_ALLOW_THREADS        \
        (rc) = (expr);                \
        Py_END_ALLOW_THREADS          \
    } while (0)

/* Raise the exception for status rc (< 0) with the calling thread's zc_errmsg(). */
PyObject *zcpy_raise(int rc);
/* Raise for rc with an already captured message. */
PyObject *zcpy_raise_msg(int rc, const char *msg);

/* A lazy array: one reference to a zc_array. */
typedef struct {
    PyObject_HEAD
    zc_array *a;
} zcpy_node;
extern PyTypeObject zcpy_node_type;
/* A new Node owning `a` (on failure releases it); NULL with an exception set. */
PyObject *zcpy_node_new(zc_array *a);
/* Call-and-wrap: rc < 0 raises, else a Node for out. */
PyObject *zcpy_node_result(int rc, zc_array *out);

typedef struct {
    PyObject_HEAD
    zc_store *s;
} zcpy_store;
extern PyTypeObject zcpy_store_type;

typedef struct {
    PyObject_HEAD
    zc_zarr *z;
    PyObject *store; /* keeps the store open */
} zcpy_zarr;
extern PyTypeObject zcpy_zarr_type;

/* Converters for "O&". */
typedef struct {
    int n;
    int64_t v[ZC_MAX_DIMS];
} zcpy_ints64;
typedef struct {
    int n;
    int v[ZC_MAX_DIMS];
} zcpy_ints;
int zcpy_conv_ints64(PyObject *o, void *out);     /* sequence of ints (<= ZC_MAX_DIMS) */
int zcpy_conv_ints(PyObject *o, void *out);       /* sequence of ints, or None (n = 0) */
int zcpy_conv_node(PyObject *o, void *out);       /* Node -> zc_array* */
int zcpy_conv_node_opt(PyObject *o, void *out);   /* Node or None -> zc_array* or NULL */
int zcpy_conv_str_opt(PyObject *o, void *out);    /* str or None -> const char* */
/* A sequence of Nodes as a new array of borrowed zc_array* (PyMem_Free it). */
int zcpy_nodes(PyObject *seq, zc_array ***out, int *n);

/* Tuple of n int64 values. */
PyObject *zcpy_tuple64(int n, const int64_t *v);

/* The spec from a dict (keys as zcube.Spec's); strings borrowed from the dict. */
int zcpy_spec_from_dict(PyObject *d, zc_spec *spec);

extern PyMethodDef zcpy_store_methods[];
extern PyMethodDef zcpy_create_methods[];
extern PyMethodDef zcpy_ops_methods[];
extern PyMethodDef zcpy_linalg_methods[];
extern PyMethodDef zcpy_fft_methods[];
extern PyMethodDef zcpy_compute_methods[];
extern PyMethodDef zcpy_dtype_methods[];
extern PyMethodDef zcpy_svg_methods[];
extern PyTypeObject zcpy_token_type;
extern PyTypeObject zcpy_sampler_type;

#endif
