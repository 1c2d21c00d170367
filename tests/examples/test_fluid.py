"""The 2D fluid example (examples/fluid): its kernels in the simulator, every check on, against
the same scheme in NumPy float64 (examples/fluid/reference.py); the temporally blocked
pressure kernel against one pass at a time; every kernel compiled to cubin for sm_80 and
sm_90; the command line writing its pictures; on a GPU, a 256x256 run against NumPy."""

from __future__ import annotations

import importlib.util
import struct

import numpy as np
import pytest
from conftest import HAVE_GPU, compile_cubin
from fluid import kernels as K
from fluid import reference as ref
from fluid import run
from fluid.params import Params
from fluid.solver import Fluid

HAVE_PIL = importlib.util.find_spec("PIL") is not None


def _random_state(rng, shape, scale=0.5):
    """Smooth random fields: noise averaged over 3x3 neighbourhoods a few times (rough noise
    makes the confinement's direction ill-conditioned where |grad|w|| is near 0)."""
    out = {}
    for k in ("u", "v", "d", "p"):
        a = rng.standard_normal(shape)
        for _ in range(3):
            a = sum(np.roll(np.roll(a, dy, 0), dx, 1) for dy in (-1, 0, 1)
                    for dx in (-1, 0, 1)) / 9.0
        out[k] = (scale * a / np.abs(a).max()).astype(np.float32).astype(np.float64)
    out["d"] = np.abs(out["d"])
    return out


def _assert_close(got: dict, want: dict, rtol: float, what: str) -> None:
    for k in ("u", "v", "d", "p"):
        scale = max(np.abs(want[k]).max(), 1e-3)
        err = np.abs(got[k] - want[k]).max() / scale
        assert err < rtol, f"{what}: field {k} off by {err:.2e} of its largest value"


def _run_both(fluid: Fluid, state: dict, steps: int) -> tuple[dict, dict]:
    fluid.set_fields(**state)
    fluid.step(steps)
    want = state
    for _ in range(steps):
        want = ref.step(want, fluid.params)
    return {k: fluid.field(k) for k in ("u", "v", "d", "p")}, want


@pytest.mark.parametrize(("shape", "solver", "per_launch"), [
    ((64, 64), "jacobi", 4), ((64, 64), "sor", 2), ((40, 72), "jacobi", 3),
    ((72, 40), "sor", 1), ((130, 140), "jacobi", 2), ((140, 130), "sor", 1)])
def test_simulated_steps_match_numpy(shape, solver, per_launch):
    rng = np.random.default_rng()
    prm = Params(solver=solver, iters=6, per_launch=per_launch)
    got, want = _run_both(Fluid(shape, prm, backend="simulator"), _random_state(rng, shape), 3)
    # float32 against float64 over 3 steps of ~20 launches: errors ~1e-6 of the fields' scale
    _assert_close(got, want, 1e-4, f"{shape} {solver}")


@pytest.mark.parametrize("shape", [(70, 45), (150, 200)])
@pytest.mark.parametrize(("passes", "redblack"), [(1, 0), (2, 0), (5, 0), (12, 0), (2, 1),
                                                  (8, 1)])
def test_relax_blocked_passes_are_exact(passes, redblack, shape):
    """One launch of ``passes`` passes in shared memory is the same as that many passes over
    the whole grid: on grids that are no multiple of the tile (partial tiles at two walls),
    with the walls' 2- and 3-neighbour cells, and (150 x 200) with tiles away from the walls,
    which take the kernel's other branch."""
    rng = np.random.default_rng()
    p = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    out = np.full_like(p, np.nan)
    omega = 1.5 if redblack else 0.8
    import threadtile as cuda  # noqa: PLC0415

    with cuda.simulate():
        K.relax[K.relax_grid(p.shape, passes), K.BLOCK, 0, K.relax_smem(bool(redblack))](
            p, b, out, np.float32(omega), passes, redblack)
    p64, b64 = p.astype(np.float64), b.astype(np.float64)
    if redblack:
        want = ref.sor(p64, b64, passes // 2, omega)
    else:
        want = ref.jacobi(p64, b64, passes, omega)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("shape", [(70, 45), (33, 64), (31, 33)])
def test_plain_jacobi_is_relax_with_one_pass(shape):
    """The plain stencil (global loads) gives what relax's one pass and jacobi_strip give,
    bit for bit, and what the NumPy reference gives."""
    rng = np.random.default_rng()
    p = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    plain, tiled = np.full_like(p, np.nan), np.full_like(p, np.nan)
    omega = np.float32(0.8)
    import threadtile as cuda  # noqa: PLC0415

    with cuda.simulate():
        K.jacobi[K.jacobi_grid(shape), K.BLOCK](p, b, plain, omega)
        K.relax[K.relax_grid(shape, 1), K.BLOCK, 0, K.relax_smem(False)](p, b, tiled, omega,
                                                                          1, 0)
    np.testing.assert_array_equal(plain, tiled)
    strip = np.full_like(p, np.nan)
    with cuda.simulate():
        K.jacobi_strip[K.jacobi_strip_grid(shape), K.STRIP_BLOCK](p, b, strip, omega)
    np.testing.assert_array_equal(strip, plain)
    want = ref.jacobi(p.astype(np.float64), b.astype(np.float64), 1, float(omega))
    np.testing.assert_allclose(plain, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_residual_kernel_matches_numpy():
    rng = np.random.default_rng()
    fluid = Fluid((48, 80), backend="simulator")
    p, b = rng.standard_normal((2, 48, 80))
    fluid.a["p"], fluid.a["b"] = p.astype(np.float32), b.astype(np.float32)
    want = ref.residual(fluid.a["p"].astype(np.float64), fluid.a["b"].astype(np.float64))
    assert fluid.residual() == pytest.approx(want, rel=1e-5)


@pytest.mark.parametrize("solver", ["jacobi", "sor"])
def test_residual_history_matches_numpy(solver):
    """The residual plot's solves: each solver with its own default omega (SOR's optimum, not
    the Jacobi of the fluid's parameters), from p = 0, the residual after each iteration."""
    rng = np.random.default_rng()
    fluid = Fluid((32, 40), Params(solver="jacobi", iters=4), backend="simulator")
    fluid.set_fields(**_random_state(rng, (32, 40)))
    fluid.step()
    got = fluid.residual_history(40, solver)
    b = fluid.field("b").astype(np.float64)
    omega = Params(solver=solver).relaxation((32, 40))
    want = [ref.residual(np.zeros_like(b), b)]
    solve = ref.sor if solver == "sor" else ref.jacobi
    solve(np.zeros_like(b), b, 40, omega, history=want)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    assert want[-1] < 0.5 * want[0]


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="solver must be one of"):
        Params(solver="multigrid")
    with pytest.raises(ValueError, match="iters must be a positive int"):
        Params(iters=0)
    with pytest.raises(ValueError, match="at least 4x4"):
        Fluid(3, backend="simulator")
    with pytest.raises(ValueError, match="passes per launch"):
        K.relax_grid((64, 64), K.MAX_PASSES + 1)
    with pytest.raises(ValueError, match="shape"):
        Fluid(8, backend="simulator").set_fields(u=np.zeros((8, 9)))


# ---- every kernel compiles ---------------------------------------------------------------------

def _launches():
    a = np.zeros((64, 64), np.float32)
    f = np.float32(0.5)
    part = np.zeros(16, np.float32)
    out = [("curl", (a, a, a), {}), ("forces", (a, a, a, a) + (f,) * 7, {}),
           ("advect", (a,) * 6 + (f,), {}), ("divergence", (a, a, a), {}),
           ("project", (a, a, a), {}), ("residual", (a, a, part), {}),
           ("jacobi", (a, a, a, f), {}), ("jacobi_strip", (a, a, a, f), {})]
    for passes, rb in ((1, 0), (4, 0), (4, 1), (12, 1)):
        out.append(("relax", (a, a, a, f), {"passes": passes, "redblack": rb}))
    return [pytest.param(*case, id=f"{case[0]}{case[2] or ''}") for case in out]


def _cubin_arch(cubin: bytes) -> str:
    assert cubin[:4] == b"\x7fELF" and cubin[4] == 2, "not an ELF64 cubin"
    (flags,) = struct.unpack_from("<I", cubin, 48)
    return f"sm_{(flags >> 8) & 0xFF}"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize(("name", "args", "consts"), _launches())
def test_kernels_compile_to_cubin(name, args, consts, arch):
    cubin = compile_cubin(getattr(K, name), *args, arch=arch, **consts)
    assert _cubin_arch(cubin) == arch
    assert "double" not in getattr(K, name).cuda_source(*args, **consts), \
        f"{name}: float64 arithmetic in a float32 kernel"


# ---- the command line ----------------------------------------------------------------------------

@pytest.mark.skipif(not HAVE_PIL,
                    reason="Pillow is not installed (pip install 'threadtile[images]')")
def test_run_writes_pictures_from_a_simulated_run(tmp_path, capsys):
    from PIL import Image  # noqa: PLC0415

    rc = run.main(["--simulate", "--size", "32", "--steps", "4", "--every", "2", "--iters", "4",
                   "--residual-iters", "8", "--out", str(tmp_path)])
    assert rc == 0, capsys.readouterr().err
    frames = sorted(tmp_path.glob("dye_*.png"))
    assert [f.name for f in frames] == ["dye_00002.png", "dye_00004.png"]
    for f in frames:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        with Image.open(f) as im:
            assert im.format == "PNG" and im.size == (32, 32) and im.mode == "RGB"
            assert len(np.unique(np.asarray(im).reshape(-1, 3), axis=0)) > 2, \
                "a blank frame: the dye did not show"
    with Image.open(tmp_path / "dye.gif") as gif:
        assert gif.format == "GIF" and gif.n_frames == 2
    with Image.open(tmp_path / "residual.png") as im:
        assert im.format == "PNG" and im.size == (720, 440)


def test_run_without_pillow_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    import builtins  # noqa: PLC0415

    real = builtins.__import__

    def no_pil(name, *args, **kwargs):
        if name == "PIL" or name.startswith("PIL."):
            raise ImportError("No module named 'PIL'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pil)
    assert run.main(["--simulate", "--size", "8", "--steps", "1", "--out", str(tmp_path)]) == 2
    assert "pip install 'threadtile[images]'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_torch_scheme_matches_numpy():
    """bench/fluid.py's peer computes the same scheme (here on torch's CPU)."""
    pytest.importorskip("torch")
    from fluid.torch_scheme import TorchFluid  # noqa: PLC0415

    rng = np.random.default_rng()
    for solver in ("jacobi", "sor"):
        prm = Params(solver=solver, iters=6)
        state = _random_state(rng, (40, 56))
        tf = TorchFluid((40, 56), prm, device="cpu")
        tf.set_fields(**state)
        want = state
        for _ in range(3):
            tf.step()
            want = ref.step(want, prm)
        _assert_close({k: tf.field(k) for k in "uvdp"}, want, 1e-4, f"torch {solver}")


@pytest.mark.skipif(HAVE_GPU, reason="checks the message a machine without a GPU gives")
def test_run_without_gpu_points_to_simulate(capsys):
    assert run.main(["--size", "8", "--steps", "1", "--no-images"]) == 2
    assert "--simulate" in capsys.readouterr().err


# ---- on the GPU ----------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no GPU")
@pytest.mark.parametrize("backend", ["torch", "device"])
@pytest.mark.parametrize(("solver", "per_launch"), [("jacobi", 4), ("sor", 2)])
def test_gpu_256_matches_numpy(solver, per_launch, backend):
    if backend == "torch":
        pytest.importorskip("torch")
    rng = np.random.default_rng()
    prm = Params(solver=solver, iters=20, per_launch=per_launch)
    got, want = _run_both(Fluid(256, prm, backend=backend), _random_state(rng, (256, 256)), 5)
    _assert_close(got, want, 1e-4, f"GPU {solver} {backend}")



@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_GPU, reason="no GPU")
@pytest.mark.parametrize("shape", [(300, 257), (64, 96)])
def test_gpu_jacobi_strip_is_jacobi(shape):
    """On the GPU the column-strip stencil gives the plain one's result, bit for bit."""
    torch = pytest.importorskip("torch")
    p, b = (torch.randn(shape, device="cuda") for _ in range(2))
    plain, strip = (torch.full(shape, float("nan"), device="cuda") for _ in range(2))
    omega = np.float32(0.9)
    K.jacobi[K.jacobi_grid(shape), K.BLOCK](p, b, plain, omega)
    K.jacobi_strip[K.jacobi_strip_grid(shape), K.STRIP_BLOCK](p, b, strip, omega)
    torch.cuda.synchronize()
    assert not plain.isnan().any()
    assert torch.equal(strip, plain)
