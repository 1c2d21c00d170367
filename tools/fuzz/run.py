"""Run a generated program on several targets and compare what they wrote.

Targets: ``lockstep`` (the simulator's default mode), ``python`` (``simulate(mode="python")``:
the kernel's own Python, once per thread) and ``gpu`` (a real launch on device arrays; only on
a machine with a GPU).

Comparison: integer arrays bit for bit; float arrays element by element, equal when both are
NaN, or both the same infinity, or within ``ulps`` units in the last place of the larger
magnitude. Between the two simulator modes the bound is ``SIM_ULPS`` = 2: ``+ - * /`` and
``sqrt`` are IEEE correctly rounded in both, so the only differences come from math functions
(``math.sin`` of a float32 is NumPy's float32 ``sin`` in lockstep mode and CPython's float64
``sin`` rounded to float32 in python mode, each within about 1 ulp of the true value), whose
results the generator sends only to sink variables. Against the GPU the bound is
``GPU_ULPS`` = 64 and a difference below ``GPU_ABS`` (1e-5 of the larger input magnitude
scale, for results near zero) also passes: NVRTC contracts ``a * b + c`` into one FMA by
default and CUDA's ``sinf``/``expf`` are within 1-2 ulp, and a contracted FMA inside a chain
of operations can move a result by more than a few ulps after cancellation.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .gen import Program

SIM_ULPS = 2
GPU_ULPS = 64
GPU_ABS = 1e-5
_LOADED: dict[str, object] = {}
_TMP = Path(tempfile.mkdtemp(prefix="threadtile_fuzz_"))


def _name(source: str) -> str:
    return f"fuzz_{abs(hash(source)) & 0xFFFFFFFFFFFF:012x}"


def load(source: str, name: str | None = None):
    """The module of ``source``, written to a temp file and imported (threadtile reads a
    kernel's source from its file). The same text gives the same module."""
    name = name or _name(source)
    if name in _LOADED:
        return _LOADED[name]
    path = _TMP / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _LOADED[name] = mod
    return mod


def launch(kernel, arrays: dict, params: list[str], grid: int, block: int, target: str) -> dict:
    """Launch ``kernel`` on copies of ``arrays`` on ``target``; the arrays it left."""
    args = {k: v.copy() for k, v in arrays.items()}
    if target == "gpu":
        import threadtile as cuda  # noqa: PLC0415

        dev = {k: cuda.to_device(v) for k, v in args.items()}
        kernel[grid, block](*[dev[p] for p in params])
        cuda.synchronize()
        return {k: v.copy_to_host() for k, v in dev.items()}
    from threadtile.backends.sim import simulate  # noqa: PLC0415

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # NumPy's overflow warnings: wrapping is the point
        with simulate(mode=target):
            kernel[grid, block](*[args[p] for p in params])
    return args


def ulp_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance of ``a`` from ``b`` in units in the last place of the larger magnitude."""
    big = np.maximum(np.abs(a), np.abs(b)).astype(a.dtype)
    with np.errstate(all="ignore"):
        ulp = np.spacing(big).astype(np.float64)
        return np.abs(a.astype(np.float64) - b.astype(np.float64)) / ulp


def compare(name: str, a: np.ndarray, b: np.ndarray, ulps: float, abs_tol: float = 0.0
            ) -> str | None:
    """None when ``a`` and ``b`` agree (see the module's docstring), else what differs."""
    if a.dtype.kind != "f":
        bad = a != b
    else:
        with np.errstate(all="ignore"):
            both_nan = np.isnan(a) & np.isnan(b)
            same = (a == b) | both_nan
            close = (ulp_diff(a, b) <= ulps) | (np.abs(a.astype(np.float64) - b) <= abs_tol)
            bad = ~(same | (np.isfinite(a) & np.isfinite(b) & close))
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{name}{list(idx)}: {a[idx]!r} != {b[idx]!r} ({int(bad.sum())} elements differ)"


@dataclass
class Outcome:
    """What a differential run found: ``mismatches`` (empty when the targets agree),
    ``errors`` (target -> the exception's type and message), ``contracted`` (float
    differences against the GPU that vanish when NVRTC does not contract ``a * b + c`` into
    FMAs: explained, not failures)."""

    mismatches: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    contracted: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.errors

    def signature(self) -> str:
        """A short key of the failure, kept by the minimizer while it shrinks a program."""
        if self.errors:
            return "error " + ",".join(f"{t}:{e.split(':')[0]}" for t, e in
                                       sorted(self.errors.items()))
        return "mismatch " + ",".join(sorted({m.split("[")[0] for m in self.mismatches}))


def differential(prog: Program | str, arrays: dict | None = None, params: list[str] | None = None,
                 grid: int = 1, block: int = 32, targets=("lockstep", "python")) -> Outcome:
    """Run ``prog`` (a ``Program``, or a kernel module's source with ``arrays``, ``params``,
    ``grid`` and ``block``) on each of ``targets`` and compare every array with the first's."""
    if isinstance(prog, Program):
        source, arrays = prog.source(), prog.inputs()
        params, grid, block = prog.params(), prog.grid, prog.block
    else:
        source = prog
    kernel = load(source).kernel
    out = Outcome()
    results = {}
    for t in targets:
        try:
            results[t] = launch(kernel, arrays, params, grid, block, t)
        except Exception as e:  # noqa: BLE001  (a target failing is a finding, recorded)
            out.errors[t] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    if out.errors:
        return out
    out.mismatches = _compare_all(results, targets)
    if out.mismatches and "gpu" in targets and any("float" in k for k in arrays):
        # the same program built without FMA contraction (--fmad=false) tells a contracted
        # a*b+c (one rounding where Python rounds twice; a branch on the result may then go
        # the other way, and integers follow) from a real difference
        plain = load(source, name=f"{_name(source)}_nofma").kernel
        plain.options = (*plain.options, "--fmad=false")
        try:
            results["gpu"] = launch(plain, arrays, params, grid, block, "gpu")
        except Exception as e:  # noqa: BLE001
            out.errors["gpu --fmad=false"] = f"{type(e).__name__}: {e}"
            return out
        if not _compare_all(results, targets):
            out.contracted, out.mismatches = out.mismatches, []
    return out


def _compare_all(results: dict, targets) -> list[str]:
    ref = results[targets[0]]
    found = []
    for t in targets[1:]:
        gpu = "gpu" in (t, targets[0])
        for k in ref:
            msg = compare(k, ref[k], results[t][k], GPU_ULPS if gpu else SIM_ULPS,
                          GPU_ABS if gpu else 0.0)
            if msg:
                found.append(f"{targets[0]} vs {t}: {msg}")
    return found
