/* core/json.h — jansson with unsigned 64-bit integers.
 *
 * jansson keeps integers as int64 and refuses larger ones ("too big integer"),
 * but Zarr metadata holds uint64 fill values up to 2^64-1 (zarr-python writes
 * 18446744073709551615). zc_json_load turns such integer tokens into strings
 * "\x01u64:<digits>" before parsing; dtype.c reads and writes that form, and
 * zc_json_dump turns it back into a bare integer. */
#ifndef ZC_CORE_JSON_H
#define ZC_CORE_JSON_H

#include <jansson.h>

#define ZC_JSON_U64_PREFIX "\x01u64:"

json_t *zc_json_load(const char *text, size_t n, size_t flags, json_error_t *err);
/* Like json_dumps; free the result with free(). */
char *zc_json_dump(const json_t *j, size_t flags);

#endif
