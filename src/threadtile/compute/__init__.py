"""``threadtile.compute``: device-wide algorithms with the names and arguments of NVIDIA's
``cuda.compute`` (docs/algorithms.md).

::

    import threadtile.compute as tc
    tc.reduce_into(d_in, d_out, tc.OpKind.PLUS, len(d_in), np.array([0], np.float32))
    tc.inclusive_scan(d_in, d_out, lambda a, b: a * b)          # any associative function
    tc.radix_sort(keys, keys_out, None, None, tc.SortOrder.ASCENDING)

On the GPU each algorithm is CUB (its device-level agents, instantiated in generated CUDA C++
compiled by NVRTC, the operator a device function compiled from Python); under
``threadtile.simulate()`` and on NumPy arrays it runs in NumPy with the operator as Python.
"""

from __future__ import annotations

from .algorithms import (
    binary_transform,
    exclusive_scan,
    histogram_even,
    inclusive_scan,
    make_exclusive_scan,
    make_histogram_even,
    make_inclusive_scan,
    make_reduce_into,
    make_segmented_reduce,
    reduce_into,
    segmented_reduce,
    unary_transform,
)
from .iterators import ConstantIterator, CountingIterator, IteratorBase, TransformIterator
from .mergesort import merge_sort
from .operators import OpKind
from .partition import three_way_partition
from .sorting import SortOrder, make_radix_sort, radix_sort, select, unique_by_key

__all__ = ["reduce_into", "inclusive_scan", "exclusive_scan", "radix_sort", "histogram_even",
           "segmented_reduce", "unary_transform", "binary_transform", "merge_sort",
           "unique_by_key", "select", "three_way_partition", "make_reduce_into",
           "make_inclusive_scan",
           "make_exclusive_scan", "make_radix_sort", "make_histogram_even",
           "make_segmented_reduce", "OpKind", "SortOrder", "CountingIterator",
           "ConstantIterator", "TransformIterator", "IteratorBase"]
