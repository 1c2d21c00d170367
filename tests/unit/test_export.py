"""``threadtile export``: the kernel's C++, its headers and its cubins land on disk (the whole
package: tests/deploy/)."""

from pathlib import Path

import pytest

from threadtile.cli import main
from threadtile.export import parse_type
from threadtile.lang.types import ArrayType, float32, int64

ROOT = Path(__file__).resolve().parents[2]


def test_parse_types():
    assert parse_type("int64") == int64
    assert parse_type("float32[:, ::1]") == ArrayType(float32, 2, "C")
    assert parse_type("float32[:,:]") == ArrayType(float32, 2, "A")
    with pytest.raises(ValueError, match="unknown dtype"):
        parse_type("float33[:]")
    with pytest.raises(ValueError, match="one ':' per axis"):
        parse_type("float32[::1, :]")


def test_export_writes_source_header_and_cubin(tmp_path, capsys):
    rc = main(["export", f"{ROOT / 'examples' / 'tiled_matmul.py'}:matmul_tiled",
               "float32[:, ::1]", "float32[:, ::1]", "float32[:, ::1]", "tw=16",
               "-o", str(tmp_path), "--arch", "sm_80"])
    assert rc == 0
    src = (tmp_path / "matmul_tiled.cu").read_text()
    assert 'extern "C" __global__ void matmul_tiled(' in src
    assert "tt::CArray<float, 2> m" in src and "16" in src
    assert (tmp_path / "threadtile.h").read_text().startswith("// threadtile.h")
    assert (tmp_path / "matmul_tiled.sm_80.cubin").read_bytes()[:4] == b"\x7fELF"
    assert "nvcc" in capsys.readouterr().out


def test_export_asks_for_missing_constants(tmp_path):
    with pytest.raises(SystemExit, match="tw"):
        main(["export", f"{ROOT / 'examples' / 'tiled_matmul.py'}:matmul_tiled",
              "float32[:, ::1]", "float32[:, ::1]", "float32[:, ::1]", "-o", str(tmp_path)])


TILE_KERNEL = """
import threadtile.tile as ct

@ct.kernel
def vector_add(a, b, c, tile: ct.Constant[int]):
    bid = ct.bid(0)
    ta = ct.load(a, index=(bid,), shape=(tile,))
    tb = ct.load(b, index=(bid,), shape=(tile,))
    ct.store(c, index=(bid,), tile=ta + tb)
"""


def test_export_of_a_tile_kernel_ships_tile_h(tmp_path):
    src = tmp_path / "tile_kernels.py"
    src.write_text(TILE_KERNEL)
    rc = main(["export", f"{src}:vector_add",
               "float32[::1]", "float32[::1]", "float32[::1]", "tile=256",
               "-o", str(tmp_path), "--arch", "sm_90"])
    assert rc == 0
    assert '#include "tile.h"' in (tmp_path / "vector_add.cu").read_text()
    assert (tmp_path / "tile.h").exists() and (tmp_path / "threadtile.h").exists()
    assert (tmp_path / "vector_add.sm_90.cubin").read_bytes()[:4] == b"\x7fELF"
