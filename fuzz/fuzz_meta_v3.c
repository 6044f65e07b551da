/* fuzz/fuzz_meta_v3.c — Zarr v3 metadata (zarr.json) parsed by zc_zarr_open,
 * then used (fuzz_meta.h). */
#include "fuzz_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return meta_run("zarr.json", data, size, NULL, NULL, 0);
}
