"""Out-of-bounds indices in thread code: negative (a GPU does not wrap them), off by one at an
edge, the wrong axis or stride; global, shared and local arrays."""

import numpy as np

import threadtile as cuda
from threadtile.errors import OutOfBoundsError

from . import bug, ramp, zeros

B0 = (0, 0, 0)


# ---- global arrays ---------------------------------------------------------------------------

@cuda.jit
def shift_right(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i - 1]  # BUG: global-negative-shift


@cuda.jit
def shift_right_ok(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i - 1] if i > 0 else np.float32(0)


bug("global-negative-shift", "oob-global", shift_right, 2, 32, lambda: (ramp(64), zeros(64)),
    OutOfBoundsError, where=(B0, B0), fixed=shift_right_ok,
    note="a[i - 1] at i = 0 reads the element before the array (no wrap-around on a GPU)")


@cuda.jit
def inclusive_guard(a, out):
    i = cuda.grid(1)
    if i <= a.size:
        out[i] = a[i]  # BUG: global-inclusive-guard


@cuda.jit
def exclusive_guard(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i]


bug("global-inclusive-guard", "oob-global", inclusive_guard, 2, 32,
    lambda: (ramp(50), zeros(50)), OutOfBoundsError, where=((1, 0, 0), (18, 0, 0)),
    fixed=exclusive_guard, note="`i <= n` instead of `i < n`")


@cuda.jit
def no_guard(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]  # BUG: global-no-guard


@cuda.jit
def with_guard(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


bug("global-no-guard", "oob-global", no_guard, 4, 32,
    lambda: (ramp(100), ramp(100), zeros(100)), OutOfBoundsError, where=((3, 0, 0), (4, 0, 0)),
    fixed=with_guard, note="grid rounded up to whole blocks, no bounds guard")


@cuda.jit
def swapped_guard(a, out):
    x, y = cuda.grid(2)
    if y < a.shape[1] and x < a.shape[0]:
        out[y, x] = a[y, x] * 2.0  # BUG: global-swapped-guard


@cuda.jit
def right_guard(a, out):
    x, y = cuda.grid(2)
    if y < a.shape[0] and x < a.shape[1]:
        out[y, x] = a[y, x] * 2.0


bug("global-swapped-guard", "oob-global", swapped_guard, (1, 1), (16, 16),
    lambda: (ramp(8, 16), zeros(8, 16)), OutOfBoundsError, where=(B0, (0, 8, 0)),
    fixed=right_guard, note="a 2-d guard that compares each index with the other axis")


@cuda.jit
def forward_difference(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i + 1] - a[i]  # BUG: global-right-halo


@cuda.jit
def forward_difference_ok(a, out):
    i = cuda.grid(1)
    if i + 1 < a.size:
        out[i] = a[i + 1] - a[i]


bug("global-right-halo", "oob-global", forward_difference, 2, 32,
    lambda: (ramp(64), zeros(64)), OutOfBoundsError, where=((1, 0, 0), (31, 0, 0)),
    fixed=forward_difference_ok, note="a[i + 1] at the last element")


@cuda.jit
def transpose_flat(a, out, rows, cols):
    c, r = cuda.grid(2)
    if r < rows and c < cols:
        out[c * cols + r] = a[r * cols + c]  # BUG: global-wrong-stride


@cuda.jit
def transpose_flat_ok(a, out, rows, cols):
    c, r = cuda.grid(2)
    if r < rows and c < cols:
        out[c * rows + r] = a[r * cols + c]


bug("global-wrong-stride", "oob-global", transpose_flat, (1, 1), (16, 4),
    lambda: (ramp(64), zeros(64), 4, 16), OutOfBoundsError, where=(B0, (4, 0, 0)),
    fixed=transpose_flat_ok, note="a flattened transpose with the wrong row stride")


@cuda.jit
def backward_difference_2d(a, out):
    c, r = cuda.grid(2)
    out[r, c] = a[r, c] - a[r, c - 1]  # BUG: global-negative-column


@cuda.jit
def backward_difference_2d_ok(a, out):
    c, r = cuda.grid(2)
    out[r, c] = a[r, c] - a[r, c - 1] if c > 0 else np.float32(0)


bug("global-negative-column", "oob-global", backward_difference_2d, (1, 1), (16, 4),
    lambda: (ramp(4, 16), zeros(4, 16)), OutOfBoundsError, where=(B0, B0),
    fixed=backward_difference_2d_ok,
    note="column c - 1 at c = 0: for rows after the first, the previous row's last element")


@cuda.jit
def forward_difference_2d(a, out):
    c, r = cuda.grid(2)
    out[r, c] = a[r, c + 1] - a[r, c]  # BUG: global-row-overrun


@cuda.jit
def forward_difference_2d_ok(a, out):
    c, r = cuda.grid(2)
    out[r, c] = a[r, c + 1] - a[r, c] if c + 1 < a.shape[1] else np.float32(0)


bug("global-row-overrun", "oob-global", forward_difference_2d, (1, 1), (16, 4),
    lambda: (ramp(4, 16), zeros(4, 16)), OutOfBoundsError, where=(B0, (15, 0, 0)),
    fixed=forward_difference_2d_ok,
    note="column 16 of a 16-column row: the next row's first element, inside the allocation")


@cuda.jit
def shift_by_block(a, out):
    i = cuda.grid(1)
    out[i + cuda.blockDim.x] = a[i]  # BUG: global-write-past-end


@cuda.jit
def shift_by_block_ok(a, out):
    i = cuda.grid(1)
    if i + cuda.blockDim.x < out.size:
        out[i + cuda.blockDim.x] = a[i]


bug("global-write-past-end", "oob-global", shift_by_block, 2, 32,
    lambda: (ramp(64), zeros(64)), OutOfBoundsError, where=((1, 0, 0), B0),
    fixed=shift_by_block_ok, note="a store shifted by one block past the end of the output")


@cuda.jit
def grid_stride_inclusive(a, out):
    i = cuda.grid(1)
    while i <= a.size:
        out[i] = 2.0 * a[i]  # BUG: global-grid-stride
        i += cuda.gridsize(1)


@cuda.jit
def grid_stride_ok(a, out):
    i = cuda.grid(1)
    while i < a.size:
        out[i] = 2.0 * a[i]
        i += cuda.gridsize(1)


bug("global-grid-stride", "oob-global", grid_stride_inclusive, 2, 32,
    lambda: (ramp(100), zeros(100)), OutOfBoundsError, where=((1, 0, 0), (4, 0, 0)),
    fixed=grid_stride_ok, note="grid-stride loop bounded by `<=`")


@cuda.jit
def block_partials(a, partial):
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x] = a[cuda.grid(1)]  # BUG: global-partials-too-short


bug("global-partials-too-short", "oob-global", block_partials, 4, 32,
    lambda: (ramp(128), zeros(3)), OutOfBoundsError, where=((3, 0, 0), B0),
    fixed=block_partials, fixed_args=lambda: (ramp(128), zeros(4)),
    note="one partial result per block, in an array sized one short (the twin sizes it right)")


@cuda.jit
def reverse(a, out):
    i = cuda.grid(1)
    n = a.size
    if i < n:
        out[i] = a[n - i]  # BUG: global-reverse


@cuda.jit
def reverse_ok(a, out):
    i = cuda.grid(1)
    n = a.size
    if i < n:
        out[i] = a[n - 1 - i]


bug("global-reverse", "oob-global", reverse, 2, 32, lambda: (ramp(64), zeros(64)),
    OutOfBoundsError, where=(B0, B0), fixed=reverse_ok, note="a[n - i] instead of a[n - 1 - i]")


@cuda.jit
def convolve(a, w, out):
    i = cuda.grid(1)
    if i < a.size:
        s = np.float32(0)
        for k in range(-2, 3):
            s += a[i + k] * w[k + 2]  # BUG: global-window
        out[i] = s


@cuda.jit
def convolve_ok(a, w, out):
    i = cuda.grid(1)
    if i < a.size:
        s = np.float32(0)
        for k in range(-2, 3):
            j = i + k
            if 0 <= j < a.size:
                s += a[j] * w[k + 2]
        out[i] = s


bug("global-window", "oob-global", convolve, 2, 32, lambda: (ramp(64), ramp(5), zeros(64)),
    OutOfBoundsError, where=(B0, B0), fixed=convolve_ok,
    note="a 5-point convolution window without clamping at the edges")


# ---- shared and local arrays -----------------------------------------------------------------

@cuda.jit
def halo_one_short(a, out):
    sh = cuda.shared.array(33, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    sh[t + 1] = a[i]
    if t == 0:
        sh[0] = a[i - 1] if i > 0 else np.float32(0)
    if t == 31:
        sh[33] = a[i + 1] if i + 1 < n else np.float32(0)  # BUG: shared-halo-one-short
    cuda.syncthreads()
    out[i] = sh[t] + sh[t + 1]


@cuda.jit
def halo_sized(a, out):
    sh = cuda.shared.array(34, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = a.size
    sh[t + 1] = a[i]
    if t == 0:
        sh[0] = a[i - 1] if i > 0 else np.float32(0)
    if t == 31:
        sh[33] = a[i + 1] if i + 1 < n else np.float32(0)
    cuda.syncthreads()
    out[i] = sh[t] + sh[t + 1] + sh[t + 2]


bug("shared-halo-one-short", "oob-shared-local", halo_one_short, 2, 32,
    lambda: (ramp(64), zeros(64)), OutOfBoundsError, where=(B0, (31, 0, 0)),
    fixed=halo_sized, note="a shared tile with halos declared one element short")


@cuda.jit
def shared_left_neighbour(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = sh[t] - sh[t - 1]  # BUG: shared-negative


@cuda.jit
def shared_left_neighbour_ok(a, out):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = sh[t] - sh[t - 1] if t > 0 else sh[t]


bug("shared-negative", "oob-shared-local", shared_left_neighbour, 2, 32,
    lambda: (ramp(64), zeros(64)), OutOfBoundsError, where=(B0, B0),
    fixed=shared_left_neighbour_ok, note="sh[t - 1] at thread 0")


@cuda.jit
def shared_tile_swapped(a, out):
    tile = cuda.shared.array((16, 8), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile[tx, ty] = a[ty, tx]  # BUG: shared-swapped-axes
    cuda.syncthreads()
    out[ty, tx] = tile[ty, tx]


@cuda.jit
def shared_tile_ok(a, out):
    tile = cuda.shared.array((16, 8), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    out[ty, tx] = tile[ty, tx]


bug("shared-swapped-axes", "oob-shared-local", shared_tile_swapped, 1, (8, 16),
    lambda: (ramp(16, 8), zeros(16, 8)), OutOfBoundsError, where=(B0, (0, 8, 0)),
    fixed=shared_tile_ok, note="a (16, 8) shared tile indexed [x, y] by a block of 8 x 16")


@cuda.jit
def local_rows(a, out):
    acc = cuda.local.array(4, np.float32)
    t = cuda.threadIdx.x
    for k in range(a.shape[1]):
        acc[k] = a[t, k] * 2.0  # BUG: local-overrun
    out[t] = acc[0] + acc[3]


@cuda.jit
def local_rows_ok(a, out):
    acc = cuda.local.array(4, np.float32)
    t = cuda.threadIdx.x
    for k in range(min(a.shape[1], 4)):
        acc[k] = a[t, k] * 2.0
    out[t] = acc[0] + acc[3]


bug("local-overrun", "oob-shared-local", local_rows, 1, 32,
    lambda: (ramp(32, 5), zeros(32)), OutOfBoundsError, where=(B0, B0), fixed=local_rows_ok,
    note="a local array of 4 filled from a row of 5")


@cuda.jit
def double_buffer(a, out):
    sh = cuda.shared.array(0, np.float32)
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    sh[t] = a[t]
    sh[t + n] = 2.0 * a[t]  # BUG: shared-dynamic-too-small
    cuda.syncthreads()
    out[t] = sh[n - 1 - t] + sh[2 * n - 1 - t]


bug("shared-dynamic-too-small", "oob-shared-local", double_buffer, 1, 32,
    lambda: (ramp(32), zeros(32)), OutOfBoundsError, where=(B0, B0), shared=32 * 4,
    fixed=double_buffer, fixed_shared=2 * 32 * 4,
    note="two buffers in dynamic shared memory, the launch sized for one")


@cuda.jit
def tree_from_block_dim(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    s = cuda.blockDim.x
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]  # BUG: shared-tree-start
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[0] = sh[0]


@cuda.jit
def tree_from_half(a, out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[0] = sh[0]


bug("shared-tree-start", "oob-shared-local", tree_from_block_dim, 1, 64,
    lambda: (ramp(64), zeros(1)), OutOfBoundsError, where=(B0, B0), fixed=tree_from_half,
    note="a tree reduction starting at blockDim instead of blockDim / 2")


@cuda.jit
def local_histogram(data, out):
    counts = cuda.local.array(4, np.int32)
    t = cuda.threadIdx.x
    for k in range(4):
        counts[k] = 0
    for k in range(8):
        v = data[t * 8 + k]
        counts[v - 1] += 1  # BUG: local-negative
    out[t] = counts[0] * 1000 + counts[3]


@cuda.jit
def local_histogram_ok(data, out):
    counts = cuda.local.array(4, np.int32)
    t = cuda.threadIdx.x
    for k in range(4):
        counts[k] = 0
    for k in range(8):
        v = data[t * 8 + k]
        counts[v] += 1
    out[t] = counts[0] * 1000 + counts[3]


bug("local-negative", "oob-shared-local", local_histogram, 1, 32,
    lambda: (ramp(256, dtype=np.int32) % 4, zeros(32, dtype=np.int32)), OutOfBoundsError,
    where=(B0, B0), fixed=local_histogram_ok,
    note="values 0..3 counted at v - 1 (as if they were 1..4)")
