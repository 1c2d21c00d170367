"""Kernels and device functions built from strings with ``exec``: their source is found through
the audit hook of frontend/execsource.py, error messages show their lines, and a function
whose source is nowhere gets an error saying what to do."""

from __future__ import annotations

import ast
import linecache
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import compile_cubin

import threadtile as cuda
from threadtile.errors import KernelCompileError
from threadtile.frontend import execsource

ROOT = Path(__file__).resolve().parents[2]


def _build(src: str, *names: str, **globs):
    ns: dict = {}
    exec(textwrap.dedent(src), {"cuda": cuda, "np": np, **globs}, ns)  # noqa: S102
    return [ns[n] for n in names]


def gen_extreme(func: str):
    """numba's test_atomics builds its atomic.max/min kernels this way."""
    return _build(f"""
    def atomic(res, ary):
        tx = cuda.threadIdx.x
        bx = cuda.blockIdx.x
        {func}(res, 0, ary[tx, bx])
    """, "atomic")[0]


@pytest.mark.parametrize("func,ref", [("cuda.atomic.max", np.max), ("cuda.atomic.min", np.min)])
def test_exec_kernel(target, func, ref):
    k = cuda.jit(gen_extreme(func))
    rng = np.random.default_rng(1)
    ary = rng.standard_normal((32, 4))
    res = target.to_device(np.array([0.5]))
    target.launch(k, 4, 32, res, target.to_device(ary))
    assert target.to_host(res)[0] == ref(np.concatenate([ary.ravel(), [0.5]]))


def test_exec_kernel_compiles_for_both_archs():
    k = cuda.jit(gen_extreme("cuda.atomic.max"))
    src = k.cuda_source(np.zeros(1), np.zeros((2, 2)))
    assert '#line 5 "<string exec ' in src  # the kernel's line in its own string
    for arch in ("sm_80", "sm_90"):
        assert compile_cubin(k, np.zeros(1), np.zeros((2, 2)), arch=arch)


def test_exec_device_function_with_same_named_functions(target):
    # two strings that compile to the same bytecode (`fn`, line 2) but call other functions:
    # each kernel must get its own source, not the first that looks alike
    twice, = _build("""
    def twice(x):
        return x * 2.0
    """, "twice")
    plus, = _build("""
    def plus(x):
        return x + 10.0
    """, "plus")
    k1, = _build("""
    def fn(a):
        a[cuda.threadIdx.x] = f(a[cuda.threadIdx.x])
    """, "fn", f=twice)
    k2, = _build("""
    def fn(a):
        a[cuda.threadIdx.x] = f(a[cuda.threadIdx.x])
    """, "fn", f=plus)
    for k, expect in ((k1, np.arange(4.0) * 2), (k2, np.arange(4.0) + 10)):
        a = target.to_device(np.arange(4.0))
        target.launch(cuda.jit(k), 1, 4, a)
        np.testing.assert_allclose(target.to_host(a), expect, rtol=0)


def test_exec_error_shows_the_line():
    bad, = _build("""
    def bad(a):
        i = cuda.threadIdx.x
        a[i] = not_defined_anywhere + 1
    """, "bad")
    with pytest.raises(KernelCompileError) as e:
        cuda.jit(bad).cuda_source(np.zeros(4))
    text = str(e.value)
    assert "line 4" in text and "a[i] = not_defined_anywhere + 1" in text
    name = text.split('"')[1]
    assert name.startswith("<string exec ") and linecache.getline(name, 4).strip() == \
        "a[i] = not_defined_anywhere + 1"


def test_exec_under_future_annotations():
    # a string exec'd by a module with `from __future__ import annotations` (this one)
    # compiles with that flag: the recompiled candidate must carry it too to match
    k, = _build("""
    def k(a: "float32[:]"):
        a[0] = 1
    """, "k")
    assert k.__code__.co_flags & 0x1000000
    assert "a(0LL) = 1;" in cuda.jit(k).cuda_source(np.zeros(1, np.int32))


def test_no_source_says_what_to_do():
    # compiled from an AST: CPython gives the hook no text, so the source is nowhere
    tree = ast.parse("def k(a):\n    a[0] = 1\n")
    ns: dict = {}
    exec(compile(tree, "<generated>", "exec"), {}, ns)  # noqa: S102
    with pytest.raises(KernelCompileError) as e:
        cuda.jit(ns["k"]).cuda_source(np.zeros(1))
    assert "cannot read the source of 'k'" in str(e.value)
    assert "after `import threadtile`" in str(e.value) and "linecache" in str(e.value)


def test_hook_skips_what_it_cannot_use():
    n = execsource.remembered()
    exec("x = 1 + 2", {})  # noqa: S102  (no function: not kept)
    exec(compile("y = 3", "real_file.py", "exec"), {})  # noqa: S102  (a file: inspect's)
    assert execsource.remembered() == n


def test_python_dash_c_still_works():
    prog = textwrap.dedent("""
        import numpy as np, threadtile as cuda
        @cuda.jit
        def k(a):
            a[0] = 7
        print("#line" in k.cuda_source(np.zeros(1)))
    """)
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""}, cwd=ROOT,
                         timeout=120)
    assert out.stdout.strip() == "True", out.stderr


def test_the_memory_is_bounded(monkeypatch):
    monkeypatch.setattr(execsource, "MAX_SOURCES", 3)
    for i in range(6):
        exec(f"def f{i}():\n    return {i}\n", {})  # noqa: S102
    assert execsource.remembered() <= 3
    newest = [s for _, s in execsource._sources]
    assert "def f5():" in newest[-1] and not any("def f0():" in s for s in newest)
