"""LayerNorm sample's layer_norm_bwd_dwdb at the sample's shape, reduce_cols on / off (argv)."""
import sys
sys.path.insert(0, "bench")
from _common import cuda_time_ms
if sys.argv[1] == "off":
    import threadtile.backends.cuda.tiles as T
    T.cols_reduction = lambda op, nt: False
import torch
import threadtile.tile as ct
src = open("probe/cutile/samples/LayerNorm.py").read().replace("import cuda.tile as ct", "import threadtile.tile as ct")
open("/tmp/ln_sample.py", "w").write(src.split("if __name__")[0])
sys.path.insert(0, "/tmp")
import ln_sample as m
variants = [("default", {}), ("occ1", dict(occupancy=1)), ("w8occ1", dict(num_warps=8, occupancy=1)), ("w8", dict(num_warps=8))]
for (tag, hints) in variants:
  kern = m.layer_norm_bwd_dwdb.replace_hints(**hints) if hints else m.layer_norm_bwd_dwdb
  for n in (2048, 8192):
      dw, db = (torch.randn(64, n, device="cuda") for _ in range(2))
      fw, fb = (torch.full((n,), float("nan"), device="cuda") for _ in range(2))
      f = lambda: ct.launch(torch.cuda.current_stream(), (n // 1024,), kern, (dw, db, fw, fb, 32, 1024))
      f()
      err = max((fw - dw.sum(0)).abs().max().item(), (fb - db.sum(0)).abs().max().item())
      t = min(cuda_time_ms(f) for _ in range(3))
      print(f"{sys.argv[1]} {tag} dwdb 64x{n}: {t*1000:.1f} us err {err:.1e}", flush=True)
