"""Copy the FMHA sample with its block ids remapped heaviest-first (probe; not committed)."""
import sys
from pathlib import Path
src = Path(sys.argv[1]); dst = Path(sys.argv[2])
text = (src / "samples" / "AttentionFMHA.py").read_text()
old = "    bid_x = ct.bid(0)\n    bid_y = ct.bid(1)\n"
assert old in text
new = """    nbx = ct.num_blocks(0)
    nby = ct.num_blocks(1)
    lin = ct.bid(0) + nbx * ct.bid(1)
    grp = min((264 + nbx - 1) // nbx, nby)
    chunk = lin // (grp * nbx)
    rem = lin - chunk * (grp * nbx)
    g = min(grp, nby - chunk * grp)
    bid_x = nbx - 1 - rem // g
    bid_y = chunk * grp + rem % g
"""
text = text.replace(old, new)
(dst / "samples").mkdir(parents=True, exist_ok=True)
(dst / "samples" / "AttentionFMHA.py").write_text(text)
for p in (src / "samples").glob("*.py"):
    if p.name != "AttentionFMHA.py":
        (dst / "samples" / p.name).write_text(p.read_text())
import shutil
if (src/"samples"/"utils").exists():
    shutil.copytree(src/"samples"/"utils", dst/"samples"/"utils", dirs_exist_ok=True)
