"""``threadtile.compare``: one launch on the GPU and in the simulator, their arrays compared.

``compare(kernel[grid, block], *args)`` (or cuTile's launch form ``compare(stream, grid,
kernel, args)``, or ``compare(kernel[grid], *args)`` for a tile kernel) copies every array
argument twice, launches on the GPU with one set of copies and in the simulator with the
other, and returns a :class:`Report`: per array argument, whether the two agree within the
tolerance of its dtype (:data:`TOLERANCES`; integers exactly), and where they do not, the
first differing element (its index, both values) and the simulator's thread that wrote it
(``backends/sim/record.py``: the race check's shadow memory keeps each element's last writer).
The arguments themselves are left as they were. ``str(report)`` reads as a table;
``report.ok`` says whether everything agreed; a mismatch raises :class:`MismatchError` only
with ``raise_on_mismatch=True``. See docs/torch.md, "compare".

The steps are separate functions, so that the comparison runs without a GPU as well:
:func:`run_on_gpu` and :func:`run_in_simulator` each make one :class:`Run` (the arrays after
the launch, the simulator's writers, an error the simulator raised), and :func:`compare_runs`
compares two runs. The tests compare the simulator with a second simulator run in which a
difference was planted.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .backends.sim import record as sim_record
from .backends.sim import simulate
from .errors import KernelRuntimeError, ThreadtileError
from .jit import Kernel, Launch
from .runtime import devices, driver, mode
from .runtime.arrays import HostArrayWarning
from .runtime.hostarrays import as_cuda_array, to_device
from .runtime.memory import simulated_view

__all__ = ["compare", "compare_runs", "run_on_gpu", "run_in_simulator", "Run", "Report",
           "ArrayComparison", "MismatchError", "TOLERANCES"]

# (rtol, atol) per dtype, for |gpu - sim| <= atol + rtol * |sim|: torch.testing's defaults,
# which allow for what legitimately differs (fused multiply-adds, the order of a reduction,
# the device's math functions). Integers and booleans compare exactly; so do the 8-bit floats,
# whose conversions the simulator makes bit for bit as the GPU does.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


class MismatchError(ThreadtileError, AssertionError):
    """``compare(..., raise_on_mismatch=True)`` found a difference; ``report`` is the
    :class:`Report`."""

    def __init__(self, report: Report):
        super().__init__(str(report))
        self.report = report


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------

@dataclass
class Run:
    """One side of a comparison: ``label`` ("GPU", "simulator"), ``results`` (per positional
    argument, its array on the host after the launch, or None for what is not an array),
    ``dtypes`` (the arrays' dtype names: ``"bfloat16"`` though it reads back as float32),
    ``error`` (a ``KernelRuntimeError`` the run raised instead of finishing) and, for a
    simulator run, ``writer(position, index)``: who wrote an element."""

    label: str
    results: list
    dtypes: list
    error: BaseException | None = None
    records: list = field(default_factory=list)
    runtime_index: list = field(default_factory=list)

    @property
    def writers_known(self) -> bool:
        """Whether this run kept who wrote each element: a simulator run whose launches all
        ran race checks."""
        return bool(self.records) and all(r.race_checked for r in self.records)

    def writer(self, position: int, index: tuple) -> sim_record.Writer | None:
        """The simulator's last writer of element ``index`` of positional argument
        ``position`` (over every launch the run made, the latest first), or None."""
        if position >= len(self.runtime_index) or self.runtime_index[position] is None:
            return None
        arg = self.runtime_index[position]
        for rec in reversed(self.records):
            w = rec.writer(arg, index)
            if w is not None:
                return w
        return None


def _dtype_name(a) -> str:
    return str(a.dtype).removeprefix("torch.")


def _is_array(a) -> bool:
    return isinstance(a, np.ndarray) or _is_torch(a) or hasattr(a, "__cuda_array_interface__")


def _is_torch(a) -> bool:
    return (type(a).__module__ or "").startswith("torch") and hasattr(a, "detach")


def _readable(a: np.ndarray) -> np.ndarray:
    """Values NumPy can subtract: the narrow floats (ml_dtypes' bfloat16, float8) as float32.
    Records stay records (they compare field by field, exactly)."""
    if a.dtype.kind not in "biufc" and a.dtype.names is None:
        return a.astype(np.float32)
    return a


def _to_host(a) -> np.ndarray:
    """An array argument's values on the host, after its launch has finished."""
    if isinstance(a, np.ndarray):
        return _readable(a.copy())
    if _is_torch(a):
        t = a.detach().cpu()
        if not t.dtype.is_complex and t.dtype.itemsize < 4 and t.dtype.is_floating_point:
            t = t.float()  # bfloat16 and the 8-bit floats have no NumPy dtype
        return t.numpy().copy()
    if hasattr(a, "get") and (type(a).__module__ or "").startswith("cupy"):
        return _readable(a.get())
    return _readable(_device_to_host(a))


def _gpu_copy(a):
    """A copy of argument ``a`` in GPU memory (a tuple's arrays each copied)."""
    if isinstance(a, tuple):
        return tuple(_gpu_copy(x) for x in a)
    if _is_torch(a):
        t = a.detach()
        return t.clone() if t.is_cuda else t.to("cuda")
    if isinstance(a, np.ndarray):
        return to_device(np.copy(a))
    if hasattr(a, "copy") and (type(a).__module__ or "").startswith("cupy"):
        return a.copy()
    if hasattr(a, "__cuda_array_interface__"):
        return to_device(_device_to_host(a))
    return a


def _device_to_host(a) -> np.ndarray:
    """A host copy of device memory: the simulator's (a device array made under
    ``simulate()``), or the GPU's."""
    view = simulated_view(a)
    if view is not None:
        return np.array(view, copy=True)
    with _on_the_gpu():
        return as_cuda_array(a).copy_to_host()


def _host_copy(a):
    """A copy of argument ``a`` the simulator runs on in place: a CPU torch tensor for a torch
    tensor (its dtype kept), else a NumPy array."""
    if isinstance(a, tuple):
        return tuple(_host_copy(x) for x in a)
    if _is_torch(a):
        return a.detach().cpu().clone()
    if isinstance(a, np.ndarray):
        return np.copy(a)
    if hasattr(a, "get") and (type(a).__module__ or "").startswith("cupy"):
        return a.get()
    if hasattr(a, "__cuda_array_interface__"):
        return _device_to_host(a)
    return a


@contextlib.contextmanager
def _on_the_gpu():
    """Launches go to the GPU inside, whatever ``simulate()`` or ``THREADTILE_SIMULATE`` say
    outside (both restored after)."""
    saved, env = mode.STATE.active, os.environ.pop(mode.ENV, None)
    mode.STATE.active = False
    try:
        yield
    finally:
        mode.STATE.active = saved
        if env is not None:
            os.environ[mode.ENV] = env


def _runtime_index(kernel: Kernel | None, n: int) -> list:
    """Per positional argument, its index among the launch's runtime arguments (None for a
    ``Constant`` one): what the simulator's record is indexed by."""
    if kernel is None:
        return list(range(n))
    out, k = [], 0
    for i in range(n):
        name = kernel.param_names[i] if i < len(kernel.param_names) else None
        if name is not None and name in kernel.constants:
            out.append(None)
        else:
            out.append(k)
            k += 1
    return out


def run_on_gpu(go: Callable, args: Sequence, label: str = "GPU") -> Run:
    """Launch ``go(*copies)`` on the GPU, the copies made from ``args`` in GPU memory, and read
    every array back. Raises RuntimeError where no GPU is available."""
    _need_gpu()
    error = None
    # the copies too are made off the simulator: to_device must give GPU memory
    with _on_the_gpu(), warnings.catch_warnings():
        warnings.simplefilter("ignore", HostArrayWarning)
        copies = [_gpu_copy(a) for a in args]
        try:
            go(*copies)
        except KernelRuntimeError as e:  # jit(debug=True): the kernel raised
            error = e
        devices.synchronize()
        results = [_to_host(c) if _is_array(c) else None for c in copies]
    return Run(label, results, [_dtype_name(c) if _is_array(c) else None for c in copies], error)


def run_in_simulator(go: Callable, args: Sequence, checks=True, label: str = "simulator",
                     kernel: Kernel | None = None) -> Run:
    """Run ``go(*copies)`` in the simulator (lockstep mode, ``checks`` as ``simulate()``'s; the
    writers of elements are known where race checks run), the copies made from ``args`` on the
    host. ``kernel``: the kernel ``go`` launches, whose ``Constant`` parameters are not among
    the runtime arguments the simulator's record counts."""
    copies = [_host_copy(a) for a in args]
    error = None
    with sim_record.recording() as records, simulate(checks=checks, mode="lockstep"):
        try:
            go(*copies)
        except KernelRuntimeError as e:
            error = e
    results = [_to_host(c) if _is_array(c) else None for c in copies]
    return Run(label, results, [_dtype_name(c) if _is_array(c) else None for c in copies],
               error, records, _runtime_index(kernel, len(args)))


def _need_gpu() -> None:
    if not driver.gpu_available():
        raise RuntimeError(
            "threadtile.compare runs the launch on a GPU and in the simulator, and no CUDA GPU "
            "is available here (threadtile.gpu_available() is False). Without a GPU, check the "
            "kernel in the simulator alone: run the launch under threadtile.simulate()")


# ---------------------------------------------------------------------------------------------
# Comparing two runs
# ---------------------------------------------------------------------------------------------

@dataclass
class ArrayComparison:
    """One array argument compared: ``name``, ``dtype`` (its name), ``shape``; ``mismatches``
    (elements outside the tolerance); the first of them (C order): ``index``, ``device_value``,
    ``reference_value``, ``writer`` (the simulator's thread that wrote it, or None) and
    ``written`` (that writer in words, "no thread wrote it", or "" where writers are unknown);
    ``tolerance`` (rtol, atol), (0, 0) meaning exact; ``note`` (shapes that differ)."""

    name: str
    dtype: str
    shape: tuple
    mismatches: int = 0
    index: tuple | None = None
    device_value: object = None
    reference_value: object = None
    writer: sim_record.Writer | None = None
    written: str = ""
    tolerance: tuple = (0.0, 0.0)
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and not self.note

    def line(self, device: str, reference: str) -> str:
        head = f"{self.name}: {self.dtype} {self.shape}"
        if self.note:
            return f"{head}: {self.note}"
        if self.ok:
            return f"{head}: equal"
        n = int(np.prod(self.shape)) if self.shape else 1
        rtol, atol = self.tolerance
        tol = "exactly" if (rtol, atol) == (0, 0) else f"rtol {rtol:g}, atol {atol:g}"
        idx = ", ".join(str(i) for i in self.index)
        text = (f"{head}: {self.mismatches} of {n} elements differ ({tol}); first at "
                f"{self.name}[{idx}]: {device} {self.device_value!s}, {reference} "
                f"{self.reference_value!s}")
        if self.written:
            text += f"; {self.written}"
        return text


@dataclass
class Report:
    """What :func:`compare` found: ``arrays`` (an :class:`ArrayComparison` per array
    argument), ``errors`` (run label -> the ``KernelRuntimeError`` that stopped it), the two
    runs' labels and ``what`` was launched. ``ok``: every array agreed and neither run
    failed. ``str()`` is a readable summary; :meth:`check` raises :class:`MismatchError`."""

    what: str
    device: str
    reference: str
    arrays: list = field(default_factory=list)
    errors: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors and all(a.ok for a in self.arrays)

    @property
    def differences(self) -> list:
        """The arrays that differ."""
        return [a for a in self.arrays if not a.ok]

    def __getitem__(self, name: str) -> ArrayComparison:
        for a in self.arrays:
            if a.name == name:
                return a
        raise KeyError(f"no array argument {name!r} (the arrays: "
                       f"{', '.join(a.name for a in self.arrays)})")

    def check(self) -> Report:
        """Raise :class:`MismatchError` unless :attr:`ok`; return the report."""
        if not self.ok:
            raise MismatchError(self)
        return self

    def __str__(self) -> str:
        bad = self.differences
        if self.errors:
            verdict = "a run failed"
        elif bad:
            verdict = f"{len(bad)} of {len(self.arrays)} arrays differ"
        else:
            verdict = f"{self.device} and {self.reference} agree"
        lines = [f"threadtile.compare: {self.what}: {verdict}"]
        for label, e in self.errors.items():
            first, *rest = str(e).splitlines() or [""]
            lines.append(f"  the {label} run raised {type(e).__name__}: {first}")
            lines += ["    " + r for r in rest]
        lines += ["  " + a.line(self.device, self.reference) for a in self.arrays]
        return "\n".join(lines)

    __repr__ = __str__


def _tolerance(dtype: str, rtol: float | None, atol: float | None) -> tuple[float, float]:
    base = TOLERANCES.get(dtype)
    if base is None:  # integers, booleans, the 8-bit floats: exactly
        return (0.0, 0.0)
    return (base[0] if rtol is None else rtol, base[1] if atol is None else atol)


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Per element: ``a`` (the device's) agrees with ``b`` (the reference's); NaN agrees with
    NaN."""
    eq = a == b
    if a.dtype.kind in "fc":
        eq |= np.isnan(a) & np.isnan(b)
        if rtol or atol:
            with np.errstate(all="ignore"):
                eq |= np.abs(a - b) <= atol + rtol * np.abs(b)
    return eq




def compare_arrays(name: str, dtype: str, device: np.ndarray, reference: np.ndarray,
                   rtol: float | None = None, atol: float | None = None,
                   writer: Callable[[tuple], object] | None = None,
                   reference_label: str = "simulator") -> ArrayComparison:
    """One array of two runs compared (``writer(index)``: who wrote an element in the
    reference run, None where that run does not know)."""
    tol = _tolerance(dtype, rtol, atol)
    out = ArrayComparison(name, dtype, tuple(device.shape), tolerance=tol)
    if device.shape != reference.shape:
        out.note = f"shapes differ: {device.shape} and {reference.shape}"
        return out
    bad = ~_close(device, reference, *tol)
    out.mismatches = int(bad.sum())
    if out.mismatches:
        index = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        out.index = index
        out.device_value = device[index]
        out.reference_value = reference[index]
        if writer is not None:
            w = out.writer = writer(index)
            out.written = (f"written in the {reference_label} by {w}" if w is not None else
                           f"no thread wrote it in the {reference_label}")
    return out


def compare_runs(device: Run, reference: Run, names: Sequence[str] | None = None,
                 rtol: float | None = None, atol: float | None = None,
                 what: str = "launch") -> Report:
    """Compare the arrays of two runs of one launch (``device`` against ``reference``, whose
    writers name who wrote a differing element); ``names``: the positional arguments' names.
    ``rtol``/``atol`` replace :data:`TOLERANCES`' for floating-point arrays."""
    report = Report(what, device.label, reference.label)
    for run in (device, reference):
        if run.error is not None:
            report.errors[run.label] = run.error
    n = len(device.results)
    for pos in range(n):
        d, r = device.results[pos], reference.results[pos]
        if d is None or r is None:
            continue
        name = names[pos] if names is not None and pos < len(names) else f"argument {pos}"
        report.arrays.append(compare_arrays(
            name, reference.dtypes[pos] or str(r.dtype), d, r, rtol, atol,
            (lambda index, pos=pos: reference.writer(pos, index))
            if reference.writers_known else None, reference.label))
    return report


# ---------------------------------------------------------------------------------------------
# compare()
# ---------------------------------------------------------------------------------------------

def _dims(t) -> str:
    t = tuple(t) + (1,) * (3 - len(tuple(t)))
    return str(t[0]) if t[1:] == (1, 1) else str(t)


def compare(launch, *args, rtol: float | None = None, atol: float | None = None,
            checks=True, raise_on_mismatch: bool = False) -> Report:
    """Run one launch on the GPU and in the simulator, each on its own copies of ``args``,
    and compare every array argument afterwards.

    ``launch`` is a launch configuration, ``kernel[grid, block]`` (with a stream and dynamic
    shared memory if need be) or a tile kernel's ``kernel[grid]``, followed by the kernel's
    arguments; or cuTile's form, ``compare(stream, grid, kernel, args)``. Arrays may be torch
    tensors (CPU ones are copied to the GPU for its run), CuPy arrays, threadtile device arrays
    or NumPy arrays; the ones given are not modified.

    Floating-point arrays agree within :data:`TOLERANCES` of their dtype (``rtol``/``atol``
    replace them), integers exactly, NaN with NaN. ``checks``: the simulator's
    (``simulate(checks=...)``); with race checks on (the default), a differing element names
    the simulated thread that wrote it. An error the simulator raises (a race, an
    out-of-bounds index) is in the report, not raised. Returns a :class:`Report`; with
    ``raise_on_mismatch`` a difference raises :class:`MismatchError` instead.

    Needs a GPU: without one it raises RuntimeError (run the launch under ``simulate()``).
    """
    if not isinstance(launch, Launch) and len(args) == 3 and isinstance(args[1], Kernel):
        stream, grid, kernel, kargs = launch, args[0], args[1], args[2]
        if not isinstance(kargs, (tuple, list)):
            raise TypeError("compare(stream, grid, kernel, args): args must be a tuple")
        from .tile import launch as ct_launch  # noqa: PLC0415  (tile imports jit)

        def go(*a):
            ct_launch(stream, grid, kernel, a)

        args = tuple(kargs)
        dims = grid if isinstance(grid, (tuple, list)) else (grid,)
        what = f"{kernel.__name__}, grid {_dims(dims)}"
    elif isinstance(launch, Launch):
        go, kernel = launch, launch.kernel
        what = f"{kernel.__name__}, grid {_dims(launch.grid)}"
        if not kernel.tile:
            what += f", block {_dims(launch.block)}"
    else:
        raise TypeError(
            "compare() takes a launch and its arguments, compare(kernel[grid, block], *args) "
            "(a tile kernel: kernel[grid]), or cuTile's launch form, compare(stream, grid, "
            f"kernel, args); got {type(launch).__name__} first")
    _need_gpu()
    device = run_on_gpu(go, args)
    reference = run_in_simulator(go, args, checks=checks, kernel=kernel)
    names = [kernel.param_names[i] if i < len(kernel.param_names) else f"argument {i}"
             for i in range(len(args))]
    report = compare_runs(device, reference, names, rtol, atol, what)
    return report.check() if raise_on_mismatch else report
