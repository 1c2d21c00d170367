import sys, importlib.util
sys.path.insert(0, "tests"); sys.path.insert(0, "tests/compat"); sys.path.insert(0, "probe/cutile/samples")
import numpy as np
from compat.cutile_suite import swap_imports
src = swap_imports(open("probe/cutile/samples/AttentionFMHA.py").read()).split("if __name__")[0]
open("/tmp/fmha_sample.py", "w").write(src)
spec = importlib.util.spec_from_file_location("fmha", "/tmp/fmha_sample.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
k = m.fmha_kernel
q = np.zeros((1, 4, 256, 128), np.float16)
print(k.ir(q, q, q, q, 0.1, 0, TILE_D=128, H=4, TILE_M=64, TILE_N=64, QUERY_GROUP_SIZE=1, CAUSAL=True, EVEN_K=True))
for causal in (True, False):
    src = k.cuda_source(q, q, q, q, 0.1, 0, TILE_D=128, H=4, TILE_M=64, TILE_N=64, QUERY_GROUP_SIZE=1, CAUSAL=causal, EVEN_K=True)
    print("CAUSAL", causal, "tt_bid_x" in src)
    if causal:
        print("\n".join(l for l in src.splitlines() if "tt_bid" in l or "tt_started" in l))
