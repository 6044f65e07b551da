"""zc.random: counter-based random arrays — the same values for a seed whatever
the chunking, so they are reproducible and computed chunk by chunk."""
import numpy as np

from . import _dtypes, _zcube
from ._array import Array
from ._io import _norm_chunks


def _make(kind, seed, size, chunks, dtype, a, b):
    shape = (size,) if isinstance(size, int) else tuple(size)
    dt = np.dtype(dtype or "float64")
    return Array(_zcube.random(kind, int(seed), shape, _norm_chunks(chunks, shape), _dtypes.code(dt),
                               float(a), float(b)), op=f"random.{kind}")


def uniform(low=0.0, high=1.0, size=(), *, seed=0, chunks=None, dtype=None):
    """Uniform in [low, high)."""
    return _make("uniform", seed, size, chunks, dtype, low, high)


def random(size=(), *, seed=0, chunks=None, dtype=None):
    """Uniform in [0, 1)."""
    return _make("uniform", seed, size, chunks, dtype, 0.0, 1.0)


def normal(loc=0.0, scale=1.0, size=(), *, seed=0, chunks=None, dtype=None):
    """Normal with mean loc and standard deviation scale."""
    return _make("normal", seed, size, chunks, dtype, loc, scale)


__all__ = ["normal", "random", "uniform"]
