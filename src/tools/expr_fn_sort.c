/* tools/expr_fn_sort.c — handlers of the sorting and searching functions:
 * sort, argsort, searchsorted, take_along_axis. */
#include <string.h>

#include "expr_internal.h"

/* sort/argsort(x, axis=-1, descending=False, stable=True): always stable */
int ex_fn_sort(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0) return -1;
    int axis = -1, desc = 0, stable = 1;
    if (args[1].kind != V_NONE && ex_as_axis(&args[1], "axis", 0, &axis) < 0) return -1;
    if (args[2].kind != V_NONE && ex_as_bool(&args[2], "descending", &desc) < 0) return -1;
    if (args[3].kind != V_NONE && ex_as_bool(&args[3], "stable", &stable) < 0) return -1;
    zc_array *a = NULL;
    int rc = !strcmp(f->api, "sort") ? zc_sort(args[0].arr, axis, desc, &a) : zc_argsort(args[0].arr, axis, desc, &a);
    return ex_lib_result(e, f, call, rc, &a, out);
}

/* searchsorted(x1, x2, side='left', sorter=None) */
int ex_fn_searchsorted(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x1") < 0 || ex_need_array(f, &args[1], "x2") < 0) return -1;
    int right = 0;
    if (args[2].kind != V_NONE) {
        if (args[2].kind != V_STR || (strcmp(args[2].s, "left") && strcmp(args[2].s, "right")))
            return ex_fail(args[2].col, "side must be 'left' or 'right', got %s", ex_kind_name(&args[2]));
        right = !strcmp(args[2].s, "right");
    }
    if (args[3].kind != V_NONE && ex_need_array(f, &args[3], "sorter") < 0) return -1;
    zc_array *a = NULL;
    int rc = zc_searchsorted(args[0].arr, args[1].arr, right, args[3].kind == V_ARRAY ? args[3].arr : NULL, &a);
    return ex_lib_result(e, f, call, rc, &a, out);
}

/* take_along_axis(x, indices, axis=-1) */
int ex_fn_take_along_axis(ex_ctx *e, const ex_fdef *f, const ex_node *call, ex_value *args, ex_value *out)
{
    if (ex_need_array(f, &args[0], "x") < 0 || ex_need_array(f, &args[1], "indices") < 0) return -1;
    int axis = -1;
    if (args[2].kind != V_NONE && ex_as_axis(&args[2], "axis", 0, &axis) < 0) return -1;
    zc_array *a = NULL;
    int rc = zc_take_along_axis(args[0].arr, args[1].arr, axis, &a);
    return ex_lib_result(e, f, call, rc, &a, out);
}
