"""docs/python.md's ```python blocks run in order, in one namespace, in a scratch folder."""
import os
import re
from pathlib import Path

from conftest import need

need("torch")
need("xarray")

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_tutorial_runs(tmp_path, capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 8
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        ns = {"__name__": "__tutorial__"}
        for i, code in enumerate(blocks):
            exec(compile(code, f"docs/python.md block {i + 1}", "exec"), ns)
    finally:
        os.chdir(cwd)
    assert "refused:" in capsys.readouterr().out
