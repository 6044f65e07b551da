"""Shared helpers of the Python tests (run by ctest with PYTHONPATH=build/python)."""
import importlib
import os

import pytest


def need(module):
    """Import `module`, or end this test file: exit 77 (ctest SKIP) when it is
    missing, but fail when ZC_REQUIRE_ALL=1 (CI must run everything)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if os.environ.get("ZC_REQUIRE_ALL") == "1":
            raise ImportError(f"ZC_REQUIRE_ALL=1 and {module} is missing: {e}") from e
        pytest.exit(f"SKIP: {module} is missing ({e})", returncode=77)
