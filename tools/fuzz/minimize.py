"""Shrink a failing program by delta debugging, and write it as a regression test.

``minimize(prog, failing)`` removes nodes while ``failing(candidate)`` stays true: first
halves, quarters... of the top-level statements (ddmin's chunks), then every node of the tree
one at a time, innermost last, then ``else`` branches, until a whole pass removes nothing.
Every candidate is well formed: the generator declares all variables in the prelude, so any
node can go (gen.py). ``failing`` is usually ``same_failure(prog)``: the candidate fails the
way the original did (the same ``Outcome.signature()``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path

from .gen import Node, Program
from .run import differential

ROOT = Path(__file__).resolve().parents[2]
REGRESSIONS = ROOT / "tests" / "fuzz_regressions"


def same_failure(prog: Program, targets=("lockstep", "python")) -> Callable[[Program], bool]:
    """A predicate: a candidate fails on ``targets`` as ``prog`` does."""
    want = differential(prog, targets=targets).signature()

    def failing(cand: Program) -> bool:
        try:
            got = differential(cand, targets=targets)
        except Exception:  # noqa: BLE001  (a candidate that does not even load is no witness)
            return False
        return not got.ok and got.signature() == want

    return failing


def _with_body(prog: Program, body: list[Node]) -> Program:
    return Program(prog.seed, prog.dtypes, prog.block, prog.grid, body)


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
    return best


def regression_source(prog: Program, reason: str, xfail: bool = True,
                      targets: tuple[str, ...] = ("lockstep", "python")) -> str:
    """A test module holding ``prog``'s kernel and a test that runs it on ``targets`` (one
    with ``gpu`` is marked ``gpu``: skipped without one)."""
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
                     directory: Path = REGRESSIONS,
                     targets: tuple[str, ...] = ("lockstep", "python")) -> Path:
    """Write ``prog`` as ``test_seed<seed>.py`` under ``directory``; its path."""
    directory.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"\W+", "_", reason.lower()).strip("_")[:40]
    path = directory / f"test_seed{prog.seed}_{slug}.py"
    path.write_text(regression_source(prog, reason, xfail, targets))
    return path
