"""cuTile's kernel parameter annotations: ``ct.Array``, ``ArrayAnnotation``, ``ScalarAnnotation``,
``ListAnnotation`` and the aliases ``IndexedWithInt64`` and ``ScalarInt64``.

They ride on ``typing.Annotated``: ``def k(big: ct.IndexedWithInt64, n: ct.ScalarInt64)``, or
``x: Annotated[ct.Array, ct.ArrayAnnotation(static_shape_dims=(0,))]``, also inside tuple
annotations (``pair: tuple[ct.IndexedWithInt64, torch.Tensor]``). :func:`parameter_nodes` reads
a kernel's annotations into one tree per parameter (:class:`Leaf`, :class:`Each`,
:class:`Items`); ``jit.Kernel`` applies them to the types a launch specializes for
(:func:`apply`):

- ``ScalarInt64`` (``ScalarAnnotation(dtype=int64)``): the parameter is a strictly typed int64
  (a tile of int32 plus it is int64, where an unannotated integer argument is loosely typed and
  adopts the tile's dtype); the argument must be an integer;
- ``IndexedWithInt64`` (``ArrayAnnotation(index_dtype=int64)``): the array's shape, strides and
  index arithmetic are 64-bit. threadtile indexes every array in 64-bit (numba's ``intp``), but
  a tile kernel's launch refuses, as cuTile's does, an array without it whose extents or
  strides do not fit int32 (an ``OverflowError``: ``runtime/cutileargs.check_index_width``);
  the annotation is checked to sit on an array parameter;
- ``ArrayAnnotation(static_shape_dims=..., static_stride_dims=...)``: those extents and strides
  are compile-time constants of the specialization (each value compiles its own variant), so
  ``ct.static_assert(x.strides[1] == 1)`` can see them.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Annotated, Any, TypeVar, get_args, get_origin

from .types import ArrayType, Scalar, TupleType, Type, int32, int64

_T = TypeVar("_T")


class Array:
    """A global array as a kernel parameter (cuTile's ``ct.Array``): an annotation
    (``x: ct.Array``, ``Annotated[ct.Array, ct.ArrayAnnotation(...)]``) with no effect of its
    own. In a kernel an array has ``.dtype``, ``.shape``, ``.strides`` (in elements),
    ``.ndim``; any object with ``__cuda_array_interface__``, DLPack or NumPy's array protocol
    is one."""

    def __init__(self, *args, **kwargs):
        raise TypeError("ct.Array is a kernel parameter annotation; arrays come from the host "
                        "(torch, CuPy, NumPy, threadtile's device arrays)")


def _dims(name: str, dims) -> tuple[int, ...]:
    if not isinstance(dims, tuple):
        raise TypeError(f"`{name}` must be a tuple of integers")
    for i, d in enumerate(dims):
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"Element #{i} of `{name}` must be int, got {d!r}")
    return dims


@dataclasses.dataclass(frozen=True, kw_only=True)
class ArrayAnnotation:
    """Facts about an array parameter: ``index_dtype`` (int32 or int64: the width of its shape,
    strides and index arithmetic; threadtile's are always 64-bit), ``static_shape_dims`` and
    ``static_stride_dims`` (axes whose extent or stride becomes a compile-time constant of the
    specialization, negative axes counting from the end)."""

    index_dtype: Any = int32
    static_shape_dims: tuple = ()
    static_stride_dims: tuple = ()

    def __post_init__(self):
        if self.index_dtype not in (int32, int64):
            raise ValueError(f"`index_dtype` must be int32 or int64, got {self.index_dtype}")
        _dims("static_shape_dims", self.static_shape_dims)
        _dims("static_stride_dims", self.static_stride_dims)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScalarAnnotation:
    """The integer dtype of a scalar parameter: ``int32`` or ``int64`` (``ScalarInt64``)."""

    dtype: Any

    def __post_init__(self):
        if self.dtype not in (int32, int64):
            raise ValueError(f"`dtype` must be int32 or int64, got {self.dtype}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ListAnnotation:
    """The element annotation of a list-of-arrays parameter: an :class:`ArrayAnnotation`, or an
    ``Annotated`` type holding exactly one (``ListAnnotation(element=ct.IndexedWithInt64)``).
    threadtile takes list (and tuple) arguments as tuples, their arrays each with this
    annotation."""

    element: Any

    def __post_init__(self):
        el = self.element
        if get_origin(el) is Annotated:
            found = [m for m in el.__metadata__ if isinstance(m, ArrayAnnotation)]
            if len(found) != 1:
                raise TypeError(f"`element` must contain exactly one ArrayAnnotation, found "
                                f"{len(found)} in {el!r}")
            el = found[0]
            object.__setattr__(self, "element", el)
        if not isinstance(el, ArrayAnnotation):
            raise TypeError(f"`element` must be an ArrayAnnotation, got {type(el).__name__}")


IndexedWithInt64 = Annotated[_T, ArrayAnnotation(index_dtype=int64)]
"""An array parameter indexed in 64-bit (cuTile's alias). Every array is, in threadtile."""

ScalarInt64 = Annotated[_T, ScalarAnnotation(dtype=int64)]
"""An integer parameter typed int64 (strictly: it does not adopt a tile's dtype)."""


# ---- the annotation of each parameter ---------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Leaf:
    """What one parameter (or tuple item) is annotated with: at most one of these."""

    constant: bool = False
    scalar: ScalarAnnotation | None = None
    array: ArrayAnnotation | None = None
    list: ListAnnotation | None = None

    def check(self) -> None:
        given = [what for what, v in (
            ("Constant annotation", self.constant),
            ("ScalarAnnotation/ScalarInt64", self.scalar),
            ("ArrayAnnotation/IndexedWithInt64", self.array),
            ("ListAnnotation", self.list)) if v]
        if len(given) > 1:
            raise TypeError(f"{given[0]} cannot be combined with {given[1]}")

    @property
    def empty(self) -> bool:
        return not (self.constant or self.scalar or self.array or self.list)


@dataclasses.dataclass(frozen=True)
class Each:
    """``tuple[X, ...]``: every item annotated ``X``."""

    each: Any


@dataclasses.dataclass(frozen=True)
class Items:
    """``tuple[X, Y]``: one annotation per item."""

    items: tuple


EMPTY = Leaf()


def _is_constant(a) -> bool:
    return getattr(a, "_threadtile_constant", False) is True


def node_of(a) -> Leaf | Each | Items:
    """The annotation tree of one annotation object."""
    if _is_constant(a):
        inner = getattr(a, "inner", None)
        sub = node_of(inner) if inner is not None else EMPTY
        if _has_typed(sub):
            what = _first_typed(sub)
            raise TypeError(f"Constant annotation cannot be combined with {what}")
        return Leaf(constant=True)
    origin = get_origin(a)
    if origin is Annotated:
        scalar = array = lst = None
        constant = False
        for m in a.__metadata__:
            if isinstance(m, ScalarAnnotation):
                scalar = m
            elif isinstance(m, ArrayAnnotation):
                array = m
            elif isinstance(m, ListAnnotation):
                lst = m
            elif _is_constant(m):
                constant = True
        leaf = Leaf(constant, scalar, array, lst)
        leaf.check()
        if leaf.empty:
            return node_of(get_args(a)[0])
        return leaf
    if origin is tuple:
        args = get_args(a)
        if len(args) == 2 and args[1] is Ellipsis:
            sub = node_of(args[0])
            return EMPTY if sub == EMPTY else Each(sub)
        items = tuple(node_of(x) for x in args)
        return EMPTY if all(i == EMPTY for i in items) else Items(items)
    return EMPTY


def _has_typed(n) -> bool:
    return _first_typed(n) is not None


def _first_typed(n) -> str | None:
    if isinstance(n, Leaf):
        if n.scalar:
            return "ScalarAnnotation/ScalarInt64"
        if n.array:
            return "ArrayAnnotation/IndexedWithInt64"
        if n.list:
            return "ListAnnotation"
        return None
    for s in ((n.each,) if isinstance(n, Each) else n.items):
        w = _first_typed(s)
        if w:
            return w
    return None


def parameter_nodes(fn) -> dict[str, Leaf | Each | Items]:
    """The annotation tree of each of ``fn``'s parameters that carries one of cuTile's
    annotations (parameters without one are left out); a TypeError where an annotation
    combines two kinds (``Constant`` with ``ScalarInt64``...)."""
    try:
        ann = inspect.get_annotations(fn, eval_str=True)
    except Exception:  # an annotation that does not evaluate: nothing to apply
        return {}
    out = {}
    for name, a in ann.items():
        if name == "return" or isinstance(a, str):
            continue
        n = node_of(a)
        if n != EMPTY and not (isinstance(n, Leaf) and n.constant):
            out[name] = n
    return out


def _err(path: str, msg: str) -> TypeError:
    return TypeError(f"parameter {path!r}: {msg}")


def apply(node, t: Type, path: str) -> Type:
    """The parameter type an argument of type ``t`` takes under annotation ``node``: int64 for
    a ``ScalarInt64`` integer; the type itself for an annotated array (after checking it is
    one, and its static axes in range). A TypeError where the annotation does not fit."""
    if isinstance(node, Leaf):
        if node.scalar is not None:
            if not (isinstance(t, Scalar) and (t.is_int or t.kind == "b")):
                raise _err(path, "ScalarAnnotation/ScalarInt64 can only be applied to a "
                                 f"non-constant integer scalar parameter, got {t}")
            return node.scalar.dtype
        if node.array is not None:
            if not isinstance(t, ArrayType):
                raise _err(path, "ArrayAnnotation/IndexedWithInt64 can only be applied to an "
                                 f"array or a list-of-array parameter, got {t}")
            for what, dims in (("static_shape_dims", node.array.static_shape_dims),
                               ("static_stride_dims", node.array.static_stride_dims)):
                seen = set()
                for d in dims:
                    if not -t.ndim <= d < t.ndim:
                        raise ValueError(f"parameter {path!r}: {what} contains axis {d}, out of "
                                         f"range for an array of {t.ndim} dimensions")
                    if d % t.ndim in seen:
                        raise ValueError(f"parameter {path!r}: {what} has a duplicate axis {d}")
                    seen.add(d % t.ndim)
            return t
        if node.list is not None:
            if not isinstance(t, TupleType):
                raise _err(path, f"ListAnnotation applies to a list of arrays, got {t}")
            return TupleType(tuple(apply(Leaf(array=node.list.element), x, f"{path}[{i}]")
                                   for i, x in enumerate(t.items)), t.names)
        return t
    if not isinstance(t, TupleType):
        raise _err(path, f"annotated as a tuple, got {t}")
    if isinstance(node, Each):
        subs = [node.each] * len(t.items)
    else:
        if len(node.items) != len(t.items):
            raise _err(path, f"Received a tuple of length {len(t.items)} for a parameter "
                             f"annotated as a tuple of length {len(node.items)}")
        subs = list(node.items)
    return TupleType(tuple(apply(s, x, f"{path}[{i}]") for i, (s, x) in
                           enumerate(zip(subs, t.items))), t.names)


def _array_of(node) -> ArrayAnnotation | None:
    """The ArrayAnnotation of an array parameter, or of the items of a list parameter."""
    if not isinstance(node, Leaf):
        return None
    return node.array if node.array is not None else (
        node.list.element if node.list is not None else None)


def item_nodes(node, n: int) -> list:
    """The annotations of the ``n`` items of a tuple (or list) parameter annotated ``node``:
    a list's element annotation for each array, ``tuple[X, ...]``'s ``X``, ``tuple[X, Y]``'s
    own (EMPTY where there is none or the lengths differ: :func:`apply` reports those)."""
    if isinstance(node, Leaf):
        return [Leaf(array=node.list.element) if node.list is not None else EMPTY] * n
    if isinstance(node, Each):
        return [node.each] * n
    if isinstance(node, Items) and len(node.items) == n:
        return list(node.items)
    return [EMPTY] * n


def wide_index(node) -> bool:
    """Whether an array parameter is annotated ``IndexedWithInt64`` (``ArrayAnnotation(
    index_dtype=int64)``): cuTile indexes the others with int32."""
    a = _array_of(node)
    return a is not None and a.index_dtype == int64


def has_static_dims(node) -> bool:
    a = _array_of(node)
    return a is not None and bool(a.static_shape_dims or a.static_stride_dims)


def static_dims(node, ndim: int, path: str = "") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (non-negative) axes of a ``static_shape_dims``/``static_stride_dims`` annotation
    for an array of ``ndim`` dimensions (a ValueError for an axis out of range); for a list
    parameter, those of its arrays."""
    a = _array_of(node)
    if a is None:
        return (), ()
    out = []
    for what, dims in (("static_shape_dims", a.static_shape_dims),
                       ("static_stride_dims", a.static_stride_dims)):
        for d in dims:
            if not -ndim <= d < ndim:
                raise ValueError(f"parameter {path!r}: {what} contains axis {d}, out of range "
                                 f"for an array of {ndim} dimensions")
        out.append(tuple(sorted({d % ndim for d in dims})))
    return out[0], out[1]



def constant_items(node, value, path: tuple = ()) -> list[tuple[tuple[int, ...], Any]]:
    """``(path, value)`` of each item of a tuple argument that its annotation marks
    ``Constant`` (``cfg: tuple[ct.Constant[int], int]``): a compile-time value of the
    specialization, the rest of the tuple a runtime value. A TypeError where such an item is
    not a number."""
    if isinstance(node, Leaf):
        if not (node.constant and path):
            return []
        if hasattr(value, "item") and not isinstance(value, (int, float, bool)):
            value = value.item()  # a NumPy number
        if not isinstance(value, (int, float, bool)):
            raise TypeError(f"item {list(path)} of a tuple argument is annotated Constant and "
                            f"must be an int, float or bool, got {type(value).__name__}")
        return [(path, value)]
    if not isinstance(value, (tuple, list)):
        return []
    subs = [node.each] * len(value) if isinstance(node, Each) else list(node.items)
    if len(subs) != len(value):
        return []  # apply() reports the lengths
    out = []
    for k, (s, x) in enumerate(zip(subs, value)):
        out += constant_items(s, x, path + (k,))
    return out


def has_constant_items(node) -> bool:
    """Whether a tuple parameter's annotation marks some of its items ``Constant``."""
    if isinstance(node, Leaf):
        return False
    subs = (node.each,) if isinstance(node, Each) else node.items
    return any(isinstance(s, Leaf) and s.constant or has_constant_items(s) for s in subs)


def item_key(name: str, path: tuple) -> str:
    """The specialization constant of a tuple parameter's ``Constant`` item: ``"cfg@0,1"``."""
    return f"{name}@{','.join(str(k) for k in path)}"


def has_scalar(node) -> bool:
    """Whether an annotation (tree) types a scalar strictly (``ScalarInt64`` somewhere)."""
    if node is None:
        return False
    if isinstance(node, Leaf):
        return node.scalar is not None
    subs = (node.each,) if isinstance(node, Each) else node.items
    return any(has_scalar(s) for s in subs)
