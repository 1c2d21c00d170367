"""cuTile's own kernels, run on threadtile with only the import swapped.

Given a checkout of NVIDIA's cutile-python (an argument, or ``CUTILE_SRC``), this harness
copies its ``samples/*.py`` and ``test/`` into a temporary folder with ``import cuda.tile as
ct`` (and ``from cuda.tile import ...``) swapped for ``threadtile.tile`` (:func:`swap_imports`),
and runs them on the CPU:

- each sample runs its own ``__main__ --correctness-check`` (torch on the CPU: a
  ``TorchFunctionMode`` turns ``device="cuda"`` into the CPU, ``torch.cuda.current_stream()``
  into a stand-in), in threadtile's simulator;
- each ``test/test_*.py`` that defines or imports kernels runs under pytest, the first
  parametrization of every test function only (``--per-test`` changes that); cuTile's
  internal modules (``cuda.tile._compile``...) are stand-ins that raise when used.

Every tile-kernel launch is recorded: the simulator's run (with every check on) and, once
per kernel, a compile of the same specialization to a cubin for sm_90 through NVRTC. A kernel
(every ``@ct.kernel`` the files define, found in their source) ends with one status:

- ``pass``: launched, simulated, compiled, and the test or sample that launched it passed
  (its own comparison with torch or NumPy); or a kernel that raised where every test that
  launched it expects an error (``pytest.raises``) and those tests passed (cuTile's error
  type and words);
- ``wrong``: simulated and compiled, but the check of the test that launched it failed
  (an ``AssertionError``);
- ``message``: an error where the test expects one (``pytest.raises``), of another type or
  with other words than cuTile's;
- ``sim``: the simulator (or the frontend) raised: the first error is the blocker. Errors
  raised only in tests that expected them and passed (``pytest.raises``, or a test's
  subprocess that must fail) block nothing: the kernel's other launches decide its status;
- ``compile``: simulated, but the cubin did not compile;
- ``test``: simulated and compiled, but its test failed for another reason (cuTile internals,
  an expected error of another type);
- ``not run``: never launched (the file did not import, or no test reached it).

``python tests/compat/cutile_suite.py [CHECKOUT] --json PATH --markdown PATH`` prints counts
by status, group (samples, test/kernels, test/test_*.py) and blocking cause.
tests/compat/test_cutile_suite.py runs it in CI where a checkout is present.
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import functools
import importlib.abc
import importlib.machinery
import inspect
import io
import json
import os
import re
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path

from cutile_reach import why_not_run
from cutile_standins import FakeStream, install_torch_cpu, is_implicit_cast_ok, to_dtype

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FILE_TIMEOUT_S = int(os.environ.get("THREADTILE_CUTILE_FILE_TIMEOUT", "300"))
ITEM_TIMEOUT_S = int(os.environ.get("THREADTILE_CUTILE_ITEM_TIMEOUT", "60"))
# torch may live outside the venv (a CPU install with --target): CUTILE_TORCH_PATH adds it
TORCH_PATH = os.environ.get("CUTILE_TORCH_PATH", "")

# The samples' files that run on the GPU only (no kernel of threadtile can run them here).
SAMPLE_SKIP = {
    "AllGatherMatmul.py": "several GPUs (torch.distributed)",
    "BlockScaledMatMul.py": "Blackwell's block-scaled mma",
    "test_samples.py": "runs the samples as GPU subprocesses",
}


# ---- the import swap ----------------------------------------------------------------------------

_SWAPS = [
    (re.compile(r"^(\s*)import cuda\.tile as (\w+)", re.M), r"\1import threadtile.tile as \2"),
    (re.compile(r"^(\s*)from cuda\.tile import (?!_)", re.M), r"\1from threadtile.tile import "),
    # cuTile's public tuning module (its _tune/_tune_utils internals stay stand-ins)
    (re.compile(r"^(\s*)from cuda\.tile\.tune import (?!_)", re.M),
     r"\1from threadtile.tile.tune import "),
    # cuTile's public exception classes (ct.TileTypeError...) by their defining module; a
    # line that imports anything else from it (Loc, TypeCheckingError) keeps the stand-ins
    (re.compile(r"^(\s*)from cuda\.tile\._exception import ((?:Tile\w*Error, )*Tile\w*Error)"
                r"\s*$", re.M), r"\1from threadtile.tile import \2"),
]


_INTERNAL_IMPORT = re.compile(
    r"^\s*from\s+cuda\.tile[\w.]*\s+import\s+(.+)$|^\s*import\s+cuda\.tile\._[\w.]*\s+as\s+(\w+)",
    re.M)


@functools.cache
def _internal_aliases(module_source: str) -> frozenset[str]:
    """The names a test module binds to cuTile's internal modules (``from cuda.tile.tune
    import _tune as tune_mod``, ``import cuda.tile._x as y``); once a module."""
    out = set()
    for names, alias in _INTERNAL_IMPORT.findall(module_source):
        if alias:
            out.add(alias)
        for part in names.split(","):
            words = part.strip(" ()").split()
            if words and words[0].startswith("_"):
                out.add(words[-1])
    return frozenset(out)


def _patches_internal_alias(source: str, module) -> bool:
    """Whether a test's source monkeypatches a module of cuTile's internals (its outcome is
    then about cuTile's implementation: tune's ``_benchmark`` replaced by fake timings)."""
    try:
        aliases = _internal_aliases(inspect.getsource(module))
    except (OSError, TypeError):
        return False
    return any(re.search(rf"monkeypatch\.setattr\(\s*{re.escape(a)}\b", source)
               for a in aliases)


def swap_imports(src: str) -> str:
    """cuTile's public imports (``cuda.tile``, ``cuda.tile.tune``'s public names) become
    threadtile's; imports of cuTile's internal modules (``cuda.tile._x``,
    ``cuda.tile.tune._tune``...) stay, and resolve to stand-ins."""
    for pat, rep in _SWAPS:
        src = pat.sub(rep, src)
    return src


class CutileInternal(RuntimeError):
    """Raised by the stand-ins of cuTile's internal modules when a test uses them."""


class _StubMeta(type):
    def __getitem__(cls, item):  # annotations such as TuningResult[Any]
        return cls

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stub_callable(f"{cls.__qualname__}.{name}")


def _stub_callable(qualname: str):
    return _StubValue(qualname)


class _StubValue:
    """What a stand-in returns: anything may be called or looked up on it (cuTile's test
    helpers do so at import, in default arguments); using it as a value raises."""

    def __init__(self, qualname: str):
        self._q = qualname

    def __call__(self, *args, **kwargs):
        return _StubValue(self._q + "()")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StubValue(f"{self._q}.{name}")

    def _raise(self, *a):
        raise CutileInternal(f"cuTile internal {self._q}")

    __bool__ = __int__ = __index__ = __iter__ = __len__ = __eq__ = __lt__ = __gt__ = _raise
    __le__ = __ge__ = __getitem__ = __contains__ = __float__ = __add__ = _raise
    __hash__ = object.__hash__


# What cuTile's test helpers ask its internals about the device: an H100.
_DEVICE_FACTS = {
    "get_compute_capability": lambda *a: (9, 0),
    "get_sm_arch": lambda *a: "sm_90",
    "dev_features_enabled": lambda *a: False,
    "cconv_v3_enabled": lambda *a: False,
    # what a test expects from a cast, by cuTile's documented rule (cutile_standins.py)
    "_is_implicit_cast_ok": is_implicit_cast_ok,
    "to_dtype": to_dtype,
    # the tile compiler's bytecode versions: every test's requirement is met
    "_SUPPORTED_VERSIONS": type("AllVersions", (), {"__contains__": lambda s, v: True})(),
    "_get_max_supported_bytecode_version": lambda *a, **k: _Newest(),
}


@__import__("dataclasses").dataclass
class CompilerOptions:
    """cuTile's kernel options with its defaults (tests read ``__dataclass_fields__``)."""

    opt_level: int = 3
    num_ctas: object = None
    occupancy: object = None


_DEVICE_FACTS["CompilerOptions"] = CompilerOptions


class NumericDTypeCategory(__import__("enum").IntEnum):
    """cuTile's dtype categories (its tests pick dtypes by them)."""

    Boolean = 0
    Integral = 1
    Float = 2
    RestrictedFloat = 3


def numeric_dtype_category(t) -> NumericDTypeCategory:
    if t.kind == "b":
        return NumericDTypeCategory.Boolean
    if t.is_int:
        return NumericDTypeCategory.Integral
    if t.name in ("float16", "float32", "float64", "bfloat16"):
        return NumericDTypeCategory.Float
    return NumericDTypeCategory.RestrictedFloat


class _DTypePromotionImpl:
    """cuTile's dtype order (the rows of its promotion table), as threadtile's dtypes."""

    _NAMES = ("bool_ uint8 uint16 uint32 uint64 int8 int16 int32 int64 float16 float32 float64 "
              "bfloat16 tfloat32 float8_e4m3fn float8_e5m2 float8_e8m0fnu float4_e2m1fn")

    def __class_getitem__(cls, item):
        return cls


def _dtype_order() -> list:
    import threadtile.tile as tt
    return [getattr(tt, n) for n in _DTypePromotionImpl._NAMES.split() if hasattr(tt, n)]


# cuTile's cuda.tile._datatype: its dtypes are threadtile.tile's; these helpers its tests use
_DATATYPE_FACTS = {
    "NumericDTypeCategory": NumericDTypeCategory,
    "numeric_dtype_category": numeric_dtype_category,
    "is_float": lambda t: numeric_dtype_category(t) in (NumericDTypeCategory.Float,
                                                        NumericDTypeCategory.RestrictedFloat),
    "is_integral": lambda t: numeric_dtype_category(t) == NumericDTypeCategory.Integral,
    "is_boolean": lambda t: numeric_dtype_category(t) == NumericDTypeCategory.Boolean,
}


class _Newest:
    def __lt__(self, other):
        return False

    def __ge__(self, other):
        return True

    def as_string(self):
        return "newest"

    def major(self):
        return 99

    minor = major



# cuTile's exception classes by their defining names (cuda/tile/_exception.py binds each
# public Tile*Error name to one of these): the public class of threadtile's
_ERROR_ALIASES = {
    "TypeCheckingError": "TileTypeError", "UnsupportedSyntaxError": "TileSyntaxError",
    "InvalidValueError": "TileValueError", "UnsupportedFeatureError":
    "TileUnsupportedFeatureError", "StaticEvalError": "TileStaticEvalError",
    "StaticAssertionError": "TileStaticAssertionError", "RecursionLimitError":
    "TileRecursionError", "InternalError": "TileInternalError",
    "UnsupportedCallError": "UnsupportedCallError",
}


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith(("__", "_threadtile")):  # threadtile's probes of a kernel's globals
            raise AttributeError(name)
        if self.__name__ == "cuda.tile._datatype":
            if name in _DATATYPE_FACTS:
                return _DATATYPE_FACTS[name]
            if name == "_DTypePromotionImpl":
                _DTypePromotionImpl._order = _dtype_order()
                return _DTypePromotionImpl
        if self.__name__ in ("cuda.tile._datatype", "cuda.tile._exception"):
            import threadtile.tile as tt  # cuTile's public dtypes and errors, by their modules
            if hasattr(tt, name):
                return getattr(tt, name)
        if self.__name__ == "cuda.tile" and not name.startswith("_"):
            # `import cuda.tile` then `cuda.tile.static_eval(...)`: cuTile's public names are
            # threadtile.tile's
            import threadtile.tile as tt
            return getattr(tt, name)
        if name in _DEVICE_FACTS:
            return _DEVICE_FACTS[name]
        if self.__name__ == "cuda.tile._exception" and name in _ERROR_ALIASES:
            from threadtile import errors  # cuTile's other names of its public classes
            return getattr(errors, _ERROR_ALIASES[name])
        if self.__name__ == "cuda.tile._exception" and name.startswith("Tile"):
            # cuTile's exception classes, which cuda.tile exports too (threadtile's own)
            from threadtile import errors
            if name in errors.__all__:
                return getattr(errors, name)
        if not name[:1].isupper():
            return _StubValue(f"{self.__name__}.{name}")
        # a class, so that `except X`, `pytest.raises(X)` and `isinstance` parse; anything
        # done with it raises CutileInternal
        return _StubMeta(name, (Exception,), {"__qualname__": f"{self.__name__}.{name}"})


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``cuda.tile`` and everything under it: stand-in modules."""

    def find_spec(self, name, path, target=None):
        if name == "cuda.tile" or name.startswith("cuda.tile."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


# ---- torch on the CPU ---------------------------------------------------------------------------

# ---- recording launches -------------------------------------------------------------------------

RECORDS: dict[str, dict] = {}     # "file::kernel" -> record
CURRENT: dict = {"item": None, "launched": []}


def _kernel_key(k, root: Path) -> str:
    f = k.py_func
    try:
        path = Path(f.__code__.co_filename).resolve().relative_to(root).as_posix()
    except ValueError:
        path = f.__code__.co_filename
    return f"{path}::{f.__qualname__}"


def _first_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).strip().splitlines()
             if ln.strip() and not re.fullmatch(r"[\s^~]+", ln)]
    # threadtile's compile errors start with the traceback-like location and end with the
    # message; its runtime errors start with the message
    msg = (lines[-1] if lines[0].startswith('"') else lines[0]) if lines else ""
    if msg.startswith("(") and len(lines) > 1:  # a hint after the message
        msg = lines[-2] + " " + msg
    return f"{type(e).__name__}: {msg}"[:300]


def install_recorder(root: Path):
    import threadtile.tile as tt

    tj = sys.modules["threadtile.jit"]  # the package's `jit` attribute is the decorator

    original = tj.sim_run

    def recording_run(k, launch, args, kwargs):
        key = _kernel_key(k, root)
        rec = RECORDS.setdefault(key, {"launches": 0, "sim_error": None, "compile": None,
                                       "tests": []})
        rec["launches"] += 1
        CURRENT["launched"].append(key)
        if CURRENT["item"] and CURRENT["item"] not in rec["tests"]:
            rec["tests"].append(CURRENT["item"])
        failed = False
        try:
            try:
                out = original(k, launch, args, kwargs)
            except BaseException as e:
                if rec["sim_error"] is None:
                    rec["sim_error"] = _first_line(e)
                failed = True  # (this launch: the tests whose launches raised)
                if CURRENT["item"] and CURRENT["item"] not in rec.setdefault("error_tests", []):
                    rec["error_tests"].append(CURRENT["item"])
                raise
            if rec["compile"] is None and getattr(k, "tile", False):
                try:
                    k.compile(*args, arch="sm_90", **kwargs)
                    rec["compile"] = "ok"
                except BaseException as e:  # noqa: BLE001  (the first error is the record)
                    rec["compile"] = _first_line(e)
        finally:
            if CURRENT.get("subrec"):  # a test's subprocess: the child merges this line
                item = Path(CURRENT["itemfile"]).read_text() if Path(
                    CURRENT["itemfile"]).exists() else None
                with open(CURRENT["subrec"], "a") as f:
                    f.write(json.dumps({"key": key, "sim_error": rec["sim_error"],
                                        "compile": rec["compile"], "item": item,
                                        "failed": failed}) + "\n")
        return out

    tj.sim_run = recording_run
    launch = tt.launch

    def launch_cpu(stream, grid, kernel, args, **options):
        return launch(None if isinstance(stream, FakeStream) else stream, grid, kernel, args,
                      **options)

    tt.launch = launch_cpu


# ---- finding kernels in source ------------------------------------------------------------------

def kernels_in(path: Path) -> list[str]:
    """The qualified names of the functions decorated ``@<x>.kernel`` or ``@<x>.kernel(...)``."""
    try:
        tree = ast.parse(path.read_text())
    except SyntaxError:
        return []
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                for d in child.decorator_list:
                    d = d.func if isinstance(d, ast.Call) else d
                    if isinstance(d, ast.Attribute) and d.attr == "kernel":
                        out.append(name)
                        break
                visit(child, name + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
    visit(tree, "")
    return out


def group_of(rel: str) -> str:
    if rel.startswith("samples/"):
        return "samples"
    if rel.startswith("test/kernels/"):
        return "test/kernels"
    return "test/test_*.py"


# ---- the child: one file ------------------------------------------------------------------------

class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"timed out after {ITEM_TIMEOUT_S} s")


# A test may run kernels in a Python subprocess of its own (test_print.py's FdCaptureRunner:
# `python test_print.py start_kernel_runner`): a sitecustomize in the subprocess's PYTHONPATH
# sets it up as the child is (stand-ins, torch on the CPU, the simulator); its launches are
# lines of a file (THREADTILE_CUTILE_SUBREC) that the child merges, each credited to the test
# the child is running at the time (THREADTILE_CUTILE_ITEM, a file the child rewrites).
_SITECUSTOMIZE = """import os, sys
if os.environ.get("THREADTILE_CUTILE_WORK"):
    sys.path.insert(0, os.environ["THREADTILE_CUTILE_HARNESS"])
    import cutile_suite
    cutile_suite.setup_subprocess()
"""


def _setup(work: Path) -> None:
    if TORCH_PATH:
        sys.path.append(TORCH_PATH)
    sys.meta_path.insert(0, _StubFinder())
    os.environ.setdefault("THREADTILE_SIMULATE", "1")
    import threadtile
    install_torch_cpu()
    install_recorder(work)
    threadtile.simulate().__enter__()


def setup_subprocess() -> None:
    """A test's own subprocess: set up as the child, its launches written to SUBREC."""
    _setup(Path(os.environ["THREADTILE_CUTILE_WORK"]))
    CURRENT["subrec"] = os.environ["THREADTILE_CUTILE_SUBREC"]
    CURRENT["itemfile"] = os.environ["THREADTILE_CUTILE_ITEM"]


def _merge_subrecords(path: Path) -> None:
    if not path.exists():
        return
    for line in path.read_text().splitlines():
        r = json.loads(line)
        rec = RECORDS.setdefault(r["key"], {"launches": 0, "sim_error": None, "compile": None,
                                            "tests": []})
        rec["launches"] += 1
        rec["sim_error"] = rec["sim_error"] or r["sim_error"]
        if rec["compile"] is None:
            rec["compile"] = r["compile"]
        if r["item"] and r["item"] not in rec["tests"]:
            rec["tests"].append(r["item"])
        if r.get("failed") and r["item"] not in rec.setdefault("error_tests", []):
            rec["error_tests"].append(r["item"])
            rec.setdefault("sub_error_tests", []).append(r["item"])


def run_child(work: Path, rel: str, per_test: int, out: Path) -> None:
    hook = work / ".hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    tag = rel.replace("/", "__")
    subrec = work / ".results" / (tag + ".sub.jsonl")
    itemfile = work / ".results" / (tag + ".item")
    subrec.parent.mkdir(exist_ok=True)
    os.environ.update(THREADTILE_CUTILE_WORK=str(work), THREADTILE_CUTILE_HARNESS=str(HERE),
                      THREADTILE_CUTILE_SUBREC=str(subrec), THREADTILE_CUTILE_ITEM=str(itemfile),
                      PYTHONPATH=os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")]))
    CURRENT["itemfile_w"] = itemfile
    _setup(work)
    signal.signal(signal.SIGALRM, _alarm)
    results: dict = {"items": {}, "file_error": None, "expects_error": [], "internals": []}
    path = work / rel
    if rel.startswith("samples/"):
        sys.path.insert(0, str(path.parent))
        sys.argv = [str(path), "--correctness-check"]
        CURRENT["item"] = rel
        signal.alarm(FILE_TIMEOUT_S - 10)
        try:
            with contextlib.redirect_stdout(open(os.devnull, "w")):
                runpy.run_path(str(path), run_name="__main__")
            results["items"][rel] = "passed"
        except BaseException as e:  # noqa: BLE001
            results["items"][rel] = ("assert: " if isinstance(e, AssertionError) else "") \
                + _first_line(e)
        finally:
            signal.alarm(0)
    else:
        import pytest

        class Plugin:
            def pytest_collection_modifyitems(self, session, config, items):
                seen: collections.Counter = collections.Counter()
                keep = []
                for it in items:
                    k = it.nodeid.split("[")[0]  # file::[Class::]test
                    seen[k] += 1
                    if seen[k] <= per_test:
                        keep.append(it)
                items[:] = keep

            def pytest_collectreport(self, report):
                if report.failed:
                    results["file_error"] = _short(report.longreprtext)
                elif report.skipped:  # (a whole module: pytest.importorskip at its top)
                    why = report.longrepr
                    results["items"][report.nodeid] = "skipped: " + (
                        why[2] if isinstance(why, tuple) else "")

            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_call(self, item):
                CURRENT["item"] = item.nodeid
                CURRENT["itemfile_w"].write_text(item.nodeid)
                try:
                    source = inspect.getsource(item.function)
                    if re.search(r"raises", source):
                        results["expects_error"].append(item.nodeid)
                    if re.search(r"""patch\(\s*['"]cuda\.tile\._""", source) or \
                            _patches_internal_alias(source, item.module):
                        # it counts calls of cuTile's internal functions, or replaces them
                        # (stand-ins here)
                        results["internals"].append(item.nodeid)
                except (OSError, TypeError):
                    pass
                signal.alarm(ITEM_TIMEOUT_S)
                try:
                    yield
                finally:
                    signal.alarm(0)

            def pytest_runtest_logreport(self, report):
                if report.when == "call" or report.failed or report.skipped:
                    if report.passed:
                        status = "passed"
                    elif report.skipped:
                        why = report.longrepr
                        status = "skipped: " + (
                            f"cuTile's own xfail: {report.wasxfail}"
                            if hasattr(report, "wasxfail") else
                            why[2] if isinstance(why, tuple) else "")
                    else:
                        status = _short(report.longreprtext)
                    if report.when == "call" or report.nodeid not in results["items"]:
                        results["items"][report.nodeid] = status

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            rc = pytest.main([str(path), "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                         "--rootdir", str(work / "test"), "-W", "ignore"],
                        plugins=[Plugin()])
        if not results["items"] and rc not in (0, 5):
            results["file_error"] = results["file_error"] or _short(buf.getvalue())
    _merge_subrecords(subrec)
    results["kernels"] = RECORDS
    out.write_text(json.dumps(results))


def _short(text: str) -> str:
    """The error of a pytest failure report (its ``E   ...`` lines: the first, and the last
    where threadtile's error puts its message after the location)."""
    lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    if not lines:
        return ([ln.strip() for ln in text.splitlines() if ln.strip()][-1:] or [""])[0][:300]
    first = lines[0]
    if "KernelCompileError" in first and len(lines) > 1:
        first = first.split(":")[0] + ": " + lines[-1]
    return first[:300]


# ---- the parent: every file ---------------------------------------------------------------------

def prepare(src: Path, work: Path) -> list[str]:
    """Copies of samples/ and test/ with the import swapped; the files to run."""
    for sub in ("samples", "test"):
        for p in (src / sub).rglob("*"):
            if p.is_dir() or "__pycache__" in p.parts:
                continue
            dst = work / p.relative_to(src)
            dst.parent.mkdir(parents=True, exist_ok=True)
            if p.suffix == ".py":
                text = swap_imports(p.read_text())
                if p.name == "conftest.py":  # hooks of pytest-benchmark, not installed here
                    text = text.replace("def pytest_benchmark_", "def _no_pytest_benchmark_")
                dst.write_text(text)
            else:
                shutil.copy(p, dst)
    files = []
    for p in sorted((work / "samples").glob("*.py")) + sorted(
            (work / "samples" / "quickstart").glob("*.py")):
        if p.name not in SAMPLE_SKIP and p.name != "__init__.py" and kernels_in(p):
            files.append(p.relative_to(work).as_posix())
    for p in sorted((work / "test").glob("test_*.py")):
        text = p.read_text()
        if kernels_in(p) or "from kernels" in text or "import kernels" in text:
            files.append(p.relative_to(work).as_posix())
    return files


def all_kernels(work: Path) -> dict[str, str]:
    """Every kernel the counted files define: "file::name" -> group."""
    out = {}
    paths = [p for p in (work / "samples").rglob("*.py")
             if p.name not in SAMPLE_SKIP and "templates" not in p.parts]
    paths += list((work / "test" / "kernels").glob("*.py"))
    paths += list((work / "test").glob("test_*.py"))
    for p in sorted(paths):
        rel = p.relative_to(work).as_posix()
        for name in kernels_in(p):
            out[f"{rel}::{name}"] = group_of(rel)
    return out


def run_file(work: Path, rel: str, per_test: int) -> dict:
    out = work / ".results" / (rel.replace("/", "__") + ".json")
    out.parent.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", rel, "--work", str(work),
           "--per-test", str(per_test), "--out", str(out)]
    cwd = work / ("samples" if rel.startswith("samples/") else "test")
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True,
                           timeout=FILE_TIMEOUT_S)
        if out.exists():
            return json.loads(out.read_text())
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"items": {}, "kernels": {}, "file_error": f"child died: {tail[0][:200]}"}
    except subprocess.TimeoutExpired:
        return {"items": {}, "kernels": {}, "file_error": f"file timed out ({FILE_TIMEOUT_S} s)"}


def classify(name: str, group: str, recs: list[dict], items: dict, file_error,
             expects: set, internals: frozenset | set = frozenset()) -> tuple:
    """(status, blocker) of one kernel from its records and its tests' outcomes."""
    if not recs:
        return "not run", file_error or "no test launched it (first parametrization)"
    sim_err = next((r["sim_error"] for r in recs if r["sim_error"]), None)
    tests = [t for r in recs for t in r["tests"]]
    outcomes = [items.get(t, "not recorded") for t in tests]
    if any(o == "passed" for o in outcomes) and not sim_err:
        comp = next((r["compile"] for r in recs if r["compile"] not in (None, "ok")), None)
        return ("compile", comp) if comp else ("pass", "")
    if sim_err and tests and all(o == "passed" for o in outcomes) and any(
            t in expects for t in tests):
        # the error a test expects, of cuTile's type and words (other tests may launch the
        # same kernel with other arguments, and pass)
        comp = next((r["compile"] for r in recs if r["compile"] not in (None, "ok")), None)
        return ("compile", comp) if comp else ("pass", "")
    if sim_err and tests and all(t in expects for t in tests):
        if all(o == "passed" for o in outcomes):
            return "pass", ""  # the error the tests expect, of cuTile's type and words
        return "message", sim_err  # the test expects an error: threadtile's has other words
    errs = [t for r in recs for t in r.get("error_tests", [])]
    sub = {t for r in recs for t in r.get("sub_error_tests", [])}
    if sim_err and errs and all((t in expects or t in sub) and items.get(t) == "passed"
                                for t in errs):
        # only errors the tests expect and got (pytest.raises, or a test's subprocess that
        # must fail): its other launches decide
        sim_err = None
        if all(o == "passed" for o in outcomes):
            comp = next((r["compile"] for r in recs if r["compile"] not in (None, "ok")), None)
            return ("compile", comp) if comp else ("pass", "")
    if sim_err:
        return "sim", sim_err
    comp = next((r["compile"] for r in recs if r["compile"] not in (None, "ok")), None)
    if comp:
        return "compile", comp
    fail = next((o for o in outcomes if o != "passed"), "")
    if fail and all(t in internals for t, o in zip(tests, outcomes) if o != "passed"):
        # (its assertion counts calls of cuTile's internal functions, stand-ins here)
        return "test", f"cuTile internal (patched in the test): {fail}"
    if fail.startswith("assert") or "AssertionError" in fail or "Mismatched" in fail:
        return "wrong", fail
    return "test", fail


_CAUSES = [
    (r"threadtile\.tile has no attribute '(\w+)'", r"ct.\1 missing"),
    (r"cannot import name '(\w+)' from 'threadtile\.tile'", r"ct.\1 missing"),
    (r"does not support yet[^']*'?(ct\.)?(\w+)", r"ct.\2 unsupported"),
    (r"tile\.(\w+)\b.*not supported", r"ct.\1 unsupported"),
    (r"cuTile internal ([\w.]+)", r"cuTile internal \1"),
    (r"OutOfBoundsError", "OutOfBoundsError (load past the array)"),
]


def cause_of(blocker: str) -> str:
    for pat, rep in _CAUSES:
        m = re.search(pat, blocker)
        if m:
            return m.expand(rep)
    b = re.sub(r"'[^']*'", "'…'", blocker)
    b = re.sub(r"\b\d+\b", "N", b)
    return b[:120]


def run_suite(src: Path, per_test: int = 1, only: list[str] | None = None,
              jobs: int = 2) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    with tempfile.TemporaryDirectory(prefix="cutile-compat-") as tmp:
        work = Path(tmp)
        files = prepare(src, work)
        if only:
            files = [f for f in files if any(o in f for o in only)]
        t0 = time.time()
        with ThreadPoolExecutor(jobs) as ex:
            results = dict(zip(files, ex.map(lambda f: run_file(work, f, per_test), files)))
        kernels = all_kernels(work)
        records: dict[str, list] = collections.defaultdict(list)
        items: dict = {}
        file_errors: dict = {}
        expects: set = set()
        internals: set = set()
        for f, r in results.items():
            items.update(r.get("items", {}))
            expects.update(r.get("expects_error", []))
            internals.update(r.get("internals", []))
            if r.get("file_error"):
                file_errors[f] = r["file_error"]
            for k, rec in r.get("kernels", {}).items():
                records[k].append(rec)
        rows = []
        for k, group in kernels.items():
            rel = k.split("::")[0]
            if only and not any(o in rel for o in only) and not records.get(k):
                continue
            # a kernel of test/kernels is run by the test files that import it
            ferr = file_errors.get(rel)
            if group == "samples" and items.get(rel, "passed") != "passed":
                ferr = ferr or items[rel]  # the sample stopped before launching it
            status, blocker = classify(k, group, records.get(k, []), items, ferr, expects,
                                       internals)
            if status == "not run" and not ferr:
                status, blocker = why_not_run(work, rel, k, items) or (status, blocker)
            rows.append({"kernel": k, "group": group, "status": status, "blocker": blocker,
                         "cause": cause_of(blocker) if blocker else ""})
        return {"rows": rows, "file_errors": file_errors, "seconds": round(time.time() - t0),
                "per_test": per_test}


def summary(res: dict) -> dict:
    rows = res["rows"]
    by_group = collections.defaultdict(collections.Counter)
    for r in rows:
        by_group[r["group"]][r["status"]] += 1
    causes = collections.Counter(r["cause"] for r in rows
                                 if r["status"] not in ("pass", "message", "skipped",
                                                        "cuTile IR"))
    tests = by_group.get("test/test_*.py", collections.Counter())
    reachable = sum(tests.values()) - tests["skipped"] - tests["cuTile IR"]
    return {"by_group": {g: dict(c) for g, c in by_group.items()},
            "by_status": dict(collections.Counter(r["status"] for r in rows)),
            "causes": causes.most_common(),
            # test/test_*.py kernels that pass, of those whose tests neither skip on an H100
            # under cuTile itself nor read cuTile's compiler output (cutile_reach.py)
            "tests_pass_of_reachable": [tests["pass"], reachable]}


def markdown(res: dict) -> str:
    s = summary(res)
    cols = ("pass", "wrong", "message", "sim", "compile", "test", "not run", "skipped",
            "cuTile IR")
    out = ["| group | kernels | " + " | ".join(cols) + " |", "|---" * (len(cols) + 2) + "|"]
    for g in ("samples", "test/kernels", "test/test_*.py"):
        c = s["by_group"].get(g, {})
        out.append(f"| {g} | {sum(c.values())} | " + " | ".join(
            str(c.get(k, 0)) for k in cols) + " |")
    p, n = s["tests_pass_of_reachable"]
    out += ["", f"test/test_*.py: {p} of the {n} kernels that cuTile's tests launch on an H100 "
            f"under cuTile itself, apart from checks of its compiler output, pass "
            f"({100 * p / max(n, 1):.1f}%)"]
    out += ["", "| kernels blocked | cause |", "|---|---|"]
    out += [f"| {n} | {c.replace('|', '/')} |" for c, n in s["causes"]]
    out += ["", "| kernel | status | first error |", "|---|---|---|"]
    out += [f"| `{r['kernel']}` | {r['status']} | {r['blocker'].replace('|', '/')[:160]} |"
            for r in res["rows"] if r["status"] != "pass"]
    return "\n".join(out) + "\n"


def find_checkout(arg: str | None) -> Path | None:
    p = arg or os.environ.get("CUTILE_SRC")
    if p and (Path(p) / "samples").is_dir() and (Path(p) / "test").is_dir():
        return Path(p)
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", nargs="?", help="cutile-python checkout (or CUTILE_SRC)")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--per-test", type=int, default=1)
    ap.add_argument("--only", nargs="*", help="substrings of the files to run")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--child")
    ap.add_argument("--work")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.child:
        run_child(Path(a.work), a.child, a.per_test, Path(a.out))
        return 0
    src = find_checkout(a.src)
    if src is None:
        print("no cutile-python checkout: give its path or set CUTILE_SRC", file=sys.stderr)
        return 2
    res = run_suite(src, a.per_test, a.only, a.jobs)
    s = summary(res)
    if a.json:
        Path(a.json).write_text(json.dumps({**res, "summary": s}, indent=1))
    md = markdown(res)
    if a.markdown:
        Path(a.markdown).write_text(md)
    print("\n".join(md.splitlines()[:7]))
    for c, n in s["causes"][:25]:
        print(f"{n:4d}  {c}")
    print(f"({res['seconds']} s)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        traceback.print_exc()
        sys.exit(130)
