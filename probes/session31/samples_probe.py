"""Sample kernels at the samples' own first-launch arguments: event-timed, one per KERNEL env
(all when unset). PARTIALS=0 turns ir/partials.py off."""
import math, os, sys, types
sys.path.insert(0, "bench")
from _common import cuda_time_ms
if os.environ.get("PARTIALS") == "0":
    import threadtile.ir.passes as P
    P.reduce_partials = lambda f, t: False
import torch
import threadtile.tile as ct

def mod(name):
    src = open(f"probe/cutile/samples/{name}.py").read().replace("import cuda.tile as ct", "import threadtile.tile as ct")
    m = types.ModuleType(name); m.__file__ = f"/tmp/{name}_tt.py"
    open(m.__file__, "w").write(src.split('if __name__ == "__main__"')[0])
    exec(compile(open(m.__file__).read(), m.__file__, "exec"), m.__dict__)
    return m

S = torch.cuda.current_stream()
def run(tag, kern, grid, args, check=None):
    f = lambda: ct.launch(S, grid, kern, args)
    f(); torch.cuda.synchronize()
    if check: check()
    if os.environ.get("NCU"):
        f(); torch.cuda.synchronize(); return
    t = min(cuda_time_ms(f, warmup=3, reps=20) for _ in range(3))
    print(f"{tag}: {t*1000:.2f} us", flush=True)

want = os.environ.get("KERNEL", "")
if want in ("", "transpose"):
    m = mod("Transpose")
    x = torch.randn(1024, 512, dtype=torch.float16, device="cuda"); y = torch.empty(512, 1024, dtype=torch.float16, device="cuda")
    run("transpose f16 1024x512 128x128", m.transpose_kernel, (8, 4, 1), (x, y, 128, 128), lambda: torch.testing.assert_close(y, x.T))
    x = torch.randn(1024, 512, device="cuda"); y = torch.empty(512, 1024, device="cuda")
if want in ("", "persistent"):
    m = mod("MatMul")
    a = torch.randn(512, 768, device="cuda"); b = torch.randn(768, 512, device="cuda"); c = torch.empty(512, 512, device="cuda")
    run("persistent tf32 512x512x768 32x32x32", m.persistent_matmul_kernel, (132, 1, 1), (a, b, c, 32, 32, 32),
        lambda: torch.testing.assert_close(c, a @ b, atol=0.1, rtol=0.05))
    a16 = a.half(); b16 = b.half(); c16 = torch.empty(512, 512, dtype=torch.float16, device="cuda")
    run("plain f16 512x512x768 128x256x64", m.matmul_kernel, (4, 2, 1), (a16, b16, c16, 128, 256, 64))
if want in ("", "fft"):
    m = mod("FFT")
    xin = torch.randn(2, 8, dtype=torch.complex64, device="cuda")
    x_packed = torch.view_as_real(xin).reshape(2, 8, 2).contiguous()
    W = m.make_twiddles((2, 2, 2), torch.float32, xin.device)
    yout = torch.empty_like(x_packed)
    run("fft N8 BS2", m.fft_kernel, (2, 1, 1), (x_packed, yout, *W, 8, 2, 2, 2, 2, 2),
        lambda: torch.testing.assert_close(torch.view_as_complex(yout.reshape(2, 8, 2)), torch.fft.fft(xin, axis=-1)))
if want in ("", "dwdb"):
    m = mod("LayerNorm")
    dw = torch.randn(64, 2048, device="cuda"); db = torch.randn(64, 2048, device="cuda")
    fw = torch.empty(2048, device="cuda"); fb = torch.empty(2048, device="cuda")
    run("layernorm dwdb 64x2048", m.layer_norm_bwd_dwdb, (2,), (dw, db, fw, fb, 32, 1024),
        lambda: (torch.testing.assert_close(fw, dw.sum(0)), torch.testing.assert_close(fb, db.sum(0))))
if want in ("", "empty"):
    @ct.kernel
    def nothing(X):
        pass
    run("empty tile kernel", nothing, (32, 1, 1), (torch.empty(4, device="cuda"),))
