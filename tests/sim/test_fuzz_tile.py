"""The tile-level differential fuzzer (tools/fuzz/tile_gen.py) on a CI budget: generated tile
kernels give in the simulator what the float64 reference gives (within its error bounds), the
comparison catches a wrong element, the generator is deterministic and covers the tile
language, kernels compile for sm_80 and sm_90, and the minimizer shrinks a planted failure
of a tile program into a regression test."""

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.fuzz import tile_ref as ref  # noqa: E402
from tools.fuzz.minimize import minimize, write_regression  # noqa: E402
from tools.fuzz.run import load  # noqa: E402
from tools.fuzz.tile_gen import generate  # noqa: E402
from tools.fuzz.tile_prog import E, TNode  # noqa: E402
from tools.fuzz.tile_run import compare, compile_cubin, differential, launch  # noqa: E402

SEEDS = range(30)
KNOWN: dict[int, str] = {}  # seeds with a known, recorded mismatch (none now)


@pytest.mark.parametrize("seed", [pytest.param(s, marks=pytest.mark.xfail(
    reason=KNOWN[s], strict=True)) if s in KNOWN else s for s in SEEDS])
def test_simulator_matches_the_float64_reference(seed):
    out = differential(generate(seed), targets=("lockstep", "ref"))
    assert out.ok, out.mismatches or out.errors


def test_generator_is_deterministic_and_varied():
    assert generate(5).source() == generate(5).source()
    assert len({generate(s).source() for s in range(10)}) == 10
    for s in range(10):
        ast.parse(generate(s).source())


def test_generated_kernels_use_every_feature():
    text = "\n".join(generate(s).source() for s in range(100))
    for feature in ("ct.load(", 'order="F"', "PaddingMode.ZERO", "PaddingMode.NEG_ZERO",
                    "PaddingMode.NAN", "PaddingMode.POS_INF", "PaddingMode.NEG_INF",
                    "PaddingMode.UNDETERMINED", "ct.store(", "ct.float16", "ct.bfloat16",
                    "ct.int32", "ct.int8", "ct.int64", "ct.float64", ".astype(", "ct.astype(",
                    "ct.exp(", "ct.sqrt(", "ct.log(", "ct.tanh(", "ct.floor(", "ct.where(",
                    "ct.isnan(", " <= ", " != ", "ct.broadcast_to(", "[:, None]", "ct.sum(",
                    "ct.max(", "ct.min(", "ct.argmax(", "keepdims=True", "ct.cumsum(",
                    "ct.mma(", "ct.matmul(", " @ ", "ct.permute(", ".transpose()",
                    "ct.reshape(", "ct.gather(", "mask=", "ct.scatter(", "ct.atomic_add(",
                    "ct.cat(", "ct.extract(", "ct.insert(", " << ", " // ", " % ", "(~",
                    "ct.maximum(", "max(", "for k", "for i", "if ct.bid", "else:",
                    "ct.bid(1)", "num_warps=1", "num_warps=8", "ct.load(out_",
                    "q, index=(", "order=(0, 2, 3, 1)"):
        assert feature in text, feature


def test_reference_bounds():
    f32 = ref.exact("float32", np.array([1.0, 3.0]))
    tiny = ref.exact("float32", np.array([1e-7, 1e-7]))
    # x + 1e-7 - x cancels: the bound is the rounding of the sum, not of the difference
    d = ref.binary("-", ref.binary("+", f32, tiny), f32)
    assert np.all(d.ok) and np.all(d.err >= 2 ** -24) and np.allclose(d.val, 1e-7)
    # floor within its operand's error of an integer is not determined
    near = ref.binary("+", ref.exact("float32", np.array([2.0, 2.5])),
                      ref.exact("float32", np.array([0.0, 0.0])))
    near.err[:] = [1e-6, 1e-6]
    assert ref.math("floor", near).ok.tolist() == [False, True]
    # float to int: outside int8 or near a truncation step, unknown
    casted = ref.cast(ref.exact("float32", np.array([300.0, 2.5, -0.5])), "int8")
    assert casted.ok.tolist() == [False, True, True] and casted.val[1] == 2
    # padding: NaN is followed exactly through max, undetermined is not compared
    arr = ref.exact("float32", np.arange(6.0).reshape(2, 3))
    t = ref.load(arr, (0, 0), (2, 4), (0, 1), "NAN")
    assert np.isnan(t.val[0, 3]) and t.ok.all()
    assert ref.reduce("max", t, 1, False).val.tolist() == [2.0, 5.0]
    assert not ref.load(arr, (0, 0), (2, 4), (0, 1), "UNDETERMINED").ok[:, 3].any()
    # order "F": tile axis 0 runs along the array's axis 1
    assert ref.load(arr, (0, 0), (4, 2), (1, 0), "ZERO").val[:3].tolist() == [
        [0, 3], [1, 4], [2, 5]]


def test_comparison_catches_a_wrong_element():
    prog = generate(8)
    arrays = prog.inputs()
    want = prog.reference(arrays)
    got = launch(load(prog.source()).kernel, prog, arrays, "lockstep")
    checked = 0
    for a in prog.arrays:
        r = want[a.name]
        assert compare(a.name, r, got[a.name]) is None
        sel = r.ok & (np.isfinite(r.val) if ref.is_float(r.dtype) else True)
        if not sel.any():
            continue
        i = tuple(np.argwhere(sel)[0])
        bad = got[a.name].copy()
        step = 1 if not ref.is_float(r.dtype) else 3 * r.err[i] + 0.05 * abs(r.val[i]) + 0.01
        bad[i] = bad[i] + step
        assert compare(a.name, r, bad) is not None, a.name
        assert compare(a.name, r, got[a.name], bad) is not None, a.name
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize("seed", [5, 18, 30, 33])  # together: nearly every feature
def test_generated_kernels_compile_for_sm80_and_sm90(seed):
    try:
        import cuda.core  # noqa: F401, PLC0415
    except ImportError:
        pytest.skip("NVRTC (cuda.core) is not installed")
    prog = generate(seed)
    for arch in ("sm_80", "sm_90"):
        assert compile_cubin(prog, arch)[:4] == b"\x7fELF"


def _planted(prog):
    v = next(v for v in prog.tvars if v.dtype == "float32")
    return TNode("assign", v.name, [E("bin", "float32", v.shape, [
        E("var", "float32", v.shape, attrs={"name": v.name}),
        E("lit", "float32", (), attrs={"value": 12345.0})], {"sym": "+"})])


def test_minimizer_shrinks_a_planted_tile_failure(tmp_path):
    prog = generate(3)
    planted = _planted(prog)
    prog.body.insert(len(prog.body) // 2, TNode("if", attrs={"text": "ct.bid(0) == 0"},
                                                 body=[planted]))
    prog.body.append(TNode("for", "i99", attrs={"text": "2"}, body=list(prog.body[:2])))
    before = prog.size()
    line = planted.render(0)[0]

    def failing(cand):  # a fake mismatch: "fails" while the planted line is there and runs
        return line in cand.source() and differential(cand).ok

    small = minimize(prog, failing)
    assert small.size() == 2 < before  # the if and its one statement
    assert [v.name for v in small.tvars] == [planted.target]  # the others went
    assert len(small.arrays) < len(prog.arrays)
    path = write_regression(small, "planted mismatch", xfail=False, directory=tmp_path)
    assert path.name.startswith("test_tile_seed3_planted_mismatch")
    mod = load(path.read_text(), "fuzz_tile_regression_planted")
    mod.test_program_is_the_kernel_above()
    mod.test_targets_agree()  # the planted line is harmless: it passes


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(10))
def test_gpu_matches_simulator_and_reference(seed):
    from threadtile.runtime.driver import gpu_available  # noqa: PLC0415

    if not gpu_available():
        pytest.skip("no GPU")
    out = differential(generate(seed), targets=("gpu", "lockstep", "ref"))
    assert out.ok, out.mismatches or out.errors
