import os, sys, runpy
sys.path[:0] = [os.path.abspath("src"), os.path.abspath("examples"), os.path.abspath("bench")]
from threadtile.ir import tiling
tiling.STAGES_FEW_ROWS = int(os.environ["FS"])
tiling.STAGED_MAX_BYTES = max(tiling.STAGED_MAX_BYTES, 200 * 1024)
runpy.run_path("probe/kspl.py", run_name="__main__")
