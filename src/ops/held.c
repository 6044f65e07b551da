/* ops/held.c — a call's temporaries (see held.h). */
#include "ops/held.h"

#include "core/error.h"

int held_add(held *h, int rc, zc_array *a)
{
    if (rc < 0) return rc;
    if (h->n == HELD_MAX) {
        zc_array_release(a);
        return zc__err(ZC_EINTERNAL, "linear algebra: plan too deep");
    }
    h->v[h->n++] = a;
    return 0;
}

int held_take(held *h, int rc, zc_array *const *pa, zc_array **out)
{
    ZC_TRY(held_add(h, rc, *pa));
    *out = *pa;
    return 0;
}

void held_drop(held *h)
{
    for (int i = 0; i < h->n; i++) zc_array_release(h->v[i]);
    h->n = 0;
}

void held_give(zc_array *a, zc_array **out)
{
    if (!out) return;
    zc_array_retain(a);
    *out = a;
}

int held_conj_t(held *h, zc_array *a, zc_array **out)
{
    zc_array *t = NULL, *c = NULL;
    ZC_TRY(held_take(h, zc_matrix_transpose(a, &t), &t, &t));
    if (a->dtype != ZC_COMPLEX64 && a->dtype != ZC_COMPLEX128) {
        *out = t;
        return 0;
    }
    return held_take(h, zc_elementwise("conj", 1, &t, &c), &c, out);
}
