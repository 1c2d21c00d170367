import sys, time, numpy as np
sys.path.insert(0, "bench")
import threadtile.tile as ct
from threadtile.builds import target_for
from threadtile.runtime import nvrtc
from tile_sweep import build
ks = build(ct)
nvrtc.compile_ptx('extern "C" __global__ void w(float* x) { x[0] = 1; }', "sm_90a")
tot = 0
for form, tiles in [("plain", "128x64x32"), ("plain", "128x128x64"), ("plain", "64x256x64"), ("plain", "256x64x32"),
                    ("batched", "128x128x64"), ("persistent", "128x128x64"), ("persistent", "64x64x64"), ("plain", "64x64x64")]:
    tm, tn, tk = map(int, tiles.split("x"))
    a = np.zeros((8, 2048, 2048) if form == "batched" else (4096, 4096), np.float16)
    s = ks[form]._spec_for([a, a, a, tm, tn, tk, 0], {})
    opts = target_for(s, "sm_90a", ()).options
    best = 9
    for _ in range(2):
        t0 = time.perf_counter(); nvrtc.compile_cubin(s.cuda.text, "sm_90a", options=opts); best = min(best, time.perf_counter() - t0)
    tot += best
    print(form, tiles, "%.2f" % best)
print("total %.2f" % tot)
