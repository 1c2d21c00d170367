#!/bin/bash
# A/B: the store_fragments change (src) against the tree before it (probe/src_old), same machine
export PYTHONUNBUFFERED=1
bash probe/nvsetup.sh 2>&1 | grep "^nvrtc ("
python3 setup.py build_ext --inplace -q > /tmp/ext.log 2>&1 || tail -3 /tmp/ext.log
cp src/threadtile/runtime/*.so probe/src_old/threadtile/runtime/
T=128x256x64,128x128x64,64x128x64
for round in 1; do
for tree in src probe/src_old; do
  echo "== $tree"
  PYTHONPATH=$PWD/$tree:$PWD/examples THREADTILE_CACHE_DIR=/tmp/ttc-$tree-$round timeout 100 python3 - <<'PY' 2>&1 | grep -v Warn
import sys, math
sys.path.insert(1, "bench")
import torch, threadtile, tile_sweep
import threadtile.tile as ct
from _common import cuda_time_ms
print(threadtile.__file__)
ks = tile_sweep.build(ct)
n = 4096
a = torch.randn(n, n, device="cuda", dtype=torch.float16); b = torch.randn(n, n, device="cuda", dtype=torch.float16)
sms = torch.cuda.get_device_properties(0).multi_processor_count
for form, tl in [("plain", (128, 256, 64)), ("plain", (128, 128, 64)), ("persistent", (128, 256, 64)), ("persistent", (128, 128, 64))]:
    out = torch.empty(n, n, device="cuda", dtype=torch.float16)
    grid = (min(sms, (n // tl[0]) * (n // tl[1])), 1, 1) if form == "persistent" else (n // tl[0], n // tl[1], 1)
    f = lambda: ct.launch(torch.cuda.current_stream(), grid, ks[form], (a, b, out, *tl, False))
    f()
    ms = min(cuda_time_ms(f) for _ in range(3))
    print(form, tl, f"{2 * n**3 / ms / 1e9:.0f}")
from llama import kernels as K
from llama.config import Config
from threadtile.tile import cdiv
cfg = Config(); seq, h, kvh, d = 4096, cfg.heads, cfg.kv_heads, cfg.head_dim
qkv = torch.randn(1, seq, h + 2 * kvh, d, device="cuda").to(torch.bfloat16)
q, k, v = qkv[:, :, :h], qkv[:, :, h:h + kvh], qkv[:, :, h + kvh:]
o = torch.empty(1, seq, h, d, dtype=torch.bfloat16, device="cuda")
f = lambda: K.attention_prefill[(cdiv(seq, 64), h, 1)](q, k, v, o, 0.088, cfg.group, d, 64, 64)
f()
ms = min(cuda_time_ms(f) for _ in range(3))
print("attention prefill", f"{4 * h * seq * seq * d / 2 / ms / 1e9:.0f}")
PY
done
done
