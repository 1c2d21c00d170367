"""The narrow floats (float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn), astype's
rounding modes, astile, bitcast, pack_to_bytes/unpack_from_bytes, 8-bit and batched mma.

The conversions are checked against ml_dtypes (and torch's float8 dtypes where torch is
importable) and against float64 arithmetic; kernels run in the simulator (8-bit arrays are
ml_dtypes arrays or their bytes) and compile to sm_80 and sm_90 cubins through NVRTC. Errors
are cuTile's classes with its words.
"""

import ml_dtypes
import numpy as np
import pytest
from conftest import Target

import threadtile.tile as ct
from threadtile.lang import minifloat

SIM = Target("sim", "numpy")
FP8 = ["float8_e4m3fn", "float8_e5m2"]
MAXES = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0, "float4_e2m1fn": 6.0}


def _mixed(rng, n):
    return (rng.standard_normal(n) * rng.choice([1e-3, 0.1, 1.0, 30.0, 300.0], n)).astype(
        np.float32)


# ---- the formats -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", FP8 + ["float4_e2m1fn"])
def test_round_to_nearest_even_matches_ml_dtypes(rng, name):
    x = _mixed(rng, 20000)
    x = x[np.abs(x) <= MAXES[name]]
    ref = x.astype(getattr(ml_dtypes, name)).astype(np.float32)
    np.testing.assert_array_equal(minifloat.round_to(x, name), ref)


def test_e8m0_is_powers_of_two(rng):
    x = np.abs(_mixed(rng, 1000)) + np.float32(1e-30)
    z, p = minifloat.round_to(x, "float8_e8m0fnu", "rz"), minifloat.round_to(
        x, "float8_e8m0fnu", "rp")
    assert (z <= x).all() and (p >= x).all()
    assert (np.log2(z) == np.round(np.log2(z))).all()
    assert ((p == z) | (p == 2 * z)).all()


@pytest.mark.parametrize("name", FP8)
def test_saturation_and_nan(name):
    big = np.array([1e9, -1e9, np.inf, -np.inf, np.nan], np.float32)
    got = minifloat.round_to(big, name)
    m = MAXES[name]
    np.testing.assert_array_equal(got[:4], [m, -m, m, -m])
    assert np.isnan(got[4])


@pytest.mark.parametrize("name", FP8 + ["float8_e8m0fnu", "float4_e2m1fn"])
def test_every_pattern_survives_decode_and_encode(name):
    bits = np.arange(16 if name == "float4_e2m1fn" else 256, dtype=np.uint8)
    np.testing.assert_array_equal(minifloat.from_value(minifloat.decode(bits, name), name),
                                  bits)


@pytest.mark.parametrize("name", FP8 + ["float8_e8m0fnu"])
def test_decode_matches_torch(name):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, name):
        pytest.skip(f"torch has no {name}")
    bits = np.arange(256, dtype=np.uint8)
    ref = torch.from_numpy(bits).view(getattr(torch, name)).float().numpy()
    np.testing.assert_array_equal(minifloat.decode(bits, name), ref)


@pytest.mark.parametrize("mode", ["rz", "rm", "rp", "ra"])
def test_directed_modes_bracket_the_value(rng, mode):
    x = _mixed(rng, 5000)
    x = x[np.abs(x) < 400]
    got = minifloat.round_to(x, "float8_e4m3fn", mode).astype(np.float64)
    rn = minifloat.round_to(x, "float8_e4m3fn").astype(np.float64)
    if mode == "rz":
        assert (np.abs(got) <= np.abs(x)).all()
    elif mode == "rm":
        assert (got <= x).all()
    elif mode == "rp":
        assert (got >= x).all()
    else:  # ties away: differs from ties to even on exact ties only
        assert (np.abs(got - x) == np.abs(rn - x)).all()


# ---- kernels ---------------------------------------------------------------------------------

@ct.kernel
def to_narrow(x, y, z, T: ct.Constant[int]):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    n = t.astype(y.dtype)
    ct.store(y, index=(ct.bid(0),), tile=n)
    ct.store(z, index=(ct.bid(0),), tile=n.astype(ct.float32))


@pytest.mark.parametrize("name", FP8)
def test_astype_to_and_from_8_bit_arrays(rng, name):
    x = _mixed(rng, 256) * np.float32(10)
    y = np.zeros(256, getattr(ml_dtypes, name))
    z = np.zeros(256, np.float32)
    SIM.launch_tile(to_narrow, 2, x, y, z, 128)
    want = minifloat.round_to(x, name)  # saturating: beyond the range, the largest value
    np.testing.assert_array_equal(y.astype(np.float32), want)
    np.testing.assert_array_equal(z, want)
    ok = np.abs(x) <= MAXES[name]
    np.testing.assert_array_equal(z[ok], x[ok].astype(getattr(ml_dtypes, name)).astype(
        np.float32))


@ct.kernel
def pack_unpack(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(T,))
    ct.store(y, index=(0,), tile=ct.unpack_from_bytes(ct.pack_to_bytes(t), y.dtype))


@pytest.mark.parametrize("src, dst", [(np.float32, np.int32), (np.float16, np.uint8),
                                      (np.int64, np.float64), (ml_dtypes.float8_e5m2,
                                                               np.uint8)])
def test_pack_then_unpack_is_a_view(rng, src, dst):
    x = rng.integers(0, 256, 64, dtype=np.uint8).view(src)
    y = np.zeros(64 // np.dtype(dst).itemsize, dst)
    SIM.launch_tile(pack_unpack, 1, x, y, x.size)
    np.testing.assert_array_equal(y.view(np.uint8), x.view(np.uint8))


@ct.kernel
def fp4_roundtrip(x, y, v, T: ct.Constant[int]):
    b = ct.load(x, index=(0,), shape=(T,))
    f4 = ct.unpack_from_bytes(b, ct.float4_e2m1fn)
    ct.store(v, index=(0,), tile=f4.astype(ct.float32))
    ct.store(y, index=(0,), tile=ct.pack_to_bytes(f4))


def test_float4_two_to_a_byte(rng):
    x = rng.integers(0, 256, 32, dtype=np.uint8)
    y, v = np.zeros(32, np.uint8), np.zeros(64, np.float32)
    SIM.launch_tile(fp4_roundtrip, 1, x, y, v, 32)
    np.testing.assert_array_equal(y, x)
    nib = np.stack([x & 15, x >> 4], axis=-1).reshape(-1)
    np.testing.assert_array_equal(v, minifloat.decode(nib, "float4_e2m1fn"))


@ct.kernel
def bitcast_kernel(x, y, T: ct.Constant[int]):
    t = ct.load(x, index=(0,), shape=(T,))
    ct.store(y, index=(0,), tile=ct.bitcast(t, y.dtype))


def test_bitcast(rng):
    x = rng.standard_normal(64).astype(np.float32)
    y = np.zeros(64, np.int32)
    SIM.launch_tile(bitcast_kernel, 1, x, y, 64)
    np.testing.assert_array_equal(y, x.view(np.int32))


@pytest.mark.parametrize("name", FP8)
def test_scalars_round_as_arrays(name):
    """A 0-d value (a constant: astile's elements) keeps its shape; float8_e5m2's NaN payload
    path made it 1-d (cuTile's test_astile with float8_e5m2 failed on it)."""
    for v in (np.float64(4.0), np.array(-2.5), np.array(np.nan)):
        got = minifloat.round_to(v, name)
        assert got.shape == ()
    assert minifloat.round_to(np.float64(4.0), name) == 4.0


@ct.kernel
def astile_e5m2_kernel(Y):
    ct.store(Y, (0,), ct.astile((0, 1, 0, 4), dtype=ct.float8_e5m2))


def test_astile_e5m2():
    Y = np.full(4, 7, ml_dtypes.float8_e5m2)
    SIM.launch_tile(astile_e5m2_kernel, 1, Y)
    np.testing.assert_array_equal(Y.astype(np.float32), [0, 1, 0, 4])


@ct.kernel
def astile_kernel(X, Y, a: float, b: int):
    ct.store(X, (0, 0), ct.astile(((1, a), (b, 4.5)), dtype=ct.float32))
    ct.store(Y, (0,), ct.astile((0.3, 448.0, 1000.0, -2.0), dtype=ct.float8_e4m3fn))


def test_astile():
    X = np.zeros((2, 2), np.float32)
    Y = np.zeros(4, ml_dtypes.float8_e4m3fn)
    SIM.launch_tile(astile_kernel, 1, X, Y, 2.5, 3)
    np.testing.assert_array_equal(X, [[1, 2.5], [3, 4.5]])
    np.testing.assert_array_equal(Y.astype(np.float32),
                                  minifloat.round_to([0.3, 448, 1000, -2], "float8_e4m3fn"))


def _rounding_kernel(dtype, mode):
    @ct.kernel
    def k(x, y, T: ct.Constant[int]):
        t = ct.load(x, index=(0,), shape=(T,))
        ct.store(y, index=(0,), tile=t.astype(dtype, rounding_mode=mode).astype(y.dtype))
    return k


@pytest.mark.parametrize("mode", ["RN", "RZ", "RM", "RP"])
def test_float64_to_float32_rounding(rng, mode):
    x = rng.standard_normal(64)
    y = np.zeros(64, np.float32)
    SIM.launch_tile(_rounding_kernel(ct.float32, getattr(ct.RoundingMode, mode)), 1, x, y, 64)
    lo = x.astype(np.float32)
    lo = np.where(lo.astype(np.float64) > x, np.nextafter(lo, np.float32(-np.inf)), lo)
    hi = np.where(lo.astype(np.float64) < x, np.nextafter(lo, np.float32(np.inf)), lo)
    want = {"RN": x.astype(np.float32), "RM": lo, "RP": hi,
            "RZ": np.where(x >= 0, lo, hi)}[mode]
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("mode, want", [("RN", 1.0), ("RZ", 1.0), ("RA", 1 + 2 ** -10)])
def test_float32_to_tfloat32_rounding(mode, want):
    x = np.array([1 + 2 ** -11, -(1 + 2 ** -11)], np.float32)
    y = np.zeros(2, np.float32)
    SIM.launch_tile(_rounding_kernel(ct.tfloat32, getattr(ct.RoundingMode, mode)), 1, x, y, 2)
    np.testing.assert_array_equal(y, [want, -want])


@ct.kernel
def mma_fp8(A, B, C, m: ct.Constant[int], n: ct.Constant[int], k: ct.Constant[int]):
    a = ct.load(A, index=(0, 0), shape=(m, k))
    b = ct.load(B, index=(0, 0), shape=(k, n))
    acc = ct.load(C, index=(0, 0), shape=(m, n))
    ct.store(C, index=(0, 0), tile=ct.mma(a, b, acc))


@pytest.mark.parametrize("name", FP8)
def test_mma_of_8_bit_floats(rng, name):
    dt = getattr(ml_dtypes, name)
    A = rng.standard_normal((16, 32)).astype(dt)
    B = rng.standard_normal((32, 16)).astype(dt)
    C = np.ones((16, 16), np.float32)
    want = A.astype(np.float64) @ B.astype(np.float64) + 1
    SIM.launch_tile(mma_fp8, 1, A, B, C, 16, 16, 32)
    np.testing.assert_allclose(C, want, rtol=1e-5, atol=1e-5)


@ct.kernel
def batched(A, B, C, V, W, nb: ct.Constant[int], m: ct.Constant[int], n: ct.Constant[int],
            k: ct.Constant[int]):
    a = ct.load(A, index=(0, 0), shape=(m, k))
    b = ct.load(B, index=(0, 0, 0), shape=(nb, k, n))
    acc = ct.load(C, index=(0, 0, 0), shape=(nb, m, n))
    ct.store(C, index=(0, 0, 0), tile=ct.mma(a, b, acc))
    v = ct.load(V, index=(0,), shape=(k,))
    ct.store(W, index=(0, 0), tile=v @ b)


def test_batched_mma_and_vector_matmul(rng):
    A = rng.standard_normal((8, 16)).astype(np.float32)
    B = rng.standard_normal((2, 16, 8)).astype(np.float32)
    C = rng.standard_normal((2, 8, 8)).astype(np.float32)
    V = rng.standard_normal(16).astype(np.float32)
    W = np.zeros((2, 8), np.float32)
    want = C.astype(np.float64) + A.astype(np.float64) @ B
    SIM.launch_tile(batched, 1, A, B, C, V, W, 2, 8, 8, 16)
    np.testing.assert_allclose(C, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(W, V.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    f8 = np.zeros(256, ml_dtypes.float8_e4m3fn)
    f32 = np.zeros(256, np.float32)
    assert to_narrow.compile(f32, f8, f32, 128, arch=arch).cubin[:4] == b"\x7fELF"
    assert fp4_roundtrip.compile(f8.view(np.uint8)[:32], f8.view(np.uint8)[:32], f32[:64], 32,
                                 arch=arch).cubin[:4] == b"\x7fELF"
    assert astile_kernel.compile(f32.reshape(-1, 2), f8, 1.0, 2, arch=arch).cubin[:4] == \
        b"\x7fELF"
    for mode in (ct.RoundingMode.RZ, ct.RoundingMode.RM, ct.RoundingMode.RP):
        k = _rounding_kernel(ct.float32, mode)
        assert k.compile(f32.astype(np.float64), f32, 64, arch=arch).cubin[:4] == b"\x7fELF"
    for mode in (ct.RoundingMode.RZ, ct.RoundingMode.RA, ct.RoundingMode.RP):
        k = _rounding_kernel(ct.float16, mode)  # from float8_e4m3fn: RA, RM, RP offered
        assert k.compile(f8, f32, 64, arch=arch).cubin[:4] == b"\x7fELF"
    k = _rounding_kernel(ct.bfloat16, ct.RoundingMode.RZ)
    assert k.compile(f32, f32, 64, arch=arch).cubin[:4] == b"\x7fELF"
    k = _rounding_kernel(ct.float8_e8m0fnu, ct.RoundingMode.RP)
    assert k.compile(f32, f32, 64, arch=arch).cubin[:4] == b"\x7fELF"
    k = _rounding_kernel(ct.tfloat32, ct.RoundingMode.RA)
    assert k.compile(f32, f32, 64, arch=arch).cubin[:4] == b"\x7fELF"
    a = np.zeros((32, 32), ml_dtypes.float8_e5m2)
    assert mma_fp8.compile(a, a, f32[:256].reshape(16, 16), 16, 16, 32, arch=arch).cubin
    b = np.zeros((2, 16, 8), np.float32)
    assert batched.compile(f32[:128].reshape(8, 16), b, b[:, :8], f32[:16], f32[:16].reshape(
        2, 8), 2, 8, 8, 16, arch=arch).cubin


# ---- errors, with cuTile's words -------------------------------------------------------------

@ct.kernel
def fp8_sum(x):
    t = ct.load(x, (0,), (16,))
    ct.sum(t, axis=0)


@ct.kernel
def fp8_add(x):
    t = ct.load(x, (0,), (16,))
    ct.store(x, (0,), t + t)


@pytest.mark.parametrize("kernel", [fp8_sum, fp8_add])
def test_no_arithmetic_on_8_bit_floats(kernel):
    x = np.zeros(16, ml_dtypes.float8_e4m3fn)
    with pytest.raises(ct.TileTypeError, match="Non-arithmetic dtype float8_e4m3fn is "
                                               "unsupported"):
        SIM.launch_tile(kernel, 1, x)


def _convert(src, dst, mode):
    @ct.kernel
    def k(y):
        t = ct.ones((2,), dtype=src).astype(dst, rounding_mode=mode)
        ct.store(y, (0,), t.astype(y.dtype))
    return k


@pytest.mark.parametrize("src, dst, mode, words", [
    (ct.int32, ct.float32, ct.RoundingMode.RZ,
     "rounding_mode is only valid for float to float conversions"),
    (ct.float8_e8m0fnu, ct.float32, ct.RoundingMode.RM,
     "rounding_mode=RoundingMode.RM is not supported for conversion from float8_e8m0fnu to "
     "float32"),
    (ct.float32, ct.float8_e8m0fnu, None,
     "rounding_mode=RoundingMode.RN is not supported for conversion from float32 to "
     "float8_e8m0fnu"),
    (ct.float32, ct.bfloat16, ct.RoundingMode.RP, "supported rounding modes for this "
     r"conversion are \(<RoundingMode.RN"),
])
def test_rounding_mode_errors(src, dst, mode, words):
    with pytest.raises(ct.TileTypeError, match=words):
        SIM.launch_tile(_convert(src, dst, mode), 1, np.zeros(2, np.float32))


@ct.kernel
def ragged(X):
    ct.store(X, (0, 0), ct.astile(((1, 2), (3,)), dtype=ct.int32))


@ct.kernel
def unpack_int(x, y):
    ct.store(y, (0,), ct.unpack_from_bytes(ct.load(x, (0,), (4,)), y.dtype))


@ct.kernel
def bitcast_wider(x, y):
    ct.store(y, (0,), ct.bitcast(ct.load(x, (0,), (4,)), y.dtype))


@pytest.mark.parametrize("kernel, args, words", [
    (ragged, (np.zeros((2, 2), np.int32),), "Tuple has non-uniform inner shapes at value"),
    (unpack_int, (np.zeros(4, np.int32), np.zeros(4, np.int32)),
     "unpack_from_bytes requires uint8 tile"),
    (unpack_int, (np.zeros(4, np.uint8), np.zeros(4, np.int64)), "not divisible by 64"),
    (bitcast_wider, (np.zeros(4, np.int32), np.zeros(4, np.int64)), "the same width"),
])
def test_dtype_op_errors(kernel, args, words):
    with pytest.raises(ct.TileTypeError, match=words):
        SIM.launch_tile(kernel, 1, *args)


@ct.kernel
def ftz_sum(x, y):
    t = ct.load(x, (0,), (16,))
    ct.store(y, (0,), ct.sum(t, axis=0, keepdims=True, flush_to_zero=True))


def test_flush_to_zero_is_for_float32():
    y = np.zeros(1, np.float32)
    SIM.launch_tile(ftz_sum, 1, np.ones(16, np.float32), y)
    assert y[0] == 16
    with pytest.raises(ct.TileTypeError, match="Flush to zero can only be used for float32 "
                                               "type, but got float16"):
        SIM.launch_tile(ftz_sum, 1, np.ones(16, np.float16), np.zeros(1, np.float16))
