"""Write src/threadtile/backends/cuda/include/tile/config.h from src/threadtile/ir/tiling.py:
the sizes of tile code that tile.h and the compiler share, written once in Python.

Run after changing tiling.py: ``python tools/gen_tile_config.py`` (a unit test fails while the
header and tiling.py disagree).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src/threadtile/backends/cuda/include/tile/config.h"


def main() -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from threadtile.ir.tiling import config_header

    OUT.write_text(config_header())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
