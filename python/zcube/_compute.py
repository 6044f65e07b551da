"""Running computations: into NumPy arrays or stores, several results in one
plan, with callbacks, a progress bar, cancellation and Ctrl-C."""
import itertools
import os
import threading

import numpy as np

from . import _zcube
from ._progress import Callback, ProgressBar, show_bar
from ._report import Plan, Report
from ._spec import Spec, get_spec

last_report = None  # the Report of the last compute in this process
_mem_ids = itertools.count()


def _spec(spec, arrays=()):
    if spec is None:
        spec = next((a._spec for a in arrays if getattr(a, "_spec", None)), None)
    if spec is None:
        return get_spec()
    if isinstance(spec, dict):
        return Spec(**spec)
    if not isinstance(spec, Spec):
        raise TypeError("spec: expected a zcube.Spec")
    return spec


def _callbacks(spec, callbacks):
    cbs = list(callbacks or ())
    for c in cbs:
        if not isinstance(c, Callback):
            raise TypeError(f"callbacks: {c!r} is not a zcube.Callback")
    if show_bar(spec) and not any(isinstance(c, ProgressBar) for c in cbs):
        cbs.append(ProgressBar())
    return cbs


def _progress_fn(cbs):
    if not cbs:
        return None

    def progress(op, name, done, total):
        stop = False
        for c in cbs:
            stop = bool(c.on_task_end(op, name, done, total)) or stop
        return stop
    return progress


def _run(call, token):
    """Run call() (which releases the GIL) so that Ctrl-C cancels it: in the main
    thread the call runs in a helper thread while this one waits for signals;
    KeyboardInterrupt cancels through the token, waits for the running tasks
    to stop (the library removes its work folder), then propagates."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    box = {}

    def target():
        try:
            box["result"] = call()
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e

    t = threading.Thread(target=target, name="zcube-compute", daemon=True)
    t.start()
    try:
        while t.is_alive():
            t.join(0.05)
    except KeyboardInterrupt:
        token.cancel()
        t.join()
        raise
    if "error" in box:
        raise box["error"]
    return box["result"]


def _execute(arrays, spec, callbacks, runner):
    """Plan (refusing over the bound before any work), tell the callbacks, run."""
    global last_report
    spec = _spec(spec, arrays)
    sd = spec.to_dict()
    nodes = [a._node for a in arrays]
    cbs = _callbacks(spec, callbacks)
    plan = Plan(_zcube.plan_json(sd, nodes, None))
    if spec.threads is None and plan.tasks <= 1:
        sd["threads"] = 1  # one task: starting a pool of threads would cost more than it
    for c in cbs:
        c.on_compute_start(plan)
    token = _zcube.Token()
    text = _run(lambda: runner(sd, nodes, _progress_fn(cbs), token), token)
    report = Report(text) if text else None
    last_report = report
    for c in cbs:
        c.on_compute_end(report)
    return report


def compute_numpy(arrays, spec=None, callbacks=None):
    """Compute arrays (zcube.Array) into NumPy arrays in one plan; returns (list, Report)."""
    arrays = list(arrays)
    if len(arrays) == 1:
        a = arrays[0]
        out = np.empty(a.shape, dtype=a.dtype)

        def one(sd, nodes, fn, token):
            return _zcube.compute_buffer(sd, nodes[0], memoryview(out.reshape(-1)).cast("B"), fn, token)
        report = _execute(arrays, spec, callbacks, one)
        return [out], report
    store = _zcube.Store(f"memory://zcube-py-{os.getpid()}-{next(_mem_ids)}")
    names = [f"r{i}" for i in range(len(arrays))]

    def many(sd, nodes, fn, token):
        return _zcube.compute(sd, nodes, [(store, n, "none", 3) for n in names], fn, token)
    report = _execute(arrays, spec, callbacks, many)
    outs = []
    for a, n in zip(arrays, names):
        out = np.empty(a.shape, dtype=a.dtype)
        if out.size:
            _zcube.zarr_open(store, n).read(None, memoryview(out.reshape(-1)).cast("B"))
        outs.append(out)
    return outs, report


def compute_store(arrays, targets, spec=None, callbacks=None):
    """Compute arrays into (Store, path, codec, zarr_format) targets in one plan."""
    def run(sd, nodes, fn, token):
        return _zcube.compute(sd, nodes, targets, fn, token)
    return _execute(list(arrays), spec, callbacks, run)


def plan(arrays, spec=None):
    spec = _spec(spec, arrays)
    return Plan(_zcube.plan_json(spec.to_dict(), [a._node for a in arrays], None))
