"""Run a generated tile program on several targets and compare what they wrote.

Targets: ``ref`` (the float64 reference, tile_prog.TileProgram.reference), ``lockstep`` (the
simulator) and ``gpu`` (a real launch; only on a machine with a GPU). Every comparison reads
the reference's error bounds (tile_ref.py), so ``ref`` is always computed:

- elements the reference marks undetermined (``ok`` false) are not compared;
- integers and bools must be equal;
- a float whose reference is NaN or an infinity must be the same NaN or infinity;
- any other float must lie within ``REF_SLACK * err + floor`` of the reference (``err`` the
  element's running error bound, ``floor`` the smallest subnormal of its dtype), and two
  targets within ``2 * REF_SLACK * err + floor`` of each other (each is within the bound of
  the exact value).
"""

from __future__ import annotations

import pprint
import warnings

import numpy as np

from . import tile_ref as ref
from .run import Outcome, load
from .tile_prog import TileProgram
from .tile_ref import R

REF_SLACK = 2.0


def launch(kernel, prog: TileProgram, arrays: dict, target: str) -> dict:
    """``kernel`` launched on copies of ``arrays`` on ``target``; the arrays it left."""
    args = {k: v.copy() for k, v in arrays.items()}
    params = prog.params()
    grid = (prog.grid[0], prog.grid[1], 1)
    if target == "gpu":
        import threadtile as tt  # noqa: PLC0415
        import threadtile.tile as ct  # noqa: PLC0415

        dev = {k: tt.to_device(v) for k, v in args.items()}
        ct.launch(None, grid, kernel, tuple(dev[p] for p in params))
        tt.synchronize()
        return {k: v.copy_to_host() for k, v in dev.items()}
    from threadtile.backends.sim import simulate  # noqa: PLC0415

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        with simulate():
            kernel[grid](*[args[p] for p in params])
    return args


def _as_f64(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iub":
        return a
    return a.astype(np.float32).astype(np.float64) if a.dtype.name == "bfloat16" \
        else a.astype(np.float64)


def compare(name: str, r: R, got: np.ndarray, other: np.ndarray | None = None) -> str | None:
    """None when ``got`` agrees with the reference ``r`` (``other`` given: when ``got`` and
    ``other`` agree within the reference's bounds), else what differs."""
    g = _as_f64(got)
    o = r.val if other is None else _as_f64(other)
    scale = REF_SLACK if other is None else 2 * REF_SLACK
    with np.errstate(all="ignore"):
        if not ref.is_float(r.dtype):
            bad = r.ok & (g != o)
        else:
            floor = ref.TINY[r.dtype]
            fin = np.isfinite(r.val)
            same_special = (np.isnan(g) & np.isnan(o)) | (g == o)
            close = np.isfinite(g) & np.isfinite(o) & (np.abs(g - o) <= scale * r.err + floor)
            bad = r.ok & np.where(fin, ~close, ~same_special)
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    want = f"{o[idx]!r}" + (f" +- {scale * r.err[idx]:.3g}" if ref.is_float(r.dtype) else "")
    return f"{name}{list(idx)}: {g[idx]!r} vs {want} ({int(bad.sum())} elements differ)"


def differential(prog: TileProgram, targets=("lockstep", "ref")) -> Outcome:
    """Run ``prog`` on each of ``targets`` (``ref``, ``lockstep``, ``gpu``) and compare every
    array: each target against the reference when ``ref`` is among them, and the first
    non-reference target against the others."""
    arrays = prog.inputs()
    out = Outcome()
    try:
        expect = prog.reference(arrays)
    except Exception as e:  # noqa: BLE001  (a reference that fails is the generator's bug)
        out.errors["ref"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        return out
    kernel = None
    results = {}
    for t in targets:
        if t == "ref":
            continue
        try:
            kernel = kernel or load(prog.source()).kernel
            results[t] = launch(kernel, prog, arrays, t)
        except Exception as e:  # noqa: BLE001  (a target failing is a finding, recorded)
            out.errors[t] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    if out.errors:
        return out
    real = [t for t in targets if t != "ref"]
    for name in expect:
        if "ref" in targets:
            for t in real:
                msg = compare(name, expect[name], results[t][name])
                if msg:
                    out.mismatches.append(f"{t} vs ref: {msg}")
        for t in real[1:]:
            msg = compare(name, expect[name], results[real[0]][name], results[t][name])
            if msg:
                out.mismatches.append(f"{real[0]} vs {t}: {msg}")
    return out


def compile_cubin(prog: TileProgram, arch: str) -> bytes:
    """The cubin of ``prog``'s kernel for ``arch`` (NVRTC; no GPU needed)."""
    kernel = load(prog.source()).kernel
    arrays = prog.inputs()
    return bytes(kernel.compile(*[arrays[p] for p in prog.params()], arch=arch).cubin)


def regression_source(prog: TileProgram, reason: str, xfail: bool = True,
                      targets=("lockstep", "ref")) -> str:
    """A test module: ``prog``'s kernel (to read), the program itself (``PROGRAM``, from which
    the test rebuilds the kernel, its inputs and its reference) and a test running it on
    ``targets`` (marked ``gpu`` when the GPU is among them)."""
    marks = ""
    if xfail:
        marks += f"@pytest.mark.xfail(reason={reason!r}, strict=True)\n"
    if "gpu" in targets:
        marks += ("@pytest.mark.gpu\n@pytest.mark.skipif(not gpu_available(), "
                  "reason='no GPU')\n")
    header = (f'# ruff: noqa\n"""Fuzzer regression (tile kernels), seed {prog.seed}: '
              f'{reason}"""\n\n')
    test = f'''

# ---- the regression: found by tools/fuzz/tile_gen.py (seed {prog.seed}), minimized ------------

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from threadtile.runtime.driver import gpu_available
from tools.fuzz.tile_prog import ArraySpec, E, TileProgram, TNode, TVar
from tools.fuzz.tile_run import differential

TARGETS = {tuple(targets)!r}
PROGRAM = {pprint.pformat(prog, width=100, compact=True)}


def test_program_is_the_kernel_above():
    assert PROGRAM.source() in Path(__file__).read_text()


{marks}def test_targets_agree():
    out = differential(PROGRAM, targets=TARGETS)
    assert out.ok, out.mismatches or out.errors
'''
    return header + prog.source() + test
