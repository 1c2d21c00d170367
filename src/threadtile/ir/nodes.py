"""The typed IR: a structured tree of statements over typed expressions.

Both backends consume this tree: the CUDA C++ emitter prints it, the simulator executes it over
NumPy lanes. It is structured (if/for/while, not a CFG) because both targets are: CUDA C++ is,
and lockstep simulation needs the structure to manage execution masks.

Every node carries a :class:`Loc`. Expressions carry their :class:`Type`. Names of variables
are those of the Python source (renamed only on collision), so the emitted C++ reads like it.

Calls of intrinsics (``Call``) and tile operations (``TileOp``) name an entry of the registry
in :mod:`threadtile.ir.ops`, which says their operands, attributes and typing rule; the
backends spell and run them by tables keyed by those names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..lang.types import ArrayType, Scalar, Type


@dataclass(frozen=True)
class Loc:
    """A source position: file, 1-based line, 0-based columns, and the enclosing function."""

    filename: str
    line: int
    col: int = 0
    end_col: int | None = None
    function: str = "<kernel>"

    def __str__(self) -> str:
        cols = f", col {self.col + 1}" + (f"-{self.end_col}" if self.end_col else "")
        return f'"{self.filename}", line {self.line}{cols}, in {self.function}'


# ---------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------

@dataclass(eq=False)
class Expr:
    type: Type
    loc: Loc


@dataclass(eq=False)
class Const(Expr):
    """A literal. ``weak`` marks Python literals, which adopt the other operand's type."""

    value: Any
    weak: bool = False


@dataclass(eq=False)
class Var(Expr):
    """A read of a local variable or parameter."""

    name: str


@dataclass(eq=False)
class BinOp(Expr):
    """Arithmetic: + - * / // % ** & | ^ << >> (operands already converted to ``type``,
    except ``**`` with an integer exponent and shifts)."""

    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class UnaryOp(Expr):
    op: str  # '-', '+', '~', 'not'
    operand: Expr


@dataclass(eq=False)
class Compare(Expr):
    """One comparison; chains are lowered to ``and`` of comparisons. Result type bool."""

    op: str  # '<' '<=' '>' '>=' '==' '!='
    left: Expr
    right: Expr


@dataclass(eq=False)
class Logical(Expr):
    """Short-circuit ``and``/``or`` over bool operands."""

    op: str  # 'and' | 'or'
    left: Expr
    right: Expr


@dataclass(eq=False)
class Select(Expr):
    """``a if cond else b``; only the chosen side is evaluated."""

    cond: Expr
    if_true: Expr
    if_false: Expr


@dataclass(eq=False)
class Cast(Expr):
    value: Expr


@dataclass(eq=False)
class Special(Expr):
    """A special register: tid.x, ntid.y, ctaid.z, nctaid.x, laneid, warpsize."""

    reg: str


@dataclass(eq=False)
class Load(Expr):
    """``array[i, j, ...]`` with one int64 index per axis (all axes indexed)."""

    array: Expr
    indices: list[Expr]


@dataclass(eq=False)
class ArrayDim(Expr):
    """``array.shape[axis]`` (``attr='shape'``) or ``array.strides[axis]`` in elements."""

    array: Expr
    attr: str
    axis: int


@dataclass(eq=False)
class Slice(Expr):
    """A view of ``array``: per axis either an int index (axis dropped) or a (start, stop, step)
    triple of int64 expressions, already clamped by the frontend's rules."""

    array: Expr
    parts: list[Expr | tuple[Expr, Expr, Expr]]


@dataclass(eq=False)
class Field(Expr):
    """Field ``name`` of the records of ``array`` (a record array): a view of the same memory
    with the field's dtype (``type``), the field's subarray ``shape`` appended to the array's
    axes; ``offset`` is the field's byte offset in a record (lang/records.py). A bytes or
    unicode field is its code units (uint8, or uint32 for UTF-32), the last axis."""

    array: Expr
    name: str
    offset: int
    shape: tuple[int, ...]
    text: bool = False  # a bytes/unicode field seen as its code units (only assigned constants)


@dataclass(eq=False)
class Reshape(Expr):
    """``array.reshape(shape)`` of a C-contiguous array: the same memory as a C-contiguous
    array of ``shape`` (int64 values; one of them may be -1, the length the size leaves). A
    shape of another size is numba's ValueError in the simulator."""

    array: Expr
    shape: list[Expr]


@dataclass(eq=False)
class ViewAs(Expr):
    """``array.view(dtype)`` of a C-contiguous array: its bytes as elements of ``type``'s
    dtype, the last axis as long as its bytes make (NumPy's rule)."""

    array: Expr


@dataclass(eq=False)
class RawMemory(Expr):
    """``array.get_raw_memory()`` (cuTile): the memory from ``array``'s first element on, as a
    1-d C-contiguous array of its dtype, indexed by element offsets (no shape, no strides)."""

    array: Expr


@dataclass(eq=False)
class Call(Expr):
    """An intrinsic (math, atomics, warp ops, barriers); ``name`` keys the intrinsic tables.
    ``attrs`` holds the compile-time parameters of the few that have some (the block-wide
    primitives of ``threadtile.coop``: the block shape, items per thread, the operator)."""

    name: str
    args: list[Expr]
    attrs: dict = field(default_factory=dict)


@dataclass(eq=False)
class TileOp(Expr):
    """A block-collective tile operation (docs/tiles.md): every thread of the block executes it
    together. ``op`` names an entry of ``ops.TILE_OPS``, which the backends' tables follow
    (``backends/cuda/tiles.py``, ``backends/sim/tiles.py``); ``args`` are tiles or uniform
    scalars; ``attrs`` holds the compile-time parameters (axes, shapes, padding mode...). The
    type is a ``TileType``, a scalar (``item``) or void (``store``, ``printf``)."""

    op: str
    args: list[Expr]
    attrs: dict = field(default_factory=dict)


@dataclass(eq=False)
class MakeTuple(Expr):
    """A tuple value built from ``items`` (type a ``TupleType``): what a device function
    returns with ``return a, b``, a tuple passed to one."""

    items: list[Expr]


@dataclass(eq=False)
class TupleItem(Expr):
    """Item ``index`` of the tuple-valued ``value`` (a parameter, a variable, a call)."""

    value: Expr
    index: int


@dataclass(eq=False)
class CallFunc(Expr):
    """A call of another jitted (device) function, specialized for these argument types."""

    func: Function
    args: list[Expr]


# ---------------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------------

@dataclass(eq=False)
class Stmt:
    loc: Loc


@dataclass(eq=False)
class Assign(Stmt):
    """``name = value``; the variable's type is fixed for the whole function."""

    name: str
    value: Expr


@dataclass(eq=False)
class Store(Stmt):
    """``array[indices] = value`` (value already of the array's dtype)."""

    array: Expr
    indices: list[Expr]
    value: Expr


@dataclass(eq=False)
class ExprStmt(Stmt):
    value: Expr


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then: list[Stmt]
    orelse: list[Stmt] = field(default_factory=list)


@dataclass(eq=False)
class For(Stmt):
    """``for var in range(start, stop, step)``; ``step`` is evaluated once, before the loop."""

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: list[Stmt]


@dataclass(eq=False)
class While(Stmt):
    cond: Expr
    body: list[Stmt]


@dataclass(eq=False)
class Break(Stmt):
    pass


@dataclass(eq=False)
class Continue(Stmt):
    pass


@dataclass(eq=False)
class Return(Stmt):
    value: Expr | None = None


@dataclass(eq=False)
class ArrayDecl(Stmt):
    """A shared, local or constant array bound to variable ``name``.

    ``space`` is shared | local | const. ``shape`` holds ints; a shared array with ``dynamic``
    has its size set at launch (``shape == (0,)`` in the source). ``init`` is the NumPy data of a
    constant array.
    """

    name: str
    type: ArrayType
    shape: tuple[int, ...]
    dynamic: bool = False
    init: Any = None


@dataclass(frozen=True, eq=False)
class Captured:
    """The ``init`` of a captured global device array's declaration: its address and its
    strides in elements, and the object itself (kept alive while the kernel may run)."""

    ptr: int
    strides: tuple[int, ...]
    owner: Any = None


@dataclass(eq=False)
class Print(Stmt):
    """``print(...)``: texts and scalar values, concatenated (the frontend puts the spaces
    between arguments and the punctuation of tuples in as texts); one line."""

    items: list[str | Expr]


# ---------------------------------------------------------------------------------------------
# Functions
# ---------------------------------------------------------------------------------------------

@dataclass(eq=False)
class Param:
    name: str
    type: Type
    constant: Any = None  # the value of a compile-time constant parameter, else None
    is_constant: bool = False
    weak: bool = False  # a device-function parameter given a Python literal (see typing.py)
    # an array parameter's extents and strides fixed at compile time (cuTile's
    # ArrayAnnotation(static_shape_dims=..., static_stride_dims=...)): ((attr, axis, value), ...)
    static_dims: tuple = ()
    # an array parameter of a cuTile kernel annotated ct.IndexedWithInt64: its shape and
    # strides are int64 there (int32 otherwise, as cuTile has them)
    wide_index: bool = False


@dataclass(eq=False)
class Function:
    """One specialization of a kernel or device function."""

    name: str  # the C++ name (unique per specialization)
    pyname: str
    params: list[Param]
    body: list[Stmt]
    return_type: Type
    locals: dict[str, Type]
    loc: Loc
    is_kernel: bool
    callees: list[Function] = field(default_factory=list)
    uses_dynamic_shared: bool = False
    source_file: str = ""
    pyfunc: Any = None  # the Python function (the simulator's python mode calls it)
    return_weak: bool = False  # every return value is a weak literal type (see typing.py)
    # a tile variable split off another by loop (ir/webs.py) -> the variable it came from
    twins: dict[str, str] = field(default_factory=dict)

    def fresh_name(self, base: str, sep: str = "") -> str:
        """``base``, or ``base`` with ``sep`` and the first number after it that names no
        local or parameter of this function yet."""
        name, k = base, 0
        while name in self.locals or any(p.name == name for p in self.params):
            k += 1
            name = f"{base}{sep}{k}"
        return name

    def all_functions(self) -> list[Function]:
        """This function's callees (transitively, each once, callees first), then itself."""
        seen: dict[int, Function] = {}

        def visit(f: Function) -> None:
            if id(f) in seen:
                return
            for c in f.callees:
                visit(c)
            seen[id(f)] = f

        visit(self)
        return list(seen.values())


@dataclass(eq=False)
class Module:
    """What one compilation produces: the kernel, the device functions it reaches (in
    ``kernel.all_functions()``) and the constant arrays they read."""

    kernel: Function
    const_arrays: list[ArrayDecl]
    threads: int | None = None  # threads per block, when fixed at compile time (tile ops)
    occupancy: int | None = None  # blocks per SM to fit registers for (with threads fixed)
    # the occupancy hint as the kernel gives it; ``occupancy`` is scaled down where the
    # compiler grew the block (blockfit.py then tries the hint's own blocks first)
    occupancy_asked: int | None = None
    # jit(launch_bounds=...): the most threads per block (, the fewest blocks per SM, the most
    # blocks per cluster), for a kernel whose block is not fixed
    launch_bounds: tuple[int, ...] | None = None
    # global device arrays the kernel captured (``__cuda_array_interface__`` objects it read
    # as globals): read and written in place, at the address they had when it was compiled
    captured: list[ArrayDecl] = field(default_factory=list)
    # jit(debug=True): a raise on the GPU is reported to the host, which raises it after the
    # launch (numba's debug mode); without it the raising thread only stops
    report_raises: bool = False


def walk_stmts(body: list[Stmt]):
    """Every statement of ``body``, nested ones included, in source order."""
    for s in body:
        yield s
        if isinstance(s, If):
            yield from walk_stmts(s.then)
            yield from walk_stmts(s.orelse)
        elif isinstance(s, (For, While)):
            yield from walk_stmts(s.body)


def rewrite_nested(s: Stmt, block) -> None:
    """Replace the statement lists nested in ``s`` (an ``if``'s branches, a loop's body) by
    ``block`` of each: a pass that rewrites a list of statements descends with it."""
    if isinstance(s, If):
        s.then, s.orelse = block(s.then), block(s.orelse)
    elif isinstance(s, (For, While)):
        s.body = block(s.body)


def stmt_exprs(s: Stmt):
    """The expressions statement ``s`` holds itself (not those of nested statements)."""
    for k, v in vars(s).items():
        if k in ("body", "then", "orelse", "loc", "type", "init"):
            continue
        if isinstance(v, Expr):
            yield v
        elif isinstance(v, list):
            yield from (x for x in v if isinstance(x, Expr))


def walk_expr(e: Expr):
    """``e`` and every expression inside it, parents first (a tile operation's compile-time
    ``attrs`` are not operands and are not walked)."""
    yield e
    for k, v in vars(e).items():
        if k in ("type", "loc", "func", "attrs"):
            continue
        if isinstance(v, Expr):
            yield from walk_expr(v)
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, Expr):
                    yield from walk_expr(x)
                elif isinstance(x, tuple):
                    for y in x:
                        yield from walk_expr(y)


def walk_function_exprs(f: Function):
    """Every expression of function ``f`` (not its callees')."""
    for s in walk_stmts(f.body):
        for e in stmt_exprs(s):
            yield from walk_expr(e)


def walk_module_exprs(module: Module):
    """Every expression of every function of ``module``."""
    for f in module.kernel.all_functions():
        yield from walk_function_exprs(f)


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("Any", "annotations",
                                                                 "dataclass", "field")]
_ = Scalar  # re-exported for users of this module
