import sys, time, numpy as np, os
sys.path.insert(0, "bench")
os.environ["THREADTILE_CACHE_DIR"] = "/tmp/ctime-cache-%d" % os.getpid()
import threadtile.tile as ct
from threadtile.builds import target_for
from threadtile.runtime import nvrtc
from threadtile import blockfit
from tile_sweep import build
calls = []
orig = nvrtc.compile_cubin
def wrapped(text, arch, *a, **k):
    t0 = time.perf_counter(); r = orig(text, arch, *a, **k); calls.append(round(time.perf_counter() - t0, 3)); return r
nvrtc.compile_cubin = wrapped
ks = build(ct)
nvrtc.compile_ptx('extern "C" __global__ void w(float* x) { x[0] = 1; }', "sm_90a")
for item in sys.argv[1:]:
    form, tiles = item.split(":")
    tm, tn, tk = map(int, tiles.split("x"))
    a = np.zeros((8, 2048, 2048) if form == "batched" else (4096, 4096), np.float16)
    calls.clear()
    t0 = time.perf_counter()
    s = ks[form]._spec_for([a, a, a, tm, tn, tk, 0], {})
    text = s.cuda.text
    t1 = time.perf_counter()
    t = target_for(s, "sm_90a", ())
    t2 = time.perf_counter(); best = 9
    for _ in range(2):
        t3 = time.perf_counter(); nvrtc.compile_cubin(text, "sm_90a", options=t.options); best = min(best, time.perf_counter() - t3)
    t2 = t1 + best
    print(item, "frontend+emit %.3f" % (t1 - t0), "build %.3f" % (t2 - t1), "nvrtc calls", calls, flush=True)
