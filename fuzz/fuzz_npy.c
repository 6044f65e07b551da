/* fuzz/fuzz_npy.c — .npy input (src/tools/npy.c), as `zcube put` reads it.
 *
 * Input layout: the bytes of a .npy file. Parsed with npy_parse_header; if
 * it parses, the header must agree with itself (0 <= ndim <= ZC_MAX_DIMS,
 * shapes >= 0, nelems their product, nbytes nelems x itemsize, the data
 * offset inside the input for a whole header, the dtype string round-trips
 * through npy_descr_parse). If the data announced is there and at most
 * FUZZ_MAX_BYTES, it is byte-swapped to native and a Fortran-order array
 * reordered, as npy_load_file does; last the header is built again for the
 * parsed dtype and shape and must parse to the same header. A refusal must
 * carry a message. */
#include <string.h>

#include "cli_util.h"
#include "fuzz.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npy_header h;
    if (npy_parse_header(data, size, "fuzz.npy", &h) != 0) {
        FUZZ_CHECK(cli_lasterr()[0] != 0, "a header refused without a message");
        return 0;
    }
    FUZZ_CHECK(h.ndim >= 0 && h.ndim <= ZC_MAX_DIMS, "ndim %d", h.ndim);
    uint64_t n = 1;
    for (int d = 0; d < h.ndim; d++) {
        FUZZ_CHECK(h.shape[d] >= 0, "shape[%d] = %lld", d, (long long)h.shape[d]);
        n *= (uint64_t)h.shape[d];
    }
    FUZZ_CHECK(h.nelems == n, "nelems %llu, shape gives %llu", (unsigned long long)h.nelems, (unsigned long long)n);
    FUZZ_CHECK(h.itemsize > 0 && h.nbytes / h.itemsize == h.nelems && h.nbytes % h.itemsize == 0,
               "nbytes %llu for %llu items of %zu", (unsigned long long)h.nbytes, (unsigned long long)h.nelems,
               h.itemsize);
    FUZZ_CHECK(h.data_offset <= size, "data offset %llu past the %zu input bytes", (unsigned long long)h.data_offset,
               size);
    zc_dtype dt;
    size_t isz;
    char bo;
    FUZZ_CHECK(npy_descr_parse(h.descr, &dt, &isz, &bo) == 0 && dt == h.dtype && isz == h.itemsize,
               "descr '%s' does not parse back", h.descr);
    if (h.nbytes <= FUZZ_MAX_BYTES && size - h.data_offset >= h.nbytes) {
        void *a = malloc(h.nbytes ? h.nbytes : 1), *b = malloc(h.nbytes ? h.nbytes : 1);
        FUZZ_CHECK(a && b, "out of memory");
        memcpy(a, data + h.data_offset, h.nbytes);
        if (npy_needs_swap(&h)) npy_byteswap(h.dtype, h.itemsize, a, h.nelems);
        if (h.fortran && h.ndim > 1) npy_f_to_c(a, b, h.ndim, h.shape, h.itemsize);
        free(a);
        free(b);
    }
    char *hdr;
    size_t hlen;
    if (npy_build_header(h.dtype, h.itemsize, h.ndim, h.shape, &hdr, &hlen) != 0) {
        FUZZ_CHECK(cli_lasterr()[0] != 0, "a header not built, without a message");
        return 0;
    }
    npy_header g;
    FUZZ_CHECK(npy_parse_header((const unsigned char *)hdr, hlen, "rebuilt.npy", &g) == 0, "rebuilt header refused: %s",
               cli_lasterr());
    FUZZ_CHECK(g.dtype == h.dtype && g.itemsize == h.itemsize && g.ndim == h.ndim && !g.fortran &&
                   !memcmp(g.shape, h.shape, sizeof(int64_t) * (size_t)h.ndim) && g.data_offset == hlen,
               "rebuilt header differs");
    free(hdr);
    return 0;
}
