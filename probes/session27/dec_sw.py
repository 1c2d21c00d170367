"""decode swiglu (m=32, 4096 -> 14336): stages x tiles."""
import sys, os
sys.path.append("bench")
import torch
import threadtile.tile as ct
from threadtile.ir import tiling
from _common import cuda_time_ms
orig = tiling.staged_stages
ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO
def make(w=None):
    @ct.kernel(num_warps=w)
    def matmul_swiglu(A, GU, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
        bx, by = ct.bid(0), ct.bid(1)
        acc = ct.zeros((tm, 2 * tn), dtype=ct.float32)
        for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
            a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
            b = ct.load(GU, index=(k, by), shape=(tk, 2 * tn), padding_mode=ZERO)
            acc = ct.mma(a, b, acc)
        g = ct.extract(acc, index=(0, 0), shape=(tm, tn))
        u = ct.extract(acc, index=(0, 1), shape=(tm, tn))
        ct.store(C, index=(bx, by), tile=(g / (1.0 + ct.exp(-g)) * u).astype(C.dtype))
    return matmul_swiglu
m, k, n = 32, 4096, 14336
a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
gu = (torch.randn(k, 2 * n, device="cuda") / k**0.5).to(torch.bfloat16)
nbytes = k * 2 * n * 2
wg, wu = gu[:, :n], gu[:, n:]
t = min(cuda_time_ms(lambda: (a @ wg, a @ wu)) for _ in range(3)); print(f"torch two mm {t*1e3:.1f} us {nbytes/t/1e6:.0f} GB/s")
for s in map(int, os.environ.get("ST", "3,5,8").split(",")):
    for tn in (32, 64):
        for tk in (64, 128):
            for w in map(int, os.environ.get("W", "4").split(",")):
                tiling.staged_stages = lambda a_, b_, t, s=s: s if orig(a_, b_, t) else 0
                kern = make(w)
                c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
                try:
                    f = lambda: kern[(1, n // tn)](a, gu, c, m, tn, tk)
                    f()
                    t = min(cuda_time_ms(f) for _ in range(3))
                    print(f"gu S{s} tn{tn} tk{tk} W{w}: {t*1e3:.1f} us {nbytes/t/1e6:.0f} GB/s", flush=True)
                except Exception as e:
                    print(s, tn, tk, w, "ERR", str(e)[:150])
