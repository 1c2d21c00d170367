"""Reading a kernel's Python source: its AST, positions, and the names it closes over."""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import sys
from dataclasses import dataclass

from ..errors import KernelCompileError
from ..ir.nodes import Loc


@dataclass
class SourceInfo:
    """The parsed function plus what is needed to turn AST positions into :class:`Loc`."""

    tree: ast.FunctionDef
    filename: str
    line_offset: int  # added to AST line numbers to get file line numbers
    lines: list[str]  # the file's lines (for carets in error messages)
    text: str  # the function's own source text (part of the cache key)

    def loc(self, node: ast.AST, function: str) -> Loc:
        line = getattr(node, "lineno", self.tree.lineno) + self.line_offset
        col = getattr(node, "col_offset", 0)
        end = getattr(node, "end_col_offset", None)
        if getattr(node, "end_lineno", None) not in (None, getattr(node, "lineno", None)):
            end = None
        return Loc(self.filename, line, col, end, function)

    def source_line(self, line: int) -> str | None:
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1].rstrip("\n")
        return None


_cache: dict[object, SourceInfo] = {}


def get_source(fn) -> SourceInfo:
    """Parse ``fn``'s source once. Raises KernelCompileError when it has none (e.g. a lambda
    typed at the interactive prompt, or a function built by exec without a file)."""
    code = fn.__code__
    key = (code, code.co_filename, code.co_firstlineno)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    if code.co_filename == "<string>":
        _remember_command_line(fn.__name__)
    try:
        src_lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise KernelCompileError(
            f"cannot read the source of {fn.__qualname__!r}: {e}",
            hint="kernels must be defined in a file (or a notebook cell), not built with exec",
        ) from None
    text = "".join(src_lines)
    # An indented function (a method, or one defined inside a test) cannot be parsed on its
    # own, and dedenting breaks multi-line strings indented less than the code. Parsing it as
    # the body of an `if 1:` keeps every column as it is in the file.
    wrapped = bool(src_lines) and src_lines[0][:1] in (" ", "\t")
    parse_text = ("if 1:\n" + text) if wrapped else text
    module = ast.parse(parse_text, filename=code.co_filename)
    body = module.body[0].body if wrapped else module.body
    tree = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if tree is None or isinstance(tree, ast.AsyncFunctionDef):
        raise KernelCompileError(f"{fn.__qualname__!r} is not a plain `def` function",
                                 hint="kernels are defined with def, not lambda or async def")
    file_lines = linecache.getlines(code.co_filename) or src_lines
    offset = first - 1 - (1 if wrapped else 0)
    info = SourceInfo(tree, code.co_filename, offset, file_lines, text)
    _cache[key] = info
    return info


def _remember_command_line(name: str) -> None:
    """``python -c "..."`` defines functions in ``<string>``, whose text Python does not keep:
    it is the argument after ``-c`` of the command line, which linecache is given here so that
    a kernel written there has a source like any other."""
    argv = getattr(sys, "orig_argv", [])
    if "-c" not in argv or linecache.getlines("<string>"):
        return
    i = argv.index("-c")
    if i + 1 < len(argv) and f"def {name}(" in argv[i + 1]:
        text = argv[i + 1]
        linecache.cache["<string>"] = (len(text), None, text.splitlines(True), "<string>")


_MISSING = object()


def resolve_name(fn, name: str):
    """The value a free name of ``fn`` refers to (closure cell, global, builtin) or _MISSING."""
    code = fn.__code__
    if fn.__closure__ and name in code.co_freevars:
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            return cell.cell_contents
        except ValueError:
            return _MISSING
    g = fn.__globals__
    if name in g:
        return g[name]
    return getattr(builtins, name, _MISSING)


MISSING = _MISSING
