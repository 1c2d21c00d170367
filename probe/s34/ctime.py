import sys, time, numpy as np
sys.path.insert(0, "bench")
import threadtile.tile as ct
from threadtile.builds import target_for
from tile_sweep import build
ks = build(ct)
form = sys.argv[1]; tm, tn, tk = map(int, sys.argv[2].split("x"))
k = ks[form]
if form == "batched":
    a = np.zeros((8, 2048, 2048), np.float16); b = a; o = a
else:
    a = np.zeros((4096, 4096), np.float16); b = a; o = a
t0 = time.perf_counter()
s = k._spec_for([a, b, o, tm, tn, tk, 0], {})
t1 = time.perf_counter()
tgt = target_for(s, "sm_90a", tuple(k.options))
b_ = s.build(tgt)
t2 = time.perf_counter()
print(form, sys.argv[2], "front %.2f s  build %.2f s" % (t1 - t0, t2 - t1), tgt.options, len(s.cuda.text.splitlines()), "lines")
