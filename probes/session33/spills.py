import sys, importlib.util, re
sys.path.insert(0, "tests"); sys.path.insert(0, "probe/cutile/samples")
import numpy as np
from compat.cutile_suite import swap_imports
src = swap_imports(open("probe/cutile/samples/AttentionFMHA.py").read()).split("if __name__")[0]
open("/tmp/fmha_sample.py", "w").write(src)
spec = importlib.util.spec_from_file_location("fmha", "/tmp/fmha_sample.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
for D, tm, tn, w, o in [(64,128,128,8,2),(128,128,128,8,2),(128,128,64,8,2),(64,128,64,8,2),(64,128,64,4,3),(128,128,64,4,3), (128,64,64,8,2)]:
    k = m.fmha_kernel.replace_hints(num_warps=w, occupancy=o)
    q = np.zeros((1, 4, 256, D), np.float16)
    for causal in (False, True):
        r = k.resources(q, q, q, q, 0.1, 0, arch="sm_90a", TILE_D=D, H=4, TILE_M=tm, TILE_N=tn,
                        QUERY_GROUP_SIZE=1, CAUSAL=causal, EVEN_K=True)
        print(D, tm, tn, w, o, causal, r.registers, r.spill_stores, r.spill_loads, r.blocks_per_sm, flush=True)
