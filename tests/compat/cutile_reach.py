"""Why a cuTile test kernel was never launched (cutile_suite.py's ``not run``).

A kernel that no test launched falls in one of three cases, told apart here from the test
file's source and the tests' outcomes:

- ``skipped``: every test that would launch it was skipped by cuTile's own conditions, as
  they read on an H100 with the released cuTile 1.7 (cutile_suite.py's ``_DEVICE_FACTS``:
  development features and calling convention v3 off, compute capability 9.0) or for a
  package the machine lacks (``pytest.importorskip("jax")``). cuTile's own run there skips
  them too, so they are counted apart, with the skip's reason;
- ``cuTile IR``: every such test reads cuTile's own compiler output (its bytecode through the
  tests' ``get_bytecode``, ``filecheck`` of its MLIR, ``ct.compilation.export_kernel``) before
  or instead of launching: checks of cuTile's compiler, which another one cannot pass;
- ``not run``: anything else (a test that failed before its launch, or none that names it):
  the first failing test's error is the blocker.

Which tests would launch a kernel: the test function that defines it (``test_x.<locals>.k``),
or every test function (or method of a test class) whose body names the kernel, or names the
function that makes it (``make_k.<locals>.kernel``). Only direct mentions count.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

# what a test that inspects cuTile's compiler output calls or is marked with
_IR_MARKS = re.compile(r"\bget_bytecode\b|\bfilecheck\b|use_mlir|export_kernel|"
                       r"\bget_ir\b|_ir\.|bytecode\.|\.mlir\b|\bcompile_tile\b|final_ir|"
                       r"\bcompilation\.")


_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)


def _tests_in(tree: ast.Module) -> list[tuple[str, ast.AST, ast.ClassDef | None]]:
    """``("name", node, None)`` or ``("Class::name", node, class)`` of the file's test
    functions, a test class's inherited ones (from a base class of the same file) included."""
    out = []
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for node in tree.body:
        if isinstance(node, _FUNC) and node.name.startswith("test"):
            out.append((node.name, node, None))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            seen = set()
            for c in (node, *(classes[b.id] for b in node.bases
                              if isinstance(b, ast.Name) and b.id in classes)):
                for sub in c.body:
                    if isinstance(sub, _FUNC) and sub.name.startswith("test") and \
                            sub.name not in seen:
                        seen.add(sub.name)
                        out.append((f"{node.name}::{sub.name}", sub, node))
    return out


def _names(node: ast.AST) -> set[str]:
    """Every name and attribute name a function's body (and decorators) mentions."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def reaching_tests(path: Path, kernel: str) -> list[tuple[str, bool]]:
    """The tests of ``path`` that would launch ``kernel`` (its qualified name in the file),
    each as ``(test id without parameters, inspects cuTile's IR)``."""
    text = path.read_text()
    tree = ast.parse(text)
    helpers = {n.name: n for n in tree.body if isinstance(n, _FUNC)}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    parts = kernel.split(".<locals>.")
    outer = parts[0]  # the enclosing function, "Class.method", or the kernel itself
    cls, _, fn = outer.rpartition(".")
    tests = _tests_in(tree)
    # a test class's kernel that no method names itself is reached through the class (a
    # table of cases in its body, parametrizing a test it inherits)
    via_class = cls and not any(t.startswith(cls + "::") and fn in _names(node)
                                for t, node, _ in tests)
    out = []
    for test_id, node, owner in tests:
        t_cls, _, t_fn = test_id.rpartition("::")
        if cls and cls != t_cls:
            continue
        names = _names(node)
        if via_class and owner is not None:
            names |= _names(owner)
        if t_fn == fn and len(parts) > 1 or fn in names:
            # what the test reads: its own source, its class's and base classes', and the
            # module's functions it calls
            seen = [node, *([owner] if owner is not None else []),
                    *(classes[b.id] for b in getattr(owner, "bases", ())
                      if isinstance(b, ast.Name) and b.id in classes),
                    *(helpers[n] for n in names if n in helpers and n != fn)]
            src = " ".join(ast.get_source_segment(text, n) or "" for n in seen)
            out.append((test_id, bool(_IR_MARKS.search(src))))
    return out


def _outcomes(rel: str, test_id: str, items: dict) -> list[str]:
    """The recorded outcomes of one test's parametrizations (pytest's ids are relative to
    test/, its root)."""
    prefix = f"{rel.removeprefix('test/')}::{test_id}"
    return [o for k, o in items.items() if k == prefix or k.startswith(prefix + "[")]


def why_not_run(work: Path, rel: str, kernel: str, items: dict) -> tuple[str, str] | None:
    """``(status, reason)`` for a kernel no test launched, or None where nothing better than
    cutile_suite's ``not run`` can be said."""
    path = work / rel
    if not path.is_file() or not rel.startswith("test/test_"):
        return None
    module = items.get(rel.removeprefix("test/"), "")
    if module.startswith("skipped"):  # the whole file (pytest.importorskip at its top)
        return "skipped", module.partition(":")[2].strip().removeprefix("Skipped: ")
    tests = reaching_tests(path, kernel.split("::", 1)[1])
    if tests and all(ir for _, ir in tests):
        return "cuTile IR", f"its tests read cuTile's compiler output ({tests[0][0]})"
    runs = [(t, ir, _outcomes(rel, t, items)) for t, ir in tests]
    runs = [(t, ir, o) for t, ir, o in runs if o]
    if not runs:
        return None
    if all(x.startswith("skipped") for _, _, o in runs for x in o):
        reason = next(x for _, _, o in runs for x in o).partition(":")[2].strip()
        return "skipped", reason.removeprefix("Skipped: ") or "skipped"
    fail = next((x for _, ir, o in runs if not ir for x in o
                 if x != "passed" and not x.startswith("skipped")), None)
    if fail:
        return "not run", fail
    return None
