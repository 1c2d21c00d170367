import sys, importlib.util, subprocess, tempfile, os
sys.path.insert(0, "tests"); sys.path.insert(0, "probe/cutile/samples")
import numpy as np
from compat.cutile_suite import swap_imports
from threadtile.compiler import Target  # noqa
src = swap_imports(open("probe/cutile/samples/AttentionFMHA.py").read()).split("if __name__")[0]
open("/tmp/fmha_sample.py", "w").write(src)
spec = importlib.util.spec_from_file_location("fmha", "/tmp/fmha_sample.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
tm, tn, D, causal = [int(a) for a in sys.argv[1:5]]
k = m.fmha_kernel
q = np.zeros((1, 4, 256, D), np.float16)
s = k._spec_for([q, q, q, q, 0.1, 0], dict(TILE_D=D, H=4, TILE_M=tm, TILE_N=tn, QUERY_GROUP_SIZE=1, CAUSAL=bool(causal), EVEN_K=True))
from threadtile.builds import target_for
b = s.build(target_for(s, "sm_90a", tuple(k.options)))
print(b.target, file=sys.stderr)
print("resources", getattr(b, "resources", None), file=sys.stderr)
f = tempfile.NamedTemporaryFile(suffix=".cubin", delete=False); f.write(b.cubin); f.close()
print(subprocess.run(["/tmp/nvd/nvidia/cu13/bin/nvdisasm", "-c", f.name], capture_output=True, text=True).stdout)
from threadtile import blockfit
t = target_for(s, "sm_90a", tuple(k.options))
log = blockfit.ptxas_log(s.cuda.text, "sm_90a", t.options, s.cuda.entry)[1]
print("\n".join(l for l in log.splitlines() if "wgmma" in l.lower() or "spill" in l.lower() or "Used" in l), file=sys.stderr)
print([a for a in dir(b) if not a.startswith("_")], file=sys.stderr)
from threadtile.runtime import nvrtc
import inspect
ptx = nvrtc.compile_ptx(s.cuda.text, "sm_90a", options=t.options)
open("/tmp/fmha.ptx", "w").write(ptx)
