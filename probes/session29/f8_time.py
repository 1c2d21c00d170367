import sys, json, os
sys.path.insert(0, "bench"); sys.path.insert(0, "tests"); sys.path.insert(0, "examples")
import torch
from _common import cuda_time_ms
import threadtile.tile as ct
from kernels import tiles
out = {}
m = k = n = 4096
one = torch.ones((), device="cuda")
for name in ("float8_e4m3fn",):
    dt = getattr(torch, name)
    a = torch.randn(m, k, device="cuda").to(dt); b = torch.randn(k, n, device="cuda").to(dt)
    bt = b.t().contiguous().t()
    t_ref = cuda_time_ms(lambda: torch._scaled_mm(a, bt, scale_a=one, scale_b=one, out_dtype=torch.float32))
    out[f"{name}_cublas_ms"] = t_ref
    print(name, "cuBLAS _scaled_mm", t_ref, "TFLOP/s", 2*m*n*k/t_ref/1e9, flush=True)
    for tmnk in ((128, 256, 128), (128, 128, 128), (64, 128, 128), (128, 256, 64), (64, 256, 128), (128, 128, 256), (256, 128, 128)):
        kern = ct.kernel(tiles.matmul.py_func)
        c = torch.empty(m, n, device="cuda")
        g = (m // tmnk[0], n // tmnk[1])
        f = lambda: kern[g](a, b, c, *tmnk)
        f(); torch.cuda.synchronize()
        t = cuda_time_ms(f)
        print(name, tmnk, t, "TFLOP/s", 2*m*n*k/t/1e9, "threads", next(iter(kern._dispatch.values())).module.threads, flush=True)
        out[f"{name}_{tmnk}"] = t
a16 = torch.randn(m, k, device="cuda").half(); b16 = torch.randn(k, n, device="cuda").half()
print("fp16 torch", cuda_time_ms(lambda: a16 @ b16))
json.dump(out, open(os.environ.get("OUT", "/tmp") + "/f8_time.json", "w"), indent=1)
