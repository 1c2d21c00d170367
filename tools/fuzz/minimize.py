"""Shrink a failing program by delta debugging, and write it as a regression test.

``minimize(prog, failing)`` removes nodes while ``failing(candidate)`` stays true: first
halves, quarters... of the top-level statements (ddmin's chunks), then every node of the tree
one at a time, innermost last, then ``else`` branches, until a whole pass removes nothing.
Every candidate is well formed: the generators declare all variables in the prelude, so any
node can go (gen.py, tile_prog.py). ``failing`` is usually ``same_failure(prog)``: the
candidate fails the way the original did (the same ``Outcome.signature()``). Thread programs
(gen.Program) and tile programs (tile_prog.TileProgram) both shrink so; each kind runs on its
own targets (``default_targets``).
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

from .gen import Node, Program
from .run import differential

ROOT = Path(__file__).resolve().parents[2]
REGRESSIONS = ROOT / "tests" / "fuzz_regressions"


def _is_tile(prog) -> bool:
    return getattr(prog, "kind", "thread") == "tile"


def default_targets(prog) -> tuple[str, ...]:
    """The simulator's two modes for a thread program; the simulator and the float64
    reference for a tile program."""
    return ("lockstep", "ref") if _is_tile(prog) else ("lockstep", "python")


def run_targets(prog, targets=None):
    """``prog`` run on ``targets`` by the runner of its kind: an ``Outcome``."""
    targets = targets or default_targets(prog)
    if _is_tile(prog):
        from .tile_run import differential as tile_differential  # noqa: PLC0415

        return tile_differential(prog, targets=targets)
    return differential(prog, targets=targets)


def same_failure(prog: Program, targets=None) -> Callable[[Program], bool]:
    """A predicate: a candidate fails on ``targets`` (``default_targets`` when None) as
    ``prog`` does."""
    want = run_targets(prog, targets).signature()

    def failing(cand: Program) -> bool:
        try:
            got = run_targets(cand, targets)
        except Exception:  # noqa: BLE001  (a candidate that does not even load is no witness)
            return False
        return not got.ok and got.signature() == want

    return failing


def _with_body(prog: Program, body: list[Node]) -> Program:
    return dataclasses.replace(prog, body=body)


def _lists(nodes: list[Node]):
    """Every statement list of the tree (the top level first), to remove from."""
    yield nodes
    for n in nodes:
        yield from _lists(n.body)
        yield from _lists(n.orelse)


def minimize(prog: Program, failing: Callable[[Program], bool], max_tests: int = 400
             ) -> Program:
    """The smallest program found that ``failing`` still accepts (``prog`` must fail)."""
    best = copy.deepcopy(prog)
    tests = 0

    def attempt(body: list[Node]) -> bool:
        nonlocal best, tests
        if tests >= max_tests:
            return False
        tests += 1
        cand = _with_body(best, body)
        if failing(cand):
            best = cand
            return True
        return False

    # ddmin over the top level: remove chunks, halving their size
    chunk = max(1, len(best.body) // 2)
    while chunk >= 1 and best.body:
        i = 0
        while i < len(best.body):
            if not attempt(best.body[:i] + best.body[i + chunk:]):
                i += chunk
        if chunk == 1:
            break
        chunk //= 2
    # then single nodes anywhere, and else branches, until nothing more goes
    changed = True
    while changed and tests < max_tests:
        changed = False
        trial = copy.deepcopy(best)
        for lst in list(_lists(trial.body)):
            i = 0
            while i < len(lst):
                node = lst.pop(i)
                if attempt(copy.deepcopy(trial.body)):
                    changed = True
                    continue
                lst.insert(i, node)
                if node.orelse:
                    saved, node.orelse = node.orelse, []
                    if attempt(copy.deepcopy(trial.body)):
                        changed = True
                    else:
                        node.orelse = saved
                i += 1
            if changed:
                break
    if _is_tile(best):
        # then the tile variables no statement uses (their load and store), and the arrays
        # nothing touches
        for v in list(best.tvars):
            cand = best.without_var(v.name)
            if cand is not None and tests < max_tests:
                tests += 1
                if failing(cand):
                    best = cand
        cand = best.pruned()
        if len(cand.arrays) < len(best.arrays) and failing(cand):
            best = cand
    return best


def regression_source(prog: Program, reason: str, xfail: bool = True,
                      targets: tuple[str, ...] | None = None) -> str:
    """A test module holding ``prog``'s kernel and a test that runs it on ``targets`` (default:
    both simulator modes; one with ``gpu`` is marked ``gpu``: skipped without one). A tile
    program: tile_run.regression_source."""
    if _is_tile(prog):
        from .tile_run import regression_source as tile_source  # noqa: PLC0415

        return tile_source(prog, reason, xfail, targets or default_targets(prog))
    targets = tuple(targets or ("lockstep", "python"))
    mark = f"@pytest.mark.xfail(reason={reason!r}, strict=True)\n" if xfail else ""
    if "gpu" in targets:
        mark = ("@pytest.mark.gpu\n@pytest.mark.skipif(not __import__('conftest').HAVE_GPU, "
                "reason='no GPU')\n" + mark)
    name = "_and_".join("the_gpu" if t == "gpu" else f"{t}_mode" for t in targets)
    test = f'''

# ---- the regression: found by tools/fuzz (seed {prog.seed}), minimized -----------------------

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools.fuzz.gen import Program  # noqa: E402
from tools.fuzz.run import differential  # noqa: E402

SEED, DTYPES, BLOCK, GRID = {prog.seed}, {prog.dtypes!r}, {prog.block}, {prog.grid}


{mark}def test_{name}_agree():
    shape = Program(SEED, DTYPES, BLOCK, GRID, [])  # the inputs come from the seed
    out = differential(Path(__file__).read_text(), shape.inputs(), shape.params(), GRID, BLOCK,
                       targets={tuple(targets)!r})
    assert out.ok, out.mismatches or out.errors
'''
    header = '# ruff: noqa\n'  # generated text: long lines, imports below the kernel
    header = header + f'"""Fuzzer regression, seed {prog.seed}: {reason}"""\n\n'
    return header + prog.source() + test


def write_regression(prog: Program, reason: str, xfail: bool = True,
                     directory: Path = REGRESSIONS, targets=None) -> Path:
    """Write ``prog`` as ``test_seed<seed>_<reason>.py`` (``test_tile_seed...`` for a tile
    program) under ``directory``; its path."""
    directory.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"\W+", "_", reason.lower()).strip("_")[:40]
    kind = "tile_" if _is_tile(prog) else ""
    path = directory / f"test_{kind}seed{prog.seed}_{slug}.py"
    path.write_text(regression_source(prog, reason, xfail, targets))
    return path
