"""Frozen dataclasses in kernels (cuTile's): ``FooBar(2, bar=7)`` is a compile-time tuple of
its fields (a ``Tup`` with the field names and the class), ``fb.foo`` reads a field,
``fb.NUMBER`` a class attribute, ``dataclasses.replace(fb, bar=...)`` makes a new one.
A dataclass instance passed to a kernel arrives as a namedtuple of its fields (jit.py).

Refused, with cuTile's words (``ct.TileTypeError``): classes that are not frozen, that define
``__init__`` or ``__new__``, that are not dataclasses themselves but derive from one, fields
with ``init=False`` or a ``default_factory``. Methods and properties are not available.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import types
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from . import dataclassdunders
from .values import Py, Tup

if TYPE_CHECKING:
    from .lower import Lowerer


def is_dataclass_type(obj) -> bool:
    return isinstance(obj, type) and hasattr(obj, "__dataclass_fields__")


def _generated_init(cls) -> bool:
    """Whether ``cls.__init__`` is the one ``@dataclass`` generated: compiled from a string,
    taking exactly the init fields."""
    init = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)
    if code is None or code.co_filename != "<string>":
        return False
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    params = list(inspect.signature(init).parameters)
    return params[1:] == names


def _check(lw: Lowerer, cls, node) -> list:
    """The init fields of ``cls``, or cuTile's error for a class kernels cannot create."""
    name = cls.__qualname__
    if "__dataclass_fields__" not in cls.__dict__:
        raise lw.error(node, "Non-dataclass subclasses of a dataclass are not supported",
                       f"{name} derives from a dataclass without being one",
                       cls=TileCodeTypeError)
    if not getattr(cls.__dataclass_params__, "frozen", False):
        raise lw.error(node, "Only frozen dataclasses are supported",
                       f"declare {name} with @dataclass(frozen=True)", cls=TileCodeTypeError)
    if any("__new__" in c.__dict__ for c in cls.__mro__[:-1]):
        raise lw.error(node, "Dataclasses with custom __new__ are not supported",
                       cls=TileCodeTypeError)
    if not cls.__dataclass_params__.init or not _generated_init(cls):
        raise lw.error(node, "Dataclass instance creation is only supported for dataclasses "
                             "with a default generated __init__() method",
                       cls=TileCodeTypeError)
    fields = dataclasses.fields(cls)
    for f in fields:
        if not f.init:
            raise lw.error(node, "Dataclasses with init=False fields are not supported",
                           cls=TileCodeTypeError)
        if f.default_factory is not dataclasses.MISSING:
            raise lw.error(node, "Dataclasses with default_factory fields are not supported",
                           cls=TileCodeTypeError)
    return list(fields)


def make(lw: Lowerer, cls, node: ast.Call) -> Tup:
    """``cls(args)``: the fields bound as the generated ``__init__`` binds them."""
    fields = _check(lw, cls, node)
    names = [f.name for f in fields]
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords):
        raise lw.unsupported(node, "*args or **kwargs in a dataclass's creation")
    if len(node.args) > len(names):
        raise lw.error(node, f"{cls.__name__}() takes {len(names)} arguments, got "
                             f"{len(node.args)}", cls=TileCodeTypeError)
    values: dict[str, object] = dict(zip(names, (lw.expr(a) for a in node.args)))
    for k in node.keywords:
        if k.arg not in names:
            raise lw.error(node, f"{cls.__name__}() has no field {k.arg!r}",
                           cls=TileCodeTypeError)
        if k.arg in values:
            raise lw.error(node, f"{cls.__name__}() got {k.arg!r} twice", cls=TileCodeTypeError)
        values[k.arg] = lw.expr(k.value)
    for f in fields:
        if f.name not in values:
            if f.default is dataclasses.MISSING:
                raise lw.error(node, f"{cls.__name__}() is missing field {f.name!r}",
                               cls=TileCodeTypeError)
            values[f.name] = lw.py_to_value(f.default, node, wrap=True)
    out = Tup([values[n] for n in names], tuple(names), cls)
    dataclassdunders.post_init(lw, out, node)
    return out


def replace(lw: Lowerer, node: ast.Call) -> Tup:
    """``dataclasses.replace(obj, field=value, ...)``."""
    if len(node.args) != 1 or any(k.arg is None for k in node.keywords):
        raise lw.error(node, "dataclasses.replace() takes a dataclass and field=value "
                             "keywords", cls=TileCodeTypeError)
    base = lw.expr(node.args[0])
    if not isinstance(base, Tup) or base.cls is None:
        raise lw.error(node.args[0], "dataclasses.replace() takes a dataclass instance",
                       cls=TileCodeTypeError)
    items = list(base.items)
    for k in node.keywords:
        if k.arg not in base.names:
            raise lw.error(node, f"Dataclass '{base.cls.__name__}' has no such field "
                                 f"'{k.arg}'", cls=TileCodeTypeError)
        items[base.names.index(k.arg)] = lw.expr(k.value)
    return Tup(items, base.names, base.cls)


def class_attr(lw: Lowerer, base: Tup, attr: str, node):
    """``fb.NUMBER``: a class attribute of a dataclass instance's class, at compile time."""
    try:
        obj = getattr(base.cls, attr)
    except AttributeError:
        raise lw.error(node, f"Dataclass '{base.cls.__name__}' has no attribute "
                             f"'{attr}'", cls=TileCodeTypeError) from None
    raw = inspect.getattr_static(base.cls, attr, None)
    if isinstance(obj, types.FunctionType) and not isinstance(raw, (staticmethod, classmethod)):
        from .inline import BoundMethod
        return Py(BoundMethod(obj, base))  # obj.method(...): inlined with self = obj
    if isinstance(raw, property):  # fb.prop: its getter, inlined with self = fb
        return dataclassdunders.prop(lw, base, raw.fget, node)
    if isinstance(obj, property) or callable(obj) and not isinstance(obj, type):
        raise lw.unsupported(node, f"the method or property {base.cls.__name__}.{attr}",
                             "kernels read a dataclass's fields and class constants; call a "
                             "function of the fields instead")
    return lw.py_to_value(obj, node, wrap=True)

