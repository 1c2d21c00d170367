"""Correct kernels that are not twins of a bug, for the false-alarm pass: the examples
(examples/), the benchmarks' thread kernels (bench/kernels.py) and the tests' cuTile-style tile
kernels (tests/kernels/tiles.py), on small inputs. None may raise, nor warn of a race."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

from . import clean, ramp, zeros

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "examples") not in sys.path:
    sys.path.append(str(ROOT / "examples"))

import tile_kernels  # noqa: E402  (examples/tile_kernels.py)
import tiled_matmul  # noqa: E402  (examples/tiled_matmul.py)
from kernels import tiles as test_tiles  # noqa: E402  (tests/kernels/tiles.py)


def _bench_kernels():
    """bench/kernels.py, for threadtile (its TARGET's default)."""
    name = "corpus_bench_kernels"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "kernels.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


bench = _bench_kernels()
rng = np.random.default_rng(17)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---- thread kernels --------------------------------------------------------------------------

clean("example-tiled-matmul", tiled_matmul.matmul_tiled, (3, 2), (16, 16),
      lambda: (normal(20, 40), normal(40, 36), zeros(20, 36), 16), shared=2 * 16 * 16 * 4)
clean("bench-matmul-naive", bench.matmul_naive, (2, 2), (16, 16),
      lambda: (normal(32, 32), normal(32, 32), zeros(32, 32)))
clean("bench-matmul-static", bench.matmul_static, (2, 2), (16, 16),
      lambda: (normal(32, 32), normal(32, 32), zeros(32, 32)))
clean("bench-matmul-dynamic", bench.matmul_dynamic, (2, 2), (16, 16),
      lambda: (normal(32, 32), normal(32, 32), zeros(32, 32), 16), shared=2 * 16 * 16 * 4)
clean("bench-vector-add", bench.vector_add, 4, 256,
      lambda: (ramp(1000), ramp(1000), zeros(1000)))
clean("bench-block-reduce", bench.block_reduce, 4, bench.RED_THREADS,
      lambda: (ramp(1000), zeros(4)))

# ---- tile kernels (cuTile's names) -----------------------------------------------------------

clean("example-tile-matmul", tile_kernels.matmul, (2, 2), None,
      lambda: (normal(64, 96), normal(96, 64), zeros(64, 64), 32, 32, 32))
clean("example-tile-matmul-fp32", tile_kernels.matmul_fp32, (2, 2), None,
      lambda: (normal(64, 96), normal(96, 64), zeros(64, 64), 32, 32, 32))
clean("example-softmax-rows", tile_kernels.softmax_rows, 8, None,
      lambda: (normal(8, 100), zeros(8, 100), 128))
clean("example-layer-norm-fwd", tile_kernels.layer_norm_fwd, 4, None,
      lambda: (normal(4, 300), normal(300), normal(300), zeros(4, 300), zeros(4), zeros(4),
               1e-5, 128))
clean("example-layer-norm-rows", tile_kernels.layer_norm_rows, 4, None,
      lambda: (normal(4, 300), normal(300), normal(300), zeros(4, 300), zeros(4), zeros(4),
               1e-5, 512))
clean("tests-vector-add", test_tiles.vector_add, 4, None,
      lambda: (ramp(200), ramp(200), zeros(200), 64))
clean("tests-softmax", test_tiles.softmax, 4, None, lambda: (normal(8, 64), zeros(8, 64), 2, 64))
clean("tests-transpose", test_tiles.transpose, (2, 1), None,
      lambda: (normal(64, 64), zeros(64, 64), 32, 64))
clean("tests-matmul-rowsum", test_tiles.matmul_rowsum, (2, 2), 128,
      lambda: (normal(64, 64, dtype=np.float16), normal(64, 128, dtype=np.float16),
               zeros(64, 128), zeros(64), 32, 64, 32))
