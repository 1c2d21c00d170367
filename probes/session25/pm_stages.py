"""MatMul sample's kernels (fp32 512x512x768, 32x32x32 tiles) with tiling.STAGES = argv[1]."""
import sys, types
import threadtile.ir.tiling as T
T.STAGES = int(sys.argv[1])
sys.path.insert(0, "bench")
import torch
import threadtile.tile as ct
from _common import cuda_time_ms
src = open("probe/cutile/samples/MatMul.py").read().replace("import cuda.tile as ct", "import threadtile.tile as ct")
open("/tmp/mm_sample.py", "w").write(src.split("if __name__")[0])
sys.path.insert(0, "/tmp")
import mm_sample as mod
torch.set_float32_matmul_precision("high")
for (m, n, k) in ((512, 512, 768), (1000, 500, 700)):
    A = torch.randn(m, k, device="cuda"); B = torch.randn(k, n, device="cuda")
    ref = A @ B
    for pers in (False, True):
        C = torch.full((m, n), float("nan"), device="cuda")
        grid = (-(-m // 32)) * (-(-n // 32))
        if pers:
            grid = min(grid, torch.cuda.get_device_properties(0).multi_processor_count)
        kern = mod.persistent_matmul_kernel if pers else mod.matmul_kernel
        f = lambda: ct.launch(torch.cuda.current_stream(), (grid, 1, 1), kern, (A, B, C, 32, 32, 32))
        f()
        err = ((C - ref).abs().max() / ref.abs().max()).item()
        t = min(cuda_time_ms(f) for _ in range(2))
        print(f"stages {T.STAGES} {m}x{n}x{k} persistent {pers}: {t*1000:.1f} us err {err:.1e}", flush=True)
