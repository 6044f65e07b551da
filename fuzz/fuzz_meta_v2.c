/* fuzz/fuzz_meta_v2.c — Zarr v2 metadata (.zarray, and .zattrs after a NUL
 * byte) parsed by zc_zarr_open, then used (fuzz_meta.h). */
#include "fuzz_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    if (!nul) return meta_run(".zarray", data, size, NULL, NULL, 0);
    size_t n = (size_t)(nul - data);
    return meta_run(".zarray", data, n, ".zattrs", nul + 1, size - n - 1);
}
