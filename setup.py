"""Builds the _zcube extension for pip with the project's CMake (the same
target as `bash scripts/build.sh`), then installs python/zcube around it.
Extra CMake arguments: the environment variable ZC_CMAKE_ARGS."""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DZC_BUILD_TESTS=OFF", "-DZC_BUILD_BENCH=OFF",
                "-DZC_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
        args += shlex.split(os.environ.get("ZC_CMAKE_ARGS", ""))
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build)] + args)
        subprocess.check_call(["cmake", "--build", str(build), "--target", "zcube_python",
                               "-j", str(os.cpu_count() or 1)])
        built = next((build / "python" / "zcube").glob("_zcube*.so"))
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, dest)


setup(ext_modules=[Extension("zcube._zcube", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": "build/pip"}})
