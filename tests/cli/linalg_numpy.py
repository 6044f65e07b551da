#!/usr/bin/python3
"""tests/cli/linalg_numpy.py — `zcube eval` linear algebra against NumPy.

For matrices of several shapes and chunkings (tall-skinny, short-fat, square,
one where TSQR recurses because the stacked R factors are taller than a band),
runs `zcube eval` on qr(a)[i], svd(a)[i], svdvals(a), svd_compressed(...)[i],
solve, inv, cholesky, det, slogdet(a)[i], eigh(a)[i], eigvalsh and lstsq(...)[i]
(complex128 too for qr, svd, svdvals, det, slogdet, cholesky) with Zarr v2 inputs and outputs, and
checks against numpy.linalg: singular values equal to 1e-10 (relative to the
largest), Q·R = A and QᵀQ = I to 1e-10, |R| equal to NumPy's up to row signs,
U·diag(S)·Vt = A, solve/inv/cholesky/lstsq values to 1e-10.

Usage: /usr/bin/python3 linalg_numpy.py ZCUBE WORKDIR
Prints one line per failure and a last line "N checks, F failed"; exit 1 on failure.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import zarr

ZCUBE, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(20261122)
failures = []
nchecks = 0
counter = 0


def put(name, a, chunks):
    path = os.path.join(WORK, name + ".zarr")
    if os.path.exists(path):
        shutil.rmtree(path)
    z = zarr.open(path, mode="w", shape=a.shape, chunks=chunks, dtype=a.dtype)
    z[...] = a
    return path


def ev(expr, inputs, extra=()):
    """Run zcube eval; the result as a NumPy array (or None and the error)."""
    global counter
    counter += 1
    out = os.path.join(WORK, "out%d.zarr" % counter)
    cmd = [ZCUBE, "eval", expr, "-o", out, "--zarr-format", "2", "-q", "--allowed-mem", "256MB"]
    for k, v in inputs.items():
        cmd += ["--in", "%s=%s" % (k, v)]
    cmd += list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    r = zarr.open(out, mode="r")[...]
    shutil.rmtree(out)
    return r, ""


def check(cond, what):
    global nchecks
    nchecks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def close(got, exp, tol, what):
    if got is None:
        check(False, what + ": zcube failed")
        return
    ok = got.shape == exp.shape and np.max(np.abs(got - exp), initial=0) <= tol * max(1.0, np.max(np.abs(exp), initial=0))
    check(ok, "%s: shape %s vs %s, max diff %.3g" % (what, got.shape, exp.shape,
                                                    np.max(np.abs(got - exp), initial=0) if got.shape == exp.shape else -1))


def decompositions(m, n, chunks, label, cplx=False):
    a = rng.standard_normal((m, n)) + (1j * rng.standard_normal((m, n)) if cplx else 0)
    ins = {"a": put("a", a, chunks)}
    sref = np.linalg.svd(a, compute_uv=False)
    s, err = ev("svdvals(a)", ins)
    close(s, sref, 1e-10, "%s svdvals %s" % (label, err))
    u, e1 = ev("svd(a)[0]", ins)
    s2, e2 = ev("svd(a)[1]", ins)
    vt, e3 = ev("linalg.svd(a, full_matrices=False)[2]", ins)
    close(s2, sref, 1e-10, "%s svd(a)[1] %s" % (label, e2))
    if u is not None and vt is not None and s2 is not None:
        close(u @ np.diag(s2) @ vt, a, 1e-10, "%s U S Vt = A" % label)
        k = min(m, n)
        close(u.conj().T @ u, np.eye(k), 1e-10, "%s UtU = I" % label)
        close(vt @ vt.conj().T, np.eye(k), 1e-10, "%s Vt V = I" % label)
    else:
        check(False, "%s svd factors: %s %s" % (label, e1, e3))
    q, e4 = ev("qr(a)[0]", ins)
    r, e5 = ev("qr(a)[-1]", ins)
    if q is None or r is None:
        check(False, "%s qr: %s %s" % (label, e4, e5))
        return
    close(q @ r, a, 1e-10, "%s Q R = A" % label)
    close(q.conj().T @ q, np.eye(q.shape[1]), 1e-10, "%s QtQ = I" % label)
    rref = np.linalg.qr(a)[1]
    # up to a unit factor per row (a sign when real, a phase when complex)
    ph = np.diag(r) / np.where(np.diag(rref) == 0, 1, np.diag(rref))
    ph = ph / np.where(np.abs(ph) == 0, 1, np.abs(ph))
    close(r, rref * ph[:, None], 1e-10, "%s R = NumPy's R up to row signs" % label)
    check(np.all(np.tril(r, -1) == 0), "%s R upper triangular" % label)


decompositions(500, 8, (37, 8), "tall 500x8 (37,8)")
decompositions(500, 8, (20, 3), "tall 500x8 (20,3)")
decompositions(3000, 10, (20, 10), "tall 3000x10 (20,10), recursion")
decompositions(8, 300, (8, 50), "short-fat 8x300 (8,50)")
decompositions(40, 40, (13, 40), "square 40x40 (13,40)")
decompositions(123, 17, (10, 17), "float64 123x17 (10,17)")
decompositions(500, 8, (37, 8), "complex tall 500x8 (37,8)", cplx=True)
decompositions(3000, 10, (20, 10), "complex tall 3000x10 (20,10), recursion", cplx=True)
decompositions(8, 300, (8, 50), "complex short-fat 8x300 (8,50)", cplx=True)

# complex det, slogdet, cholesky (Hermitian positive definite)
n = 30
a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
p = a @ a.conj().T + n * np.eye(n)
ins = {"a": put("ca", a, (7, 30)), "p": put("cp", p, (30, 30))}
x, err = ev("det(a)", ins)
close(x, np.linalg.det(a), 1e-10, "complex det(a) " + err)
sign, logdet = np.linalg.slogdet(a)
x, err = ev("slogdet(a)[0]", ins)
close(x, sign, 1e-12, "complex slogdet(a)[0] " + err)
x, err = ev("slogdet(a)[1]", ins)
close(x, logdet, 1e-12, "complex slogdet(a)[1] " + err)
x, err = ev("cholesky(p)", ins)
close(x, np.linalg.cholesky(p), 1e-10, "complex cholesky(p) " + err)
# complex inv, solve (complex or real b), eigh of a Hermitian matrix (zgetri, zgetrs, zheevd)
bc = rng.standard_normal((n, 2)) + 1j * rng.standard_normal((n, 2))
br = rng.standard_normal(n)
ins.update({"bc": put("cbc", bc, (7, 2)), "br": put("cbr", br, (11,))})
for expr, ref in (("inv(a)", np.linalg.inv(a)), ("solve(a, bc)", np.linalg.solve(a, bc)),
                  ("solve(a, br)", np.linalg.solve(a, br)), ("solve(p, bc)", np.linalg.solve(p, bc)),
                  ("eigvalsh(p)", np.linalg.eigvalsh(p)), ("eigh(p)[0]", np.linalg.eigh(p)[0]),
                  ("matrix_power(a, -2)", np.linalg.matrix_power(a, -2))):
    x, err = ev(expr, ins)
    close(x, ref, 1e-10, "complex %s %s" % (expr, err))
    check(x is None or x.dtype == ref.dtype, "complex %s: dtype %s, NumPy's %s" % (expr, None if x is None else x.dtype, ref.dtype))
w_c = np.linalg.eigvalsh(p)
v, err = ev("eigh(p)[1]", ins)
close(None if v is None else v @ np.diag(w_c) @ v.conj().T, p, 1e-10, "complex eigh(p): V diag(w) Vh = P " + err)
close(None if v is None else v.conj().T @ v, np.eye(n), 1e-10, "complex eigh(p): VhV = I " + err)

# randomized SVD of a matrix of rank 10 plus small noise: the top values agree
m, n, k = 800, 300, 10
u0 = np.linalg.qr(rng.standard_normal((m, k)))[0]
v0 = np.linalg.qr(rng.standard_normal((n, k)))[0]
sig = 10.0 ** -np.arange(k) * 100
a = (u0 * sig) @ v0.T + 1e-9 * rng.standard_normal((m, n))
ins = {"a": put("lr", a, (100, 60))}
s, err = ev("svd_compressed(a, k=10, seed=0)[1]", ins)
close(s, np.linalg.svd(a, compute_uv=False)[:k], 1e-7, "svd_compressed(a, k=10, seed=0)[1] " + err)
s1, _ = ev("svd_compressed(a, 10, n_power_iter=1, seed=3)[1]", ins)
s2, _ = ev("svd_compressed(a, 10, n_power_iter=1, seed=3)[1]", ins)
check(s1 is not None and s2 is not None and np.array_equal(s1, s2), "svd_compressed: same seed, same values")
u, _ = ev("svd_compressed(a, k=10, seed=0)[0]", ins)
vt, _ = ev("svd_compressed(a, k=10, seed=0)[2]", ins)
if u is not None and vt is not None and s is not None:
    close(u @ np.diag(s) @ vt, a, 1e-7, "svd_compressed U S Vt = A (rank 10)")
    close(u.T @ u, np.eye(k), 1e-10, "svd_compressed UtU = I")
else:
    check(False, "svd_compressed factors")

# solvers
n = 60
a = rng.standard_normal((n, n)) + 5 * np.eye(n)
b = rng.standard_normal((n, 3))
b1 = rng.standard_normal(n)
p = a @ a.T
ins = {"a": put("sa", a, (16, 25)), "b": put("sb", b, (20, 3)), "c": put("sc", b1, (25,)), "p": put("sp", p, (60, 60))}
x, err = ev("solve(a, b)", ins)
close(x, np.linalg.solve(a, b), 1e-10, "solve(a, b) " + err)
x, err = ev("solve(a, c)", ins)
close(x, np.linalg.solve(a, b1), 1e-10, "solve(a, c) 1-D " + err)
x, err = ev("inv(a)", ins)
close(x, np.linalg.inv(a), 1e-10, "inv(a) " + err)
x, err = ev("cholesky(p)", ins)
close(x, np.linalg.cholesky(p), 1e-10, "cholesky(p) " + err)
x, err = ev("linalg.cholesky(p, upper=True)", ins)
close(x, np.linalg.cholesky(p).T, 1e-10, "cholesky(p, upper=True) " + err)
x, err = ev("det(a)", ins)
close(x, np.linalg.det(a), 1e-10, "det(a) " + err)
sign, logdet = np.linalg.slogdet(a)
x, err = ev("linalg.slogdet(a)[0]", ins)
close(x, sign, 0, "slogdet(a)[0] " + err)
x, err = ev("slogdet(a)[1]", ins)
close(x, logdet, 1e-12, "slogdet(a)[1] " + err)
w_ref, v_ref = np.linalg.eigh(p)
x, err = ev("linalg.eigh(p)[0]", ins)
close(x, w_ref, 1e-10, "eigh(p)[0] " + err)
v, err = ev("eigh(p)[1]", ins)
close(None if v is None else v @ np.diag(w_ref) @ v.T, p, 1e-10, "eigh(p): V diag(w) Vt = P " + err)
x, err = ev("eigvalsh(p)", ins)
close(x, w_ref, 1e-10, "eigvalsh(p) " + err)
x, err = ev("solve(a, b) - solve(a, b)[:, 0:3]", ins)
close(x, np.zeros((n, 3)), 0, "solve in an expression " + err)
m = 90
al = rng.standard_normal((m, 7))
bl = rng.standard_normal((m, 2))
ins = {"a": put("la", al, (30, 7)), "b": put("lb", bl, (90, 2))}
ref = np.linalg.lstsq(al, bl, rcond=None)
for i, what in enumerate(["x", "residuals", "rank", "s"]):
    got, err = ev("lstsq(a, b)[%d]" % i, ins)
    close(None if got is None else np.asarray(got, dtype=np.float64), np.asarray(ref[i], dtype=np.float64), 1e-10,
          "lstsq(a, b)[%d] (%s) %s" % (i, what, err))

# the rest of the linalg extension (composed in the library)
a = rng.standard_normal((7, 5))
st = rng.standard_normal((3, 4, 4))
c = rng.standard_normal((6, 3)) + 1j * rng.standard_normal((6, 3))
v1, v2 = rng.standard_normal((4, 3)), rng.standard_normal((3,))
sq = rng.standard_normal((5, 5)) + 3 * np.eye(5)
lowrank = rng.standard_normal((8, 3)) @ rng.standard_normal((3, 6))
ins = {"a": put("xa", a, (3, 2)), "s": put("xs", st, (2, 3, 4)), "c": put("xc", c, (4, 3)),
       "v": put("xv", v1, (3, 3)), "w": put("xw", v2, (3,)), "q": put("xq", sq, (2, 5)),
       "l": put("xl", lowrank, (3, 6))}
cases = [
    ("diagonal(a)", np.diagonal(a)), ("linalg.diagonal(a, offset=2)", np.diagonal(a, 2)),
    ("diagonal(a, offset=-3)", np.diagonal(a, -3)), ("diagonal(a, offset=9)", np.diagonal(a, 9)),
    ("diagonal(s, offset=1)", np.diagonal(st, 1, axis1=-2, axis2=-1)),
    ("trace(a)", np.trace(a)), ("trace(s, offset=-1)", np.trace(st, -1, axis1=-2, axis2=-1)),
    ("vector_norm(a)", np.linalg.norm(a.ravel())), ("vector_norm(a, axis=1)", np.linalg.norm(a, axis=1)),
    ("vector_norm(a, axis=0, ord=1)", np.linalg.norm(a, 1, axis=0)),
    ("vector_norm(a, axis=1, ord=inf)", np.linalg.norm(a, np.inf, axis=1)),
    ("vector_norm(a, axis=1, ord=-inf)", np.linalg.norm(a, -np.inf, axis=1)),
    ("vector_norm(a, axis=1, ord=0)", np.linalg.norm(a, 0, axis=1)),
    ("vector_norm(a, axis=(0, 1), ord=3, keepdims=True)", np.sum(np.abs(a) ** 3, keepdims=True) ** (1 / 3)),
    ("vector_norm(c, axis=0)", np.linalg.norm(c, axis=0)),
    ("matrix_norm(a)", np.linalg.norm(a, "fro")), ("matrix_norm(s)", np.linalg.norm(st, "fro", axis=(-2, -1))),
    ("matrix_norm(a, ord=1)", np.linalg.norm(a, 1)), ("matrix_norm(s, ord=-1)", np.linalg.norm(st, -1, axis=(-2, -1))),
    ("matrix_norm(a, ord=inf)", np.linalg.norm(a, np.inf)), ("matrix_norm(a, ord=-inf)", np.linalg.norm(a, -np.inf)),
    ("matrix_norm(a, ord=2)", np.linalg.norm(a, 2)), ("matrix_norm(a, ord=-2)", np.linalg.norm(a, -2)),
    ("matrix_norm(a, ord='nuc', keepdims=True)", np.linalg.norm(a, "nuc", keepdims=True)),
    ("matrix_norm(c, ord='nuc')", np.linalg.norm(c, "nuc")),
    ("cross(v, w)", np.cross(v1, v2)), ("linalg.cross(v, v, axis=-1)", np.cross(v1, v1)),
    ("matrix_power(q, 0)", np.linalg.matrix_power(sq, 0)), ("matrix_power(q, 5)", np.linalg.matrix_power(sq, 5)),
    ("matrix_power(s, 3)", np.linalg.matrix_power(st, 3)), ("matrix_power(q, -2)", np.linalg.matrix_power(sq, -2)),
    ("matrix_rank(l)", np.linalg.matrix_rank(lowrank)), ("matrix_rank(a)", np.linalg.matrix_rank(a)),
    ("linalg.matrix_rank(l, rtol=0.5)", np.linalg.matrix_rank(lowrank, tol=0.5 * np.linalg.svd(lowrank, compute_uv=False)[0])),
    ("pinv(a)", np.linalg.pinv(a)), ("pinv(l)", np.linalg.pinv(lowrank)), ("pinv(c)", np.linalg.pinv(c)),
]
_, err = ev("cross(a, a)", ins)
check("size 3" in err, "cross of non-3-vectors refused: " + err)

# stacks of matrices (one decomposition each, stacked) and the complete forms
sym = st @ np.swapaxes(st, -1, -2) + 4 * np.eye(4)
tall = rng.standard_normal((3, 7, 4))
ins.update({"y": put("xy", sym, (1, 4, 4)), "t": put("xt", tall, (2, 3, 4))})
stack_cases = [
    ("det(s)", np.linalg.det(st)), ("slogdet(s)[1]", np.linalg.slogdet(st)[1]), ("inv(s)", np.linalg.inv(st)),
    ("svdvals(t)", np.linalg.svd(tall, compute_uv=False)), ("svd(t)[1]", np.linalg.svd(tall)[1]),
    ("eigvalsh(y)", np.linalg.eigvalsh(sym)), ("cholesky(y)", np.linalg.cholesky(sym)),
    ("pinv(s)", np.linalg.pinv(st)), ("pinv(t)", np.linalg.pinv(tall)), ("matrix_rank(t)", np.linalg.matrix_rank(tall)),
    ("matrix_norm(t, ord=2)", np.linalg.norm(tall, 2, axis=(-2, -1))),
    ("matrix_norm(t, ord='nuc', keepdims=True)", np.linalg.norm(tall, "nuc", axis=(-2, -1), keepdims=True)),
    ("matrix_power(s, -1)", np.linalg.inv(st)), ("solve(s, s)", np.linalg.solve(st, st)),
    ("solve(s, s[0])", np.linalg.solve(st, np.broadcast_to(st[0], st.shape))),
    ("solve(s[:1], s)", np.linalg.solve(np.broadcast_to(st[:1], st.shape), st)),
    ("solve(s, s[0, 0])", np.linalg.solve(st, np.broadcast_to(st[0, 0], (3, 4))[..., None])[..., 0]),
    ("solve(s[:0], s[:0])", np.zeros((0, 4, 4))), ("det(s[:0])", np.zeros((0,))), ("svdvals(t[:0])", np.zeros((0, 4))),
]
for expr, ref in cases + stack_cases:
    got, err = ev(expr, ins)
    ref = np.asarray(ref)
    close(None if got is None else np.asarray(got, dtype=ref.dtype), ref, 1e-10, "%s %s" % (expr, err))

_, err = ev("solve(s[:2], s)", ins)
check("do not broadcast in dimension 0 (2 and 3)" in err, "solve of stacks 2 and 3 refused: " + err)


def factors(exprs, what):
    out = []
    for e in exprs:
        got, err = ev(e, ins)
        if got is None:
            check(False, "%s: %s: %s" % (what, e, err))
            return None
        out.append(got)
    return out


for name, x in (("t", tall), ("a", a), ("c", c), ("s", st)):
    m, n = x.shape[-2:]
    f = factors(["qr(%s, mode='complete')[0]" % name, "qr(%s, mode='complete')[1]" % name], "qr complete " + name)
    if f:
        q, r = f
        eye = np.broadcast_to(np.eye(m), q.shape)
        check(q.shape == x.shape[:-2] + (m, m) and r.shape == x.shape, "qr complete %s shapes %s %s" % (name, q.shape, r.shape))
        close(np.swapaxes(q, -1, -2).conj() @ q, eye, 1e-10, "qr complete %s: QhQ = I" % name)
        close(q @ r, x, 1e-10, "qr complete %s: QR = A" % name)
        check(np.all(np.tril(r, -1) == 0), "qr complete %s: R upper triangular" % name)
    f = factors(["svd(%s, full_matrices=True)[%d]" % (name, i) for i in range(3)], "svd full " + name)
    if f:
        u, sv, vh = f
        k = min(m, n)
        check(u.shape == x.shape[:-2] + (m, m) and vh.shape == x.shape[:-2] + (n, n), "svd full %s shapes" % name)
        close(np.swapaxes(u, -1, -2).conj() @ u, np.broadcast_to(np.eye(m), u.shape), 1e-10, "svd full %s: UhU = I" % name)
        close(vh @ np.swapaxes(vh, -1, -2).conj(), np.broadcast_to(np.eye(n), vh.shape), 1e-10, "svd full %s: VhV = I" % name)
        close((u[..., :, :k] * sv[..., None, :]) @ vh[..., :k, :], x, 1e-10, "svd full %s: U S Vh = A" % name)
_, err = ev("vector_norm(a, axis=())", ins)
check("axis=()" in err, "vector_norm(axis=()) refused, not reduced over all axes: " + err)
_, err = ev("matrix_norm(a, ord=3)", ins)
check("ord" in err, "matrix_norm(ord=3) refused: " + err)

print("%d checks, %d failed" % (nchecks, len(failures)))
sys.exit(1 if failures else 0)
