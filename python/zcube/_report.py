"""What a computation did (zc_report_json) and what it will do (zc_plan_json), as objects."""
import json
from dataclasses import dataclass, field


@dataclass
class OperationReport:
    name: str
    tasks: int
    seconds: float
    projected_mem: int
    measured_mem: int
    fused: list = field(default_factory=list)


class Report:
    """After a compute: operations (name, tasks, seconds, projected and measured
    memory per task), total seconds, intermediate bytes, peak task memory, tasks.
    `raw` is the library's JSON as a dict."""

    def __init__(self, text):
        self.raw = json.loads(text)
        self.operations = [OperationReport(o.get("name", ""), o.get("tasks", 0), o.get("seconds", 0.0),
                                           o.get("projected_mem", 0), o.get("measured_mem", 0),
                                           list(o.get("fused", [])))
                           for o in self.raw.get("operations", [])]
        self.seconds = self.raw.get("seconds", 0.0)
        self.intermediate_bytes = self.raw.get("intermediate_bytes", 0)
        self.peak_task_mem = self.raw.get("peak_task_mem", 0)
        self.tasks = self.raw.get("tasks", 0)

    def __repr__(self):
        return (f"<zcube.Report {len(self.operations)} operations, {self.tasks} tasks, {self.seconds:.3f} s, "
                f"peak task memory {self.peak_task_mem / 1e6:.1f} MB>")

    def __str__(self):
        lines = [f"{'operation':<28} {'tasks':>7} {'seconds':>9} {'projected':>11} {'measured':>11}"]
        for o in self.operations:
            lines.append(f"{o.name:<28} {o.tasks:>7} {o.seconds:>9.3f} {o.projected_mem / 1e6:>8.1f} MB"
                         f" {o.measured_mem / 1e6:>8.1f} MB")
        lines.append(f"total: {self.tasks} tasks, {self.seconds:.3f} s, intermediates "
                     f"{self.intermediate_bytes / 1e6:.1f} MB, peak task memory {self.peak_task_mem / 1e6:.1f} MB")
        return "\n".join(lines)


class Plan:
    """The optimized plan of a computation, without running it: `operations`
    (dicts: name, kind, shape, chunks, dtype, tasks, projected_mem, inputs,
    fused), `tasks`, `intermediate_bytes`; str() is a table, `json` the text,
    `svg()` / `_repr_svg_` the drawing, `visualize(path)` writes it."""

    def __init__(self, text, title="zcube plan"):
        self.json = text
        self.raw = json.loads(text)
        self.operations = self.raw.get("operations", [])
        self.tasks = self.raw.get("tasks", 0)
        self.intermediate_bytes = self.raw.get("intermediate_bytes", 0)
        self.title = title

    def __str__(self):
        lines = [f"{'#':>3} {'operation':<24} {'kind':<10} {'shape':<20} {'chunks':<20} {'dtype':<10}"
                 f" {'tasks':>7} {'mem/task':>10}"]
        for i, o in enumerate(self.operations):
            lines.append(f"{i:>3} {o.get('name', ''):<24} {o.get('kind', ''):<10} {str(tuple(o.get('shape', []))):<20}"
                         f" {str(tuple(o.get('chunks', []))):<20} {o.get('dtype', ''):<10} {o.get('tasks', 0):>7}"
                         f" {o.get('projected_mem', 0) / 1e6:>7.1f} MB")
        lines.append(f"{self.tasks} tasks, intermediates {self.intermediate_bytes / 1e6:.1f} MB")
        return "\n".join(lines)

    def __repr__(self):
        return f"<zcube.Plan {len(self.operations)} operations, {self.tasks} tasks>\n{self}"

    def svg(self):
        from . import _zcube
        return _zcube.plan_svg(self.json, self.title)

    def _repr_svg_(self):
        return self.svg()

    def visualize(self, path):
        """Write the plan's SVG drawing to `path`; returns path."""
        with open(path, "w") as f:
            f.write(self.svg())
        return path
