"""Tile kernels (tests/kernels/tiles.py) on a GPU, on torch tensors, against torch in float64
and against the simulator (the two backends must agree).

Every test is marked ``gpu`` and skipped without a GPU or torch. Inputs are fresh random
tensors (the seed is printed); outputs are poisoned with NaN before the launch.
"""

import numpy as np
import pytest
from conftest import HAVE_GPU, HAVE_TORCH, U32, cdiv
from kernels import tiles

import threadtile as tt
import threadtile.tile as ct

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not (HAVE_GPU and HAVE_TORCH), reason="needs a GPU and torch")]

if HAVE_TORCH:
    import torch


@pytest.fixture
def gen(rng):
    g = torch.Generator(device="cuda")
    g.manual_seed(int(rng.integers(1 << 62)))
    return g


def randn(gen, *shape, dtype=None, scale=1.0):
    t = torch.randn(*shape, generator=gen, device="cuda", dtype=torch.float32) * scale
    return t.to(dtype or torch.float32)


def nans(*shape, dtype=None):
    return torch.full(shape, float("nan"), device="cuda", dtype=dtype or torch.float32)


def launch(kernel, grid, *args):
    kernel[grid](*args)
    torch.cuda.synchronize()


def close(got, ref, rtol, atol):
    got = got.double().cpu()
    ref = ref.double().cpu()
    assert not torch.isnan(got).any(), "unwritten (NaN) elements"
    torch.testing.assert_close(got, ref, rtol=rtol, atol=atol)


def dot_close(got, a, b, u_in=0.0, u_out=U32):
    """|got - a@b| within the float32-accumulation bound plus input and output roundings."""
    a64, b64 = a.double(), b.double()
    ref = a64 @ b64
    mag = a64.abs() @ b64.abs()
    k = a.shape[1]
    bound = (k + 2) * U32 * mag + 2 * u_in * mag + u_out * ref.abs() + 1e-30
    err = (got.double() - ref).abs()
    assert not torch.isnan(got).any(), "unwritten (NaN) elements"
    bad = err > bound
    assert not bad.any(), f"{int(bad.sum())} elements off; worst {float((err - bound).max())}"


def test_vector_add(gen):
    for n, tile in ((1000, 256), (100_000, 1024), (50, 64)):  # 64: a tile smaller than a block
        a, b = randn(gen, n), randn(gen, n)
        c = nans(n)
        launch(tiles.vector_add, tt.cdiv(n, tile), a, b, c, tile)
        close(c, (a.double() + b.double()).float(), 0, 0)  # one float32 rounding


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize(("shape", "tiles_mnk"), [((200, 96, 136), (32, 32, 16)),
                                                  ((512, 512, 512), (64, 64, 32))])
def test_matmul_tensor_cores(gen, dtype, shape, tiles_mnk):
    m, k, n = shape
    dt = getattr(torch, dtype)
    a, b = randn(gen, m, k, dtype=dt), randn(gen, k, n, dtype=dt)
    c = nans(m, n, dtype=dt)
    tm, tn, tk = tiles_mnk
    launch(tiles.matmul, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    u_out = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": U32}[dtype]
    dot_close(c, a, b, u_in=2.0 ** -11 if dtype == "float32" else 0.0, u_out=u_out)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(("shape", "tiles_mnk"), [
    ((512, 256, 768), (128, 256, 64)),    # Hopper main loop (TMA + wgmma) on sm_90a
    ((1000, 520, 1030), (128, 256, 64)),  # edge tiles: TMA fills zeros, the store skips
    ((384, 1024, 256), (128, 128, 64)),
    ((512, 1001, 512), (128, 256, 64)),   # rows of 1001 halves: no TMA, the portable loop
])
def test_matmul_k_loop_paths(gen, dtype, shape, tiles_mnk):
    m, k, n = shape
    dt = getattr(torch, dtype)
    a, b = randn(gen, m, k, dtype=dt), randn(gen, k, n, dtype=dt)
    c = nans(m, n, dtype=dt)
    tm, tn, tk = tiles_mnk
    launch(tiles.matmul_8warps, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    dot_close(c, a, b, u_out={"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}[dtype])
    if torch.cuda.get_device_capability() == (9, 0):  # the launch encoded A's tensor map iff
        from threadtile.runtime import tensormaps  # its rows are whole 16-byte units
        maps = [v for key, v in tensormaps._CACHE.items()
                if key[2:4] == (a.data_ptr(), (m, k))]
        assert maps and all((v != tensormaps.ZERO) == (k % 8 == 0) for v in maps)


@pytest.mark.parametrize(("shape", "tiles_mnk", "b_transposed"), [
    ((512, 512, 512), (128, 128, 16), False),  # aligned and inside: cp.async, three buffers
    ((256, 96, 384), (64, 128, 32), False),
    ((1000, 1001, 520), (128, 128, 16), False),  # edge tiles, odd rows: the register loop
    ((256, 128, 256), (128, 128, 32), True),     # B a transposed view: the register loop
])
def test_matmul_tf32_k_loop_paths(gen, shape, tiles_mnk, b_transposed):
    """float32 through tfloat32 in tile.h's staged loop (8 warps: each warp's blocks share
    their rows), on each of its paths; the operands round to tfloat32 either way."""
    m, k, n = shape
    a = randn(gen, m, k)
    b = randn(gen, n, k).T if b_transposed else randn(gen, k, n)
    c = nans(m, n)
    tm, tn, tk = tiles_mnk
    launch(tiles.matmul_8warps, (cdiv(m, tm), cdiv(n, tn)), a, b, c, tm, tn, tk)
    dot_close(c, a, b, u_in=2.0 ** -11, u_out=U32)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_matmul_hopper_shapes_built_for_sm90_take_the_staged_loop(gen, dtype, monkeypatch):
    """Built for plain sm_90 (as for a GPU without wgmma), the Hopper loop's shapes run tile.h's
    staged loop: cp.async into three buffers, B through ldmatrix.trans."""
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
    dot_close(c, a, b, u_out={"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}[dtype])
    spec = next(iter(kern._dispatch.values()))
    assert spec.arch == "sm_90" and "mma_loop<" in spec.source


def test_matmul_strided_operand(gen):
    """A transposed view of B cannot be copied by TMA (last axis not contiguous): the kernel,
    compiled for strided arrays, takes the portable loop and still multiplies right."""
    m, k, n = 256, 128, 256
    a = randn(gen, m, k, dtype=torch.float16)
    bt = randn(gen, n, k, dtype=torch.float16)
    c = nans(m, n, dtype=torch.float16)
    launch(tiles.matmul_8warps, (cdiv(m, 128), cdiv(n, 128)), a, bt.T, c, 128, 128, 64)
    dot_close(c, a, bt.T, u_out=2.0 ** -11)


def test_matmul_fp32_fma(gen):
    m, k, n = 130, 70, 100
    a, b = randn(gen, m, k), randn(gen, k, n)
    c = nans(m, n)
    launch(tiles.matmul_fp32, (cdiv(m, 32), cdiv(n, 32)), a, b, c, 32, 32, 8)
    dot_close(c, a, b)


def test_softmax(gen):
    x = randn(gen, 64, 64, scale=4.0)
    y = nans(64, 64)
    launch(tiles.softmax, 32, x, y, 2, 64)
    close(y, torch.softmax(x.double(), dim=1), 1e-5, 1e-7)


@pytest.mark.parametrize(("n", "dtype"), [(1000, "float32"), (4096, "float32"),
                                          (300, "float16"), (777, "bfloat16")])
def test_softmax_rows(gen, n, dtype):
    dt = getattr(torch, dtype)
    x = randn(gen, 33, n, dtype=dt, scale=3.0)
    y = nans(33, n, dtype=dt)
    launch(tiles.softmax_rows, 33, x, y, 1 << (n - 1).bit_length())
    tol = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
    close(y, torch.softmax(x.double(), dim=1), tol, tol * 1e-2)


@pytest.mark.parametrize(("n", "dtype"), [(32768, "float32"), (20000, "bfloat16")])
def test_softmax_rows_wide(gen, n, dtype):
    """32 warps, 32 values per thread; 32768 is the interior path (no bounds tests)."""
    dt = getattr(torch, dtype)
    x = randn(gen, 9, n, dtype=dt, scale=3.0)
    y = nans(9, n, dtype=dt)
    launch(tiles.softmax_rows_wide, 9, x, y, 32768)
    tol = {"float32": 1e-5, "bfloat16": 1.6e-2}[dtype]
    close(y, torch.softmax(x.double(), dim=1), tol, tol * 1e-2)


def test_exp_modes(gen):
    """FULL is within 2 ulp of exp; APPROX within a few ulp near zero, its error growing with
    |x| (2 + 1.16 |x| ulp is the hardware exponential's bound)."""
    x = randn(gen, 4096, scale=8.0)
    full, fast = nans(4096), nans(4096)
    launch(tiles.exp_modes, 8, x, full, fast, 512)
    ref = torch.exp(x.double())
    ulp = torch.finfo(torch.float32).eps * ref.abs()
    assert ((full.double() - ref).abs() <= 2 * ulp + 1e-45).all()
    assert ((fast.double() - ref).abs() <= (3 + 1.2 * x.double().abs()) * ulp + 1e-38).all()
    assert not torch.equal(full, fast)  # the two modes are different code


@pytest.mark.parametrize(("n", "dtype"), [(32768, "float32"), (32768, "bfloat16"),
                                          (20000, "bfloat16"), (3000, "float32")])
def test_softmax_chunked(gen, n, dtype):
    """Chunks of 2048 over 8 warps; 20000 and 3000 end in a padded chunk."""
    dt = getattr(torch, dtype)
    x = randn(gen, 9, n, dtype=dt, scale=3.0)
    x[:, 0] = 30.0  # the running maximum jumps at the first element of every row
    y = nans(9, n, dtype=dt)
    launch(tiles.softmax_chunked, 9, x, y, 2048)
    tol = {"float32": 1e-5, "bfloat16": 1.6e-2}[dtype]
    close(y, torch.softmax(x.double(), dim=1), tol, tol * 1e-2)


@pytest.mark.parametrize("view", ["contiguous", "aligned_view", "misaligned_view",
                                  "strided_rows", "narrow"])
def test_vector_runs(rng, view):
    """Runs of 4 consecutive elements per thread: 16-byte accesses on contiguous rows and on
    an aligned strided view, element accesses where the rows are misaligned or the last axis
    is strided, and the bounds-tested path for the block half outside. "narrow" arrays are
    509 wide: their tiles are edge tiles whose runs may straddle the end of a row or start
    misaligned, each run taking a vector access or element accesses on its own."""
    C, rows = 512, 10
    width = 509 if view == "narrow" else C
    x = rng.standard_normal((rows, width)).astype(np.float32)
    w = rng.standard_normal(C).astype(np.float32)
    hx = torch.randn(rows, width, device="cuda").to(torch.bfloat16)
    nb = cdiv(rows, 4)

    def placed(a):  # a (rows, width) tensor laid out as `view` asks, same values
        if view in ("contiguous", "narrow"):
            return a.contiguous()
        pad = {"aligned_view": 8, "misaligned_view": 1, "strided_rows": 0}[view]
        if view == "strided_rows":
            big = torch.zeros(rows, 2 * C, device="cuda", dtype=a.dtype)
            big[:, ::2] = a
            return big[:, ::2]
        big = torch.zeros(rows, C + pad, device="cuda", dtype=a.dtype)
        big[:, pad:] = a
        return big[:, pad:]

    xd = placed(torch.from_numpy(x).cuda())
    hd = placed(hx)
    outs = [placed(torch.full((rows, width), float("nan"), device="cuda")),
            torch.full((rows,), -1, dtype=torch.int32, device="cuda"),
            nans(nb, width), nans(nb * 8, C // 2),
            placed(torch.full((rows, width), float("nan"), device="cuda", dtype=torch.bfloat16))]
    launch(tiles.vector_runs, nb, xd, torch.from_numpy(w).cuda(), hd, *outs, C)
    ref = tiles.vector_runs_reference(x, w, hx.double().cpu().numpy(), C)
    close(outs[0], torch.from_numpy(ref[0]), 1e-6, 1e-6)
    assert (outs[1].cpu().numpy() == ref[1]).all()
    close(outs[2], torch.from_numpy(ref[2]), 1e-5, 1e-5)
    close(outs[3], torch.from_numpy(ref[3]), 1e-4, 1e-4)
    close(outs[4], torch.from_numpy(ref[4]), 8e-3, 0)


@pytest.mark.parametrize("kernel, n", [("layer_norm_rows", 4096), ("layer_norm_rows", 1000),
                                       ("layer_norm_packed", 32768),
                                       ("layer_norm_packed", 20000),
                                       ("layer_norm_wide", 32768), ("layer_norm_wide", 20000),
                                       ("layer_norm_chunked", 32768),
                                       ("layer_norm_chunked", 20000),
                                       ("layer_norm_chunked", 1000)])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_layer_norm_rows(gen, kernel, n, dtype):
    """Rows in registers, or chunked; 1000 and 20000 pad the row (and the last chunk)."""
    dt = getattr(torch, dtype)
    m = 6
    x = (randn(gen, m, n) * 2 + 1).to(dt)
    w, b = randn(gen, n).to(dt), randn(gen, n).to(dt)
    y = nans(m, n, dtype=dt)
    mean, rstd = nans(m), nans(m)
    consts = {"layer_norm_rows": (4096,), "layer_norm_wide": (32768, 4096),
              "layer_norm_chunked": (2048,), "layer_norm_packed": (32768,)}[kernel]
    launch(getattr(tiles, kernel), m, x, w, b, y, mean, rstd, 1e-5, *consts)
    x64 = x.double()
    mu = x64.mean(dim=1)
    rs = 1 / torch.sqrt(x64.var(dim=1, unbiased=False) + 1e-5)
    close(mean, mu, 1e-5, 1e-5)
    close(rstd, rs, 1e-5, 1e-5)
    ref = (x64 - mu[:, None]) * rs[:, None] * w.double() + b.double()
    tol = {"float32": 1e-5, "bfloat16": 1.6e-2}[dtype]
    close(y, ref, tol, tol)


def test_layer_norm(gen):
    m, n = 37, 1000
    x = randn(gen, m, n, scale=2.0) + 1
    w, b = randn(gen, n), randn(gen, n)
    y, mean, rstd = nans(m, n), nans(m), nans(m)
    launch(tiles.layer_norm_fwd, m, x, w, b, y, mean, rstd, 1e-5, 256)
    x64 = x.double()
    ref = torch.nn.functional.layer_norm(x64, (n,), w.double(), b.double(), eps=1e-5)
    close(y, ref, 1e-4, 1e-5)
    close(mean, x64.mean(dim=1), 1e-5, 1e-6)
    close(rstd, 1 / torch.sqrt(x64.var(dim=1, unbiased=False) + 1e-5), 1e-4, 1e-6)


def test_transpose(gen):
    x = randn(gen, 300, 170)
    y = nans(170, 300)
    launch(tiles.transpose, (cdiv(300, 32), cdiv(170, 64)), x, y, 32, 64)
    close(y, x.t(), 0, 0)


def test_mixed_matmul_rowsum(gen):
    m, k, n = 200, 64, 300
    a = randn(gen, m, k, dtype=torch.float16)
    b = randn(gen, k, n, dtype=torch.float16)
    c = nans(m, n)
    rowsum = torch.zeros(m, device="cuda")
    tiles.matmul_rowsum[(cdiv(m, 32), cdiv(n, 64)), 128](a, b, c, rowsum, 32, 64, 32)
    torch.cuda.synchronize()
    dot_close(c, a, b)
    a64, b64 = a.double(), b.double()
    ref = (a64 @ b64).sum(dim=1)
    bound = (k + n + 2) * U32 * (a64.abs() @ b64.abs()).sum(dim=1)
    assert ((rowsum.double() - ref).abs() <= bound).all()


def _both(kernel, grid, host_args, constants):
    """Run on the GPU (torch copies of the NumPy arguments) and in the simulator; return the
    GPU's and the simulator's arguments after the launch, as NumPy arrays."""
    dev = [torch.from_numpy(a.copy()).cuda() for a in host_args]
    launch(kernel, grid, *dev, *constants)
    sim = [a.copy() for a in host_args]
    with tt.simulate():
        kernel[grid](*sim, *constants)
    return [d.cpu().numpy() for d in dev], sim


def test_reductions_match_the_simulator(rng):
    R, C, nb = 16, 8, 5
    x = rng.standard_normal((nb * R, C)).astype(np.float32)
    outs = [np.full((nb * R, 1), np.nan, np.float32), np.full(nb * R, np.nan, np.float32),
            np.full((nb, C), np.nan, np.float32), np.full(nb * R, np.nan, np.float32),
            np.full(nb * R, -1, np.int32), np.full((nb, C), -1, np.int32),
            np.full(nb, np.nan, np.float32)]
    gpu, sim = _both(tiles.reductions, nb, [x] + outs, (R, C))
    (g_sums, g_maxs, g_mins, g_prods, g_amax, g_amin, g_total) = gpu[1:]
    (s_sums, s_maxs, s_mins, s_prods, s_amax, s_amin, s_total) = sim[1:]
    # selections are exact; sums and products may differ by the order of their float32
    # roundings: each within (terms - 1) u of the exact value (u = 2^-24), both of them
    for g, s_ in ((g_maxs, s_maxs), (g_mins, s_mins), (g_amax, s_amax), (g_amin, s_amin)):
        np.testing.assert_array_equal(g, s_)
    u = 2.0 ** -24
    absx = np.abs(x.astype(np.float64))
    row_abs = absx.sum(axis=1)
    assert (np.abs(g_sums[:, 0] - s_sums[:, 0]) <= 2 * (C - 1) * u * row_abs).all()
    row_prod = np.abs(np.prod(x.astype(np.float64), axis=1))
    assert (np.abs(g_prods - s_prods) <= 2 * (C - 1) * u * row_prod * 1.01).all()
    block_abs = absx.reshape(nb, R * C).sum(axis=1)
    assert (np.abs(g_total - s_total) <= 2 * (R * C - 1) * u * block_abs).all()


def test_elementwise_matches_the_simulator(rng):
    n = 256
    x = rng.uniform(-2, 2, n).astype(np.float32)
    y = rng.uniform(-2, 2, n).astype(np.float32)
    gpu, sim = _both(tiles.elementwise, 1, [x, y, np.full(n, np.nan, np.float32)], (n,))
    np.testing.assert_allclose(gpu[2], sim[2], rtol=1e-3, atol=1e-3)


def test_histogram_atomics(rng):
    n, nbins = 100_000, 16
    x = rng.uniform(-2, 18, n).astype(np.float32)
    gpu, sim = _both(tiles.histogram, tt.cdiv(n, 128), [x, np.zeros(nbins, np.int32)],
                     (nbins, 128))
    f = np.floor(x).astype(np.int64)
    ref = np.bincount(f[(f >= 0) & (f < nbins)], minlength=nbins)
    assert (gpu[1] == ref).all() and (sim[1] == ref).all()


def test_odds_and_ends_match_the_simulator(rng):
    """Early returns, uniform branches, a 0-d tile as a number, Fortran-order and strided
    loads, Python's // and % on negative integers, float16 arithmetic."""
    T = 8
    x = rng.standard_normal((4 * T, T)).astype(np.float32)
    ints = rng.integers(-1000, 1000, 4 * T * T).astype(np.int32)
    h = rng.standard_normal(4 * T).astype(np.float16)
    outs = [np.full((4 * T, T), np.nan, np.float32), np.full(4 * T * T, 12345, np.int32),
            np.full(4 * T, np.nan, np.float32)]
    dev = [torch.from_numpy(a.copy()).cuda() for a in [x, ints, h] + outs]
    xt = torch.from_numpy(np.ascontiguousarray(x.T)).cuda().t()  # a strided view
    launch(tiles.odds_and_ends, 4, dev[0], xt, *dev[1:], T)
    sim = [a.copy() for a in outs]
    with tt.simulate():
        tiles.odds_and_ends[4](x, np.ascontiguousarray(x.T).T, ints, h, *sim, T)
    got = [d.cpu().numpy() for d in dev[3:]]
    np.testing.assert_allclose(got[0], sim[0], rtol=1e-6)
    # exact, NaNs included: blocks 2 and 3 return before writing
    np.testing.assert_array_equal(got[1], sim[1])
    np.testing.assert_array_equal(got[2], sim[2])


def test_atomic_cas_xchg_max():
    T, nb = 16, 7
    lock = torch.zeros(T + 2, dtype=torch.int32, device="cuda")
    owner = torch.full((nb * T,), -1, dtype=torch.int32, device="cuda")
    vals = torch.zeros(nb * T, device="cuda")
    launch(tiles.claim, nb, lock, owner, vals, T)
    lock, owner = lock.cpu().numpy(), owner.cpu().numpy().reshape(nb, T)
    # each slot went to one block, which saw 0; every other block saw that block's number
    first = lock[:T]
    assert ((first >= 1) & (first <= nb)).all() and (lock[T:] == 10 * (nb - 1)).all()
    for j in range(T):
        col = owner[:, j]
        assert (col[first[j] - 1] == 0) and (np.delete(col, first[j] - 1) == first[j]).all()
    assert (vals == 5).all()


def test_device_functions_with_tiles(gen):
    x = randn(gen, 64, 16)
    y = nans(64, 16)
    launch(tiles.with_functions, 4, x, y, 16)
    x64 = x.double()
    # a float32 sum of 16 terms in any order: within 15 u sum|x| of the exact one (u = 2^-24),
    # plus the rounding of 2 x and of the final add
    err = (y.double() - (x64 * 2 + x64.sum(dim=1, keepdim=True))).abs()
    absx = x64.abs()
    bound = (15 * absx.sum(dim=1, keepdim=True) + 2 * (2 * absx + absx.sum(dim=1, keepdim=True)))
    assert not torch.isnan(y).any() and (err <= bound * 2.0 ** -24).all(), float(
        (err - bound * 2.0 ** -24).max())


def test_launch_on_a_torch_stream(gen):
    n = 5000
    a, b = randn(gen, n), randn(gen, n)
    c = nans(n)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        import threadtile.tile as ct

        ct.launch(s, (ct.cdiv(n, 256), 1, 1), tiles.vector_add, (a, b, c, 256))
    s.synchronize()
    close(c, (a.double() + b.double()).float(), 0, 0)


def test_printf(capfd):
    x = torch.arange(64, device="cuda", dtype=torch.float32)
    capfd.readouterr()
    launch(tiles.printf_sum, 2, x, 64)
    out = capfd.readouterr().out
    assert sorted(out.splitlines()) == ["sum 0 of 64: 2016.00", "sum 1 of 64: 2016.00"]
