import sys, time, re, numpy as np
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
text = s.cuda.text
opts = target_for(s, "sm_90a", tuple(k.options)).options
nvrtc.compile_ptx('extern "C" __global__ void w(float* x) { x[0] = 1; }', "sm_90a")
def tm_(t, o):
    best = 9
    for _ in range(2):
        t0 = time.perf_counter(); nvrtc.compile_cubin(t, "sm_90a", options=o); best = min(best, time.perf_counter() - t0)
    return best
print("as is", opts, "%.2f" % tm_(text, opts))
print("no lineinfo", "%.2f" % tm_(text, tuple(o for o in opts if o != "-lineinfo")))
print("no producer", "%.2f" % tm_(text, tuple(o for o in opts if o != "-DTT_PRODUCER")))
print("no TMA_ONLY", "%.2f" % tm_(text, tuple(o for o in opts if o not in ("-DTT_TMA_ONLY", "-DTT_PRODUCER"))))
print("-O? dopt", "%.2f" % tm_(text, opts + ("-Xptxas=-O1",)))
print(text[text.index('extern "C"'):][:3000])
t2 = re.sub(r"tt::tile::store_fragments\(Out, _t0, \(int64_t\)bi, \(int64_t\)bj\);", "if (_t0.v[0] == __half(1.5f)) Out.data[0] = _t0.v[1];", text)
print("no store", "%.2f" % tm_(t2, opts))
t3 = re.sub(r"acc = tt::tile::mma_loop<[^;]*;", "", text)
print("no mma_loop", "%.2f" % tm_(t3, opts))
t4 = text.replace('#include "tile.h"', '#define TT_NO_CHECKED 1\n#include "tile.h"')
print("guarded alone", "%.2f" % tm_(t4, opts))
t5 = re.sub(r"tt::tile::store_fragments\(Out, _t0, \(int64_t\)bi, \(int64_t\)bj\);", "{ float s_ = 0; for (int i_ = 0; i_ < decltype(_t0)::N; ++i_) s_ += float(_t0.v[i_]); if (s_ == 1.5f) Out.data[threadIdx.x] = __half(s_); }", text)
print("sum store", "%.2f" % tm_(t5, opts))
