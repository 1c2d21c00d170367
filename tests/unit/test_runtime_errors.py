"""The shared exception classes: traceback-style rendering and the class hierarchy."""

from dataclasses import dataclass

import pytest

from threadtile import errors


@dataclass
class Loc:
    filename: str
    line: int
    col: int = 0
    end_col: int | None = None
    function: str = "add"


def test_compile_error_renders_like_a_traceback_frame():
    src = "        c[i] = a[i] + bb[i]"
    col = src.index("bb[i]")
    e = errors.KernelCompileError("name 'bb' is not defined", Loc("k.py", 12, col, col + 5),
                                  src, hint="did you mean 'b'?")
    lines = str(e).splitlines()
    assert lines[0] == f'  "k.py", line 12, col {col + 1}-{col + 5}, in add:'
    assert lines[1] == "    c[i] = a[i] + bb[i]"  # indentation dropped, as Python does
    assert lines[2] == "    " + " " * (col - 8) + "^^^^^"
    assert lines[3] == "name 'bb' is not defined"
    assert lines[4] == "(did you mean 'b'?)"


def test_one_caret_without_an_end_column():
    e = errors.KernelCompileError("bad", Loc("k.py", 3, 4, None), "    x = 1")
    lines = str(e).splitlines()
    assert lines[0] == '  "k.py", line 3, col 5, in add:'
    assert lines[2] == "    ^"
    assert len(lines) == 4  # no hint line


def test_message_only_without_a_location():
    e = errors.KernelCompileError("something is wrong", hint="fix it")
    assert str(e) == "something is wrong\n(fix it)"
    assert e.message == "something is wrong" and e.loc is None


def test_carets_stay_within_the_line():
    e = errors.KernelCompileError("bad", Loc("k.py", 1, 2, 80), "x = yy")
    assert str(e).splitlines()[2] == "      ^^^^"


def test_nvrtc_error_keeps_the_log_and_parses_it():
    log = 'k.py(9): error: identifier "zz" is undefined\n  a = zz;\n      ^\n'
    e = errors.NvrtcError("NVRTC failed", log=log)
    assert isinstance(e, errors.KernelCompileError)
    assert e.log == log
    assert e.diagnostics == [("k.py", 9, 'identifier "zz" is undefined')]


def test_hierarchy():
    for cls in (errors.RaceError, errors.OutOfBoundsError, errors.BarrierDivergenceError,
                errors.UninitializedReadError):
        assert issubclass(cls, errors.KernelRuntimeError)
        assert issubclass(cls, errors.ThreadtileError)
        assert cls.__doc__
    assert issubclass(errors.LaunchError, ValueError)
    assert issubclass(errors.LaunchError, errors.ThreadtileError)
    with pytest.raises(ValueError):
        raise errors.LaunchError("block too large")
    e = errors.CudaDriverError("cuInit failed: CUDA_ERROR_NO_DEVICE", name="CUDA_ERROR_NO_DEVICE")
    assert isinstance(e, RuntimeError) and e.name == "CUDA_ERROR_NO_DEVICE"
