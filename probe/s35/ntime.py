import sys, time, numpy as np, os
sys.path.insert(0, "bench")
import threadtile.tile as ct
from threadtile.builds import target_for
from threadtile.runtime import nvrtc
from tile_sweep import build
ks = build(ct)
form = sys.argv[1]; tm, tn, tk = map(int, sys.argv[2].split("x"))
a = np.zeros((8, 2048, 2048) if form == "batched" else (4096, 4096), np.float16)
s = ks[form]._spec_for([a, a, a, tm, tn, tk, 0], {})
opts = target_for(s, "sm_90a", ()).options
try:
    os.remove("/tmp/nvrtc_time.csv")
except OSError:
    pass
nvrtc.compile_cubin(s.cuda.text, "sm_90a", options=opts + ("--time=/tmp/nvrtc_time.csv",))
print(open("/tmp/nvrtc_time.csv").read())
