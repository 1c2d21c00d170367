"""One corpus kernel on the GPU, for bench/sanitizer_vs_simulator.py to run under
compute-sanitizer:

    compute-sanitizer --tool racecheck python bench/_sanitizer_child.py shared-raw-neighbor bug

The second argument is ``bug`` (the buggy kernel), ``fixed`` (its correct twin) or ``clean`` (a
kernel of tests/corpus/clean.py). The inputs are the case's NumPy arrays, copied to the GPU and
back around the launch; the child synchronizes, then prints one line saying whether the launch
returned or raised (a kernel that faults raises: the sanitizer's report is what counts). It
always exits 0, so that the parent reads the sanitizer's verdict from its report alone.
"""

import os
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(1, str(ROOT / "tests"))
os.environ.pop("THREADTILE_SIMULATE", None)  # a GPU launch, whatever the caller's environment


def main() -> None:
    name, variant = sys.argv[1], sys.argv[2]
    import corpus  # noqa: PLC0415

    import threadtile  # noqa: PLC0415

    case = corpus.case(name)
    warnings.simplefilter("ignore")  # HostArrayWarning: the copies are intended here
    try:
        case.launch(fixed=variant == "fixed")
        threadtile.synchronize()
    except Exception as e:  # noqa: BLE001  (a faulting kernel: reported, not fatal)
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"threadtile-corpus: raised {type(e).__name__}: {first}", flush=True)
    else:
        print("threadtile-corpus: launched", flush=True)


if __name__ == "__main__":
    main()
