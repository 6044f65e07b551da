/* tests/npyload.h — minimal .npy and raw file loading for tests. */
#ifndef ZC_TEST_NPYLOAD_H
#define ZC_TEST_NPYLOAD_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char descr[32];       /* NumPy dtype string, e.g. "<i2", "|u1", "<U5" */
    int fortran;          /* fortran_order */
    int ndim;
    int64_t shape[32];
    void *data;           /* raw array bytes as stored in the file (malloc'd) */
    size_t nbytes;
} npy_array;

/* Read a whole file (malloc'd; returns NULL on failure). */
void *load_file(const char *path, size_t *size);
/* Load a .npy file (version 1, 2 or 3 header). Returns 0 on success. */
int npy_load(const char *path, npy_array *out);
void npy_free(npy_array *a);

#endif
