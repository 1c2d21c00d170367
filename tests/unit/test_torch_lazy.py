"""``import threadtile`` imports no torch: ``threadtile.torch`` (torch_ops.py) loads it on first
use, and says what to install where it is missing. Runs with and without torch installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import threadtile

HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)


def test_import_threadtile_does_not_import_torch():
    r = _python("import sys, threadtile; from threadtile import *; "
                "assert 'torch' not in sys.modules, 'torch was imported'; "
                "assert 'threadtile.torch_ops' not in sys.modules")
    assert r.returncode == 0, r.stderr


def test_compare_is_exported_and_torch_is_not_in_all():
    assert threadtile.compare is threadtile.comparison.compare
    assert "compare" in threadtile.__all__ and "torch" not in threadtile.__all__


def test_unknown_attributes_still_raise():
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        threadtile.nothing_here  # noqa: B018


@pytest.mark.skipif(HAVE_TORCH, reason="checks the error where torch is not installed")
def test_threadtile_torch_without_torch_says_what_to_install():
    with pytest.raises(ModuleNotFoundError, match="pip install torch"):
        threadtile.torch  # noqa: B018


@pytest.mark.skipif(not HAVE_TORCH, reason="needs torch")
def test_threadtile_torch_is_torch_ops():
    r = _python("import threadtile, threadtile.torch_ops as m; assert threadtile.torch is m; "
                "assert threadtile.torch is m")
    assert r.returncode == 0, r.stderr
