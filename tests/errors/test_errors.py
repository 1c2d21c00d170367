"""What users see when a kernel is wrong: KernelCompileError with the file, the exact line, the
source line with carets under the offending code, the message and the hint; and launch
argument errors raised before anything compiles or runs."""

import importlib
from pathlib import Path

import bad_kernels as bad
import numpy as np
import pytest

import threadtile
from threadtile.errors import KernelCompileError

tt_jit = importlib.import_module("threadtile.jit")  # the module (threadtile.jit is the decorator)

BAD_FILE = str(Path(bad.__file__).resolve())
_LINES = Path(BAD_FILE).read_text().splitlines()
A = np.zeros(4, np.float32)


def marker_line(case: str) -> int:
    """The 1-based line of bad_kernels.py that ends with ``# ERR <case>``."""
    hits = [n for n, text in enumerate(_LINES, 1) if text.rstrip().endswith(f"# ERR {case}")]
    assert len(hits) == 1, f"marker for {case}: {hits}"
    return hits[0]


UNBOUND = ("Use of potentially undefined variable `{0}`: local variable '{0}' is not assigned "
           "on every path to this line (Python raises UnboundLocalError here; a GPU would read "
           "an undefined value)")
UNBOUND_HINT = "assign '{0}' before the branch or loop that sets it, or in every branch"

# kernel, case marker, example args, message, hint (or None), the source text under the carets
CASES = [
    ("list_literal", (A,), "a list is not supported in kernels",
     "use local.array(shape, dtype) for a per-thread array, or a tuple for a few values",
     "[1, 2]"),
    ("list_comprehension", (A,), "a list comprehension is not supported in kernels",
     "write a for-loop over range() that fills a local.array", "[i * 2 for i in range(4)]"),
    ("try_except", (A,), "try/except is not supported in kernels",
     "kernels cannot catch exceptions; check conditions and return early", "t"),
    ("builtin_sum", (A,), "the builtin sum() is not supported in kernels",
     "add the values in a loop: s = 0.0; for v in a: s += v", "sum(a)"),
    ("complex_order", (A,), "complex numbers have no order: < is not defined on them",
     "compare their abs() or their .real parts", "complex(a[1], a[2]) < 1j"),
    ("numpy_zeros", (A,), "numpy.zeros() allocates an array, which a kernel cannot",
     "use cuda.local.array(shape, dtype) for a per-thread array, or "
     "cuda.shared.array(shape, dtype) for one the block shares", "np.zeros(4)"),
    ("string_format", (A,), "string formatting is not supported in kernels",
     "kernels print strings and numbers as they are: print('i =', i)", '"%d" % i'),
    ("unbound_after_branch", (A, A), UNBOUND.format("v"), UNBOUND_HINT.format("v"), "v"),
    ("unbound_elif", (A, A), UNBOUND.format("v"), UNBOUND_HINT.format("v"), "v"),
    ("tuple_call_in_condition", (A,), "a call returning a tuple inside `and`/`or`, a "
     "conditional expression or a loop condition",
     "assign its result to variables first: a, b = f(x)", "pair(i)"),
    ("attribute_assign", (A,), "assigning to an attribute is not supported in kernels",
     "kernels can only assign to local variables and array elements", "a.shape"),
    ("for_over_number", (A, A), "cannot loop over int64",
     "kernels loop over range(), arrays, tuples, and enumerate/zip/reversed of those",
     "a.size"),
    ("kernel_returns", (A,), "a kernel cannot return a value",
     "write results into an output array; only device functions (@jit(device=True)) return "
     "values", "return a[i] * 2"),
    ("intrinsic_arity", (A,), "cuda.syncthreads() takes 0 arguments, got 1", None,
     "cuda.syncthreads(1)"),
    ("shared_shape_variable", (A, 3), "array shapes must be compile-time integer constants",
     "use a literal, a global, or a Constant[int] parameter; shape 0 makes a dynamic shared "
     "array sized at launch", "cuda.shared.array(n, np.float32)"),
    ("array_then_number", (A, A),
     "'x' is assigned both array(float32, 1d) and int64: its type depends on path taken",
     "use a different variable for each", "x = 1"),
    ("param_retyped", (A, 3), "parameter 'n' is int64 (from its argument) but is assigned "
     "float32 here", "assign the value to a new variable", "n = a[0] * 0.5"),
    ("undefined_name", (A,), "Undefined variable not_defined_anywhere used: name "
     "'not_defined_anywhere' is not defined", None,
     "not_defined_anywhere"),
    ("float_index", (A,), "array index must be an integer, got float64", "convert with int(...)",
     "a[1.5]"),
    ("while_else", (A,), "while ... else is not supported in kernels", "use a flag variable", "w"),
    ("bitwise_float", (A,), "operator & needs integers, got float32", None, "a[1] & 3"),
    ("negative_power", (A,), "integers to negative integer powers are not allowed",
     "make the base a float: 2.0 ** -1", "2 ** -1"),
    ("atomic_on_local", (A,), "atomic.add() works on global and shared arrays, not local", None,
     "cuda.atomic.add(loc, 0, 1)"),
]


@pytest.mark.parametrize(("case", "args", "message", "hint", "under"), CASES,
                         ids=[c[0] for c in CASES])
def test_compile_error(case, args, message, hint, under):
    kernel = getattr(bad, case)
    with pytest.raises(KernelCompileError) as info:
        kernel.cuda_source(*args)
    check_error(info.value, case, case, message, hint, under)


def check_error(e: KernelCompileError, case: str, function: str, message: str, hint, under):
    line = marker_line(case)
    assert (e.loc.filename, e.loc.line, e.loc.function) == (BAD_FILE, line, function)
    assert e.message == message
    assert e.hint == hint
    text = str(e).splitlines()[3 * len(e.callers):]  # (the calls that led there come first)
    assert text[0].startswith(f'  "{BAD_FILE}", line {line}, col {e.loc.col + 1}')
    assert text[0].endswith(f", in {function}:")
    source = _LINES[line - 1].strip()
    assert text[1] == "    " + source
    carets = text[2]
    assert set(carets.strip()) == {"^"}
    start = len(carets) - len(carets.lstrip()) - 4
    assert source[start:start + carets.count("^")] == under, carets
    assert text[3] == message
    assert text[4:] == ([f"({hint})"] if hint else [])


def test_error_inside_a_device_function_names_it():
    with pytest.raises(KernelCompileError) as info:
        bad.calls_recursive.cuda_source(A)
    check_error(info.value, "recursive", "recursive",
                "recursive() calls itself; recursion is not supported in kernels",
                "rewrite it as a loop", "recursive(n - 1)")
    # the kernel's call of it first, as a frame of its own
    assert [c[0].function for c in info.value.callers] == ["calls_recursive"]
    assert str(info.value).startswith(f'  "{BAD_FILE}", line ')


def test_compile_error_at_launch_in_the_simulator():
    """The same error comes out of a launch, before the kernel runs."""
    with pytest.raises(KernelCompileError) as info, threadtile_simulate():
        bad.list_literal[1, 1](A)
    assert info.value.loc.line == marker_line("list_literal")


def threadtile_simulate():
    sim = getattr(threadtile, "simulate", None)
    if sim is None:
        from threadtile.backends.sim import simulate as sim
    return sim()


# ---- launch arguments ------------------------------------------------------------------------

@pytest.fixture
def nothing_compiles(monkeypatch):
    """Fails the test if anything is specialized or compiled."""
    def refuse(*args, **kwargs):
        raise AssertionError("a bad launch reached the compiler")

    monkeypatch.setattr(tt_jit.Kernel, "specialize", refuse)
    monkeypatch.setattr(tt_jit, "build", refuse)


@pytest.mark.parametrize("simulated", [False, True], ids=["launch", "simulated"])
@pytest.mark.parametrize(("args", "kwargs", "text"), [
    ((A,), {}, "two_args() takes 2 arguments (a, b), got 1"),
    ((A, A, A), {}, "two_args() takes 2 arguments (a, b), got 3"),
    ((A,), {"c": A}, "two_args() has no parameter 'c'"),
    ((A, A), {"a": A}, "two_args() got 'a' twice"),
])
def test_wrong_arguments_raise_before_anything_runs(nothing_compiles, simulated, args, kwargs,
                                                    text):
    with pytest.raises(TypeError) as info:
        if simulated:
            with threadtile_simulate():
                bad.two_args[1, 1](*args, **kwargs)
        else:
            bad.two_args[1, 1](*args, **kwargs)
    assert text in str(info.value)


def test_wrong_arguments_to_cuda_source(nothing_compiles):
    with pytest.raises(TypeError, match=r"two_args\(\) takes 2 arguments \(a, b\), got 1"):
        bad.two_args.cuda_source(A)


def test_calling_a_kernel_like_a_function():
    with pytest.raises(ValueError, match=r"launch it with two_args\[grid, block\]"):
        bad.two_args(A, A)


def test_launching_a_device_function():
    with pytest.raises(TypeError, match="recursive is a device function: call it from a kernel"):
        bad.recursive[1, 1](3)


def test_jit_names_a_bad_signature():
    with pytest.raises(TypeError, match=r"bad signature 'void\(flaot32\[:\]\)': unknown type "
                                        r"'flaot32' \(did you mean 'float32'\?\)"):
        threadtile.jit("void(flaot32[:])")


def test_an_error_in_a_called_function_shows_the_calls():
    """An error in a function the kernel calls (a device function, a plain helper it inlines)
    is reported with the chain of calls from the kernel, outermost first, each a traceback
    frame with its source line and carets, as cuTile reports them."""
    with pytest.raises(KernelCompileError) as info:
        bad.helper_chain.ir(A)
    text = str(info.value)
    lines = [marker_line(c) for c in ("helper_chain", "helper_chain_middle",
                                      "helper_chain_inner")]
    heads = [f'"{BAD_FILE}", line {n}' for n in lines]
    at = [text.index(h) for h in heads]
    assert at == sorted(at), text  # the kernel's call, then the helper's, then the error's line
    assert "in helper_chain:" in text and "in _middle:" in text and "in _inner:" in text
    assert "a[0] = _middle(a)" in text and "return _inner(a)" in text
    assert text.rstrip().endswith("(arrays in kernels have .shape, .size, .ndim, .dtype, "
                                  ".copy() and .reshape())")
    assert info.value.loc.line == lines[2] and len(info.value.callers) == 2
