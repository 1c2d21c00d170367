"""cuTile's kinds of kernel arguments, as threadtile passes them: lists and frozen dataclass
instances travel as tuples and namedtuples (:func:`as_tuples`), ``ct.Constant[tuple]`` values
as frozen tuples (:func:`frozen`), and the static extents and strides that
``ct.ArrayAnnotation(static_shape_dims=..., static_stride_dims=...)`` asks for become
constants of the specialization (:func:`static_consts`)."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from .. import errors
from ..lang import annotations as param_ann
from ..lang.types import Type


def cutile_arg(a) -> bool:
    """A list or a dataclass instance (or a tuple holding one): arguments cuTile takes that
    travel as tuples."""
    return type(a) is list or _is_dataclass(a) or (
        type(a) is tuple and any(cutile_arg(x) for x in a))


def constant_tuple(v) -> bool:
    return all(isinstance(x, (int, float, bool, np.generic)) or (
        isinstance(x, (tuple, list)) and constant_tuple(x)) for x in v)


def frozen(v):
    """A constant tuple argument as plain Python numbers in tuples (hashable, a cache key)."""
    if isinstance(v, (tuple, list)):
        return tuple(frozen(x) for x in v)
    return v.item() if isinstance(v, np.generic) else v


def _is_dataclass(a) -> bool:
    # (threadtile's own types are dataclasses too: an ArrayType is an example argument's type)
    return hasattr(type(a), "__dataclass_fields__") and not isinstance(a, Type)


_RECORDS: dict[type, type] = {}


def as_tuples(args) -> tuple:
    """cuTile's list and dataclass arguments as the tuples threadtile passes. A list (of
    arrays) is a tuple: each item one parameter, indexed by a constant or by the variable of a
    loop over ``range(len(l))``, which is unrolled. A frozen dataclass instance is a
    namedtuple of its fields (``d.x``, ``d.idx[0]`` read them; its methods and properties are
    not available in the kernel), nested lists and dataclasses likewise."""
    return tuple(_as_tuple(a, f"argument #{i}") for i, a in enumerate(args))


def _as_tuple(a, where: str):
    if type(a) is list:
        return tuple(_as_tuple(x, where) for x in a)
    if type(a) is tuple:
        return tuple(_as_tuple(x, where) for x in a)
    cls = type(a)
    if _is_dataclass(a):
        params = getattr(cls, "__dataclass_params__", None)
        if not getattr(params, "frozen", False):
            raise errors.ArgumentTypeError(
                f"{where}: Only frozen dataclasses are supported as kernel arguments "
                f"({cls.__qualname__} is not frozen: @dataclass(frozen=True))")
        names = [f.name for f in dataclasses.fields(a)]
        rec = _RECORDS.get(cls)
        if rec is None:
            rec = _RECORDS[cls] = collections.namedtuple(cls.__name__, names)
            rec._threadtile_dataclass = cls  # (not a user's namedtuple: _plain)
        return rec(*[_as_tuple(getattr(a, n), f"field {n!r} of {where}") for n in names])
    return a


def static_consts(static_dims: dict, names: list[str], infos) -> dict:
    """The annotated static extents and strides of the arrays ``infos`` describe (one per
    runtime parameter ``names``; ``static_dims`` the annotations of those that have them), as
    entries ``"x.shape[0]": 16``. The arrays of a list must share them (a ValueError)."""
    out = {}
    for name, info in zip(names, infos):
        node = static_dims.get(name)
        kind = getattr(info, "kind", None)
        if node is None or kind not in ("array", "tuple"):
            continue
        # a list of arrays: the values every array shares (cuTile's rule)
        arrays = [info] if kind == "array" else [
            x for x in info.value if getattr(x, "kind", None) == "array"]
        for x in arrays:
            shape_axes, stride_axes = param_ann.static_dims(node, x.ndim, name)
            for attr, axes, vals in (("shape", shape_axes, x.shape),
                                     ("strides", stride_axes, x.strides)):
                for k in axes:
                    key = f"{name}.{attr}[{k}]"
                    if out.setdefault(key, int(vals[k])) != int(vals[k]):
                        what = "shape" if attr == "shape" else "stride"
                        raise ValueError(f"parameter {name!r}: the arrays of the list vary in "
                                         f"static {what} at axis {k} ({out[key]} and "
                                         f"{int(vals[k])})")
    return out


def check_index_width(nodes: dict, names: list[str], infos) -> None:
    """cuTile's rule for a tile kernel's arrays: one not annotated ``ct.IndexedWithInt64`` is
    indexed in 32-bit, so an extent or a stride (in elements) beyond int32 is an
    ``OverflowError`` at the launch ("shape is too big", "stride is too big"). threadtile
    indexes in 64-bit anyway: the check keeps a kernel's launches valid on cuTile. ``nodes``
    are the parameters' annotations, ``infos`` the runtime arguments' ArgInfos."""
    for name, info in zip(names, infos):
        _check_width(nodes.get(name), info, name)


def _check_width(node, info, path: str) -> None:
    kind = getattr(info, "kind", None)
    if kind == "tuple":
        for k, (n, i) in enumerate(zip(param_ann.item_nodes(node, len(info.value)),
                                       info.value)):
            _check_width(n, i, f"{path}[{k}]")
    if kind != "array" or param_ann.wide_index(node):
        return
    for what, vals in (("shape", info.shape), ("stride", info.strides)):
        for axis, v in enumerate(vals):
            if not -2**31 <= v < 2**31:
                raise OverflowError(
                    f"{what} is too big: parameter {path!r} has {what} {v} at axis {axis}, "
                    "beyond int32, and a tile kernel indexes an array in 32-bit unless it is "
                    "annotated ct.IndexedWithInt64")


def check_plain_tuples(args) -> None:
    """cuTile's rule for a tile kernel's arguments: a tuple is a plain ``tuple``, not a
    namedtuple or another subclass (a TypeError naming the argument)."""
    for i, a in enumerate(args):
        _plain(a, f"kernel argument #{i}")


def _plain(a, where: str) -> None:
    if isinstance(a, tuple) and type(a) is not tuple and not hasattr(
            type(a), "_threadtile_dataclass"):
        raise TypeError(f"Invalid {where}: '{type(a).__name__}' is a subclass of 'tuple'. Only "
                        "plain tuples are accepted. (pass tuple(value), or a frozen dataclass)")
    if type(a) is tuple:
        for k, x in enumerate(a):
            _plain(x, f"item #{k} of {where}")


def constant_tuple_error(v, where: str) -> TypeError | None:
    """The TypeError for a ``Constant`` tuple argument holding something that is not a number
    (an array...), naming the item; None where every item is one."""
    for k, x in enumerate(v):
        if isinstance(x, (tuple, list)):
            e = constant_tuple_error(x, f"item #{k} of {where}")
            if e is not None:
                return e
        elif not isinstance(x, (int, float, bool, np.generic)):
            return TypeError(f"Invalid item #{k} of {where}: Could not interpret object of type "
                             f"'{type(x).__name__}' as a constant. (a Constant tuple holds "
                             "numbers; pass arrays as parameters of their own)")
    return None
