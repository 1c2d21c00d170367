import sys, types, importlib.util, re
sys.path.insert(0, "tests"); sys.path.insert(0, "probe/cutile/samples")
import numpy as np
from compat.cutile_suite import swap_imports
src = swap_imports(open("probe/cutile/samples/AttentionFMHA.py").read())
src = src.split("if __name__")[0]
open("/tmp/fmha_sample.py", "w").write(src)
spec = importlib.util.spec_from_file_location("fmha", "/tmp/fmha_sample.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
k = m.fmha_kernel
B, H, S, D = 1, 4, 256, int(sys.argv[1]) if len(sys.argv) > 1 else 128
q = np.zeros((B, H, S, D), np.float16); o = np.zeros_like(q)
for tm, tn in [(128, 128), (128, 64), (64, 64)]:
    for causal in (False, True):
        r = k.resources(q, q, q, o, 0.1, 0, arch="sm_90a", TILE_D=D, H=H, TILE_M=tm, TILE_N=tn,
                        QUERY_GROUP_SIZE=1, CAUSAL=causal, EVEN_K=True)
        txt = str(r)
        print(tm, tn, causal, " | ".join(l.strip() for l in txt.splitlines() if re.search("regist|spill|occup|block|threads", l))[:400], flush=True)
