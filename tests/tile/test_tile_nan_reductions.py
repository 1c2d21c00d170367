"""max/min/argmax/argmin over tiles holding NaNs, cuTile's ``propagate_nan``: by default NaNs
are ignored (max of all NaNs is NaN, argmax of all NaNs 0), with ``propagate_nan=True`` a NaN
wins (max is NaN, argmax the first NaN's index). Ties go to the lower index either way. The
GPU's answer must not depend on the order its threads combine in: each case runs in the
simulator and on the GPU against NumPy, over rows long enough for every reduction path
(per-thread chains, warp shuffles, the warps' partials) and short ones (the generic path)."""

import numpy as np
import pytest
from conftest import compile_cubin, poison

import threadtile.tile as ct

ConstInt = ct.Constant[int]
ConstBool = ct.Constant[bool]


@ct.kernel
def row_reductions(X, Out, Idx, N: ConstInt, PROP: ConstBool):
    r = ct.bid(0)
    x = ct.load(X, index=(r, 0), shape=(1, N))
    ct.store(Out, index=(r, 0), tile=ct.max(x, axis=1, keepdims=True, propagate_nan=PROP))
    ct.store(Out, index=(r, 1), tile=ct.min(x, axis=1, keepdims=True, propagate_nan=PROP))
    ct.store(Idx, index=(r, 0), tile=ct.argmax(x, axis=1, keepdims=True, propagate_nan=PROP))
    ct.store(Idx, index=(r, 1), tile=ct.argmin(x, axis=1, keepdims=True, propagate_nan=PROP))


def _ref(x, prop):
    rows = []
    for row in x.astype(np.float64):
        nan = np.isnan(row)
        if prop and nan.any():
            first = int(np.argmax(nan))
            rows.append((np.nan, np.nan, first, first))
        elif nan.all():
            rows.append((np.nan, np.nan, 0, 0))
        else:
            clean = row[~nan]
            hi, lo = clean.max(), clean.min()
            rows.append((hi, lo, int(np.argmax((row == hi) & ~nan)),
                         int(np.argmax((row == lo) & ~nan))))
    vals = np.array([r[:2] for r in rows])
    idx = np.array([r[2:] for r in rows], np.int32)
    return vals, idx


def _rows(rng, n, dtype):
    x = rng.standard_normal((8, n)).astype(dtype)
    x[0, rng.choice(n, n // 3, replace=False)] = np.nan
    x[1, :] = np.nan
    x[2, n - 1] = np.nan                   # a NaN last
    x[3, 0] = np.nan                       # a NaN first
    x[4, [1, n // 2]] = np.inf             # a tie of infinities
    x[4, 0] = np.nan
    x[5, :] = 2.0                          # all tied
    x[6, [n // 3, n - 2]] = -np.inf
    x[6, n // 4] = np.nan
    return x


@pytest.mark.parametrize("prop", [False, True], ids=["ignore", "propagate"])
@pytest.mark.parametrize("n", [8, 64, 4096])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_nan_reductions(target, rng, prop, n, dtype):
    if target.name == "sim" and n > 64 and dtype == np.float16:
        pytest.skip("the simulator runs float16 on the shorter rows")
    x = _rows(rng, n, dtype)
    out = target.to_device(poison((8, 2), dtype))
    idx = target.to_device(np.full((8, 2), -7, np.int32))
    target.launch_tile(row_reductions, 8, target.to_device(x), out, idx, n, prop)
    vals, want = _ref(x, prop)
    np.testing.assert_array_equal(target.to_host(idx), want)
    np.testing.assert_array_equal(target.to_host(out).astype(np.float64), vals)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles(arch):
    for n in (8, 64, 4096):
        for prop in (False, True):
            assert compile_cubin(row_reductions, np.zeros((8, n), np.float32),
                                 np.zeros((8, 2), np.float32), np.zeros((8, 2), np.int32), n,
                                 prop, arch=arch)
