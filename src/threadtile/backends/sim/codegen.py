"""IR -> Python source that runs every thread of a batch of blocks at once, over NumPy lanes.

Interpreting the IR node by node per thread is what makes simulators slow (numba's runs one OS
thread per CUDA thread). Here each IR function becomes one Python function, once per
specialization, in which every value is a NumPy scalar (all lanes agree) or a vector with one
entry per lane, and divergence is an execution *mask*:

- ``if``: the then-branch runs under ``mask & cond``, the else-branch under ``mask & ~cond``;
  a branch no lane takes is skipped;
- loops run while any lane is still in them; ``break``/``continue`` remove lanes from the
  loop's mask or the iteration's mask; ``return`` removes them from the function's ``_live``
  mask; the statements after one that may exit run under the narrowed mask;
- an assignment under a mask keeps the old value in the other lanes (``np.where``);
- loads, stores, atomics, barriers and warp operations get the mask, so only active lanes touch
  memory or are checked, and barriers can see which threads did not arrive.

A mask is ``None`` (every lane of the batch), ``False`` (none), or a bool vector. ``None``
keeps the common case fast: a kernel without divergence runs no mask operations at all, and
loops with uniform bounds run as plain Python loops over scalar counters.

User variables are renamed ``v_<name>`` so no name of the source can collide with ours.
"""

from __future__ import annotations

import numpy as np

from ...ir import coop as ircoop
from ...ir import nodes as ir
from ...ir.ops import ATOMICS
from ...ir.printer import format_expr
from ...lang.types import (
    NARROW_FLOATS,
    ArrayType,
    Scalar,
    TileType,
    TupleType,
    bfloat16,
    bool_,
    void,
)
from . import bf16, checks, complexops, coop, memory, ops, tiles
from .checks import Site
from .raising import raise_first

_SPECIAL = {"threadIdx": "tid", "blockIdx": "ctaid", "blockDim": "ntid", "gridDim": "nctaid"}

_PURE_CALLS = set(ops.MATH) | set(complexops.CALLS) | {
    "min", "max", "abs", "popc", "clz", "ffs", "brev", "lanemask_lt"}
_SYNC = {"syncthreads": None, "syncthreads_count": "count", "syncthreads_and": "and",
         "syncthreads_or": "or"}
_SHFL = {"shfl_sync": "idx", "shfl_up_sync": "up", "shfl_down_sync": "down",
         "shfl_xor_sync": "xor"}
_VOTE = {"all_sync": "all", "any_sync": "any", "eq_sync": "eq", "ballot_sync": "ballot"}
_BITS = {"popc": "_popc", "clz": "_clz", "ffs": "_ffs", "brev": "_brev"}


def _and(m, c):
    """Mask ``m`` narrowed by condition or mask ``c`` (each None, False, scalar or vector)."""
    if c is None:
        return m
    if c.__class__ is not np.ndarray:
        return m if c else False
    if m is None:
        # a condition true in every lane (`if i < n` but for the last block) keeps the
        # unmasked fast paths of everything under it
        return None if c.all() else c
    if m is False:
        return False
    return m & c


def _andnot(m, c):
    """Mask ``m`` without the lanes of condition or mask ``c``."""
    if c is None:
        return False
    if c is False:
        return m
    if c.__class__ is not np.ndarray:
        return False if c else m
    if m is None:
        return ~c
    if m is False:
        return False
    return m & ~c


def _any(m) -> bool:
    return m is None or (m is not False and bool(m.any()))


def _asg(m, v, old):
    """A masked assignment: lanes outside ``m`` keep ``old``."""
    if m is None:
        return v
    return np.where(m, v, old)


def _asgtup(m, v: tuple, old: tuple) -> tuple:
    """A masked assignment of a tuple, item by item (arrays as views, tuples recursively)."""
    if m is None:
        return v
    out = []
    for x, o in zip(v, old):
        if x.__class__ is tuple:
            out.append(_asgtup(m, x, o))
        elif isinstance(x, memory.ArrayRef):
            out.append(memory.assign_array(m, x, o))
        else:
            out.append(np.where(m, x, o))
    return tuple(out)


def _does_atomics(s: ir.While) -> bool:
    """Whether the loop's condition or body does an atomic operation (a thread's or a tile's)."""
    for st in [s, *ir.walk_stmts(s.body)]:
        for e in ir.stmt_exprs(st):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Call) and x.name.startswith("atomic.") or \
                        isinstance(x, ir.TileOp) and x.op == "atomic":
                    return True
    return False


def _holds_array(t) -> bool:
    return isinstance(t, ArrayType) or isinstance(t, TupleType) and any(
        _holds_array(x) for x in t.items)


class Program:
    """The Python translation of one specialization, ready to run batch after batch."""

    def __init__(self, kernel, source: str, sites: list[Site], decls: list[ir.ArrayDecl],
                 warp_sync: bool, params: list[ir.Param], fences: bool):
        self.kernel = kernel
        self.source = source
        self.sites = sites
        self.decls = decls
        self.warp_sync = warp_sync
        self.params = params
        self.fences = fences  # the kernel calls threadfence*(): see checks.py


def translate(module: ir.Module) -> Program:
    """Translate ``module`` (a kernel and its device functions) to a :class:`Program`."""
    t = _Translator(module)
    return t.run()


class _Loop:
    def __init__(self, lm: str, cm: str):
        self.lm = lm  # lanes still looping
        self.cm = cm  # lanes still in this iteration (continue removes them)


class _Translator:
    def __init__(self, module: ir.Module):
        self.module = module
        self.ns: dict = {
            "np": np, "_and": _and, "_andnot": _andnot, "_any": _any, "_asg": _asg,
            "_asgtup": _asgtup,
            "_asga": memory.assign_array, "_ld": memory.load, "_st": memory.store,
            "_atom": memory.atomic, "_view": memory.view, "_field": memory.field,
            "_reshape": memory.reshape, "_viewas": memory.view_as,
            "_rawmem": memory.raw_memory,
            "_sel": ops.sel, "_cast": ops.cast, "_f2i": ops.float_to_int,
            "_bf16": ops.bf16, "_ipow": ops.ipow, "_shl": ops.shl, "_shr": ops.shr,
            "_floordiv_f": ops.floordiv_f, "_pymod_f": ops.pymod_f, "_pymin": ops.pymin,
            "_pymax": ops.pymax, "_popc": ops.popc, "_clz": ops.clz, "_ffs": ops.ffs,
            "_brev": ops.brev, "_tile": tiles.run_op, "_tasg": tiles.assign,
            "_raise": raise_first, "_bitcast": bf16.bitcast, "_bf16round": bf16.round_to,
            "_spin": checks.raise_spin, "_SPIN": checks.SPIN_LIMIT, "_coop": coop.run,
        }
        # (TileOp, site, sites of the ops it stands for) by index: what `_tile(B, m, k, ...)`
        # runs
        self.tile_ops: list = []
        self.coop_ops: list = []  # (threadtile.coop call, site) by index: `_coop(B, m, k, ...)`
        for name, f in ops.MATH.items():
            self.ns["_M_" + name] = f
        for name, f in complexops.CALLS.items():
            self.ns["_C_" + name.replace(".", "_")] = f
        self.ns["_cdiv"], self.ns["_cpow"] = complexops.div, complexops.power
        self.consts: dict[tuple, str] = {}
        self.sites: list[Site] = []
        self.decls: list[ir.ArrayDecl] = []
        self.decl_ids: dict[int, int] = {}
        self.warp_sync = False
        self.fences = False
        self.grid_sync = False
        # an array variable (or a tuple holding arrays) assigned under a branch (an if's, or
        # after a break/continue/return): lanes may bind it to different arrays, which a
        # batch of one block keeps apart where the branch depends on the block alone
        # (lockstep.run)
        self.array_rebinds = False
        # a while loop doing atomics (a lock's cas): it may wait for another block to finish
        # its critical section, which only a batch of one block lets it do (lockstep.run)
        self.waits = False
        self.releases = False  # a tile atomic with memory_order=RELEASE

    def run(self) -> Program:
        src: list[str] = []
        for d in self.module.const_arrays:
            data = np.ascontiguousarray(d.init)
            mem = memory.Memory(data.reshape(-1), d.name, "const", d.type.dtype, d.shape)
            self.ns["v_" + d.name] = memory.ArrayRef(mem, np.int64(0), tuple(
                np.int64(n) for n in d.shape), memory.c_strides(d.shape))
        for f in self.module.kernel.all_functions():
            src.append(_FunctionGen(self, f).emit())
        text = "\n\n".join(src) + "\n"
        code = compile(text, f"<threadtile-sim {self.module.kernel.pyname}>", "exec")
        exec(code, self.ns)  # noqa: S102  (our own generated source)
        kernel = self.ns[fname(self.module.kernel)]
        prog = Program(kernel, text, self.sites, self.decls, self.warp_sync,
                       self.module.kernel.params, self.fences)
        prog.tile_ops = self.tile_ops
        prog.coop_ops = self.coop_ops
        prog.coop_block = ircoop.required_block(self.module)
        prog.grid_sync = self.grid_sync
        prog.array_rebinds = self.array_rebinds
        prog.waits = self.waits
        prog.releases = self.releases
        prog.captured = list(self.module.captured)
        return prog

    def const(self, value, t: Scalar) -> str:
        key = (type(value).__name__, repr(value), t.name)
        name = self.consts.get(key)
        if name is None:
            name = f"_k{len(self.consts)}"
            self.consts[key] = name
            self.ns[name] = ops.scalar(value, t)
        return name

    def dtype(self, t: Scalar) -> str:
        name = "_d_" + t.name
        self.ns[name] = ops.value_dtype(t)
        return name

    def typeobj(self, t: Scalar) -> str:
        name = "_t_" + t.name
        self.ns[name] = t
        return name

    def site(self, loc: ir.Loc, array: str, kind: str) -> int:
        self.sites.append(Site(loc, array, kind))
        return len(self.sites) - 1

    def decl(self, d: ir.ArrayDecl) -> int:
        if id(d) not in self.decl_ids:
            self.decl_ids[id(d)] = len(self.decls)
            self.decls.append(d)
        return self.decl_ids[id(d)]


def fname(f: ir.Function) -> str:
    return "f_" + f.name


def _vname(name: str) -> str:
    """A user variable in generated code: the prefix keeps it apart from our own names."""
    return "v_" + name


def _exits(s: ir.Stmt) -> tuple[bool, bool]:
    """(may leave the enclosing loop's iteration, may return) for statement ``s``."""
    if isinstance(s, (ir.Break, ir.Continue)):
        return True, False
    if isinstance(s, ir.Return):
        return False, True
    if isinstance(s, ir.If):
        loop = ret = False
        for x in s.then + s.orelse:
            a, b = _exits(x)
            loop, ret = loop or a, ret or b
        return loop, ret
    if isinstance(s, (ir.For, ir.While)):
        return False, any(isinstance(x, ir.Return) for x in ir.walk_stmts(s.body))
    return False, False


def _pure(e: ir.Expr) -> bool:
    """Whether ``e`` may be evaluated in lanes that would not evaluate it: it touches no memory
    and calls nothing with effects (arithmetic faults do not exist in NumPy)."""
    if isinstance(e, (ir.Load, ir.Slice, ir.CallFunc)):
        return False
    if isinstance(e, ir.Call) and e.name not in _PURE_CALLS:
        return False
    for k, v in vars(e).items():
        if k in ("type", "loc"):
            continue
        if isinstance(v, ir.Expr) and not _pure(v):
            return False
        if isinstance(v, list) and any(isinstance(x, ir.Expr) and not _pure(x) for x in v):
            return False
    return True


def _array_text(e: ir.Expr) -> str:
    if isinstance(e, ir.Var):
        return e.name
    try:
        return format_expr(e)
    except Exception:  # noqa: BLE001  (a name for messages only)
        return "array"


class _FunctionGen:
    def __init__(self, tr: _Translator, f: ir.Function):
        self.tr = tr
        self.f = f
        self.lines: list[str] = []
        self.ind = 1
        self.n = 0
        self.branched = 0  # inside a branch: an if's, or after a break/continue/return

    def new(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def line(self, text: str) -> None:
        self.lines.append("    " * self.ind + text)

    def nested(self, fn, *args) -> None:
        self.ind += 1
        before = len(self.lines)
        fn(*args)
        if len(self.lines) == before:
            self.line("pass")
        self.ind -= 1

    def emit(self) -> str:
        f = self.f
        params = [_vname(p.name) for p in f.params if not p.is_constant]
        head = f"def {fname(f)}(B, _m{''.join(', ' + p for p in params)}):"
        self.line(f"# {f.pyname} ({f.loc.filename}:{f.loc.line})")
        self.line("_live = _m")
        names = {p.name for p in f.params}
        for name, t in f.locals.items():
            if name in names:
                continue
            self.line(f"{_vname(name)} = {self.zero(t)}")
        if not f.is_kernel:
            self.line(f"_rv = {self.zero(f.return_type)}")
        self.block(f.body, "_m", None)
        if not f.is_kernel:
            self.line("return _rv")
        return "\n".join([head] + self.lines)

    def zero(self, t) -> str:
        """The value a variable of type ``t`` starts with: 0, None (arrays, tiles), or a tuple
        of those."""
        if isinstance(t, Scalar) and t != void:
            return self.tr.const(0, t)
        if isinstance(t, TupleType):
            return "(" + "".join(self.zero(x) + ", " for x in t.items) + ")"
        return "None"

    def assign_fn(self, t) -> str:
        """The masked assignment for a value of type ``t``."""
        if self.branched and _holds_array(t):
            self.tr.array_rebinds = True
        if isinstance(t, ArrayType):
            return "_asga"
        if isinstance(t, TupleType):
            return "_asgtup"
        return "_asg"

    # -- statements ----------------------------------------------------------------------------

    def block(self, stmts: list[ir.Stmt], m: str, loop: _Loop | None) -> None:
        for k, s in enumerate(stmts):
            if isinstance(s, ir.Break):
                self.line(f"{loop.lm} = _andnot({loop.lm}, {m})")
                self.line(f"{loop.cm} = _andnot({loop.cm}, {m})")
                return
            if isinstance(s, ir.Continue):
                self.line(f"{loop.cm} = _andnot({loop.cm}, {m})")
                return
            if isinstance(s, ir.Return):
                self.s_Return(s, m)
                return
            getattr(self, "s_" + type(s).__name__)(s, m, loop)
            rest = stmts[k + 1:]
            leaves, returns = _exits(s)
            if rest and (leaves or returns):
                nm = self.new("_m")
                expr = m
                if leaves:
                    expr = f"_and({expr}, {loop.cm})"
                if returns:
                    expr = f"_and({expr}, _live)"
                self.line(f"{nm} = {expr}")
                self.line(f"if _any({nm}):")
                self.branched += 1
                self.nested(self.block, rest, nm, loop)
                self.branched -= 1
                return

    def s_Return(self, s: ir.Return, m: str) -> None:
        if s.value is not None:
            t = s.value.type
            asg = "_tasg(B, " if isinstance(t, TileType) else self.assign_fn(t) + "("
            self.line(f"_rv = {asg}{m}, {self.x(s.value, m)}, _rv)")
        self.line(f"_live = _andnot(_live, {m})")
        if self.f.is_kernel:
            self.line("B.live = _live")

    def s_Assign(self, s: ir.Assign, m: str, loop) -> None:
        v = self.x(s.value, m)
        name = _vname(s.name)
        if isinstance(s.value.type, TileType):
            self.line(f"{name} = _tasg(B, {m}, {v}, {name})")
        elif isinstance(s.value.type, ArrayType):  # lanes that returned never read it again
            self.line(f"{name} = {self.assign_fn(s.value.type)}({m}, {v}, {name}, _live)")
        else:
            self.line(f"{name} = {self.assign_fn(s.value.type)}({m}, {v}, {name})")

    def s_Store(self, s: ir.Store, m: str, loop) -> None:
        arr = self.x(s.array, m)
        idx = self.indices(s.indices, m)
        val = self.x(s.value, m)
        site = self.tr.site(s.loc, _array_text(s.array), "write")
        self.line(f"_st(B, {arr}, {idx}, {val}, {m}, {site})")

    def s_ExprStmt(self, s: ir.ExprStmt, m: str, loop) -> None:
        e = s.value
        if isinstance(e, ir.Call) and e.name.startswith("atomic."):
            self.line(self.atomic(e, m, used=False))
            return
        self.line(self.x(e, m))

    def s_If(self, s: ir.If, m: str, loop) -> None:
        c = self.new("_c")
        self.line(f"{c} = {self.x(s.cond, m)}")
        mt = self.new("_m")
        self.line(f"{mt} = _and({m}, {c})")
        if s.orelse:
            mf = self.new("_m")
            self.line(f"{mf} = _andnot({m}, {c})")
        self.branched += 1
        if s.then:
            self.line(f"if _any({mt}):")
            self.nested(self.block, s.then, mt, loop)
        if s.orelse:
            self.line(f"if _any({mf}):")
            self.nested(self.block, s.orelse, mf, loop)
        self.branched -= 1

    def s_For(self, s: ir.For, m: str, loop) -> None:
        # Python's range(): bounds and step are evaluated once, and the loop variable is a copy
        # of a hidden counter (assigning it in the body does not change the iteration; after
        # the loop it keeps the last value), which is what the CUDA backend emits as well
        var = _vname(s.var)
        it, stop, step = self.new("_it"), self.new("_stop"), self.new("_step")
        self.line(f"{it} = {self.x(s.start, m)}")
        self.line(f"{stop} = {self.x(s.stop, m)}")
        self.line(f"{step} = {self.x(s.step, m)}")
        lp = _Loop(self.new("_lm"), self.new("_cm"))
        self.line(f"{lp.lm} = {m}")
        self.line("while True:")
        self.ind += 1
        if isinstance(s.step, ir.Const):
            cond = f"{it} < {stop}" if s.step.value > 0 else f"{it} > {stop}"
        else:
            cond = f"_sel({step} > 0, {it} < {stop}, {it} > {stop})"
        self.line(f"{lp.lm} = _and({lp.lm}, {cond})")
        self.line(f"if not _any({lp.lm}):")
        self.line("    break")
        self.line(f"{var} = _asg({lp.lm}, {it}, {var})")
        self.line(f"{lp.cm} = {lp.lm}")
        self.block(s.body, lp.cm, lp)
        if _exits(s)[1]:
            self.line(f"{lp.lm} = _and({lp.lm}, _live)")
        # lanes that left the loop never come back, so their counter may run on
        self.line(f"{it} = {it} + {step}")
        self.ind -= 1

    def s_While(self, s: ir.While, m: str, loop) -> None:
        lp = _Loop(self.new("_lm"), self.new("_cm"))
        n = self.new("_it")
        site = self.tr.site(s.loc, "", "loop")
        self.tr.waits = self.tr.waits or _does_atomics(s)
        self.line(f"{lp.lm} = {m}")
        self.line(f"{n} = 0")
        self.line("while True:")
        self.ind += 1
        c = self.x(s.cond, lp.lm)
        self.line(f"{lp.lm} = _and({lp.lm}, {c})")
        self.line(f"if not _any({lp.lm}):")
        self.line("    break")
        self.line(f"{n} += 1")
        self.line(f"if {n} > _SPIN:")
        self.line(f"    _spin(B, {site}, {lp.lm})")
        self.line(f"{lp.cm} = {lp.lm}")
        self.block(s.body, lp.cm, lp)
        if _exits(s)[1]:
            self.line(f"{lp.lm} = _and({lp.lm}, _live)")
        self.ind -= 1

    def s_ArrayDecl(self, s: ir.ArrayDecl, m: str, loop) -> None:
        did = self.tr.decl(s)
        self.line(f"{_vname(s.name)} = B.decl({did})")

    def s_Print(self, s: ir.Print, m: str, loop) -> None:
        items = []
        for it in s.items:
            if isinstance(it, str):
                items.append(repr(it))
            else:
                items.append(f"({self.x(it, m)}, {self.tr.typeobj(it.type)})")
        site = self.tr.site(s.loc, "", "print")
        self.line(f"B.out({m}, {site}, ({''.join(i + ', ' for i in items)}))")

    # -- expressions ---------------------------------------------------------------------------

    def indices(self, idx: list[ir.Expr], m: str) -> str:
        return "(" + "".join(self.x(i, m) + ", " for i in idx) + ")"

    def x(self, e: ir.Expr, m: str) -> str:
        text = getattr(self, "x_" + type(e).__name__)(e, m)
        if isinstance(e.type, Scalar) and e.type == bfloat16 and isinstance(
                e, (ir.BinOp, ir.UnaryOp)):
            return f"_bf16({text})"
        return text

    def x_Const(self, e: ir.Const, m: str) -> str:
        return self.tr.const(e.value, e.type)

    def x_Var(self, e: ir.Var, m: str) -> str:
        return _vname(e.name)

    def x_Special(self, e: ir.Special, m: str) -> str:
        if e.reg == "laneid":
            return "B.laneid"
        base, _, axis = e.reg.partition(".")
        return f"B.{_SPECIAL[base]}_{axis}"

    def x_Cast(self, e: ir.Cast, m: str) -> str:
        t = e.type
        if isinstance(e.value, ir.Special) and t.is_int and t.bits == 64 and t.kind == "i" and \
                e.value.reg != "laneid":
            return self.x_Special(e.value, m) + "64"
        v = self.x(e.value, m)
        if t == bfloat16 or e.value.type == bfloat16 or t.name in NARROW_FLOATS:
            return f"_cast({v}, {self.tr.typeobj(t)})"
        src = e.value.type
        if isinstance(src, Scalar) and src.is_float and not src.is_complex and \
                t.kind in "iu":  # clamped, as the GPU converts (8/16 bits: 32, wrapped)
            return f"_f2i({v}, {self.tr.dtype(t)})"
        return f"({v}).astype({self.tr.dtype(t)})"

    def x_BinOp(self, e: ir.BinOp, m: str) -> str:
        op, t = e.op, e.type
        a, b = self.x(e.left, m), self.x(e.right, m)
        if t.is_complex and op in ("/", "**"):  # numba's formulas, not NumPy's
            return f"{'_cdiv' if op == '/' else '_cpow'}({a}, {b})"
        if op == "**":
            if t.is_int:
                return f"_ipow({a}, {b})"
            if isinstance(e.right, ir.Const) and e.right.value in (2, 3):
                return "(" + " * ".join([a] * int(e.right.value)) + ")"
            if e.right.type != t:
                b = f"_cast({b}, {self.tr.typeobj(t)})"
            return f"np.power({a}, {b})"
        if op == "//":
            return f"({a} // {b})" if t.is_int else f"_floordiv_f({a}, {b})"
        if op == "%":
            return f"({a} % {b})" if t.is_int else f"_pymod_f({a}, {b})"
        if op == "<<":
            return f"_shl({a}, {b})"
        if op == ">>":
            return f"_shr({a}, {b})"
        return f"({a} {op} {b})"

    def x_UnaryOp(self, e: ir.UnaryOp, m: str) -> str:
        v = self.x(e.operand, m)
        if e.op == "+":
            return v
        if e.op in ("not", "~"):
            return f"(~{v})"
        return f"(-{v})"

    def x_Compare(self, e: ir.Compare, m: str) -> str:
        return f"({self.x(e.left, m)} {e.op} {self.x(e.right, m)})"

    def x_Logical(self, e: ir.Logical, m: str) -> str:
        op = "&" if e.op == "and" else "|"
        left = self.x(e.left, m)
        if _pure(e.right):
            return f"({left} {op} {self.x(e.right, m)})"
        # short circuit: the right side only runs in lanes the left side did not decide
        lv, mr, rv = self.new("_l"), self.new("_m"), self.new("_r")
        self.line(f"{lv} = {left}")
        self.line(f"{mr} = {'_and' if e.op == 'and' else '_andnot'}({m}, {lv})")
        self.line(f"if _any({mr}):")
        self.ind += 1
        self.line(f"{rv} = {self.x(e.right, mr)}")
        self.ind -= 1
        self.line("else:")
        self.line(f"    {rv} = {self.tr.const(e.op == 'or', bool_)}")
        return f"({lv} {op} {rv})"

    def x_Select(self, e: ir.Select, m: str) -> str:
        c = self.x(e.cond, m)
        if _pure(e.if_true) and _pure(e.if_false):
            return f"_sel({c}, {self.x(e.if_true, m)}, {self.x(e.if_false, m)})"
        # only the chosen side runs in each lane: `a[i] if i < n else 0.0` must not read a[n]
        cv, mt, mf = self.new("_c"), self.new("_m"), self.new("_m")
        tv, fv = self.new("_v"), self.new("_v")
        zero = self.tr.const(0, e.type)
        self.line(f"{cv} = {c}")
        self.line(f"{mt} = _and({m}, {cv})")
        self.line(f"{mf} = _andnot({m}, {cv})")
        for mask, val, side in ((mt, tv, e.if_true), (mf, fv, e.if_false)):
            self.line(f"if _any({mask}):")
            self.ind += 1
            self.line(f"{val} = {self.x(side, mask)}")
            self.ind -= 1
            self.line("else:")
            self.line(f"    {val} = {zero}")
        return f"_sel({cv}, {tv}, {fv})"

    def x_Load(self, e: ir.Load, m: str) -> str:
        site = self.tr.site(e.loc, _array_text(e.array), "read")
        return f"_ld(B, {self.x(e.array, m)}, {self.indices(e.indices, m)}, {m}, {site})"

    def x_ArrayDim(self, e: ir.ArrayDim, m: str) -> str:
        return f"{self.x(e.array, m)}.{'shape' if e.attr == 'shape' else 'strides'}[{e.axis}]"

    def x_Field(self, e: ir.Field, m: str) -> str:
        rec = e.array.type.dtype
        ratio = rec.itemsize // e.type.dtype.itemsize
        return f"_field({self.x(e.array, m)}, {e.name!r}, {e.shape!r}, {ratio})"

    def x_ViewAs(self, e: ir.ViewAs, m: str) -> str:
        return f"_viewas({self.x(e.array, m)}, {e.type.dtype.name!r})"

    def x_RawMemory(self, e: ir.RawMemory, m: str) -> str:
        return f"_rawmem({self.x(e.array, m)})"

    def x_Reshape(self, e: ir.Reshape, m: str) -> str:
        dims = "".join(self.x(d, m) + ", " for d in e.shape)
        return f"_reshape({self.x(e.array, m)}, ({dims}))"

    def x_Slice(self, e: ir.Slice, m: str) -> str:
        parts = []
        for p in e.parts:
            if isinstance(p, tuple):
                parts.append("(" + ", ".join(self.x(q, m) for q in p) + ")")
            else:
                parts.append(self.x(p, m))
        site = self.tr.site(e.loc, _array_text(e.array), "view")
        return (f"_view(B, {self.x(e.array, m)}, ({''.join(p + ', ' for p in parts)}), {m}, "
                f"{site})")

    def x_TileOp(self, e: ir.TileOp, m: str) -> str:
        kind = {"load": "read", "store": "write", "atomic": "atomic", "gather": "read",
                "scatter": "write", "gather_operand": "read", "load_operand": "read",
                "scatter_fragments": "write"}.get(e.op, "tile")
        array = _array_text(e.args[0]) if kind != "tile" else ""
        site = self.tr.site(e.loc, array, kind)
        subs = tuple(self.tr.site(x.loc, _array_text(x.args[0]) if x.op == "load" else "",
                                  "read" if x.op == "load" else "tile")
                     for x in tiles.sub_ops(e))
        if e.op == "atomic" and e.attrs.get("order") == "release":
            self.tr.fences = self.tr.releases = True  # (checks.py: what a release publishes)
        k = len(self.tr.tile_ops)
        self.tr.tile_ops.append((e, site, subs))
        args = "".join(", " + self.x(a, m) for a in e.args)
        return f"_tile(B, {m}, {k}{args})"

    def x_MakeTuple(self, e: ir.MakeTuple, m: str) -> str:
        return "(" + "".join(self.x(x, m) + ", " for x in e.items) + ")"

    def x_TupleItem(self, e: ir.TupleItem, m: str) -> str:
        return f"{self.x(e.value, m)}[{e.index}]"

    def x_CallFunc(self, e: ir.CallFunc, m: str) -> str:
        args = "".join(", " + self.x(a, m) for a in e.args)
        return f"{fname(e.func)}(B, {m}{args})"

    def atomic(self, e: ir.Call, m: str, used: bool) -> str:
        target, *vals = e.args
        op = e.name.split(".", 1)[1]
        site = self.tr.site(e.loc, _array_text(target.array), "atomic")
        vs = "".join(self.x(v, m) + ", " for v in vals)
        return (f"_atom(B, {op!r}, {self.x(target.array, m)}, "
                f"{self.indices(target.indices, m)}, ({vs}), {m}, {site}, {used})")

    def x_Call(self, e: ir.Call, m: str) -> str:
        return CALLS[e.name](self, e, m, [self.x(a, m) for a in e.args])


# ---------------------------------------------------------------------------------------------
# intrinsics: CALLS[name](gen, call, mask, operands as Python) -> the Python expression, one
# entry per name of the registry's INTRINSICS (ir/ops.py)
# ---------------------------------------------------------------------------------------------

def _barrier(g: _FunctionGen, e: ir.Call, m: str, args: list[str]) -> str:
    site = g.tr.site(e.loc, "", "barrier")
    kind = _SYNC[e.name]
    extra = f", {args[0]}, {kind!r}" if kind else ""
    return f"B.barrier({m}, {site}{extra})"


def _syncwarp(g: _FunctionGen, e: ir.Call, m: str, args: list[str]) -> str:
    g.tr.warp_sync = True
    site = g.tr.site(e.loc, "", "barrier")
    return f"B.syncwarp({m}, {site}, {args[0]})"


def _warp(g: _FunctionGen, e: ir.Call, m: str, args: list[str]) -> str:
    site = g.tr.site(e.loc, "", "warp")
    if e.name in _SHFL:
        return f"B.shfl({m}, {site}, {_SHFL[e.name]!r}, {', '.join(args)})"
    return f"B.vote({m}, {site}, {_VOTE[e.name]!r}, {', '.join(args)})"


def _match(g: _FunctionGen, e: ir.Call, m: str, args: list[str]) -> str:
    site = g.tr.site(e.loc, "", "warp")
    kind = "any" if e.name == "match_any_sync" else "all"
    return f"B.match({m}, {site}, {kind!r}, {', '.join(args)})"


def _grid_sync(g: _FunctionGen, e: ir.Call, m: str, args: list[str]) -> str:
    g.tr.grid_sync = True  # the launch runs every block in one batch (lockstep.run)
    site = g.tr.site(e.loc, "", "barrier")
    return f"B.grid_sync({m}, {site})"


def _coop(g: _FunctionGen, e: ir.Call, m: str, args: list[str]) -> str:
    """threadtile.coop's primitives (coop.py), with the user's operator as its function."""
    site = g.tr.site(e.loc, "", "barrier")
    k = len(g.tr.coop_ops)
    g.tr.coop_ops.append((e, site))
    op = e.attrs.get("op")
    fn = fname(op) if isinstance(op, ir.Function) else "None"
    return f"_coop(B, {m}, {k}, {fn}{''.join(', ' + a for a in args)})"


def _fence(g: _FunctionGen, e: ir.Call, m: str, args: list[str]) -> str:
    g.tr.fences = True
    return f"B.fence({m})"


CALLS = {
    **{n: (lambda g, e, m, args: f"_M_{e.name}({', '.join(args)})") for n in ops.MATH},
    **{n: (lambda g, e, m, args: f"{_BITS[e.name]}({args[0]})") for n in _BITS},
    **{n: _barrier for n in _SYNC},
    **{n: _warp for n in (*_SHFL, *_VOTE)},
    "match_any_sync": _match, "match_all_sync": _match,
    **{f"atomic.{n}": (lambda g, e, m, args: g.atomic(e, m, used=True)) for n in ATOMICS},
    **{n: _fence for n in ("threadfence", "threadfence_block", "threadfence_system")},
    # (a simulated launch runs after the one before it has ended: nothing to wait for)
    **{n: (lambda g, e, m, args: "None") for n in ("griddepcontrol.wait",
                                                     "griddepcontrol.launch_dependents")},
    "selp": lambda g, e, m, args: f"_sel({args[0]}, {args[1]}, {args[2]})",  # both evaluated
    "min": lambda g, e, m, args: f"_pymin({args[0]}, {args[1]})",
    "max": lambda g, e, m, args: f"_pymax({args[0]}, {args[1]})",
    "raise": lambda g, e, m, args: f"_raise(B, {m}, {args[0]})",
    "bitcast": lambda g, e, m, args: f"_bitcast({args[0]}, {e.args[0].type.name!r}, "
                                     f"{e.type.name!r})",
    **{f"bf16_round_{k}": (lambda g, e, m, args: f"_bf16round({args[0]}, {e.name[-2:]!r})")
       for k in ("rz", "rd", "ru")},
    "abs": lambda g, e, m, args: args[0] if e.type.kind == "u" else f"np.abs({args[0]})",
    "syncwarp": _syncwarp,
    "cg.this_grid": lambda g, e, m, args: "None",
    "cg.grid_sync": _grid_sync,
    "activemask": lambda g, e, m, args: f"B.activemask({m})",
    "lanemask_lt": lambda g, e, m, args: "B.lanemask_lt",
    **{n: (lambda g, e, m, args: f"_C_{e.name.replace('.', '_')}({', '.join(args)})")
       for n in complexops.CALLS},
    **{n: _coop for n in ircoop.NAMES},
}
