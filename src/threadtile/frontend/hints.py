"""Wording of the errors for Python constructs that kernels do not have (see lower.py)."""

from __future__ import annotations

import ast


def describe_node(node: ast.AST) -> str:
    names = {"List": "a list", "Dict": "a dict", "Set": "a set", "ListComp": "a list "
             "comprehension", "DictComp": "a dict comprehension", "SetComp": "a set "
             "comprehension", "GeneratorExp": "a generator expression", "Lambda": "a lambda",
             "With": "a with statement", "Try": "try/except", "Raise": "raise",
             "Global": "global", "Nonlocal": "nonlocal", "FunctionDef": "a nested def",
             "ClassDef": "a class definition", "Yield": "yield", "Await": "await",
             "Assert": "assert", "Delete": "del", "Import": "import", "ImportFrom": "import",
             "JoinedStr": "an f-string", "Starred": "*unpacking", "NamedExpr": "the walrus "
             "operator", "Match": "match", "AsyncFor": "async for"}
    return names.get(type(node).__name__, type(node).__name__)


HINTS = {
    "List": "use local.array(shape, dtype) for a per-thread array, or a tuple for a few values",
    "ListComp": "write a for-loop over range() that fills a local.array",
    "Dict": "kernels work on numbers and arrays only",
    "Lambda": "define the function with def outside the kernel and call it: a Python function "
              "a kernel calls is compiled as a device function",
    "FunctionDef": "define it outside the kernel and call it: a Python function a kernel calls "
                   "is compiled as a device function",
    "Try": "kernels cannot catch exceptions; check conditions and return early",
    "JoinedStr": "print(...) with several arguments: print('x =', x)",
    "With": None,
    "Global": "globals are read as compile-time constants; write results into arrays",
}

