"""Kernels the fuzzer (tools/fuzz) found and minimized, one test module each.

A module holds the minimized kernel and a test running it in the simulator's lockstep and
python modes; a known, unfixed mismatch is a strict ``xfail`` naming it. The repository root
goes on ``sys.path`` so that the modules import ``tools.fuzz``.
"""

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
