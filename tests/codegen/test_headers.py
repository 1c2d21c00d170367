"""tile.h and its sections (include/tile/): tile.h reaches every section, each section compiles
on its own after threadtile.h, tile.h compiles as generated code includes it (sm_80 and sm_90a,
with and without the 16-bit float types), and an exported tile kernel compiles from the
exported headers alone. No GPU needed."""

import re
from pathlib import Path

import pytest

import threadtile
from threadtile.cli import main
from threadtile.runtime import nvrtc

INCLUDE = Path(threadtile.__file__).parent / "backends" / "cuda" / "include"
SECTIONS = sorted(p.name for p in (INCLUDE / "tile").glob("*.h"))
_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
# as backends/cuda/emit.py and tiles.py (prelude) write them
HALF = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#define TT_HALF 1\n"


def _reached(header: Path, seen: set[Path]) -> set[Path]:
    """The headers that `header` includes, transitively: a quoted include is looked up beside
    the file that names it first (as NVRTC and nvcc do), then in include/."""
    for name in _INCLUDE_RE.findall(header.read_text()):
        path = next((d / name for d in (header.parent, INCLUDE) if (d / name).is_file()), None)
        assert path is not None, f"{header.name} includes {name!r}, which is not there"
        if path.resolve() not in seen:
            seen.add(path.resolve())
            _reached(path, seen)
    return seen


def test_tile_h_reaches_every_section():
    assert "layout.h" in SECTIONS and "kloop.h" in SECTIONS
    reached = _reached(INCLUDE / "tile.h", set())
    assert {p.name for p in reached if p.parent.name == "tile"} == set(SECTIONS)


@pytest.mark.parametrize("name", SECTIONS)
def test_each_section_stands_on_its_own_after_threadtile_h(name):
    src = f'{HALF}#include "threadtile.h"\n#define TT_SCRATCH_BYTES 4096\n#include "tile/{name}"\n'
    assert nvrtc.compile_ptx(src, "sm_90a")


KERNEL = """
using tile_f32_4x256 = tt::tile::Tile<float, 128, 4, 256>;
extern "C" __global__ void k(tt::CArray<float, 2> x, tt::CArray<float, 1> y) {
  tile_f32_4x256 t = tt::tile::load<tile_f32_4x256>(x, 0.0f, (int64_t)blockIdx.x, 0LL);
  tt::tile::store(y, tt::tile::reduce_rows<tt::tile::SUM, 4>(tt::tile::exp(t)), 0LL);
}
"""


@pytest.mark.parametrize("half", [False, True], ids=["plain", "half"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_tile_h_compiles_as_generated_code_includes_it(arch, half):
    src = (HALF if half else "") + \
        '#include "threadtile.h"\n#define TT_SCRATCH_BYTES 4096\n#include "tile.h"\n' + KERNEL
    assert nvrtc.compile_cubin(src, arch)[:4] == b"\x7fELF"


MATMUL = """
import threadtile.tile as ct

@ct.kernel
def matmul(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(tm, tk))):
        a = ct.load(A, index=(ct.bid(0), k), shape=(tm, tk))
        b = ct.load(B, index=(k, ct.bid(1)), shape=(tk, tn))
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(ct.bid(0), ct.bid(1)), tile=acc.astype(C.dtype))
"""


def test_an_exported_tile_kernel_compiles_from_the_exported_headers(tmp_path, monkeypatch):
    # the Hopper k loop's shapes, so that the source reaches every section
    (tmp_path / "kernels.py").write_text(MATMUL)
    out = tmp_path / "out"
    assert main(["export", f"{tmp_path / 'kernels.py'}:matmul", "float16[:, ::1]",
                 "float16[:, ::1]", "float16[:, ::1]", "tm=64", "tn=64", "tk=64",
                 "-o", str(out)]) == 0
    assert {p.name for p in (out / "tile").glob("*.h")} == set(SECTIONS)
    others = tuple(d for d in nvrtc.include_dirs() if Path(d) != INCLUDE)
    monkeypatch.setattr(nvrtc, "include_dirs", lambda: (str(out), *others))
    src = (out / "matmul.cu").read_text()
    assert "tt::tile::mma_loop<" in src
    assert nvrtc.compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"
