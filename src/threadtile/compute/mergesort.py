"""``merge_sort`` with a comparator: CUB's merge sort agents (``AgentBlockSort`` sorts each
tile in a block, then ``log2(tiles)`` passes each find the merge path partitions
(``AgentPartition``) and merge pairs of sorted runs (``AgentMerge``)), ping-ponging between
the output arrays and a temporary copy as CUB's dispatch does."""

from __future__ import annotations

from ..lang.types import bool_
from . import device, host
from ._common import Call
from .cxx import Unit, struct_definition
from .iterators import ArrayInput
from .operators import as_operator, ctype, type_of

__all__ = ["merge_sort"]

MERGE_THREADS = 256
MERGE_ITEMS = 17  # nominal items per thread of 4-byte keys (CUB's tuning)
PARTITION_THREADS = 256


def merge_items(size: int) -> int:
    """Items per thread for keys (or values) of ``size`` bytes."""
    return max(1, min(MERGE_ITEMS, MERGE_ITEMS * 4 // max(size, 1)))


def merge_sort_kernels(u: Unit, key: str, value: str | None, less: str, items: int) -> None:
    """``tt_block_sort``, ``tt_merge_partition``, ``tt_merge``: CUB's merge sort agents for
    ``key`` (and ``value``) pointers, offsets of 64 bits."""
    u.cub_headers += ["<cub/agent/agent_merge_sort.cuh>",
                      "<cub/device/dispatch/tuning/tuning_merge_sort.cuh>"]
    val = value or "cub::NullType"
    u.kernels.append(f"""
struct tt_merge_policy {{
  __host__ __device__ constexpr cub::MergeSortPolicy operator()() const {{
    return cub::MergeSortPolicy{{{MERGE_THREADS}, {items},
        cub::BLOCK_LOAD_WARP_TRANSPOSE, cub::LOAD_DEFAULT, cub::BLOCK_STORE_WARP_TRANSPOSE}};
  }}
}};
using tt_mkey = {key};
using tt_mval = {val};
using tt_block_sort_agent = cub::detail::merge_sort::AgentBlockSort<tt_merge_policy,
    const tt_mkey*, const tt_mval*, tt_mkey*, tt_mval*, long long, {less}, tt_mkey, tt_mval>;
using tt_merge_agent = cub::detail::merge_sort::AgentMerge<tt_merge_policy, tt_mkey*, tt_mval*,
    long long, {less}, tt_mkey, tt_mval>;

extern "C" __global__ void __launch_bounds__({MERGE_THREADS})
tt_block_sort(int ping, const tt_mkey* keys_in, const void* values_in, tt_mkey* keys_out,
              void* values_out, long long n, tt_mkey* keys_tmp, void* values_tmp) {{
  __shared__ typename tt_block_sort_agent::TempStorage storage;
  tt_block_sort_agent(ping != 0, storage, keys_in, (const tt_mval*)values_in, n, keys_out,
                      (tt_mval*)values_out, keys_tmp, (tt_mval*)values_tmp, {less}{{}}).Process();
}}

extern "C" __global__ void __launch_bounds__({PARTITION_THREADS})
tt_merge_partition(int ping, tt_mkey* keys_ping, tt_mkey* keys_pong, long long n,
                   long long partitions, long long* merge_partitions, long long target,
                   int tile) {{
  const long long idx = blockDim.x * (long long)blockIdx.x + threadIdx.x;
  if (idx < partitions)
    cub::detail::merge_sort::AgentPartition<tt_mkey*, long long, {less}, tt_mkey>{{
        ping != 0, keys_ping, keys_pong, n, idx, merge_partitions, {less}{{}}, target, tile,
        partitions}}.Process();
}}

extern "C" __global__ void __launch_bounds__({MERGE_THREADS})
tt_merge(int ping, tt_mkey* keys_ping, void* values_ping, long long n, tt_mkey* keys_pong,
         void* values_pong, long long* merge_partitions, long long target) {{
  __shared__ typename tt_merge_agent::TempStorage storage;
  tt_merge_agent(ping != 0, storage, keys_ping, (tt_mval*)values_ping, keys_pong,
                 (tt_mval*)values_pong, n, keys_pong, (tt_mval*)values_pong, keys_ping,
                 (tt_mval*)values_ping, {less}{{}}, merge_partitions, target).Process();
}}
""")


def merge_sort(d_in_keys, d_in_values, d_out_keys, d_out_values, op, num_items=None,
               stream=None) -> None:
    """Sort keys (and values along, or None) stably by ``op(a, b)``, a strict weak order: true
    when ``a`` goes before ``b`` (``OpKind.LESS``, or a Python function of two keys returning
    a bool). Keys of any dtype the operator takes, records included."""
    call = Call("merge_sort", [d_in_keys, d_in_values, d_out_keys, d_out_values], stream)
    if (d_in_values is None) != (d_out_values is None):
        raise TypeError("merge_sort: give both d_in_values and d_out_values, or neither")
    kout, kdt, ksize = call.output(d_out_keys, "d_out_keys")
    kin = call.input(d_in_keys, "d_in_keys")
    if not isinstance(kin, ArrayInput) or kin.dtype != kdt:
        raise TypeError("merge_sort: d_in_keys must be an array of d_out_keys' dtype")
    sized = [("d_in_keys", kin), ("d_out_keys", ksize)]
    vin = vout = vdt = None
    if d_in_values is not None:
        vout, vdt, vsize = call.output(d_out_values, "d_out_values")
        vin = call.input(d_in_values, "d_in_values")
        if not isinstance(vin, ArrayInput) or vin.dtype != vdt:
            raise TypeError("merge_sort: d_in_values must be an array of d_out_values' dtype")
        sized += [("d_in_values", vin), ("d_out_values", vsize)]
    n = call.count(num_items, *sized)
    op = as_operator(op)
    if call.host:
        keys = kin.host(n)
        perm = host.merge_order(keys, op)
        kout.view[:n] = keys[perm]
        if vin is not None:
            vout.view[:n] = vin.host(n)[perm]
        call.finish()
        return None
    call.start()
    if n == 0:
        return None
    kt = type_of(kdt)
    fn, src = op.cxx((kt, kt), bool_)
    vs = vdt.itemsize if vdt is not None else 0
    items = merge_items(max(kdt.itemsize, vs))
    key = ("mergesort", kdt.str, None if vdt is None else vdt.str, op.key())

    def build():
        u = Unit()
        u.add_function(src)
        for dt in (kdt, vdt):
            if dt is not None and dt.names is not None:
                u.structs[type_of(dt).cname] = struct_definition(type_of(dt))
        merge_sort_kernels(u, ctype(kt), None if vdt is None else ctype(type_of(vdt)), fn,
                           items)
        return u.text()

    prog = device.program(key, build, "merge_sort")
    tile = MERGE_THREADS * items
    tiles = -(-n // tile)
    passes = (tiles - 1).bit_length()  # ceil(log2(tiles))
    sizes = [(tiles + 1) * 8, n * kdt.itemsize, n * vs]
    offs, at = [], 0
    for sz in sizes:
        offs.append(at)
        at += -(-sz // 256) * 256
    base = call.temp(max(at, 1))
    parts, ktmp, vtmp = (base + o for o in offs)
    s = call.stream
    ping = passes % 2 == 0
    vptr_in = vin.ptr if vin is not None else 0
    vptr_out = vout if vin is not None else 0
    prog.kernel("tt_block_sort")[tiles, MERGE_THREADS, s](
        int(ping), kin.ptr, vptr_in, kout, vptr_out, n, ktmp, vtmp if vin is not None else 0)
    partitions = tiles + 1
    pgrid = -(-partitions // PARTITION_THREADS)
    for p in range(passes):
        target = 2 << p
        prog.kernel("tt_merge_partition")[pgrid, PARTITION_THREADS, s](
            int(ping), kout, ktmp, n, partitions, parts, target, tile)
        prog.kernel("tt_merge")[tiles, MERGE_THREADS, s](
            int(ping), kout, vptr_out, n, ktmp, vtmp if vin is not None else 0, parts, target)
        ping = not ping
    return None

