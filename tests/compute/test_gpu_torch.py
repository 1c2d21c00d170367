"""threadtile.compute on the GPU against torch's own operations on the same tensors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import HAVE_GPU

import threadtile.compute as tc

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAVE_GPU, reason="no GPU")]
torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n", [1, 4096, 1 << 22, (1 << 22) + 17])
def test_sum_and_cumsum_like_torch(n):
    x = torch.randn(n, device="cuda", dtype=torch.float64)
    out = torch.empty(1, device="cuda", dtype=torch.float64)
    tc.reduce_into(x, out, tc.OpKind.PLUS, n, np.float64(0))
    assert torch.allclose(out[0], x.sum(), rtol=1e-10, atol=1e-9)
    scan = torch.empty_like(x)
    tc.inclusive_scan(x, scan, tc.OpKind.PLUS)
    assert torch.allclose(scan, torch.cumsum(x, 0), rtol=1e-9, atol=1e-8)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.int64, torch.float64])
@pytest.mark.parametrize("n", [1000, 1 << 21, (1 << 21) + 333])
def test_sort_like_torch(dtype, n):
    if dtype.is_floating_point:
        k = torch.randn(n, device="cuda", dtype=dtype)  # no NaN: torch puts them all last
    else:
        k = torch.randint(-2**30, 2**30, (n,), device="cuda", dtype=dtype)
    v = torch.arange(n, device="cuda", dtype=torch.int64)
    ko, vo = torch.empty_like(k), torch.empty_like(v)
    tc.radix_sort(k, ko, v, vo, tc.SortOrder.ASCENDING)
    want, idx = torch.sort(k, stable=True)
    assert torch.equal(ko, want)
    assert torch.equal(vo, idx)
    tc.radix_sort(k, ko, v, vo, tc.SortOrder.DESCENDING)
    want, idx = torch.sort(k, descending=True, stable=True)
    assert torch.equal(ko, want)
    assert torch.equal(vo, idx)


def test_histogram_like_histc():
    x = torch.randint(0, 1000, (1 << 20,), device="cuda").float()  # integers: no edge cases
    h = torch.empty(100, device="cuda", dtype=torch.int32)
    tc.histogram_even(x, h, 101, 0.0, 1000.0)
    assert torch.equal(h.long(), torch.histc(x, bins=100, min=0, max=1000).long())


def test_merge_sort_like_torch():
    k = torch.randn(300_000, device="cuda")
    out = torch.empty_like(k)
    tc.merge_sort(k, None, out, None, tc.OpKind.LESS)
    assert torch.equal(out, torch.sort(k).values)
