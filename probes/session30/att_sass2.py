import math, sys, os, subprocess
import numpy as np
sys.path[:0] = ["examples", "tests", "src"]
from llama import kernels as K
from llama.config import LLAMA3_8B as c
from threadtile.builds import target_for
import ml_dtypes
t=4096; h=c.heads; kv=c.kv_heads; d=c.head_dim
def z(*s, dt=None): return np.zeros(s, dtype=dt or ml_dtypes.bfloat16)
tm = int(os.environ.get("TM", 64)); tn = int(os.environ.get("TN", 64))
qkv = z(1, t, h + 2*kv, d)
args = (qkv[:, :, :h], qkv[:, :, h:h+kv], qkv[:, :, h+kv:], z(1, t, h, d), 0.1)
kern = K.attention_prefill
spec = kern._spec_for(list(args), dict(G=h//kv, D=d, TM=tm, TN=tn))
portable = os.environ.get("PORTABLE") == "1"
tgt = target_for(spec, "sm_90a", kern.options, portable=portable)
print(tgt)
b = spec.build(tgt)
open("/tmp/att.cubin","wb").write(bytes(b.cubin))
open("/tmp/att.cu","w").write(spec.cuda.text)
out = subprocess.run(["/tmp/nvd/nvidia/cu13/bin/nvdisasm", "-c", "/tmp/att.cubin"], capture_output=True, text=True).stdout
open("/tmp/att.sass","w").write(out)
import re
ops = re.findall(r"/\*[0-9a-f]{4,6}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)", out)
print("instructions", len(ops), "UTMALDG", ops.count("UTMALDG"), "LDGSTS", ops.count("LDGSTS"), "BAR", ops.count("BAR"), "LDL", ops.count("LDL"), "STL", ops.count("STL"))
