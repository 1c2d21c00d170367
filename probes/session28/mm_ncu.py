import sys, os
sys.path[:0] = ["examples"]
import torch
from threadtile.ir import tiling
from llama import kernels as K
S = int(os.environ.get("S", "0"))
orig = tiling.staged_stages
if S: tiling.staged_stages = lambda a_, b_, t: S if orig(a_, b_, t) else 0
m, k, n = 32, 14336, 4096
a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
b = torch.randn(k, n, device="cuda").to(torch.bfloat16)
r = torch.randn(m, n, device="cuda").to(torch.bfloat16)
c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    K.matmul_add[(1, n // 32)](a, b, r, c, 32, 32, 128)
torch.cuda.synchronize()
