import sys, time, re
sys.argv = sys.argv[:1] + sys.argv[1:5]
exec(open("probe/s34/sass.py").read().split("b = s.build")[0])
from threadtile.builds import target_for
from threadtile.runtime import nvrtc
t = target_for(s, "sm_90a", tuple(k.options))
nvrtc.compile_ptx('extern "C" __global__ void w(float* x) { x[0] = 1; }', "sm_90a")
text = s.cuda.text
def tm_(txt):
    best = 9
    for _ in range(2):
        t0 = time.perf_counter(); nvrtc.compile_cubin(txt, "sm_90a", options=t.options); best = min(best, time.perf_counter() - t0)
    return best
print(sys.argv[1:5], "%.2f" % tm_(text))
if len(sys.argv) > 5 or True:
    import os
    if os.environ.get("PARTS"):
        body = text
        t2 = re.sub(r"tt::tile::store_fragments\(Out, acc_1,[^;]*;", "if (acc_1.v[0] == __half(1.5f)) Out.data[0] = acc_1.v[1];", body)
        print(" no store %.2f" % tm_(t2))
