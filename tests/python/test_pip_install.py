"""`python3 -m pip install --no-build-isolation .` into a venv made with
--system-site-packages works offline, and the installed module computes and
registers the xarray backend entry point (engine="zcube")."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_pip_install_into_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.check_call(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)])
    py = venv / "bin" / "python"
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if shutil.which("ccache"):
        env["ZC_CMAKE_ARGS"] = "-DCMAKE_C_COMPILER_LAUNCHER=ccache"
        env.setdefault("CCACHE_BASEDIR", str(ROOT.parent))
        env.setdefault("CCACHE_NOHASHDIR", "1")
    src = tmp_path / "src"  # a clean copy: the worktree's own build folders stay untouched
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns("build*", ".git", "node_modules", "__pycache__"))
    subprocess.check_call([str(py), "-m", "pip", "install", "-q", "--no-index", "--no-build-isolation", str(src)],
                          env=env, cwd=tmp_path)
    code = ("import zcube as zc, numpy as np, importlib.metadata as m;"
            "assert 'site-packages' in zc.__file__, zc.__file__;"
            "assert float(zc.sum(zc.arange(10))) == 45;"
            "eps = [e.value for e in m.entry_points(group='xarray.backends') if e.name == 'zcube'];"
            "assert eps == ['zcube.xarray_backend:ZcubeBackendEntrypoint'], eps;"
            "import xarray as xr, zcube.xarray_backend as b;"
            "assert xr.backends.list_engines()['zcube'].__class__ is b.ZcubeBackendEntrypoint;"
            "print('ok')")
    out = subprocess.check_output([str(py), "-c", code], env=env, cwd=tmp_path, text=True)
    assert out.strip() == "ok"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
