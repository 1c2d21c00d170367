import sys, importlib.util
sys.path.insert(0, "tests"); sys.path.insert(0, "probe/cutile/samples")
import numpy as np
from compat.cutile_suite import swap_imports
for name in ["probe/cutile/samples/AttentionFMHA.py", "probe/s33/AttentionFMHA_split.py"]:
    src = swap_imports(open(name).read()).split("if __name__")[0]
    open("/tmp/fmha_x.py", "w").write(src)
    spec = importlib.util.spec_from_file_location("fmha_x", "/tmp/fmha_x.py")
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    for D, tm, tn in [(128, 64, 64), (128, 128, 64), (64, 128, 128), (64, 64, 64)]:
        q = np.zeros((1, 4, 256, D), np.float16)
        r = m.fmha_kernel.resources(q, q, q, q, 0.1, 0, arch="sm_90a", TILE_D=D, H=4, TILE_M=tm, TILE_N=tn,
                            QUERY_GROUP_SIZE=1, CAUSAL=True, EVEN_K=True)
        print(name.split("/")[-1], D, tm, tn, r.registers, r.spill_stores, r.blocks_per_sm, flush=True)
