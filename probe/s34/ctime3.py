import sys, time, numpy as np
sys.path.insert(0, "bench")
import threadtile.tile as ct
from threadtile.builds import target_for
from threadtile.runtime import nvrtc
from threadtile import blockfit
from tile_sweep import build
ks = build(ct)
form = sys.argv[1]; tm, tn, tk = map(int, sys.argv[2].split("x"))
k = ks[form]
a = np.zeros((8, 2048, 2048) if form == "batched" else (4096, 4096), np.float16)
s = k._spec_for([a, a, a, tm, tn, tk, 0], {})
text = s.cuda.text
tgt = target_for(s, "sm_90a", tuple(k.options))
nvrtc.compile_ptx('extern "C" __global__ void w(float* x) { x[0] = 1; }', "sm_90a")  # warm
def tm_(f):
    t = time.perf_counter(); f(); return time.perf_counter() - t
p1 = tm_(lambda: nvrtc.compile_ptx(text, "sm_90a", options=tgt.options))
p2 = tm_(lambda: nvrtc.compile_ptx(text, "sm_90a", options=tgt.options))
c1 = tm_(lambda: nvrtc.compile_cubin(text, "sm_90a", options=tgt.options))
c2 = tm_(lambda: nvrtc.compile_cubin(text, "sm_90a", options=tgt.options))
t0 = time.perf_counter()
fit = blockfit.compile_fitted(text, s.cuda.entry, "sm_90a", tgt.options, s.cuda.fit_threads, s.cuda.scratch_for("sm_90a"), s.cuda.fit_blocks)
t1 = time.perf_counter()
print(form, sys.argv[2], tgt.options, "ptx %.2f %.2f cubin %.2f %.2f fitted %.2f blocks %s" % (p1, p2, c1, c2, t1 - t0, fit.blocks))
