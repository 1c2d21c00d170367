"""decode matmuls (m=32): stages x tiles sweep; time on GPU, resources on CPU."""
import sys, os
sys.path[:0] = ["examples"]; sys.path.append("bench")
import torch
import threadtile.tile as ct
from threadtile.ir import tiling
ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO
def make(w=None):
    @ct.kernel(num_warps=w)
    def matmul_add(A, B, R, C, tm: ConstInt, tn: ConstInt, tk: ConstInt):
        bx, by = ct.bid(0), ct.bid(1)
        acc = ct.zeros((tm, tn), dtype=ct.float32)
        for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
            a = ct.load(A, index=(bx, k), shape=(tm, tk), padding_mode=ZERO)
            b = ct.load(B, index=(k, by), shape=(tk, tn), padding_mode=ZERO)
            acc = ct.mma(a, b, acc)
        r = ct.load(R, index=(bx, by), shape=(tm, tn), padding_mode=ZERO).astype(ct.float32)
        ct.store(C, index=(bx, by), tile=(acc + r).astype(C.dtype))
    return matmul_add
class _K: pass
K = _K()
gpu = torch.cuda.is_available()
if gpu:
    from _common import cuda_time_ms
orig = tiling.staged_stages
shapes = {"o": (32, 4096, 4096), "down": (32, 14336, 4096), "qkv": (32, 4096, 6144)}
cfgs = [(s, tn, tk, w) for s in map(int, os.environ.get("ST", "3,4,6,8").split(","))
        for tn in map(int, os.environ.get("TN", "16,32,64").split(",")) for tk in (64, 128)
        for w in map(int, os.environ.get("W", "4").split(","))]
for name, (m, k, n) in [(x, shapes[x]) for x in os.environ.get('SH', 'o,down,qkv').split(',')]:
    dev = "cuda" if gpu else "cpu"
    a = torch.randn(m, k, device=dev).to(torch.bfloat16)
    b = (torch.randn(k, n, device=dev) / k**0.5).to(torch.bfloat16)
    r = torch.randn(m, n, device=dev).to(torch.bfloat16)
    ref = (a.float() @ b.float() + r.float()) if gpu else None
    nbytes = k * n * 2
    if gpu:
        t = min(cuda_time_ms(lambda: torch.addmm(r, a, b)) for _ in range(3)); print(f'{name} torch addmm {t*1e3:.1f} us {nbytes/t/1e6:.0f} GB/s', flush=True)
    for s, tn, tk, w in cfgs:
        tiling.staged_stages = lambda a_, b_, t, s=s: s if orig(a_, b_, t) else 0
        K.matmul_add = make(w)
        c = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        grid = (1, n // tn)
        args = (a, b, r, c, 32, tn, tk)
        try:
            if gpu:
                K.matmul_add[grid](*args)
                err = (c.float() - ref).abs().max().item()
                t = min(cuda_time_ms(lambda: K.matmul_add[grid](*args)) for _ in range(3))
                print(f"{name} S{s} tn{tn} tk{tk} W{w}: {t*1e3:.1f} us {nbytes/t/1e6:.0f} GB/s err {err:.3f}", flush=True)
            else:
                print(name, s, tn, tk, str(K.matmul_add.resources(*args, arch="sm_90a")).replace("\n", " | ")[:400], flush=True)
        except Exception as e:
            print(name, s, tn, tk, "ERR", str(e)[:200])
