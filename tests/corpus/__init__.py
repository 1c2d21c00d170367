"""The bug corpus: small kernels with one bug each, the launch that shows it, and (where there is
one) the correct twin.

Every module registers its cases with :func:`bug`. A case names its bug class (``CLASSES``),
its kernel, the launch (grid, block, dynamic shared bytes; ``block=None`` for a tile kernel,
whose block is its own), a function making fresh inputs (NumPy arrays and numbers), the
:class:`threadtile.errors.KernelRuntimeError` subclass the simulator must raise and, where the
class has one, the block and thread the error must name. The line of the bug is marked in the
source with ``# BUG: <case name>`` (the line the error must name) and, for a race, ``# PAIR:
<case name>`` on the other access (the line the error's ``other`` must name), so the markers
move with the code.

``fixed`` is the correct twin: the same launch and inputs (or ``fixed_args``), and no error.
``xfail`` says why the simulator misses a case, where it does (tests/sim/test_bug_corpus.py
marks those cases as expected failures; bench/sanitizer_vs_simulator.py reports them as
misses). ``clean.py`` adds correct kernels that are not twins (examples/ and bench/), for the
false-alarm pass.

Used by tests/sim/test_bug_corpus.py (the simulator) and bench/sanitizer_vs_simulator.py (the
simulator beside compute-sanitizer on the GPU; bench/_sanitizer_child.py launches one case).
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: bug class -> what it is (the table's rows, in this order)
CLASSES = {
    "race-shared": "shared-memory race between threads of a block (missing or misplaced "
                   "syncthreads)",
    "race-global-block": "global-memory race between threads of one block",
    "race-global-grid": "global-memory race between blocks of a launch",
    "race-warp": "race across warps, or inside a warp without syncwarp",
    "oob-global": "global index out of bounds: negative, off-by-one, wrong axis or stride",
    "oob-shared-local": "shared or local array index out of bounds",
    "oob-tile": "tile load or store past the array's edge (tile kernels)",
    "uninit-shared": "read of shared memory no thread wrote",
    "barrier-divergence": "syncthreads, or a block-collective tile operation, not reached by "
                          "every thread of the block (or with per-thread arguments)",
    "shuffle-mask": "warp shuffle or vote whose mask names lanes that do not take part",
    "mixed-missing-barrier": "thread code and tile operations on one global array without a "
                             "barrier between them",
}

MODULES = ("races_shared", "races_global", "races_warp", "bounds", "tiles", "uninit",
           "barriers", "shuffles", "mixed")


@dataclass(frozen=True)
class Case:
    name: str
    bug_class: str
    kernel: object
    grid: object
    block: object
    args: Callable[[], tuple]
    error: type | None
    where: tuple | None = None
    shared: int = 0
    fixed: object = None
    fixed_args: Callable[[], tuple] | None = None
    fixed_shared: int | None = None
    xfail: str | None = None
    note: str = ""
    module: str = ""

    @property
    def is_tile(self) -> bool:
        return self.block is None

    def launch(self, fixed: bool = False) -> None:
        """Run the buggy kernel (or its twin) on fresh inputs: in the simulator under
        ``simulate()``, else on the GPU."""
        k = self.fixed if fixed else self.kernel
        make = self.fixed_args if fixed and self.fixed_args is not None else self.args
        args = make()
        shared = self.fixed_shared if fixed and self.fixed_shared is not None else self.shared
        if self.is_tile:
            k[self.grid](*args)
        elif shared:
            k[self.grid, self.block, 0, shared](*args)
        else:
            k[self.grid, self.block](*args)

    def marks(self) -> tuple[str, int | None, int | None]:
        """(file, the ``# BUG`` line, the ``# PAIR`` line or None) of this case."""
        path = Path(inspect.getsourcefile(sys_module(self.module)))
        bug = pair = None
        for k, text in enumerate(path.read_text().splitlines(), 1):
            m = _MARK.search(text)
            if m and m.group(2) == self.name:
                if m.group(1) == "BUG":
                    bug = k
                else:
                    pair = k
        return str(path), bug, pair


_MARK = re.compile(r"#\s*(BUG|PAIR):\s*([\w-]+)\s*$")
CASES: list[Case] = []
CLEAN: list[Case] = []


def sys_module(name: str):
    return importlib.import_module(f"{__name__}.{name}")


def bug(name: str, bug_class: str, kernel, grid, block, args, error, **kw) -> Case:
    """Register a buggy kernel (called at the import of a corpus module)."""
    if bug_class not in CLASSES:
        raise ValueError(f"unknown bug class {bug_class!r}")
    module = inspect.stack()[1].frame.f_globals["__name__"].rpartition(".")[2]
    case = Case(name, bug_class, kernel, grid, block, args, error, module=module, **kw)
    if any(c.name == name for c in CASES):
        raise ValueError(f"two corpus cases named {name!r}")
    CASES.append(case)
    return case


def clean(name: str, kernel, grid, block, args, shared: int = 0) -> Case:
    """Register a correct kernel that is not a twin (the false-alarm pass runs it)."""
    module = inspect.stack()[1].frame.f_globals["__name__"].rpartition(".")[2]
    case = Case(name, "clean", kernel, grid, block, args, None, shared=shared, module=module)
    CLEAN.append(case)
    return case


def zeros(*shape, dtype=np.float32) -> np.ndarray:
    return np.zeros(shape, dtype)


def ramp(*shape, dtype=np.float32) -> np.ndarray:
    """0, 1, 2, ... in ``shape``: inputs whose elements all differ (a race writes different
    values, so the simulator cannot excuse it as a benign same-value write)."""
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def all_cases() -> list[Case]:
    """Every buggy case, module by module."""
    for m in MODULES:
        sys_module(m)
    return list(CASES)


def clean_cases() -> list[Case]:
    """The correct kernels that are not twins (clean.py)."""
    sys_module("clean")
    return list(CLEAN)


def case(name: str) -> Case:
    for c in all_cases() + clean_cases():
        if c.name == name:
            return c
    raise KeyError(name)
