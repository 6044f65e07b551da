"""zc.fft: the array API's fft extension, lazily (FFTW underneath; axes longer
than a task are transformed in bounded memory)."""
from . import _dtypes, _zcube
from ._array import _wrap

_BACKWARD = "backward"


def _norm(norm):
    if norm not in ("backward", "ortho", "forward"):
        raise ValueError(f"norm {norm!r}: expected 'backward', 'ortho' or 'forward'")
    return norm


def _one(name):
    def f(x, /, *, n=None, axis=-1, norm=_BACKWARD):
        return _wrap(_zcube.fft1(name, x._node, -1 if n is None else int(n), int(axis), _norm(norm)), x, op=name)
    f.__name__ = name
    f.__doc__ = f"numpy.fft.{name} semantics, lazily (array API signature)."
    return f


def _many(name):
    def f(x, /, *, s=None, axes=None, norm=_BACKWARD):
        return _wrap(_zcube.fftn(name, x._node, None if s is None else tuple(s),
                                 None if axes is None else tuple(axes), _norm(norm)), x, op=name)
    f.__name__ = name
    f.__doc__ = f"numpy.fft.{name} semantics, lazily (array API signature)."
    return f


fft, ifft, rfft, irfft, hfft, ihfft = (_one(n) for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fftn, ifftn, rfftn, irfftn = (_many(n) for n in ("fftn", "ifftn", "rfftn", "irfftn"))


def _freq(real, n, d, dtype):
    from ._array import Array
    code = 0 if dtype is None else _dtypes.code(dtype)
    return Array(_zcube.fftfreq(real, int(n), float(d), code), op="rfftfreq" if real else "fftfreq")


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    return _freq(False, n, d, dtype)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    return _freq(True, n, d, dtype)


def fftshift(x, /, *, axes=None):
    ax = None if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))
    return _wrap(_zcube.fftshift(False, x._node, ax), x, op="fftshift")


def ifftshift(x, /, *, axes=None):
    ax = None if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))
    return _wrap(_zcube.fftshift(True, x._node, ax), x, op="ifftshift")


__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
