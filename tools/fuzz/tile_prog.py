"""A generated tile kernel: expression trees and statements that print as ``threadtile.tile``
code and evaluate as the float64 reference (tile_ref.py).

Every tile variable is declared in the prelude (a load) with a fixed dtype and shape, and
every statement only re-assigns variables with values of their own type, scatters, or does
atomics: removing any statement (the minimizer's move) leaves a kernel that still compiles and
is still race free. Each block writes only its own tiles (its variables' outputs at
``(bid(0), bid(1))``, its own region of the scatter arrays); the only memory blocks share are
the read-only inputs and the atomic counters.
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from dataclasses import dataclass, field

import numpy as np

from . import tile_ref as ref
from .tile_ref import R

BIN_SYM = {"+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>"}


def shape_str(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


@dataclass
class E:
    """An expression: ``op`` with operands ``args`` and its parameters ``attrs``; its result
    has ``dtype`` and ``shape`` (a number for ``lit`` and ``scalar``)."""

    op: str
    dtype: str
    shape: tuple[int, ...]
    args: list[E] = field(default_factory=list)
    attrs: dict = field(default_factory=dict)

    # ---- printing ---------------------------------------------------------------------------
    def render(self) -> str:
        a = [x.render() for x in self.args]
        t, op = self.attrs, self.op
        if op == "var":
            return t["name"]
        if op == "lit":
            return repr(t["value"])
        if op == "scalar":
            return t["text"] if t["text"].isidentifier() or t["text"].startswith("ct.bid(") \
                and t["text"].endswith(")") and " " not in t["text"] else f"({t['text']})"
        if op == "full":
            return f"ct.full({shape_str(self.shape)}, {t['value']!r}, ct.{self.dtype})"
        if op == "arange":
            return f"ct.arange({self.shape[0]}, dtype=ct.int32)"
        if op == "load":
            order = ', order="F"' if t["order"] == (1, 0) else (
                "" if t["order"] == tuple(range(len(t["order"]))) else f", order={t['order']}")
            pad = ("" if t["padding"] == "UNDETERMINED" and t.get("bare")
                   else f", padding_mode=ct.PaddingMode.{t['padding']}")
            index = "(" + ", ".join(t["index"]) + ("," if len(t["index"]) == 1 else "") + ")"
            return (f"ct.load({t['array']}, index={index}, shape={shape_str(self.shape)}"
                    f"{pad}{order})")
        if op == "gather":
            nidx = t["nidx"]
            idx = a[0] if nidx == 1 else "(" + ", ".join(a[:nidx]) + ")"
            mask = f", mask={a[nidx]}" if t["mask"] else ""
            return f"ct.gather({t['array']}, {idx}{mask}, padding_value={t['pad']!r})"
        if op == "bin":
            sym = t["sym"]
            if sym in BIN_SYM:
                return f"({a[0]} {sym} {a[1]})"
            fn = {"max": "maximum", "min": "minimum"}[sym]
            return f"{sym}({a[0]}, {a[1]})" if t.get("builtin") else f"ct.{fn}({a[0]}, {a[1]})"
        if op == "un":
            return {"neg": f"(-{a[0]})", "abs": f"ct.abs({a[0]})", "invert": f"(~{a[0]})"}[
                t["fn"]]
        if op == "math":
            return f"ct.{t['fn']}({a[0]})"
        if op == "cmp":
            return f"({a[0]} {t['sym']} {a[1]})"
        if op == "where":
            return f"ct.where({a[0]}, {a[1]}, {a[2]})"
        if op == "isnan":
            return f"ct.isnan({a[0]})"
        if op == "cast":
            return (f"ct.astype({a[0]}, ct.{self.dtype})" if t.get("func")
                    else f"{a[0]}.astype(ct.{self.dtype})")
        if op == "red":
            axis = "" if t["axis"] is None else f", axis={t['axis']}"
            keep = ", keepdims=True" if t["keepdims"] else ""
            return f"ct.{t['fn']}({a[0]}{axis}{keep})"
        if op == "cumsum":
            return f"ct.cumsum({a[0]}, axis={t['axis']})"
        if op == "transpose":
            return f"{a[0]}.transpose()" if t.get("method") else f"ct.transpose({a[0]})"
        if op == "permute":
            return f"ct.permute({a[0]}, {shape_str(t['axes'])})"
        if op == "reshape":
            return f"ct.reshape({a[0]}, {shape_str(self.shape)})"
        if op == "bcast":
            return f"ct.broadcast_to({a[0]}, {shape_str(self.shape)})"
        if op == "expand":
            if t.get("func"):
                return f"ct.expand_dims({a[0]}, {t['axis']})"
            return f"{a[0]}[:, None]" if t["axis"] == 1 else f"{a[0]}[None, :]"
        if op == "matmul":
            return f"ct.matmul({a[0]}, {a[1]})" if t.get("func") else f"({a[0]} @ {a[1]})"
        if op == "mma":
            return f"ct.mma({a[0]}, {a[1]}, {a[2]})"
        if op == "cat":
            return f"ct.cat(({a[0]}, {a[1]}), {t['axis']})"
        if op == "extract":
            index = ', '.join(t['index'])
            return f"ct.extract({a[0]}, index=({index}), shape={shape_str(self.shape)})"
        if op == "insert":
            return f"ct.insert({a[0]}, index=({', '.join(t['index'])}), value={a[1]})"
        raise ValueError(op)

    # ---- the reference ----------------------------------------------------------------------
    def eval(self, cx: Ctx) -> R:
        t, op = self.attrs, self.op
        if op == "var":
            return cx.env[t["name"]]
        if op == "lit":
            return ref.const(self.dtype, t["value"])
        if op == "scalar":
            return ref.const("int32", cx.scalar(t["text"]))
        if op == "full":
            return ref.const(self.dtype, t["value"], self.shape)
        if op == "arange":
            return ref.exact("int32", np.arange(self.shape[0]))
        if op == "load":
            index = tuple(cx.scalar(s) for s in t["index"])
            return ref.load(cx.arrays[t["array"]], index, self.shape, t["order"], t["padding"])
        a = [x.eval(cx) for x in self.args]
        if op == "gather":
            n = t["nidx"]
            return ref.gather(cx.arrays[t["array"]], a[:n], a[n] if t["mask"] else None,
                              t["pad"])
        if op == "bin":
            return ref.binary(t["sym"], a[0], a[1])
        if op == "un":
            return ref.unary(t["fn"], a[0])
        if op == "math":
            return ref.math(t["fn"], a[0])
        if op == "cmp":
            return ref.compare(t["sym"], a[0], a[1])
        if op == "where":
            return ref.where(*a)
        if op == "isnan":
            return ref.isnan(a[0])
        if op == "cast":
            return ref.cast(a[0], self.dtype)
        if op == "red":
            return ref.reduce(t["fn"], a[0], t["axis"], t["keepdims"])
        if op == "cumsum":
            return ref.cumsum(a[0], t["axis"])
        if op == "transpose":
            return a[0].apply(lambda v: v.T.copy())
        if op == "permute":
            return a[0].apply(lambda v: np.transpose(v, t["axes"]).copy())
        if op in ("reshape", "bcast"):
            fn = np.reshape if op == "reshape" else np.broadcast_to
            return a[0].apply(lambda v: fn(v, self.shape).copy())
        if op == "expand":
            return a[0].apply(lambda v: np.expand_dims(v, t["axis"]))
        if op == "matmul":
            return ref.matmul(a[0], a[1], None, self.dtype)
        if op == "mma":
            return ref.matmul(a[0], a[1], a[2], self.dtype)
        if op == "cat":
            return ref.cat(a[0], a[1], t["axis"])
        if op == "extract":
            return ref.extract(a[0], tuple(cx.scalar(i) for i in t["index"]), self.shape)
        if op == "insert":
            return ref.insert(a[0], tuple(cx.scalar(i) for i in t["index"]), a[1])
        raise ValueError(op)

    def size(self) -> int:
        return 1 + sum(x.size() for x in self.args)


class _Bid:
    def __init__(self, bids):
        self.bids = bids

    def bid(self, axis: int) -> int:
        return self.bids[axis]


class Ctx:
    """The reference's state while it runs one block: its block ids, loop counters, tile
    variables (``env``) and the arrays (``arrays``, shared by all blocks)."""

    def __init__(self, arrays: dict[str, R], bids: tuple[int, int]):
        self.arrays = arrays
        self.bids = bids
        self.loops: dict[str, int] = {}
        self.env: dict[str, R] = {}

    def scalar(self, text: str) -> int:
        """A block-uniform integer written in the kernel's words (``ct.bid(0) % 2``)."""
        return int(eval(text, {"ct": _Bid(self.bids)}, dict(self.loops)))  # noqa: S307


# ---- statements ---------------------------------------------------------------------------------

@dataclass
class TNode:
    """One statement or block. ``kind``: ``assign`` (``target = exprs[0]``), ``store``
    (``exprs[0]`` at ``attrs["index"]`` of ``attrs["array"]``), ``scatter``
    (``exprs``: indices, value, mask), ``atomic`` (``exprs``: index, update), ``if`` (``text``
    the block-uniform condition), ``for`` (``text`` the count, ``target`` the counter)."""

    kind: str
    target: str = ""
    exprs: list[E] = field(default_factory=list)
    attrs: dict = field(default_factory=dict)
    body: list[TNode] = field(default_factory=list)
    orelse: list[TNode] = field(default_factory=list)

    def size(self) -> int:
        return 1 + sum(n.size() for n in self.body) + sum(n.size() for n in self.orelse)

    def render(self, indent: int) -> list[str]:
        pad = "    " * indent
        t, ex = self.attrs, [e.render() for e in self.exprs]
        if self.kind == "assign":
            return [f"{pad}{self.target} = {ex[0]}"]
        if self.kind == "scatter":
            n = t["nidx"]
            idx = "(" + ", ".join(ex[:n]) + ("," if n == 1 else "") + ")"
            mask = f", mask={ex[n + 1]}" if t["mask"] else ""
            return [f"{pad}ct.scatter({t['array']}, {idx}, {ex[n]}{mask})"]
        if self.kind == "store":
            return [f"{pad}ct.store({t['array']}, index=({', '.join(t['index'])}), tile={ex[0]})"]
        if self.kind == "atomic":
            return [f"{pad}ct.atomic_{t['op']}({t['array']}, ({ex[0]},), {ex[1]})"]
        if self.kind == "if":
            out = [f"{pad}if {t['text']}:"] + render_block(self.body, indent + 1)
            if self.orelse:
                out += [f"{pad}else:"] + render_block(self.orelse, indent + 1)
            return out
        if self.kind == "for":
            return ([f"{pad}for {self.target} in range({t['text']}):"]
                    + render_block(self.body, indent + 1))
        raise ValueError(self.kind)

    def run(self, cx: Ctx) -> None:
        t = self.attrs
        if self.kind == "assign":
            cx.env[self.target] = self.exprs[0].eval(cx)
        elif self.kind == "scatter":
            n = t["nidx"]
            v = [e.eval(cx) for e in self.exprs]
            arr = cx.arrays[t["array"]]
            value = v[n] if v[n].dtype == arr.dtype else ref.cast(v[n], arr.dtype)
            ref.scatter(arr, v[:n], value, v[n + 1] if t["mask"] else None)
        elif self.kind == "store":
            index = tuple(cx.scalar(i) for i in t["index"])
            ref.store(cx.arrays[t["array"]], index, self.exprs[0].eval(cx))
        elif self.kind == "atomic":
            idx, upd = (e.eval(cx) for e in self.exprs)
            ref.atomic(cx.arrays[t["array"]], t["op"], idx, upd, cx.arrays["@mags"][t["array"]])
        elif self.kind == "if":
            run_block(self.body if cx.scalar(t["text"]) else self.orelse, cx)
        elif self.kind == "for":
            for i in range(cx.scalar(t["text"])):
                cx.loops[self.target] = i
                run_block(self.body, cx)
            cx.loops.pop(self.target, None)


def render_block(nodes: list[TNode], indent: int) -> list[str]:
    out = [line for n in nodes for line in n.render(indent)]
    return out or ["    " * indent + "pass"]


def run_block(nodes: list[TNode], cx: Ctx) -> None:
    for n in nodes:
        n.run(cx)


# ---- programs -----------------------------------------------------------------------------------

@dataclass
class ArraySpec:
    """A kernel argument: ``kind`` is ``in`` (read only), ``out`` (one variable's tiles),
    ``sc`` (scatter targets), ``cnt`` (atomic counters), ``mat`` (a k loop's operands)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    kind: str


@dataclass
class TVar:
    """A tile variable: declared by ``init`` (a load), stored at the end to ``out``."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    init: E
    out: str
    main: bool  # stored as a (bid(0), bid(1)) tile of a 2-d array (else as a (1, 1, ...) tile)
    order: tuple[int, int] | None = None  # a main tile stored with order="F"


@dataclass
class TileProgram:
    """A generated tile kernel: its seed, grid, arguments, variables and statements."""

    seed: int
    grid: tuple[int, int]
    arrays: list[ArraySpec]
    tvars: list[TVar]
    body: list[TNode]
    num_warps: int | None = None

    kind = "tile"

    def size(self) -> int:
        return sum(n.size() for n in self.body)

    def params(self) -> list[str]:
        return [a.name for a in self.arrays]

    def prelude(self) -> list[str]:
        return [f"{v.name} = {v.init.render()}" for v in self.tvars]

    def _store_index(self, v: TVar) -> tuple[str, ...]:
        return ("ct.bid(0)", "ct.bid(1)") + ("0",) * (0 if v.main else len(v.shape))

    def epilogue(self) -> list[str]:
        out = []
        for v in self.tvars:
            tile = v.name if v.main else f"ct.reshape({v.name}, {shape_str((1, 1) + v.shape)})"
            order = ', order="F"' if v.order else ""
            out.append(f"ct.store({v.out}, index=({', '.join(self._store_index(v))}), "
                       f"tile={tile}{order})")
        return out

    def _body_text(self) -> str:
        return "\n".join(render_block(self.body, 1))

    def without_var(self, name: str) -> TileProgram | None:
        """This program without variable ``name`` (its load and its store), or None where a
        statement reads or assigns it."""
        if re.search(rf"\b{name}\b", self._body_text()):
            return None
        tvars = [v for v in self.tvars if v.name != name]
        return dataclasses.replace(self, tvars=tvars).pruned()

    def pruned(self) -> TileProgram:
        """This program without the arrays nothing reads or writes."""
        text = "\n".join(self.prelude() + self.epilogue()) + self._body_text()
        arrays = [a for a in self.arrays if re.search(rf"\b{a.name}\b", text)]
        return dataclasses.replace(self, arrays=arrays)

    def source(self) -> str:
        """The kernel module's text."""
        deco = "@ct.kernel" + (f"(num_warps={self.num_warps})" if self.num_warps else "")
        lines = ["import threadtile.tile as ct", "", "", deco,
                 f"def kernel({', '.join(self.params())}):"]
        lines += ["    " + s for s in self.prelude()]
        lines += render_block(self.body, 1) if self.body else []
        lines += ["    " + s for s in self.epilogue()]
        return "\n".join(lines) + "\n"

    def inputs(self) -> dict[str, np.ndarray]:
        """Fresh arguments for one launch, from the seed: inputs in [-4, 4] (some integral, some
        zeros), integers mostly small with a few anywhere in int32; outputs zero."""
        out = {}
        for a in self.arrays:
            # one stream per array: dropping an array (the minimizer) keeps the others' values
            rng = np.random.default_rng([self.seed, zlib.crc32(a.name.encode())])
            dt = ref.np_dtype(a.dtype)
            if a.kind == "in" or a.kind == "mat":
                if ref.is_float(a.dtype):
                    span = 1.0 if a.kind == "mat" else 4.0
                    v = rng.uniform(-span, span, a.shape)
                    special = rng.random(a.shape)
                    v = np.where(special < 0.1, np.round(v), v)
                    v = np.where(special > 0.97, 0.0, v)
                else:
                    info = np.iinfo(dt)
                    v = rng.integers(-40, 41, a.shape)
                    wild = rng.random(a.shape) < 0.05
                    v = np.where(wild, rng.integers(info.min, info.max, a.shape, endpoint=True),
                                 v)
                out[a.name] = v.astype(dt)
            else:
                out[a.name] = np.zeros(a.shape, dt)
        return out

    def reference(self, arrays: dict[str, np.ndarray] | None = None) -> dict[str, R]:
        """What each array holds after the launch, per element with its error bound and
        whether it is determined (tile_ref.py): the blocks run one after another."""
        arrays = self.inputs() if arrays is None else arrays
        state = {k: ref.exact(a.dtype, arrays[k].astype(np.float64)
                              if ref.is_float(a.dtype) else arrays[k])
                 for a in self.arrays for k in [a.name]}
        mags = {a.name: np.zeros((2,) + a.shape) for a in self.arrays if a.kind == "cnt"}
        state["@mags"] = mags
        for b0 in range(self.grid[0]):
            for b1 in range(self.grid[1]):
                cx = Ctx(state, (b0, b1))
                for v in self.tvars:
                    cx.env[v.name] = v.init.eval(cx)
                run_block(self.body, cx)
                for v in self.tvars:
                    index = tuple(cx.scalar(s) for s in self._store_index(v))
                    tile = cx.env[v.name]
                    if not v.main:
                        tile = tile.apply(lambda x, s=(1, 1) + v.shape: x.reshape(s))
                    ref.store(state[v.out], index, tile, v.order)
        state.pop("@mags")
        for a in self.arrays:
            if a.kind == "cnt" and ref.is_float(a.dtype):
                ref.finish_atomics(state[a.name], mags[a.name])
        return state
