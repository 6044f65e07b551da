/* tools/boxes.c — budgeted box walk over a selection. See boxes.h.
 *
 * Unit boundaries along a dimension: selection index i is array element
 * a = start + i·step, which lies in unit a / unit. The box that starts at i
 * and spans m units ends at the first selection index whose element reaches
 * array element (a / unit + m) · unit, i.e. ceil(((a/unit + m)·unit − start) / step).
 * 128-bit intermediates keep this exact for any int64 shape. */
#include "boxes.h"

#include <string.h>

typedef __int128 i128;

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* End of the box starting at b->pos[d] along d. */
static int64_t box_end(const boxes_t *b, int d)
{
    if (b->nunits[d] == BOXES_ALL) return b->count[d];
    i128 a = (i128)b->start[d] + (i128)b->pos[d] * b->step[d];
    i128 target = (a / b->unit[d] + b->nunits[d]) * b->unit[d];
    i128 num = target - b->start[d];
    i128 end = (num + b->step[d] - 1) / b->step[d];
    return end < b->count[d] ? (int64_t)end : b->count[d];
}

void boxes_init(boxes_t *b, int ndim, const zc_range *sel, const int64_t *count, const int64_t *unit,
                size_t itemsize, uint64_t budget)
{
    memset(b, 0, sizeof *b);
    b->ndim = ndim;
    b->itemsize = itemsize;
    if (budget < itemsize) budget = itemsize;
    int64_t u[ZC_MAX_DIMS]; /* most selection elements one unit holds */
    for (int d = 0; d < ndim; d++) {
        b->count[d] = count[d];
        b->start[d] = sel[d].start;
        b->step[d] = sel[d].step > 0 ? sel[d].step : 1;
        b->unit[d] = unit && unit[d] > 0 ? unit[d] : 1;
        int64_t per = b->unit[d] / b->step[d] + (b->unit[d] % b->step[d] != 0);
        u[d] = per < count[d] ? per : count[d];
        if (u[d] < 1) u[d] = 1;
        if (count[d] == 0) b->state = 2; /* nothing selected */
    }
    b->unit_bytes = itemsize;
    for (int d = 0; d < ndim; d++) b->unit_bytes = mul_sat(b->unit_bytes, (uint64_t)u[d]);
    /* Cut the unit if one alone exceeds the budget. */
    for (int d = 0; d < ndim; d++) {
        uint64_t rest = itemsize;
        for (int j = d + 1; j < ndim; j++) rest = mul_sat(rest, (uint64_t)u[j]);
        if (mul_sat(rest, (uint64_t)u[d]) <= budget) break;
        if (rest <= budget) {
            uint64_t n = budget / rest; /* >= 1 and < u[d] */
            i128 span = (i128)n * b->step[d];
            b->unit[d] = span > INT64_MAX ? INT64_MAX : (int64_t)span;
            u[d] = (int64_t)n;
            break;
        }
        b->unit[d] = 1;
        u[d] = 1;
    }
    /* Grow from the last dimension outwards. */
    int64_t ext[ZC_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        ext[d] = u[d];
        b->nunits[d] = 1;
    }
    for (int d = ndim - 1; d >= 0; d--) {
        uint64_t other = itemsize;
        for (int j = 0; j < ndim; j++)
            if (j != d) other = mul_sat(other, (uint64_t)ext[j]);
        if (mul_sat(other, (uint64_t)count[d]) <= budget) {
            b->nunits[d] = BOXES_ALL;
            ext[d] = count[d];
            continue;
        }
        uint64_t m = budget / mul_sat(other, (uint64_t)u[d]);
        if (m < 1) m = 1;
        b->nunits[d] = (int64_t)m;
        i128 e = (i128)m * u[d];
        ext[d] = e < count[d] ? (int64_t)e : count[d];
        break;
    }
    uint64_t maxb = itemsize;
    for (int d = 0; d < ndim; d++) maxb = mul_sat(maxb, (uint64_t)ext[d]);
    b->max_bytes = maxb;
}

int boxes_next(boxes_t *b)
{
    if (b->state == 2) return 0;
    if (b->state == 0) {
        b->state = 1;
        for (int d = 0; d < b->ndim; d++) {
            b->pos[d] = 0;
            b->end[d] = box_end(b, d);
        }
        return 1;
    }
    for (int d = b->ndim - 1; d >= 0; d--) {
        if (b->end[d] >= b->count[d]) continue;
        b->pos[d] = b->end[d];
        b->end[d] = box_end(b, d);
        for (int j = d + 1; j < b->ndim; j++) {
            b->pos[j] = 0;
            b->end[j] = box_end(b, j);
        }
        return 1;
    }
    b->state = 2;
    return 0;
}

void boxes_ranges(const boxes_t *b, const zc_range *sel, zc_range *out)
{
    for (int d = 0; d < b->ndim; d++) {
        int64_t step = sel[d].step > 0 ? sel[d].step : 1;
        out[d].start = sel[d].start + b->pos[d] * step;
        out[d].stop = sel[d].start + (b->end[d] - 1) * step + 1;
        out[d].step = step;
    }
}

uint64_t boxes_nelems(const boxes_t *b)
{
    uint64_t n = 1;
    for (int d = 0; d < b->ndim; d++) n *= (uint64_t)(b->end[d] - b->pos[d]);
    return n;
}

int boxes_runs(const boxes_t *b, boxes_run_fn fn, void *ctx)
{
    int ndim = b->ndim;
    int r = ndim - 1;
    while (r >= 0 && b->pos[r] == 0 && b->end[r] == b->count[r]) r--;
    if (r < 0) return fn(0, 0, boxes_nelems(b), ctx);
    uint64_t stride[ZC_MAX_DIMS];
    uint64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        stride[d] = s;
        s *= (uint64_t)b->count[d];
    }
    uint64_t run = (uint64_t)(b->end[r] - b->pos[r]) * stride[r];
    int64_t idx[ZC_MAX_DIMS];
    for (int d = 0; d < r; d++) idx[d] = b->pos[d];
    uint64_t box_off = 0;
    for (;;) {
        uint64_t off = (uint64_t)b->pos[r] * stride[r];
        for (int d = 0; d < r; d++) off += (uint64_t)idx[d] * stride[d];
        int rc = fn(off, box_off, run, ctx);
        if (rc) return rc;
        box_off += run;
        int d = r - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < b->end[d]) break;
            idx[d] = b->pos[d];
        }
        if (d < 0) return 0;
    }
}
