"""cuTile's own samples and tests on threadtile (cutile_suite.py): no fewer kernels passing than
the recorded baseline (tests/compat/cutile_baseline.json, raised as support grows). Skipped
without a cutile-python checkout (CUTILE_SRC) or without torch (CUTILE_TORCH_PATH may name a
folder that holds it)."""

import importlib.util
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from unittest import mock

import cutile_suite
import pytest

BASELINE = Path(__file__).with_name("cutile_baseline.json")


def _have_torch() -> bool:
    path = os.environ.get("CUTILE_TORCH_PATH")
    if path and Path(path, "torch").is_dir():
        return True
    return importlib.util.find_spec("torch") is not None


def test_cutile_suite_no_regression(tmp_path):
    src = cutile_suite.find_checkout(None)
    if src is None:
        pytest.skip("no cutile-python checkout (set CUTILE_SRC)")
    if not _have_torch():
        pytest.skip("torch is not installed (cuTile's tests need it; CUTILE_TORCH_PATH)")
    out = tmp_path / "cutile.json"
    subprocess.run([sys.executable, cutile_suite.__file__, str(src), "--json", str(out),
                    "--markdown", str(tmp_path / "cutile.md")], check=True, timeout=3600)
    s = json.loads(out.read_text())["summary"]
    base = json.loads(BASELINE.read_text())
    by_group = s["by_group"]
    for group, want in base["pass"].items():
        got = by_group.get(group, {}).get("pass", 0)
        assert got >= want, f"{group}: {got} kernels pass, fewer than the baseline's {want}"
    assert s["by_status"].get("wrong", 0) <= base["wrong"], "wrong results: see cutile.md"


def test_swap_imports_keeps_internals():
    src = ("import cuda.tile as ct\nfrom cuda.tile import TileTypeError\n"
           "from cuda.tile import _datatype\nfrom cuda.tile._compile import compile_tile\n")
    out = cutile_suite.swap_imports(src)
    assert "import threadtile.tile as ct" in out
    assert "from threadtile.tile import TileTypeError" in out
    assert "from cuda.tile import _datatype" in out
    assert "from cuda.tile._compile import compile_tile" in out
    tune = cutile_suite.swap_imports("from cuda.tile.tune import exhaustive_search\n"
                                     "from cuda.tile.tune import _tune as tune_mod\n")
    assert "from threadtile.tile.tune import exhaustive_search" in tune
    assert "from cuda.tile.tune import _tune as tune_mod" in tune


def test_tests_that_monkeypatch_cutile_internals_are_told_apart():
    """A test that replaces a function of cuTile's internal modules (its tuner's timing by
    fake numbers) is about cuTile's implementation: its failure is not a wrong result."""
    module = ("from cuda.tile.tune import _tune as tune_mod\n"
              "from cuda.tile.tune import (_tune_utils as tune_utils, exhaustive_search)\n"
              "import cuda.tile._compile as comp\n"
              "from cuda.tile._exception import TileCompilerTimeoutError\n")
    assert cutile_suite._internal_aliases(module) == {"tune_mod", "tune_utils", "comp"}
    fake = types.ModuleType("fake_test_module")
    fake.__file__ = "fake_test_module.py"
    src = 'monkeypatch.setattr(tune_mod, "_benchmark", lambda *a: 1.0, raising=True)'
    with mock.patch("inspect.getsource", return_value=module):
        assert cutile_suite._patches_internal_alias(src, fake)
        assert not cutile_suite._patches_internal_alias(
            'monkeypatch.setattr(torch, "compile", None)', fake)


def test_kernels_in_finds_decorated_functions(tmp_path):
    p = tmp_path / "k.py"
    p.write_text("import cuda.tile as ct\n@ct.kernel\ndef a(x): pass\n"
                 "@ct.kernel(num_warps=8)\ndef b(x): pass\ndef c(x): pass\n"
                 "def t():\n    @ct.kernel\n    def d(x): pass\n")
    assert cutile_suite.kernels_in(p) == ["a", "b", "t.<locals>.d"]


def test_classify_expected_errors_leave_the_other_launches():
    """An error raised only in tests that expected it (pytest.raises, or a subprocess that must
    fail) and passed blocks nothing: the kernel's other launches decide its status."""
    rec = {"launches": 2, "sim_error": "ValueError: bad", "compile": "ok",
           "tests": ["f::good", "f::raises"], "error_tests": ["f::raises"]}
    items = {"f::good": "passed", "f::raises": "passed"}
    assert cutile_suite.classify("k", "g", [rec], items, None, {"f::raises"}) == ("pass", "")
    items["f::good"] = "CutileInternal: x"
    assert cutile_suite.classify("k", "g", [rec], items, None, {"f::raises"},
                                 {"f::good"})[0] == "test"
    # the error came from the test that was not expecting it: the simulator's error blocks
    rec["error_tests"] = ["f::good"]
    assert cutile_suite.classify("k", "g", [rec], items, None, {"f::raises"})[0] == "sim"
    sub = dict(rec, tests=["f::sub"], error_tests=["f::sub"], sub_error_tests=["f::sub"])
    assert cutile_suite.classify("k", "g", [sub], {"f::sub": "passed"}, None, set()) == \
        ("pass", "")


def test_why_not_run_tells_skips_and_ir_checks_apart(tmp_path):
    """A kernel no test launched: skipped where every test that would launch it was skipped,
    "cuTile IR" where every such test reads cuTile's compiler output, else the first failing
    test's error (cutile_reach.py)."""
    from cutile_reach import why_not_run

    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_k.py").write_text(
        "import cuda.tile as ct\n"
        "@ct.kernel\ndef shared(x): pass\n"
        "def test_a():\n    shared\n"
        "def test_b():\n    shared\n"
        "def test_ir():\n    @ct.kernel\n    def k(x): pass\n    get_bytecode(k)\n"
        "class TestM(Base):\n    def make(v):\n        @ct.kernel\n        def m(x): pass\n"
        "        return m\n    def test_m(self):\n        self.make\n"
        "class Base:\n    def check(self):\n        filecheck('')\n")
    rel = "test/test_k.py"
    items = {"test_k.py::test_a[1]": "skipped: Skipped: needs Blackwell",
             "test_k.py::test_b": "skipped: Skipped: other"}
    assert why_not_run(tmp_path, rel, f"{rel}::shared", items) == ("skipped", "needs Blackwell")
    items["test_k.py::test_b"] = "ValueError: boom"
    assert why_not_run(tmp_path, rel, f"{rel}::shared", items) == ("not run", "ValueError: boom")
    assert why_not_run(tmp_path, rel, f"{rel}::test_ir.<locals>.k", items)[0] == "cuTile IR"
    assert why_not_run(tmp_path, rel, f"{rel}::TestM.make.<locals>.m", items)[0] == "cuTile IR"
    items = {"test_k.py": "skipped: could not import 'jax'"}
    assert why_not_run(tmp_path, rel, f"{rel}::shared", items) == (
        "skipped", "could not import 'jax'")


def test_implicit_cast_stand_in_follows_cutiles_documented_rule():
    from cutile_standins import is_implicit_cast_ok as ok

    torch = pytest.importorskip("torch")
    assert ok(torch.int16, torch.float16) and ok(torch.bool, torch.uint8)
    assert ok(torch.int8, torch.int64) and ok(torch.bfloat16, torch.float32)
    assert not ok(torch.float16, torch.int32) and not ok(torch.int32, torch.uint32)
    assert not ok(torch.float16, torch.bfloat16) and not ok(torch.float32, torch.bfloat16)
    assert not ok(torch.int64, torch.int32) and not ok(torch.int32, torch.bool)
