import sys, importlib.util
sys.path.insert(0, "tests"); sys.path.insert(0, "probe/cutile/samples")
import numpy as np
from compat.cutile_suite import swap_imports
src = swap_imports(open("probe/s33/AttentionFMHA_split.py").read()).split("if __name__")[0]
open("/tmp/fmha_sample.py", "w").write(src)
spec = importlib.util.spec_from_file_location("fmha", "/tmp/fmha_sample.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
tm, tn, D, causal = [int(a) for a in sys.argv[1:5]]
k = m.fmha_kernel
q = np.zeros((1, 4, 256, D), np.float16)
s = k._spec_for([q, q, q, q, 0.1, 0], dict(TILE_D=D, H=4, TILE_M=tm, TILE_N=tn, QUERY_GROUP_SIZE=1, CAUSAL=bool(causal), EVEN_K=True))
print(s.cuda.text)
