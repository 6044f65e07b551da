/* tools/cmd_put.c — `zcube put PATH IN.npy [--region SEL]`: write a .npy
 * file into a region of an existing array.
 *
 * The .npy must have the array's dtype (any byte order) and exactly the
 * region's shape (integer-indexed dimensions dropped). C-order files are
 * streamed box by box (boxes aligned to the array's write units: shards, or
 * chunks), each box gathered from the file with pread on a thread of its own
 * while the box before it is encoded (boxpipe.h), so memory stays within
 * --max-mem; Fortran-order files are loaded whole and reordered first. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boxpipe.h"
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
    unsigned char *buf;       /* box being gathered (get_run) */
    size_t itemsize;
    int swap;                 /* byte order differs: swap after reading */
    zc_dtype dtype;
    int err;                  /* errno of a failed read, or -1 for a short read */
    zc_zarr *arr;
    const zc_range *sel;      /* the region, in array space */
    int rc;                   /* status of a failed write */
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

/* boxpipe producer (a thread of its own): gather a box from the file. */
static int read_box(const boxes_t *b, unsigned char *buf, void *vctx)
{
    in_ctx *c = vctx;
    c->buf = buf;
    if (boxes_runs(b, get_run, c)) return 1;
    if (c->swap) npy_byteswap(c->dtype, c->itemsize, buf, (size_t)boxes_nelems(b));
    return 0;
}

/* boxpipe consumer (the caller's thread, so zc_errmsg stays its): encode and store a box. */
static int write_box(const boxes_t *b, unsigned char *buf, void *vctx)
{
    in_ctx *c = vctx;
    zc_range r[ZC_MAX_DIMS];
    boxes_ranges(b, c->sel, r);
    int rc = zc_zarr_write(c->arr, r, buf, (size_t)(boxes_nelems(b) * c->itemsize));
    if (rc < 0) c->rc = rc;
    return rc < 0;
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
    unsigned char *whole = NULL;
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

    in_ctx ic = {.fd = fd, .data_off = h.data_offset, .itemsize = info.itemsize, .swap = npy_needs_swap(&h),
                 .dtype = h.dtype, .arr = arr, .sel = reg.range};
    if (h.fortran && h.ndim > 1) {
        npy_header h2;
        if (npy_load_file(in, &h2, (void **)&whole) < 0) {
            ec = cli_fail(CLI_EXIT_RUNTIME, "%s", cli_lasterr());
            goto done;
        }
        ic.mem = whole; /* native byte order, C order */
        ic.swap = 0;
    }

    /* Boxes aligned to the array's write units, each read from the file
     * while the one before is encoded. */
    int64_t unit[ZC_MAX_DIMS];
    cz_write_unit(&info, unit);
    boxes_t bx;
    bool overlap = boxpipe_boxes(&bx, reg.ndim, reg.range, reg.count, unit, info.itemsize, budget);
    switch (boxpipe_run(&bx, overlap, true, read_box, write_box, &ic)) {
    case BOXPIPE_OK:
        break;
    case BOXPIPE_PRODUCE_FAILED:
        ec = ic.err > 0 ? cli_fail(CLI_EXIT_RUNTIME, "reading '%s': %s", in, strerror(ic.err))
                        : cli_fail(CLI_EXIT_RUNTIME, "reading '%s': truncated .npy (file shrank while reading)", in);
        break;
    case BOXPIPE_CONSUME_FAILED:
        ec = cli_fail_zc(ic.rc, "writing '%s'", path);
        break;
    case BOXPIPE_NO_MEMORY:
        ec = cli_fail(CLI_EXIT_RUNTIME, "out of memory allocating %d x %llu bytes (lower --max-mem)", overlap ? 2 : 1,
                      (unsigned long long)bx.max_bytes);
        break;
    }
done:
    free(whole);
    close(fd);
    cz_close(st, arr);
    return ec;
}

const cli_command cmd_put = {"put", "write a .npy file into a region of an array", USAGE, run};
