"""Progress: callbacks called as tasks finish, and the bar (terminal or notebook)."""
import sys
import time


class Callback:
    """Base class of compute callbacks: override what you need.

    on_compute_start(plan)                  before any work (a zcube.Plan)
    on_task_end(op, name, done, total)      after each task of operation `op`;
                                            return True to cancel the compute
    on_compute_end(report)                  after success (a zcube.Report)
    """

    def on_compute_start(self, plan):
        pass

    def on_task_end(self, op, name, done, total):
        return False

    def on_compute_end(self, report):
        pass


def _in_notebook():
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        return type(shell.get_ipython()).__name__ == "ZMQInteractiveShell"
    except Exception:
        return False


class ProgressBar(Callback):
    """One bar per operation: a text line on stderr in a terminal, an updating
    HTML bar in a notebook. Redrawn at most 10 times a second."""

    def __init__(self, file=None, interval=0.1):
        self.file = file if file is not None else sys.stderr
        self.interval = interval
        self.notebook = _in_notebook()
        self._last = 0.0
        self._handle = None
        self._ops = []
        self._state = {}

    def on_compute_start(self, plan):
        self._ops = [o.get("name", "") for o in plan.operations]
        self._state = {}
        if self.notebook:
            from IPython.display import HTML, display
            self._handle = display(HTML(self._html()), display_id=True)

    def on_task_end(self, op, name, done, total):
        self._state[op] = (name, done, total)
        now = time.monotonic()
        if done == total or now - self._last >= self.interval:
            self._last = now
            self._draw(final=False)
        return False

    def on_compute_end(self, report):
        self._draw(final=True)

    def _html(self):
        rows = []
        for op in sorted(self._state):
            name, done, total = self._state[op]
            pct = 100.0 * done / total if total else 100.0
            rows.append(f"<div><code>{name}</code> {done}/{total} "
                        f"<progress value='{done}' max='{total or 1}'></progress> {pct:.0f}%</div>")
        return "".join(rows) or "<div>zcube: planning</div>"

    def _draw(self, final):
        if self.notebook:
            if self._handle is not None:
                from IPython.display import HTML
                self._handle.update(HTML(self._html()))
            return
        if not self._state:
            return
        op = max(self._state)
        name, done, total = self._state[op]
        width = 30
        fill = width * done // total if total else width
        line = f"\r{name[:24]:<24} [{'#' * fill}{'.' * (width - fill)}] {done}/{total}"
        self.file.write(line + ("\n" if final or done == total else ""))
        self.file.flush()


def show_bar(spec):
    """Whether this spec asks for a bar: progress=True, or None and a terminal/notebook."""
    if spec.progress is not None:
        return bool(spec.progress)
    try:
        return sys.stderr.isatty() or _in_notebook()
    except Exception:
        return False
