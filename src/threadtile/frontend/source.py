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
from . import execsource


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
    """Parse ``fn``'s source once: from its file (``inspect``), from the string it was built
    from with ``exec`` (frontend/execsource.py), or from ``python -c``'s program. Raises
    KernelCompileError, saying what to do, when it has none (a function typed at the
    interactive prompt, or built by exec before threadtile was imported)."""
    code = fn.__code__
    key = (code, code.co_filename, code.co_firstlineno)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    filename = code.co_filename
    found = execsource.find(code) if _is_pseudo(filename) else None
    if found is not None:  # built from a string (exec): its remembered source
        filename, whole = found
        first = code.co_firstlineno
        src_lines = inspect.getblock(whole.splitlines(keepends=True)[first - 1:])
    else:
        try:
            try:
                # of the code object: inspect would follow a decorator's __wrapped__ to the
                # function it wraps, whose code is not the code that runs
                src_lines, first = inspect.getsourcelines(code)
            except OSError:
                # `python -c` program, if this function is one of its own (a string it exec'd
                # before threadtile was imported is another '<string>')
                prog = _cache_command_source(filename)
                if prog is None or not execsource.compiles_to(prog, filename, code):
                    raise
                src_lines, first = inspect.getsourcelines(code)
        except (OSError, TypeError) as e:
            raise KernelCompileError(f"cannot read the source of {fn.__qualname__!r}: {e}",
                                     hint=_no_source_hint(filename)) from None
    text = "".join(src_lines)
    # An indented function (a method, or one defined inside a test) cannot be parsed on its
    # own, and dedenting breaks multi-line strings indented less than the code. Parsing it as
    # the body of an `if 1:` keeps every column as it is in the file.
    wrapped = bool(src_lines) and src_lines[0][:1] in (" ", "\t")
    parse_text = ("if 1:\n" + text) if wrapped else text
    try:
        module = ast.parse(parse_text, filename=filename)
    except SyntaxError:
        if fn.__name__ != "<lambda>":
            raise
        module = None  # a lambda inside a longer expression: its lines alone do not parse
    if fn.__name__ == "<lambda>":
        tree = _lambda_def(module, code, 1 if wrapped else 0)
    else:
        body = module.body[0].body if wrapped else module.body
        tree = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                    None)
    if tree is None or isinstance(tree, ast.AsyncFunctionDef):
        raise KernelCompileError(f"{fn.__qualname__!r} is not a plain `def` function",
                                 hint="kernels are defined with def, not async def; a lambda "
                                      "must be the only one with its parameters on its line")
    file_lines = linecache.getlines(filename) or src_lines
    offset = first - 1 - (1 if wrapped else 0)
    info = SourceInfo(tree, filename, offset, file_lines, text)
    _cache[key] = info
    return info


def _is_pseudo(filename: str) -> bool:
    return filename[:1] == "<" and filename[-1:] == ">"


def _no_source_hint(filename: str) -> str:
    """What to do when a function's source cannot be found, by where it was defined."""
    if filename == "<stdin>" or filename.startswith("<python-input"):
        return ("the interactive prompt keeps no source: define the kernel in a .py file and "
                "import it, or use IPython or Jupyter, which keep each cell's source")
    if _is_pseudo(filename):
        return (f"the function was built from a string ({filename}): threadtile finds such a "
                "source only when the string was compiled (exec/compile) after `import "
                f"threadtile`, among the last {execsource.MAX_SOURCES} compiled; import "
                "threadtile first, or compile the text with a file name and put it in "
                "linecache (linecache.cache[name] = (len(text), None, text.splitlines(True), "
                "name))")
    return (f"{filename} could not be read: define the kernel in a .py file that is still "
            "there when the kernel is compiled")


def _lambda_def(module: ast.Module | None, code, shift: int) -> ast.FunctionDef | None:
    """The lambda of ``code`` in ``module`` (the lines it starts on) as a ``def`` returning its
    expression, or None when no lambda, or more than one, starts on its line with its
    parameters (``inspect`` gives lines, not columns)."""
    if module is None:
        return None
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [n for n in ast.walk(module) if isinstance(n, ast.Lambda) and n.lineno == 1 + shift
             and [a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == names]
    if len(found) != 1:
        return None
    lam = found[0]
    ret = ast.copy_location(ast.Return(lam.body), lam.body)
    tree = ast.FunctionDef(name="<lambda>", args=lam.args, body=[ret], decorator_list=[])
    return ast.copy_location(tree, lam)


def _cache_command_source(filename: str) -> str | None:
    """Put the program of ``python -c '...'`` (file ``<string>``) into linecache, where
    ``inspect`` finds it (Python < 3.13 keeps it nowhere; Linux still has it in
    /proc/self/cmdline). Returns the program, or None where there is none."""

    if filename != "<string>" or sys.argv[:1] != ["-c"]:
        return None
    try:
        with open("/proc/self/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        text = argv[argv.index(b"-c") + 1].decode()
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)  # mtime None: kept
    return text


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
