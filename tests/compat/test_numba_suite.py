"""numba-cuda's own test suite on threadtile (numba_suite.py): no wrong results, and no fewer
passing tests than the recorded baseline (tests/compat/baseline.json, raised as support grows).
The table goes to $THREADTILE_COMPAT_TABLE (default: the pytest temporary directory)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numba_suite
import pytest

BASELINE = Path(__file__).with_name("baseline.json")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """The harness in a process of its own: numba's test modules and what they set stay there."""
    if numba_suite.suite_dir() is None:
        pytest.skip("numba-cuda is not installed (the test extra installs it)")
    out = tmp_path_factory.mktemp("compat") / "outcomes.json"
    subprocess.run([sys.executable, numba_suite.__file__, "--json", str(out)], check=True,
                   timeout=1800)
    return [numba_suite.Outcome(**o) for o in json.loads(out.read_text())]


def test_numba_suite_runs_unchanged(outcomes, tmp_path_factory):
    table = os.environ.get("THREADTILE_COMPAT_TABLE") or \
        tmp_path_factory.mktemp("compat") / "numba_suite.md"
    Path(table).write_text(numba_suite.markdown(outcomes))
    s = numba_suite.summary(outcomes)
    print("numba-cuda's suite on threadtile:", json.dumps(s), "table:", table)
    base = json.loads(BASELINE.read_text())
    wrong = [f"{o.test}: {o.detail}" for o in outcomes if o.status == "wrong"]
    assert len(wrong) <= base["wrong"], "wrong results:\n" + "\n".join(wrong)
    assert s.get("pass", 0) >= base["pass"], \
        f"{s.get('pass', 0)} tests pass, fewer than the {base['pass']} of the baseline"


def test_the_harness_tells_outcomes_apart():
    """The classification can fail: a passing, a failing and a refusing test are told apart."""
    import unittest

    import threadtile

    class Case(unittest.TestCase):
        def test_pass(self):
            pass

        def test_wrong(self):
            self.assertEqual(1, 2)

        def test_refused(self):
            threadtile.jit("void(float32[:])", options_nobody_has=1)

    def outcome(name):
        return numba_suite.classify(
            numba_suite.run_case(Case(name), numba_suite.Recorder(), threadtile.simulate))[0]

    assert [outcome(n) for n in ("test_pass", "test_wrong", "test_refused")] == \
        ["pass", "wrong", "refused"]
    src = "from numba import cuda, vectorize\n    from numba.cuda import jit, types\n"
    assert numba_suite.swap_imports(src) == (
        "import threadtile as cuda\nfrom numba import vectorize\n"
        "    from threadtile import jit\n    from numba.cuda import types\n")
