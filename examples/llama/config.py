"""The decoder's shapes (``Config``) and the one rule that picks the kernels' tile sizes."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Config:
    """A Llama-style decoder's shapes. The defaults are Llama-3-8B's layer."""

    hidden: int = 4096
    heads: int = 32
    kv_heads: int = 8
    head_dim: int = 128
    mlp: int = 14336
    rope_theta: float = 500000.0
    eps: float = 1e-5
    vocab: int = 128256
    layers: int = 32
    # tile sizes of the attention kernels (one choice for every shape of the config; prefill
    # 64 x 128: 392 TFLOP/s against 377 at 64 x 64 at 4096 tokens, H200, cdd2ac1)
    attn_tm: int = 64
    attn_tn: int = 128
    decode_tn: int = 64
    decode_chunk: int = 512  # cache positions per block of flash decoding

    def __post_init__(self) -> None:
        if self.heads % self.kv_heads:
            raise ValueError(f"Config: {self.heads} query heads are not a multiple of "
                             f"{self.kv_heads} KV heads")
        if self.hidden != self.heads * self.head_dim:
            raise ValueError(f"Config: hidden {self.hidden} != heads {self.heads} x head_dim "
                             f"{self.head_dim}")
        for name in ("heads", "kv_heads", "head_dim"):
            v = getattr(self, name)
            if v & (v - 1):
                raise ValueError(f"Config: {name} must be a power of two, not {v}")
        if self.decode_chunk % self.decode_tn:
            raise ValueError("Config: decode_chunk must be a multiple of decode_tn")

    @property
    def group(self) -> int:
        """Query heads per KV head."""
        return self.heads // self.kv_heads

    @property
    def qkv_width(self) -> int:
        return (self.heads + 2 * self.kv_heads) * self.head_dim


LLAMA3_8B = Config()
# the tests' and ``--small``'s shapes: small enough for the simulator
SMALL = Config(hidden=64, heads=4, kv_heads=2, head_dim=16, mlp=128, vocab=256, layers=2,
               attn_tm=16, attn_tn=16, decode_tn=16, decode_chunk=32)
# a medium shape for the GPU test: every kernel at sizes where the large tiles apply
MEDIUM = Config(hidden=1024, heads=8, kv_heads=2, head_dim=128, mlp=2816, vocab=1024, layers=2)


def _pow2_at_most(n: int, cap: int) -> int:
    p = 16
    while p < n and p < cap:
        p *= 2
    return p


def tiles_for(m: int, k: int, n: int, swiglu: bool = False) -> tuple[int, int, int]:
    """(tm, tn, tk) for C (m, n) = A (m, k) @ B (k, n): 128 x 256 x 64 tiles (the shape the
    Hopper loop runs best, docs/tiles.md), smaller where the matrix is smaller (powers of two,
    at least 16). ``swiglu``: tn is half the accumulator's width (gate and up side by side).
    With few rows (decode's batch) the weight is all of the memory traffic, and 128 x 256
    tiles would stream it through a dozen blocks: tn halves (down to 32) until there are
    ``MIN_BLOCKS`` blocks, and tk doubles (to 128) while a step would copy less than
    ``MIN_STEP_BYTES`` of the weight."""
    tn = _pow2_at_most(n, 128 if swiglu else 256)
    tm = _pow2_at_most(m, 128)
    if swiglu:
        while n % tn:  # the packed weight's blocks must divide the MLP width
            tn //= 2
    while tn > 32 and -(-m // tm) * -(-n // tn) < MIN_BLOCKS:
        tn //= 2
    tk = _pow2_at_most(k, 64)
    width = 2 * tn if swiglu else tn  # of the accumulator, and of B's tile
    while tk < 128 and tk < k and tk * width * 2 < MIN_STEP_BYTES:
        tk *= 2
    return tm, tn, tk


MIN_BLOCKS = 128  # about one block a multiprocessor on an H100 or H200 (132)
MIN_STEP_BYTES = 8192  # of the weight (bfloat16) a k step copies, at the least


SPLIT_ROWS = 32  # products of so few rows (decode's batch) may split K (split_for)
SPLIT_TN = 128  # columns of a split's tile: rows of B read 256 bytes at a time
SPLIT_TK = 64
SPLIT_BLOCKS = 256  # the splits (powers of two, at most SPLIT_MAX) must make this many blocks
SPLIT_MAX = 16
SPLIT_MIN_STEPS = 16  # with this many k steps a split at the least


def split_for(m: int, k: int, n: int) -> tuple[int, int, int, int] | None:
    """(tm, tn, tk, splits) for C (m, n) = A (m, k) @ B (k, n) split along K (``matmul_part``
    then ``combine``), or None where the product keeps ``tiles_for``'s plain tiles. With few
    rows the weight is all of the traffic and C has few tiles: one block a tile (tiles_for
    halves tn to 32 for blocks) streams the weight in 64-byte pieces of its rows, one block a
    multiprocessor. Split, tiles are SPLIT_TN wide, and K is cut into the fewest powers of two
    that make SPLIT_BLOCKS blocks. That pays only where each split is long: the sum is a
    second kernel of a few microseconds (H200, 32 rows: 32 x 14336 @ 14336 x 4096 in 8 splits
    59.8 -> 51.7 us; 32 x 4096 @ 4096 x 4096 in 8 splits of 8 steps 20.0 -> 25.2 us, so K that
    short is not split: splits of SPLIT_MIN_STEPS steps or more)."""
    if m > SPLIT_ROWS:
        return None
    tm = _pow2_at_most(m, SPLIT_ROWS)
    cols, steps = -(-n // SPLIT_TN), -(-k // SPLIT_TK)
    splits = 1
    while splits < SPLIT_MAX and cols * splits < SPLIT_BLOCKS:
        splits *= 2
    if splits == 1 or cols * splits < SPLIT_BLOCKS or steps // splits < SPLIT_MIN_STEPS:
        return None
    return tm, SPLIT_TN, SPLIT_TK, splits
