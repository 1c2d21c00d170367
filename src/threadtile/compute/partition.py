"""``three_way_partition`` (cuda.compute's name): the items of an input split by two predicates
into three outputs, each in the input's order.

On the GPU it is a compaction as ``select`` does it (sorting.py ``compact``): each item's part
as a flag word (1 for the first part, 2^32 for the second, 0 for the rest), their inclusive sum
by CUB's single-pass scan (the low half counts the first part, the high half the second), then
a scatter: item ``i`` of the first part to ``first[lo - 1]``, of the second to
``second[hi - 1]``, and of the rest to ``unselected[i - lo - hi]`` (``lo``, ``hi`` the
halves of its inclusive sum).
"""

from __future__ import annotations

import numpy as np

from ..lang.types import bool_ as BOOL
from . import cxx, device
from ._common import Call
from .operators import as_operator, ctype, type_of
from .sorting import _Flags, scan_and_scatter

__all__ = ["three_way_partition"]

#: the most items a partition takes: each half of a flag word's sum counts up to it
MAX_ITEMS = (1 << 32) - 1


def three_way_partition(d_in, d_first_part_out, d_second_part_out, d_unselected_out,
                        d_num_selected_out, select_first_part_op, select_second_part_op,
                        num_items=None, stream=None) -> None:
    """Split ``d_in`` by two predicates of an item, keeping the input's order in each part:
    the items for which ``select_first_part_op(item)`` is true to the front of
    ``d_first_part_out``; of the others, those for which ``select_second_part_op(item)`` is
    true to the front of ``d_second_part_out``; the rest to the front of ``d_unselected_out``.
    ``d_num_selected_out`` (two integers) gets the sizes of the first and second parts (the
    rest has ``num_items`` minus both). The predicates are Python functions of an item,
    compiled as device functions (run as Python under ``simulate()`` and for NumPy arrays);
    ``d_in`` an array or an iterator; the outputs arrays of its dtype."""
    outs = [d_first_part_out, d_second_part_out, d_unselected_out]
    call = Call("three_way_partition", [d_in, *outs, d_num_selected_out], stream)
    names = ("d_first_part_out", "d_second_part_out", "d_unselected_out")
    got = [call.output(o, w) for o, w in zip(outs, names)]
    cnt, cdt, csize = call.output(d_num_selected_out, "d_num_selected_out")
    inp = call.input(d_in, "d_in")
    n = call.count(num_items, ("d_in", inp), *((w, g[2]) for w, g in zip(names, got)))
    if csize < 2:
        raise ValueError(f"three_way_partition: d_num_selected_out holds {csize} item(s); it "
                         "takes two (the sizes of the first and second parts)")
    if n > MAX_ITEMS:
        raise ValueError(f"three_way_partition: {n} items, more than the {MAX_ITEMS} it takes")
    for (_, dt, _), w in zip(got, names):
        if dt != inp.dtype:
            raise TypeError(f"three_way_partition: d_in ({inp.dtype}) and {w} ({dt}) differ")
    first, second = as_operator(select_first_part_op), as_operator(select_second_part_op)
    if call.host:
        items = inp.host(n)
        parts = _host_parts(items, first, second)
        for (out, _, _), keep in zip(got, parts):
            k = int(keep.sum())
            out.view[:k] = items[keep]
        cnt.view[0], cnt.view[1] = int(parts[0].sum()), int(parts[1].sum())
        call.finish()
        return None
    call.start()
    _device(call, inp, [g[0] for g in got], cnt, cdt, first, second, n)
    return None


def _host_parts(items, first, second) -> list[np.ndarray]:
    """The three parts' masks of ``items``, the predicates run as Python."""
    seq = list(items.view(np.recarray)) if items.dtype.names else list(items)
    a = np.array([bool(first.host(x)) for x in seq], dtype=bool)
    b = np.array([bool(second.host(x)) for x in seq], dtype=bool) & ~a
    return [a, b, ~(a | b)]


def _device(call, inp, outs: list, cnt, cdt, first, second, n: int) -> None:
    t = type_of(inp.dtype)
    f1, src1 = first.cxx((t,), BOOL)
    f2, src2 = second.cxx((t,), BOOL)
    key = ("three_way_partition", inp.key(), first.key(), second.key(), cdt.str)
    flags = _Flags(inp, "tt_part", ("flags",) + key)

    def build():
        u = cxx.Unit()
        u.add_function(src1)
        u.add_function(src2)
        u.add_input(inp)
        u.cub_headers.append("<cuda/iterator>")
        _kernels(u, ctype(t), inp, f1, f2, ctype(type_of(cdt)))
        cxx.scan_kernels(u, "long long", 8, "::cuda::std::plus<>", flags, "inclusive", True)
        return u.text()

    prog = device.program(key, build, "three_way_partition")
    scan_and_scatter(prog, call, inp, n, "tt_partition", outs, cnt)


def _kernels(u, t: str, inp, first: str, second: str, count_t: str) -> None:
    """``tt_part`` (an item's flag word) and ``tt_partition`` (the scatter to the three
    outputs by the flag words' inclusive sum ``pos``; the two counts)."""
    ip, ig, _it, mk = inp.cxx("in_p")
    u.kernels.append(f"""
template <class It>
struct tt_part {{
  It in;
  __device__ __forceinline__ long long operator()(long long i) const {{
    const auto x = in[i];
    return {first}{{}}(x) ? 1LL : ({second}{{}}(x) ? (1LL << 32) : 0LL);
  }}
}};

extern "C" __global__ void __launch_bounds__({cxx.TRANSFORM_THREADS})
tt_partition({', '.join(ip)}, {t}* first, {t}* second, {t}* rest, const long long* pos,
             {count_t}* count, long long n) {{
  {ig}
  auto in = {mk};
  const tt_part<decltype(in)> part{{in}};
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {{
    const long long p = pos[i], lo = p & 0xffffffffLL, hi = p >> 32, f = part(i);
    if (f == 1LL) first[lo - 1] = in[i];
    else if (f != 0LL) second[hi - 1] = in[i];
    else rest[i - lo - hi] = in[i];
  }}
  if (blockIdx.x == 0 && threadIdx.x == 0) {{
    const long long p = n > 0 ? pos[n - 1] : 0LL;
    count[0] = ({count_t})(p & 0xffffffffLL);
    count[1] = ({count_t})(p >> 32);
  }}
}}
""")
