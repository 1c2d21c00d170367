import math, sys, torch
from torch.nn.functional import scaled_dot_product_attention as sdpa
import threadtile.tile as ct
from llama import kernels as K
from threadtile.tile import cdiv
tn, chunk, nw = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
kern = K.attention_decode if nw == 4 else ct.kernel(num_warps=nw)(K.attention_decode.py_func)
batch, ctx, G, h, kvh, d = 32, 4096, 4, 32, 8, 128
scale = 1 / math.sqrt(d)
qd = torch.randn(batch, h, d, device="cuda").to(torch.bfloat16)
kc, vc = (torch.randn(batch, ctx, kvh, d, device="cuda").to(torch.bfloat16) for _ in range(2))
lens = torch.full((batch,), ctx, dtype=torch.int32, device="cuda")
splits = cdiv(ctx, chunk)
opart = torch.empty(batch, kvh, splits, G, d, dtype=torch.float32, device="cuda")
lse = torch.empty(batch, kvh, splits, G, dtype=torch.float32, device="cuda")
def run():
    kern[(splits, kvh, batch)](qd, kc, vc, lens, opart, lse, scale, G, d, tn, chunk)
def ref():
    return sdpa(qd[:, :, None], kc.transpose(1, 2), vc.transpose(1, 2), enable_gqa=True)
for _ in range(3):
    run(); ref()
torch.cuda.synchronize()
torch.cuda.profiler.start()
run(); ref()
torch.cuda.synchronize()
torch.cuda.profiler.stop()
