"""Tile variables as values: a name re-bound to a tile of another shape or dtype.

cuTile treats each assignment as a new value, so a name may hold tiles of different types at
different points (``a = ct.load(..., shape=(1, tm, tk)); a = ct.reshape(a, (tm, tk))``). The
IR keeps one type per variable, so each (name, tile type) pair of a function gets its own
variable: the first type a name is given keeps the name, each other one a version ``name_1``,
``name_2``... Every assignment of a tile to ``name`` writes the variable of its type, and a
read of ``name`` reads the variable of the type ``name`` holds at that point. Wherever paths
meet the type must be the same on each of them, and then the variable is the same too: no
copies are needed, whatever the paths (``break``, ``continue``) were.

Where paths meet:

- after an ``if``: the branches that fall through. Different types leave the name unusable
  (a ``Clash``): reading it is an error naming both types and their lines; assigning it again
  is fine (cuTile: the type depends on the path taken).
- at the head of a loop: the state before the loop and the state at the end of each iteration
  (and at each ``continue``/``break``). A name that holds a tile before the loop and another
  type at the end of an iteration is carried around the loop with a changing type: an error
  at the assignment that changed it, naming both types (cuTile refuses it too). A name first
  assigned in the body is not carried: each iteration gives it new values.
- after a loop: the state before it (no iteration) with those of the iterations' ends and
  breaks.

Scalars do not take part: a scalar variable keeps one type per function (the float rule,
docs/language.md).

Compile-time values follow the same paths (``Lowerer.const_locals``: a name assigned a
constant, with that constant): where paths meet a name keeps its value only if every path
brings the same one (``a = 1`` in both branches of an ``if`` sizes a tile after it). At a
loop's head the names its body assigns lose theirs (a later iteration may have changed them);
after the loop a name has the value every way out brings: each ``break``, and the head's state
unless the loop never ends by its condition (``while True``).
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..ir import nodes as ir
from ..lang.types import TileType
from . import flow
from . import typing as ty

if TYPE_CHECKING:
    from .lower import Lowerer


@dataclass(frozen=True)
class Binding:
    """``name`` holds a tile of ``type`` in the IR variable ``var``, assigned at ``loc``."""

    var: str
    type: object  # a TileType; a Scalar or ArrayType where the name holds its own variable
    loc: ir.Loc

    @property
    def line(self) -> int:
        return self.loc.line


@dataclass(frozen=True)
class Clash:
    """``name`` holds tiles of two types on two paths to this point."""

    a: Binding
    b: Binding


@dataclass
class Frame:
    """A loop being lowered: the state at its head and the states that leave an iteration."""

    head: dict
    exits: list = field(default_factory=list)  # (state, "continue" | "break")
    unbound_reads: dict = field(default_factory=dict)  # name -> node, read unbound here
    consts: dict = field(default_factory=dict)  # the compile-time values at the head
    const_breaks: list = field(default_factory=list)  # those at each break
    endless: bool = False  # `while True`: left by a break only


def variable(lw: Lowerer, name: str, t: TileType) -> str:
    """The IR variable of tiles of type ``t`` assigned to ``name``."""
    key = (name, t)
    var = lw.tile_vars.get(key)
    if var is not None:
        return var
    taken = set(lw.tile_vars.values())
    var = name
    if name in lw.observed or name in taken or name in lw.runtime_params:
        k = 1
        while f"{name}_{k}" in lw.local_names or f"{name}_{k}" in lw.observed or \
                f"{name}_{k}" in taken:
            k += 1
        var = f"{name}_{k}"
    lw.tile_vars[key] = var
    lw.local_names.add(var)
    return var


def seed_params(lw: Lowerer, params: list) -> None:
    """A parameter holds its own variable; a tile parameter (of a helper function) is the
    variable of its own type, and re-bound to another type gets a version like any name."""
    loc = lw.src.loc(lw.src.tree, lw.fname)
    for p in params:
        if not p.is_constant:
            if isinstance(p.type, TileType):
                lw.tile_vars[(p.name, p.type)] = p.name
            lw.tile_names[p.name] = Binding(p.name, p.type, loc)


def bind_value(lw: Lowerer, name: str, t, node) -> None:
    """``name`` assigned a number or an array (its one variable, ``name``): where paths meet,
    it is told apart from a tile the name holds on another path."""
    b = lw.tile_names.get(name)
    if not (isinstance(b, Binding) and b.var == name):
        lw.tile_names[name] = Binding(name, t, lw.loc(node))


def assign(lw: Lowerer, node, name: str, value: ir.Expr) -> list[ir.Stmt]:
    """``name = tile``: the variable of the tile's type, which ``name`` now stands for."""
    var = variable(lw, name, value.type)
    lw.tile_names[name] = Binding(var, value.type, lw.loc(node))
    lw.observe(var, value.type, False, node)
    return [ir.Assign(lw.loc(node), var, value)]


def _what(t) -> str:
    return f"a {t}" if isinstance(t, TileType) else f"{ty.describe(t)}"


def resolve(lw: Lowerer, name: str, node) -> str:
    """The IR variable ``name`` reads here (``name`` itself when it holds no tile)."""
    b = lw.tile_names.get(name)
    if isinstance(b, Clash):
        raise lw.error(node, f"'{name}' is {_what(b.a.type)} on one path to this line (line "
                             f"{b.a.line}) and {_what(b.b.type)} on another (line {b.b.line})",
                       "give it one type (a tile of one shape and dtype) on every path, or use "
                       "two names")
    if b is None:
        for f in lw.loops:
            f.unbound_reads.setdefault(name, node)
        return name
    return b.var


def merge(states: list[dict]) -> dict:
    """The state where the paths of ``states`` meet."""
    out: dict = {}
    for s in states:
        for name, b in s.items():
            prev = out.get(name)
            if prev is None or isinstance(prev, Clash):
                out[name] = b if prev is None else prev
            elif isinstance(b, Clash):
                out[name] = b
            elif b.var != prev.var:
                out[name] = Clash(*sorted((prev, b), key=lambda x: x.line))
    return out


def branches(lw: Lowerer, before: dict, ends: list[dict | None]) -> None:
    """After an ``if``: ``ends`` are the branches' final states, None for one that leaves."""
    live = [s for s in ends if s is not None]
    lw.tile_names = merge(live) if live else dict(before)


def same_constants(states: list[dict]) -> dict:
    """The compile-time values where the paths of ``states`` (name -> value) meet: those every
    path brings, equal and of one Python type."""
    if not states:
        return {}
    out = dict(states[0])
    for s in states[1:]:
        for name, v in list(out.items()):
            w = s.get(name, _UNSET)
            if type(w) is not type(v) or w != v:
                del out[name]
    return out


_UNSET = object()


def forget(consts: dict, names: set[str]) -> dict:
    """``consts`` without ``names`` and the items of tuples among them (``t_0``, ``t_1_0``...)."""
    return {k: v for k, v in consts.items()
            if k not in names and not any(k.startswith(f"{n}_") for n in names)}


@contextlib.contextmanager
def loop(lw: Lowerer, node, falls_through: bool = True):
    """Lowering a loop's body: the types carried around it checked at its end."""
    frame = Frame(dict(lw.tile_names))
    if not _runs_once(node):  # what the body assigns may differ from the second iteration on
        lw.const_locals = forget(lw.const_locals, flow.assigned_in([node]))
    frame.consts = dict(lw.const_locals)
    lw.loops.append(frame)
    try:
        yield frame
    finally:
        lw.loops.pop()
    lw.const_locals = same_constants(frame.const_breaks + ([] if frame.endless else [
        frame.consts]))
    exits = list(frame.exits)
    if falls_through:
        exits.append((lw.tile_names, "end"))
    for state, how in exits:
        for name, h in frame.head.items():
            b = state.get(name)
            if not isinstance(h, Binding) or b is None or b == h or \
                    isinstance(b, Binding) and b.var == h.var:
                continue
            _carried(lw, name, h, b, how)
    after = merge([frame.head] + [s for s, _ in exits])
    for name, read in frame.unbound_reads.items():
        b = after.get(name)
        if name not in frame.head and isinstance(b, Binding) and b.var != name:
            raise lw.error(read, f"'{name}' is read here before the loop assigns it, so it "
                                 f"holds the tile of the previous iteration, but the loop "
                                 f"assigns it {_what(b.type)} (line {b.line}) and it holds "
                                 "another type elsewhere",
                           "assign it before the loop")
    lw.tile_names = after


def _carried(lw: Lowerer, name: str, h: Binding, b, how: str) -> None:
    where = {"end": "at the end of an iteration", "continue": "at a continue",
             "break": "where the loop breaks"}[how]
    if isinstance(b, Clash):
        b = b.b if b.a.var == h.var else b.a
    raise lw.error_at(b.loc, f"'{name}' is carried around the loop with a changing type: it is "
                           f"{_what(h.type)} when the loop starts (line {h.line}) but "
                           f"{_what(b.type)} {where} (line {b.line})",
                      "assign the new tile to a new name, or give it back its type before "
                      "the iteration ends")


def leave(lw: Lowerer, how: str) -> None:
    """A ``break`` or ``continue``: the state leaves the iteration."""
    if lw.loops:
        lw.loops[-1].exits.append((dict(lw.tile_names), how))
        if how == "break":
            lw.loops[-1].const_breaks.append(dict(lw.const_locals))


def _runs_once(node) -> bool:
    """``while True: ...; break`` with no ``continue``: no iteration after the first."""
    return isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and \
        node.test.value is True and bool(node.body) and isinstance(node.body[-1], ast.Break) \
        and not any(isinstance(n, ast.Continue) for s in node.body for n in ast.walk(s))
