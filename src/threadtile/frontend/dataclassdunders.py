"""The methods Python calls implicitly on a frozen dataclass value in a kernel (cuTile's):
``d(7)`` calls ``__call__``, ``d[i]`` ``__getitem__``, ``d[i] = v`` ``__setitem__``,
``d.prop`` a ``@property``'s getter, and ``D(...)`` runs ``__post_init__`` after binding the
fields. Each is a Python function of the class (or of a base class: the first one in the
method resolution order, as Python finds it), inlined with ``self`` bound to the value.

A value whose class lacks the method is refused with cuTile's words (``ct.TileTypeError``).
"""

from __future__ import annotations

import ast
import types
from typing import TYPE_CHECKING

from ..errors import TileCodeTypeError
from .values import Tup

if TYPE_CHECKING:
    from .lower import Lowerer


def is_instance(v) -> bool:
    """Whether ``v`` is a frozen dataclass instance (a ``Tup`` that carries its class)."""
    return isinstance(v, Tup) and v.cls is not None


def find(cls, name: str):
    """The function ``name`` that ``cls`` defines or inherits (not ``object``'s), or None."""
    for c in cls.__mro__[:-1]:
        if name in c.__dict__:
            return c.__dict__[name]
    return None


def _call(lw: Lowerer, fn, self_value: Tup, args: list, node):
    from .inline import call_function
    return call_function(lw, fn, [self_value] + args, {}, node)


def _function(lw: Lowerer, v: Tup, name: str, node, what: str):
    fn = find(v.cls, name)
    if isinstance(fn, types.FunctionType):
        return fn
    if fn is not None:
        raise lw.unsupported(node, f"{v.cls.__name__}.{name} (not a plain Python function)",
                             "define it with def in the class")
    raise lw.error(node, what, cls=TileCodeTypeError)


def call(lw: Lowerer, v: Tup, node: ast.Call):
    """``d(args)``: ``type(d).__call__(d, args)``."""
    fn = _function(lw, v, "__call__", node, f"Cannot call an object of type {v.cls.__name__}")
    from .inline import call_args, call_function
    args, kwargs = call_args(lw, node)
    return call_function(lw, fn, [v] + args, kwargs, node)


def getitem(lw: Lowerer, v: Tup, key, node):
    """``d[key]``: ``type(d).__getitem__(d, key)``."""
    fn = _function(lw, v, "__getitem__", node,
                   f"'{v.cls.__qualname__}' object is not subscriptable")
    return _call(lw, fn, v, [key], node)


def setitem(lw: Lowerer, v: Tup, target: ast.Subscript, value) -> list:
    """``d[key] = value``: ``type(d).__setitem__(d, key, value)``; its statements go before
    the assignment's (which has none of its own)."""
    fn = _function(lw, v, "__setitem__", target,
                   f"'{v.cls.__qualname__}' object does not support item assignment")
    key = lw.expr(target.slice)
    _call(lw, fn, v, [key, value], target)
    return []


def prop(lw: Lowerer, v: Tup, getter, node):
    """``d.name`` where ``name`` is a ``@property``: its getter called with ``d``."""
    if not isinstance(getter, types.FunctionType):
        raise lw.unsupported(node, f"the property {v.cls.__name__}.{node.attr} without a "
                                   "Python getter")
    return _call(lw, getter, v, [], node)


def post_init(lw: Lowerer, v: Tup, node) -> None:
    """After ``D(...)`` binds the fields: ``D.__post_init__(d)`` when the class has one."""
    fn = find(v.cls, "__post_init__")
    if fn is None:
        return
    if not isinstance(fn, types.FunctionType):
        raise lw.unsupported(node, f"{v.cls.__name__}.__post_init__ (not a plain Python "
                                   "function)")
    _call(lw, fn, v, [], node)
