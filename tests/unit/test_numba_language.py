"""The kernel language numba programs use, construct by construct: aliases of the kernel
language's names, plain Python functions as device functions (defaults, keywords, tuples in and
out), local tuples, loops over arrays/enumerate/zip/reversed, tuple kernel arguments and their
ABI, definite assignment, the hints of refused calls, and compile errors that show the user's
frame only. Numerics are in tests/gpu/test_numerics_numba_style.py."""

import math
import os
import subprocess
import sys
import textwrap
from collections import namedtuple

import numpy as np
import pytest
from conftest import SIMULATE, compile_source

import threadtile as cuda
from threadtile.backends.cuda import cxx
from threadtile.errors import KernelCompileError
from threadtile.ir import nodes as ir
from threadtile.lang.types import (
    ArrayType,
    TupleType,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int32,
    int64,
    uint32,
)
from threadtile.runtime import abi
from threadtile.runtime.arrays import describe, describe_host, kernel_type

F64 = np.zeros(4)
Pair = namedtuple("Pair", ["a", "b"])


def module(kernel, *args):
    return kernel._spec_for(args, {}).module


def functions(kernel, *args) -> dict:
    return {f.pyname: f for f in module(kernel, *args).kernel.all_functions()}


def run(kernel, grid, block, *args):
    with SIMULATE():
        kernel[grid, block](*args)


# ---- aliases -----------------------------------------------------------------------------------

@cuda.jit
def aliased(out):
    cbi, cbd, tid = cuda.blockIdx, cuda.blockDim, cuda.threadIdx
    sm, at = cuda.shared, cuda.atomic
    buf = sm.array(8, np.int64)
    buf[tid.x] = cbi.x * cbd.x + tid.x
    cuda.syncthreads()
    at.add(out, 0, buf[tid.x])


def test_aliases_of_the_language_are_compile_time_names():
    f = functions(aliased, np.zeros(1, np.int64))["aliased"]
    assert not any(isinstance(t, TupleType) for t in f.locals.values())
    assert set(f.locals) == {"buf"}  # cbi, tid, sm, at: no runtime variables
    out = np.zeros(1, np.int64)
    run(aliased, 3, 8, out)
    assert out[0] == sum(range(24))


@cuda.jit
def rebinds_alias(out):
    x = cuda.threadIdx
    x = 3  # noqa: F841
    out[0] = 1


def test_an_alias_cannot_become_a_number():
    with pytest.raises(KernelCompileError, match="'x' is threadtile.threadIdx elsewhere"):
        rebinds_alias.cuda_source(F64)


# ---- plain functions as device functions --------------------------------------------------------

def plain(x, y=2, *, z=0.5):
    return x * y + z


def returns_pair(x):
    return x, x * 2


def takes_pair(p, k=1):
    return p[0] + p[1] * k


def higher_order(f, x):
    return f(x)


@cuda.jit
def calls_plain(a, out):
    out[0] = plain(a[0])
    out[1] = plain(a[0], 3)
    out[2] = plain(y=4, x=a[0], z=1.0)
    u, v = returns_pair(a[1])
    out[3] = u + v
    out[4] = takes_pair((a[0], a[1]), k=3) + takes_pair(returns_pair(a[2]))
    out[5] = higher_order(math.sqrt, a[3])
    out[6] = plain(*returns_pair(a[0]))


def test_plain_functions_compile_as_device_functions():
    fs = functions(calls_plain, F64, F64)
    # one specialization per argument signature; compile-time arguments make their own
    assert {"plain", "returns_pair", "takes_pair", "higher_order"} <= set(fs)
    assert fs["returns_pair"].return_type == TupleType((float64, float64))
    assert [p.type for p in fs["takes_pair"].params][0] == TupleType((float64, float64))
    hof = fs["higher_order"]
    assert hof.params[0].is_constant and hof.params[0].constant is math.sqrt
    a = np.array([1.5, 2.0, 3.0, 16.0])
    out = np.zeros(7)
    run(calls_plain, 1, 1, a, out)
    np.testing.assert_array_equal(out, [3.5, 5.0, 7.0, 6.0, 7.5 + 9.0, 4.0, 5.0])


def recursive_plain(n):
    return recursive_plain(n - 1) if n > 0 else 0


@cuda.jit
def calls_recursive_plain(out):
    out[0] = recursive_plain(3)


@cuda.jit
def wrong_keyword(out):
    out[0] = plain(1, w=2)


@cuda.jit
def missing_argument(out):
    out[0] = takes_pair()


@pytest.mark.parametrize(("kernel", "message"), [
    (calls_recursive_plain, "recursive_plain() calls itself"),
    (wrong_keyword, "plain() has no parameter 'w'"),
    (missing_argument, "takes_pair() is missing its argument 'p'"),
])
def test_device_call_errors(kernel, message):
    with pytest.raises(KernelCompileError) as info:
        kernel.cuda_source(F64)
    assert message in info.value.message


def two_kinds(x):
    if x > 0:
        return x, 1
    return x, 2.5  # the second item unifies to float64


@cuda.jit
def unified_returns(a, out):
    p, q = two_kinds(a[0])
    out[0] = p + q


def test_tuple_returns_unify_item_by_item():
    fs = functions(unified_returns, F64, F64)
    assert fs["two_kinds"].return_type == TupleType((float64, float64))
    out = np.zeros(1)
    run(unified_returns, 1, 1, np.array([-2.0]), out)
    assert out[0] == 0.5


def mismatched(x):
    if x > 0:
        return x, x
    return x


@cuda.jit
def calls_mismatched(a, out):
    out[0] = mismatched(a[0])[0]


def test_returns_of_two_kinds_are_an_error():
    with pytest.raises(KernelCompileError, match="returns"):
        calls_mismatched.cuda_source(F64, F64)


# ---- local tuples --------------------------------------------------------------------------------

@cuda.jit
def tuple_ops(a, out):
    t = (a[0], a[1], 3)
    n = len(t)
    x, y, z = t
    head = t[:2]
    out[0] = t[0] + t[-1] + n
    out[1] = head[1] * z
    i = int(a[2])
    out[2] = t[i]
    p = Pair(x, b=y)
    out[3] = p.a - p.b


def test_local_tuples_cost_nothing_at_run_time():
    f = functions(tuple_ops, F64, F64)["tuple_ops"]
    assert not any(isinstance(t, TupleType) for t in f.locals.values())
    out = np.zeros(4)
    run(tuple_ops, 1, 1, np.array([1.5, 2.5, 1.0]), out)
    np.testing.assert_array_equal(out, [1.5 + 3 + 3, 7.5, 2.5, -1.0])


# ---- loops ---------------------------------------------------------------------------------------

@cuda.jit
def over_array(a, out):
    s = 0.0
    for x in a:
        s += x
    out[0] = s


@cuda.jit
def over_pair_of_arrays(a, b, out):
    k = 0
    for arr in (a, b):  # unrolled: the items are arrays
        out[k] = arr[0]
        k += 1


@cuda.jit
def break_in_unrolled(a, b, out):
    for arr in (a, b):
        if arr[0] > 0:
            break
        out[0] = arr[0]


def test_loop_over_an_array_counts_a_hidden_index():
    f = functions(over_array, F64, F64)["over_array"]
    loops = [s for s in ir.walk_stmts(f.body) if isinstance(s, ir.For)]
    assert len(loops) == 1 and loops[0].var.startswith("_k")
    assert isinstance(loops[0].stop, ir.ArrayDim)
    out = np.zeros(1)
    run(over_array, 1, 1, np.arange(5.0), out)
    assert out[0] == 10.0


def test_loop_over_a_tuple_of_arrays_is_unrolled():
    f = functions(over_pair_of_arrays, F64, F64, F64)["over_pair_of_arrays"]
    assert not any(isinstance(s, ir.For) for s in ir.walk_stmts(f.body))
    out = np.zeros(2)
    run(over_pair_of_arrays, 1, 1, np.full(2, 3.0), np.full(2, 4.0), out)
    np.testing.assert_array_equal(out, [3.0, 4.0])
    with pytest.raises(KernelCompileError, match="break/continue in a loop over a tuple"):
        break_in_unrolled.cuda_source(F64, F64, F64)


# ---- definite assignment -------------------------------------------------------------------------

@cuda.jit
def assigned_in_both(a, out):
    if a[0] > 0:
        v = 1.0
    else:
        v = 2.0
    out[0] = v


@cuda.jit
def assigned_or_returns(a, out):
    if a[0] > 0:
        v = 1.0
    else:
        return
    out[0] = v


@cuda.jit
def assigned_in_loop(a, out):
    for i in range(a.size):
        last = a[i]
    out[0] = last  # taken as assigned: the loop ran (Python raises only when it did not)


@cuda.jit
def read_before_in_loop(a, out):
    s = 0.0
    for i in range(a.size):
        if i > 0:
            s += prev  # noqa: F821  (assigned in the previous iteration)
        prev = a[i]  # noqa: F841
    out[0] = s


@cuda.jit
def unbound_nested(a, out):
    if a[0] > 0:
        if a[1] > 0:
            v = 1.0
        else:
            v = 2.0
    out[0] = v


@pytest.mark.parametrize("kernel", [assigned_in_both, assigned_or_returns, assigned_in_loop,
                                    read_before_in_loop])
def test_assigned_on_every_path_compiles(kernel):
    kernel.cuda_source(F64, F64)


def test_unassigned_on_some_path_is_an_error_at_the_use():
    with pytest.raises(KernelCompileError) as info:
        unbound_nested.cuda_source(F64, F64)
    e = info.value
    assert "local variable 'v' is not assigned on every path" in e.message
    assert e.loc.line == unbound_nested.py_func.__code__.co_firstlineno + 7


# ---- tuple kernel arguments and their ABI ---------------------------------------------------

def test_kernel_type_of_tuples():
    assert kernel_type((1, 2.5)) == TupleType((int64, float64))
    assert kernel_type(Pair(np.int32(1), (True,))) == TupleType(
        (int32, TupleType((bool_,))), ("a", "b"))
    assert kernel_type(()) == TupleType(())


@pytest.mark.parametrize(("t", "size", "align"), [
    (TupleType(()), 1, 1),
    (TupleType((int8, int64)), 16, 8),
    (TupleType((int64, int8)), 16, 8),
    (TupleType((float16, TupleType((int8, float32)), bool_)), 16, 4),
    (TupleType((int32, ArrayType(float32, 2, "C"))), 48, 8),
])
def test_tuple_parameters_are_c_structs(t, size, align):
    _fmt, n, a = abi.param_format(t)
    assert (n, a) == (size, align)


def test_tuple_struct_layout_agrees_with_cuda():
    """NVRTC's sizeof/alignof of the generated structs equal what the ABI packs."""
    types = [TupleType(()), TupleType((int8, int64)), TupleType((float64, int32, bool_)),
             TupleType((float16, TupleType((int8, float32)), bool_)),
             TupleType((int32, ArrayType(float32, 2, "A"), TupleType((uint32,))))]
    defs, checks = {}, []
    for t in types:
        for inner in _tuples_in(t):
            defs[cxx.tuple_struct(inner)] = cxx.tuple_definition(inner)
        _f, n, a = abi.param_format(t)
        name = cxx.tuple_struct(t)
        checks.append(f"static_assert(sizeof({name}) == {n}, \"{name} size\");")
        checks.append(f"static_assert(alignof({name}) == {a}, \"{name} align\");")
    src = "\n".join(["#include <cuda_fp16.h>", '#include "threadtile.h"', *defs.values(),
                     *checks, 'extern "C" __global__ void k() {}'])
    assert compile_source(src, "sm_80")[:4] == b"\x7fELF"


def _tuples_in(t):
    for x in t.items:
        if isinstance(x, TupleType):
            yield from _tuples_in(x)
    yield t


def test_tuple_arguments_pack_their_items_in_order():
    info = describe((np.int8(3), (2.5, True)), 1, "t")
    assert info.kind == "tuple" and info.flat == (3, 2.5, True)
    t = info.type
    vals = abi.values("k", [t], [info])
    assert vals == [3, 2.5, True]
    packed = abi.param_layout([t]).struct.pack(*vals)
    assert len(packed) == 24 and packed[0] == 3 and packed[16] == 1


def test_tuple_argument_errors():
    with pytest.raises(TypeError, match=r"argument 't\[1\]' \(position 0\) is a NumPy array "
                                        "inside a tuple"):
        describe((1, np.zeros(3)), 0, "t")
    host = describe_host((1, np.zeros(3)), 0, "t")  # the simulator takes host arrays
    assert host.type == TupleType((int64, ArrayType(float64, 1, "C")))
    with pytest.raises(TypeError, match="must be a tuple of 2 items"):
        abi.values("k", [TupleType((int64, int64))], [describe((1, 2, 3))])


@cuda.jit
def takes_tuples(out, t, p):
    out[0] = t[0] + t[1][1] + p.a * p.b
    t[1][0][0] = 9.0


def test_tuple_arguments_in_the_simulator():
    inner = np.zeros(2)
    out = np.zeros(1)
    run(takes_tuples, 1, 1, out, (1.5, (inner, 2)), Pair(3, 4))
    assert out[0] == 15.5 and inner[0] == 9.0  # arrays inside tuples are written back
    src = takes_tuples.cuda_source(out, (1.5, (inner, 2)), Pair(3, 4))
    assert "struct tt_t2_f64_t2_aC1f64_i64 {" in src
    assert "t._1._0(0LL) = 9.0;" in src


# ---- errors: hints and frames ----------------------------------------------------------------

@cuda.jit
def calls_sorted(a):
    a[0] = sorted(a)[0]


@cuda.jit
def calls_np_empty(a):
    t = np.empty(3)
    a[0] = t[0]


def test_hints_of_refused_calls():
    with pytest.raises(KernelCompileError) as info:
        calls_sorted.cuda_source(F64)
    assert info.value.message == "the builtin sorted() is not supported in kernels"
    assert "@jit" not in (info.value.hint or "")
    with pytest.raises(KernelCompileError) as info:
        calls_np_empty.cuda_source(F64)
    assert "local.array" in info.value.hint


def _py_launcher() -> bool:
    jit = sys.modules["threadtile.jit"]  # the module (threadtile.jit is the decorator)
    return jit.Launch.__mro__[1] is jit._PyCall


def test_a_launch_shows_the_users_frame_only(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text(textwrap.dedent("""\
        import numpy as np
        import threadtile as cuda

        @cuda.jit
        def k(a):
            if a[0] > 0:
                v = 1.0
            a[1] = v

        with cuda.simulate():
            k[1, 1](np.zeros(2))
        """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("THREADTILE_TRACEBACK", None)
    short = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=env).stderr
    frames = [ln for ln in short.splitlines() if ln.startswith('  File "')]
    # the launch's line, the re-raise, and the Python launcher's __call__ where the C one
    # (runtime/_fastlaunch) is not built
    assert len(frames) == 2 + _py_launcher(), short
    assert "frontend" not in short and "line 8, col 12, in k" in short
    env["THREADTILE_TRACEBACK"] = "1"
    full = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env).stderr
    assert "frontend" in full and len(full.splitlines()) > len(short.splitlines())


def test_kernels_written_on_the_command_line_compile():
    code = textwrap.dedent("""\
        import threadtile as cuda

        @cuda.jit
        def show(t):
            print(t, cuda.threadIdx.x)

        show[1, 2]((1, (2.5,)))
        """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), THREADTILE_SIMULATE="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.splitlines() == ["(1, (2.500000,)) 0", "(1, (2.500000,)) 1"]


def test_python_mode_agrees_with_lockstep():
    """The new intrinsics in python-mode simulation (the kernel's own code per thread)."""
    from kernels import numba_style as ns

    rng = np.random.default_rng()
    keys = rng.integers(0, 3, 64).astype(np.int64) * 1000
    h = rng.uniform(0.5, 2, 8).astype(np.float16)
    got = []
    for mode in ("lockstep", "python"):
        m = [np.zeros(64, np.uint32), np.zeros(64, np.uint32), np.zeros(64, np.int32)]
        half = [np.zeros((8, 16), np.float16), np.zeros((8, 4), np.bool_)]
        first = np.zeros(1, np.int32)
        with cuda.simulate(mode=mode):
            ns.matches[1, 64](keys, *m)
            ns.half_intrinsics[1, 8](h, h + 1, h, *half)
            ns.cas_claims[1, 8](first, np.zeros(8, np.int32), np.zeros(8, np.int32),
                                np.full(4, -1, np.int32))
        got.append((m, half, first))
    (m1, h1, f1), (m2, h2, f2) = got
    for x, y in zip(m1 + h1, m2 + h2):
        np.testing.assert_array_equal(x, y)
    assert 1 <= f1[0] <= 8 and 1 <= f2[0] <= 8  # one thread's claim (which one may differ)


# ---- the source cache follows plain functions ---------------------------------------------------

PLAIN_MODULE = '''
import threadtile as cuda

def helper(x):
    return x * {factor}

@cuda.jit
def k(a):
    a[0] = helper(a[0])
'''


def test_a_changed_plain_function_is_not_served_stale(tmp_path, monkeypatch):
    """The cache keys a kernel by the globals it read: a plain function it calls by its
    source, as a @jit one (a changed body must compile again, not come from the cache)."""
    import importlib

    monkeypatch.setenv("THREADTILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    a = np.zeros(1, np.float32)
    mods, sources = [], []
    for factor in (3, 4):  # one module, its helper's body edited between the two imports
        (tmp_path / "plain_kernels.py").write_text(PLAIN_MODULE.format(factor=factor))
        sys.modules.pop("plain_kernels", None)
        importlib.invalidate_caches()
        mods.append(importlib.import_module("plain_kernels"))
        if factor == 3:
            sources.append(mods[0].k.cuda_source(a))
    assert "x * 3.0f" in sources[0]
    mods[0].helper = mods[1].helper  # same module and name, another body
    again = cuda.jit(mods[0].k.py_func)
    assert "x * 4.0f" in again.cuda_source(a)
    sys.modules.pop("plain_kernels", None)


@cuda.jit(device=True, forceinline=True)
def pick(out, mode):
    if mode == "max":
        out[cuda.threadIdx.x] = 1.0
    elif mode < "m":
        out[cuda.threadIdx.x] = 2.0
    else:
        out[cuda.threadIdx.x] = 3.0


@cuda.jit
def by_mode(out, which):
    if which == 0:
        pick(out, "max")
    elif which == 1:
        pick(out, "avg")
    else:
        pick(out, "sum")


@pytest.mark.parametrize("which, value", [(0, 1.0), (1, 2.0), (2, 3.0)])
def test_string_arguments_are_compile_time_constants(target, which, value):
    out = target.to_device(np.zeros(4, np.float32))
    target.launch(by_mode, 1, 4, out, which)
    np.testing.assert_array_equal(target.to_host(out), value)


def vote_all(mask, predicate, result):
    i = cuda.grid(1)
    if i < result.shape[0]:
        result[i] = cuda.all_sync(mask[i], predicate[i])


@pytest.mark.parametrize("sig, message", [
    ("void(float32[:], int32[:], int32[:])", "mask of a warp operation must be an integer"),
    ("void(boolean[:], int32[:], int32[:])", "mask of a warp operation must be an integer"),
    ("void(int32[:], float64[:], int32[:])", "predicate of a warp vote must be an integer"),
])
def test_warp_vote_operand_types(sig, message):
    with pytest.raises(KernelCompileError, match=message):
        cuda.jit(sig)(vote_all)
    cuda.jit("void(uint32[:], boolean[:], int32[:])")(vote_all)  # these are fine


@cuda.jit
def typed_literals(x, out):
    out[0] = cuda.float64(-2.0) * x[0]  # a typed value: float64 arithmetic
    out[1] = np.float64(0.1) * x[0]
    out[2] = 0.1 * x[0]  # a Python literal: float32 arithmetic (docs/language.md)
    out[3] = 0.1 * x[0]  # Python's float() is still a Python number


def test_a_cast_of_a_literal_is_typed(target):
    x = np.array([3.1], np.float32)
    out = target.to_device(np.zeros(4))
    target.launch(typed_literals, 1, 1, target.to_device(x), out)
    got = target.to_host(out)
    x64 = np.float64(x[0])
    assert got[0] == -2.0 * x64 and got[1] == 0.1 * x64
    assert got[2] == got[3] == np.float64(np.float32(0.1) * x[0])


def tuple_by_variable(out, t0, t1, t2):
    t = (t0, t1, t2)
    for j in range(out.shape[0]):
        out[j] = t[j - 3]


def test_a_variable_tuple_index_counts_from_the_end_when_negative(target):
    """t[k] with k from -3 to 2: Python's items (it read the last item for every negative k)."""
    out = target.to_device(np.zeros(6))
    target.launch(cuda.jit(tuple_by_variable), 1, 1, out, 1.0, 2.0, 3.0)
    np.testing.assert_array_equal(target.to_host(out), [1, 2, 3, 1, 2, 3])


def shape_by_variable(a):
    x = cuda.threadIdx.x
    if x == 2:
        a[0] = a.shape[-x]


def test_a_variable_tuple_index_out_of_range_raises_index_error():
    with cuda.simulate(), pytest.raises(IndexError, match="tuple index out of range"):
        cuda.jit(shape_by_variable)[1, 3](np.zeros(2, np.int64))


def divide_first(r, x, y):
    r[0] = y[0] / x[0]
    r[1] = y[0] // x[0]


@pytest.mark.parametrize("opts, raises", [({"debug": True}, True),
                                          ({"debug": True, "fastmath": True}, False),
                                          ({}, False)])
def test_debug_kernels_raise_zero_division_error(opts, raises):
    """numba's debug=True: a division by zero raises ZeroDivisionError at its line, before
    anything after it runs; without debug (or a float division with fastmath) the result is
    the hardware's, inf."""
    r = np.full(2, 7.0)
    k = cuda.jit(**opts)(divide_first)
    with cuda.simulate():
        if raises:
            with pytest.raises(ZeroDivisionError, match="division by zero"):
                k[1, 1](r, np.zeros(1), np.ones(1))
            assert r[0] == 7.0
        else:
            with np.errstate(divide="ignore"):
                k[1, 1](r, np.zeros(1), np.ones(1))
            assert np.isinf(r[0])
    if raises:
        assert "ZeroDivisionError" not in k.cuda_source(r, np.zeros(1), np.ones(1)) and \
            "== 0.0" in k.cuda_source(r, np.zeros(1), np.ones(1))


def invert_bools(out, flags):
    for i in range(flags.shape[0]):
        f = flags[i]
        out[i] = ~f


def test_invert_of_a_bool_is_logical_not(target):
    """numba types ~ of a bool as NumPy does (a bool, the logical not); C++'s ~true is -2."""
    flags = np.array([True, False, True])
    out = target.to_device(np.zeros(3, np.bool_))
    target.launch(cuda.jit(invert_bools), 1, 1, out, target.to_device(flags))
    np.testing.assert_array_equal(target.to_host(out), ~flags)
    assert "= !f" in cuda.jit(invert_bools).cuda_source(np.zeros(3, np.bool_), flags)


def add_to_pair(pair, v):
    a, b = pair
    for i in range(a.shape[0]):
        a[i] += v
        b[i] = a[i] * 2


def test_host_arrays_in_a_tuple_go_to_the_device_and_back(target):
    """numba copies the NumPy arrays of a tuple argument to the GPU and back, as it does
    top-level ones (the target's launch passes them as they are)."""
    a, b = np.arange(4.0), np.zeros(4)
    Pair = namedtuple("Pair", "a b")
    target.launch(cuda.jit(add_to_pair), 1, 1, Pair(a, b), 1.5)
    np.testing.assert_array_equal(a, np.arange(4.0) + 1.5)
    np.testing.assert_array_equal(b, 2 * (np.arange(4.0) + 1.5))


class _Odd(Exception):
    pass


def raises_odd(a):
    if a[0] % 2 == 1:
        raise _Odd("odd", 3)


def test_debug_kernels_report_raises_to_the_host_in_their_source():
    """debug=True: a raise is tt::report_raise with a code the CUDA source's records name
    (kept through the source cache's JSON); without debug the thread only exits."""
    from threadtile.backends.cuda.emit import CudaSource
    from threadtile.runtime import raised

    k = cuda.jit(debug=True)(raises_odd)
    src = k.cuda_source(np.zeros(1, np.int64))
    assert "tt::report_raise(tt_raised, 0)" in src and "__device__ unsigned long long tt_raised" \
        in src
    spec = k.specialization([cuda.int64[::1]], {})
    cs = CudaSource.from_json(spec.cuda.to_json())
    (rec,) = cs.raises
    exc, where = raised.from_description(rec)
    assert isinstance(exc, _Odd) and exc.args == ("odd", 3) and "raises_odd" in where
    assert "report_raise" not in cuda.jit(raises_odd).cuda_source(np.zeros(1, np.int64))
    for arch in ("sm_80", "sm_90"):
        assert k.compile(np.zeros(1, np.int64), arch=arch).cubin[:4] == b"\x7fELF"


def reshaped_copy(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


def reshape_by_numbers(arr, got):
    y = arr.reshape(3, -1)
    got[0, 0] = y.shape[1]
    got[1, 0] = y[2, 1]


@pytest.mark.parametrize("shape", [(4, 6), (-1, 3), (2, -1), (24, 1)])
def test_reshape_of_a_contiguous_array(target, shape):
    arr = np.arange(24.0).reshape(2, 3, 4)
    want = arr.reshape(shape)
    got = target.to_device(np.full(want.shape, -1.0))
    target.launch(cuda.jit(reshaped_copy), 1, 1, target.to_device(arr), shape, got)
    np.testing.assert_array_equal(target.to_host(got), want)
    got = target.to_device(np.zeros((2, 1)))
    target.launch(cuda.jit(reshape_by_numbers), 1, 1, target.to_device(np.arange(12.0)), got)
    np.testing.assert_array_equal(target.to_host(got), [[4.0], [9.0]])


def test_reshape_errors():
    with cuda.simulate(), pytest.raises(ValueError, match="total size"):
        cuda.jit(reshaped_copy)[1, 1](np.arange(6.0), (4, 2), np.zeros((4, 2)))
    with pytest.raises(KernelCompileError, match="C-contiguous"):
        cuda.jit(reshaped_copy).cuda_source(np.arange(12.0)[::2], (2, 3), np.zeros((2, 3)))
    for arch in ("sm_80", "sm_90"):
        assert cuda.jit(reshaped_copy).compile(np.arange(6.0), (2, 3), np.zeros((2, 3)),
                                               arch=arch).cubin[:4] == b"\x7fELF"


def bytes_as_int32(byte_arr, start, stop, output):
    output[0] = byte_arr[start:stop].view(np.int32)[0]
    w = byte_arr.view(np.uint16)
    output[1] = w.shape[0]
    output[2] = w[3]


def test_view_of_an_array_as_another_dtype(target):
    """numba's a.view(dtype): the bytes of a contiguous array as another dtype's elements."""
    b = np.arange(64, dtype=np.uint8)
    k = cuda.jit(bytes_as_int32)
    for start in (0, 4, 60):
        out = target.to_device(np.zeros(3, np.int32))
        target.launch(k, 1, 1, target.to_device(b), start, start + 4, out)
        np.testing.assert_array_equal(target.to_host(out), [
            b[start:start + 4].view(np.int32)[0], 32, b.view(np.uint16)[3]])
    for arch in ("sm_80", "sm_90"):
        assert k.compile(b, 0, 4, np.zeros(3, np.int32), arch=arch).cubin[:4] == b"\x7fELF"
    with cuda.simulate(), pytest.raises(ValueError, match="not a whole number"):
        k[1, 1](b, 1, 5, np.zeros(3, np.int32))
