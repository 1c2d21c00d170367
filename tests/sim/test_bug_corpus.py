"""The bug corpus (tests/corpus) in the simulator.

Every buggy kernel must raise its error class at the line its ``# BUG: <name>`` marker names,
in the block and thread the case expects; a race must name the other access's line too (its
``# PAIR: <name>`` marker, or the same line). Every correct twin and every clean kernel must
run without an error and without a :class:`threadtile.errors.RaceWarning` (a false alarm is
either). Cases the simulator misses carry an ``xfail`` reason and run as strict expected
failures, so a fix shows up as an unexpected pass.
"""

import warnings

import pytest
from corpus import CLASSES, all_cases, clean_cases

from threadtile.backends.sim import simulate
from threadtile.errors import KernelRuntimeError, RaceError, RaceWarning

CASES = all_cases()
TWINS = [c for c in CASES if c.fixed is not None]
CLEAN = clean_cases()


def _param(case, marks=()):
    return pytest.param(case, id=case.name, marks=marks)


def _buggy(case):
    marks = pytest.mark.xfail(reason=case.xfail, strict=True) if case.xfail else ()
    return _param(case, marks)


def test_corpus_size_and_classes():
    assert len(CASES) >= 60
    assert {c.bug_class for c in CASES} == set(CLASSES)
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_every_case_marks_its_line(case):
    _, line, pair = case.marks()
    assert line is not None, f"no '# BUG: {case.name}' marker"
    assert pair is None or case.error is RaceError


@pytest.mark.parametrize("case", [_buggy(c) for c in CASES])
def test_simulator_catches_the_bug(case):
    path, line, pair = case.marks()
    with simulate(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RaceWarning)
        with pytest.raises(KernelRuntimeError) as info:
            case.launch()
    e = info.value
    assert type(e) is case.error, str(e)
    assert (e.loc.filename, e.line) == (path, line), str(e)
    assert f'"{path}", line {line}' in str(e)
    if case.where is not None:
        assert (e.block, e.thread) == case.where, str(e)
    if case.error is RaceError:
        assert e.other.line == (pair or line), str(e)


@pytest.mark.parametrize("case", [_param(c) for c in TWINS])
def test_correct_twin_runs_clean(case):
    with simulate(), warnings.catch_warnings():
        warnings.simplefilter("error", RaceWarning)
        case.launch(fixed=True)


@pytest.mark.parametrize("case", [_param(c) for c in CLEAN])
def test_clean_kernel_runs_clean(case):
    with simulate(), warnings.catch_warnings():
        warnings.simplefilter("error", RaceWarning)
        case.launch()
