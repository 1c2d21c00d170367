"""Instructions of the prefill attention's main loop (SASS, sm_90a TMA build) per variant."""
import os, re, subprocess, sys, collections
import numpy as np, ml_dtypes
sys.path[:0] = ["examples", "src"]
from llama import kernels as K
from threadtile.builds import target_for
def z(*s): return np.zeros(s, dtype=ml_dtypes.bfloat16)
def sass_of(kern, args, consts):
    spec = kern._spec_for(list(args), consts)
    b = spec.build(target_for(spec, "sm_90a", kern.options))
    open("/tmp/x.cubin", "wb").write(bytes(b.cubin))
    return subprocess.run(["/tmp/nvd/nvidia/cu13/bin/nvdisasm", "-c", "/tmp/x.cubin"], capture_output=True, text=True).stdout, b
def loop_stats(out):
    L = out.split("\n")
    labels = {l[:-1]: i for i, l in enumerate(L) if re.match(r"\.L_x_\d+:$", l)}
    best = None
    for i, l in enumerate(L):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", l)
        if m and labels.get(m.group(1), 1 << 30) < i and "HGMMA" in "".join(L[labels[m.group(1)]:i]):
            if best is None or i - labels[m.group(1)] > best[1] - best[0]:
                best = (labels[m.group(1)], i)
    body = L[best[0]:best[1] + 1]
    c = collections.Counter()
    for l in body:
        mm = re.search(r"/\*[0-9a-f]{4,6}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)", l)
        if mm: c[mm.group(1)] += 1
    return sum(c.values()), c
if __name__ == "__main__":
    qkv = z(1, 4096, 48, 128)
    args = (qkv[:, :, :32], qkv[:, :, 32:40], qkv[:, :, 40:], z(1, 4096, 32, 128), 0.1)
    for name, kern in [("example", K.attention_prefill), ("occ2", K.attention_prefill.replace_hints(occupancy=2))]:
        out, b = sass_of(kern, args, dict(G=4, D=128, TM=64, TN=64))
        n, c = loop_stats(out)
        print(name, "loop (all paths)", n, "LDL", c["LDL"], "STL", c["STL"], "R2UR", c["R2UR"], "BAR", c["BAR"], getattr(b, "resources", ""))
    for name, kern in [("example", K.attention_prefill), ("occ2", K.attention_prefill.replace_hints(occupancy=2))]:
        print(name, kern.resources(*args, arch="sm_90a", G=4, D=128, TM=64, TN=64))
