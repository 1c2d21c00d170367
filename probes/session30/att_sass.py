import math, sys, os, subprocess, collections
import numpy as np
sys.path[:0] = ["examples", "tests"]
from llama import kernels as K
from llama.config import LLAMA3_8B as c
t=4096; h=c.heads; kv=c.kv_heads; d=c.head_dim
import ml_dtypes
def z(*s, dt=None): return np.zeros(s, dtype=dt or ml_dtypes.bfloat16)
tm = int(os.environ.get("TM", 64)); tn = int(os.environ.get("TN", 64))
qkv = z(1, t, h + 2*kv, d)
args = (qkv[:, :, :h], qkv[:, :, h:h+kv], qkv[:, :, h+kv:], z(1, t, h, d), 0.1)
kern = K.attention_prefill
res = kern.compile(*args, arch="sm_90a", G=h//kv, D=d, TM=tm, TN=tn)
open("/tmp/att.cubin","wb").write(bytes(res.cubin))
print([a for a in dir(res) if not a.startswith("_")])
open("/tmp/att.cu","w").write(res.source if isinstance(res.source,str) else res.cuda.text)
print(res.describe() if callable(res.describe) else res.describe)
