"""persistent 128x256x64 fp16 at 4096^3: the sweep's kernel (int32 extents) against the same
source with A and B annotated ct.IndexedWithInt64 (int64 extents, int64 loop variable)."""
import sys, math
sys.path.insert(0, "bench")
import torch
import threadtile.tile as ct
from _common import cuda_time_ms
C = ct.Constant[int]


def _body(A, B, Out, tm, tn, tk):
    pass


@ct.kernel
def pers32(A, B, Out, tm: C, tn: C, tk: C):
    tiles_n = ct.cdiv(B.shape[1], tn)
    total = ct.cdiv(A.shape[0], tm) * tiles_n
    for t in range(ct.bid(0), total, ct.num_blocks(0)):
        bi = t // tiles_n
        bj = t % tiles_n
        acc = ct.full((tm, tn), 0, dtype=ct.float32)
        for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
            a = ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
            b = ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(a, b, acc)
        ct.store(Out, index=(bi, bj), tile=acc.astype(Out.dtype))


@ct.kernel
def pers64(A: ct.IndexedWithInt64, B: ct.IndexedWithInt64, Out, tm: C, tn: C, tk: C):
    tiles_n = ct.cdiv(B.shape[1], tn)
    total = ct.cdiv(A.shape[0], tm) * tiles_n
    for t in range(ct.int64(ct.bid(0)), total, ct.num_blocks(0)):
        bi = t // tiles_n
        bj = t % tiles_n
        acc = ct.full((tm, tn), 0, dtype=ct.float32)
        for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
            a = ct.load(A, index=(bi, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
            b = ct.load(B, index=(k, bj), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(a, b, acc)
        ct.store(Out, index=(bi, bj), tile=acc.astype(Out.dtype))


def make(wide):
    return pers64 if wide else pers32


if len(sys.argv) > 1 and sys.argv[1] == "cpu":
    import numpy as np
    for w in (False, True):
        k = make(w); z = np.zeros((4096, 4096), np.float16)
        s = k.cuda_source(z, z, z, 128, 256, 64)
        print([ln for ln in s.splitlines() if "for (" in ln][0][:110])
        r = k.resources(z, z, z, 128, 256, 64, arch="sm_90a"); print(r.registers, r.spill_stores)
    sys.exit()
n = 4096
a = torch.randn(n, n, device="cuda", dtype=torch.float16)
b = torch.randn(n, n, device="cuda", dtype=torch.float16)
ref = a.float() @ b.float()
sms = torch.cuda.get_device_properties(0).multi_processor_count
for tl in [(128, 256, 64), (256, 128, 64), (128, 128, 64)]:
    for wide in (False, True):
        k = make(wide)
        out = torch.full((n, n), float("nan"), device="cuda", dtype=torch.float16)
        grid = (min(sms, math.ceil(n / tl[0]) * math.ceil(n / tl[1])), 1, 1)
        f = lambda: ct.launch(torch.cuda.current_stream(), grid, k, (a, b, out, *tl))
        f()
        err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
        ms = min(cuda_time_ms(f) for _ in range(2))
        r = k.resources(a, b, out, *tl)
        print(tl, "int64" if wide else "int32", f"{2 * n**3 / ms / 1e9:.0f} TFLOP/s err {err:.1e} regs {r.registers} spill {r.spill_stores}", flush=True)
