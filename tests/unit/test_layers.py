"""The package's import graph: no cycles, layers that point one way, no private names across
packages. Built from the source (every import statement, function-local ones included; those
under ``if TYPE_CHECKING:`` never run and are left out), so it needs nothing importable.

The layers (docs/architecture.md): ``lang`` and ``errors`` at the bottom; ``ir`` on them; the
frontend (Python -> IR) and the two backends (IR -> C++, IR -> simulation) on ``ir``; the
runtime (NVRTC, driver, arrays, launchers) on ``lang`` alone; the top-level modules
(``compiler``, ``jit``, ``cli``...) tie them together.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PKG = "threadtile"

# package -> the packages its modules may import (besides its own)
ALLOWED = {
    "errors": set(),
    "version": set(),
    "lang": {"errors"},
    "ir": {"lang", "errors"},
    "frontend": {"ir", "lang", "errors"},
    "backends.cuda": {"ir", "lang", "errors"},
    "backends.sim": {"ir", "lang", "errors", "runtime"},
    "runtime": {"lang", "errors", "version"},
}


def _modules() -> dict[str, Path]:
    out = {}
    for f in sorted((SRC / PKG).rglob("*.py")):
        parts = list(f.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


def package_of(mod: str) -> str:
    """``threadtile.backends.sim.tiles`` -> ``backends.sim``; top-level modules are their own
    package (``jit``, ``compiler``...), the package itself is ``""``."""
    parts = mod.split(".")[1:]
    if not parts:
        return ""
    if parts[0] == "backends" and len(parts) > 1:
        return "backends." + parts[1]
    return parts[0]


def _resolve(mod: str, is_pkg: bool, level: int, target: str | None) -> str:
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if level:
        base = base[:len(base) - (level - 1)]
        return ".".join(base + ([target] if target else []))
    return target or ""


class _Imports(ast.NodeVisitor):
    def __init__(self, mod: str, is_pkg: bool, modules: dict):
        self.mod, self.is_pkg, self.modules = mod, is_pkg, modules
        self.edges: list[tuple[str, int]] = []  # (imported module, line)
        self.private: list[tuple[str, str, int]] = []  # (module, name, line)
        self.aliases: dict[str, str] = {}  # local name -> imported module

    def visit_If(self, node: ast.If) -> None:
        t = node.test
        if isinstance(t, ast.Name) and t.id == "TYPE_CHECKING" or \
                isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING":
            for s in node.orelse:
                self.visit(s)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.name.split(".")[0] == PKG:
                self.edges.append((a.name, node.lineno))
                if a.asname:
                    self.aliases[a.asname] = a.name

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        src = _resolve(self.mod, self.is_pkg, node.level, node.module)
        if src.split(".")[0] != PKG:
            return
        for a in node.names:
            sub = f"{src}.{a.name}"
            if (SRC / sub.replace(".", "/")).with_suffix(".c").exists():
                continue  # a C extension: it imports nothing of the package
            if sub in self.modules:
                self.edges.append((sub, node.lineno))
                self.aliases[a.asname or a.name] = sub
            else:
                self.edges.append((src, node.lineno))
                if a.name.startswith("_") and not a.name.startswith("__"):
                    self.private.append((src, a.name, node.lineno))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.aliases and \
                node.attr.startswith("_") and not node.attr.startswith("__"):
            self.private.append((self.aliases[node.value.id], node.attr, node.lineno))
        self.generic_visit(node)


def _graph():
    modules = _modules()
    graph, private = {}, []
    for mod, f in modules.items():
        v = _Imports(mod, f.name == "__init__.py", modules)
        v.visit(ast.parse(f.read_text(), str(f)))
        graph[mod] = v.edges
        private += [(mod, src, name, line) for src, name, line in v.private]
    return modules, graph, private


def _cycles(graph: dict) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w, _ in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    _, graph, _ = _graph()
    cycles = _cycles(graph)
    detail = []
    for comp in cycles:
        for m in comp:
            seen = {}
            for w, ln in graph[m]:
                if w in comp:
                    seen.setdefault(w, ln)
            detail += [f"  {m} -> {w} (line {ln})" for w, ln in seen.items()]
    assert not cycles, "import cycles:\n" + "\n".join(detail)


def test_layers_point_one_way():
    _, graph, _ = _graph()
    bad = []
    for mod, edges in graph.items():
        p = package_of(mod)
        if p not in ALLOWED:
            continue  # the top-level modules tie the layers together
        for w, line in edges:
            q = package_of(w)
            if q != p and q not in ALLOWED[p]:
                bad.append(f"  {mod} (line {line}) imports {w}: {p} may import "
                           f"{sorted(ALLOWED[p]) or 'nothing of threadtile'}")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_no_private_names_across_packages():
    _, _, private = _graph()
    bad = [f"  {mod} (line {line}) uses {src}.{name}" for mod, src, name, line in private
           if package_of(src) != package_of(mod)]
    assert not bad, "private names used across packages:\n" + "\n".join(bad)


def test_the_checks_see_what_they_check():
    """The graph is not empty and finds what it must: a guard against a parser that reads
    nothing and passes everything."""
    modules, graph, _ = _graph()
    assert f"{PKG}.compiler" in modules and f"{PKG}.backends.sim.tiles" in modules
    assert any(w == f"{PKG}.ir.nodes" for w, _ in graph[f"{PKG}.backends.cuda.emit"])
    assert _cycles({"a": [("b", 1)], "b": [("a", 2)], "c": [("a", 3)]}) == [["a", "b"]]
    assert package_of(f"{PKG}.backends.sim.tiles") == "backends.sim"
