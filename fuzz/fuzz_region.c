/* fuzz/fuzz_region.c — the zcube command's region parser (src/tools/region.c)
 * on arbitrary text and shapes.
 *
 * Input layout:
 *   byte 0          ndim = byte 0 % (ZC_MAX_DIMS + 1)
 *   next ndim bytes one per dimension: b < 0xF0 is the size b, else BIG[b - 0xF0]
 *   rest            the region text (up to the first NUL)
 *
 * On success the result must be something zc_zarr_read accepts and that
 * agrees with itself: 0 <= start <= stop <= shape, step > 0, count the number
 * of elements of range(start, stop, step), stop tightened to one past the
 * last element, integer indices select one element and drop the dimension,
 * out_shape lists the counts of the kept dimensions. On failure there is a
 * message. */
#include <string.h>

#include "cli_util.h"
#include "fuzz.h"
#include "region.h"

static const int64_t BIG[16] = {
    255, 256, 1000, 65536, INT32_MAX, (int64_t)INT32_MAX + 1, (int64_t)UINT32_MAX,
    (int64_t)1 << 40, (int64_t)1 << 53, (int64_t)1 << 62, INT64_MAX - 1, INT64_MAX,
    (int64_t)10000000000, 999999999999LL, 3, 0,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int ndim = data[0] % (ZC_MAX_DIMS + 1);
    if (size < 1 + (size_t)ndim) return 0;
    int64_t shape[ZC_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        uint8_t b = data[1 + d];
        shape[d] = b < 0xF0 ? b : BIG[b - 0xF0];
    }
    size_t tn = size - 1 - (size_t)ndim;
    char *text = malloc(tn + 1);
    FUZZ_CHECK(text != NULL, "out of memory");
    memcpy(text, data + 1 + ndim, tn);
    text[tn] = 0;

    region_t r;
    if (region_parse(text, ndim, shape, &r) != 0) {
        FUZZ_CHECK(cli_lasterr()[0] != 0, "region '%s' refused without a message", text);
        free(text);
        return 0;
    }
    FUZZ_CHECK(r.ndim == ndim, "ndim %d, expected %d", r.ndim, ndim);
    int kept = 0;
    for (int d = 0; d < ndim; d++) {
        const zc_range *g = &r.range[d];
        FUZZ_CHECK(g->step > 0 && 0 <= g->start && g->start <= g->stop && g->stop <= shape[d],
                   "'%s' dim %d: %lld:%lld:%lld for size %lld", text, d, (long long)g->start,
                   (long long)g->stop, (long long)g->step, (long long)shape[d]);
        int64_t span = g->stop - g->start;
        int64_t count = span / g->step + (span % g->step != 0);
        FUZZ_CHECK(r.count[d] == count, "'%s' dim %d: count %lld, range has %lld", text, d,
                   (long long)r.count[d], (long long)count);
        if (count > 0)
            FUZZ_CHECK((g->stop - g->start - 1) % g->step == 0, "'%s' dim %d: stop %lld not tightened", text, d,
                       (long long)g->stop);
        if (r.dropped[d]) {
            FUZZ_CHECK(count == 1 && g->step == 1, "'%s' dim %d: an index selects %lld elements", text, d,
                       (long long)count);
        } else {
            FUZZ_CHECK(kept < r.out_ndim && r.out_shape[kept] == count, "'%s': out_shape[%d] wrong", text, kept);
            kept++;
        }
    }
    FUZZ_CHECK(kept == r.out_ndim, "'%s': out_ndim %d, %d dimensions kept", text, r.out_ndim, kept);
    int64_t n = region_nelems(&r);
    FUZZ_CHECK(n >= 0, "'%s': %lld elements", text, (long long)n);

    /* the whole-array region agrees with region_all */
    region_t all, none;
    region_all(&all, ndim, shape);
    FUZZ_CHECK(region_parse("", ndim, shape, &none) == 0 && !memcmp(&all, &none, sizeof all),
               "empty text differs from region_all");
    free(text);
    return 0;
}
