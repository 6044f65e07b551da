/* tests/npyload.c — minimal .npy reader for tests. */
#include "npyload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *load_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *d = malloc(n > 0 ? (size_t)n : 1);
    if (d && n > 0 && fread(d, 1, (size_t)n, f) != (size_t)n) {
        free(d);
        d = NULL;
    }
    fclose(f);
    if (d) *size = (size_t)n;
    return d;
}

int npy_load(const char *path, npy_array *out)
{
    memset(out, 0, sizeof *out);
    size_t size;
    unsigned char *d = load_file(path, &size);
    if (!d) return -1;
    if (size < 10 || memcmp(d, "\x93NUMPY", 6)) { free(d); return -1; }
    size_t hlen, hoff;
    if (d[6] == 1) { hlen = d[8] | (size_t)d[9] << 8; hoff = 10; }
    else { hlen = d[8] | (size_t)d[9] << 8 | (size_t)d[10] << 16 | (size_t)d[11] << 24; hoff = 12; }
    if (hoff + hlen > size) { free(d); return -1; }
    char *h = malloc(hlen + 1);
    memcpy(h, d + hoff, hlen);
    h[hlen] = 0;
    char *p = strstr(h, "'descr':");
    if (p) sscanf(p + 8, " '%31[^']'", out->descr);
    out->fortran = strstr(h, "'fortran_order': True") != NULL;
    p = strstr(h, "'shape':");
    if (p) {
        p = strchr(p, '(') + 1;
        while (*p && *p != ')') {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p) { p++; continue; }
            out->shape[out->ndim++] = v;
            p = end;
        }
    }
    free(h);
    out->nbytes = size - hoff - hlen;
    out->data = malloc(out->nbytes ? out->nbytes : 1);
    memcpy(out->data, d + hoff + hlen, out->nbytes);
    free(d);
    return 0;
}

void npy_free(npy_array *a)
{
    free(a->data);
    a->data = NULL;
}
