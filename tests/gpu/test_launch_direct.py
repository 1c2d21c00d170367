"""The steady-state launch path (CompiledKernel.direct): repeated launches with new tensors,
and every change of argument kind falling back to the general path, all give right results."""

import pytest

import threadtile as cuda

pytestmark = pytest.mark.gpu


@cuda.jit
def scale_add(a, b, out, s):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] * s + b[i, j]


@pytest.fixture
def torch():
    if not cuda.gpu_available():
        pytest.skip("needs an NVIDIA GPU")
    return pytest.importorskip("torch")


def run(torch, a, b, s):
    out = torch.full(a.shape, float("nan"), device="cuda", dtype=a.dtype)
    scale_add[(4, 4), (16, 16)](a, b, out, s)  # one configuration: covers up to 64 x 64
    torch.cuda.synchronize()
    ref = a.double() * s + b.double()
    assert torch.allclose(out.double(), ref, rtol=1e-5, atol=1e-5)
    return out


def test_repeated_and_changing_arguments(torch):
    launch = scale_add[(4, 4), (16, 16)]
    for _ in range(3):  # new tensors (new pointers) through the direct path
        a, b = torch.randn(40, 50, device="cuda"), torch.randn(40, 50, device="cuda")
        run(torch, a, b, 2)
    from threadtile.jit import _never
    from threadtile.runtime import launcher

    d = launch.direct
    assert d is not None and d is not _never
    if launcher.FAST_LAUNCH:  # the C launcher, else its Python twin
        assert type(d).__name__ == "Launcher"
    else:
        assert isinstance(d, launcher.PyLauncher)
    out = torch.full(a.shape, float("nan"), device="cuda")
    assert launch.direct((a, b, out, 2))  # the steady state really takes the direct path
    torch.cuda.synchronize()
    assert torch.allclose(out, a * 2 + b)
    assert not launch.direct((a.double(), b.double(), out.double(), 2))  # declined, not run
    a, b = torch.randn(50, 40, device="cuda"), torch.randn(50, 40, device="cuda")
    run(torch, a.t(), b.t(), 3)  # non-contiguous views: another variant
    run(torch, a, b, -1)  # a different shape, contiguous again
    run(torch, a.double(), b.double(), 5)  # another dtype
    run(torch, a, b, 7)  # back to the first kind
    run(torch, a, b, 1.5)  # a float where the variant took an int: a float64 variant
    with pytest.raises(TypeError):  # not a kernel value at all: refused before launching
        scale_add[(4, 4), (16, 16)](a, b, a, "x")


def test_direct_path_follows_the_current_stream(torch):
    n = 64
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    run(torch, a, b, 2)
    run(torch, a, b, 2)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        out = torch.empty(n, n, device="cuda")
        for _ in range(3):
            scale_add[(4, 4), (16, 16)](a, b, out, 2)
            z = out + 1.0  # ordered after the kernel on s
            out.fill_(float("nan"))
    s.synchronize()
    assert torch.allclose(z, a * 2 + b + 1.0)


def test_compile_for_another_arch_leaves_launches_alone(torch):
    """compile(arch=...) rebuilds a specialization for that arch; launches keep the build for
    the device they run on (an sm_80 cubin does not load on sm_90)."""
    a, b = torch.randn(40, 50, device="cuda"), torch.randn(40, 50, device="cuda")
    run(torch, a, b, 2)
    other = "sm_80" if cuda.runtime.driver.current_device().arch != "sm_80" else "sm_90"
    assert scale_add.compile(a, b, a, 2, arch=other).arch == other
    scale_add._configs.clear()  # a new launch configuration: through the general path
    run(torch, a, b, 3)


@cuda.jit
def copy_window(x, y, out, out1):
    v = x[1:, 2:]  # a view: its row stride is x's
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = v[i, j]
    w = y[3:]
    if i == 0 and j < out1.shape[0]:
        out1[j] = w[j]


def test_direct_path_packs_contiguous_strides(torch):
    """The direct path derives a contiguous tensor's strides from its shape; views made in the
    kernel (which read them) index as through the general path."""
    launch = copy_window[(4, 4), (16, 16)]
    for rows, cols in ((3, 7), (5, 64), (9, 33)):
        x = torch.randn(rows, cols, device="cuda")
        y = torch.randn(cols + 3, device="cuda")
        out = torch.full((rows - 1, cols - 2), float("nan"), device="cuda")
        out1 = torch.full((cols,), float("nan"), device="cuda")
        launch(x, y, out, out1)
        torch.cuda.synchronize()
        assert torch.equal(out, x[1:, 2:]) and torch.equal(out1, y[3:])
    assert launch.direct is not None


def test_tile_kernels_with_constants_take_the_direct_path(torch):
    """ct.launch of a tile kernel with Constant arguments on a torch stream: the steady state
    takes the direct path (the Constants checked by value), and another Constant value or
    another dtype falls back to the general path with the right specialization."""
    import threadtile.tile as ct
    from threadtile.jit import _never
    from threadtile.tile import _LAUNCHES

    s = torch.cuda.current_stream()
    for tile, dtype in ((64, torch.float32), (64, torch.float32), (32, torch.float32),
                        (64, torch.float16), (64, torch.float32)):
        a = torch.randn(1000, device="cuda").to(dtype)
        b = torch.randn(1000, device="cuda").to(dtype)
        out = torch.full_like(a, float("nan"))
        ct.launch(s, (-(-1000 // tile),), _tile_add, (a, b, out, tile))
        torch.cuda.synchronize()
        assert torch.equal(out, a + b), (tile, dtype)
    go = _LAUNCHES[_tile_add, (16,), s.cuda_stream, False]
    assert go.direct is not None and go.direct is not _never
    assert go.direct((a, b, out, 64)) and not go.direct((a, b, out, 32))


import threadtile.tile as _ct  # noqa: E402  (the tile kernel below)


@_ct.kernel
def _tile_add(a, b, c, T: _ct.Constant[int]):
    i = _ct.bid(0)
    _ct.store(c, index=(i,), tile=_ct.load(a, index=(i,), shape=(T,)) +
              _ct.load(b, index=(i,), shape=(T,)))
