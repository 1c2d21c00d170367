import sys, time, numpy as np
sys.path.insert(0, "bench")
import threadtile.tile as ct
from threadtile.builds import target_for
from threadtile.runtime import nvrtc
from tile_sweep import build
ks = build(ct)
form = sys.argv[1]; tm, tn, tk = map(int, sys.argv[2].split("x"))
k = ks[form]
a = np.zeros((8, 2048, 2048) if form == "batched" else (4096, 4096), np.float16)
s = k._spec_for([a, a, a, tm, tn, tk, 0], {})
t0 = time.perf_counter(); text = s.cuda.text; t1 = time.perf_counter()
tgt = target_for(s, "sm_90a", tuple(k.options))
ptx = nvrtc.compile_ptx(text, "sm_90a", options=tgt.options); t2 = time.perf_counter()
cub = nvrtc.compile_cubin(text, "sm_90a", options=tgt.options); t3 = time.perf_counter()
print(form, sys.argv[2], "ir+emit %.2f  ptx %.2f  cubin %.2f" % (t1 - t0, t2 - t1, t3 - t2))
# a trivial kernel with the same headers: the header cost
triv = text.split('extern "C"')[0] + 'extern "C" __global__ void triv(float* x) { x[0] = 1; }\n'
t4 = time.perf_counter(); nvrtc.compile_ptx(triv, "sm_90a", options=tgt.options); t5 = time.perf_counter()
print("headers alone (ptx) %.2f" % (t5 - t4))
