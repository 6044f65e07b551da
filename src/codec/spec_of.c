/* codec/spec_of.c — the inverse of spec.c: the spec string ("zstd:5",
 * "blosc:lz4:5:shuffle,crc32c", "none") that recreates the compressor and
 * checksum of a codec list, for copies that keep an array's codec in
 * another format or chunking (`zcube copy`).
 *
 * The list is v3-shaped (zarr.h: v2 entries keep their numcodecs spelling
 * {"id": ...}, configuration at the top level); what comes before the
 * array→bytes codec (transpose) is passed over, and filters (delta, shuffle,
 * fixedscaleoffset, ...) are dropped: a copy moves decoded values. A
 * compressor zcube cannot write (lzma, blosc2, zfpy) has no spec. */
#include <stdio.h>
#include <string.h>

#include "codec/codec.h"
#include "core/alloc.h"
#include "core/error.h"

static const json_t *field(const json_t *c, const char *key)
{
    const json_t *conf = json_object_get(c, "configuration");
    return json_object_get(json_is_object(conf) ? conf : c, key);
}

static long long int_of(const json_t *c, const char *key, long long dflt)
{
    const json_t *v = field(c, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static const char *codec_name(const json_t *c)
{
    const char *n = json_string_value(json_object_get(c, "name"));
    if (!n) n = json_string_value(json_object_get(c, "id"));
    if (!n) return "";
    if (!strncmp(n, "numcodecs.", 10)) n += 10;
    return n;
}

int codec_spec_of(const json_t *codecs, int zarr_format, char **out)
{
    *out = NULL;
    if (!json_is_array(codecs)) return zc__err(ZC_EINVAL, "codec_spec_of: the codecs are not a JSON array");
    char comp[128] = "none";
    int crc = 0, seen_bytes = 0;
    for (size_t i = 0; i < json_array_size(codecs); i++) {
        const json_t *c = json_array_get(codecs, i);
        const char *n = codec_name(c);
        if (!seen_bytes) {
            seen_bytes = !strcmp(n, "bytes") || !strcmp(n, "endian");
            continue;
        }
        if (!strcmp(n, "zstd")) {
            snprintf(comp, sizeof comp, "zstd:%lld", int_of(c, "level", 3));
        } else if (!strcmp(n, "gzip") || !strcmp(n, "zlib") || !strcmp(n, "bz2")) {
            snprintf(comp, sizeof comp, "%s:%lld", n, int_of(c, "level", !strcmp(n, "bz2") ? 9 : 5));
        } else if (!strcmp(n, "lz4")) {
            snprintf(comp, sizeof comp, "lz4:%lld", int_of(c, "acceleration", 1));
        } else if (!strcmp(n, "blosc")) {
            const char *cname = json_string_value(field(c, "cname"));
            const char *shuf = json_string_value(field(c, "shuffle"));
            static const char *const SHUF[] = {"noshuffle", "shuffle", "bitshuffle"};
            if (!shuf) {
                long long s = int_of(c, "shuffle", 1);
                shuf = s >= 0 && s <= 2 ? SHUF[s] : "auto";
            }
            snprintf(comp, sizeof comp, "blosc:%s:%lld:%s", cname ? cname : "lz4", int_of(c, "clevel", 5), shuf);
        } else if (!strcmp(n, "crc32c")) {
            crc = 1;
        } else if (!strcmp(n, "lzma") || !strcmp(n, "blosc2") || !strcmp(n, "zfpy")) {
            return 0; /* a compressor zcube cannot write */
        }
    }
    char spec[160];
    snprintf(spec, sizeof spec, "%s%s", comp, crc && zarr_format == 3 ? ",crc32c" : "");
    *out = zc__strdup(spec);
    return *out ? 0 : ZC_ENOMEM;
}
