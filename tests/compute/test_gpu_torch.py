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


# around the scan's tiles (4096 4-byte or 2048 8-byte items) and across many of them; offset 1:
# pointers that are not 16-byte aligned
@pytest.mark.parametrize("n", [4095, 4097, 3 * 4096 + 5, (1 << 22) + 3])
@pytest.mark.parametrize("offset", [0, 1])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_scans_every_tile_and_edge(n, offset, dtype):
    x = torch.randint(-100, 100, (n + offset,), device="cuda", dtype=dtype)
    out = torch.full_like(x, -7)
    tc.inclusive_scan(x[offset:], out[offset:], tc.OpKind.PLUS, None, n)
    want = torch.cumsum(x[offset:].long(), 0)
    assert torch.equal(out[offset:].long(), want)
    assert (out[:offset] == -7).all()
    out.fill_(-7)
    tc.exclusive_scan(x[offset:], out[offset:], tc.OpKind.PLUS, np.dtype(str(dtype)[6:]).type(5),
                      n)
    assert torch.equal(out[offset:].long(), torch.cat([want.new_zeros(1), want[:-1]]) + 5)
    out.fill_(-7)
    tc.inclusive_scan(x[offset:], out[offset:], tc.OpKind.MAXIMUM, np.dtype(str(dtype)[6:]).type(
        90), n)
    assert torch.equal(out[offset:], torch.cummax(x[offset:].clamp(min=90), 0).values)


def _last(a, b):
    return b


def _first(a, b):
    return a


@pytest.mark.parametrize("n", [4097, (1 << 21) + 5])
def test_scan_order_across_tiles(n):
    """Operators that are associative and not commutative, over many tiles: each tile's
    prefix comes from the tiles before it, in order."""
    x = torch.randint(0, 1 << 30, (n,), device="cuda", dtype=torch.int32)
    out = torch.empty_like(x)
    tc.exclusive_scan(x, out, _last, np.int32(-1), n)
    assert out[0] == -1 and torch.equal(out[1:], x[:-1])
    tc.inclusive_scan(x, out, _first, None, n)
    assert torch.equal(out, x[:1].expand(n))
    xf = torch.randn(n, device="cuda", dtype=torch.float64)
    outf = torch.empty_like(xf)
    tc.inclusive_scan(xf, outf, tc.OpKind.PLUS, np.float64(0.25), n)
    assert torch.allclose(outf, torch.cumsum(xf, 0) + 0.25, rtol=1e-9, atol=1e-8)


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
