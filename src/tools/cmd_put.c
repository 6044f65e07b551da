/* tools/cmd_put.c — `zcube put PATH IN.npy [--region SEL]`: write a .npy
 * file into a region of an existing array.
 *
 * The .npy must have the array's dtype (any byte order) and exactly the
 * region's shape (integer-indexed dimensions dropped). C-order files are
 * streamed box by box (boxes aligned to the array's write units: shards, or
 * chunks), each box gathered from the file with pread, so memory stays within
 * --max-mem; Fortran-order files are loaded whole and reordered first. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boxes.h"
#include "cli_util.h"
#include "commands.h"
#include "npy.h"
#include "region.h"

static const char USAGE[] =
    "usage: zcube put PATH IN.npy [--region SEL]\n"
    "\n"
    "Write the NumPy file IN.npy into the array at PATH. The file's dtype must be\n"
    "the array's (byte order may differ) and its shape must be the region's shape\n"
    "with integer-indexed dimensions dropped. Chunks only partly covered are read,\n"
    "updated and written back.\n"
    "\n"
    "Options:\n"
    "  -r, --region SEL   NumPy basic slicing (see 'zcube get --help');\n"
    "                     default: the whole array\n"
    "  --max-mem SIZE     memory for data in flight (default 256MB)\n"
    "  --threads N        encoding threads (default: all cores)\n"
    "  -h, --help         this text\n";

typedef struct {
    int fd;                   /* source file, or -1 for `mem` */
    const unsigned char *mem; /* whole source in C order (Fortran-order input) */
    uint64_t data_off;        /* file offset of element 0 */
    unsigned char *buf;       /* box being gathered */
    size_t itemsize;
    int err;                  /* errno of a failed read, or -1 for a short read */
} in_ctx;

static int get_run(uint64_t sel_off, uint64_t box_off, uint64_t n, void *vctx)
{
    in_ctx *c = vctx;
    unsigned char *dst = c->buf + box_off * c->itemsize;
    size_t len = (size_t)(n * c->itemsize);
    if (c->mem) {
        memcpy(dst, c->mem + sel_off * c->itemsize, len);
        return 0;
    }
    uint64_t off = c->data_off + sel_off * c->itemsize;
    while (len > 0) {
        ssize_t r = pread(c->fd, dst, len, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            c->err = r < 0 ? errno : -1;
            return 1;
        }
        dst += r;
        len -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

static int run(int argc, char **argv)
{
    const char *region_text = NULL, *max_mem = "256MB", *threads = NULL;
    cli_opt opts[] = {{"region", 'r', &region_text, NULL},
                      {"max-mem", 0, &max_mem, NULL},
                      {"threads", 0, &threads, NULL},
                      {NULL, 0, NULL, NULL}};
    const char *pos[2];
    int npos;
    int ec = cz_args(&cmd_put, argc, argv, opts, pos, 2, 2, &npos);
    if (ec >= 0) return ec;
    uint64_t budget;
    if (cli_parse_size(max_mem, "--max-mem", &budget) < 0) return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    if (threads) {
        int t;
        if (cli_parse_threads(threads, &t) < 0) return cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
    }
    const char *path = pos[0], *in = pos[1];

    /* Check the input before touching the array. */
    int fd = open(in, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cli_fail(CLI_EXIT_RUNTIME, "cannot open '%s': %s", in, strerror(errno));
    npy_header h;
    if (npy_read_header(fd, in, &h) < 0) {
        close(fd);
        return cli_fail(CLI_EXIT_RUNTIME, "%s", cli_lasterr());
    }
    zc_store *st;
    zc_zarr *arr;
    zc_zarr_info_t info;
    if ((ec = cz_open_array(path, 1, &st, &arr, &info))) {
        close(fd);
        return ec;
    }
    unsigned char *buf = NULL, *whole = NULL;
    if ((ec = cz_set_threads(arr, threads))) goto done;
    region_t reg;
    if (region_parse(region_text, info.ndim, info.shape, &reg) < 0) {
        ec = cli_fail(CLI_EXIT_USAGE, "%s", cli_lasterr());
        goto done;
    }
    if (h.dtype != info.dtype || h.itemsize != info.itemsize) {
        char a[32], b[32];
        npy_dtype_label(h.dtype, h.itemsize, a, sizeof a);
        npy_dtype_label(info.dtype, info.itemsize, b, sizeof b);
        ec = cli_fail(CLI_EXIT_RUNTIME, "dtype mismatch: '%s' has dtype %s ('%s') but the array '%s' has dtype %s; "
                      "convert the data first (e.g. numpy's astype)", in, a, h.descr, path, b);
        goto done;
    }
    int same = h.ndim == reg.out_ndim;
    for (int d = 0; same && d < h.ndim; d++) same = h.shape[d] == reg.out_shape[d];
    if (!same) {
        char a[ZC_MAX_DIMS * 24 + 8], b[ZC_MAX_DIMS * 24 + 8];
        cli_format_shape(a, sizeof a, h.ndim, h.shape);
        cli_format_shape(b, sizeof b, reg.out_ndim, reg.out_shape);
        ec = cli_fail(CLI_EXIT_RUNTIME, "shape mismatch: '%s' has shape %s but the %s has shape %s", in, a,
                      region_text ? "region" : "array", b);
        goto done;
    }

    in_ctx ic = {fd, NULL, h.data_offset, NULL, info.itemsize, 0};
    int swap = npy_needs_swap(&h);
    if (h.fortran && h.ndim > 1) {
        npy_header h2;
        if (npy_load_file(in, &h2, (void **)&whole) < 0) {
            ec = cli_fail(CLI_EXIT_RUNTIME, "%s", cli_lasterr());
            goto done;
        }
        ic.mem = whole; /* native byte order, C order */
        swap = 0;
    }

    int64_t unit[ZC_MAX_DIMS];
    cz_write_unit(&info, unit);
    boxes_t bx;
    boxes_init(&bx, reg.ndim, reg.range, reg.count, unit, info.itemsize, budget);
    buf = malloc(bx.max_bytes ? (size_t)bx.max_bytes : 1);
    if (!buf) {
        ec = cli_fail(CLI_EXIT_RUNTIME, "out of memory allocating %llu bytes (lower --max-mem)",
                      (unsigned long long)bx.max_bytes);
        goto done;
    }
    ic.buf = buf;
    while (boxes_next(&bx)) {
        uint64_t ne = boxes_nelems(&bx);
        if (boxes_runs(&bx, get_run, &ic)) {
            ec = ic.err > 0 ? cli_fail(CLI_EXIT_RUNTIME, "reading '%s': %s", in, strerror(ic.err))
                            : cli_fail(CLI_EXIT_RUNTIME, "reading '%s': truncated .npy (file shrank while reading)", in);
            goto done;
        }
        if (swap) npy_byteswap(h.dtype, h.itemsize, buf, (size_t)ne);
        zc_range r[ZC_MAX_DIMS];
        boxes_ranges(&bx, reg.range, r);
        int rc = zc_zarr_write(arr, r, buf, (size_t)(ne * info.itemsize));
        if (rc < 0) {
            ec = cli_fail_zc(rc, "writing '%s'", path);
            goto done;
        }
    }
done:
    free(buf);
    free(whole);
    close(fd);
    cz_close(st, arr);
    return ec;
}

const cli_command cmd_put = {"put", "write a .npy file into a region of an array", USAGE, run};
