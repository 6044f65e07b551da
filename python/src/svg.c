/* python/src/svg.c — the plan as SVG, drawn by the zcube command's own
 * plan_svg.c (compiled into the extension; it reads zc_plan_json's text). */
#include <stdio.h>
#include <stdlib.h>

#include "cli_util.h"
#include "plan_svg.h"
#include "zcpy.h"

static PyObject *plan_svg(PyObject *self, PyObject *args)
{
    const char *json, *title;
    if (!PyArg_ParseTuple(args, "ss", &json, &title)) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return PyErr_NoMemory();
    int rc = plan_svg_write(f, json, title);
    fclose(f);
    PyObject *r = rc < 0 ? PyErr_Format(PyExc_ValueError, "plan_svg: %s", cli_lasterr())
                         : PyUnicode_FromStringAndSize(buf, (Py_ssize_t)len);
    free(buf);
    return r;
}

PyMethodDef zcpy_svg_methods[] = {
    {"plan_svg", plan_svg, METH_VARARGS, "plan_svg(plan_json, title) -> SVG text"},
    {NULL, NULL, 0, NULL},
};
