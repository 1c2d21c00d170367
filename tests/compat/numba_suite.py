"""numba-cuda's own test kernels, run on threadtile with only the import swapped.

The ``numba-cuda`` wheel ships its test suite (``numba/cuda/tests``). For each user-style test
file (``FILES``; the files that test numba's own machinery are ``EXCLUDED``, with why), this
harness reads the source, swaps the import (``from numba import cuda`` becomes ``import
threadtile as cuda``: :func:`swap_imports`), and runs every test method the way numba's own
suite runs it, in threadtile's simulator with every check on. Each kernel launch is recorded:
the kernel, the argument types, and every array argument after the launch. Then

- every specialization launched is compiled to a cubin for sm_80 and sm_90 (NVRTC, no GPU);
- the same test methods run, unmodified, under numba's own simulator
  (``NUMBA_ENABLE_CUDASIM=1``, a subprocess) from the same random seeds, and each launch's
  arrays are compared with threadtile's.

A test's outcome (:class:`Outcome`):

- ``pass``: the test's own assertions hold, every specialization compiles, and the arrays equal
  numba's simulator's (where numba's simulator runs the test);
- ``caught``: the simulator reports a hazard in the test's kernel that numba's simulator does
  not check (a race, a read of memory nothing wrote, a barrier that not every thread
  reaches), and with that one check off the test
  passes its own assertions (its arrays, which hold what the hazard left, are not compared):
  the kernel runs unchanged, and threadtile says where it is unsafe;
- ``wrong``: threadtile ran it to the end but an assertion of the test failed or the arrays
  differ from numba's simulator: a wrong result, which must never happen;
- ``refused``: threadtile said it does not support something (a ``KernelCompileError``, a
  ``TypeError`` or ``AttributeError`` from threadtile's API, a failed compile);
- ``message``: threadtile raised an error where the test expects one, with other words or of
  another type than numba's;
- ``error``: anything else (a crash, a timeout);
- ``skip``: the test skipped itself (a GPU feature, a missing optional package);
- ``numba``: the test reached numba's own CUDA target through an import the swap leaves as it
  is (``from numba import vectorize``, numba.cuda internals), which needs numba's driver; or
  it reads numba's compiler internals that threadtile has no counterpart of (LLVM IR, LTO-IR,
  numba's type objects: ``NUMBA_INTERNALS``).

``skip`` and ``numba`` do not count; the pass rate is over the rest.

``python tests/compat/numba_suite.py`` prints the table; ``--json PATH`` writes the outcomes,
``--markdown PATH`` the table that docs/numba.md includes. tests/compat/test_numba_suite.py
runs it in CI.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import importlib.util
import inspect
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import types
import unittest
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TIMEOUT_S = int(os.environ.get("THREADTILE_COMPAT_TIMEOUT", "30"))
ARCHS = ("sm_80", "sm_90")

# The test files of numba-cuda that test numba itself rather than kernels a user writes, and
# why. Every other file of tests/cudapy and tests/doc_examples is in the suite.
EXCLUDED = {
    "cudapy/test_analysis.py": "numba's IR analysis passes",
    "cudapy/test_byteflow.py": "numba's bytecode flow analysis",
    "cudapy/test_cache_hints.py": "numba's cache-hint intrinsics on PTX",
    "cudapy/test_caching.py": "numba's on-disk cache of its own artifacts",
    "cudapy/test_compiler.py": "numba's compile_ptx / compile APIs and their outputs",
    "cudapy/test_copy_propagate.py": "numba's IR copy propagation",
    "cudapy/test_cupy_bfloat16_interop.py": "CuPy interop of numba's bfloat16 type",
    "cudapy/test_debug.py": "numba's debug output (IR dumps)",
    "cudapy/test_debuginfo.py": "numba's DWARF debug info",
    "cudapy/test_debuginfo_types.py": "numba's DWARF debug info",
    "cudapy/test_extending.py": "numba's extension API (typing and lowering of new types)",
    "cudapy/test_flow_control.py": "numba's control-flow analysis",
    "cudapy/test_extending_types.py": "numba's extension API",
    "cudapy/test_inspect.py": "numba's inspect_llvm / inspect_asm outputs",
    "cudapy/test_ipc.py": "CUDA IPC handles of numba's device arrays",
    "cudapy/test_ir.py": "numba's IR",
    "cudapy/test_ir_utils.py": "numba's IR utilities",
    "cudapy/test_launch_config_sensitive.py": "numba's rewrite-pass extension API "
                                              "(register_rewrite) seeing the launch config",
    "cudapy/test_libdevice.py": "numba's libdevice bindings, called by their internal names",
    "cudapy/test_lineinfo.py": "numba's line info in its PTX",
    "cudapy/test_make_function_to_jit_function.py": "numba's first-class function types",
    "cudapy/test_multigpu.py": "several GPUs",
    "cudapy/test_multiprocessing.py": "numba's device arrays across processes",
    "cudapy/test_numba_interop.py": "interop with numba's CPU target",
    "cudapy/test_optimization.py": "numba's optimisation flags on its LLVM IR",
    "cudapy/test_overload.py": "numba's @overload extension API",
    "cudapy/test_serialize.py": "pickling numba's dispatchers",
    "cudapy/test_sm.py": "numba's shared-memory allocation internals",
    "cudapy/test_sm_creation.py": "numba's shared-memory typing errors",
    "cudapy/test_ssa.py": "numba's SSA reconstruction",
    "cudapy/test_tracing.py": "numba's event tracing",
    "cudapy/test_typeconv.py": "numba's type conversion rules",
    "cudapy/test_typeinfer.py": "numba's type inference",
    "cudapy/test_warning.py": "numba's compiler warnings",
    "cudapy/test_bfloat16_bindings.py": "numba's bfloat16 intrinsic bindings",
    "cudapy/test_fp8_bindings.py": "numba's fp8 bindings",
    "cudapy/test_cffi.py": "cffi functions called from kernels",
    "doc_examples/test_ffi.py": "linking foreign CUDA C++ into numba kernels",
    "doc_examples/test_cpointer.py": "C pointers through numba's FFI",
}


# Single tests of kept files that look at numba's internals rather than at what a kernel
# computes (by test id, start of; the reason is the outcome's detail).
INTERNALS = {
    "cudapy/test_cuda_array_interface.py::TestCudaArrayInterface.test_ownership":
        "numba's memory manager (ctx.memory_manager.deallocations)",
    "cudapy/test_cuda_array_interface.py::TestCudaArrayInterface.test_launch_sync":
        "patches numba's driver class cuda.cudadrv.driver.Stream",
    "cudapy/test_cuda_array_interface.py::TestCudaArrayInterface.test_launch_no_sync":
        "patches numba's driver class cuda.cudadrv.driver.Stream",
    "cudapy/test_cuda_array_interface.py::TestCudaArrayInterface.test_consume_sync":
        "patches numba's driver class cuda.cudadrv.driver.Stream",
    "cudapy/test_cuda_array_interface.py::TestCudaArrayInterface.test_consume_no_sync":
        "patches numba's driver class cuda.cudadrv.driver.Stream",
    "cudapy/test_dispatcher.py::TestDispatcher.test_capture_compile_config":
        "numba's dispatcher internals (_compile_for_args)",
    "cudapy/test_dispatcher.py::TestDispatcher.test_dispatcher_mark_launch":
        "numba's dispatcher internals (_compile_for_args)",
    "cudapy/test_dispatcher.py::TestDispatcher.test_launch_config_args_are":
        "numba's dispatcher internals (_compile_for_args)",
    "cudapy/test_dispatcher.py::TestDispatcher.test_launch_config_available":
        "numba's dispatcher internals (_compile_for_args)",
    "cudapy/test_enums.py::EnumTest.test_int_enum_no_conversion":
        "numba's target descriptor (cuda.descriptor)",
    "cudapy/test_multithreads.py::TestMultiThreadCompiling.test_spawn_concurrent":
        "a spawned process imports the test module by its name, which the harness's copy "
        "does not have",
    "cudapy/test_errors.py::TestJitErrors.test_lto_without_nvjitlink_error":
        "numba's link-time optimisation through nvJitLink (threadtile links nothing)",
}


# Tests whose launches numba's simulator makes differently from numba on a GPU: their own
# assertions still decide, but their launches are not compared with the simulator's.
SIMULATOR_DIFFERS = {
    "cudapy/test_forall.py::TestForAll.test_forall_no_work":
        "numba's simulator launches forall(0); numba on a GPU, like threadtile, launches nothing",
}


def internal(test: str) -> str | None:
    """Why test ``test`` is about numba's internals, or None."""
    for prefix, why in INTERNALS.items():
        if test.startswith(prefix):
            return why
    return None


def suite_dir() -> Path | None:
    """numba-cuda's test suite, where the wheel is installed."""
    spec = importlib.util.find_spec("numba_cuda")
    if spec is None or spec.origin is None:
        return None
    d = Path(spec.origin).parent / "numba" / "cuda" / "tests"
    return d if d.is_dir() else None


def files(suite: Path) -> list[str]:
    """The suite's files, relative to it: every test file of cudapy/ and doc_examples/ not
    EXCLUDED."""
    out = []
    for sub in ("cudapy", "doc_examples"):
        for f in sorted((suite / sub).glob("test_*.py")):
            rel = f"{sub}/{f.name}"
            if rel not in EXCLUDED:
                out.append(rel)
    return out


# -- the import swap ---------------------------------------------------------------------------

_CUDA_IMPORT = re.compile(r"^(?P<ind>[ \t]*)from numba import (?P<names>[^\n(]*?\bcuda\b[^\n]*)$",
                          re.M)
# numba.cuda.compiler's compile functions are numba.cuda's too (compile_ptx...)
_FROM_CUDA = re.compile(r"^(?P<ind>[ \t]*)from numba\.cuda(?P<sub>\.compiler)? import "
                        r"(?P<names>[^\n(]+)$", re.M)


def swap_imports(src: str) -> str:
    """The one change a user makes: ``from numba import cuda`` -> ``import threadtile as
    cuda``, ``from numba.cuda import jit, float32`` (or ``from numba.cuda.compiler import
    compile_ptx``) -> ``from threadtile import jit, float32`` for the names threadtile has,
    and ``from numba.cuda.random import`` -> ``from threadtile.random import`` (numba's other
    modules, ``numba.cuda.types`` and ``numba.cuda.testing`` among them, stay numba's)."""
    import threadtile

    def swap_cuda(m: re.Match) -> str:
        ind = m["ind"]
        names = [n.strip() for n in m["names"].split(",") if n.strip()]
        rest = [n for n in names if n != "cuda"]
        out = f"{ind}import threadtile as cuda"
        if rest:
            out += f"\n{ind}from numba import {', '.join(rest)}"
        return out

    def swap_names(m: re.Match) -> str:
        ind = m["ind"]
        names = [n.strip() for n in m["names"].split(",") if n.strip()]
        ours = [n for n in names if hasattr(threadtile, n.split(" as ")[0].strip())]
        theirs = [n for n in names if n not in ours]
        out = []
        if ours:
            out.append(f"{ind}from threadtile import {', '.join(ours)}")
        if theirs:
            out.append(f"{ind}from numba.cuda{m['sub'] or ''} import {', '.join(theirs)}")
        return "\n".join(out)

    # numba.cuda's submodule threadtile has as well (threadtile.random)
    src = src.replace("from numba.cuda.random import", "from threadtile.random import")
    return _FROM_CUDA.sub(swap_names, _CUDA_IMPORT.sub(swap_cuda, src))


# -- outcomes ----------------------------------------------------------------------------------

@dataclass
class Outcome:
    """One test method: ``status`` (module docstring), ``detail`` (the first line of what
    went wrong), the kernels it launched and the seconds it took."""

    test: str
    status: str
    detail: str = ""
    kernels: list = field(default_factory=list)
    seconds: float = 0.0
    reference: str = "not run"  # the test's outcome under numba's simulator


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _exc_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}"[:240]


_OURS = re.compile(r"threadtile|'(Kernel|Launch|Scalar|ArrayType|DeviceArray|RawKernel|"
                   r"Specialization)' object|"
                   r"\b(Kernel|Scalar|Launch)\.\w+\(\)")


# Errors that mean the test reads numba's compiler internals, which threadtile has no
# counterpart of (it compiles through CUDA C++, not numba IR and LLVM): status "numba"
NUMBA_INTERNALS = {
    r"has no LLVM IR to inspect": "the test reads numba's LLVM IR (inspect_llvm)",
    r"has no attribute '_type_annotation'": "the test reads numba's type annotation object",
    r"it has no LTO-IR of numba's kind": "the test reads numba's LTO-IR (output='ltoir')",
    r"is not an instance of <class 'numba\.core\.types": "the test checks numba's type objects",
    r"Regex didn't match: '\(red\|atom\)\.add\.f64'": "the test expects numba's PTX for a "
    "float64 atomic on a generic address (atom.add.f64); NVRTC's names the state space "
    "(red.global.add.f64)",
}


def _numba_environment(tb: str) -> bool:
    """Whether a traceback ends in numba-cuda's own code failing with the installed NumPy
    (numba-cuda 0.30 calls np.row_stack, which NumPy 2.4 removed): an environment numba
    itself cannot run in, whatever the kernel."""
    files = re.findall(r'^\s*File "([^"]+)"', tb, re.M)
    return bool(files) and re.search(r"[/\\](numba_cuda|numba)[/\\]", files[-1]) is not None \
        and "/tests/" not in files[-1] and "module 'numpy' has no attribute" in tb


def _numba_internal(line: str) -> str | None:
    for pattern, why in NUMBA_INTERNALS.items():
        if re.search(pattern, line):
            return f"{why}: {line}"[:240]
    return None


def _from_threadtile(tb_text: str, exc_line: str) -> bool:
    """Whether an error is threadtile saying no: raised from its own code, or a name one of
    its objects does not have."""
    if _OURS.search(exc_line):
        return True
    last = [ln for ln in tb_text.splitlines() if ln.strip().startswith('File "')]
    return bool(last) and "threadtile" in last[-1]


def _about_errors(case: unittest.TestCase | None) -> bool:
    """Whether a test checks the errors numba raises (its text or type) rather than values."""
    if case is None:
        return False
    try:
        src = inspect.getsource(getattr(case, case._testMethodName))
    except (OSError, TypeError, AttributeError):
        return False
    return "assertRaises" in src or ".exception" in src


def classify(result: unittest.TestResult, case: unittest.TestCase | None = None
             ) -> tuple[str, str]:
    if result.skipped:
        return "skip", result.skipped[0][1].strip()[:240]
    if result.failures:
        tb = result.failures[0][1]
        line = tb.strip().splitlines()[-1][:240]
        if _OURS.search(line) or re.search(r"^threadtile\.errors\.\w+:", tb, re.M):
            return "refused", line  # a subprocess of the test, reporting threadtile's error
        # the assertion's own line (a test that prints the PTX it searched ends with the PTX)
        first = next((ln for ln in tb.splitlines() if ln.startswith("AssertionError")), line)
        internal = _numba_internal(first)
        if internal:
            return "numba", internal
        if "not found in" in line or "does not match" in line or "not raised" in line or \
                _about_errors(case):
            return "message", line  # the test checks numba's own error (its text or its type)
        return "wrong", line
    if result.errors:
        tb = result.errors[0][1]
        lines = [ln for ln in tb.strip().splitlines() if ln.strip()]
        exc = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception|Exit|Skipped)\b", ln)]
        line = (exc[-1] if exc else lines[-1])[:240]
        at = lines.index(exc[-1]) if exc else -1
        m = re.match(r'^([\w.]+Error):\s+"([^"]+)", line (\d+)', line)
        if m and at + 3 < len(lines):  # a compile error at a kernel's line: its message first
            line = f"{m[1]}: {lines[at + 3].strip()} ({Path(m[2]).name}:{m[3]})"[:240]
        if "Skipped" in line:
            return "skip", line
        if _numba_environment(tb):
            return "numba", f"numba-cuda's own code fails with this NumPy: {line}"
        if "numba.cuda.cudadrv.error.CudaSupportError" in line or (
                "DynamicLibNotFoundError" in line and "numba/cuda/cudadrv/" in tb):
            return "numba", line  # numba's own CUDA target, through an import left as it was
        internal = _numba_internal(line)
        if internal:
            return "numba", internal
        refused = (line.startswith("threadtile.errors.") or "KernelCompileError" in line or
                   "NvrtcError" in line or
                   "NotImplementedError" in line or "LaunchError" in line or
                   (("TypeError" in line or "AttributeError" in line or "ValueError" in line)
                    and _from_threadtile(tb, line)))
        if refused and "KernelCompileError" in line and _about_errors(case):
            return "message", line  # a kernel numba refuses too, with its own error type
        return ("refused" if refused else "error"), line
    return "pass", ""


# -- running one file --------------------------------------------------------------------------

class Recorder:
    """Every launch of a test: the kernel's name, and the array arguments after the launch."""

    def __init__(self):
        self.launches: list = []

    def snapshot(self, name: str, args) -> None:
        arrays = []
        for a in args:
            h = _host(a)
            if h is not None:
                arrays.append(h)
        self.launches.append((name, arrays))


def _host(a):
    if isinstance(a, np.ndarray):
        return a.copy()
    if hasattr(a, "copy_to_host"):
        try:
            return np.asarray(a.copy_to_host())
        except Exception:  # noqa: BLE001  (an array the launch left unreadable)
            return None
    return None


def load(suite: Path, rel: str, swap: bool) -> types.ModuleType:
    """The test file as a module (its import swapped when ``swap``)."""
    path = suite / rel
    src = path.read_text()
    if swap:
        src = swap_imports(src)
    name = ("tt_" if swap else "nb_") + "compat_" + rel.replace("/", "_")[:-3]
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    mod.__package__ = "numba.cuda.tests." + rel.split("/")[0]
    sys.modules[name] = mod
    exec(compile(src, str(path), "exec"), mod.__dict__)  # noqa: S102  (numba's test file)
    return mod


def cases(mod: types.ModuleType):
    """(id, TestCase instance) for every test method the module defines, in order."""
    loader = unittest.TestLoader()
    for obj in list(mod.__dict__.values()):
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase) and \
                obj.__module__ == mod.__name__:
            for m in loader.getTestCaseNames(obj):
                yield f"{obj.__name__}.{m}", obj(m)


def run_case(case: unittest.TestCase, rec: Recorder, simulate) -> unittest.TestResult:
    result = unittest.TestResult()
    np.random.seed(0)
    random.seed(0)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_S)
    try:
        with simulate(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            case.run(result)
    except _Timeout:
        result.errors.append((case, f"Timeout: more than {TIMEOUT_S} s"))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return result


# -- threadtile's side -------------------------------------------------------------------------

def run_threadtile(suite: Path, rels: list[str], snapshots: Path, gpu: bool = False
                   ) -> list[Outcome]:
    """The swapped tests on threadtile: in its simulator (then each kernel compiled to cubins),
    or with ``gpu`` on the GPU."""
    import threadtile

    tjit = importlib.import_module("threadtile.jit")  # the module (threadtile.jit is @jit)
    env = os.environ.get("THREADTILE_SIMULATE")
    if not gpu:
        os.environ["THREADTILE_SIMULATE"] = "1"  # for the tests that run code in a subprocess
        # numba's test helpers ask numba's driver for the device's compute capability, which a
        # process without numba's simulator and without a GPU cannot: answer as an H100 would
        import numba.cuda.testing as nt

        nt.cc_X_or_above = lambda major, minor: (major, minor) <= (9, 0)
    from threadtile.runtime.arrays import kernel_type

    real_run, real_general = tjit.sim_run, tjit.Launch._general
    rec = Recorder()
    launched: list = []

    def recording_run(kernel, launch, args, kwargs):  # what the simulator ran, to compile
        out = real_run(kernel, launch, args, kwargs)
        runtime, consts = kernel._split(args, kwargs)
        launched.append((kernel, [kernel_type(a) for a in runtime], consts))
        return out

    def recording_general(launch, args, kwargs):
        # every launch (never the GPU's direct path), with the arguments as the test passed
        # them (an In(a) is no array to record, as in numba's simulator), after the launch and
        # its copies back
        out = real_general(launch, args, kwargs)
        launch.direct = None
        if gpu:
            threadtile.synchronize()
        # the kernels of threadtile's own library (cuda.reduce, vectorize) are compiled but not
        # compared: numba's simulator runs those functions without kernels
        k = launch.kernel
        if not (getattr(k.py_func, "__module__", "") or "").startswith("threadtile."):
            rec.snapshot(k.__name__, args)
        return out

    tjit.Launch._general = recording_general
    if not gpu:
        tjit.sim_run = recording_run
    outcomes = []
    try:
        for rel in rels:
            try:
                mod = load(suite, rel, swap=True)
            except BaseException as e:  # noqa: BLE001  (pytest.importorskip raises Skipped)
                st = "skip" if type(e).__name__ == "Skipped" else "numba" if \
                    _numba_environment(traceback.format_exc()) else "refused" if \
                    "threadtile" in _exc_line(e) or "threadtile" in traceback.format_exc() \
                    else "error"
                outcomes.append(Outcome(rel, st, "the module: " + _exc_line(e)))
                continue
            for tid, case in cases(mod):
                rec.launches, launched[:] = [], []
                t0 = time.perf_counter()
                status, detail = classify(run_case(
                    case, rec, contextlib.nullcontext if gpu else threadtile.simulate), case)
                caught = re.match(r"threadtile\.errors\.(RaceError|UninitializedReadError|"
                                  r"BarrierDivergenceError)",
                                  detail) if status == "refused" and not gpu else None
                if caught:  # the simulator reports a hazard: run again without that check
                    rec.launches, launched[:] = [], []
                    check = {"RaceError": "race", "UninitializedReadError": "uninit",
                             "BarrierDivergenceError": "barrier"}[caught[1]]
                    again, _ = classify(run_case(case, rec, functools.partial(
                        threadtile.simulate, checks={check: False})), case)
                    if again == "pass" and _compile_all(launched)[0] == "pass":
                        status = "caught"  # the detail stays what the simulator reported
                if status == "pass" and not gpu:
                    status, detail = _compile_all(launched)
                elif internal(f"{rel}::{tid}"):
                    status, detail = "numba", internal(f"{rel}::{tid}")
                o = Outcome(f"{rel}::{tid}", status, detail,
                            sorted({k.__name__ for k, _, _ in launched}),
                            time.perf_counter() - t0)
                outcomes.append(o)
                _save(snapshots, o.test, rec.launches)
    finally:
        tjit.sim_run, tjit.Launch._general = real_run, real_general
        if env is None:
            os.environ.pop("THREADTILE_SIMULATE", None)
        else:
            os.environ["THREADTILE_SIMULATE"] = env
    return outcomes


def _compile_all(launched) -> tuple[str, str]:
    seen = set()
    for kernel, types_, consts in launched:
        key = (id(kernel), repr(types_), repr(sorted(consts.items())))
        if key in seen:
            continue
        seen.add(key)
        for arch in ARCHS:
            try:
                kernel.compile(*types_, arch=arch, **consts)
            except Exception as e:  # noqa: BLE001  (each failure is an outcome)
                return "refused", f"compile for {arch}: {_exc_line(e)}"
    return "pass", ""


def _save(snapshots: Path, test: str, launches) -> None:
    arrays = {}
    for i, (name, arrs) in enumerate(launches):
        for j, a in enumerate(arrs):
            arrays[f"{i}:{j}:{name}"] = a
    np.savez_compressed(snapshots / (_fname(test) + ".npz"), **arrays)


def _fname(test: str) -> str:
    return re.sub(r"[^\w.-]", "_", test)


# -- numba's simulator (a subprocess) ----------------------------------------------------------

def run_numba(suite: Path, rels: list[str], snapshots: Path, gpu: bool = False
              ) -> dict[str, str]:
    """In a process with NUMBA_ENABLE_CUDASIM=1 (without, and ``gpu``: on the GPU): the
    unmodified tests under numba, each launch's arrays saved as threadtile's are. Returns
    {test: status}."""
    rec = Recorder()
    if gpu:
        from numba import cuda as nb_cuda
        from numba.cuda import dispatcher

        real_launch = dispatcher._LaunchConfiguration.__call__

        def recording_launch(self, *args):
            out = real_launch(self, *args)
            nb_cuda.synchronize()
            rec.snapshot(self.dispatcher.py_func.__name__, args)
            return out

        dispatcher._LaunchConfiguration.__call__ = recording_launch
    else:
        from numba.cuda.simulator import kernel as sim_kernel

        real_call = sim_kernel.FakeCUDAKernel.__call__

        def recording_call(self, *args):
            out = real_call(self, *args)
            if not (self._device or sim_kernel._kernel_context):
                rec.snapshot(self.fn.__name__, args)
            return out

        sim_kernel.FakeCUDAKernel.__call__ = recording_call
    statuses = {}
    for rel in rels:
        try:
            mod = load(suite, rel, swap=False)
        except BaseException:  # noqa: BLE001
            continue
        for tid, case in cases(mod):
            rec.launches = []
            status, _ = classify(run_case(case, rec, contextlib.nullcontext))
            test = f"{rel}::{tid}"
            statuses[test] = status
            if status == "pass":
                _save(snapshots, test, rec.launches)
    return statuses


def compare(ours: Path, theirs: Path, test: str) -> str | None:
    """What differs between the two simulators' launches of ``test``, or None."""
    a, b = ours / (_fname(test) + ".npz"), theirs / (_fname(test) + ".npz")
    if not (a.exists() and b.exists()):
        return None
    with np.load(a) as x, np.load(b) as y:
        kx, ky = sorted(x.files, key=_order), sorted(y.files, key=_order)
        if [k.split(":")[2] for k in kx] != [k.split(":")[2] for k in ky]:
            if _sizes_by_simulator(test):
                return None  # e.g. laplace: 20 iterations under numba's simulator, not 1000
            return f"launches differ: {len(kx)} arrays here, {len(ky)} in numba's"
        for k1, k2 in zip(kx, ky):
            u, v = x[k1], y[k2]
            if u.shape != v.shape:
                if _sizes_by_simulator(test):
                    return None  # the test picks smaller inputs under numba's simulator
                return f"launch {k1}: shape {u.shape} here, {v.shape} in numba's"
            if u.dtype.kind in "fc":
                tol = 1e-5 if u.dtype.itemsize >= 8 else 1e-3
                ok = np.allclose(u, v, rtol=tol, atol=tol, equal_nan=True)
            elif u.dtype.names:
                ok = _field_bytes(u) == _field_bytes(v)
            else:
                ok = np.array_equal(u, v)
            if not ok:
                return f"launch {k1}: the arrays differ from numba's"
    return None


def _sizes_by_simulator(test: str) -> bool:
    """Whether ``test``'s file sizes its inputs by ``config.ENABLE_CUDASIM`` (a smaller problem
    for numba's slow simulator): its launches then have other shapes, or are fewer, in the
    reference run, by design, and only the test's own assertions judge the result."""
    suite = suite_dir()
    path = suite / test.split("::")[0] if suite is not None else None
    return path is not None and path.exists() and "ENABLE_CUDASIM" in path.read_text()


def _field_bytes(a: np.ndarray) -> list:
    """A record array's bits field by field: its padding bytes are unspecified (a test's
    ``np.recarray(n)`` leaves them as whatever the allocation held), so they are not compared."""
    if not a.dtype.names:
        return [np.ascontiguousarray(a).tobytes()]
    return [(f, *_field_bytes(a[f])) for f in a.dtype.names]


def _order(k: str):
    i, j, _ = k.split(":", 2)
    return int(i), int(j)


# -- the whole run -----------------------------------------------------------------------------

def run(rels: list[str] | None = None, reference: bool = True, gpu: bool = False
        ) -> list[Outcome]:
    """Run the suite's files ``rels`` (default: all) on threadtile and compare each launch with
    numba's: both in their simulators, or with ``gpu`` both on the GPU."""
    suite = suite_dir()
    if suite is None:
        raise RuntimeError("numba-cuda is not installed (pip install -e '.[test]')")
    rels = rels or files(suite)
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = Path(tmp, "threadtile"), Path(tmp, "numba")
        ours.mkdir()
        theirs.mkdir()
        statuses = {}
        if reference:
            env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
            if gpu:
                env.pop("NUMBA_ENABLE_CUDASIM")
            out = Path(tmp, "numba.json")
            subprocess.run([sys.executable, __file__, "--numba-reference", str(theirs),
                            "--json", str(out), *(["--gpu"] if gpu else []), *rels],
                           env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=3600)
            statuses = json.loads(out.read_text())
        outcomes = run_threadtile(suite, rels, ours, gpu)
        for o in outcomes:
            # (a caught test's arrays hold what its race or uninitialised read left: its own
            # assertions judge it)
            if o.status == "pass" and (gpu or o.test not in SIMULATOR_DIFFERS):
                diff = compare(ours, theirs, o.test)
                if diff is not None:
                    o.status, o.detail = "wrong", diff
            o.reference = statuses.get(o.test, "not run")
    return outcomes


def summary(outcomes: list[Outcome]) -> dict:
    c = collections.Counter(o.status for o in outcomes)
    counted = sum(v for k, v in c.items() if k not in ("skip", "numba"))
    return {"tests": len(outcomes), "counted": counted, **dict(c),
            "pass_rate": round(c["pass"] / counted, 4) if counted else 0.0}


def markdown(outcomes: list[Outcome]) -> str:
    s = summary(outcomes)
    lines = [f"{s['tests']} test methods in {len({o.test.split('::')[0] for o in outcomes})} "
             f"files; {s.get('pass', 0)} pass of the {s['counted']} that do not skip "
             f"({100 * s['pass_rate']:.0f}%), {s.get('caught', 0)} more pass with a hazard "
             f"the simulator reports, {s.get('wrong', 0)} wrong, "
             f"{s.get('refused', 0)} refused, {s.get('message', 0)} with other error "
             f"messages, {s.get('error', 0)} errors; {s.get('skip', 0)} skipped, "
             f"{s.get('numba', 0)} through numba's own CUDA target.", "",
             "## By file", "", "| file | pass | of | refused | other |", "|---|---|---|---|---|"]
    by_file: dict = collections.defaultdict(collections.Counter)
    for o in outcomes:
        by_file[o.test.split("::")[0]][o.status] += 1
    for f, c in sorted(by_file.items()):
        counted = sum(v for k, v in c.items() if k not in ("skip", "numba"))
        other = counted - c["pass"] - c["refused"]
        lines.append(f"| `{f}` | {c['pass']} | {counted} | {c['refused']} | {other} |")
    lines += ["", "## Every test that does not pass", "",
              "| test | outcome | numba's simulator | why |", "|---|---|---|---|"]
    for o in outcomes:
        if o.status == "pass":
            continue
        why = o.detail.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{o.test}` | {o.status} | {o.reference} | {why} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="suite files (cudapy/test_x.py); default: all")
    ap.add_argument("--json", help="write the outcomes here")
    ap.add_argument("--markdown", help="write the table here")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the comparison with numba's simulator")
    ap.add_argument("--gpu", action="store_true",
                    help="run on the GPU, threadtile's launches against numba-cuda's")
    ap.add_argument("--numba-reference", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.numba_reference:
        suite = suite_dir()
        statuses = run_numba(suite, a.files or files(suite), Path(a.numba_reference), a.gpu)
        Path(a.json).write_text(json.dumps(statuses))
        return 0
    outcomes = run(a.files or None, reference=not a.no_reference, gpu=a.gpu)
    if a.json:
        Path(a.json).write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    if a.markdown:
        Path(a.markdown).write_text(markdown(outcomes))
    print(json.dumps(summary(outcomes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
