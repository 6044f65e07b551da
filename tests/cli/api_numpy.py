"""tests/cli/api_numpy.py — the library's manipulation, indexing, cumulative and
data type functions (zcube.h sections 4 and 9) against NumPy 1.24, through
ctypes on libzcube.so: random shapes, dtypes, chunks, axes and arguments per
seed; results computed with zc_compute_buffer; chains of operations (fused
views over views) too. Usage: api_numpy.py LIBZCUBE.so SEED ITERATIONS"""
import ctypes as C
import sys

import numpy as np

L = C.CDLL(sys.argv[1])
SEED, ITERS = int(sys.argv[2]), int(sys.argv[3])
P = C.c_void_p


class Spec(C.Structure):
    _fields_ = [("struct_size", C.c_uint), ("work_dir", C.c_char_p), ("allowed_mem", C.c_size_t),
                ("reserved_mem", C.c_size_t), ("nthreads", C.c_int), ("resume", C.c_int), ("max_retries", C.c_int),
                ("progress", C.c_void_p), ("progress_ctx", C.c_void_p), ("max_input_blocks", C.c_int),
                ("executor", C.c_char_p)]


class Index(C.Structure):
    _fields_ = [("kind", C.c_int), ("start", C.c_int64), ("stop", C.c_int64), ("step", C.c_int64),
                ("has_start", C.c_int), ("has_stop", C.c_int), ("index", C.c_int64)]


class Finfo(C.Structure):
    _fields_ = [("bits", C.c_int), ("eps", C.c_double), ("max", C.c_double), ("min", C.c_double),
                ("smallest_normal", C.c_double), ("dtype", C.c_int)]


class Iinfo(C.Structure):
    _fields_ = [("bits", C.c_int), ("min", C.c_int64), ("max", C.c_uint64), ("dtype", C.c_int)]


SPEC = Spec(C.sizeof(Spec), None, 256 << 20, 1 << 20, 0, 0, 2, None, None, 64, None)
NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
         "float64", "complex64", "complex128"]
DT = {np.dtype(n): i + 1 for i, n in enumerate(NAMES)}
RDT = {v: k for k, v in DT.items()}
NONE = -2**31
L.zc_errmsg.restype = C.c_char_p
L.zc_array_release.argtypes = [P]
rng = np.random.default_rng(SEED)
cases = fails = 0
live = []


def ck(rc, what=""):
    if rc != 0:
        raise RuntimeError(f"{what}: {L.zc_errmsg().decode()}")


def ints(v, t=C.c_int):
    return (t * max(len(v), 1))(*[int(x) for x in v])


def lazy(a, chunks=None):
    a = np.array(a, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
    if chunks is None:
        chunks = [int(rng.integers(1, s + 1)) if s else 1 for s in a.shape]
    out = P()
    ck(L.zc_asarray(a.ctypes.data_as(P), DT[a.dtype], a.ndim, ints(a.shape, C.c_int64), ints(chunks, C.c_int64),
                    C.byref(out)), "asarray")
    live.append(out)
    return out


def call(fn, *args):
    out = P()
    ck(getattr(L, fn)(*args, C.byref(out)), fn)
    live.append(out)
    return out


def value(x):
    nd, sh, dt = C.c_int(), (C.c_int64 * 32)(), C.c_int()
    ck(L.zc_array_info(x, C.byref(nd), sh, None, C.byref(dt)))
    res = np.empty(tuple(sh[i] for i in range(nd.value)), RDT[dt.value])
    ck(L.zc_compute_buffer(C.byref(SPEC), x, res.ctypes.data_as(P), C.c_size_t(res.nbytes), None), "compute")
    return res


def check(name, got, want):
    global cases, fails
    cases += 1
    want = np.asarray(want)
    if isinstance(got, P):
        got = value(got)
    same = got.shape == want.shape and got.dtype == want.dtype
    if same:
        if got.dtype.kind in "biuUSO":
            same = np.array_equal(got, want)
        else:
            same = np.allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
    if not same:
        fails += 1
        print(f"FAIL seed {SEED}: {name}: got {got.dtype}{got.shape} want {want.dtype}{want.shape}")
        if got.size < 40 and got.shape == want.shape:
            print("  got ", got.ravel(), "\n  want", want.ravel())


def random_array():
    nd = int(rng.integers(0 if rng.random() < 0.05 else 1, 4))
    shape = tuple(int(rng.integers(0 if rng.random() < 0.05 else 1, 7)) for _ in range(nd))
    dt = rng.choice(["int32", "float64", "uint8", "int64", "float32", "int8", "bool", "complex128"])
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.startswith("float"):
        return rng.standard_normal(shape).astype(dt)
    return rng.integers(-40 if dt[0] == "i" else 0, 40, size=shape).astype(dt)


def random_key(shape):
    """A basic index: slices with steps of either sign and bounds past the ends,
    integers, None and at most one ..., as NumPy takes them."""
    key, d, ell = [], 0, False
    while d < len(shape) and (ell or rng.random() < 0.85):  # after ..., every dim left is indexed
        r = rng.random()
        if r < 0.12:
            key.append(None)
            continue
        if r < 0.2 and not ell:
            key.append(Ellipsis)
            ell = True
            d = len(shape) - int(rng.integers(0, len(shape) - d + 1))
            continue
        n = shape[d]
        if r < 0.35 and n:
            key.append(int(rng.integers(-n, n)))
        else:
            b = lambda: None if rng.random() < 0.3 else int(rng.integers(-n - 3, n + 4))
            key.append(slice(b(), b(), int(rng.choice([1, 1, 2, 3, -1, -1, -2, -3, -7, 50, -50]))))
        d += 1
    return tuple(key)


def index_entries(key):
    e = (Index * max(len(key), 1))()
    for i, k in enumerate(key):
        if k is None:
            e[i].kind = 2
        elif k is Ellipsis:
            e[i].kind = 3
        elif isinstance(k, slice):
            e[i].kind, e[i].step = 0, k.step
            e[i].has_start, e[i].start = k.start is not None, k.start or 0
            e[i].has_stop, e[i].stop = k.stop is not None, k.stop or 0
        else:
            e[i].kind, e[i].index = 1, k
    return e


def default_scan_dtype(dt):
    if dt.kind in "bi":
        return np.int64
    if dt.kind == "u":
        return np.uint64
    return dt


for it in range(ITERS):
    a = random_array()
    x = lazy(a)
    nd = a.ndim
    ax = int(rng.integers(-nd, nd)) if nd else 0
    if rng.random() < 0.3:  # pulls through a view of a stored-like chain: flip(flip(x)) is x
        x = call("zc_flip", call("zc_flip", x, None, 0), None, 0)
    for _ in range(3):
        key = random_key(a.shape)
        check(f"getitem {key}", call("zc_getitem", x, index_entries(key), len(key)), a[key])
    if nd:
        key = random_key(a.shape)  # a view of a view: steps compose, flips cancel
        k2 = random_key(a[key].shape)
        check(f"getitem {key} {k2}", call("zc_getitem", call("zc_getitem", x, index_entries(key), len(key)),
                                          index_entries(k2), len(k2)), a[key][k2])
    if nd:  # data-dependent sizes: masks of 1..nd leading dims, all-False to all-True, one row per chunk
        k = int(rng.integers(1, nd + 1))
        mk = rng.random(a.shape[:k]) < rng.choice([0.0, 0.1, 0.5, 1.0])
        mx = lazy(mk, [1] * k if rng.random() < 0.3 else None)
        sel = call("zc_mask_select", C.byref(SPEC), x, mx)
        check(f"mask_select {k} dims", sel, a[mk])
        key = random_key(a[mk].shape)  # a view of it, planned as of any array
        check(f"mask_select {k} dims then {key}", call("zc_getitem", sel, index_entries(key), len(key)), a[mk][key])
        nz = (P * nd)()
        ck(L.zc_nonzero(C.byref(SPEC), x, nz), "nonzero")
        live.extend(P(nz[d]) for d in range(nd))
        for d, want in enumerate(np.nonzero(a)):
            check(f"nonzero[{d}]", P(nz[d]), want)
        t = a.ravel()[rng.integers(0, a.size, size=3)] if a.size and rng.random() < 0.7 else random_array()
        t = (t.real if t.dtype.kind == "c" and a.dtype.kind != "c" else t).astype(a.dtype)
        check("isin", call("zc_isin", x, lazy(t), 0), np.isin(a, t))
        check("isin invert", call("zc_isin", x, lazy(t), 1), np.isin(a, t, invert=True))
    if nd:  # several arrays in or out (array API 2025.12: tuple expand_dims, broadcast_shapes)
        axes = [int(v) for v in rng.choice(np.arange(-nd - 2, nd + 2), int(rng.integers(1, 3)), replace=False)]
        try:
            want = np.expand_dims(a, tuple(axes))
        except (ValueError, np.AxisError):  # out of range or repeated: refused too
            rc = L.zc_expand_dims_axes(x, ints(axes), len(axes), C.byref(P()))
            check(f"expand_dims {axes} refused", np.array(rc < 0), np.array(True))
        else:
            check(f"expand_dims {axes}", call("zc_expand_dims_axes", x, ints(axes), len(axes)), want)
        outs = (P * a.shape[ax])()
        ck(L.zc_unstack(x, ax, outs), "unstack")
        live.extend(P(outs[k]) for k in range(a.shape[ax]))
        for k in range(a.shape[ax]):
            check(f"unstack axis {ax} [{k}]", P(outs[k]), np.take(a, k, ax))
        others = [a[(0,) * int(rng.integers(0, nd + 1))] if a.size else a, np.ones((1,) * nd, a.dtype), a]
        arrs = (P * 3)(*[lazy(o) for o in others])
        bo = (P * 3)()
        ck(L.zc_broadcast_arrays(3, arrs, bo), "broadcast_arrays")
        for k, want in enumerate(np.broadcast_arrays(*others)):
            live.append(P(bo[k]))
            check(f"broadcast_arrays [{k}]", P(bo[k]), want)
        nds, shp, sh = ints([o.ndim for o in others]), (C.POINTER(C.c_int64) * 3)(), (C.c_int64 * 32)()
        for k, o in enumerate(others):
            shp[k] = ints(o.shape, C.c_int64)
        n_out = C.c_int()
        ck(L.zc_broadcast_shapes(3, nds, shp, C.byref(n_out), sh), "broadcast_shapes")
        check("broadcast_shapes", np.array(sh[:n_out.value]), np.array(np.broadcast_shapes(*(o.shape for o in others))))
        vecs = [a.ravel()[: int(rng.integers(0, 5))] for _ in range(min(nd, 3))]
        for ij in (0, 1):
            mo = (P * len(vecs))()
            ck(L.zc_meshgrid(len(vecs), (P * len(vecs))(*[lazy(v) for v in vecs]), ij, mo), "meshgrid")
            for k, want in enumerate(np.meshgrid(*vecs, indexing="ij" if ij else "xy")):
                live.append(P(mo[k]))
                check(f"meshgrid {'ij' if ij else 'xy'} [{k}]", P(mo[k]), want)
    if nd:
        perm = rng.permutation(nd)
        check("permute_dims", call("zc_permute_dims", x, ints(perm), nd), np.transpose(a, perm))
        k = int(rng.integers(1, nd + 1))
        src, dst = rng.choice(nd, k, replace=False), rng.choice(nd, k, replace=False)
        check(f"moveaxis {src} {dst}", call("zc_moveaxis", x, ints(src), ints(dst), k), np.moveaxis(a, src, dst))
        sft = int(rng.integers(-20, 20))
        check("roll", call("zc_roll", x, ints([sft], C.c_int64), 1, ints([ax]), 1), np.roll(a, sft, ax))
        axes = rng.choice(nd, int(rng.integers(1, nd + 1)))
        shifts = rng.integers(-9, 9, size=len(axes))
        check(f"roll {shifts} {axes}", call("zc_roll", x, ints(shifts, C.c_int64), len(shifts), ints(axes), len(axes)),
              np.roll(a, shifts, axes))
        r = int(rng.integers(0, 4))
        check("repeat", call("zc_repeat", x, C.c_int64(r), ax), np.repeat(a, r, ax))
        if a.shape[ax]:
            idx = rng.integers(-a.shape[ax], a.shape[ax], size=int(rng.integers(0, 7)))
            check("take", call("zc_take", x, ints(idx, C.c_int64), C.c_int64(len(idx)), ax), np.take(a, idx, ax))
        fl = rng.choice(nd, int(rng.integers(0, nd + 1)), replace=False)
        check("flip", call("zc_flip", x, ints(fl), len(fl)), np.flip(a, tuple(fl) if len(fl) else None))
        n = int(rng.integers(0, 3))
        if a.dtype.kind != "u":
            check("diff", call("zc_diff", x, ax, n, None, None), np.diff(a, n, ax))
        if a.dtype.kind != "u" and a.shape[ax]:
            pre = np.take(a, [0], ax) * 2
            check("diff prepend/append", call("zc_diff", x, ax, 1, lazy(pre), lazy(a)),
                  np.diff(a, 1, ax, prepend=pre, append=a))
        rd = default_scan_dtype(a.dtype)
        check("cumulative_sum", call("zc_cumulative_sum", x, ax, 0, 0), np.cumsum(a, ax, dtype=rd))
        init = np.ones([1 if d == ax % nd else s for d, s in enumerate(a.shape)], dtype=rd)
        check("cumulative_prod initial", call("zc_cumulative_prod", x, ax, 0, 1),
              np.concatenate([init, np.cumprod(a, ax, dtype=rd)], ax))
        if a.dtype.kind in "iu":
            check("cumulative_sum int8", call("zc_cumulative_sum", x, ax, DT[np.dtype("int8")], 0),
                  np.cumsum(a, ax, dtype=np.int8))
        parts = [a, np.take(a, range(min(2, a.shape[ax])), ax).astype(np.complex64 if a.dtype.kind == "c" else np.float32)]
        check("concat promoted", call("zc_concat", 2, (P * 2)(x, lazy(parts[1])), ax), np.concatenate(parts, ax))
        check("concat none", call("zc_concat", 3, (P * 3)(x, x, x), NONE), np.concatenate([a, a, a], None))
        sax = int(rng.integers(-nd - 1, nd + 1))
        check("stack", call("zc_stack", 4, (P * 4)(x, x, x, x), sax), np.stack([a] * 4, sax))
        check("expand_dims", call("zc_expand_dims", x, sax), np.expand_dims(a, sax))
        e = call("zc_expand_dims", x, sax)
        check("squeeze", call("zc_squeeze", e, ints([sax]), 1), a)
        bshape = [int(rng.integers(1, 3))] + [1 if rng.random() < 0.3 and s == 1 else s for s in a.shape]
        one = np.take(a, [0], ax) if a.shape[ax] else a
        check("broadcast_to", call("zc_broadcast_to", lazy(one), len(bshape),
                                   ints([b if i == 0 else (one.shape[i - 1] if one.shape[i - 1] != 1 else b2)
                                         for i, (b, b2) in enumerate(zip(bshape, bshape))], C.c_int64)),
              np.broadcast_to(one, [b if i == 0 else (one.shape[i - 1] if one.shape[i - 1] != 1 else b2)
                                    for i, (b, b2) in enumerate(zip(bshape, bshape))]))
    new = list(a.shape)
    rng.shuffle(new)
    tgt = [int(np.prod(new))] if it % 3 == 0 else new
    if it % 2 and tgt and (np.prod(tgt) or len(tgt) == 1):
        tgt[int(rng.integers(0, len(tgt)))] = -1
    check(f"reshape {a.shape} -> {tgt}", call("zc_reshape", x, len(tgt), ints(tgt, C.c_int64)), a.reshape(tgt))
    if nd >= 1:  # a reshape of a permuted view, then a strided consumer (fused chain)
        perm = rng.permutation(nd)
        t = np.transpose(a, perm)
        tr = [int(t.size)]
        chain = call("zc_reshape", call("zc_permute_dims", x, ints(perm), nd), 1, ints(tr, C.c_int64))
        check("reshape(permute)", chain, t.reshape(-1))
    reps = rng.integers(0, 3, size=int(rng.integers(1, 4)))
    check(f"tile {reps}", call("zc_tile", x, ints(reps, C.c_int64), len(reps)), np.tile(a, reps))
    sft = int(rng.integers(-20, 20))
    check("roll none", call("zc_roll", x, ints([sft], C.c_int64), 1, None, 0), np.roll(a, sft))
    check("repeat none", call("zc_repeat", x, C.c_int64(2), NONE), np.repeat(a, 2))
    if nd >= 2:
        k = int(rng.integers(-3, 4))
        check("tril", call("zc_tril", x, C.c_int64(k)), np.tril(a, k))
        check("triu", call("zc_triu", x, C.c_int64(k)), np.triu(a, k))
        check("matrix_transpose", call("zc_matrix_transpose", x), np.swapaxes(a, -1, -2))
    like = NAMES[int(rng.integers(0, len(NAMES)))]
    check("full_like", call("zc_full_like", x, C.c_double(3), DT[np.dtype(like)]), np.full_like(a, 3, dtype=like))
    check("zeros_like", call("zc_zeros_like", x, 0), np.zeros_like(a))
    for p in live:
        L.zc_array_release(p)
    live.clear()

# data type functions
for d1 in NAMES:
    for d2 in NAMES:
        out, res = C.c_int(), C.c_int()
        ck(L.zc_result_type(2, ints([DT[np.dtype(d1)], DT[np.dtype(d2)]]), C.byref(out)))
        check(f"result_type({d1}, {d2})", np.array(RDT[out.value].name), np.array(np.result_type(d1, d2).name))
        ck(L.zc_can_cast(DT[np.dtype(d1)], DT[np.dtype(d2)], C.byref(res)))
        check(f"can_cast({d1}, {d2})", np.array(bool(res.value)), np.array(np.can_cast(d1, d2)))
    if np.dtype(d1).kind in "fc":
        f = Finfo()
        ck(L.zc_finfo(DT[np.dtype(d1)], C.byref(f)))
        ref = np.finfo(d1)
        got = np.array([f.bits, f.eps, f.max, f.min, f.smallest_normal])
        check(f"finfo({d1})", got, np.array([ref.bits, ref.eps, ref.max, ref.min, ref.smallest_normal], dtype=float))
    elif np.dtype(d1).kind in "iu":
        i = Iinfo()
        ck(L.zc_iinfo(DT[np.dtype(d1)], C.byref(i)))
        ref = np.iinfo(d1)
        check(f"iinfo({d1})", np.array([i.bits, i.min, int(i.max)], dtype=object).astype(float),
              np.array([ref.bits, ref.min, ref.max], dtype=object).astype(float))
print(f"api_numpy seed {SEED}: {cases} cases, {fails} failed")
sys.exit(1 if fails else 0)
