"""The facts of tile code that every layer reads, written once: the vector width of the tile
layout, the tensor cores' instruction shape and operand types, and the shared memory of the
matrix multiply and of its k loops.

The IR passes decide from these which accumulators live in tensor-core fragments and which k
loops become one ``mma_loop`` operation; the CUDA backend sizes the shared-memory scratch from
them; tile.h reads the same numbers from ``include/tile/config.h``, which
``tools/gen_tile_config.py`` writes from :func:`config_header` (a unit test fails when the two
differ). tile.h does not decide which operands run on tensor cores or which k loops take the
staged loop: the generated code says so (``tt::tile::mma<TC>``, ``mma_loop<A, B, Staged>``),
and tile.h only asserts the instructions' own requirements.
"""

from __future__ import annotations

import math

from ..lang.types import (
    Scalar,
    TileType,
    bfloat16,
    float8_e4m3fn,
    float8_e5m2,
    float16,
    float32,
    tfloat32,
)

# -- the tile layout ---------------------------------------------------------------------------

VEC = 4  # the longest run of consecutive elements a thread holds: 16 bytes of float32


def vec_width(shape: tuple, threads: int) -> int:
    """How many consecutive elements of a tile of ``shape`` each of ``threads`` holds in a run:
    the largest power of two up to VEC for which the last axis is a multiple of V * threads,
    else 1. It depends on the shape and the block only, never on the dtype, so tiles of one
    shape share a layout whatever their types."""
    d = shape[-1] if shape else 1
    v = VEC
    while v > 1 and d % (v * threads):
        v //= 2
    return v


def in_thread_columns(shape: tuple, axes: tuple, threads: int) -> bool:
    """Whether a sum over ``axes`` of a blocked tile of ``shape`` needs no exchange between
    threads: the leading axes, the kept ones a multiple of V * threads elements (V the tile's
    vector width), so each result's inputs are in the thread that holds it (tile.h's
    ``reduce_cols``)."""
    axes = tuple(axes)
    if not axes or axes != tuple(range(len(axes))) or len(axes) >= len(shape):
        return False
    return math.prod(shape[len(axes):]) % (vec_width(shape, threads) * threads) == 0


# -- tensor cores (mma.sync.m16n8k*) -----------------------------------------------------------

MMA_M, MMA_N = 16, 8  # the block of the result one warp's instruction computes
MMA_K = {float16: 16, bfloat16: 16, tfloat32: 8}  # k per instruction, by operand dtype
A_PAD_BYTES = 16  # A is staged row-major with its rows this many bytes longer than K
B_PAD = 8  # B is staged as it is, its rows this many elements longer than N


def tensor_core(a: TileType, b: TileType) -> bool:
    """Whether ``a @ b`` runs on tensor cores: operands of a dtype the instruction takes, N and
    K multiples of its shape; M of any size (A's rows are padded with zeros to a multiple of
    16 in the scratch: flash decoding's 4 query heads of a KV head)."""
    (_, k), (_, n) = a.shape, b.shape
    ks = MMA_K.get(a.dtype)
    return ks is not None and b.dtype == a.dtype and n % MMA_N == 0 and k % ks == 0


def matrix_axes(shape: tuple) -> tuple[int, int] | None:
    """The two axes of a tile the tensor cores' fragments hold (``mma`` layout), or None: the
    last two where the others are ones (a 3-d load of one batch), or the only two that are not
    one, the second of them the last (attention's (1, TM, 1, D) tile of a (batch, seq, heads,
    dim) array). Either way the row-major order is the matrix's, so the fragments are the
    same as the 2-d tile's."""
    r = len(shape)
    if r < 2:
        return None
    if all(d == 1 for d in shape[:-2]):
        return r - 2, r - 1
    big = [k for k, d in enumerate(shape) if d != 1]
    if len(big) == 2 and big[1] == r - 1:
        return big[0], big[1]
    return None


def matrix(shape: tuple) -> tuple | None:
    """(rows, columns) of ``matrix_axes``, or None."""
    ax = matrix_axes(shape)
    return None if ax is None else (shape[ax[0]], shape[ax[1]])


def padded_m(m: int) -> int:
    """A's rows as tensor cores take them: a multiple of 16 (tile/mma.h ``mma_plan::MP``)."""
    return -(-m // MMA_M) * MMA_M


def fragments_ok(a: TileType, b: TileType, acc: TileType, threads: int) -> bool:
    """Whether an ``mma``'s float32 accumulator can stay in tensor-core fragments (the "mma"
    layout): the multiply runs on tensor cores and the result's MMA_M x MMA_N blocks are shared
    evenly by the block's warps."""
    (m, _), (_, n) = a.shape, b.shape
    return tensor_core(a, b) and acc.dtype == float32 and few_rows_ok(m, threads) and \
        (frag_rows(m) // MMA_M) * (n // MMA_N) % (threads // 32) == 0


def few_rows_ok(m: int, threads: int) -> bool:
    """Whether fragment tiles may have ``m`` rows: whole 16-row strips, or fewer rows (1, 2,
    4, 8) held as one padded strip by a block of one warp (tile/mma.h ``frag_rows``)."""
    return m % MMA_M == 0 or (threads == 32 and MMA_M % m == 0)


def whole_strips(m: int, nw: int) -> bool:
    """Whether each of ``nw`` warps holds whole rows of an (m, n) fragment tile: whole 16-row
    strips a warp, or fewer than 16 rows in a block of one warp (one padded strip)."""
    return m % (MMA_M * nw) == 0 or (nw == 1 and MMA_M % m == 0)


def frag_rows(m: int) -> int:
    """The rows a fragment tile of ``m`` rows holds: at least one 16-row strip."""
    return max(m, MMA_M)


def _isz(t: Scalar) -> int:
    return 1 if t.kind == "b" else t.itemsize


def c_pitch(n: int) -> int:
    """Float32 elements per row of a blocked accumulator staged in the scratch (tile/mma.h
    ``mma_plan::LDC``): 8 past a multiple of 32, so fragments' accesses miss bank conflicts."""
    return -(-n // 32) * 32 + 8


def mma_bytes(a: TileType, b: TileType, fragments: bool = False) -> int:
    """Scratch of one ``mma``: A and B staged (padded rows where tensor cores read them), and
    the float32 accumulator unless it stays in fragments."""
    (m, k), (_, n) = a.shape, b.shape
    isz = _isz(a.dtype)
    if tensor_core(a, b):
        mp = padded_m(m)
        staged = (mp * (k + A_PAD_BYTES // isz) + k * (n + B_PAD)) * isz
        return staged + (0 if fragments else mp * c_pitch(n) * 4)
    return (m * k + k * n) * isz


# -- the k loop of a matrix multiply -----------------------------------------------------------

STAGES = 3  # buffers of the staged loop's asynchronous copies
STAGED_MAX_BYTES = 163 * 1024  # the most scratch it may take: an sm_80 block's shared memory


def staged_bytes(a: TileType, b: TileType, stages: int = STAGES) -> int:
    """Scratch of tile.h's staged k loop (mma_loop_staged): ``stages`` buffers of A and B."""
    return stages * mma_bytes(a, b, fragments=True)


STAGES_FEW_ROWS = (4, 8)  # the least and most buffers for tiles of FEW_ROWS rows or fewer
FEW_ROWS = 32  # a tile of so few rows reuses each of B's elements little: its loop is bound by
# the copies in flight, and more buffers keep more of them in flight, as many as fit in
FEW_ROWS_BYTES = 112 * 1024  # (two blocks a multiprocessor of 228 KiB still). H200, decode's
# 32-row products on 32x32x128 tiles (18.5 KiB a buffer): 32 x 14336 @ 14336 x 4096 on 3, 4, 6,
# 8 buffers 71.8, 64.2, 60.0, 56.8 us; 32 x 4096 @ 4096 x 6144 (192 blocks) 34.5, 33.2, 31.7,
# 36.7 us (at 8, 151 KiB: one block a multiprocessor). Six it is. (An A100's 164 KiB hold one
# block of six buffers where four let two share it: not measured, no A100 lent.)


def staged_stages(a: TileType, b: TileType, threads: int) -> int:
    """The buffers the staged k loop's asynchronous copies take for these operands: STAGES
    (for tiles of FEW_ROWS rows or fewer, the most of STAGES_FEW_ROWS that fit in
    FEW_ROWS_BYTES, four at least), or 2 where those do not fit an
    sm_80 block; 0 (one buffer, filled element by element) where two do not fit either or a
    warp's blocks lie in strips shared with other warps (the warps neither a multiple nor a
    divisor of M / MMA_M)."""
    nw, mb = threads // 32, a.shape[0] // MMA_M
    if not (nw % mb == 0 or mb % nw == 0):
        return 0
    deep = STAGES
    if a.shape[0] <= FEW_ROWS:
        least, most = STAGES_FEW_ROWS
        deep = max([least] + [s for s in range(least, most + 1)
                              if staged_bytes(a, b, s) <= FEW_ROWS_BYTES])
    for s in (deep, STAGES, 2):
        if staged_bytes(a, b, s) <= STAGED_MAX_BYTES:
            return s
    return 0


def staged_ok(a: TileType, b: TileType, threads: int) -> bool:
    """Whether the staged k loop may copy these operands asynchronously (staged_stages)."""
    return staged_stages(a, b, threads) > 0


# Hopper's main loop (sm_90a, include/tile/kloop_sm90.h): TMA copies of A and B into swizzled
# stages, wgmma per warpgroup of 4 warps; warpgroup g multiplies the 64-row slices g, g + WG, ...
# of the block's M (R of them), which is where the accumulator's layout puts them (tile/mma.h)
SM90_ROW_BYTES = 128  # A is copied in chunks of K whose rows are 128 bytes (128-byte swizzle),
SM90_ROW_BYTES_MIN = 64  # or one chunk of 64-byte rows (64-byte swizzle)
SM90_N_STEP = 64  # N in steps of the 128-byte swizzle atom of 16-bit B (one TMA box)
SM90_MAX_N = 256  # wgmma's widest N
SM90_MAX_BOX = 256  # TMA's longest box side (M of A's boxes, K of B's)
SM90_MAX_ACC = 128  # the most accumulator registers per thread it takes (R N / 2); half
# that for blocks over 256 threads, whose threads have 128 registers in all
SM90_MAX_STAGES = 4
# stages where the block has its multiprocessor to itself anyway (8 warps or more, or 4 stages
# over half its shared memory): 5 (plain 128x128x64 fp16 579 -> 601 TFLOP/s with a producer
# warpgroup; where 4 stages let two blocks share a multiprocessor, 5 lose a third: H200)
SM90_MAX_STAGES_WHOLE = 5
SM90_SHARED_PER_SM = 228 * 1024  # sm_90's shared memory a multiprocessor
SM90_INFLIGHT = 1  # groups of wgmma left running when a step ends (its stages stay busy)
SM90_STAGE_BUDGET = 200 * 1024  # the shared memory its stages may take
SM90_ALIGN = 1024  # swizzle atoms start at 1024-byte boundaries (slack for the alignment)


def sm90_alone(stage: int, threads: int) -> bool:
    """Whether a block of ``threads`` whose Hopper main loop has stages of ``stage`` bytes
    holds its multiprocessor alone: 8 warps or more, or 4 stages over half its shared memory
    (tile/kloop_sm90.h, alone)."""
    stages = min(SM90_MAX_STAGES, SM90_STAGE_BUDGET // stage)
    return threads >= 256 or 2 * stages * stage > SM90_SHARED_PER_SM


def sm90_stages(stage: int, threads: int) -> int:
    """The Hopper main loop's stages of ``stage`` bytes each for a block of ``threads``
    (tile/kloop_sm90.h, Plan::S)."""
    stages = min(SM90_MAX_STAGES, SM90_STAGE_BUDGET // stage)
    if sm90_alone(stage, threads):
        stages = min(SM90_MAX_STAGES_WHOLE, SM90_STAGE_BUDGET // stage)
    return stages


def sm90_step(a: TileType, b: TileType, threads: int) -> int:
    """The depth of the Hopper main loop's steps for a k loop of ``a`` and ``b`` tiles: their
    K, halved while its stages would be fewer than 4 and halves keep whole 128-byte rows (a
    128x256x128 loop then runs 64-deep steps in 4 stages, not 2 of 128; the sum over k is the
    same), and for 16-bit operands on 4 warps also while its stages would hold the
    multiprocessor alone (64x128x128: 4 stages of 48 KiB, one block; in 64-deep steps two
    blocks share it, as the same tiles with K=64 do). A 16-bit K of 32 (64-byte rows) is
    doubled where the doubled stages still number SM90_MAX_STAGES: two of the loop's k a step
    (128-byte rows, half the steps and their waits), the last step half of one where their
    count is odd. tile/kloop_sm90.h's Plan::K."""
    (m, k), (_, n) = a.shape, b.shape
    isz = a.dtype.itemsize
    if isz == 2 and k * isz == SM90_ROW_BYTES_MIN and \
            sm90_stages((m * 2 * k + 2 * k * n) * isz, threads) >= SM90_MAX_STAGES:
        return 2 * k
    step = k
    while step * isz > SM90_ROW_BYTES and (step // 2 * isz) % SM90_ROW_BYTES == 0 and \
            (sm90_stages((m * step + step * n) * isz, threads) < 4 or
             (isz == 2 and threads < 256 and sm90_alone((m * step + step * n) * isz, threads))):
        step //= 2
    return step


def sm90_bytes(a: TileType, b: TileType, threads: int) -> int:
    """Shared memory of the Hopper main loop for these operands, 0 where it does not apply."""
    if a.dtype == float32:
        return sm90_tf32_bytes(a, b, threads)
    if a.dtype in FLOAT8_TYPES:
        return sm90_f8_bytes(a, b, threads)
    (m, _), (_, n) = a.shape, b.shape
    k = sm90_step(a, b, threads)
    isz = a.dtype.itemsize
    stage = (m * k + k * n) * isz
    stages = sm90_stages(stage, threads)
    wg = threads // 128
    row = min(k * isz, SM90_ROW_BYTES)
    ok = (a.dtype in (float16, bfloat16) and b.dtype == a.dtype and threads % 128 == 0 and
          row in (SM90_ROW_BYTES_MIN, SM90_ROW_BYTES) and (k * isz) % row == 0 and
          wg > 0 and m % (64 * wg) == 0 and m <= SM90_MAX_BOX and k <= SM90_MAX_BOX and
          (m // (64 * wg)) * n // 2 <= (SM90_MAX_ACC if threads <= 256 else SM90_MAX_ACC // 2)
          and
          n % SM90_N_STEP == 0 and n <= SM90_MAX_N and stages > SM90_INFLIGHT)
    return SM90_ALIGN + stages * stage + 2 * 8 * stages if ok else 0


# float32 operands cast to tfloat32 (include/tile/kloop_sm90_tf32.h): wgmma takes 32-bit
# operands K-major only, and B comes N-major, so the loop computes C^T = B^T A^T: B^T's
# fragments from registers (loaded from B's stage, rounded there), A's stage read by wgmma as
# the K-major second operand (rounded in place first). Warpgroup g holds the 64 columns of C
# of its slices g, g + WG, ... as rows, and the result goes through the stages' memory into
# the accumulator's own layout (padded rows of N + SM90_TF32_PAD floats).
SM90_TF32_M = (64, 128, 192, 256)  # C's rows: wgmma's N (tools/gen_wgmma.py, TF32_SHAPES)
SM90_TF32_B_BOX = 32  # B is copied in boxes of 32 columns (128-byte rows)
SM90_TF32_PAD = 8  # the transposing buffer's rows are N + 8 floats (its pair reads conflict-free)


def sm90_tf32_bytes(a: TileType, b: TileType, threads: int) -> int:
    """Shared memory of the Hopper main loop for float32 operands (tfloat32 wgmma), 0 where
    it does not apply."""
    (m, _), (_, n) = a.shape, b.shape
    if a.dtype != float32 or b.dtype != float32 or threads % 128 or not threads:
        return 0
    k = sm90_step(a, b, threads)
    stage = (m * k + k * n) * 4
    stages = sm90_stages(stage, threads)
    wg = threads // 128
    r = n // (64 * wg) if n % (64 * wg) == 0 else 0
    row = min(k * 4, SM90_ROW_BYTES)
    ok = (m in SM90_TF32_M and r > 0 and row in (SM90_ROW_BYTES_MIN, SM90_ROW_BYTES) and
          (k * 4) % row == 0 and k <= SM90_MAX_BOX and
          r * m // 2 <= (SM90_MAX_ACC if threads <= 256 else SM90_MAX_ACC // 2) and
          n % SM90_TF32_B_BOX == 0 and
          stages > SM90_INFLIGHT and stages * stage >= m * (n + SM90_TF32_PAD) * 4)
    # three barriers a stage: full, empty and ready (A rounded by the producer's warps)
    return SM90_ALIGN + stages * stage + 3 * 8 * stages if ok else 0


# 8-bit floats (include/tile/kloop_sm90_f8.h): wgmma takes 8-bit operands K-major only, so
# each stage's B (N-major, as TMA copies it) is transposed in place by the block, then both
# operands are descriptors. Each step is the loop's own K (never split: its sum, in the
# tensor cores' rounding, is one mma's), summed from zero and added to the float32
# accumulator, in parts of SM90_F8_PARTS columns, two in flight.
FLOAT8_TYPES = (float8_e4m3fn, float8_e5m2)
SM90_F8_PARTS = (256, 128, 64, 32)  # wgmma's N for a part of C's columns (tools/gen_wgmma.py)
SM90_F8_B_BOX = 128  # B is copied in boxes of 128 columns (128-byte rows)
SM90_F8_SPARE = 24  # registers a thread keeps beside the loop's data (addresses, counters)


def sm90_f8_tasks(n: int, k: int, threads: int) -> int:
    """The 4x4-byte blocks of a stage's B a warp transposes (tile/kloop_sm90_f8.h f8_tasks)."""
    return (k // 4) * (n // 4) // 32 // (threads // 32) if threads >= 32 else 0


def sm90_f8_part(r: int, n: int, k: int, threads: int) -> int:
    """The columns of C a part of the float8 loop multiplies (wgmma's N), 0 for none: the
    widest of SM90_F8_PARTS dividing ``n`` whose registers fit a thread of ``threads`` with
    the accumulator's ``r n / 2``, the larger of two parts in flight (``pn``) and the
    transposition's words (4 a block), and SM90_F8_SPARE (f8_part)."""
    regs = min(65536 // threads, 255) if threads > 0 else 0
    fixed, words = r * n // 2 + SM90_F8_SPARE, 4 * sm90_f8_tasks(n, k, threads)
    return next((pn for pn in SM90_F8_PARTS if pn <= n and n % pn == 0 and
                 fixed + max(pn, words) <= regs), 0)


def sm90_f8_bytes(a: TileType, b: TileType, threads: int) -> int:
    """Shared memory of the Hopper main loop for 8-bit float operands, 0 where it does not
    apply (tile/kloop_sm90_f8.h, PlanF8)."""
    (m, k), (_, n) = a.shape, b.shape
    if a.dtype not in FLOAT8_TYPES or b.dtype != a.dtype or threads % 128 or not threads:
        return 0
    stage = m * k + k * n
    stages = sm90_stages(stage, threads)
    wg = threads // 128
    r = m // (64 * wg) if m % (64 * wg) == 0 else 0
    row = min(k, SM90_ROW_BYTES)
    tasks = sm90_f8_tasks(n, k, threads)
    ok = (r > 0 and sm90_f8_part(r, n, k, threads) > 0 and m <= SM90_MAX_BOX and
          row in (SM90_ROW_BYTES_MIN, SM90_ROW_BYTES) and k % row == 0 and k <= SM90_MAX_BOX
          and n % SM90_F8_B_BOX == 0 and n <= SM90_MAX_N and tasks > 0 and
          tasks * 32 * (threads // 32) == (k // 4) * (n // 4) and stages > SM90_INFLIGHT)
    return SM90_ALIGN + stages * stage + 2 * 8 * stages if ok else 0


SM90_TF32_REGS = 200  # sm90_tf32_regs past which ptxas serializes or spills (4 warps)


def sm90_tf32_regs(a: TileType, b: TileType, threads: int) -> int:
    """The registers a thread of the tfloat32 main loop holds for its data: the accumulator's
    R M / 2, two steps of B^T's fragments (R K) and their offsets (4 R). Past SM90_TF32_REGS
    ptxas serializes the wgmmas (C7511: 64x256x32 on 4 warps, 272) or spills (64x256x16, 208);
    128x128x32 on 4 warps (200) keeps its pipeline."""
    (m, _), (_, n) = a.shape, b.shape
    r = n // (64 * (threads // 128))
    return r * m // 2 + r * sm90_step(a, b, threads) + 4 * r


def sm90_boxes(a: TileType, b: TileType,
               threads: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The TMA boxes (innermost extent first, in elements) of A's and B's tensor maps (for
    steps of sm90_step; the float8 loop's steps are its K); a box whose rows are 64 bytes is
    copied with the 64-byte swizzle, else the 128-byte one. B's boxes are 64 columns of
    16-bit values, 32 of float32, 128 of 8-bit floats."""
    (m, _), (_, n) = a.shape, b.shape
    f8 = a.dtype in FLOAT8_TYPES
    k = a.shape[1] if f8 else sm90_step(a, b, threads)
    bw = SM90_TF32_B_BOX if a.dtype == float32 else SM90_F8_B_BOX if f8 else SM90_N_STEP
    return (min(k * a.dtype.itemsize, SM90_ROW_BYTES) // a.dtype.itemsize, m), \
        (min(n, bw), k)


def config_header() -> str:
    """include/tile/config.h: the numbers above for tile.h (tools/gen_tile_config.py)."""
    defs = [("TT_VEC", VEC), ("TT_MMA_M", MMA_M), ("TT_MMA_N", MMA_N),
            ("TT_MMA_K16", MMA_K[float16]), ("TT_MMA_KTF32", MMA_K[tfloat32]),
            ("TT_A_PAD_BYTES", A_PAD_BYTES), ("TT_B_PAD", B_PAD), ("TT_STAGES", STAGES),
            ("TT_SM90_ROW_BYTES", SM90_ROW_BYTES), ("TT_SM90_ROW_BYTES_MIN", SM90_ROW_BYTES_MIN),
            ("TT_SM90_MAX_BOX", SM90_MAX_BOX), ("TT_SM90_MAX_ACC", SM90_MAX_ACC),
            ("TT_SM90_N_STEP", SM90_N_STEP), ("TT_SM90_MAX_N", SM90_MAX_N),
            ("TT_SM90_MAX_STAGES", SM90_MAX_STAGES),
            ("TT_SM90_MAX_STAGES_WHOLE", SM90_MAX_STAGES_WHOLE),
            ("TT_SM90_SHARED_PER_SM", SM90_SHARED_PER_SM), ("TT_SM90_INFLIGHT", SM90_INFLIGHT),
            ("TT_SM90_STAGE_BUDGET", SM90_STAGE_BUDGET), ("TT_SM90_ALIGN", SM90_ALIGN),
            ("TT_SM90_TF32_B_BOX", SM90_TF32_B_BOX), ("TT_SM90_TF32_PAD", SM90_TF32_PAD),
            ("TT_SM90_F8_B_BOX", SM90_F8_B_BOX), ("TT_SM90_F8_SPARE", SM90_F8_SPARE)]
    lines = ["// Generated by tools/gen_tile_config.py from src/threadtile/ir/tiling.py: edit",
             "// that file, not this one. The sizes of tile code that tile.h and the compiler",
             "// share (the tile layout's vector width, the tensor cores' shape, the scratch of",
             "// the matmul and its k loops).",
             "#pragma once", ""]
    lines += [f"#define {name} {value}" for name, value in defs]
    return "\n".join(lines) + "\n"

