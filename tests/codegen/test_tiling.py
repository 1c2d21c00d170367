"""ir/tiling.py is the one source of the tile facts: tile/config.h is what it generates, and the
formulas tile.h still computes on those numbers (the layout's vector width, the scratch of an
mma, of the staged k loop and of the Hopper main loops, 16-bit, tfloat32 and 8-bit) agree with
Python's over a sweep of shapes, checked by static_asserts compiled with NVRTC. No GPU
needed."""

from pathlib import Path

import threadtile
from threadtile.ir import tiling
from threadtile.lang.types import (
    TileType,
    bfloat16,
    float8_e4m3fn,
    float8_e5m2,
    float16,
    float32,
    tfloat32,
)
from threadtile.runtime import nvrtc

CONFIG = Path(threadtile.__file__).parent / "backends/cuda/include/tile/config.h"
CTYPE = {float16: "__half", bfloat16: "__nv_bfloat16", tfloat32: "tt::tile::tf32",
         float32: "float"}
PRELUDE = ("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#define TT_HALF 1\n"
           "#include <cuda_fp8.h>\n#include <cuda_fp4.h>\n#define TT_FP8 1\n"
           '#include "threadtile.h"\n#define TT_SCRATCH_BYTES 262144\n#include "tile.h"\n'
           "namespace tt { namespace tile {\n")


def test_config_h_is_what_tiling_py_generates():
    assert CONFIG.read_text() == tiling.config_header(), \
        "run `python tools/gen_tile_config.py` after editing src/threadtile/ir/tiling.py"


def _shapes():
    for dt in (float16, bfloat16, tfloat32, float32):
        for m in (16, 32, 64, 128):
            for n in (8, 16, 64, 256):
                for k in (8, 16, 32, 64):
                    yield dt, m, n, k


def test_tile_h_agrees_with_tiling_py():
    checks = []
    for nt in (32, 64, 128, 256, 512, 1024):
        for d in (1, 2, 4, 16, 64, 96, 128, 256, 512, 1000, 1024, 4096, 8192):
            v = tiling.vec_width((d,), nt)
            checks.append(f"static_assert(vec_width({nt}, {d}) == {v}, \"vec_width\");")
    for dt, m, n, k in _shapes():
        a, b = TileType(dt, (m, k)), TileType(dt, (k, n))
        tc = tiling.tensor_core(a, b)
        plan = f"mma_plan<{CTYPE[dt]}, {m}, {n}, {k}, {'true' if tc else 'false'}>"
        checks.append(f"static_assert({plan}::bytes == {tiling.mma_bytes(a, b)}, \"mma\");")
        if tc:
            staged = f"STAGES * ({m} * {plan}::LD + {plan}::B_ELEMS) * sizeof({CTYPE[dt]})"
            checks.append(f"static_assert({staged} == {tiling.staged_bytes(a, b)}, "
                          "\"staged\");")
        if dt in (float16, bfloat16):
            for nt in (128, 256, 512):
                plan90 = f"sm90::Plan<{CTYPE[dt]}, {nt}, {m}, {n}, {k}>"
                checks.append(f"static_assert({plan90}::bytes == "
                              f"{tiling.sm90_bytes(a, b, nt)}, \"sm90\");")
    # float32 operands (cast to tfloat32): kloop_sm90_tf32.h's Plan against sm90_tf32_bytes
    for m in (32, 64, 128, 192, 256):
        for n in (32, 64, 128, 192, 256):
            for k in (8, 16, 32, 64, 128):
                a, b = TileType(float32, (m, k)), TileType(float32, (k, n))
                for nt in (128, 256, 384, 512):
                    plan90 = f"sm90::Plan<float, {nt}, {m}, {n}, {k}>"
                    checks.append(f"static_assert({plan90}::bytes == "
                                  f"{tiling.sm90_bytes(a, b, nt)}, \"sm90 tf32\");")
    # 8-bit floats: kloop_sm90_f8.h's Plan (its part of C's columns included) against
    # sm90_f8_bytes and sm90_f8_part
    for dt, name in ((float8_e4m3fn, "__nv_fp8_e4m3"), (float8_e5m2, "__nv_fp8_e5m2")):
        for m in (16, 32, 64, 96, 128, 256):
            for n in (64, 128, 256):
                for k in (32, 64, 128, 256):
                    a, b = TileType(dt, (m, k)), TileType(dt, (k, n))
                    for nt in (128, 256, 512):
                        plan90 = f"sm90::Plan<{name}, {nt}, {m}, {n}, {k}>"
                        checks.append(f"static_assert({plan90}::bytes == "
                                      f"{tiling.sm90_bytes(a, b, nt)}, \"sm90 f8\");")
                        wg = nt // 128
                        r = m // (64 * wg) if m % (64 * wg) == 0 else 0
                        checks.append(f"static_assert({plan90}::PN == "
                                      f"{tiling.sm90_f8_part(r, n, k, nt) if r else 0}, "
                                      "\"sm90 f8 part\");")
    src = PRELUDE + "\n".join(checks) + "\n} }\n"
    assert len(checks) > 300
    assert nvrtc.compile_ptx(src, "sm_90a") is not None


def test_the_sweep_can_fail():
    """A wrong expectation is a compile error, so the sweep above checks something."""
    src = PRELUDE + "static_assert(vec_width(128, 512) == 2, \"vec_width\");\n} }\n"
    try:
        nvrtc.compile_ptx(src, "sm_90a")
    except threadtile.NvrtcError as e:
        assert "vec_width" in str(e.log)
    else:
        raise AssertionError("a false static_assert compiled")
