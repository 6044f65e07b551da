"""zc.Spec: how a computation runs (memory bound, threads, work folder), in the
style of Cubed's Spec, and the process-wide default."""
import contextlib
import re
import threading

_SIZE = re.compile(r"^\s*([0-9.]+)\s*([kKMGT]i?B|B)?\s*$")
_UNIT = {None: 1, "B": 1, "kB": 10 ** 3, "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12,
         "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40}


def parse_size(v, what):
    """Bytes from an int or a string such as "500MB" or "2GiB"."""
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 0:
            raise ValueError(f"{what}: {v} is negative")
        return v
    m = _SIZE.match(str(v))
    if not m or m.group(2) not in _UNIT:
        raise ValueError(f"{what}: cannot read {v!r} as a size (e.g. 500MB, 2GiB, 1000000)")
    return int(float(m.group(1)) * _UNIT[m.group(2)])


class Spec:
    """How to compute.

    allowed_mem   bytes one task may use, all included (int or "500MB"; default 2 GiB)
    reserved_mem  part of allowed_mem kept for the runtime (default 64 MiB)
    work_dir      folder for intermediates (default $TMPDIR/zcube-work-<pid>)
    threads       worker threads (0 or None = all cores)
    executor      "threads" (default) or "sequential"
    max_retries   per task, on IO errors (default 2)
    max_input_blocks  fusion limit (default 64)
    cache_mem     bytes of decoded source chunks kept for the whole computation (0 = off)
    progress      True: a progress bar; False: none; None: a bar when stderr is a terminal
                  or in a notebook
    """

    _FIELDS = ("allowed_mem", "reserved_mem", "work_dir", "threads", "executor", "max_retries",
               "max_input_blocks", "cache_mem", "resume", "progress")

    def __init__(self, allowed_mem=None, reserved_mem=None, work_dir=None, threads=None, executor=None,
                 max_retries=None, max_input_blocks=None, cache_mem=None, resume=False, progress=None):
        self.allowed_mem = parse_size(allowed_mem, "allowed_mem")
        self.reserved_mem = parse_size(reserved_mem, "reserved_mem")
        self.cache_mem = parse_size(cache_mem, "cache_mem")
        if executor not in (None, "threads", "sequential"):
            raise ValueError(f"executor: {executor!r}, expected 'threads' or 'sequential'")
        if threads is not None and threads < 0:
            raise ValueError(f"threads: {threads} is negative")
        self.work_dir = None if work_dir is None else str(work_dir)
        self.threads, self.executor, self.max_retries = threads, executor, max_retries
        self.max_input_blocks, self.resume, self.progress = max_input_blocks, bool(resume), progress

    def replace(self, **kw):
        d = {f: getattr(self, f) for f in self._FIELDS}
        d.update(kw)
        return Spec(**d)

    def to_dict(self):
        """The fields the library reads (None = its default)."""
        d = {f: getattr(self, f) for f in self._FIELDS if f != "progress"}
        d["resume"] = int(d["resume"])
        return d

    @property
    def task_mem(self):
        """Bytes a task's projection may reach: allowed_mem - reserved_mem."""
        return (self.allowed_mem or 2 << 30) - (self.reserved_mem if self.reserved_mem is not None else 64 << 20)

    def __repr__(self):
        args = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS if getattr(self, f) not in (None, False))
        return f"zcube.Spec({args})"

    def __eq__(self, other):
        return isinstance(other, Spec) and self.to_dict() == other.to_dict() and self.progress == other.progress


_default = threading.local()


def get_spec():
    """The default Spec (set_spec / the `spec` context manager), or Spec()."""
    return getattr(_default, "spec", None) or Spec()


def set_spec(spec):
    """Make `spec` (a Spec, or None for the built-in defaults) the default of this thread."""
    if spec is not None and not isinstance(spec, Spec):
        raise TypeError("set_spec: expected a zcube.Spec")
    _default.spec = spec


@contextlib.contextmanager
def using_spec(spec):
    """with zc.using_spec(zc.Spec(allowed_mem="500MB")): ... — a default for a block."""
    old = getattr(_default, "spec", None)
    set_spec(spec)
    try:
        yield spec
    finally:
        _default.spec = old
