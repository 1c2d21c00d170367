"""What a compiled kernel depends on besides its own source: the globals it read.

Lowering records, for every free name and attribute path a kernel (or a device function it
calls) resolved, a fingerprint of the value found. A fresh process can then reuse the CUDA C++
generated earlier without lowering again, after checking that every recorded path still leads
to an equal value (``still_valid``). Values with no stable fingerprint make the check fail,
which only costs a lowering: the cache can miss, never serve stale code. A Python function the
kernel may call (decorated or not) is fingerprinted by its source, and what it read is checked
in its own namespace.
"""

from __future__ import annotations

import ast
import hashlib

import numpy as np

from ..errors import KernelCompileError
from . import captured
from .funcs import python_function
from .source import MISSING, get_source, resolve_name


def fingerprint(obj) -> list:
    """A JSON-able description of ``obj`` that is equal across processes iff the kernel would
    compile the same way with it."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return ["v", type(obj).__name__, repr(obj)]
    if isinstance(obj, np.generic):
        return ["v", obj.dtype.str, repr(obj.item())]
    if isinstance(obj, tuple):
        return ["t", [fingerprint(o) for o in obj]]
    if isinstance(obj, np.ndarray):
        data = np.ascontiguousarray(obj)
        return ["a", data.dtype.str, list(data.shape), hashlib.sha1(data.tobytes()).hexdigest()]
    cai = captured.interface(obj)
    if cai is not None:  # a device array captured in place: its address is in the code
        ptr, dtype, shape, strides = captured.geometry(cai)
        return ["cai", ptr, dtype.str, list(shape), list(strides), bool(cai["data"][1])]
    fn = python_function(obj)
    if fn is not None:  # a function the kernel may call: its source is what it compiles to
        try:
            info = get_source(fn)
        except KernelCompileError:  # no source to compare: always a miss
            return ["x", id(obj)]
        declared = getattr(obj, "declared_signatures", None)  # jit(signatures): its types
        return ["k", fn.__module__, fn.__qualname__, info.filename, info.line_offset,
                hashlib.sha1(info.text.encode()).hexdigest(), bool(getattr(obj, "device", False)),
                None if declared is None else [str(s) for s in declared]]
    if isinstance(obj, type(np)):
        return ["m", obj.__name__]
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    mod = getattr(obj, "__module__", None)
    if name and mod:  # functions, classes, dtypes: identified by where they are defined
        return ["o", mod, name]
    r = repr(obj)
    if " at 0x" in r:  # an identity-based repr: nothing stable to compare, so always a miss
        return ["x", id(obj)]
    return ["r", type(obj).__module__, type(obj).__qualname__, r]


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for an attribute chain over a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def evaluate(fn, path: str):
    """The value ``path`` (a dotted name) has in ``fn``'s namespace now, or MISSING."""
    head, *rest = path.split(".")
    obj = resolve_name(fn, head)
    for attr in rest:
        if obj is MISSING:
            return MISSING
        try:
            obj = getattr(obj, attr)
        except AttributeError:
            return MISSING
    return obj


def still_valid(root_fn, deps: list) -> bool:
    """Whether every recorded ``(owner, path, fingerprint)`` still holds. ``owner`` is the
    chain of paths from the kernel to the device function that read ``path``."""
    owners = {"": root_fn}
    for owner, path, fp in deps:
        fn = owners.get(owner)
        if fn is None:
            return False
        obj = evaluate(fn, path)
        if obj is MISSING:
            return False
        try:
            if fingerprint(obj) != fp:
                return False
        except (OSError, TypeError, ValueError):
            return False
        fn = python_function(obj)
        if fn is not None:  # what the device function read is recorded under its path
            owners[f"{owner}/{path}"] = fn
    return True
