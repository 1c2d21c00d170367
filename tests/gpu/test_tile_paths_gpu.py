"""Tile kernels (tests/kernels/tiles.py) on paths that only compiled code has: the Hopper
tensor maps (TMA), an sm_90 build's staged loop, launches on torch streams. Their numerics on
every target, simulator included, are in tests/tile/test_tile_numerics.py.

Every test is marked ``gpu`` and skipped without a GPU or torch; each says why it has no
simulator counterpart. Inputs are fresh random tensors (the seed is printed); outputs are
poisoned with NaN before the launch.
"""

import re

import pytest
from conftest import HAVE_GPU, HAVE_TORCH, U32, cdiv
from kernels import tiles

import threadtile.tile as ct
from threadtile.ir import tiling
from threadtile.lang.types import TileType, bfloat16, float16, tfloat32

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not (HAVE_GPU and HAVE_TORCH), reason="needs a GPU and torch")]

if HAVE_TORCH:
    import torch

U_OUT = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}


@pytest.fixture
def gen(rng):
    g = torch.Generator(device="cuda")
    g.manual_seed(int(rng.integers(1 << 62)))
    return g


def randn(gen, *shape, dtype=None):
    t = torch.randn(*shape, generator=gen, device="cuda", dtype=torch.float32)
    return t.to(dtype or torch.float32)


def nans(*shape, dtype=None):
    return torch.full(shape, float("nan"), device="cuda", dtype=dtype or torch.float32)


def launch(kernel, grid, *args):
    kernel[grid](*args)
    torch.cuda.synchronize()


def dot_close(got, a, b, u_out=U32):
    """|got - a@b| within the float32-accumulation bound plus the output's rounding."""
    a64, b64 = a.double(), b.double()
    ref = a64 @ b64
    mag = a64.abs() @ b64.abs()
    bound = (a.shape[1] + 2) * U32 * mag + u_out * ref.abs() + 1e-30
    err = (got.double() - ref).abs()
    assert not torch.isnan(got).any(), "unwritten (NaN) elements"
    bad = err > bound
    assert not bad.any(), f"{int(bad.sum())} elements off; worst {float((err - bound).max())}"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(("shape", "tiles_mnk"), [
    ((512, 256, 768), (128, 256, 64)),    # Hopper main loop (TMA + wgmma) on sm_90a
    ((1000, 520, 1030), (128, 256, 64)),  # edge tiles: TMA fills zeros, the store skips
    ((384, 1024, 256), (128, 128, 64)),
    ((512, 1001, 512), (128, 256, 64)),   # rows of 1001 halves: no TMA, the portable loop
], ids=["512x256x768/128x256x64", "1000x520x1030/128x256x64", "384x1024x256/128x128x64",
        "512x1001x512/128x256x64"])
def test_matmul_encodes_tensor_maps_for_whole_16_byte_rows(gen, dtype, shape, tiles_mnk):
    """GPU only: tensor maps are what the sm_90a build's TMA copies read; the simulator has
    none. On a compute capability 9.0 GPU the launch encodes A's tensor map iff its rows are
    whole 16-byte units (and multiplies right either way)."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("tensor maps are encoded for compute capability 9.0 only")
    m, k, n = shape
    dt = getattr(torch, dtype)
    a, b = randn(gen, m, k, dtype=dt), randn(gen, k, n, dtype=dt)
    c = nans(m, n, dtype=dt)
    tm, tn, tk = tiles_mnk
    launch(tiles.matmul_8warps, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    dot_close(c, a, b, u_out=U_OUT[dtype])
    from threadtile.runtime import tensormaps
    maps = [v for key, v in tensormaps._CACHE.items() if key[2:4] == (a.data_ptr(), (m, k))]
    assert maps and all((v != tensormaps.ZERO) == (k % 8 == 0) for v in maps)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_matmul_hopper_shapes_built_for_sm90_take_the_staged_loop(gen, dtype, monkeypatch):
    """GPU only: which C++ loop a plain sm_90 build (as for a GPU without wgmma) compiles has
    no simulator meaning. The Hopper loop's shapes run tile.h's staged loop: cp.async into
    three buffers, B through ldmatrix.trans."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a compute capability 9.0 GPU (others build their own arch anyway)")
    from threadtile.runtime import driver
    monkeypatch.setattr(driver.DeviceInfo, "arch", property(lambda self: "sm_90"))
    kern = ct.kernel(num_warps=8)(tiles.matmul.py_func)  # fresh: nothing built yet
    m, k, n = 512, 256, 768
    dt = getattr(torch, dtype)
    a, b = randn(gen, m, k, dtype=dt), randn(gen, k, n, dtype=dt)
    c = nans(m, n, dtype=dt)
    launch(kern, (cdiv(m, 128), cdiv(n, 256)), a, b, c, 128, 256, 64)
    dot_close(c, a, b, u_out=U_OUT[dtype])
    spec = next(iter(kern._dispatch.values()))
    assert spec.arch == "sm_90" and "mma_loop<" in spec.source


@pytest.mark.parametrize("arch", ["sm_90a", "sm_90"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize(("warps", "tiles_mnk", "shape"), [
    (4, (128, 128, 32), (1000, 520, 1030)),  # two 64-row slices a warpgroup; 64-byte swizzle
    (4, (128, 128, 128), (512, 384, 640)),   # A in two 128-byte chunks a stage
    (4, (64, 256, 64), (300, 700, 200)),
    (8, (128, 64, 64), (256, 640, 4096)),
    (4, (256, 64, 32), (520, 256, 96)),      # four 64-row slices
], ids=["4w-128x128x32", "4w-128x128x128", "4w-64x256x64", "8w-128x64x64", "4w-256x64x32"])
def test_matmul_k_loops_of_any_tile_shape(gen, dtype, warps, tiles_mnk, shape, arch,
                                          monkeypatch):
    """GPU only: which C++ loop each build takes (the Hopper main loop with R 64-row slices per
    warpgroup and A's chunks on sm_90a; cp.async with zero-filled edges elsewhere; the
    one-buffer loop for a strided view) has no simulator meaning: each must multiply right."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a compute capability 9.0 GPU")
    from threadtile.runtime import driver
    monkeypatch.setattr(driver.DeviceInfo, "arch", property(lambda self: arch))
    kern = ct.kernel(num_warps=warps)(tiles.matmul.py_func)  # fresh: built for `arch`
    m, k, n = shape
    dt = getattr(torch, dtype)
    tm, tn, tk = tiles_mnk
    a, b = randn(gen, m, k, dtype=dt), randn(gen, k, n, dtype=dt)
    u = U_OUT.get(dtype, U32)
    if dtype == "float32":  # tfloat32 operands: compare with the operands rounded so
        a, b = _tf32(a), _tf32(b)
    c = nans(m, n, dtype=dt)
    launch(kern, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    dot_close(c, a, b, u_out=u)
    # a strided view of B (every other column): no TMA, no cp.async: the one-buffer loop
    wide = randn(gen, k, 2 * n, dtype=dt)
    bv = (_tf32(wide) if dtype == "float32" else wide)[:, ::2]
    c = nans(m, n, dtype=dt)
    launch(kern, (cdiv(m, tm), cdiv(n, tn)), a, bv, c, tm, tn, tk)
    dot_close(c, a, bv, u_out=u)
    spec = next(iter(kern._dispatch.values()))
    assert spec.arch == arch and "mma_loop" in spec.source


@pytest.mark.parametrize(("warps", "tiles_mnk", "shape"), [
    (8, (128, 128, 32), (1000, 520, 1030)),   # two warpgroups, one 64-column slice each
    (4, (128, 128, 64), (512, 384, 640)),     # one warpgroup, two slices; 32-deep steps
    (8, (128, 256, 32), (384, 768, 2048)),
    (8, (256, 128, 32), (520, 256, 96)),
    (4, (64, 64, 32), (300, 700, 200)),
    (None, (64, 256, 32), (320, 1000, 520)),  # the compiler's block: 8 warps, two slices each
], ids=["8w-128x128x32", "4w-128x128x64", "8w-128x256x32", "8w-256x128x32", "4w-64x64x32",
        "auto-64x256x32"])
def test_tfloat32_k_loop_rounds_its_operands_to_nearest(gen, warps, tiles_mnk, shape):
    """GPU only: the sm_90a build's tfloat32 main loop (tile/kloop_sm90_tf32.h: the transposed
    product on wgmma, B^T's fragments from registers, A's stage rounded in place) is what
    the simulator's astype(tfloat32) rounding must match. Inputs not already tfloat32: the
    result is within float32 accumulation of the product of the operands rounded to nearest
    (ties to even); wgmma's own truncation of A's low bits would be far outside that."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a compute capability 9.0 GPU")
    kern = ct.kernel(num_warps=warps)(tiles.matmul.py_func)  # fresh: built for this test
    m, k, n = shape
    tm, tn, tk = tiles_mnk
    a, b = randn(gen, m, k), randn(gen, k, n)
    c = nans(m, n)
    launch(kern, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    dot_close(c, _tf32(a), _tf32(b))
    spec = next(iter(kern._dispatch.values()))
    assert spec.arch == "sm_90a" and "tt_tma0" in spec.source


@pytest.mark.parametrize(("m", "k", "n"), [(512, 768, 1024), (640, 512, 768), (600, 520, 500)],
                         ids=["even-grid", "odd-grid", "edges"])
def test_clusters_multiply_right_on_any_grid(gen, monkeypatch, m, k, n):
    """GPU only (EXPERIMENTAL, THREADTILE_CLUSTERS=1): blocks paired in clusters along x copy
    half of B's boxes each, multicast into both (tile/kloop_sm90.h TT_CLUSTER); a grid whose x
    is odd takes the build without clusters. Every case multiplies right."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("clusters are built for compute capability 9.0 only")
    monkeypatch.setenv("THREADTILE_CLUSTERS", "1")
    kern = ct.kernel(num_warps=8)(tiles.matmul.py_func)  # fresh: built with the variable set
    a, b = randn(gen, m, k, dtype=torch.float16), randn(gen, k, n, dtype=torch.float16)
    c = nans(m, n, dtype=torch.float16)
    launch(kern, (cdiv(m, 128), cdiv(n, 256)), a, b, c, 128, 256, 64)
    dot_close(c, a, b, u_out=U_OUT["float16"])
    spec = next(iter(kern._dispatch.values()))
    assert any(getattr(x, "cluster_x", 1) == 2 for x in spec.loaded.values())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(4, 256, 192, 320), (3, 200, 130, 100)],
                         ids=["whole-batches", "edges"])
def test_batched_k_loop_on_tensor_maps_of_the_rows(gen, dtype, shape):
    """GPU only: a batched k loop (3-d loads reshaped to 2-d) takes the Hopper main loop on
    tensor maps of the 3-d arrays' rows where no tile crosses into the next batch (M and K
    multiples of the tiles), else the staged loop on the batch's 2-d view; both multiply
    right, and the maps encode the rows of the whole array."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("tensor maps are encoded for compute capability 9.0 only")
    from threadtile.runtime import tensormaps
    nb, m, k, n = shape
    dt = getattr(torch, dtype)
    a, b = randn(gen, nb, m, k, dtype=dt), randn(gen, nb, k, n, dtype=dt)
    c = nans(nb, m, n, dtype=dt)
    launch(tiles.bmm, (cdiv(m, 128), cdiv(n, 128), nb), a, b, c, 128, 128, 64)
    for z in range(nb):
        dot_close(c[z], a[z], b[z], u_out=U_OUT[dtype])
    maps = [v for key, v in tensormaps._CACHE.items() if key[2:4] == (a.data_ptr(), (nb, m, k))]
    if (k * 2) % 16 == 0:  # rows of whole 16-byte units: TMA reads the 3-d array's rows
        assert maps and maps[0] != tensormaps.ZERO


def _f8_close(got, a, b):
    """|got - a@b| within the 8-bit wgmma's rounding of each step's sum (its terms aligned to
    the largest with about 13 bits: 2^-10 of the sum of magnitudes is a loose bound that a
    wrong element, a missing step or a float16 product rounding would still break)."""
    a64, b64 = a.double(), b.double()
    ref, mag = a64 @ b64, a64.abs() @ b64.abs()
    assert not torch.isnan(got).any(), "unwritten (NaN) elements"
    bad = (got.double() - ref).abs() > 2.0 ** -10 * mag + 1e-30
    assert not bad.any(), f"{int(bad.sum())} elements off"


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
@pytest.mark.parametrize(("tiles_mnk", "shape"), [
    ((128, 256, 128), (512, 256, 1024)),   # BatchMatMul's float8 tiles
    ((64, 128, 64), (300, 520, 700)),      # edge tiles in every axis: TMA's zeros
    ((128, 128, 128), (256, 384, 512)),
    ((256, 128, 128), (512, 256, 384)),    # two slices a warpgroup
    ((128, 128, 256), (256, 512, 256)),    # two 128-k chunks a stage
    ((128, 256, 64), (256, 320, 512)),     # 64-byte rows (the 64-byte swizzle)
], ids=["128x256x128", "64x128x64-edges", "128x128x128", "256x128x128", "128x128x256",
        "128x256x64"])
def test_float8_k_loop_sums_as_the_tensor_cores(gen, name, tiles_mnk, shape):
    """GPU only: the sm_90a build's float8 main loop (tile/kloop_sm90_f8.h: B's stages
    transposed in place, both operands descriptors) sums each step's products on the tensor
    cores, with their rounding, not the simulator's exact one. Each
    step of 128 k is summed as cuBLAS's 8-bit GEMM (torch._scaled_mm) sums it, so with K tiles
    of 128 the two agree bit for bit; every shape is within the tensor cores' rounding of
    the exact product."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a compute capability 9.0 GPU")
    kern = ct.kernel(tiles.matmul.py_func)
    m, k, n = shape
    tm, tn, tk = tiles_mnk
    dt = getattr(torch, name)
    a, b = randn(gen, m, k, dtype=dt), randn(gen, k, n, dtype=dt)
    c = nans(m, n)
    launch(kern, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    _f8_close(c, a, b)
    spec = next(iter(kern._dispatch.values()))
    assert spec.arch == "sm_90a" and "tt_tma0" in spec.source
    if name == "float8_e4m3fn" and tk == 128 and k % 128 == 0 and m % 16 == n % 16 == 0:
        one = torch.ones((), device="cuda")
        want = torch._scaled_mm(a, b.t().contiguous().t(), scale_a=one, scale_b=one,
                                out_dtype=torch.float32)
        assert torch.equal(c, want), f"{int((c != want).sum())} elements differ from cuBLAS"


def test_float8_k_loop_on_arrays_tma_cannot_copy(gen):
    """GPU only: rows of B that are not whole 16-byte units (N = 260) get no tensor map, and
    the launch takes the build with the loop as written: 8-bit values widened to float16, exact
    products summed in float32."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a compute capability 9.0 GPU")
    kern = ct.kernel(tiles.matmul.py_func)
    m, k, n = 256, 256, 260
    a = randn(gen, m, k, dtype=torch.float8_e4m3fn)
    b = randn(gen, k, n, dtype=torch.float8_e4m3fn)
    c = nans(m, n)
    launch(kern, (cdiv(m, 128), cdiv(n, 256)), a, b, c, 128, 256, 128)
    dot_close(c, a.float(), b.float())


def test_float8_batched_loop_of_the_sample(gen):
    """GPU only: cuTile's BatchMatMul sample's float8 case (4 x 512x256 @ 256x1024, tiles
    128x256x128, 3-d loads reshaped): equal to torch._scaled_mm batch by batch, as the sample
    checks it."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs a compute capability 9.0 GPU")
    nb, m, k, n = 4, 512, 256, 1024
    a = randn(gen, nb, m, k, dtype=torch.float8_e4m3fn)
    b = randn(gen, nb, k, n, dtype=torch.float8_e4m3fn)
    c = nans(nb, m, n)
    launch(tiles.bmm, (cdiv(m, 128), cdiv(n, 256), nb), a, b, c, 128, 256, 128)
    one = torch.ones((), device="cuda")
    for z in range(nb):
        want = torch._scaled_mm(a[z], b[z].t().contiguous().t(), scale_a=one, scale_b=one,
                                out_dtype=torch.float32)
        assert torch.equal(c[z], want), f"batch {z}: {int((c[z] != want).sum())} differ"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize(("warps", "tiles_mnk", "shape"), [
    (4, (32, 32, 64), (20, 200, 72)),     # rows and columns past the arrays, a part step
    (4, (32, 32, 128), (40, 1000, 100)),
    (4, (16, 32, 32), (16, 96, 64)),      # fewer copies of A than threads
    (1, (16, 256, 16), (16, 100, 520)),   # tfloat32: a row of B is more copies than threads
    (None, (32, 64, 64), (96, 4100, 200)),
], ids=["4w-32x32x64", "4w-32x32x128", "4w-16x32x32", "1w-16x256x16", "auto-32x64x64"])
def test_few_row_k_loops_take_the_staged_loop(gen, dtype, warps, tiles_mnk, shape):
    """GPU only: which C++ loop a build takes has no simulator meaning. Tiles of 32 rows or
    fewer run the staged loop with four to eight buffers (ir/tiling.py STAGES_FEW_ROWS) whose
    copies are pointers the steps advance where the block covers whole rows (tile/kloop.h),
    the general indexing otherwise; both zero what lies past the arrays. Accumulators of few
    16x8 blocks a warp split each step's k over the warps (tile/kloop.h k_split): 32x32 tiles
    on 4 warps here, the float32 ones included."""
    kern = ct.kernel(num_warps=warps)(tiles.matmul.py_func)
    m, k, n = shape
    dt = getattr(torch, dtype)
    tm, tn, tk = tiles_mnk
    a, b = randn(gen, m, k, dtype=dt), randn(gen, k, n, dtype=dt)
    if dtype == "float32":
        a, b = _tf32(a), _tf32(b)
    c = nans(m, n, dtype=dt)
    launch(kern, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    dot_close(c, a, b, u_out=U_OUT.get(dtype, U32))
    spec = next(iter(kern._dispatch.values()))
    staged = re.search(r"mma_loop_staged<[^>]*, (\d+)>\(", spec.source)
    elem = {"float16": float16, "bfloat16": bfloat16, "float32": tfloat32}[dtype]
    want = tiling.staged_stages(TileType(elem, (tm, tk)), TileType(elem, (tk, tn)),
                                spec.module.threads)
    assert staged and int(staged.group(1)) == want >= 4


def _tf32(x):
    """x rounded to tfloat32 (10 mantissa bits, to nearest, ties to even)."""
    i = x.view(torch.int32)
    r = ((i + 0xFFF + ((i >> 13) & 1)) & ~0x1FFF).view(torch.float32)
    return torch.where(torch.isfinite(x), r, x)


def test_launch_on_a_torch_stream(gen):
    """GPU only: a torch stream orders GPU work; the simulator runs launches at once."""
    n = 5000
    a, b = randn(gen, n), randn(gen, n)
    c = nans(n)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        ct.launch(s, (ct.cdiv(n, 256), 1, 1), tiles.vector_add, (a, b, c, 256))
    s.synchronize()
    assert torch.equal(c, (a.double() + b.double()).float())  # one float32 rounding, no NaN
