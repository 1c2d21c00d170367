"""Build cuTile's FMHA sample kernel for sm_90a on the CPU; print ptxas's numbers at 1 and 2
blocks (env decides the variant: TT_EXP_REFILL, THREADTILE_OVERLAP)."""
import sys, importlib.util, re, os
sys.path.insert(0, "tests"); sys.path.insert(0, "tests/compat"); sys.path.insert(0, "probe/cutile/samples")
import numpy as np
from compat.cutile_suite import swap_imports
src = swap_imports(open("probe/cutile/samples/AttentionFMHA.py").read()).split("if __name__")[0]
open("/tmp/fmha_sample.py", "w").write(src)
spec = importlib.util.spec_from_file_location("fmha", "/tmp/fmha_sample.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
from threadtile.builds import target_for
from threadtile import blockfit
for cfg in sys.argv[1:]:
    tm, tn, D, causal = [int(a) for a in cfg.split(",")]
    k = m.fmha_kernel
    q = np.zeros((1, 4, 256, D), np.float16)
    s = k._spec_for([q, q, q, q, 0.1, 0], dict(TILE_D=D, H=4, TILE_M=tm, TILE_N=tn, QUERY_GROUP_SIZE=1, CAUSAL=bool(causal), EVEN_K=True))
    t = target_for(s, "sm_90a", tuple(k.options))
    text = s.cuda.text
    if os.environ.get("DROP") == "1":
        text = blockfit.without_optional(text)
    if os.environ.get("TT_EXP_REFILL") == "1":
        text = "#define TT_REFILL_WAIT 1\n" + text
    for nb in (1, 2):
        T = re.sub(r"__launch_bounds__\((\d+), \d+\)", rf"__launch_bounds__(\1, {nb})", text)
        log = blockfit.ptxas_log(T, "sm_90a", t.options, s.cuda.entry)[1]
        msg = [l for l in log.splitlines() if "C75" in l or "Used" in l or "spill" in l or "error" in l.lower()]
        print(cfg, "blocks", nb, "|", " / ".join(x.strip()[-300:] for x in msg), flush=True)
