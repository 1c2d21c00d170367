import sys, math, os
sys.path.insert(0, "bench")
import torch
import threadtile.tile as ct
from threadtile.runtime import driver
from tile_sweep import build
from _common import cuda_time_ms
ks = build(ct)
n = 4096
a = torch.randn(n, n, device="cuda", dtype=torch.float16)
b = torch.randn(n, n, device="cuda", dtype=torch.float16)
sms = torch.cuda.get_device_properties(0).multi_processor_count
stream = torch.cuda.current_stream()
for tl in [(64, 128, 64), (128, 64, 64), (64, 64, 64), (64, 256, 64)]:
    k = ct.kernel(ks["persistent"].py_func)
    out = torch.empty(n, n, device="cuda", dtype=torch.float16)
    args = (a, b, out, *tl, 0)
    ct.launch(stream, (sms, 1, 1), k, args)
    torch.cuda.synchronize()
    ((comp, scratch),) = k._launches.values()
    blk = comp.block
    most = driver.max_active_blocks(comp._func, blk[0] * blk[1] * blk[2], scratch)
    print(tl, "elastic", comp.elastic_x, "block", blk, "scratch", scratch, "most", most,
          "wave", comp.wave((sms, 1, 1), blk, scratch, 0), flush=True)
    for g in (1, 2, 3):
        ms = cuda_time_ms(lambda: ct.launch(stream, (g * sms, 1, 1), k, args))
        print("   grid", g * sms, round(2 * n**3 / ms / 1e9, 1), flush=True)
